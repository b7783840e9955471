"""Which message actions are valid, and why not (Qt-free; the menu builder shows them).

The rules mirror the core's fork rules (`forkwise.core.log.turns`): "Fork from here" needs the
message's turn to have ended; "Fork before this message" needs the message to open its
turn. Editing branches: "Edit and resend" and "Retry" fork before the turn and
send in the child, so they work while the session runs; "Edit and replace" rewrites the
session in place, which the host refuses while any turn is open.
The host stays the judge: these only keep a person from asking for what cannot work.

A disabled item's text stays short; its reason is the tooltip and status tip.
"""

from __future__ import annotations

from dataclasses import dataclass

from forkwise.core.reading.entries import (
    ASSISTANT,
    FORK,
    REASONING,
    TOOL,
    USER,
    Entry,
    TranscriptBuilder,
)

FORK_FROM = "actionForkFromMessage"
FORK_BEFORE = "actionForkBeforeMessage"
EDIT_RESEND = "actionEditResend"
RETRY = "actionRetry"
EDIT_REPLACE = "actionEditReplace"
COPY = "actionCopyMessage"

RUNNING = "This turn is still running"
WAITING = "This turn is waiting for your approval"
NOT_A_MESSAGE = "Right-click a message to use this"
MID_TURN = "Only a turn's first message can be left out"
NOT_YOURS = "Only your own questions can be edited"
NOT_AN_ANSWER = "Right-click an answer to ask its question again"
NO_QUESTION = "This answer has no question to ask again"
BUSY = "Wait until the running turn ends (or press Stop)"

EDIT_RESEND_TIP = "A new branch from before this message, with your edit sent in it"
RETRY_TIP = "A new branch from before this turn, with the same question asked again"
EDIT_REPLACE_TIP = "Delete this message and everything after it, then send your edit"


@dataclass(frozen=True)
class ActionState:
    name: str
    label: str
    enabled: bool
    reason: str = ""  # why it is disabled, or what it does when enabled


def question_of(entry: Entry, builder: TranscriptBuilder) -> Entry | None:
    """The question (user message) that opens `entry`'s turn, where it is loaded."""
    info = builder.turn_of(entry)
    if info is None or info.first_message is None:
        return None
    for candidate in builder.entries:
        if candidate.message_id == info.first_message and candidate.kind == USER:
            return candidate
    return None


def replace_cost(entry: Entry, builder: TranscriptBuilder) -> tuple[int, int]:
    """What "Edit and replace" at `entry` deletes: (turns, messages) from its turn on."""
    info = builder.turn_of(entry)
    start = info.start_seq if info is not None else entry.seq
    turns = sum(1 for t in builder.turns.values() if t.start_seq >= start)
    messages = {e.message_id for e in builder.entries
                if e.seq >= start and e.message_id is not None
                and e.kind in (USER, ASSISTANT, TOOL, REASONING)}
    return turns, len(messages)


def message_actions(
    entry: Entry | None, builder: TranscriptBuilder, complete: bool = True
) -> list[ActionState]:
    """The message actions for `entry`. `complete`: every event has been loaded, so a turn
    without a `turn/end` really is still open."""
    if entry is None or entry.message_id is None:
        off = [ActionState(name, label, False, NOT_A_MESSAGE) for name, label in (
            (FORK_FROM, "Fork from here"), (FORK_BEFORE, "Fork before this message"),
            (EDIT_RESEND, "Edit and resend…"), (RETRY, "Retry"),
            (EDIT_REPLACE, "Edit and replace…"))]
        return [*off, ActionState(COPY, "Copy", entry is not None and bool(copy_text(entry)),
                                  "Copy this entry's text")]
    info = builder.turn_of(entry)
    turn_open = info is not None and info.status == "running" and complete
    waiting = turn_open and info is not None and info.pending_approvals > 0
    if turn_open:
        fork_from = ActionState(FORK_FROM, "Fork from here", False, WAITING if waiting else RUNNING)
    else:
        fork_from = ActionState(FORK_FROM, "Fork from here", True,
                                "A new session with everything through the end of this turn")
    if entry.opens_turn:
        fork_before = ActionState(FORK_BEFORE, "Fork before this message", True,
                                  "A new session with everything before this message's turn")
    else:
        fork_before = ActionState(FORK_BEFORE, "Fork before this message", False, MID_TURN)
    mine = entry.kind == USER and entry.opens_turn
    if entry.kind != USER:
        edit = ActionState(EDIT_RESEND, "Edit and resend…", False, NOT_YOURS)
    elif not entry.opens_turn:
        edit = ActionState(EDIT_RESEND, "Edit and resend…", False, MID_TURN)
    else:
        edit = ActionState(EDIT_RESEND, "Edit and resend…", True, EDIT_RESEND_TIP)
    if entry.kind == USER:
        retry = ActionState(RETRY, "Retry", False, NOT_AN_ANSWER)
    elif question_of(entry, builder) is None:
        retry = ActionState(RETRY, "Retry", False, NO_QUESTION)
    elif turn_open:
        retry = ActionState(RETRY, "Retry", False, WAITING if waiting else RUNNING)
    else:
        retry = ActionState(RETRY, "Retry", True, RETRY_TIP)
    session_busy = builder.open_turn is not None and complete
    if not mine:
        replace = ActionState(EDIT_REPLACE, "Edit and replace…", False, edit.reason)
    elif session_busy:
        pending = builder.turns.get(builder.open_turn or "")
        replace = ActionState(EDIT_REPLACE, "Edit and replace…", False,
                              WAITING if pending and pending.pending_approvals else BUSY)
    else:
        replace = ActionState(EDIT_REPLACE, "Edit and replace…", True, EDIT_REPLACE_TIP)
    return [fork_from, fork_before, edit, retry, replace,
            ActionState(COPY, "Copy", True, "Copy the text")]


def copy_text(entry: Entry) -> str:
    if entry.kind == TOOL:
        result = entry.result
        return f"{entry.tool_name}({entry.args})" + (
            f"\n{result}" if result is not None else ""
        )
    if entry.kind == FORK:
        fork = entry.fork
        return f"Forked from {fork.source} at event {fork.boundary}"
    return entry.text
