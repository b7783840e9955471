"""What the transcript shows, derived from events (Qt-free, so it is tested on its own).

One entry per shown event, in log order: user and assistant messages, collapsed reasoning,
tool calls (their results and approvals fold into them or follow them), turn ends, the
fork record, model choices. `TranscriptBuilder.feed` says which entries are new and which
earlier ones changed, so the Qt model emits row-level signals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from forkwise.core.log import costs
from forkwise.core.log.prompts import names_question
from forkwise.core.log.turns import written_by_agent
from forkwise.core.log.usage import GEMINI_CLI, LEGACY_CLAUDE, OPENCODE, USAGE, Buckets, add_record
from forkwise.core.reading.entry_fields import EntryFields

from .images import IMAGE_EVENTS, Image, image_of

Json = dict[str, Any]
#: the events that count a turn's tokens (and messages with pi's usage on them)
USAGE_RECORDS = frozenset({USAGE, LEGACY_CLAUDE, GEMINI_CLI, OPENCODE})

USER, ASSISTANT, REASONING, TOOL, APPROVAL = "user", "assistant", "reasoning", "tool", "approval"
TURN_END, FORK, MODEL = "turn", "fork", "model"
TITLE, SUMMARY, STREAM = "title", "summary", "stream"

MESSAGE_KINDS = frozenset({USER, ASSISTANT, REASONING, TOOL})


def result_failed(result: Mapping[str, Any]) -> bool:
    """Whether a `tool/result` event reports a failed call: the runtime says `isError`,
    the importers (Claude Code, Codex, pi) write `error: true`. The one rule the
    transcript, Compare and the exports share."""
    return bool(result.get("isError") or result.get("error") is True)


@dataclass
class Entry(EntryFields):
    kind: str
    seq: int  # the event that created this entry (-1 for the streaming row)
    turn: str | None = None
    text: str = ""
    ts: str = ""
    message_id: str | None = None  # the top-level message this entry belongs to
    message_seq: int | None = None
    opens_turn: bool = False  # the message is the first message of its turn
    origin: Mapping[str, Any] | None = None
    data: Json = field(default_factory=dict)  # kind-specific: tool call, approval, fork …
    expanded: bool = False
    #: what the log keeps beside it: a prompt's pasted images, a tool result's images
    images: list[Image] = field(default_factory=list)


@dataclass
class TurnInfo:
    start_seq: int
    status: str = "running"  # or the turn/end status
    first_message: str | None = None
    pending_approvals: int = 0
    #: its events came from an agent's own file (they carry `src`): the agent writes the
    #: turn, not Forkwise
    agent: bool = False


class TranscriptBuilder:
    """Folds events into entries; `truncate` rebuilds from the kept events."""

    def __init__(self, parent_session: str | None = None, seed_length: int = 0) -> None:
        self.parent_session = parent_session
        self.seed_length = seed_length
        self.entries: list[Entry] = []
        self.turns: dict[str, TurnInfo] = {}
        self.open_turn: str | None = None
        self.last_seq = 0
        self._calls: dict[str, int] = {}  # tool call id → entry index
        self._said: dict[str, int] = {}  # message id → its user or assistant entry index
        self._last_said: int | None = None  # the last user or assistant entry
        self._approvals: dict[str, int] = {}  # approval id → entry index
        self._model: str | None = None  # the model last shown (only changes are shown)
        self._first_question: str | None = None  # the first user message's text
        self._selected = ""  # the model last selected (a record that names none counts it)
        self._spent: dict[str, Buckets] = {}  # turn → its usage records, by model and day
        self._ends: dict[str, int] = {}  # turn → its TURN_END entry

    def feed(self, events: Iterable[Json]) -> tuple[int, set[int]]:
        """Fold `events` in; returns (first new entry index, indexes of changed entries)."""
        first_new = len(self.entries)
        changed: set[int] = set()
        batch = events if isinstance(events, list) else list(events)
        for n, event in enumerate(batch):
            seq = event.get("seq")
            if not isinstance(seq, int) or seq <= self.last_seq:
                continue  # already seen (a page and a notification overlapped)
            self.last_seq = seq
            if event.get("type") == "session/title" and self._says_nothing(event, batch, n):
                continue
            self._one(event, changed)
        return first_new, {i for i in changed if i < first_new}

    def _says_nothing(self, ev: Json, batch: list[Json], n: int) -> bool:
        """Whether a title is the first question shortened, as importers title a session
        (Claude Code writes no title until it is renamed): a row that repeats the question
        beside it. The question comes after such a title: it is looked for in the batch."""
        question = self._first_question
        if question is None:
            question = next((_text_of(e) for e in batch[n + 1:]
                             if e.get("type") == "message" and e.get("role") == USER), None)
        return question is not None and names_question(str(ev.get("title", "")), question)

    def _add(self, entry: Entry) -> int:
        self.entries.append(entry)
        return len(self.entries) - 1

    def _one(self, ev: Json, changed: set[int]) -> None:
        etype, seq, ts = ev.get("type"), ev["seq"], str(ev.get("ts", ""))
        turn = ev.get("turn")
        if turn is not None and str(turn) in self.turns and written_by_agent(ev):
            self.turns[str(turn)].agent = True
        if etype == "turn/start":
            self.turns[str(turn)] = TurnInfo(seq)
            self.open_turn = str(turn)
        elif etype == "turn/end":
            info = self.turns.setdefault(str(turn), TurnInfo(seq))
            info.status = str(ev.get("status", "completed"))
            info.pending_approvals = 0
            self.open_turn = None
            for i in self._approvals.values():
                entry = self.entries[i]
                if entry.turn == turn and entry.data.get("decision") is None:
                    entry.data["decision"] = "expired"
                    changed.add(i)
            # why a turn failed (e.g. no provider for the session's model) is shown with it
            why = {"error": str(ev["error"])} if ev.get("error") else {}
            self._ends[str(turn)] = self._add(Entry(TURN_END, seq, turn, info.status, ts,
                                                    data=why))
            self._priced(str(turn))
        elif etype in USAGE_RECORDS:
            self._spend(ev, changed)
        elif etype == "message":
            self._message(ev, seq, ts, turn)
        elif etype == "tool/result":
            index = self._calls.get(str(ev.get("call")))
            if index is not None:
                self.entries[index].data["result"] = ev.get("output")
                self.entries[index].data["is_error"] = result_failed(ev)
                # what the agent recorded beside the output (Claude Code's structuredPatch,
                # pi's details): the tool cards read it
                detail = ev.get("detail", ev.get("details"))
                if detail is not None:
                    self.entries[index].data["detail"] = detail
                changed.add(index)
        elif etype == "approval/request":
            pending = self.turns.get(str(turn))
            if pending is not None:
                pending.pending_approvals += 1
            owner = self._calls.get(str(ev.get("call")))
            owner_entry = self.entries[owner] if owner is not None else None
            data = {
                "approval": ev.get("approval"),
                "call": ev.get("call"),
                "tool": ev.get("tool"),
                "args": ev.get("args", owner_entry.data.get("args") if owner_entry else None),
                "decision": None,
            }
            entry = Entry(APPROVAL, seq, turn, "", ts, data=data)
            if owner_entry is not None:
                entry.message_id = owner_entry.message_id
                entry.message_seq = owner_entry.message_seq
            self._approvals[str(ev.get("approval"))] = self._add(entry)
        elif etype == "approval/resolve":
            index = self._approvals.get(str(ev.get("approval")))
            answered = self.turns.get(str(turn))
            if answered is not None and answered.pending_approvals:
                answered.pending_approvals -= 1
            if index is not None:
                self.entries[index].data["decision"] = ev.get("decision")
                changed.add(index)
        elif etype == "history/fork":
            data = {k: v for k, v in ev.items() if k not in ("seq", "type", "ts")}
            self._add(Entry(FORK, seq, None, "", ts, data=data))
        elif etype == "model/select":
            self._selected = str(ev.get("model") or "")
            data = {k: v for k, v in ev.items() if k not in ("seq", "type", "ts")}
            text = str(ev.get("label") or f"{ev.get('model')} ({ev.get('provider')})")
            if text != self._model:  # a child repeats its source's model after the fork
                self._add(Entry(MODEL, seq, None, text, ts, data=data))
            self._model = text
        elif etype in IMAGE_EVENTS:
            self._image(ev, changed)
        elif etype == "session/title":
            if ev.get("title"):  # an empty one took a title away: nothing to read
                self._add(Entry(TITLE, seq, None, str(ev["title"]), ts))
        elif etype == "context/summary":
            self._add(Entry(SUMMARY, seq, None, str(ev.get("text", "")), ts))

    def _spend(self, ev: Json, changed: set[int]) -> None:
        """A usage record (or a message carrying pi's) counts for its turn; a turn already
        ended has its footer priced again."""
        turn = ev.get("turn")
        if turn is None:
            return
        add_record(self._spent.setdefault(str(turn), {}), str(ev.get("type")), ev,
                   str(ev.get("ts", "")), self._selected)
        end = self._ends.get(str(turn))
        if end is not None:
            self._priced(str(turn))
            changed.add(end)

    def _priced(self, turn: str) -> None:
        """The turn's tokens and cost on its TURN_END entry (`data["usage"]`, a usage part),
        priced by model and day as the session's total is."""
        spent, end = self._spent.get(turn), self._ends.get(turn)
        if spent and end is not None:
            self.entries[end].data["usage"] = costs.part(spent)

    def _image(self, ev: Json, changed: set[int]) -> None:
        """An image event follows what it belongs to: a tool result's (it names the call),
        else the message it names (pi), else the last message (a prompt's pasted image)."""
        found = image_of(ev)
        if found is None:
            return
        message = ev.get("message")
        index = (self._calls.get(found.call) if found.call else
                 self._said.get(str(message)) if message is not None else None)
        if index is None:
            index = self._last_said
        if index is not None:
            self.entries[index].images.append(found)
            changed.add(index)

    def _message(self, ev: Json, seq: int, ts: str, turn: str | None) -> None:
        if ev.get("role") == ASSISTANT and isinstance(ev.get("usage"), Mapping):
            self._spend(ev, set())  # pi keeps a reply's usage on the message
        mid, role = str(ev.get("id")), str(ev.get("role"))
        info = self.turns.get(turn) if turn is not None else None
        opens = info is not None and info.first_message is None
        origin: Mapping[str, Any] | None = None
        if info is not None and info.first_message is None:
            info.first_message = mid
        if self.parent_session is not None and seq <= self.seed_length:
            origin = {"session_id": self.parent_session, "message_id": mid, "turn_id": turn}
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[Mapping[str, Any]] = []
        for part in ev.get("parts") or ():  # one pass (a dict is looked at without the ABC)
            if type(part) is not dict and not isinstance(part, Mapping):
                continue
            kind = part.get("type")
            if kind == "text":
                texts.append(str(part.get("text", "")))
            elif kind == "reasoning":
                thoughts.append(str(part.get("text", "")))
            elif kind == "tool_call":
                calls.append(part)
        text = "".join(texts)
        if role == USER and self._first_question is None:
            self._first_question = text
        reasoning = "".join(thoughts)

        def make(kind: str, body: str, data: Json | None = None) -> int:
            return self._add(Entry(kind, seq, turn, body, ts, mid, seq, opens, origin,
                                   data if data is not None else {}))

        if reasoning:
            make(REASONING, reasoning)
        # an answer that only reasoned or only called tools shows those, not an empty bubble
        if text or role == USER or not (calls or reasoning):
            self._said[mid] = self._last_said = make(USER if role == USER else ASSISTANT, text)
        for part in calls:
            data = {"call": part.get("id"), "name": part.get("name"),
                    "args": part.get("args", {}), "result": None}
            self._calls[str(part.get("id"))] = make(TOOL, str(part.get("name", "")), data)

    def turn_of(self, entry: Entry) -> TurnInfo | None:
        return self.turns.get(entry.turn) if entry.turn is not None else None


def _text_of(ev: Json) -> str:
    parts = [p for p in ev.get("parts") or () if isinstance(p, Mapping)]
    return "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")


def build(events: Iterable[Json], parent_session: str | None = None,
          seed_length: int = 0) -> TranscriptBuilder:
    builder = TranscriptBuilder(parent_session, seed_length)
    builder.feed(events)
    return builder
