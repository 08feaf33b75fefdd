"""What every tool call is made of.

``args`` (parameter declarations, validation and coercion), ``flags`` (a field's placeholder
in help, a flag's text as a value), ``config`` (limits and settings from defaults, the config
file and the environment), ``context`` (the per-call workspace, limits, state directory and
warnings), ``fastjson`` (the hot-path JSON codec), ``truncate`` (head/tail
cuts and spill files), ``optional`` (importing optional libraries with a clear error),
``wording`` (an error's names put in a tool's own vocabulary), ``collector`` (the cyclic
collector paused around work that keeps thousands of objects).

May import ``zbtools.core.files``.
"""

from zbtools.core import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.args import (
        FieldSpec,
        Struct,
        TypeSpec,
        alias_table,
        did_you_mean,
        field,
        json_type_name,
        validate,
    )
    from zbtools.core.call.collector import Paused
    from zbtools.core.call.config import (
        EXEC_DEFAULTS,
        LIMIT_KEYS,
        ExecSettings,
        Limits,
        WebSettings,
        load_config,
        load_exec_settings,
        load_files_settings,
        load_limits,
        load_web_settings,
    )
    from zbtools.core.call.context import Context
    from zbtools.core.call.fastjson import Encoded, dumps_ascii, encode_str, loads_strict
    from zbtools.core.call.flags import coerce_flag, value_name
    from zbtools.core.call.optional import missing, require
    from zbtools.core.call.terminal import visible, visible_name
    from zbtools.core.call.truncate import count_lines, cut_text
    from zbtools.core.call.wording import NAME_AFTER, NAME_BEFORE, Wording

# The public names, each with the submodule to import it from (see zbtools.core.lazy_names).
__all__ = ["EXEC_DEFAULTS", "LIMIT_KEYS", "NAME_AFTER", "NAME_BEFORE", "Context", "Encoded",
           "ExecSettings", "FieldSpec", "Limits", "Paused", "Struct", "TypeSpec", "WebSettings",
           "Wording", "alias_table", "coerce_flag", "count_lines", "cut_text", "did_you_mean",
           "dumps_ascii", "encode_str", "field", "json_type_name", "load_config",
           "load_exec_settings", "load_files_settings", "load_limits", "load_web_settings",
           "loads_strict", "missing", "require", "validate", "value_name", "visible",
           "visible_name"]

_SUBMODULE = {"EXEC_DEFAULTS": "config", "LIMIT_KEYS": "config", "Context": "context",
              "ExecSettings": "config", "FieldSpec": "args", "Limits": "config",
              "Paused": "collector", "Struct": "args", "TypeSpec": "args", "WebSettings": "config",
              "alias_table": "args", "coerce_flag": "flags", "count_lines": "truncate",
              "cut_text": "truncate", "did_you_mean": "args", "dumps_ascii": "fastjson",
              "Encoded": "fastjson", "encode_str": "fastjson", "field": "args",
              "json_type_name": "args", "load_config": "config", "load_exec_settings": "config",
              "load_files_settings": "config", "load_limits": "config",
              "load_web_settings": "config", "loads_strict": "fastjson", "missing": "optional",
              "require": "optional", "validate": "args", "value_name": "flags",
              "visible": "terminal", "visible_name": "terminal", "Wording": "wording",
              "NAME_AFTER": "wording", "NAME_BEFORE": "wording"}

__getattr__ = lazy_names(__name__, _SUBMODULE, globals())
