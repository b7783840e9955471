"""Reading a session file of the JSON Lines backend: every line parsed and checked
(`parse_log`), or, for a file laid out as the backend writes it and vouched for by the
index, the index's facts taken instead (`trusted_log`). Reading never modifies a file: a
torn last line (a crash mid-write) is set aside in memory (`Tail.torn`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from forkwise.core.errors import CorruptLog, ForkwiseError, InvalidEvent
from forkwise.core.log.event_log import EventLog, gc_paused
from forkwise.core.log.events import MAX_NESTING, TURN_END, too_deep
from forkwise.core.log.turns import BracketState
from forkwise.core.safe_read import split_lines
from forkwise.core.store.backend import LoadedLog
from forkwise.core.store.backends.log_facts import LogFacts
from forkwise.core.store.checked_log import LogCheck
from forkwise.core.store.fork_point import ForkPoint
from forkwise.core.store.session import SessionHeader, SessionSummary


@dataclass
class Tail:
    """What the loader learnt about the end of a file, for the next append."""

    good_length: int
    torn: bytes | None
    needs_newline: bool
    #: the file offset just past the line of the log's last completed turn, when the
    #: loader found one and the lines before it are one per event (LoadedLog.point)
    point_end: int | None = None


def parse_log(data: bytes, path: str) -> tuple[LoadedLog, bytes, Tail]:
    """Parse and check a whole session file. Returns the log (its events decoded on first
    access, its summary computed on the way), the raw header line and tail facts.

    Raises CorruptLog naming the file and line for anything but a torn last line.
    """
    return parse_lines(split_lines(data), len(data), path)


def parse_lines(lines: list[bytes], size: int, path: str) -> tuple[LoadedLog, bytes, Tail]:
    """`parse_log` of a file of `size` bytes given as its lines (`safe_read.read_lines`:
    the file's bytes split at every newline). Takes `lines` over."""
    with gc_paused():
        return _parse_log(lines, size, path)


def _parse_log(all_lines: list[bytes], size: int, path: str) -> tuple[LoadedLog, bytes, Tail]:
    lines, header, tail = _split_log(all_lines, size, path)
    header_raw = lines[0]
    check = LogCheck(header)
    try:
        blank = check.check_lines(lines, 1)
    except (orjson.JSONDecodeError, InvalidEvent) as exc:
        lineno = check.at + 1
        raise CorruptLog(f"{path}, line {lineno}: {exc}", path=path, line=lineno) from exc
    # the checked lines: the file's, but its header and blank lines
    check.lines = [x for x in lines[1:] if x and not x.isspace()] if blank else lines[1:]
    kept = len(check.lines)
    if header.seed_length > kept:
        raise CorruptLog(
            f"{path}: seedLength {header.seed_length} exceeds the {kept} events",
            path=path,
            line=1,
        )
    loaded = check.result(tail.torn)
    events, point = loaded.events, loaded.point
    if point is not None and kept == len(lines) - 1:  # no blank lines: offsets hold
        assert isinstance(events, EventLog)
        end = len(header_raw) + 1 + events.byte_length(point.seq)
        if end <= tail.good_length and not (tail.needs_newline and point.seq == kept):
            tail.point_end = end
    return loaded, header_raw, tail


def _split_log(
    lines: list[bytes], size: int, path: str
) -> tuple[list[bytes], SessionHeader, Tail]:
    """The file's lines (header first; a torn last line left out) and its parsed header,
    from all its `lines` (split at every newline; changed in place) and its `size`."""
    last = lines.pop()  # b"" when the file ends with a newline
    torn: bytes | None = None
    needs_newline = False
    good_length = size
    if last.strip():
        try:
            orjson.loads(last)
            lines.append(last)
            needs_newline = True
        except orjson.JSONDecodeError:
            torn = last
            good_length = size - len(last)
    if not lines:
        raise CorruptLog(f"{path}: the file is empty or has no header line", path=path, line=1)
    header_raw = lines[0]
    try:
        header_record = orjson.loads(header_raw)
        if too_deep(header_raw, header_record):
            raise CorruptLog(f"the header nests deeper than {MAX_NESTING} levels")
        header = SessionHeader.from_record(header_record)
    except orjson.JSONDecodeError as exc:
        raise CorruptLog(f"{path}, line 1: not JSON ({exc})", path=path, line=1) from exc
    except ForkwiseError as exc:
        exc.message = f"{path}, line 1: {exc.message}"
        exc.details.update(path=path, line=1)
        exc.args = (exc.message,)
        raise
    return lines, header, Tail(good_length, torn, needs_newline)


def trusted_log(
    all_lines: list[bytes], size: int, path: str, summary: SessionSummary, facts: LogFacts
) -> tuple[LoadedLog, bytes, Tail] | None:
    """The log as the index says a full check found it, when the file (of `size` bytes,
    split at every newline into `all_lines`) is laid out as this backend writes it (one
    line per event); None sends the caller to `parse_lines`, with the lines as they were."""
    lines, header, tail = _split_log(list(all_lines), size, path)
    if len(lines) != facts.events + 1 or header.id != summary.id:
        return None  # blank lines or another shape: check every line
    events = EventLog.lazy(lines[1:])
    state = BracketState.restore(
        events, facts.open_turn, facts.open_turn_seq, dict(facts.pending_approvals)
    )
    point = facts.fork
    if point is not None and not ends_turn(events.line(point.seq - 1), point):
        point = None  # the index is wrong about it: find it again from the lines
    elif (
        point is not None
        and facts.fork_end is not None
        and len(lines[0]) + 1 + events.byte_length(point.seq) == facts.fork_end
    ):
        tail.point_end = facts.fork_end
    loaded = LoadedLog(header, events, state, tail.torn, summary=summary, point=point)
    return loaded, lines[0], tail


def ends_turn(line: bytes, point: ForkPoint) -> bool:
    """Whether `line` is the `turn/end` a fork point names."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return (
        type(record) is dict
        and record.get("seq") == point.seq
        and record.get("type") == TURN_END
        and record.get("turn") == point.turn
    )


def parse_file(
    session_id: str, path: Path, lines: list[bytes], size: int
) -> tuple[LoadedLog, bytes, Tail]:
    """parse_lines, and the header must name the session its file is named for."""
    loaded, header_raw, tail = parse_lines(lines, size, str(path))
    if loaded.header.id != session_id:
        raise CorruptLog(
            f"{path}, line 1: header id {loaded.header.id!r} does not match the file name",
            path=str(path),
            line=1,
        )
    return loaded, header_raw, tail


def header_of(header_raw: bytes) -> SessionHeader | None:
    """The header a line holds, or None when it is not a valid one."""
    try:
        record = orjson.loads(header_raw)
        if too_deep(header_raw, record):
            return None
        return SessionHeader.from_record(record)
    except (orjson.JSONDecodeError, ForkwiseError):
        return None
