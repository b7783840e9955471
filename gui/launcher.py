"""The `forkwise` command: CLI subcommands run without Qt; otherwise the desktop app starts.

Importing this module must stay cheap and Qt-free, so that `forkwise sessions …` works in
an environment without PySide6 and starts fast.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from forkwise.core.cli import main as cli


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if cli.is_cli_invocation(args):
        return cli.main(args)
    app = importlib.import_module("forkwise.gui.app")  # Qt is imported only here
    return int(app.main(args))


if __name__ == "__main__":
    sys.exit(main())
