"""Files that are not plain text: images, PDFs and notebooks.

``images`` (recognise, measure, downscale, encode), ``pdf`` (the text layer of pages),
``notebook`` (reading cells, editing one cell byte-stably), ``richread`` (read_file's result
fields for all of these).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""
