"""Entry point of the frozen app: the same `forkwise` command as the console script."""

import sys

from forkwise.gui.app.launcher import main

if __name__ == "__main__":
    sys.exit(main())
