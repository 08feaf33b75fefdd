"""Parameter aliases several tools accept: each spelling list written once.

An alias is another name a model may use for a parameter (``file_path`` for ``path``), as the
tool sets it imitates spell it. Tools that take the same parameter take the same aliases.
"""

from __future__ import annotations

# a file's path
PATH_ALIASES = ("file_path", "filepath", "filename")
# the whole text of a file or a plan
CONTENT_ALIASES = ("contents", "text", "data")
# an edit's old and new text
OLD_ALIASES = ("old_string", "old_str")
NEW_ALIASES = ("new_string", "new_str")
# a move's or a copy's two paths
SOURCE_ALIASES = ("src", "from_path", "old_path")
DESTINATION_ALIASES = ("dest", "dst", "target", "to_path", "new_path")
# a plan's name
PLAN_NAME_ALIASES = ("plan_name", "plan")
# a background process's id
PROCESS_ID_ALIASES = ("process_id", "bash_id", "shell_id", "job_id")
# a shell command, where it runs, and whether it runs in the background
COMMAND_ALIASES = ("cmd", "script")
CWD_ALIASES = ("workdir", "working_directory", "dir", "directory")
BACKGROUND_ALIASES = ("run_in_background",)
# a directory to search, list or create (the spellings each tool has always accepted, in order)
DIR_ALIASES = ("dir", "directory")
SEARCH_DIR_ALIASES = ("dir", "directory", "dir_path")
LIST_DIR_ALIASES = ("dir_path", "directory", "dir")
DEPTH_ALIASES = ("depth",)
