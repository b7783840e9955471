"""`forkwise sessions …`, written once against the client API.

Each command gets a client (`connect.open_client`: a running host, or a host in this
process on the store) and returns what `--json` prints and what a person reads.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.client.api import IMPORT_PROGRESS, STORE_INDEXING, Notification
from forkwise.core.client.client import Client
from forkwise.core.client.rows import session_row
from forkwise.core.client.titles import titles
from forkwise.core.errors import ForkwiseError, InvalidBoundary
from forkwise.core.log.event_log import gc_paused
from forkwise.core.reading import DOCUMENTS
from forkwise.core.runtime.listing import newest_first

Json = dict[str, Any]
#: what `--json` prints, and what a person reads (or how to make it: only when printed)
Outcome = tuple[Any, str | Callable[[], str]]
Command = Callable[[Client, argparse.Namespace], Awaitable[Outcome]]


async def list_sessions(client: Client, args: argparse.Namespace) -> Outcome:
    """A store without an index has every file read: progress goes to stderr then."""
    unsubscribe = await client.subscribe(_indexing_progress)
    await client.follow(catalogue=False)
    try:
        # a row a session, all kept until printed, nothing cyclic: each pass of the cyclic
        # collector would walk all made so far (~4% of a 10,000-session listing)
        with gc_paused():
            # the JSON rows carry each session's own usage; the table shows none of it
            rows = await client.list_sessions(usage=bool(args.json))
    finally:
        await unsubscribe()
    # newest first by the one order of rows by activity, ties too: the app's tree order
    newest_first(rows)
    # each titled as the app's list titles it (a fork not renamed: "<source> — fork N")
    named = titles(session_row(r) for r in rows)
    for r in rows:
        r["title"] = named[r["id"]]
    return rows, lambda: table(rows)


def _indexing_progress(note: Notification) -> None:
    if note["kind"] != STORE_INDEXING:
        return
    done, total = note["done"], note["total"]
    _progress_bar("reading", done, total, "session files")
    if done >= total:
        # the host that read them saves the index unless another process holds the
        # writer lock (that process, the app or a `forkwise host`, saves it when it lists)
        sys.stderr.write(
            f"forkwise: read {total:,} session files the store's index did not cover; the"
            " index is saved for the next listing unless another process holds the store's"
            " writer lock\n"
        )


def _progress_bar(doing: str, done: int, total: int, what: str) -> bool:
    """A progress line on stderr, rewritten in place, when stderr is a terminal; False
    when it is not (the caller may log a line now and then instead)."""
    if not sys.stderr.isatty():
        return False
    end = "\n" if done >= total else ""
    sys.stderr.write(f"\rforkwise: {doing} {done:,}/{total:,} {what}{end}")
    sys.stderr.flush()
    return True


def table(rows: Sequence[Json]) -> str:
    if not rows:
        return "no sessions"
    # columns as wide as their longest value (an imported session's id is a long one)
    iw = max(26, *(len(r["id"]) for r in rows))
    mw = max(16, *(len(r["model"] or "-") for r in rows))
    lines = [f"{'ID':<{iw}} {'EVENTS':>6} {'MSGS':>5} {'UPDATED':<24} {'MODEL':<{mw}} TITLE"]
    for r in rows:
        error = r.get("error")
        title = r["title"] if error is None else f"(unreadable: {error.get('message')})"
        mark = _state_mark(r)
        parent = f"  [from {r['parentSession']}]" if r["parentSession"] else ""
        lines.append(
            f"{r['id']:<{iw}} {r['events']:>6} {r['messages']:>5} {r['updated']:<24} "
            f"{(r['model'] or '-'):<{mw}} {mark}{title}{parent}"
        )
    return "\n".join(lines)


def _state_mark(row: Json) -> str:
    """What a table row puts before its title: a turn that waits for the person (the row
    to act on) is told apart from one that runs."""
    if row.get("waiting"):
        tools = ", ".join(dict.fromkeys(row.get("waitingTools") or ()))
        return f"[needs approval: {tools}] " if tools else "[needs approval] "
    return "* " if row["running"] else ""


async def show(client: Client, args: argparse.Namespace) -> Outcome:
    info = await client.get_session(args.id)
    events = await client.events(args.id)
    header = info["header"]
    lines = [
        f"session {header['id']}  cwd={header['cwd'] or '-'}  "
        f"parent={header['parentSession'] or '-'}"
    ]
    for e in events:
        extra = " ".join(f"{k}={_short(v)}" for k, v in e.items() if k not in ("seq", "type"))
        lines.append(f"{e['seq']:>6} {e['type']:<18} {extra}")
    return {"header": header, "events": events}, "\n".join(lines)


def _short(value: object, limit: int = 60) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def context(client: Client, args: argparse.Namespace) -> Outcome:
    """The provider transcript of a session: what an agent saw, and what it will see."""
    made = await client.context(args.id)
    return made, lambda: _context_text(made)


def _context_text(made: Json) -> str:
    model = made["model"]
    lines = [f"model {model['provider']}/{model['model']}"]
    for m in made["messages"]:
        who = m["role"] if m["role"] != "tool" else f"tool {m['tool_call_id']}"
        lines.append(f"[{who}] {m['content']}")
        for call in m.get("tool_calls", ()):
            fn = call["function"]
            lines.append(f"  -> {call['id']} {fn['name']}({fn['arguments']})")
    return "\n".join(lines)


async def usage(client: Client, args: argparse.Namespace) -> Outcome:
    report = await client.usage(args.id)
    return {k: report[k] for k in ("own", "shared", "total", "byModel")}, lambda: usage_table(
        report
    )


def usage_table(report: Json) -> str:
    """`sessions usage` for a person: one line per part and per model."""
    head = ("", "input", "output", "cache read", "cache write", "reasoning", "cost")
    lines: list[tuple[str, ...]] = [head]
    parts = [(name, report[name]) for name in ("own", "shared", "total")]
    parts += [(f"  {model}", p) for model, p in report["byModel"].items()]
    for name, p in parts:
        cost = "no price" if p["cost"] is None else f"${p['cost']:.4f}"
        counts = (p["input"], p["output"], p["cacheRead"], p["cacheWrite"], p["reasoning"])
        lines.append((name, *(f"{n:,}" for n in counts), cost))
    widths = [max(len(str(row[i])) for row in lines) for i in range(len(head))]

    def cell(i: int, value: object) -> str:
        return str(value).ljust(widths[i]) if i == 0 else str(value).rjust(widths[i])

    return "\n".join("  ".join(cell(i, c) for i, c in enumerate(row)) for row in lines)


async def new(client: Client, args: argparse.Namespace) -> Outcome:
    cwd = args.cwd
    if cwd is None and not str(getattr(args, "connect", None) or "").startswith("tcp:"):
        cwd = str(Path.cwd())  # a host over the network picks a folder of its own
    summary = await client.create_session(args.title, cwd, args.session_id)
    return {"id": summary["id"]}, summary["id"]


async def fork(client: Client, args: argparse.Namespace) -> Outcome:
    if args.replace:
        if args.message is None:
            raise InvalidBoundary("--replace needs --message")
        data, text = await _truncated(client, args.source, args.message, not args.exclude_message)
        return {k: data[k] for k in ("id", "through_sequence")}, text
    if args.exclude_message and args.message is None:
        raise InvalidBoundary("--exclude-message needs --message")
    summary = await client.fork_at(
        args.source,
        boundary=None if args.boundary in (None, "end") else _parse_int(args.boundary),
        end=args.boundary == "end",
        at_seq=None if args.at is None else _position(args.at, "at"),
        message_id=args.message,
        include_message=not args.exclude_message,
        child_id=args.child,
    )
    return {"child": summary["id"], "seedLength": summary["seedLength"]}, summary["id"]


#: a boundary or seq beyond this is past every log's end (and past what JSON carries)
_MAX_POSITION = (1 << 63) - 1


def _parse_int(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise InvalidBoundary(f"boundary must be an integer or 'end', got {text!r}") from None
    return _position(value, "boundary")


def _position(value: int, name: str) -> int:
    """`value`, or InvalidBoundary when it is past any log's end (a number that large is
    not sent to the host: the wire carries 64-bit integers)."""
    if abs(value) > _MAX_POSITION:
        raise InvalidBoundary(
            f"{name} {value} is past the end of any session", **{name: str(value)}
        )
    return value


async def truncate(client: Client, args: argparse.Namespace) -> Outcome:
    return await _truncated(client, args.id, args.message, not args.exclude_message)


async def _truncated(client: Client, sid: str, message: str, include: bool) -> Outcome:
    summary = await client.truncate(sid, message, include)
    through = summary["events"]
    data = {"id": summary["id"], "through_sequence": through, "events": through}
    return data, f"{summary['id']} now ends at seq {through}"


async def delete(client: Client, args: argparse.Namespace) -> Outcome:
    await client.delete_session(args.id)
    return {"deleted": args.id}, f"{args.id} moved to the store's trash"


async def restore(client: Client, args: argparse.Namespace) -> Outcome:
    row = await client.restore_session(args.id)
    return row, f"{args.id} restored from the store's trash"


async def trash(client: Client, args: argparse.Namespace) -> Outcome:
    """The kept deleted sessions; with --empty, they (or the one named) go for good."""
    if args.empty is not None:
        result = await client.empty_trash(args.empty or None)
        gone = len(result["removed"])
        return result, f"{gone} deleted session{'s' if gone != 1 else ''} removed for good"
    rows = await client.list_trash()
    if not rows:
        return rows, "the trash is empty"
    iw = max(26, *(len(r["id"]) for r in rows))
    lines = [f"{'ID':<{iw}} {'DELETED':<24} TITLE"]
    lines += [f"{r['id']:<{iw}} {r['deletedAt']:<24} {r['title']}" for r in rows]
    return rows, "\n".join(lines)


async def import_files(client: Client, args: argparse.Namespace) -> Outcome:
    """Exit status 1 when a file failed (see `status`); the others are imported. Progress
    goes to stderr: a bar on a terminal, else a line every 100 files."""
    unsubscribe = await client.subscribe(_import_progress)
    await client.follow(catalogue=False)
    try:
        paths = [str(Path(p).absolute()) for p in args.paths]
        report = await client.import_files(paths, args.tool)
    finally:
        await unsubscribe()
    lines = list(report["imported"])  # one id a line, as scripts read it
    lines += [f"updated {sid}" for sid in report["updated"]]
    lines += [f"unchanged {sid}" for sid in report["unchanged"]]
    for f in report["failed"]:
        where = f"{f['path']}:{f['line']}" if f.get("line") else f["path"]
        lines.append(f"failed {where}: {f['error']['message']} ({f['error']['code']})")
    for w in report.get("warnings", []):
        where = f"{w['path']}:{w['line']}" if w.get("line") else w["path"]
        lines.append(f"warning {where}: {w['message']} ({w['code']})")
    if report.get("unmapped"):
        kept = ", ".join(f"{k} {n}" for k, n in sorted(report["unmapped"].items()))
        lines.append(f"kept as plugin events (no Forkwise equivalent): {kept}")
    if not lines:
        where = "there" if args.paths else (
            "in the tools' folders (~/.claude/projects, ~/.codex/sessions, "
            "~/.pi/agent/sessions, or $CLAUDE_CONFIG_DIR, $CODEX_HOME, $PI_CODING_AGENT_DIR)"
        )
        lines.append(f"nothing to import: no session files found {where}")
    return report, "\n".join(lines)


async def export(client: Client, args: argparse.Namespace) -> Outcome:
    document = args.tool in DOCUMENTS
    out = str(Path(args.out).absolute()) if args.out else None
    if document and out is None:  # the host may run elsewhere: name the file here
        out = str(Path.cwd() / f"{args.id}{DOCUMENTS[args.tool]}")
    made = await client.export_session(args.id, args.tool, out, args.assets)
    if document:
        return made, made["path"]
    return made, f"{made['path']}\ncontinue with: {made['resume']}"


def _import_progress(note: Notification) -> None:
    if note["kind"] != IMPORT_PROGRESS:
        return
    done, total = note["done"], note["total"]
    if not _progress_bar("importing", done, total, "files") and (
        done % 100 == 0 or (done >= total >= 100)
    ):
        sys.stderr.write(f"forkwise: imported {done:,} of {total:,} files\n")


async def prompt(client: Client, args: argparse.Namespace) -> Outcome:
    return _turn_result(await client.prompt_and_wait(args.id, args.text))


async def approve(client: Client, args: argparse.Namespace) -> Outcome:
    return _turn_result(await client.approve_and_wait(args.id, args.approval_id, not args.deny))


async def cancel(client: Client, args: argparse.Namespace) -> Outcome:
    """Refused (`agent-owns-turn`) for a turn the agent an imported session came from is
    still writing: the host decides, as for the app."""
    await client.cancel(args.id)
    return {"id": args.id, "cancelled": True}, f"{args.id}: no turn runs in it now"


def _turn_result(outcome: Json) -> Outcome:
    status = outcome["status"]
    if status not in ("completed", "waiting"):  # "idle": the prompt never became a turn
        raise TurnDidNotComplete(outcome)
    if status == "waiting":
        lines = [
            f"{a['approval']}\twaiting for approval: {a['tool']} {a['args']}"
            for a in outcome["approvals"]
        ]
        return outcome, "\n".join(lines)
    return outcome, outcome.get("reply") or ""


class TurnDidNotComplete(ForkwiseError):
    """A turn the CLI ran ended failed, cancelled or interrupted."""

    code = "turn-not-completed"

    def __init__(self, outcome: Json) -> None:
        reason = outcome.get("error") or "no reason given"
        if outcome["status"] == "idle":
            message = "the prompt did not run: the host could not start its turn (see its log)"
        elif outcome.get("turn") is None:
            message = f"the prompt did not run: {reason}"
        else:
            message = f"the turn ended {outcome['status']}: {reason}"
        super().__init__(message, outcome=outcome)


def status(action: str, data: Any) -> int:
    """The exit status of a command that did not raise: 1 when an import left files out."""
    return 1 if action == "import" and data["failed"] else 0


COMMANDS: dict[str, Command] = {
    "list": list_sessions,
    "show": show,
    "context": context,
    "new": new,
    "fork": fork,
    "truncate": truncate,
    "delete": delete,
    "restore": restore,
    "trash": trash,
    "import": import_files,
    "export": export,
    "prompt": prompt,
    "approve": approve,
    "cancel": cancel,
    "usage": usage,
}
