"""Configuration: result limits and locations, from defaults, the config file and the environment.

Precedence, lowest first: built-in defaults, the user config file (``$ZBTOOLS_CONFIG``, else
``~/.config/zbtools/config.toml``, ``$XDG_CONFIG_HOME`` respected), environment variables
(``ZBTOOLS_<KEY>``), then per-call arguments. The ``[limits]`` table bounds results and the
warm search cache; ``[exec]`` holds command execution settings, ``[files]`` whether git's own
files may be written and what the syntax guard does, ``[web]`` the web tools' settings. Every key,
default and variable is in docs/configuration.md, docs/commands.md#settings and
docs/media-and-web.md, whose tables ``tests/test_docs.py`` checks against the declarations here.
Locations are computed by hand on Linux because importing platformdirs costs a large part of the
start-up budget (docs/internals/performance.md#start-up-budget); other platforms use it lazily.
Failure modes: an unreadable or malformed config file, or a non-integer limit, is a ``usage_error``
naming the file or variable; nothing is silently ignored.

Map: ``LIMIT_KEYS``, ``Limits``, ``load_limits``; ``Section`` and its ``EXEC``, ``FILES``,
``WEB`` declarations with ``load_exec_settings``, ``load_files_settings``,
``load_web_settings``; ``config_path``, ``state_root``, ``load_config``.
"""

from __future__ import annotations

import os
import sys

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

ON_LINUX: bool = sys.platform.startswith("linux")  # a variable: mypy must not prune branches

LIMIT_KEYS: dict[str, tuple[int, int, str]] = {
    # key: (default, minimum, meaning)
    "max_bytes": (50 * 1024, 256, "result size in bytes before truncation"),
    "max_lines": (2000, 10, "result lines before truncation"),
    "head_lines": (100, 0, "lines kept before the truncation notice"),
    "tail_lines": (50, 0, "lines kept after the truncation notice"),
    "max_line_chars": (2000, 80, "characters shown of one line before it is cut"),
    "max_request_bytes": (16 * 1024 * 1024, 1024, "largest accepted request"),
    "search_cache_bytes": (64 * 1024 * 1024, 0,
                           "memory a batch or mcp session keeps for warm searches (0: none)"),
    "search_watch_dirs": (16384, 0, "directories a batch or mcp session watches for changes "
                          "(Linux inotify), so a repeated search re-checks only what changed "
                          "(0: none)"),
}


class Limits:
    __slots__ = tuple(LIMIT_KEYS)

    max_bytes: int
    max_lines: int
    head_lines: int
    tail_lines: int
    max_line_chars: int
    max_request_bytes: int
    search_cache_bytes: int
    search_watch_dirs: int

    def __init__(self, **values: int) -> None:
        for key, (default, _, _) in LIMIT_KEYS.items():
            setattr(self, key, values.get(key, default))

    def with_overrides(self, **values: int | None) -> Limits:
        merged = {k: getattr(self, k) for k in LIMIT_KEYS}
        merged.update({k: v for k, v in values.items() if v is not None})
        return Limits(**merged)


def _xdg(env: Mapping[str, str], var: str, fallback: str) -> str:
    value = env.get(var, "")
    if value and os.path.isabs(value):
        return value
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), fallback)


def config_path(env: Mapping[str, str]) -> str:
    explicit = env.get("ZBTOOLS_CONFIG")
    if explicit:
        return explicit
    if ON_LINUX:
        return os.path.join(_xdg(env, "XDG_CONFIG_HOME", ".config"), "zbtools", "config.toml")
    import platformdirs

    return os.path.join(platformdirs.user_config_dir("zbtools"), "config.toml")


def state_root(env: Mapping[str, str]) -> str:
    explicit = env.get("ZBTOOLS_STATE_DIR")
    if explicit:
        return explicit
    if ON_LINUX:
        return os.path.join(_xdg(env, "XDG_STATE_HOME", ".local/state"), "zbtools")
    import platformdirs

    return platformdirs.user_state_dir("zbtools")


def load_config(env: Mapping[str, str]) -> dict[str, Any]:
    path = config_path(env)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        if env.get("ZBTOOLS_CONFIG"):
            # named on purpose: a typo must not silently drop the settings it holds
            raise ToolError("usage_error", f"config file {path} (ZBTOOLS_CONFIG) does not exist",
                            hint="create it, fix the path, or unset ZBTOOLS_CONFIG to use the "
                            "default location (which may be absent)",
                            details={"path": path}) from None
        return {}
    except OSError as exc:
        raise ToolError("usage_error", f"cannot read config file {path}: "
                        f"{os.strerror(exc.errno or 0)}") from exc
    if not raw.strip():
        return {}  # an empty file (or /dev/null): no settings, and no TOML parser to import
    import tomllib

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ToolError("usage_error", f"config file {path} is not valid TOML: {exc}",
                        hint="fix or remove the file") from exc


