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

from zbtools.core import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.processes.execution import Request, execute
    from zbtools.core.processes.jobs import (
        ACTIVE,
        list_jobs,
        read_meta,
        read_output,
        stop,
        wait_for_output,
    )
    from zbtools.core.processes.proc import clean_text

# The public names, each with the submodule to import it from (see zbtools.core.lazy_names).
__all__ = ["ACTIVE", "Request", "clean_text", "execute", "list_jobs", "read_meta", "read_output",
           "stop", "wait_for_output"]

_SUBMODULE = {"ACTIVE": "jobs", "Request": "execution", "clean_text": "proc",
              "execute": "execution", "list_jobs": "jobs", "read_meta": "jobs",
              "read_output": "jobs", "stop": "jobs", "wait_for_output": "jobs"}

__getattr__ = lazy_names(__name__, _SUBMODULE, globals())
