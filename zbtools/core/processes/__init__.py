"""Running commands and keeping background jobs.

``approval`` (allow/confirm/deny), ``guardrail`` (advisory refusal of destructive commands),
``execution`` (what run_command and bash share), ``proc`` (a foreground run: environment, capture,
timeout), ``jobs`` (background jobs on disk), ``procfs`` (process facts and safe signalling),
``landlock`` (the kernel sandbox), ``supervisor`` (the stdlib script that owns each command's
process tree).

May import ``zbtools.core.files`` and ``zbtools.core.call``. ``supervisor`` runs as a script
under ``python -I -S`` and imports only ``procfs`` and ``landlock``, so this package's
``__init__`` stays empty of imports.
"""
