"""Files: where a path may point and how bytes are read and written without loss.

``workspace`` (the root, path resolution and containment); reading and text: ``reading`` (the
bytes of a regular file), ``decoding`` (encodings, BOMs, the binary rule, newline styles),
``fileformat`` (writing new text the way a file already is), ``hashing`` (SHA-256, line
hashes), ``lines`` (a window of lines from a text file in bounded memory), ``streaming`` (big
files: scans, kernel copies, writes in parts); writing: ``replacing`` (atomic create and
replace: ``create_file``, ``replace_whole``, ``replace_parts``), ``staleness`` (the ``Guard``
of what a writer read, no lost update), ``staging`` (a ``batch`` session's sync group),
``appending`` (in-place appends), ``tempnames`` (temp names that tell a dead writer from a live
one), ``writerlog``; ``fsops`` (delete, no-clobber rename and copy on directory descriptors),
``treewalk`` (a bounded walk of a tree, the names of a hard-linked file), ``gitguard`` (git's
directories, hooks and config files under any name: what writes never change).

The lowest layer: imports only ``zbtools.contract`` and the standard library.
"""

from zbtools.core import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.files.appending import append_in_place
    from zbtools.core.files.decoding import (
        BINARY_SNIFF_BYTES,
        Decoded,
        apply_newline,
        decode,
        encoding_label,
        is_utf8,
        looks_binary,
        newline_style,
        sample_encoding,
        sniff_bom,
    )
    from zbtools.core.files.fileformat import FileFormat, convert_newlines, probe_format
    from zbtools.core.files.fsops import (
        copy_tree,
        entry_kind,
        remove_tree,
        rename_noreplace,
        sweep_dead_dirs,
    )
    from zbtools.core.files.hashing import FAST_HASH_BYTES, line_hash, sha256_for, sha256_hex
    from zbtools.core.files.lines import Window, page_text, read_window
    from zbtools.core.files.reading import (
        CHUNK,
        READ_FLAGS,
        open_regular,
        read_bytes,
        read_bytes_stat,
        read_fd,
        special_file_error,
    )
    from zbtools.core.files.replacing import (
        SPECIAL_BITS,
        WriteOutcome,
        create_file,
        current_umask,
        pause_point,
        replace_parts,
        replace_whole,
    )
    from zbtools.core.files.staging import SyncGroup, close_sync_group, open_sync_group, sync_group
    from zbtools.core.files.staleness import Guard, check_expected, check_unchanged, mount_types
    from zbtools.core.files.streaming import (
        Background,
        count_in_file,
        find_twice,
        writeback_starter,
    )
    from zbtools.core.files.tempnames import (
        FOREIGN_STALE_SECONDS,
        dead_entries,
        is_temp_name,
        own_host,
        own_start,
        sweep_dead_temps,
        temp_name,
        writer_alive,
    )
    from zbtools.core.files.workspace import DIR_FLAGS, Resolved, Workspace, display_path, os_error
    from zbtools.core.files.writerlog import FOLDER, JOURNAL_LINE, note_dir, note_journal, use

# The public names, each with the submodule to import it from (see zbtools.core.lazy_names).
__all__ = ["BINARY_SNIFF_BYTES", "CHUNK", "DIR_FLAGS", "FAST_HASH_BYTES", "FOLDER",
           "FOREIGN_STALE_SECONDS", "JOURNAL_LINE", "READ_FLAGS", "SPECIAL_BITS", "Background",
           "Decoded", "FileFormat", "Guard", "Resolved", "SyncGroup", "Window", "Workspace",
           "WriteOutcome", "append_in_place", "apply_newline", "check_expected", "check_unchanged",
           "close_sync_group", "convert_newlines", "copy_tree", "count_in_file", "create_file",
           "current_umask", "dead_entries", "decode", "display_path", "encoding_label",
           "entry_kind", "find_twice",
           "is_temp_name", "is_utf8", "line_hash", "looks_binary", "mount_types", "newline_style",
           "note_dir", "note_journal", "open_regular", "open_sync_group", "os_error", "own_host",
           "own_start", "page_text", "pause_point", "probe_format", "read_bytes", "read_bytes_stat",
           "read_fd", "read_window", "remove_tree", "rename_noreplace", "replace_parts",
           "replace_whole", "sample_encoding", "sha256_for", "sha256_hex", "sniff_bom",
           "special_file_error",
           "sweep_dead_dirs", "sweep_dead_temps", "sync_group", "temp_name", "use",
           "writeback_starter", "writer_alive"]

_SUBMODULE = {"BINARY_SNIFF_BYTES": "decoding", "CHUNK": "reading", "DIR_FLAGS": "workspace",
              "FAST_HASH_BYTES": "hashing", "FOLDER": "writerlog",
              "FOREIGN_STALE_SECONDS": "tempnames", "JOURNAL_LINE": "writerlog",
              "READ_FLAGS": "reading", "SPECIAL_BITS": "replacing", "Background": "streaming",
              "Decoded": "decoding", "FileFormat": "fileformat", "Guard": "staleness",
              "Resolved": "workspace", "SyncGroup": "staging", "Window": "lines",
              "Workspace": "workspace", "WriteOutcome": "replacing", "append_in_place": "appending",
              "apply_newline": "decoding", "check_expected": "staleness",
              "check_unchanged": "staleness", "close_sync_group": "staging",
              "convert_newlines": "fileformat", "copy_tree": "fsops", "count_in_file": "streaming",
              "create_file": "replacing", "current_umask": "replacing", "dead_entries": "tempnames",
              "decode": "decoding", "display_path": "workspace", "encoding_label": "decoding",
              "entry_kind": "fsops",
              "find_twice": "streaming", "is_temp_name": "tempnames", "is_utf8": "decoding",
              "line_hash": "hashing", "looks_binary": "decoding", "mount_types": "staleness",
              "newline_style": "decoding", "note_dir": "writerlog", "note_journal": "writerlog",
              "open_regular": "reading", "open_sync_group": "staging", "os_error": "workspace",
              "own_host": "tempnames", "own_start": "tempnames", "page_text": "lines",
              "pause_point": "replacing", "probe_format": "fileformat", "read_bytes": "reading",
              "read_bytes_stat": "reading", "read_fd": "reading", "read_window": "lines",
              "sample_encoding": "decoding",
              "remove_tree": "fsops", "rename_noreplace": "fsops", "replace_parts": "replacing",
              "replace_whole": "replacing", "sha256_for": "hashing", "sha256_hex": "hashing",
              "sniff_bom": "decoding", "special_file_error": "reading", "sweep_dead_dirs": "fsops",
              "sweep_dead_temps": "tempnames", "sync_group": "staging", "temp_name": "tempnames",
              "use": "writerlog", "writeback_starter": "streaming", "writer_alive": "tempnames"}

__getattr__ = lazy_names(__name__, _SUBMODULE, globals())
