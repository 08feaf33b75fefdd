"""zbtools: the standard coding-agent tools as one dependable command-line program."""

__version__ = "0.1.0"
