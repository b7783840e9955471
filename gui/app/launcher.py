"""The `forkwise` command: CLI subcommands run without Qt; otherwise the desktop app starts.

Importing this module must stay cheap and Qt-free, so that `forkwise sessions …` works in
an environment without PySide6 and starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence

from forkwise.core.cli import main as cli

NO_GUI = (
    "forkwise: the desktop app needs PySide6, which is not installed: "
    "pip install 'forkwise[gui]' (the sessions and host commands work without it)"
)
COMMANDS = """\
positional arguments:
  FILE                  session files to import into the store before the window opens
                        (Forkwise's, Codex's, pi's: as `forkwise sessions import`)

commands (no Qt needed):
  forkwise sessions ACTION …
                        list, show, new, fork, truncate, import, export, delete,
                        prompt, approve (forkwise sessions --help)
  forkwise host --listen unix:PATH|tcp:HOST:PORT [--token-file FILE]
                        serve the store to other processes (forkwise host --help)

environment: FORKWISE_STORE (the store), FORKWISE_TOKEN (token for --connect),
FORKWISE_API_KEY (the model provider's key), FORKWISE_LOG (log level).
See also: man forkwise."""
#: desktop-app options that take a value (the value is not a FILE)
_APP_VALUE_OPTIONS = ("--store", "--connect", "--token", "--token-file")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if cli.is_cli_invocation(args):
        return cli.main(args)
    app = importlib.import_module("forkwise.gui.app.app")  # Qt-free until app.run
    if "-h" in args or "--help" in args:
        parser = app.build_parser()
        parser.usage = "forkwise [options] [FILE …] | forkwise sessions|host …"
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.epilog = COMMANDS
        parser.print_help()
        return 0
    if importlib.util.find_spec("PySide6") is None:
        print(NO_GUI, file=sys.stderr)
        return 1
    options, files = split_files(args)
    refused = app.secret_in_argv(app.build_parser().parse_args(options))
    if refused:  # before the files' import, which would pass the secret on
        print(refused, file=sys.stderr)
        return 2
    if files:
        import_files(options, files)
    # the window's quit ends the process (no interpreter teardown after it): no return
    return int(app.end_process(int(app.main(options))))


def split_files(args: list[str]) -> tuple[list[str], list[str]]:
    """The app's options, and the FILE arguments (positional) a file manager passes."""
    options: list[str] = []
    files: list[str] = []
    rest = iter(args)
    for a in rest:
        if a in _APP_VALUE_OPTIONS:
            options += [a, next(rest, "")]
        elif a.startswith("-"):
            options.append(a)
        else:
            files.append(a)
    return options, files


def import_files(options: list[str], files: list[str]) -> None:
    """The files through `forkwise sessions import` (Forkwise, Codex, pi … session files):
    one already imported changes nothing, one that cannot be read is in the report it
    prints; the app opens either way."""
    where: list[str] = []
    for i, option in enumerate(options):
        if option in ("--store", "--connect"):
            where += [option, options[i + 1]]
        elif option.startswith(("--store=", "--connect=")):
            where.append(option)
    cli.main(["sessions", "import", *where, *files])


if __name__ == "__main__":
    sys.exit(main())
