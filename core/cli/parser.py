"""The command line's grammar: `build_parser` and the options of each command, whose
parsers are built only when that command is chosen (`_Subcommands`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, sized to the terminal when it formats: argparse makes
    one for each argument it adds (to check the argument's metavar), and sizing one
    imports shutil (~1.6 ms of CPU with the bz2 and lzma it imports), which a command
    line that asks for no help and makes no error never uses."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(prog, indent_increment, max_help_position, 0 if width is None else width)
        self._sized = width is not None
        self._asked_position = max_help_position

    def format_help(self) -> str:
        if not self._sized:  # as argparse sizes it when no width is given
            import shutil

            width = shutil.get_terminal_size().columns - 2
            self._width = width
            self._max_help_position = min(
                self._asked_position, max(width - 20, self._indent_increment * 2)
            )
            self._sized = True
        return super().format_help()


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # usage errors: exit 2, as argparse does
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


class VersionAction(argparse.Action):
    """`--version`, looked up only when asked for (reading package metadata takes ~20 ms)."""

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        from forkwise.core import __version__

        print(f"forkwise {__version__}")
        parser.exit()


#: adds a subcommand's arguments to its parser
_Fill = Callable[[argparse.ArgumentParser], None]


class _Subcommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Subcommands whose parsers are made when one is chosen, its arguments added by its
    `fill`: a command line runs one of them, and making the parsers and ~60 arguments of
    all (argparse looks up the translation of each of its words) takes longer than
    parsing (`sessions list`: ~4 ms of CPU). Each subcommand's name and help line are
    there from the start, so the help and the errors of the commands above it are as
    they were."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._make: Callable[..., argparse.ArgumentParser] = self._parser_class
        self._parser_class = _Deferred
        self._deferred: dict[str, tuple[_Deferred, _Fill]] = {}

    def add(self, name: str, fill: _Fill, **kwargs: Any) -> None:
        """A subcommand `name` (`kwargs` as for `add_parser`); `fill` adds its arguments
        to its parser once it is chosen."""
        made = self.add_parser(name, **kwargs)
        assert isinstance(made, _Deferred)
        self._deferred[name] = (made, fill)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        name = values[0] if values else None
        if isinstance(name, str) and name in self._deferred:
            deferred, fill = self._deferred.pop(name)
            chosen = self._make(**deferred.kwargs)
            fill(chosen)
            self.choices[name] = chosen
        super().__call__(parser, namespace, values, option_string)


class _Deferred:
    """A subcommand's parser still to be made: what `add_parser` would make it with."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


def _subcommands(parser: argparse.ArgumentParser, dest: str) -> _Subcommands:
    """`parser`'s subcommands. Their usage starts with `parser.prog`, given here: argparse
    would format the usage of `parser`'s positional arguments before them to find it
    (none here, so it is the prog at any width), sizing a formatter to the terminal."""
    subcommands = parser.add_subparsers(
        dest=dest, required=True, parser_class=_Parser, action=_Subcommands, prog=parser.prog
    )
    assert isinstance(subcommands, _Subcommands)
    return subcommands


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="forkwise", description="Browse and branch AI-agent sessions.")
    parser.add_argument(
        "--version", action=VersionAction, nargs=0, help="print the version and exit"
    )
    _connect_options(parser, None)  # given before it
    top = _subcommands(parser, "command")
    top.add("host", _host_arguments, help="serve the store to other processes (headless host)")
    top.add("store", _store_arguments, help="whole-store operations")
    top.add(
        "sessions",
        _sessions_arguments,
        help="list, show, create, fork, truncate, delete, restore and import sessions",
    )
    return parser


def _host_arguments(host: argparse.ArgumentParser) -> None:
    host.add_argument("--store", metavar="DIR", help="store directory")
    host.add_argument(
        "--listen", required=True, metavar="unix:PATH|tcp:HOST:PORT", help="where to listen"
    )
    host.add_argument(
        "--allow-remote", action="store_true", help="allow a non-loopback tcp address"
    )
    host.add_argument(
        "--token-file",
        metavar="FILE",
        default=argparse.SUPPRESS,
        help="clients must present the token in FILE (required for tcp)",
    )


def _store_arguments(store: argparse.ArgumentParser) -> None:
    store_sub = _subcommands(store, "action")
    store_sub.add(
        "copy",
        _copy_arguments,
        help="copy every session of SRC into DST (folders or postgresql:// URLs; resumable)",
    )


def _copy_arguments(copy: argparse.ArgumentParser) -> None:
    copy.add_argument("source", metavar="SRC")
    copy.add_argument("target", metavar="DST")
    copy.add_argument("--json", action="store_true", help="machine-readable output")


