"""The shell-policy guardrail: advisory refusal of obviously destructive commands
(docs/commands.md, docs/internals/security.md#t11).

This is UX, not security: it catches the accidents a model makes in plain sight (``rm -rf /``,
``mkfs``, ``dd of=/dev/sda``, fork bombs, ``curl ... | sh``, a force push to main), and anyone
can get past it; the kernel sandbox is the boundary. It matches two forms of the command: the
words, split as ``shlex`` does in POSIX mode by a scanner that stays linear in the command's
length, cut into simple commands, with wrappers (``sudo``, ``env``, ``VAR=value`` ...) and a
command word's directory dropped and ``sh -c``/``eval`` scripts checked recursively; and the
raw string, for fork bombs, downloads run by a shell and redirections onto block devices. A
command the scanner cannot parse is split on whitespace and operators instead; a parse failure
alone refuses nothing.

Map: ``check(command, allowed)`` (the first ``Violation`` of a rule not allowed, or None),
``Violation``, ``RULES``.
"""

from __future__ import annotations

import re

RULES: dict[str, str] = {
    "rm-root": "recursive rm of /, ~, $HOME or everything under the root",
    "mkfs": "creating a filesystem (mkfs, mke2fs, wipefs) destroys a device",
    "dd-device": "dd writing onto a device under /dev",
    "device-write": "redirecting output onto a block device",
    "fork-bomb": "a fork bomb",
    "chmod-root": "recursive chmod/chown of / or ~",
    "pipe-to-shell": "running a download (curl, wget) straight in a shell",
    "force-push-main": "git push --force to main or master",
}

WRAPPERS = {"sudo", "env", "command", "exec", "nohup", "time", "nice", "ionice", "builtin",
            "doas", "xargs", "stdbuf", "setsid", "chroot", "then", "do", "else", "!", "{"}
