"""Tokens a session used: the one shape every producer writes, and the fold that sums it.

The `usage` event (standalone, or inside the turn whose step produced it):

    {"type": "usage", "model": "claude-sonnet-4-5", "provider": "anthropic",
     "input": 120, "output": 480, "cacheRead": 20000, "cacheWrite": 1500,
     "reasoning": 300, "cost": 0.0123, "message": "msg_01…", "raw": {…}}

- `input`: prompt tokens neither read from nor written to a cache; `cacheRead` and
  `cacheWrite`: the prompt tokens that were; so input + cacheRead + cacheWrite is the whole
  prompt (OpenAI, Codex and Gemini count cached tokens inside their prompt total: subtract
  them). `output`: every generated token, reasoning included; `reasoning`: the part of
  `output` that was reasoning (0 when the vendor does not say). All are integers ≥ 0.
- `model` (required) and `provider` (optional) name what answered; `cost` (optional, USD)
  is what the agent itself reported (pi); `message` (optional) the vendor's reply id
  this record counts; `raw` (optional) the vendor's own record, unchanged.
- One record per reply: a producer that sees a reply's usage several times (Claude Code
  writes one line per content block, each with the message's usage) writes it once.
  A producer that sees running totals (Codex `token_count`) writes the differences.

The vendor mappings (`anthropic_tokens`, `openai_tokens`, …) turn each vendor's record
into these fields; importers and providers both use them. Two other places count as well:
an assistant `message` may carry its usage inline as `usage` in pi's shape (these fields
plus `cost.total`; pi imports keep it so), and logs imported before this event existed
carry Claude Code usage as `plugin/claude/usage`; both count for the model selected
before them. Gemini CLI and OpenCode imports keep each reply's usage as the tool wrote it
(`plugin/gemini/usage`, `plugin/opencode/usage`: `tokens`, `model`, `message`, OpenCode's
`cost`): they count through `gemini_cli_tokens` and `opencode_tokens`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any, Final

from forkwise.core.log.event_log import event_records
from forkwise.core.log.events import MESSAGE, MODEL_SELECT, Event

USAGE: Final = "usage"
#: Claude Code usage as imports before the `usage` event kept it
LEGACY_CLAUDE: Final = "plugin/claude/usage"
#: Gemini CLI's and OpenCode's usage as their imports keep it (the record as the tool wrote
#: it, with the reply's message id and model)
GEMINI_CLI: Final = "plugin/gemini/usage"
OPENCODE: Final = "plugin/opencode/usage"
#: the token fields of a usage record, in the order reports print them
TOKEN_KEYS: Final = ("input", "output", "cacheRead", "cacheWrite", "reasoning")


def _count(value: object) -> int:
    return value if type(value) is int and value > 0 else 0


class Tokens(dict[str, int]):
    """The five token fields as `tokens` made them: a record of this type is known to be
    whole and clean, so `usage_draft` takes it as it is instead of checking it again."""

    __slots__ = ()


def tokens(**counts: object) -> Tokens:
    """The five token fields, each a non-negative int (what is missing or odd is 0). The
    vendor mappings below return what it makes (typed as a plain dict, which callers
    change)."""
    return Tokens({key: _count(counts.get(key)) for key in TOKEN_KEYS})


# --- the vendors' records -------------------------------------------------------------


def anthropic_tokens(raw: Mapping[str, Any]) -> dict[str, int]:
    """Anthropic Messages `usage` (Claude Code's `message.usage` too): input excludes the
    cache, output includes thinking (not reported apart)."""
    return tokens(
        input=raw.get("input_tokens"),
        output=raw.get("output_tokens"),
        cacheRead=raw.get("cache_read_input_tokens"),
        cacheWrite=raw.get("cache_creation_input_tokens"),
    )


def openai_tokens(raw: Mapping[str, Any]) -> dict[str, int]:
    """OpenAI usage, Chat Completions (`prompt_tokens`, `completion_tokens`, `*_details`)
    or Responses (`input_tokens`, `output_tokens`, `*_details`); Codex's `token_count`
    totals have the Responses shape with `cached_input_tokens` and
    `reasoning_output_tokens` beside them. Cached tokens are inside the prompt total."""
    prompt = raw.get("prompt_tokens", raw.get("input_tokens"))
    output = raw.get("completion_tokens", raw.get("output_tokens"))
    details = raw.get("prompt_tokens_details") or raw.get("input_tokens_details") or {}
    out_details = raw.get("completion_tokens_details") or raw.get("output_tokens_details") or {}
    cached = _count(raw.get("cached_input_tokens")) or _count(
        details.get("cached_tokens") if isinstance(details, Mapping) else None
    )
    reasoning = _count(raw.get("reasoning_output_tokens")) or _count(
        out_details.get("reasoning_tokens") if isinstance(out_details, Mapping) else None
    )
    return tokens(
        input=max(_count(prompt) - cached, 0),
        output=output,
        cacheRead=cached,
        reasoning=reasoning,
    )


def gemini_tokens(raw: Mapping[str, Any]) -> dict[str, int]:
    """Gemini `usageMetadata` (or `usage_metadata` as the SDK names it): the thoughts are
    counted apart from the candidates, so output = candidates + thoughts."""

    def get(camel: str, snake: str) -> object:
        return raw.get(camel, raw.get(snake))

    prompt = _count(get("promptTokenCount", "prompt_token_count"))
    cached = _count(get("cachedContentTokenCount", "cached_content_token_count"))
    thoughts = _count(get("thoughtsTokenCount", "thoughts_token_count"))
    candidates = _count(get("candidatesTokenCount", "candidates_token_count"))
    return tokens(
        input=max(prompt - cached, 0),
        output=candidates + thoughts,
        cacheRead=cached,
        reasoning=thoughts,
    )


def gemini_cli_tokens(raw: Mapping[str, Any]) -> dict[str, int]:
    """Gemini CLI's `tokens` of a reply ({input, output, cached, thoughts, tool, total}, the
    API's counts renamed): the prompt includes the cached part, the thoughts are apart
    from the output."""
    prompt, cached = _count(raw.get("input")), _count(raw.get("cached"))
    thoughts = _count(raw.get("thoughts"))
    return tokens(
        input=max(prompt - cached, 0),
        output=_count(raw.get("output")) + thoughts,
        cacheRead=cached,
        reasoning=thoughts,
    )


def opencode_tokens(raw: Mapping[str, Any]) -> dict[str, int]:
    """OpenCode's `tokens` of a message ({input, output, reasoning, cache: {read, write}}):
    input without the cache, reasoning apart from the output."""
    cache = raw.get("cache")
    cache = cache if isinstance(cache, Mapping) else {}
    reasoning = _count(raw.get("reasoning"))
    return tokens(
        input=raw.get("input"),
        output=_count(raw.get("output")) + reasoning,
        cacheRead=cache.get("read"),
        cacheWrite=cache.get("write"),
        reasoning=reasoning,
    )


def pi_tokens(raw: Mapping[str, Any]) -> dict[str, int]:
    """pi's `usage` ({input, output, cacheRead, cacheWrite, totalTokens, cost}): already
    these fields."""
    return tokens(
        input=raw.get("input"),
        output=raw.get("output"),
        cacheRead=raw.get("cacheRead"),
        cacheWrite=raw.get("cacheWrite"),
    )


def pi_cost(raw: Mapping[str, Any]) -> float | None:
    """The cost pi recorded with a usage (`cost.total`, USD), if any."""
    cost = raw.get("cost")
    return _money(cost.get("total") if isinstance(cost, Mapping) else cost)


def _money(value: object) -> float | None:
    """A cost in USD: a non-negative number, else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def usage_draft(
    model: str,
    counts: Mapping[str, int],
    *,
    provider: str | None = None,
    cost: float | None = None,
    message: str | None = None,
    raw: Any = None,
    **extra: Any,
) -> dict[str, Any]:
    """A `usage` event draft (add `turn` to place it in a turn; `extra` is kept as given)."""
    draft: dict[str, Any] = {"type": USAGE, **extra, "model": model}
    if provider is not None:
        draft["provider"] = provider
    # the vendor mappings already made the counts (`Tokens`): only other mappings are checked
    draft.update(counts if type(counts) is Tokens else tokens(**counts))
    if cost is not None:
        draft["cost"] = cost
    if message is not None:
        draft["message"] = message
    if raw is not None:
        draft["raw"] = raw
    return draft


# --- the fold -------------------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    """Tokens summed, with the cost an agent itself reported for them (pi) where known."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0
    reported_cost: float = 0.0
    reported: bool = False

    def add(self, fields: Mapping[str, Any]) -> None:
        self.input += _count(fields.get("input"))
        self.output += _count(fields.get("output"))
        self.cache_read += _count(fields.get("cacheRead"))
        self.cache_write += _count(fields.get("cacheWrite"))
        self.reasoning += _count(fields.get("reasoning"))
        cost = _money(fields.get("cost"))
        if cost is not None:
            self.reported_cost += cost
            self.reported = True

    def merge(self, other: Tally) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.reasoning += other.reasoning
        self.reported_cost += other.reported_cost
        self.reported = self.reported or other.reported

    @property
    def empty(self) -> bool:
        return not (self.input or self.output or self.cache_read or self.cache_write)

    def to_json(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
            "reasoning": self.reasoning,
        }


#: (model, day "YYYY-MM-DD") → tokens: prices change by date, so they are kept apart
Buckets = dict[tuple[str, str], Tally]


@dataclass(slots=True)
class SessionTokens:
    """A session's usage split at its seed: `shared` (copied from its source, seq ≤
    seedLength) and `own` (after it), each by model and day."""

    shared: Buckets = field(default_factory=dict)
    own: Buckets = field(default_factory=dict)
    #: the replies its records count (`reply_key`), shared and own
    replies: set[str] = field(default_factory=set)


def session_tokens(
    events: Sequence[Event], seed_length: int = 0, counted: Set[str] = frozenset()
) -> SessionTokens:
    """Fold a log's usage records (and the legacy Claude Code ones) into `SessionTokens`.

    `counted`: the replies (`reply_key`) its source's log counts. A branch an import laid
    out from a turn its source went on with starts at the last turn end they share, so
    the replies of that turn before the branch point are in both logs: they are the
    source's, and count as shared here."""
    out = SessionTokens()
    model = ""  # the model a record that names none counts: the one selected before it
    for seq, etype, fields, event in event_records(events, 0, _WANTED):
        if etype == MODEL_SELECT:
            model = str(fields.get("model") or "")
            continue
        if etype == MESSAGE and not isinstance(fields.get("usage"), Mapping):
            continue
        ts = event.ts if event is not None else str(fields.get("ts", ""))
        key = reply_key(etype, fields)
        if key is not None:
            out.replies.add(key)
        shared = seq <= seed_length or (key is not None and key in counted)
        add_record(out.shared if shared else out.own, etype, fields, ts, model)
    return out


def reply_key(etype: str, fields: Mapping[str, Any]) -> str | None:
    """What identifies the reply a usage record counts across the logs of a lineage: the
    vendor's message id, or the message's own id (pi keeps usage on it); None when the
    record names no reply (Codex's totals)."""
    key = fields.get("id") if etype == MESSAGE else fields.get("message")
    return key if type(key) is str and key else None


_WANTED: Final = frozenset({USAGE, LEGACY_CLAUDE, GEMINI_CLI, OPENCODE, MODEL_SELECT, MESSAGE})


def add_record(
    buckets: Buckets, etype: str, fields: Mapping[str, Any], ts: str, selected: str = ""
) -> None:
    """One usage record (either kind) into `buckets`; `selected`: the model a legacy
    record (which names none) counts."""
    if etype == LEGACY_CLAUDE:
        raw = fields.get("usage")
        if not isinstance(raw, Mapping):
            return
        model = selected
        record: Mapping[str, Any] = anthropic_tokens(raw)
    elif etype == MESSAGE:  # pi's usage, kept on its assistant message
        raw = fields.get("usage")
        if not isinstance(raw, Mapping):
            return
        model = selected
        cost = pi_cost(raw)
        record = {**pi_tokens(raw), **({} if cost is None else {"cost": cost})}
    elif etype in (GEMINI_CLI, OPENCODE):
        raw = fields.get("tokens")
        if not isinstance(raw, Mapping):
            return
        model = str(fields.get("model") or selected)
        counted = gemini_cli_tokens(raw) if etype == GEMINI_CLI else opencode_tokens(raw)
        cost = _money(fields.get("cost"))  # OpenCode's own figure, as pi's
        record = {**counted, **({} if cost is None else {"cost": cost})}
    else:
        model = str(fields.get("model") or "")
        record = fields
    key = (model, ts[:10])
    tally = buckets.get(key)
    if tally is None:
        tally = buckets[key] = Tally()
    tally.add(record)


def merged(*parts: Iterable[tuple[tuple[str, str], Tally]]) -> Buckets:
    """Buckets summed key by key."""
    out: Buckets = {}
    for part in parts:
        for key, tally in part:
            into = out.get(key)
            if into is None:
                into = out[key] = Tally()
            into.merge(tally)
    return out


# --- a session's own usage as its summary keeps it -------------------------------------

#: a bucket as a summary keeps it: [model, day, input, output, cacheRead, cacheWrite,
#: reasoning, reported cost or None]; a head row has the reply key in front
Row = list[Any]


class OwnUsage:
    """A session's own usage (after its seed) as the summary index keeps it, so that a
    listing prices it without reading the log.

    `head`: the usage records of a fork's first turn after its seed that name a reply,
    kept apart until checked against its source's replies: an import lays a branch out
    from the last turn end it shares with its source, so that turn's replies before the
    branch point are in both logs and are the source's (`session_tokens`' `counted`).
    `resolved` moves the ones the source does not count into `own`; a summary with a head
    left is priced from the logs instead. Rows are checked when read (`buckets`): an
    index entry is decoded at every listing (10,000 of them at a start), its usage only
    by one that prices it; so the rows are kept as decoded, and the class is a plain one
    (never changed once made): a frozen dataclass cost a listing of 10,000 ~10 ms."""

    __slots__ = ("head", "own")
    __hash__ = None  # type: ignore[assignment]  # rows are lists

    def __init__(self, own: Sequence[Row] = (), head: Sequence[Row] = ()) -> None:
        self.own = own
        self.head = head

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OwnUsage):
            return NotImplemented
        return list(self.own) == list(other.own) and list(self.head) == list(other.head)

    def __repr__(self) -> str:
        return f"OwnUsage(own={list(self.own)!r}, head={list(self.head)!r})"

    def to_index(self) -> list[Row] | dict[str, list[Row]]:
        """The rows of `own` (the head apart, in an object, while there is one)."""
        if self.head:
            return {"own": list(self.own), "head": list(self.head)}
        return list(self.own)

    @classmethod
    def from_index(cls, data: object) -> OwnUsage | None:
        """What an index entry keeps (None: it keeps none, or not of this form)."""
        if type(data) is list:
            return cls(data) if data else EMPTY_USAGE
        if type(data) is not dict:
            return None
        own, head = data.get("own"), data.get("head", [])
        if type(own) is not list or type(head) is not list:
            return None
        return cls(own, head)

    def buckets(self) -> Buckets:
        """The own part by model and day; TypeError when a row is not one."""
        out: Buckets = {}
        for row in self.own:
            _add_row(out, row)
        return out

    def resolved(self, counted: Set[str]) -> OwnUsage:
        """The head checked against the replies its source counts (`counted`): those it
        does not count are this session's own."""
        if not self.head:
            return self
        own = self.buckets()
        for row in self.head:
            if type(row) is not list or not row or type(row[0]) is not str:
                raise TypeError("a usage head row is not [key, model, day, counts…]")
            if row[0] not in counted:
                _add_row(own, row[1:])
        return OwnUsage(bucket_rows(own))


