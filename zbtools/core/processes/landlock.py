"""A small ctypes binding of Linux Landlock (docs/commands.md), best effort by ABI.

Landlock lets an unprivileged process restrict itself (and everything it later executes) to an
allow-list of file hierarchies and, from ABI 4, of TCP ports. The restriction is inherited across
``fork`` and ``execve`` and can never be lifted. The structures and constants follow the kernel's
uapi header ``include/uapi/linux/landlock.h``:

* ABI 1 (Linux 5.13): filesystem access rights; ABI 2 adds ``REFER``, ABI 3 ``TRUNCATE``,
  ABI 4 TCP ``bind``/``connect``, ABI 5 ``IOCTL_DEV``, ABI 6 scoping of abstract UNIX sockets and
  signals.
* ``landlock_create_ruleset`` (444), ``landlock_add_rule`` (445) and ``landlock_restrict_self``
  (446) have the same numbers on x86_64 and aarch64 (the generic syscall table).

``abi_version()`` returns 0 where Landlock cannot be used (not Linux, another architecture, a
kernel built without it, a seccomp profile returning ENOSYS/EPERM). ``restrict_self`` handles
every right the running ABI knows, so anything not granted is denied. This module imports ctypes
(a few milliseconds): only the command supervisor and sandbox probes load it.
"""

from __future__ import annotations

import ctypes
import os
import platform
import stat

SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2
PR_SET_NO_NEW_PRIVS = 38

# filesystem access rights
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
# network access rights (ABI 4)
NET_BIND_TCP = 1 << 0
NET_CONNECT_TCP = 1 << 1
# scopes (ABI 6)
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # valid on a non-directory
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR


def fs_rights(abi: int) -> int:
    """Every filesystem right the given ABI knows."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class RulesetAttr(ctypes.Structure):
    _fields_ = (("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64))


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in the uapi header: 12 bytes
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


_libc: ctypes.CDLL | None = None


def _syscall() -> ctypes.CDLL | None:
    global _libc
    if _libc is None:
        if os.uname().sysname != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
            return None
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(result: int) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


def abi_version() -> int:
    """The Landlock ABI of the running kernel, or 0 when it cannot be used."""
    libc = _syscall()
    if libc is None:
        return 0
    result = libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                          ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(result), 0)


def restrict_self(*, read: list[str], write: list[str], deny_network: bool,
                  scope: bool = True) -> int:
    """Confine this process: ``read`` (read + execute) and ``write`` (everything) hierarchies.

    Paths that do not exist are skipped; a file path gets only file rights. With
    ``deny_network`` and ABI >= 4, TCP bind and connect are denied. With ``scope`` and ABI >= 6,
    abstract UNIX sockets and signals outside the sandbox are out of reach. Returns the ABI
    applied; raises ``OSError`` when Landlock is unavailable or a syscall fails.
    """
    abi = abi_version()
    if abi < 1:
        raise OSError(38, "Landlock is not available on this kernel")
    libc = _syscall()
    assert libc is not None
    handled = fs_rights(abi)
    attr = RulesetAttr(handled, NET_BIND_TCP | NET_CONNECT_TCP if deny_network and abi >= 4
                       else 0, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
                       if scope and abi >= 6 else 0)
    size = 8 if abi < 4 else (16 if abi < 6 else ctypes.sizeof(RulesetAttr))
    ruleset = _check(libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                                  ctypes.c_uint32(0)))
    try:
        for paths, rights in ((read, READ_RIGHTS), (write, handled)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue
                try:
                    allowed = rights & handled
                    if not stat.S_ISDIR(os.fstat(fd).st_mode):
                        allowed &= FILE_RIGHTS
                    rule = PathBeneathAttr(allowed, fd)
                    _check(libc.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH,
                                        ctypes.byref(rule), ctypes.c_uint32(0)))
                finally:
                    os.close(fd)
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        _check(libc.syscall(SYS_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)))
    finally:
        os.close(ruleset)
    return abi
