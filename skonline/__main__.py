"""``python -m skonline``: the command line, :mod:`skonline.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