def _common(parser: argparse.ArgumentParser) -> None:
    """The options every `sessions` action takes, given after it."""
    parser.add_argument(
        "--store",
        metavar="DIR",
        help="store directory (default: $FORKWISE_STORE or the user data dir)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    _connect_options(parser, argparse.SUPPRESS)  # given after the subcommand


def _with_id(parser: argparse.ArgumentParser) -> None:
    _common(parser)
    parser.add_argument("id")


def _sessions_arguments(sessions: argparse.ArgumentParser) -> None:
    sub = _subcommands(sessions, "action")
    sub.add("list", _common, help="list sessions, newest activity first")
    sub.add("show", _with_id, help="show a session's header and events")
    sub.add(
        "context",
        _with_id,
        help="print what the model would receive on the next prompt (the provider transcript)",
    )
    sub.add("new", _new_arguments, help="create an empty session; prints its id")
    sub.add("fork", _fork_arguments, help="fork a session into a new child")
    sub.add("truncate", _truncate_arguments, help="replace in place at a message")
    sub.add(
        "import",
        _import_arguments,
        help=(
            "import sessions of Claude Code, Codex, pi, Gemini CLI, OpenCode or Forkwise "
            "(files or folders)"
        ),
        description="Import session files, or folders searched for them. Without a PATH: "
        "the tools' default folders (~/.claude/projects, ~/.codex/sessions, "
        "~/.pi/agent/sessions). A second import of the same sources changes nothing; "
        "a source that grew is brought up to date.",
    )
    sub.add(
        "export",
        _export_arguments,
        help="write a session as a Claude Code, Codex or pi session, to continue it there, "
        "or as a Markdown or HTML document",
    )
    sub.add("delete", _with_id, help="move a session to the store's trash")
    sub.add("restore", _with_id, help="bring a deleted session back from the store's trash")
    sub.add(
        "trash",
        _trash_arguments,
        help="list the deleted sessions the store keeps; --empty deletes them for good",
    )
    sub.add(
        "usage",
        _with_id,
        help="tokens and cost of a session: its own part, the part it shares with its "
        "source, the total and each model's",
    )
    sub.add(
        "prompt",
        _prompt_arguments,
        help="run a turn; prints the reply or a pending approval id",
    )
    sub.add(
        "approve",
        _approve_arguments,
        help="answer a pending approval and continue the turn",
    )
    sub.add(
        "cancel",
        _with_id,
        help="cancel the session's running turn and its queued prompts (not a turn its "
        "agent writes in its own file)",
    )


def _trash_arguments(trash: argparse.ArgumentParser) -> None:
    _common(trash)
    trash.add_argument(
        "--empty",
        nargs="?",
        const="",
        metavar="ID",
        default=None,
        help="delete the kept sessions for good (only ID's when given); no undo",
    )


def _new_arguments(new: argparse.ArgumentParser) -> None:
    _common(new)
    new.add_argument("--id", dest="session_id")
    new.add_argument("--title")
    new.add_argument(
        "--cwd", default=None, help="working directory recorded in the header (default: here)"
    )


def _fork_arguments(fork: argparse.ArgumentParser) -> None:
    _common(fork)
    fork.add_argument("source")
    fork.add_argument(
        "--boundary",
        metavar="N|end",
        help="exact store boundary: copy events 1..N ('end': the last event). "
        "Without it: through the last completed turn.",
    )
    fork.add_argument("--child", metavar="ID", help="id for the child (default: a new id)")
    fork.add_argument(
        "--at",
        type=int,
        metavar="N",
        help="host anchor rule: through the first turn end at or after seq N",
    )
    fork.add_argument("--message", metavar="MSG_ID", help="fork through that message's turn")
    fork.add_argument(
        "--exclude-message", action="store_true", help="with --message: fork before its turn"
    )
    fork.add_argument(
        "--replace", action="store_true", help="with --message: truncate this session in place"
    )


def _truncate_arguments(trunc: argparse.ArgumentParser) -> None:
    _with_id(trunc)
    trunc.add_argument("--message", required=True, metavar="MSG_ID")
    trunc.add_argument(
        "--exclude-message", action="store_true", help="also remove that message's turn"
    )


def _import_arguments(imp: argparse.ArgumentParser) -> None:
    _common(imp)
    imp.add_argument(
        "--from",
        dest="tool",
        choices=("claude", "codex", "pi", "gemini", "opencode", "forkwise"),
        help="the tool whose sessions these are (default: recognised per file)",
    )
    imp.add_argument("paths", nargs="*", type=Path, metavar="PATH")


def _export_arguments(exp: argparse.ArgumentParser) -> None:
    _with_id(exp)
    exp.add_argument(
        "--to", dest="tool", required=True,
        choices=("claude", "codex", "pi", "gemini", "opencode", "markdown", "html"),
    )
    exp.add_argument(
        "--out",
        metavar="PATH",
        help="the file to write (default: where the tool looks for its sessions; a "
        "document: ID.md or ID.html here); an existing file is never overwritten",
    )
    exp.add_argument(
        "--assets",
        action="store_true",
        help="markdown: write images as files beside the document instead of data URIs",
    )


def _prompt_arguments(prompt: argparse.ArgumentParser) -> None:
    _with_id(prompt)
    prompt.add_argument("text")


def _approve_arguments(approve: argparse.ArgumentParser) -> None:
    _with_id(approve)
    approve.add_argument("approval_id", metavar="APPROVAL_ID")
    approve.add_argument("--deny", action="store_true", help="refuse the tool call")


def _connect_options(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument(
        "--connect",
        metavar="ADDR",
        default=default,
        help="use the running host at unix:PATH or tcp:HOST:PORT instead of the store",
    )
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        default=default,
        help="file holding the host's token (tcp)",
    )
