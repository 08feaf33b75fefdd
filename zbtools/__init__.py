"""zbtools: the standard coding-agent tools as one dependable command-line program, and as a
Python API (``from zbtools import Toolbox``, docs/python.md#python-api).

``import zbtools`` loads this file only: ``Toolbox`` and ``ToolboxError`` (``zbtools.api``) are
imported on first use (PEP 562), so the command line, which imports this package first, pays
nothing for the API.
"""

__version__ = "0.1.0"
__all__ = ["Toolbox", "ToolboxError", "__version__"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.api import Toolbox, ToolboxError


def __getattr__(name: str) -> object:
    # __import__, as zbtools.core.lazy_names does: this module runs no import statement
    if name not in ("Toolbox", "ToolboxError"):
        raise AttributeError(f"module 'zbtools' has no attribute {name!r}")
    value: object = getattr(__import__("zbtools.api", fromlist=[name]), name)
    globals()[name] = value
    return value
