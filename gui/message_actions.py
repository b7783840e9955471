"""Which message actions are valid, and why not (Qt-free; the menu builder shows them).

The rules mirror the core's fork rules (`forkwise.core.log.turns`): "Fork from here" needs the
message's turn to have ended; "Fork before this message" needs the message to open its
turn; "Edit and resend" replaces in place, which the host refuses while any turn is open.
The host stays the judge: these only keep a person from asking for what cannot work.
"""

from __future__ import annotations

from dataclasses import dataclass

from .transcript_entries import USER, Entry, TranscriptBuilder

FORK_FROM = "actionForkFromMessage"
FORK_BEFORE = "actionForkBeforeMessage"
EDIT_RESEND = "actionEditResend"
COPY = "actionCopyMessage"

RUNNING = "This turn is still running"
WAITING = "This turn is waiting for an approval"
NOT_A_MESSAGE = "Right-click a message to fork from it"
MID_TURN = "This message does not start its turn, so it cannot be left out"
NOT_YOURS = "Only your own messages can be edited and resent"
BUSY = "Wait until the running turn has finished (or press Stop) before editing"


@dataclass(frozen=True)
class ActionState:
    name: str
    label: str
    enabled: bool
    reason: str = ""  # why it is disabled, or what it does when enabled


def message_actions(
    entry: Entry | None, builder: TranscriptBuilder, complete: bool = True
) -> list[ActionState]:
    """The four message actions for `entry`. `complete`: every event has been loaded, so a
    turn without a `turn/end` really is still open."""
    if entry is None or entry.message_id is None:
        return [
            ActionState(FORK_FROM, "Fork from here", False, NOT_A_MESSAGE),
            ActionState(FORK_BEFORE, "Fork before this message", False, NOT_A_MESSAGE),
            ActionState(EDIT_RESEND, "Edit and resend…", False, NOT_A_MESSAGE),
            ActionState(COPY, "Copy", entry is not None and bool(copy_text(entry)),
                        "Copy this entry's text"),
        ]
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
    session_busy = builder.open_turn is not None and complete
    if entry.kind != USER:
        edit = ActionState(EDIT_RESEND, "Edit and resend…", False, NOT_YOURS)
    elif not entry.opens_turn:
        edit = ActionState(EDIT_RESEND, "Edit and resend…", False, MID_TURN)
    elif session_busy:
        pending = builder.turns.get(builder.open_turn or "")
        edit = ActionState(EDIT_RESEND, "Edit and resend…", False,
                           WAITING if pending and pending.pending_approvals else BUSY)
    else:
        edit = ActionState(EDIT_RESEND, "Edit and resend…", True,
                           "Replace this message and everything after it, then send the edit")
    return [fork_from, fork_before, edit, ActionState(COPY, "Copy", True, "Copy the text")]


def copy_text(entry: Entry) -> str:
    if entry.kind == "tool":
        result = entry.data.get("result")
        return f"{entry.data.get('name')}({entry.data.get('args')})" + (
            f"\n{result}" if result is not None else ""
        )
    if entry.kind == "fork":
        return f"Forked from {entry.data.get('source')} at event {entry.data.get('boundary')}"
    return entry.text
