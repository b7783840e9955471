"""Each assistant turn carries its own tokens and cost: the usage records of that turn,
priced by model and day from the price table, on the turn's end entry (the transcript's
footer) and in the HTML export."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from genai_prices import calc_price
from genai_prices.types import Usage

from forkwise.core.reading.document import Document, to_html
from forkwise.core.reading.entries import TURN_END, build

DAY = "2026-11-20"


def ev(seq: int, etype: str, **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "type": etype, "ts": f"{DAY}T10:00:{seq:02d}Z", **fields}


def said(seq: int, turn: str, role: str, text: str, **extra: Any) -> dict[str, Any]:
    return ev(seq, "message", turn=turn, id=f"m{seq}", role=role,
              parts=[{"type": "text", "text": text}], **extra)


def independent_price(model: str, fresh: int, out: int, read: int, write: int) -> float:
    """What the price library itself says for one request of these tokens."""
    usage = Usage(input_tokens=fresh + read + write, output_tokens=out,
                  cache_read_tokens=read, cache_write_tokens=write)
    when = datetime.fromisoformat(DAY).replace(tzinfo=UTC)
    return float(calc_price(usage, model, genai_request_timestamp=when).total_price)


def events() -> list[dict[str, Any]]:
    return [
        ev(1, "model/select", provider="anthropic", model="claude-sonnet-4-5"),
        ev(2, "turn/start", turn="t1"),
        said(3, "t1", "user", "Explain the bug."),
        said(4, "t1", "assistant", "It is an off-by-one."),
        ev(5, "usage", turn="t1", model="claude-sonnet-4-5", input=1200, output=480,
           cacheRead=20000, cacheWrite=1500, reasoning=0, message="msg_1"),
        ev(6, "turn/end", turn="t1", status="completed"),
        ev(7, "turn/start", turn="t2"),
        said(8, "t2", "user", "And the fix?"),
        said(9, "t2", "assistant", "Use < instead of <=."),
        ev(10, "turn/end", turn="t2", status="completed"),
        # a record written after its turn ended (Codex's token_count comes late)
        ev(11, "usage", turn="t2", model="claude-sonnet-4-5", input=300, output=90,
           cacheRead=21000, cacheWrite=0, reasoning=0, message="msg_2"),
        ev(12, "turn/start", turn="t3"),
        said(13, "t3", "user", "Thanks"),
        said(14, "t3", "assistant", "You are welcome."),
        ev(15, "turn/end", turn="t3", status="completed"),  # no usage: the offline model
    ]


def test_each_turn_end_carries_its_own_tokens_and_the_price_tables_cost() -> None:
    builder = build(events())
    ends = [e for e in builder.entries if e.kind == TURN_END]
    assert [e.turn for e in ends] == ["t1", "t2", "t3"]
    first, second, third = (e.data.get("usage") for e in ends)
    assert first is not None
    assert second is not None
    assert {k: first[k] for k in ("input", "output", "cacheRead", "cacheWrite")} == {
        "input": 1200, "output": 480, "cacheRead": 20000, "cacheWrite": 1500}
    assert first["cost"] == pytest.approx(
        independent_price("claude-sonnet-4-5", 1200, 480, 20000, 1500), rel=1e-6)
    assert (second["input"], second["output"], second["cacheRead"]) == (300, 90, 21000)
    assert second["cost"] == pytest.approx(
        independent_price("claude-sonnet-4-5", 300, 90, 21000, 0), rel=1e-6)
    assert third is None


def test_a_late_record_marks_its_ended_turn_changed() -> None:
    all_events = events()
    builder = build(all_events[:10])
    end = next(i for i, e in enumerate(builder.entries) if e.kind == TURN_END and e.turn == "t2")
    assert "usage" not in builder.entries[end].data
    _, changed = builder.feed(all_events[10:11])
    assert end in changed
    assert builder.entries[end].data["usage"]["output"] == 90


def test_a_model_without_a_price_shows_tokens_and_no_price() -> None:
    builder = build([
        ev(1, "turn/start", turn="t1"),
        said(2, "t1", "user", "hi"),
        ev(3, "usage", turn="t1", model="house-model-7", input=10, output=5),
        ev(4, "turn/end", turn="t1", status="completed"),
    ])
    (end,) = [e for e in builder.entries if e.kind == TURN_END]
    assert end.data["usage"]["cost"] is None
    assert (end.data["usage"]["input"], end.data["usage"]["output"]) == (10, 5)


def test_pi_usage_on_its_reply_counts_with_its_own_cost() -> None:
    builder = build([
        ev(1, "model/select", provider="pi", model="unpriced-router-model"),
        ev(2, "turn/start", turn="t1"),
        said(3, "t1", "user", "hi"),
        said(4, "t1", "assistant", "hello", usage={
            "input": 40, "output": 12, "cacheRead": 0, "cacheWrite": 0,
            "cost": {"total": 0.0042}}),
        ev(5, "turn/end", turn="t1", status="completed"),
    ])
    (end,) = [e for e in builder.entries if e.kind == TURN_END]
    assert (end.data["usage"]["input"], end.data["usage"]["output"]) == (40, 12)
    assert end.data["usage"]["cost"] == pytest.approx(0.0042)


def test_the_html_export_shows_each_turns_cost() -> None:
    page = to_html(Document("s1", "A bug", events()))
    first = independent_price("claude-sonnet-4-5", 1200, 480, 20000, 1500)
    assert f"${first:,.2f} · 1,200 in · 480 out · 20,000 cache read · 1,500 cache write" in page
    assert page.count('class="turn-cost"') == 2
