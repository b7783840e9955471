"""Writing a Forkwise session as a pi session file that `pi --session <path>` continues.

The file is what pi's own fork writes: a new header (a new UUID, `parentSession` = the
source file's path, the cwd, the time, the version) and then the source's entry lines,
byte for byte — those the session's events name in `src` (for a branch, the entries on its
path), in file order. The turns added in Forkwise follow as pi entries chained from the
last copied one (render.py). The file is written beside its final name, synced, then
linked into place, so a crash leaves no half file and an existing file is never replaced.
"""

from __future__ import annotations

import os
import shlex
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ..base import (
    ExportedSession,
    ExportInput,
    FormatError,
    SourceRef,
    Tool,
    make_private_folders,
    read_source,
    write_new_file,
)
from .entries import CURRENT_VERSION, line_id
from .reader import agent_dir
from .render import Renderer


def session_folder(cwd: str) -> str:
    """pi's folder name for a cwd: `--<cwd without its first slash, / \\ : as ->--`."""
    trimmed = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + trimmed.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def uuid7() -> str:
    """A time-ordered UUID (version 7), the kind pi gives new sessions."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


def iso_now() -> str:
    """The current time as JavaScript's toISOString writes it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Source:
    """One source file's lines, read once."""

    def __init__(self, ref: SourceRef) -> None:
        self.ref = ref
        path = Path(ref.path)
        try:
            data = read_source(path)
        except OSError as exc:
            raise FormatError(
                f"the source session file {path} cannot be read: {exc.strerror or exc}",
                path=str(path),
            ) from exc
        self.lines = data.split(b"\n")
        try:
            header = orjson.loads(self.lines[0])
            version = header.get("version", 1) if isinstance(header, dict) else None
        except orjson.JSONDecodeError:
            version = None
        if type(version) is not int:
            raise FormatError("the source is not a pi session file", path=str(path), line=1)
        self.version = version

    def entry(self, number: int, turn: str | None, taken: set[str]) -> bytes:
        """Entry line `number`, checked: a turn's opening line must still give that turn's
        id (a file rewritten since the import, e.g. upgraded by pi, is refused)."""
        if number < 2 or number > len(self.lines) or not self.lines[number - 1].strip():
            raise FormatError(
                f"the source has no entry on line {number}: it changed since it was imported",
                path=self.ref.path,
                line=number,
            )
        raw = self.lines[number - 1]
        eid = line_id(raw, self.version)
        if eid is None:
            raise FormatError("not a pi entry", path=self.ref.path, line=number)
        if turn is not None and turn != f"turn:{eid}":
            raise FormatError(
                f"line {number} is not the entry that was imported (the file changed)",
                path=self.ref.path,
                line=number,
            )
        taken.add(eid)
        return raw


class PiWriter:
    tool: Tool = "pi"

    def default_root(self, env: Mapping[str, str], home: Path) -> Path:
        return agent_dir(env, home) / "sessions"

    def export(self, session: ExportInput, root: Path, out: Path | None) -> ExportedSession:
        order, wanted, checks = _copied(session, root)
        sources = [_Source(session.sources[sid]) for sid in order]
        body: list[bytes] = []
        taken: set[str] = set()
        for sid, source in zip(order, sources, strict=True):
            for number in sorted(wanted[sid]):
                body.append(source.entry(number, checks.get((sid, number)), taken))
        last_id = line_id(body[-1], sources[-1].version) if body else None
        version = min((s.version for s in sources), default=CURRENT_VERSION)
        renderer = Renderer(session.events, last_id, taken, version >= 2, _model(session.model))
        for event in session.events:
            if _pi_src(event, session.sources) is not None:
                renderer.seen(event)
            else:
                renderer.render(event)
        new_id = uuid7()
        stamp = iso_now()
        header: dict[str, Any] = {
            "type": "session",
            "version": version,
            "id": new_id,
            "timestamp": stamp,
            "cwd": session.cwd,
        }
        if order:
            header["parentSession"] = os.path.abspath(sources[-1].ref.path)
        data = b"\n".join([orjson.dumps(header), *body, *renderer.lines]) + b"\n"
        name = f"{stamp.replace(':', '-').replace('.', '-')}_{new_id}.jsonl"
        if out is None:
            folder = root / session_folder(session.cwd)
            try:
                make_private_folders(folder)
            except OSError as exc:
                raise FormatError(
                    f"cannot create {folder}: {exc.strerror or exc}", path=str(folder)
                ) from exc
            target = folder / name
        else:
            if not out.parent.is_dir():
                raise FormatError(f"the folder {out.parent} does not exist", path=str(out))
            target = out
        write_new_file(target, data)
        return ExportedSession(target, new_id, f"pi --session {shlex.quote(str(target))}")


def _pi_src(event: Mapping[str, Any], sources: Mapping[str, SourceRef]) -> Mapping[str, Any] | None:
    """The event's `src` if it names lines of a pi file. Lines of another tool's file
    (a session imported from Claude Code or Codex) cannot be copied: such events are
    written as new pi entries like the turns added in Forkwise."""
    src = event.get("src")
    if not isinstance(src, Mapping):
        return None
    sid = src.get("id")
    ref = sources.get(sid) if isinstance(sid, str) else None
    return src if ref is None or ref.tool == "pi" else None


def _copied(
    session: ExportInput, root: Path
) -> tuple[list[str], dict[str, set[int]], dict[tuple[str, int], str]]:
    """The pi sources named by `src` (in the order they first appear), the lines wanted
    from each, and the turn id each user-prompt line must give (to notice a changed file)."""
    order: list[str] = []
    wanted: dict[str, set[int]] = {}
    checks: dict[tuple[str, int], str] = {}
    for event in session.events:
        src = _pi_src(event, session.sources)
        if src is None:
            continue
        sid, lines = src.get("id"), src.get("lines")
        if not isinstance(sid, str) or not isinstance(lines, list):
            continue
        if sid not in session.sources:
            raise FormatError(f"no source file is known for {sid!r}", path=str(root))
        if sid not in wanted:
            order.append(sid)
            wanted[sid] = set()
        numbers = [n for n in lines if type(n) is int]
        wanted[sid].update(numbers)
        if event.get("type") == "turn/start" and len(numbers) == 1:
            checks[(sid, numbers[0])] = str(event.get("turn"))
    return order, wanted, checks


def _model(model: Mapping[str, Any] | None) -> tuple[str, str] | None:
    if model is None:
        return None
    provider, name = model.get("provider"), model.get("model")
    if isinstance(provider, str) and isinstance(name, str):
        return provider, name
    return None


WRITER = PiWriter()