def load_limits(env: Mapping[str, str], config: Mapping[str, Any]) -> Limits:
    values: dict[str, int] = {}
    section = config.get("limits", {})
    if not isinstance(section, dict):
        raise ToolError("usage_error", "config: [limits] must be a table")
    for key, value in section.items():
        if key not in LIMIT_KEYS:
            raise ToolError("usage_error", f"config: unknown limit {key!r}",
                            hint=f"known limits: {', '.join(LIMIT_KEYS)}")
        values[key] = _check_limit(key, value, f"config [limits] {key}")
    for key in LIMIT_KEYS:
        var = f"ZBTOOLS_{key.upper()}"
        if var in env:
            text = env[var].strip()
            try:
                number = int(text)
            except ValueError:
                raise ToolError("usage_error", f"{var}={text!r} is not an integer") from None
            values[key] = _check_limit(key, number, var)
    return Limits(**values)


def _check_limit(key: str, value: object, where: str) -> int:
    minimum = LIMIT_KEYS[key][1]
    if type(value) is not int or value < minimum:
        raise ToolError("usage_error", f"{where} must be an integer >= {minimum}, got {value!r}",
                        hint=f"fix or remove {where}; the default is {LIMIT_KEYS[key][0]}")
    return value


# ---- tables of settings: [exec] and [web] ---------------------------------------------------


class Section:
    """One table of the config file: its defaults (whose types are the settings' types), the
    allowed values of some, and each setting's environment variable. Lists in the environment
    are comma-separated; booleans accept 1/0/true/false/yes/no/on/off; numbers must be
    positive (``zero_ok`` names those that may be 0); strings must not be empty (but those in
    ``empty_ok``)."""

    def __init__(self, name: str, defaults: dict[str, Any], *,
                 choices: dict[str, tuple[str, ...]] | None = None,
                 env_prefix: str = "ZBTOOLS_", env_names: dict[str, str] | None = None,
                 zero_ok: frozenset[str] = frozenset(),
                 empty_ok: frozenset[str] = frozenset()) -> None:
        self.name = name
        self.defaults = defaults
        self.choices = choices or {}
        self.env_prefix = env_prefix
        self.env_names = env_names or {}
        self.zero_ok = zero_ok
        self.empty_ok = empty_ok

    def env_var(self, key: str) -> str:
        return self.env_names.get(key, f"{self.env_prefix}{key.upper()}")

    def coerce(self, key: str, value: object, where: str) -> Any:
        default = self.defaults[key]
        if isinstance(default, bool):
            if isinstance(value, str):
                low = value.strip().lower()
                if low in ("1", "true", "yes", "on"):
                    return True
                if low in ("0", "false", "no", "off", ""):
                    return False
            if type(value) is bool:
                return value
            raise ToolError("usage_error", f"{where} must be a boolean, got {value!r}")
        if isinstance(default, list):
            if isinstance(value, str):
                return [v.strip() for v in value.split(",") if v.strip()]
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return [v.strip() for v in value if v.strip()]
            raise ToolError("usage_error", f"{where} must be a list of strings, got {value!r}")
        if isinstance(default, (int, float)):
            number: float
            if isinstance(value, str):
                try:
                    number = float(value.strip())
                except ValueError:
                    raise ToolError("usage_error", f"{where}={value!r} is not a number") \
                        from None
            elif type(value) in (int, float):
                try:
                    number = float(value)  # type: ignore[arg-type]
                except OverflowError:  # a TOML integer beyond any double
                    number = float("inf")
            else:
                raise ToolError("usage_error", f"{where} must be a number, got {value!r}")
            if not number > 0 and not (key in self.zero_ok and number == 0):
                raise ToolError("usage_error",
                                f"{where} must be a positive number, got {value!r}")
            if number - number != 0:  # inf (1e400 too): int() would crash, sleeps never end
                raise ToolError("usage_error", f"{where} must be a finite number, got {value!r}")
            if isinstance(default, int):
                if number != int(number):
                    raise ToolError("usage_error",
                                    f"{where} must be a whole number, got {value!r}")
                return int(number)
            return number
        if not isinstance(value, str) or not (value.strip() or key in self.empty_ok):
            raise ToolError("usage_error", f"{where} must be a string, got {value!r}")
        value = value.strip()
        choices = self.choices.get(key)
        if choices and value not in choices:
            raise ToolError("usage_error", f"{where} must be one of {', '.join(choices)}, "
                            f"got {value!r}")
        return value

    def load(self, env: Mapping[str, str], config: Mapping[str, Any] | None) -> dict[str, Any]:
        """Defaults < the config file's table < the environment variables."""
        if config is None:
            config = load_config(env)
        section = config.get(self.name, {})
        if not isinstance(section, dict):
            raise ToolError("usage_error", f"config: [{self.name}] must be a table")
        values = dict(self.defaults)
        for key, value in section.items():
            if key not in self.defaults:
                raise ToolError("usage_error", f"config: unknown [{self.name}] setting {key!r}",
                                hint=f"known settings: {', '.join(self.defaults)}")
            values[key] = self.coerce(key, value, f"config [{self.name}] {key}")
        for key in self.defaults:
            var = self.env_var(key)
            if var in env:
                values[key] = self.coerce(key, env[var], var)
        return values


