"""The shell-policy guardrail: advisory refusal of obviously destructive commands (SECURITY 4.8).

This is UX, not security. It catches the accidents a model makes in plain sight (``rm -rf /``,
``rm -rf ~``, ``mkfs``, ``dd of=/dev/sda``, fork bombs, ``chmod -R 777 /``, ``curl ... | sh``,
``git push --force`` to main/master); anyone who wants to get past it can (quoting ``r''m``,
``$(printf rm)``, base64, an interpreter, a script file). The kernel sandbox is the boundary.

Matching works on two forms of the command:

* a parsed form: ``shlex`` with punctuation characters splits the command into simple commands at
  ``; & | && || ( ) $( `` and newlines; leading ``sudo``, ``env``, ``command``, ``exec``,
  ``nohup``, ``time``, ``nice``, ``timeout N``, ``xargs`` and ``VAR=value`` words are skipped, a
  command word's directory is dropped (``/bin/rm`` is ``rm``), and the script of ``sh -c``,
  ``bash -c`` and ``eval`` is checked recursively;
* the raw string, for fork bombs, pipes into a shell and redirections onto block devices.

When ``shlex`` cannot parse the command (an unbalanced quote, common in heredocs), the raw string
is split on whitespace and operators instead and the same rules apply; a parse failure alone does
not refuse the command.

``check(command, allowed)`` returns the first ``Violation`` (rule id and explanation) or ``None``.
"""

from __future__ import annotations

import re
import shlex

RULES: dict[str, str] = {
    "rm-root": "recursive rm of /, ~, $HOME or everything under the root",
    "mkfs": "creating a filesystem (mkfs, mke2fs, wipefs) destroys a device",
    "dd-device": "dd writing onto a device under /dev",
    "device-write": "redirecting output onto a block device",
    "fork-bomb": "a fork bomb",
    "chmod-root": "recursive chmod/chown of / or ~",
    "pipe-to-shell": "piping a download (curl, wget) straight into a shell",
    "force-push-main": "git push --force to main or master",
}

WRAPPERS = {"sudo", "env", "command", "exec", "nohup", "time", "nice", "ionice", "builtin",
            "doas", "xargs", "stdbuf", "setsid", "chroot", "then", "do", "else", "!", "{"}
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash", "busybox"}
ROOT_TARGETS = {"/", "/*", "/.", "/..", "~", "~/", "~/*", "~/.", "$HOME", "${HOME}", "$HOME/",
                "${HOME}/", "$HOME/*", "${HOME}/*", "/root", "/home", "/usr", "/etc", "/var",
                "/bin", "/lib", "/boot", "/*/", "/.*"}
OPERATORS = {";", "&", "|", "&&", "||", "(", ")", ";;", "|&", "\n", "`", "$(", "<(", ">("}
SAFE_DEVICES = re.compile(r"^/dev/(null|zero|full|stdout|stderr|stdin|tty|fd/\d+|random|urandom|"
                          r"shm/.*)$")
FORK_BOMB = re.compile(r"(?P<f>[\w:.]+)\s*\(\)\s*\{[^}]*(?P=f)\s*\|\s*(?P=f)\s*&[^}]*\}")
PIPE_SHELL = re.compile(r"\b(curl|wget|fetch)\b[^|;&\n]*\|\s*(sudo\s+)?(env\s+)?"
                        r"(\S*/)?(ba|da|z|k|a)?sh\b(?!\s*-n\b)")
DEVICE_REDIRECT = re.compile(r">\s*/dev/(sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|"
                             r"dm-\d|md\d|loop\d|disk/)")


class Violation:
    __slots__ = ("explanation", "rule", "segment")

    def __init__(self, rule: str, segment: str) -> None:
        self.rule = rule
        self.explanation = RULES[rule]
        self.segment = segment


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command.replace("$(", " ( ").replace("`", " ` "), posix=True,
                        punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    tokens: list[str] = []
    for token in lexer:
        tokens.append(token)
        if len(tokens) > 20000:
            break
    return tokens


def _loose_tokens(command: str) -> list[str]:
    spaced = re.sub(r"(\|\||&&|[;&|()`\n])", r" \1 ", command.replace("$(", " ( "))
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
        elif base in WRAPPERS:
            i += 1
            while i < len(words) and words[i].startswith("-"):  # the wrapper's own options
                i += 1
        elif base == "timeout" and i + 1 < len(words):
            i += 2
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


def _check_words(words: list[str], depth: int) -> str | None:
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
            return _check(script, depth + 1)
        if name == "eval":
            return _check(" ".join(args), depth + 1)
    return None


def _check(command: str, depth: int) -> str | None:
    if FORK_BOMB.search(command):
        return "fork-bomb"
    if PIPE_SHELL.search(command):
        return "pipe-to-shell"
    if DEVICE_REDIRECT.search(command):
        return "device-write"
    try:
        tokens = _tokens(command)
    except ValueError:
        tokens = _loose_tokens(command)
    for segment in _segments(tokens):
        rule = _check_words(segment, depth)
        if rule is not None:
            return rule
    return None


def check(command: str, allowed: list[str] | tuple[str, ...] = ()) -> Violation | None:
    """The first rule ``command`` breaks (rules listed in ``allowed`` are skipped), or None."""
    rule = _check(command, 0)
    if rule is None or rule in allowed:
        return None
    return Violation(rule, command if len(command) <= 200 else command[:200] + "...")
