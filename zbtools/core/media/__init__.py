"""Files that are not plain text: images, PDFs and notebooks.

``images`` (recognise, measure, downscale, encode), ``pdf`` (the text layer of pages),
``notebook`` (reading cells, editing one cell byte-stably), ``richread`` (read_file's result
fields for all of these).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""

from zbtools.core import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.media.binary import (
        AUDIO_VIDEO_SUFFIXES,
        DEFAULT_MAX_BASE64_BYTES,
        looks_like_media,
        mime_type,
        read_base64,
    )
    from zbtools.core.media.notebook import (
        Notebook,
        Style,
        delete_cell,
        insert_cell,
        new_cell,
        parse,
        replace_cell,
        retype,
        source_text,
        split_source,
        verify,
    )
    from zbtools.core.media.pdf import extract_pages, render_pages
    from zbtools.core.media.richread import read_image, read_notebook, read_pdf, sniff

# The public names, each with the submodule to import it from (see zbtools.core.lazy_names).
__all__ = ["AUDIO_VIDEO_SUFFIXES", "DEFAULT_MAX_BASE64_BYTES", "Notebook", "Style", "delete_cell",
           "extract_pages", "insert_cell", "looks_like_media", "mime_type", "new_cell", "parse",
           "read_base64", "read_image", "read_notebook", "read_pdf", "render_pages", "replace_cell",
           "retype", "sniff", "source_text", "split_source", "verify"]

_SUBMODULE = {"AUDIO_VIDEO_SUFFIXES": "binary", "DEFAULT_MAX_BASE64_BYTES": "binary",
              "Notebook": "notebook", "Style": "notebook", "delete_cell": "notebook",
              "extract_pages": "pdf", "insert_cell": "notebook", "looks_like_media": "binary",
              "mime_type": "binary", "new_cell": "notebook", "parse": "notebook",
              "read_base64": "binary", "read_image": "richread", "read_notebook": "richread",
              "read_pdf": "richread", "render_pages": "pdf", "replace_cell": "notebook",
              "retype": "notebook", "sniff": "richread", "source_text": "notebook",
              "split_source": "notebook", "verify": "notebook"}

__getattr__ = lazy_names(__name__, _SUBMODULE, globals())
