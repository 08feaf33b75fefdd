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
