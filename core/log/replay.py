"""Replay: one pure function from a log to what the model and the person see.

A forked child is replayed by the same function; its seeded messages carry `origin`
(the source session, message and turn), derived from the child's own header and events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import orjson

from forkwise.core.errors import CorruptLog
from forkwise.core.log.event_log import EventLog, EventView, event_records, gc_paused
from forkwise.core.log.events import (
    APPROVAL_REQUEST,
    APPROVAL_RESOLVE,
    CONTEXT_SUMMARY,
    HISTORY_FORK,
    MESSAGE,
    MODEL_SELECT,
    RESERVED,
    SESSION_TITLE,
    TOOL_RESULT,
    TURN_END,
    TURN_START,
    Event,
)
from forkwise.core.log.views import PrefixView


@dataclass(frozen=True, slots=True)
class MessageView:
    """A top-level message as the UI lists it."""

    id: str
    role: str
    seq: int
    turn: str
    text: str
    parts: tuple[Mapping[str, Any], ...]
    origin: Mapping[str, str] | None = None

    @property
    def tool_calls(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(p for p in self.parts if p.get("type") == "tool_call")

    @property
    def reasoning(self) -> str:
        return "".join(str(p.get("text", "")) for p in self.parts if p.get("type") == "reasoning")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "role": self.role,
            "seq": self.seq,
            "turn": self.turn,
            "text": self.text,
            "parts": [dict(p) for p in self.parts],
        }
        if self.origin is not None:
            out["origin"] = dict(self.origin)
        return out


@dataclass(frozen=True, slots=True)
class Replay:
    #: the UI's message list, each view built when first read (`MessageList`)
    messages: Sequence[MessageView]
    transcript: tuple[dict[str, Any], ...]
    title: str | None = None
    model: Mapping[str, Any] | None = None
    open_turn: str | None = None
    pending_approvals: tuple[Event, ...] = ()
    forked_from: Mapping[str, Any] | None = None
    turn_status: Mapping[str, str] = field(default_factory=dict)


#: images an import keeps beside the prompt they came with (Claude Code, pi, Codex)
IMAGE_EVENTS = frozenset({"plugin/claude/image", "plugin/pi/image", "plugin/codex/image"})
#: Codex's encrypted reasoning as its import keeps it: beside the reasoning message it
#: came with (`id`, `encrypted_content`), or alone when it had no summary (`payload`, the
#: item as Codex wrote it)
CODEX_ENCRYPTED = "plugin/codex/encrypted_reasoning"
CODEX_REASONING = "plugin/codex/reasoning"
#: the event types the fold reads; the others are passed over (decoded only when their
#: type is not known yet: see `catch_up`)
FOLDED = frozenset(
    {
        CODEX_ENCRYPTED,
        CODEX_REASONING,
        MESSAGE,
        TOOL_RESULT,
        TURN_START,
        TURN_END,
        APPROVAL_REQUEST,
        APPROVAL_RESOLVE,
        MODEL_SELECT,
        SESSION_TITLE,
        HISTORY_FORK,
        CONTEXT_SUMMARY,
        *IMAGE_EVENTS,
    }
)


def replay(
    events: Sequence[Event], parent_session: str | None = None, seed_length: int = 0
) -> Replay:
    """Derive the provider transcript and the UI message list from a log."""
    return Replayer(parent_session, seed_length).feed(events).result()


class Replayer:
    """The replay fold, kept open: `feed` new events as they are appended, read `result`.

    `replay()` is this fold run once over a whole log; a live session keeps one Replayer and
    feeds it only what was appended, so a step costs what is new, not the whole history.
    """

    def __init__(self, parent_session: str | None = None, seed_length: int = 0) -> None:
        self.parent_session = parent_session
        self.seed_length = seed_length
        self.last_seq = 0
        #: each message's seq and fields; its MessageView is built when read. The fields
        #: are None for a message a checkpoint covers or whose line the fold decoded (a
        #: lazily decoded log): its line is decoded from `_source`, the log, when its view
        #: is read
        self._message_seqs: list[int] = []
        self._message_fields: list[Mapping[str, Any] | None] = []
        self._source: Sequence[Event] = ()
        self.message_ids: set[str] = set()
        self._transcript: list[dict[str, Any]] = []
        self._transcript_seqs: list[int] = []
        self._title: str | None = None
        self._model: Mapping[str, Any] | None = None
        self._open_turn: str | None = None
        self._pending: dict[str, Event] = {}
        self._forked_from: Mapping[str, Any] | None = None
        self._turn_status: dict[str, str] = {}
        self._answered_calls: set[str] = set()
        self._turn_calls: list[tuple[str, int]] = []
        #: OpenAI's encrypted reasoning waiting for the reply it preceded (`_held_reasoning`)
        self._reasoning: list[dict[str, Any]] = []
        #: the parts of the last message folded: encrypted reasoning reads its summary there
        self._last: Sequence[Any] = ()

    def _say(self, entry: dict[str, Any], seq: int) -> None:
        self._transcript.append(entry)
        self._transcript_seqs.append(seq)

    def feed(self, events: Iterable[Event]) -> Replayer:
        """Fold `events` (which follow what was fed before). A lazily decoded log is read
        through `catch_up`, never building its events."""
        if isinstance(events, EventLog | EventView):
            return self.catch_up(events)
        for event in events:
            self._fold(event.seq, event.type, event.fields, event)
            self.last_seq = event.seq
        return self

    def catch_up(self, events: Sequence[Event]) -> Replayer:
        """Fold the events of `events` after the last one fed (event i has seq i + 1). The
        lines of a lazily decoded log are decoded here and dropped, not kept as events (a
        line whose type is known and not folded is skipped undecoded). A message
        decoded here keeps only its seq: its view decodes its line again when it is read
        (`_message_row`), so a replay keeps its transcript, not every decoded line."""
        start = self.last_seq
        if start >= len(events):
            return self
        with gc_paused():
            # most lines are of a folded type: decoding each beats skimming its lead
            self._fold_records(event_records(events, start, FOLDED, skim=False), events)
        self.last_seq = len(events)
        return self

    def _fold_records(
        self,
        records: Iterable[tuple[int, str, Mapping[str, Any], Event | None]],
        source: Sequence[Event],
    ) -> None:
        """The fold's loop: messages and tool results (most of a long log's folded lines)
        are folded here with the containers bound once; the other types go to `_fold`."""
        fold = self._fold
        seqs, kept = self._message_seqs.append, self._message_fields.append
        ids = self.message_ids.add
        say, said = self._transcript.append, self._transcript_seqs.append
        answered = self._answered_calls.add
        lazy = False
        for seq, etype, fields, event in records:
            if etype == MESSAGE:
                seqs(seq)
                if event is None:
                    kept(None)  # read again from `source` when its view is wanted
                    lazy = True
                else:
                    kept(fields)
                ids(fields["id"])
                parts = fields["parts"]
                text, calls = _text_and_calls(parts)
                if calls:
                    entry = {
                        "role": fields["role"],
                        "content": text,
                        "tool_calls": [_provider_call(c) for c in calls],
                    }
                    self._turn_calls.extend((str(c.get("id")), seq) for c in calls)
                else:
                    entry = {"role": fields["role"], "content": text}
                if len(parts) > 1 and _signed(parts):
                    entry["parts"] = parts
                if self._reasoning and fields["role"] == "assistant":
                    self._held_reasoning(entry, parts)
                self._last = parts
                say(entry)
                said(seq)
            elif etype == TOOL_RESULT:
                call = fields["call"]
                answered(call)
                say(_tool_entry(call, fields))
                said(seq)
            else:
                fold(seq, etype, fields, event)
                if etype == CONTEXT_SUMMARY:  # it replaces the transcript's lists
                    say, said = self._transcript.append, self._transcript_seqs.append
        if lazy:
            self._source = source

    def _fold(self, seq: int, etype: str, fields: Mapping[str, Any], event: Event | None) -> None:
        """One event into the replay; `fields` is its payload or its whole decoded line
        (the fold reads no reserved key), `event` the event when one is at hand."""
        if etype == MESSAGE:
            self._message_seqs.append(seq)
            self._message_fields.append(fields)
            self.message_ids.add(fields["id"])
            parts = fields["parts"]
            text, calls = _text_and_calls(parts)
            entry: dict[str, Any] = {"role": fields["role"], "content": text}
            if calls:
                entry["tool_calls"] = [_provider_call(c) for c in calls]
                self._turn_calls.extend((str(c.get("id")), seq) for c in calls)
            if len(parts) > 1 and _signed(parts):
                entry["parts"] = parts
            if self._reasoning and fields["role"] == "assistant":
                self._held_reasoning(entry, parts)
            self._last = parts
            self._transcript.append(entry)
            self._transcript_seqs.append(seq)
        elif etype in (CODEX_ENCRYPTED, CODEX_REASONING):
            self._codex_reasoning(etype, fields)
        elif etype == TOOL_RESULT:
            self._answered_calls.add(fields["call"])
            self._say(_tool_entry(fields["call"], fields), seq)
        elif etype in IMAGE_EVENTS:
            # a prompt's image (imports keep it beside the message): it goes with the prompt
            block = fields.get("block")
            last = self._transcript[-1] if self._transcript else None
            if isinstance(block, dict) and last is not None and last.get("role") == "user":
                last.setdefault("images", []).append(block)
        elif etype == TURN_START:
            self._open_turn = fields["turn"]
            self._turn_status[fields["turn"]] = "running"
            self._turn_calls.clear()
        elif etype == TURN_END:
            # A tool call that never got a result gets an explicit placeholder, so the
            # provider transcript stays well-formed after a cancelled or interrupted turn.
            for call_id, call_seq in self._turn_calls:
                if call_id not in self._answered_calls:
                    self._say(
                        {
                            "role": "tool",
                            "tool_call_id": call_id,
                            "content": "(no result: the turn ended first)",
                        },
                        call_seq,
                    )
            self._turn_calls.clear()
            self._reasoning.clear()  # reasoning no reply followed: nothing to go back with
            self._turn_status[fields["turn"]] = fields["status"]
            self._open_turn = None
            self._pending.clear()
        elif etype == APPROVAL_REQUEST:
            self._pending[fields["approval"]] = event if event is not None else _event_of(fields)
        elif etype == APPROVAL_RESOLVE:
            self._pending.pop(fields["approval"], None)
        elif etype == MODEL_SELECT:
            self._model = event.fields if event is not None else _payload(fields)
        elif etype == SESSION_TITLE:
            self._title = fields["title"]
        elif etype == HISTORY_FORK:
            self._forked_from = event.fields if event is not None else _payload(fields)
        elif etype == CONTEXT_SUMMARY:
            through = fields.get("through")
            if type(through) is int:
                # the summary stands in for everything it covers
                kept = [
                    (m, q)
                    for m, q in zip(self._transcript, self._transcript_seqs, strict=True)
                    if q > through
                ]
                summary = {"role": "system", "content": str(fields.get("text", ""))}
                self._transcript = [summary, *(m for m, _ in kept)]
                self._transcript_seqs = [0, *(q for _, q in kept)]

    def _codex_reasoning(self, etype: str, fields: Mapping[str, Any]) -> None:
        """Hold Codex's encrypted reasoning for the reply that follows it: OpenAI wants it
        back, before that reply, when the conversation goes on (`openai_wire`)."""
        if etype == CODEX_ENCRYPTED:
            # written right after the reasoning message it came with (the summary)
            encrypted, summary = fields.get("encrypted_content"), ""
            said = [p for p in self._last if type(p) is dict]
            if said and all(p.get("type") == "reasoning" for p in said):
                summary = "".join(str(p.get("text", "")) for p in said)
        else:
            item = fields.get("payload")
            if type(item) is not dict:
                return
            encrypted = item.get("encrypted_content")
            summary = "\n\n".join(str(p.get("text", "")) for p in item.get("summary") or ()
                                   if type(p) is dict)
        if type(encrypted) is str and encrypted:
            self._reasoning.append(
                {"type": "reasoning", "text": summary, "encrypted": encrypted, "vendor": "openai"}
            )

    def _held_reasoning(self, entry: dict[str, Any], parts: Sequence[Any]) -> None:
        """The held reasoning goes first among the parts of the reply it preceded."""
        entry["parts"] = [*self._reasoning, *entry.get("parts", parts)]
        self._reasoning = []

    @property
    def model(self) -> Mapping[str, Any] | None:
        """The fields of the latest model/select folded so far (`result().model`), without
        building the whole result: the transcript's copy grows with the session."""
        return self._model

    @property
    def messages(self) -> MessageList:
        """The messages folded so far, as the UI lists them."""
        return MessageList(self, len(self._message_seqs))

    def checkpoint(self) -> dict[str, Any] | None:
        """The fold's state as JSON, to `restore` it later without folding the log again;
        None while a turn is open (a checkpoint stands between turns)."""
        if self._open_turn is not None or self._pending or self._turn_calls or self._reasoning:
            return None
        return {
            "lastSeq": self.last_seq,
            "parentSession": self.parent_session,
            "seedLength": self.seed_length,
            "messageSeqs": self._message_seqs,
            "messageIds": list(self.message_ids),
            "transcript": self._transcript,
            "transcriptSeqs": self._transcript_seqs,
            "title": self._title,
            "model": None if self._model is None else dict(self._model),
            "forkedFrom": None if self._forked_from is None else dict(self._forked_from),
            "turnStatus": self._turn_status,
            "answeredCalls": list(self._answered_calls),
        }

    @classmethod
    def restore(cls, state: Mapping[str, Any], events: Sequence[Event]) -> Replayer:
        """The fold as `checkpoint` left it, over `events`, a log whose first
        `state["lastSeq"]` events are those the checkpoint was made of (the caller checks
        that: see store/replay_cache.py); feed it what follows with `catch_up`."""
        out = cls(state["parentSession"], state["seedLength"])
        out.last_seq = state["lastSeq"]
        out._message_seqs = state["messageSeqs"]
        out._message_fields = [None] * len(out._message_seqs)
        out._source = events
        out.message_ids = set(state["messageIds"])
        out._transcript = state["transcript"]
        out._transcript_seqs = state["transcriptSeqs"]
        out._title = state["title"]
        out._model = None if state["model"] is None else MappingProxyType(state["model"])
        forked = state["forkedFrom"]
        out._forked_from = None if forked is None else MappingProxyType(forked)
        out._turn_status = state["turnStatus"]
        out._answered_calls = set(state["answeredCalls"])
        return out

    def _message_row(self, i: int) -> tuple[int, Mapping[str, Any]]:
        seq, fields = self._message_seqs[i], self._message_fields[i]
        if fields is None:  # restored from a checkpoint, or folded from a line: read it
            # not kept here (its view is): decoded lines kept for every message of a long
            # log are walked again by each pass of the cyclic collector
            fields = _fields_at(self._source, seq - 1)
        return seq, fields

    def _origin(self, seq: int, fields: Mapping[str, Any]) -> dict[str, str] | None:
        """A seeded message's origin: the source session, message and turn it was copied
        from (a fork's first seedLength events)."""
        if self.parent_session is None or seq > self.seed_length:
            return None
        return {
            "session_id": self.parent_session,
            "message_id": fields["id"],
            "turn_id": fields["turn"],
        }

    def result(self) -> Replay:
        return Replay(
            messages=self.messages,
            transcript=tuple(self._transcript),
            title=self._title,
            model=self._model,
            open_turn=self._open_turn,
            pending_approvals=tuple(self._pending.values()),
            forked_from=self._forked_from,
            turn_status=dict(self._turn_status),
        )