# ---- command execution (run_command, bash, the process manager) -------------------------------

EXEC = Section("exec", {
    "approval": "allow", "env_passthrough": [], "default_timeout": 120.0,
    "max_timeout": 3600.0, "kill_grace": 2.0, "max_background": 7200.0,
    "log_cap": 8 * 1024 * 1024, "guardrail": True, "guardrail_allow": [], "sandbox": "off",
    "require_sandbox": False, "network": "allow", "sandbox_read": [], "sandbox_write": [],
    "shell": "/bin/bash",
}, choices={"approval": ("allow", "confirm", "deny"), "sandbox": ("off", "auto", "landlock"),
            "network": ("allow", "deny")})
EXEC_DEFAULTS = EXEC.defaults


class ExecSettings:
    """The ``[exec]`` section merged with ``ZBTOOLS_<KEY>`` environment variables."""

    approval: str
    env_passthrough: list[str]
    default_timeout: float
    max_timeout: float
    kill_grace: float
    max_background: float
    log_cap: int
    guardrail: bool
    guardrail_allow: list[str]
    sandbox: str
    require_sandbox: bool
    network: str
    sandbox_read: list[str]
    sandbox_write: list[str]
    shell: str

    def __init__(self, **values: Any) -> None:
        for key, default in EXEC.defaults.items():
            setattr(self, key, values.get(key, default))


def load_exec_settings(env: Mapping[str, str], config: Mapping[str, Any] | None = None
                       ) -> ExecSettings:
    """Defaults < config file ``[exec]`` < ``ZBTOOLS_<KEY>`` environment variables."""
    return ExecSettings(**EXEC.load(env, config))


# ---- the web tools (web_fetch, web_search) ----------------------------------------------------

# Environment variables: ZBTOOLS_WEB_<KEY>, except three, named by the seeds and the issue.
WEB = Section("web", {
    "searxng_url": "", "allow": [], "timeout": 30.0, "max_timeout": 120.0,
    "max_download_bytes": 10 * 1024 * 1024, "max_redirects": 10,
    "user_agent": "zbtools-web-fetch/1 (+https://github.com/zbtools)", "chromium": "",
    "render_timeout": 30.0,
}, env_prefix="ZBTOOLS_WEB_", env_names={"searxng_url": "ZBTOOLS_SEARXNG_URL",
                                         "allow": "ZBTOOLS_WEB_ALLOW",
                                         "chromium": "ZBTOOLS_CHROMIUM"},
    zero_ok=frozenset({"max_redirects"}), empty_ok=frozenset({"searxng_url", "chromium"}))
WEB_DEFAULTS = WEB.defaults
web_env_var = WEB.env_var


class WebSettings:
    """The ``[web]`` section merged with environment variables (see ``web_env_var``).

    ``allow``: hosts (``example.org``, ``*.example.org``), IP addresses or CIDR networks that
    web_fetch may reach although they are loopback, private, link-local or reserved; in the
    environment a comma-separated list (``ZBTOOLS_WEB_ALLOW=127.0.0.1,10.0.0.0/8``) that
    replaces the config file's list. ``searxng_url``: the SearXNG instance web_search queries.
    """

    searxng_url: str
    allow: list[str]
    timeout: float
    max_timeout: float
    max_download_bytes: int
    max_redirects: int
    user_agent: str
    chromium: str
    render_timeout: float

    def __init__(self, **values: Any) -> None:
        for key, default in WEB.defaults.items():
            setattr(self, key, values.get(key, default))


def load_web_settings(env: Mapping[str, str], config: Mapping[str, Any] | None = None
                      ) -> WebSettings:
    """Defaults < config file ``[web]`` < environment variables."""
    return WebSettings(**WEB.load(env, config))


# ---- the file tools ---------------------------------------------------------------------------

# allow_git_writes: let write, edit, patch, delete, move and copy tools change git's own files
# (.git and other git directories, hooks paths, included config files, and their hard links:
# code git runs later); refused by default (``protected_path``).
# Environment: ZBTOOLS_ALLOW_GIT_WRITES.
# check_syntax: what the writers do with a change that introduces parse errors in a file of a
# supported language (docs/internals/code.md#syntax-guard): warn (write it, and say so),
# refuse (syntax_error, nothing written) or off (no parse). A call's own check_syntax
# parameter wins. Environment: ZBTOOLS_CHECK_SYNTAX.
CHECK_SYNTAX = ("warn", "refuse", "off")
FILES = Section("files", {"allow_git_writes": False, "check_syntax": "warn"},
                choices={"check_syntax": CHECK_SYNTAX})
FILES_DEFAULTS = FILES.defaults


def load_files_settings(env: Mapping[str, str], config: Mapping[str, Any] | None = None
                        ) -> dict[str, Any]:
    """Defaults < config file ``[files]`` < ``ZBTOOLS_<KEY>`` environment variables."""
    return FILES.load(env, config)
