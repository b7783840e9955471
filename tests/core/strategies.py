"""Hypothesis strategies for valid session logs (as store drafts).

A log is a run of blocks: turns (user message, steps with assistant messages, tool calls,
approvals and results, standalone events logged mid-turn, a status) and standalone events
(model/select, session/title, context/summary, unknown plugin events). Sometimes the last
turn is left open, cut anywhere after its turn/start.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from forkwise.core.log.events import RESERVED

Draft = dict[str, Any]
LONG = os.environ.get("FORKWISE_LONG") == "1"


def examples(default: int, long: int) -> settings:
    """Bounded in CI; FORKWISE_LONG=1 runs the long mode."""
    return settings(
        max_examples=long if LONG else default,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


_key = st.text("abcdefghij_", min_size=1, max_size=6).filter(lambda k: k not in RESERVED)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_key, inner, max_size=3),
    max_leaves=8,
)
payloads = st.dictionaries(_key, json_values, max_size=3)
texts = st.text(max_size=20)


@st.composite
def standalone(draw: st.DrawFn, position: int) -> Draft:
    kind = draw(st.sampled_from(["model", "title", "summary", "plugin", "future"]))
    if kind == "model":
        return {
            "type": "model/select",
            "provider": draw(st.sampled_from(["offline", "http"])),
            "model": draw(st.sampled_from(["a", "b"])),
            "reasoning": draw(st.sampled_from(["low", "high"])),
        }
    if kind == "title":
        return {"type": "session/title", "title": draw(texts)}
    if kind == "summary":
        return {
            "type": "context/summary",
            "text": draw(texts),
            "through": draw(st.integers(0, max(position, 0))),
        }
    name = draw(st.sampled_from(["plugin/notes/pin", "plugin/x/y", "future/thing"]))
    return {"type": name, **draw(payloads)}


@st.composite
def turn_block(draw: st.DrawFn, tid: str, ids: itertools.count[int], position: int) -> list[Draft]:
    def mid(role: str) -> str:
        return f"{role}:{tid}:{next(ids):04x}"

    out: list[Draft] = [{"type": "turn/start", "turn": tid}]
    if draw(st.integers(0, 5)) > 0:  # now and then a turn without a user message
        out.append(
            {
                "type": "message",
                "turn": tid,
                "id": mid("user"),
                "role": "user",
                "parts": [{"type": "text", "text": draw(texts)}],
            }
        )
    for s in range(draw(st.integers(0, 3))):
        step = f"{tid}.{s}"
        out.append({"type": "step/start", "turn": tid, "step": step})
        calls = [f"call-{tid}-{s}-{c}" for c in range(draw(st.integers(0, 2)))]
        parts: list[dict[str, Any]] = []
        if draw(st.booleans()):
            parts.append({"type": "reasoning", "text": draw(texts)})
        parts.append({"type": "text", "text": draw(texts)})
        parts += [
            {"type": "tool_call", "id": c, "name": "read", "args": draw(payloads)} for c in calls
        ]
        out.append(
            {
                "type": "message",
                "turn": tid,
                "id": mid("assistant"),
                "role": "assistant",
                "parts": parts,
            }
        )
        for c in calls:
            if draw(st.booleans()):
                out.append(
                    {
                        "type": "approval/request",
                        "turn": tid,
                        "approval": f"ap-{c}",
                        "call": c,
                        "tool": "read",
                    }
                )
                if draw(st.booleans()):
                    out.append(
                        {
                            "type": "approval/resolve",
                            "turn": tid,
                            "approval": f"ap-{c}",
                            "decision": draw(st.sampled_from(["allow", "deny"])),
                        }
                    )
            if draw(st.booleans()):
                out.append(
                    {
                        "type": "tool/result",
                        "turn": tid,
                        "call": c,
                        "tool": "read",
                        "output": draw(json_values),
                    }
                )
        if draw(st.integers(0, 4)) == 0:
            out.append(draw(standalone(position + len(out))))  # logged mid-turn
        out.append({"type": "step/end", "turn": tid, "step": step})
    if draw(st.booleans()):
        out.append(
            {
                "type": "message",
                "turn": tid,
                "id": mid("assistant"),
                "role": "assistant",
                "parts": [{"type": "text", "text": draw(texts)}],
            }
        )
    status = draw(st.sampled_from(["completed", "completed", "cancelled", "failed", "interrupted"]))
    out.append({"type": "turn/end", "turn": tid, "status": status})
    return out


@st.composite
def logs(draw: st.DrawFn, max_blocks: int = 7) -> list[Draft]:
    ids = itertools.count(1)
    drafts: list[Draft] = []
    for i in range(draw(st.integers(0, max_blocks))):
        if draw(st.integers(0, 2)) == 0:
            drafts.append(draw(standalone(len(drafts))))
        else:
            drafts += draw(turn_block(f"t{i}", ids, len(drafts)))
    if draw(st.integers(0, 2)) == 0:
        block = draw(turn_block("open", ids, len(drafts)))
        drafts += block[: draw(st.integers(1, len(block) - 1))]  # turn/start kept, end cut
    return drafts