def _signed(parts: Sequence[Any]) -> bool:
    """Whether a message has parts a vendor wants back as they were: reasoning it signed
    (Anthropic thinking: `signature`, or `redacted` data; OpenAI's `encrypted`) or an
    image."""
    for p in parts:
        if type(p) is dict:
            kind = p.get("type")
            if kind == "image" or (
                kind == "reasoning" and ("signature" in p or "redacted" in p or "encrypted" in p)
            ):
                return True
    return False


def _tool_entry(call: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A tool result as the transcript holds it; output that is a list of blocks (text
    and images) keeps them as `blocks`, a failed call says `isError`."""
    output = fields.get("output")
    entry: dict[str, Any] = {
        "role": "tool",
        "tool_call_id": call,
        "content": output if type(output) is str else _as_text(output),
    }
    if type(output) is list:
        entry["blocks"] = output
    if fields.get("isError") or fields.get("error") is True:
        entry["isError"] = True
    return entry


def _provider_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """A tool_call part as a chat message's tool call."""
    return {
        "id": call.get("id"),
        "type": "function",
        "function": {"name": call.get("name"), "arguments": _as_text(call.get("args", {}))},
    }


def _text_and_calls(parts: Sequence[Any]) -> tuple[str, Sequence[Mapping[str, Any]]]:
    """A message's visible text (its text parts joined, as `message_text` reads them) and
    its tool_call parts; what is not an object among `parts` is passed over."""
    if len(parts) == 1:  # most messages: one text part
        p = parts[0]
        if type(p) is dict:
            kind = p.get("type")
            if kind == "text":
                text = p.get("text", "")
                return text if type(text) is str else str(text), ()
            return "", (p,) if kind == "tool_call" else ()
    texts: list[str] = []
    calls: list[Mapping[str, Any]] = []
    for p in parts:
        if type(p) is dict or isinstance(p, Mapping):
            kind = p.get("type")
            if kind == "text":
                texts.append(str(p.get("text", "")))
            elif kind == "tool_call":
                calls.append(p)
    return "".join(texts), calls


class MessageList(PrefixView[MessageView]):
    """The first n folded messages, each MessageView built the first time it is read: a
    caller that wants the model's transcript of a long session (the agent, `context`)
    never pays for the views."""

    __slots__ = ("_made", "_replayer")

    def __init__(self, replayer: Replayer, n: int) -> None:
        super().__init__(n)
        self._replayer = replayer  # its messages are only appended to: the first n stay
        self._made: dict[int, MessageView] = {}

    def __repr__(self) -> str:
        return f"MessageList({self._n} messages)"

    def _item(self, i: int) -> MessageView:
        view = self._made.get(i)
        if view is None:
            seq, fields = self._replayer._message_row(i)
            listed = fields["parts"]
            # decoded parts are dicts: the abstract Mapping check only for the rest
            parts = tuple(p for p in listed if type(p) is dict or isinstance(p, Mapping))
            view = MessageView(
                id=fields["id"],
                role=fields["role"],
                seq=seq,
                turn=fields["turn"],
                text=_text_and_calls(parts)[0],
                parts=parts,
                origin=self._replayer._origin(seq, fields),
            )
            self._made[i] = view
        return view


def _fields_at(events: Sequence[Event], i: int) -> Mapping[str, Any]:
    """The fields of message i of `events`: of a lazily decoded log, its line decoded (the
    whole line: a view reads no reserved key), not built and kept as an event — a view of
    every message of a long log costs a decode each, not an event each."""
    if isinstance(events, EventLog | EventView):
        try:
            fields: Mapping[str, Any] = orjson.loads(events.line(i))
        except orjson.JSONDecodeError as exc:  # validated at load
            raise CorruptLog(f"event {i + 1} no longer decodes: {exc}") from exc
        return fields
    return events[i].fields


def _payload(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The payload of a decoded line (its fields but the reserved ones), read-only."""
    return MappingProxyType({k: v for k, v in record.items() if k not in RESERVED})


def _event_of(record: Mapping[str, Any]) -> Event:
    """The event of a decoded line, for what the replay hands out as events."""
    return Event.from_decoded(dict(record))


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()
