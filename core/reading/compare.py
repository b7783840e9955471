"""What the compare view shows for two sessions of one lineage (Qt-free, tested on its own).

Two sessions of one lineage share a prefix of identical events (a fork copies its source's
lines, seq numbers and times included). The view collapses that prefix to one line and
sets what follows side by side, turn against turn: the first diverging turn of one beside
the first of the other, and so on, with tool calls and their results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

from forkwise.core.log.events import MESSAGE, MODEL_SELECT
from forkwise.core.log.usage import LEGACY_CLAUDE, USAGE

from .entries import result_failed

Json = dict[str, Any]
TitleOf = Callable[[str], str]

RESULT_CHARS = 300


@dataclass
class Block:
    """One turn (or a run of standalone events) as lines of (kind, text)."""

    kind: str  # "turn" or "note"
    lines: list[tuple[str, str]] = field(default_factory=list)
    status: str = ""

    @property
    def text(self) -> str:
        return "\n".join(text for _kind, text in self.lines)


@dataclass
class Comparison:
    shared: int  # events 1..shared are the same in both
    shared_turns: int
    last_shared_question: str
    rows: list[tuple[Block | None, Block | None]]
    #: tokens and cost (`usage_sides`): the shared prefix once, then each side's own part
    usage: tuple[Json, Json, Json] | None = None

    def shared_line(self) -> str:
        """The collapsed shared prefix, in one line."""
        if not self.shared:
            return "Nothing in common: they differ from the first event"
        turns = f"{self.shared_turns} turn{'s' if self.shared_turns != 1 else ''}"
        question = self.last_shared_question
        last = f", up to “{_short(question, 60)}”" if question else ""
        return f"⋯ {turns} in common (events 1 to {self.shared}){last}"


def common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading events the two logs share, event for event (or characters two
    texts share)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _text_of(event: Json) -> str:
    parts = event.get("parts") or ()
    return "".join(str(p.get("text", "")) for p in parts
                   if isinstance(p, dict) and p.get("type") == "text")


def _compact(value: Any) -> str:
    import orjson

    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)


def blocks(events: Sequence[Json], title_of: TitleOf = str) -> list[Block]:
    """The events as blocks: each turn one block, standalone events between turns one;
    `title_of` names a session (a fork record's source)."""
    out: list[Block] = []
    current: Block | None = None
    for ev in events:
        etype = ev.get("type")
        if etype == "turn/start":
            current = Block("turn")
            out.append(current)
            continue
        if current is None or current.kind != "turn" or current.status:
            if etype in ("message", "tool/result", "approval/request", "approval/resolve",
                         "turn/end"):
                current = Block("turn")
                out.append(current)
            elif current is None or current.kind != "note":
                current = Block("note")
                out.append(current)
        _add(current, ev, title_of)
    return out


def _add(block: Block, ev: Json, title_of: TitleOf) -> None:
    etype = ev.get("type")
    if etype == "message":
        role = str(ev.get("role"))
        text = _text_of(ev)
        if text or role == "user":
            block.lines.append((role, f"{'You' if role == 'user' else 'Assistant'}: {text}"))
        for part in ev.get("parts") or ():
            if isinstance(part, dict) and part.get("type") == "tool_call":
                args = _short(_compact(part.get("args", {})), 120)
                block.lines.append(("tool", f"⚙ {part.get('name')}({args})"))
    elif etype == "tool/result":
        label = "failed" if result_failed(ev) else "result"
        out = _short(_compact(ev.get("output")), RESULT_CHARS)
        block.lines.append(("result", f"  → {label}: {out}"))
    elif etype == "approval/resolve":
        block.lines.append(("approval", f"  approval: {ev.get('decision')}"))
    elif etype == "turn/end":
        block.status = str(ev.get("status", "completed"))
        block.lines.append(("end", f"— turn {block.status}"))
    elif etype == "history/fork":
        where = f"at event {ev.get('boundary')}"
        block.lines.append(("note", f"Forked from {title_of(str(ev.get('source')))} {where}"))
    elif etype == "model/select":
        block.lines.append(("note", f"Model: {ev.get('label') or ev.get('model')}"))
    elif etype == "session/title":
        block.lines.append(("note", f"Title: {ev.get('title')}"))
    elif etype == "context/summary":
        block.lines.append(("note", "Earlier context summarised"))


def compare(a: Sequence[Json], b: Sequence[Json], title_of: TitleOf = str) -> Comparison:
    """Align two logs from their last common event: turns of one beside turns of the
    other, in order (standalone notes beside each other where both have them)."""
    shared = common_prefix(a, b)
    prefix = a[:shared]
    turns = sum(1 for e in prefix if e.get("type") == "turn/start")
    question = ""
    for e in reversed(prefix):
        if e.get("type") == "message" and e.get("role") == "user":
            question = _text_of(e)
            break
    left, right = blocks(a[shared:], title_of), blocks(b[shared:], title_of)
    rows = _align(left, right)
    return Comparison(shared, turns, question, rows, usage_sides(a, b, shared))


#: the events a usage fold reads (`forkwise.core.log.usage`)
_USAGE_TYPES = frozenset({USAGE, LEGACY_CLAUDE, MODEL_SELECT, MESSAGE})


def usage_sides(a: Sequence[Json], b: Sequence[Json], shared: int) -> tuple[Json, Json, Json]:
    """The usage parts (tokens and cost, as `sessions usage` gives them) of the first
    `shared` events, counted once, and of what each log has after them. A reply both logs
    count after the prefix (an imported branch repeats the turn it left) is shared too."""
    from forkwise.core.errors import InvalidEvent
    from forkwise.core.log.costs import part
    from forkwise.core.log.events import Event
    from forkwise.core.log.usage import merged, session_tokens

    def counted(log: Sequence[Json]) -> list[Event]:
        """The events the fold reads (usage records, model choices, messages)."""
        out = []
        for e in log:
            if e.get("type") in _USAGE_TYPES:
                try:
                    out.append(Event.from_record(e))
                except InvalidEvent:
                    continue  # a malformed record counts nothing, as when the log is read
        return out

    ea, eb = counted(a), counted(b)
    whole = max(len(a), len(b))  # (a seed past every event: all of a log is "shared")
    both = session_tokens(ea, whole).replies & session_tokens(eb, whole).replies
    ta, tb = session_tokens(ea, shared, both), session_tokens(eb, shared, both)
    return part(merged(ta.shared.items())), part(ta.own), part(tb.own)


def _align(left: list[Block], right: list[Block]) -> list[tuple[Block | None, Block | None]]:
    """Notes beside notes, turns beside turns, in order. A note that says nothing (only
    events kept as `plugin/…`, e.g. a Codex rollback's record) is left out: it showed as
    an empty card."""
    def split(items: list[Block]) -> tuple[list[Block], list[Block]]:
        notes = [b for b in items if b.kind == "note" and b.lines]
        return notes, [b for b in items if b.kind == "turn"]

    left_notes, left_turns = split(left)
    right_notes, right_turns = split(right)
    note_l = Block("note", [line for b in left_notes for line in b.lines]) if left_notes else None
    note_r = (Block("note", [line for b in right_notes for line in b.lines])
              if right_notes else None)
    rows: list[tuple[Block | None, Block | None]] = []
    if note_l is not None or note_r is not None:
        rows.append((note_l, note_r))
    rows.extend(zip_longest(left_turns, right_turns))
    return rows