EMPTY_USAGE: Final = OwnUsage()


def bucket_rows(buckets: Buckets) -> list[Row]:
    """`buckets` as the rows an index keeps (`OwnUsage`)."""
    return [
        [model, day, t.input, t.output, t.cache_read, t.cache_write, t.reasoning,
         t.reported_cost if t.reported else None]
        for (model, day), t in buckets.items()
    ]  # fmt: skip


_ROW_TYPES: Final = (str, str, int, int, int, int, int)


def _add_row(buckets: Buckets, row: object) -> None:
    if (
        type(row) is not list
        or len(row) != 8
        or not all(type(v) is t for v, t in zip(row, _ROW_TYPES, strict=False))
        or not (row[7] is None or type(row[7]) in (int, float))
    ):
        raise TypeError("a usage row is not [model, day, counts…, cost]")
    key = (row[0], row[1])
    tally = buckets.get(key)
    if tally is None:
        tally = buckets[key] = Tally()
    tally.input += row[2]
    tally.output += row[3]
    tally.cache_read += row[4]
    tally.cache_write += row[5]
    tally.reasoning += row[6]
    if row[7] is not None:
        tally.reported_cost += row[7]
        tally.reported = True


class UsageFold:
    """A summary's own usage brought up to date one event at a time (`SummaryFold`):
    the records after the seed (`seed`), by the model selected before each; a fork's first
    turn after its seed keeps its keyed records apart (`OwnUsage.head`) while `heading`."""

    __slots__ = ("head", "heading", "own", "seed")

    def __init__(self, usage: OwnUsage, seed: int, heading: bool) -> None:
        self.own = usage.buckets()
        self.head: list[Row] = [list(r) for r in usage.head]
        self.seed = seed
        self.heading = heading

    def add(self, seq: int, etype: str, fields: Mapping[str, Any], ts: str, model: str) -> None:
        """A usage record (or a message, which may carry pi's) at `seq`."""
        if seq <= self.seed:
            return
        if etype == MESSAGE and not isinstance(fields.get("usage"), Mapping):
            return
        key = reply_key(etype, fields) if self.heading else None
        if key is None:
            add_record(self.own, etype, fields, ts, model)
            return
        one: Buckets = {}
        add_record(one, etype, fields, ts, model)
        self.head.extend([key, *row] for row in bucket_rows(one))

    def turn_end(self, seq: int) -> None:
        if seq > self.seed:
            self.heading = False

    def result(self) -> OwnUsage:
        return OwnUsage(bucket_rows(self.own), list(self.head))


#: the event types a usage fold is given besides MESSAGE (which may carry pi's usage)
RECORD_TYPES: Final = frozenset({USAGE, LEGACY_CLAUDE, GEMINI_CLI, OPENCODE})
