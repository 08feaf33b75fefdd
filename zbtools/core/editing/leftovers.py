"""The next call's cleanup after killed writers: what their logs name is removed.

See ``files.writerlog`` (where a process logs the directories it leaves temp entries in) for
the whole scheme; ``sweep_dead_writers`` is its second half, run by ``ToolSpec.call`` before
any tool when the workspace's ``writers`` folder exists (``Context.writers_logged``). Kept apart
from the writer side, which ``replacing`` imports: it needs the call's ``Context`` and the undo
journal.
"""

from __future__ import annotations

import os

from zbtools.core.files.writerlog import FOLDER, JOURNAL_LINE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


def sweep_dead_writers(ctx: Context) -> None:
    """Remove what every dead writer of the workspace left in the directories of its log, then
    the log (see the module docstring)."""
    from zbtools.core.files.tempnames import FOREIGN_STALE_SECONDS, own_host, writer_alive

    folder = os.path.join(ctx.state_path(), FOLDER)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        parts = name.split("-")
        if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
            continue  # not a log
        path = os.path.join(folder, name)
        if parts[2] == own_host():
            if writer_alive(int(parts[0]), parts[1]):
                continue
        else:  # another boot, container or machine: its writer cannot be asked
            import time

            try:
                if time.time() - os.stat(path).st_mtime < FOREIGN_STALE_SECONDS:
                    continue
            except OSError:
                continue
        try:
            with open(path, "rb") as fh:
                lines = fh.read().splitlines()
        except OSError:
            continue
        for line in lines:
            if line == JOURNAL_LINE.strip().encode():
                from zbtools.core.editing.undo import tidy

                tidy(ctx)
                continue
            fields = line.split()
            try:
                dev, ino, real = int(fields[0]), int(fields[1]), os.fsdecode(
                    bytes.fromhex(fields[2].decode("ascii")))
            except (IndexError, ValueError, UnicodeDecodeError):
                continue  # a line cut short: its temp entry was never made
            _sweep(ctx, real, (dev, ino))
        try:
            os.unlink(path)
        except OSError:
            pass


def _sweep(ctx: Context, real: str, key: tuple[int, int]) -> None:
    """Remove the dead writers' entries of the directory at ``real``, if it still is ``key``
    and lies inside the workspace."""
    import stat

    from zbtools.contract import ToolError
    from zbtools.core.files.fsops import remove_tree
    from zbtools.core.files.tempnames import dead_entries
    from zbtools.core.files.workspace import DIR_FLAGS

    try:
        res = ctx.workspace.resolve(real, follow_last=False)
    except (ToolError, OSError):
        return  # outside the workspace, or gone
    try:
        if res.name is None:
            fd = os.dup(res.dir_fd)
        else:
            fd = os.open(res.name, DIR_FLAGS, dir_fd=res.dir_fd)
    except OSError:
        res.close()
        return
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != key:
            return  # another directory now has that name
        for entry, est in dead_entries(fd, ("zbtmp", "zbdel")):
            try:
                if stat.S_ISDIR(est.st_mode):
                    remove_tree(fd, entry, entry)
                elif stat.S_ISREG(est.st_mode) and entry.rsplit(".", 1)[-1][:5] == "zbtmp":
                    os.unlink(entry, dir_fd=fd)
            except (OSError, ToolError):
                pass
    finally:
        os.close(fd)
        res.close()
