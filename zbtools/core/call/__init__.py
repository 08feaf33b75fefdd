"""What every tool call is made of.

``args`` (parameter declarations, validation and coercion), ``config`` (limits and settings from
defaults, the config file and the environment), ``context`` (the per-call workspace, limits,
state directory and warnings), ``fastjson`` (the hot-path JSON codec), ``truncate`` (head/tail
cuts and spill files), ``optional`` (importing optional libraries with a clear error).

May import ``zbtools.core.files``.
"""
