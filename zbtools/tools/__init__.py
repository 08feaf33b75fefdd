"""One module per tool. Each defines ``Params``, ``Result``, ``run`` and ``TOOL``."""