# Options of the wrappers that take a value as the next word (``sudo -u root``, ``nice -n 5``).
WRAPPER_VALUES: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user",
                       "--group", "--chdir", "--prompt", "--host", "--role", "--type",
                       "--other-user", "--close-from", "--command-timeout"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "xargs": frozenset({"-I", "-i", "-n", "-P", "-L", "-l", "-d", "-s", "-a", "-E", "-e",
                        "--max-args", "--max-procs", "--delimiter", "--arg-file"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
}
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash", "busybox"}
ROOT_TARGETS = {"/", "/*", "/.", "/..", "~", "~/", "~/*", "~/.", "$HOME", "${HOME}", "$HOME/",
                "${HOME}/", "$HOME/*", "${HOME}/*", "/root", "/home", "/usr", "/etc", "/var",
                "/bin", "/lib", "/boot", "/*/", "/.*"}
OPERATORS = {";", "&", "|", "&&", "||", "(", ")", ";;", "|&", "\n", "`", "$(", "<(", ">("}
SAFE_DEVICES = re.compile(r"^/dev/(null|zero|full|stdout|stderr|stdin|tty|fd/\d+|random|urandom|"
                          r"shm/.*)$")
FORK_BOMB = re.compile(r"(?<![\w:.])(?P<f>[\w:.]{1,64})\s*\(\)\s*\{[^}]{0,200}?(?P=f)\s*\|\s*"
                       r"(?P=f)\s*&[^}]{0,200}\}")
# curl ... [| stage ...] | [sudo -E] [env X=1] sh, looked for within one pipeline (see _downloads
# _into_shell); every pattern here is linear in the command's length (test_huge_input_is_bounded).
DOWNLOAD = re.compile(r"\b(curl|wget|fetch)\b")
PIPELINE_SEPARATOR = re.compile(r"\|\||&&|[;&\n]")
PIPE_INTO_SHELL = re.compile(r"\|\s*(sudo(\s+-\S+)*\s+)?(env(\s+(-\S+|\w+=\S*))*\s+)?"
                             r"([^\s|;&]*/)?(ba|da|z|k|a)?sh\b(?!\s*-n\b)")
# bash -c "$(curl ...)", sh <(curl ...), source <(wget ...)
SUBST_SHELL = re.compile(r"(?:(?:^|[\s/;&|(])(?:ba|da|z|k|a)?sh\s+(?:-\w+\s+)*(?:-c\s+[\"']?"
                         r"(?:\$\(|`)|<\()|(?:^|[\s;&|(])(?:source|\.)\s+<\()\s*"
                         r"(?:[^\s|;&()]*/)?(?:curl|wget|fetch)\b")
DEVICE_REDIRECT = re.compile(r">\s*/dev/(sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|"
                             r"dm-\d|md\d|loop\d|disk/)")


def _downloads_into_shell(command: str) -> bool:
    """``curl ... | sh`` (also through more stages): a download piped into a shell."""
    if SUBST_SHELL.search(command):
        return True
    if not DOWNLOAD.search(command):
        return False
    for pipeline in PIPELINE_SEPARATOR.split(command):
        found = DOWNLOAD.search(pipeline)
        if found and PIPE_INTO_SHELL.search(pipeline, found.end()):
            return True
    return False


class Violation:
    __slots__ = ("explanation", "rule", "segment")

    def __init__(self, rule: str, segment: str) -> None:
        self.rule = rule
        self.explanation = RULES[rule]
        self.segment = segment


def _lines_joined(command: str) -> str:
    """Newlines as the command separators they are; a backslash-newline joins two lines."""
    return command.replace("\\\n", " ").replace("\n", " ; ")


# The word scanner: shlex(posix=True, punctuation_chars=";&|()<>") with whitespace_split and no
# comment characters, one regular-expression run at a time.
MAX_TOKENS = 20000
SPACE_RUN = re.compile(r"[ \t\r\n]+")
PUNCTUATION_RUN = re.compile(r"[;&|()<>]+")
WORD_RUN = re.compile(r"[^ \t\r\n;&|()<>'\"\\]+")
DOUBLE_QUOTED_RUN = re.compile(r'[^"\\]+')
WORD_ENDS = frozenset(" \t\r\n;&|()<>")


def _run_end(pattern: re.Pattern[str], text: str, start: int) -> int:
    found = pattern.match(text, start)
    return found.end() if found else start


def _words(text: str) -> list[str]:
    """The words and operator runs of ``text`` (at most MAX_TOKENS + 1), as shlex splits them.

    Raises ValueError, as shlex does, on an unclosed quote or a backslash at the very end.
    """
    tokens: list[str] = []
    i, n = 0, len(text)
    while i < n and len(tokens) <= MAX_TOKENS:
        c = text[i]
        if c in " \t\r\n":
            i = _run_end(SPACE_RUN, text, i)
            continue
        if c in ";&|()<>":
            end = _run_end(PUNCTUATION_RUN, text, i)
            tokens.append(text[i:end])
            i = end
            continue
        parts: list[str] = []
        while i < n and text[i] not in WORD_ENDS:
            c = text[i]
            if c == "'":
                end = text.find("'", i + 1)
                if end < 0:
                    raise ValueError("No closing quotation")
                parts.append(text[i + 1:end])
                i = end + 1
            elif c == '"':
                i += 1
                while True:
                    end = _run_end(DOUBLE_QUOTED_RUN, text, i)
                    parts.append(text[i:end])
                    i = end
                    if i >= n:
                        raise ValueError("No closing quotation")
                    if text[i] == '"':
                        i += 1
                        break
                    if i + 1 >= n:  # a backslash, then nothing
                        raise ValueError("No escaped character")
                    # inside double quotes a backslash escapes only a quote or a backslash
                    escaped = text[i + 1]
                    parts.append(escaped if escaped in '"\\' else "\\" + escaped)
                    i += 2
            elif c == "\\":
                if i + 1 >= n:
                    raise ValueError("No escaped character")
                parts.append(text[i + 1])
                i += 2
            else:
                end = _run_end(WORD_RUN, text, i)
                parts.append(text[i:end])
                i = end
        tokens.append("".join(parts))
    return tokens


def _tokens(command: str) -> list[str]:
    return _words(_lines_joined(command).replace("$(", " ( ").replace("`", " ` "))


def _loose_tokens(command: str) -> list[str]:
    spaced = re.sub(r"(\|\||&&|[;&|()`\n])", r" \1 ",
                    command.replace("\\\n", " ").replace("$(", " ( "))
    return [t.strip("'\"") for t in spaced.split()]


def _segments(tokens: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for token in tokens:
        if token in OPERATORS or (set(token) <= set(";&|()") and token):
            if out[-1]:
                out.append([])
        else:
            out[-1].append(token)
    return [seg for seg in out if seg]


def _strip_wrappers(words: list[str]) -> list[str]:
    i = 0
    while i < len(words):
        word = words[i]
        base = word.rsplit("/", 1)[-1]
        if "=" in word and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            i += 1
        elif base in WRAPPERS or base == "timeout":
            takes_value = WRAPPER_VALUES.get(base, frozenset())
            i += 1
            while i < len(words) and words[i].startswith("-"):  # the wrapper's own options
                i += 2 if words[i] in takes_value else 1
            if base == "timeout":
                i += 1  # the duration
        else:
            break
    return words[i:]


def _flags(words: list[str]) -> set[str]:
    flags: set[str] = set()
    for word in words:
        if word.startswith("--"):
            flags.add(word)
        elif word.startswith("-") and len(word) > 1:
            flags.update("-" + c for c in word[1:])
    return flags


def _check_words(words: list[str], depth: int, allowed: frozenset[str]) -> str | None:
    words = _strip_wrappers(words)
    if not words:
        return None
    name = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    flags = _flags(args)
    targets = [a for a in args if not a.startswith("-")]
    recursive = bool(flags & {"-r", "-R", "--recursive"})
    if name == "rm" and ("--no-preserve-root" in flags or (recursive and any(
            t.rstrip("/") + "/" in {"/", "~/"} or t in ROOT_TARGETS for t in targets))):
        return "rm-root"
    if name.startswith("mkfs") or name in ("mke2fs", "wipefs", "mkswap"):
        return "mkfs"
    if name == "dd":
        for arg in args:
            if arg.startswith("of=/dev/") and not SAFE_DEVICES.match(arg[3:]):
                return "dd-device"
    if name in ("chmod", "chown", "chgrp") and flags & {"-R", "--recursive"} and any(
            t in ROOT_TARGETS or t.rstrip("/") == "" for t in targets):
        return "chmod-root"
    if name == "git" and "push" in args:
        forced = flags & {"-f", "--force"} or any(a.startswith("+") for a in targets)
        if forced and any(a.lstrip("+").split(":")[-1] in ("main", "master") for a in targets):
            return "force-push-main"
    if depth < 3:
        if name in SHELLS and "-c" in args[:3]:
            script = args[args.index("-c") + 1] if args.index("-c") + 1 < len(args) else ""
            return _check(script, depth + 1, allowed)
        if name == "eval":
            return _check(" ".join(args), depth + 1, allowed)
    return None


def _check(command: str, depth: int, allowed: frozenset[str]) -> str | None:
    if "fork-bomb" not in allowed and FORK_BOMB.search(command):
        return "fork-bomb"
    if "pipe-to-shell" not in allowed and _downloads_into_shell(command):
        return "pipe-to-shell"
    if "device-write" not in allowed and DEVICE_REDIRECT.search(command):
        return "device-write"
    try:
        tokens = _tokens(command)
    except ValueError:
        tokens = _loose_tokens(command)
    for segment in _segments(tokens):
        found = _check_words(segment, depth, allowed)
        if found is not None and found not in allowed:
            return found
    return None


def check(command: str, allowed: list[str] | tuple[str, ...] = ()) -> Violation | None:
    """The first rule ``command`` breaks among those not in ``allowed``, or None."""
    rule = _check(command, 0, frozenset(allowed))
    if rule is None:
        return None
    return Violation(rule, command if len(command) <= 200 else command[:200] + "...")
