"""Files: where a path may point and how bytes are read and written without loss.

``workspace`` (the root, path resolution and containment), ``textio`` (decoding, newline and BOM
policy, atomic writes, temp names that tell a dead writer from a live one), ``fsops`` (delete,
no-clobber rename and copy on directory descriptors), ``treewalk`` (a bounded walk of a tree, the
names of a hard-linked file), ``gitguard`` (git's directories, hooks and config files under any
name: what writes never change), ``lines`` (a window of lines from a text file in bounded
memory).

The lowest layer: imports only ``zbtools.contract`` and the standard library.
"""
