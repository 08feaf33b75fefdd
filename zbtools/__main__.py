"""``python -m zbtools``: the same entry point as the ``zbtools`` script."""

from zbtools.entry import main

if __name__ == "__main__":
    main()
