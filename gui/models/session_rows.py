"""What a session row of the lineage tree shows: its columns, roles and display data, the
key each column sorts by, and short times."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt

from forkwise.gui.models.session_costs import (
    cost_text,
    own_part,
    sort_cost,
    token_count,
    tokens_text,
)
from forkwise.gui.widgets.badges import badge_icon

if TYPE_CHECKING:
    from forkwise.core.client.rows import SessionRow

Json = dict[str, Any]
SortKey = tuple[Any, ...]

COLUMNS = ("Title", "Last activity", "Messages", "Model", "Folder", "Cost")
#: what Last activity says of a session whose turn runs, and of one whose turn waits for
#: the person to approve a tool call (the row to act on, not to wait for; its tooltip and
#: accessible text name the tool). A flag, not "⏸": the common UI fonts (DejaVu, the only
#: font of many Linux desktops) have no pause sign, which showed as an empty box. No wider
#: than a date: "needs approval" widened the column by 26 px, which a narrow list's
#: titles could not spare
RUNNING_TEXT = "● running"
WAITING_TEXT = "⚑ to approve"
TITLE, ACTIVITY, MESSAGES, MODEL, FOLDER, COST = range(6)

ID_ROLE = Qt.ItemDataRole.UserRole + 1
SUMMARY_ROLE = Qt.ItemDataRole.UserRole + 2
UPDATED_ROLE = Qt.ItemDataRole.UserRole + 3
RELATION_ROLE = Qt.ItemDataRole.UserRole + 4
RUNNING_ROLE = Qt.ItemDataRole.UserRole + 5
#: every role `row_data` may answer (as ints, as views pass them): a view asks each visible
#: cell for seven roles at each paint, four of which no row has (font, colours, check state)
ANSWERED_ROLES = frozenset(int(role) for role in (
    Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.ToolTipRole,
    Qt.ItemDataRole.AccessibleTextRole, Qt.ItemDataRole.TextAlignmentRole, ID_ROLE,
    SUMMARY_ROLE, UPDATED_ROLE, RELATION_ROLE, RUNNING_ROLE,
))  # fmt: skip
#: the roles a view's delegate asks of each cell it paints, in one `multiData` call
#: (QStyledItemDelegate: font, alignment, colours, check state, icon, text); those no row
#: answers are None (the view's own)
PAINT_ROLES = tuple(int(role) for role in (
    Qt.ItemDataRole.FontRole, Qt.ItemDataRole.TextAlignmentRole,
    Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.CheckStateRole,
    Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.DisplayRole,
    Qt.ItemDataRole.BackgroundRole,
))  # fmt: skip
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


def painted(
    sid: str, s: SessionRow, column: int, title_of: Callable[[str], str], today: date | None = None,
    *, parent_here: bool = True,
) -> tuple[Any, ...]:
    """What a session row's cell in `column` answers for each of `PAINT_ROLES`, in that
    order, at once (as `row_data` would, role by role); `today`: the local date (asked if
    not given); `parent_here`: see `decoration`."""
    text = display_text(sid, s, column, title_of, today)
    if column == TITLE:
        return (None, None, None, None, decoration(s, parent_here), text, None)
    if column in (MESSAGES, COST):
        return (None, _RIGHT, None, None, None, text, None)
    return (None, None, None, None, None, text, None)


def display_text(
    sid: str, s: SessionRow, column: int, title_of: Callable[[str], str], today: date | None = None
) -> str | None:
    """The text a session row shows in `column`."""
    if column == TITLE:
        if s["error"]:
            return f"{sid} — cannot be read"
        return title_of(sid)
    if column == ACTIVITY:
        if s["waiting"]:
            return WAITING_TEXT
        return RUNNING_TEXT if s["running"] else format_when(s["updated"], today=today)
    if column == MESSAGES:
        return str(s["messages"])
    if column == MODEL:
        return s["model"] or ""
    if column == FOLDER:
        return folder_name(str(s["cwd"] or ""))
    if column == COST:
        return cost_text(own_part(s))
    return None


def decoration(s: SessionRow, parent_here: bool = True) -> Any:
    """The icon beside a session's title: its relation's badge, or an agent's own session's
    tool — also an imported branch whose parent is not in the store (`parent_here` False,
    or none named: a pi session whose parent file is gone): it stands alone at the top of
    the list, and a fork icon there pointed at nothing."""
    if s["source"] and (relation_of(s) in (None, "continued") or not parent_here
                        or not s["parentSession"]):
        from forkwise.gui.widgets.source_badges import (
            source_icon,  # (its rows come after the first frame)
        )

        # an agent's own session, or a session continued in an agent: its tool
        return source_icon(str(s["source"]))
    return badge_icon(relation_of(s))


def row_data(
    sid: str, s: SessionRow, column: int, role: int, title_of: Callable[[str], str], *,
    today: date | None = None, parent_here: bool = True,
) -> Any:
    """What a session row shows in `column` for `role`; `title_of` names a session (a fork
    not renamed yet after its source: see siblings.display_title); `today`: the local date
    (asked if not given)."""
    if role == Qt.ItemDataRole.DisplayRole:
        return display_text(sid, s, column, title_of, today)
    if role == Qt.ItemDataRole.DecorationRole and column == TITLE:
        return decoration(s, parent_here)
    if role == Qt.ItemDataRole.ToolTipRole:
        return _tooltip(sid, s, title_of)
    if role == Qt.ItemDataRole.AccessibleTextRole and column == TITLE:
        kind = {"fork": "fork", "subagent": "subagent"}.get(relation_of(s) or "", "session")
        state = ", needs your approval" if s["waiting"] else ", running" if s["running"] else ""
        return f"{kind} {title_of(sid)}{state}"
    if role == Qt.ItemDataRole.AccessibleTextRole and column == ACTIVITY and s["waiting"]:
        return waiting_text(s)
    if role == Qt.ItemDataRole.TextAlignmentRole and column in (MESSAGES, COST):
        return _RIGHT
    if role == ID_ROLE:
        return sid
    if role == SUMMARY_ROLE:
        return s
    if role == UPDATED_ROLE:
        return s["updated"] or ""
    if role == RELATION_ROLE:
        return relation_of(s)
    if role == RUNNING_ROLE:
        return bool(s["running"])
    return None

def _tooltip(sid: str, s: SessionRow, title_of: Callable[[str], str]) -> str:
    lines = [title_of(sid), f"id: {sid}"]
    if s["cwd"]:  # sessions of many projects share one list: which one this is
        lines.append(f"Folder: {home_short(str(s['cwd']))}")
    parent = s["parentSession"]
    if parent and relation_of(s) == "continued":
        from forkwise.gui.widgets.source_badges import continued_text

        lines.append(f"{continued_text(s['source'])} from “{title_of(parent)}”")
    elif parent:
        parent_title = title_of(parent)
        verb = "Subagent started by" if relation_of(s) == "subagent" else "Forked from"
        lines.append(f"{verb} “{parent_title}” at event {s['seedLength']}")
    if s["source"] and relation_of(s) != "continued":
        from forkwise.gui.widgets.source_badges import tool_name

        lines.append(f"Imported from {tool_name(s['source'])}")
    own = own_part(s)
    if token_count(own):
        lines.append(f"Own cost: {cost_text(own)} · tokens: {tokens_text(own)}")
    if s["waiting"]:
        lines.append(waiting_text(s))
    elif s["running"]:
        lines.append("A turn is running")
    if s["error"]:
        lines.append(f"Could not be read: {(s['error'] or {}).get('message', '')}")
    return "\n".join(lines)


def home_short(path: str) -> str:
    """`path` with the home folder written as ~, as a shell prompt shows it."""
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


def folder_name(path: str) -> str:
    """What the Folder column shows of a working folder: its last part, "~" for the home
    (the row's tooltip has the whole path). The whole path, home as ~, took ~140 px of a
    1280 px window's list, and titles were cut to "2.5 release …eek schedule"."""
    short = home_short(path)
    parts = [part for part in short.replace("\\", "/").split("/") if part]
    return parts[-1] if parts else short


def waiting_text(s: SessionRow) -> str:
    """Says what a waiting session waits for: the tools its turn asks to approve."""
    tools = [str(t) for t in dict.fromkeys(s["waitingTools"] or ())]
    if not tools:
        return "Waiting for your approval"
    names = tools[0] if len(tools) == 1 else f"{', '.join(tools[:-1])} and {tools[-1]}"
    return f"Waiting for your approval of {names}"


def sort_key(column: int, sid: str, s: SessionRow) -> SortKey:
    """What a row sorts by in `column`: the title (case-blind), last activity, message count,
    model, own cost (`sort_cost`), or folder (its name as the column shows it, case-blind,
    then its whole path: two folders of one name stay apart), then last activity among
    equals, then the id. Last activity and id are the rows' one order by activity (the
    core's `listing.activity_key`, which the store's index head picks the preview's first
    page by): sessions that ended at the same instant keep their places when the listing
    replaces the preview, whatever order the rows came in."""
    updated = str(s["updated"] or "")
    if column == TITLE:
        return (str(s["title"] or sid).casefold(), updated, sid)
    if column == MESSAGES:
        messages = s["messages"]
        return (messages if isinstance(messages, int) else 0, updated, sid)
    if column == MODEL:
        return (str(s["model"] or "").casefold(), updated, sid)
    if column == COST:
        return (sort_cost(own_part(s)), updated, sid)
    if column == FOLDER:
        cwd = str(s["cwd"] or "")
        return (folder_name(cwd).casefold(), cwd, updated, sid)
    return (updated, sid)


def relation_of(summary: SessionRow) -> str | None:
    rel = summary["relation"]
    if rel is None and summary["parentSession"]:
        return "fork"
    return rel if isinstance(rel, str) else None


#: the one way the app writes a time (list, search results, transcript): day, month, the
#: year when it is not this one, then the time
WHEN_FORMAT = "%d %b %H:%M"
WHEN_FORMAT_YEAR = "%d %b %Y %H:%M"


def format_when(ts: object, now: datetime | None = None, *, today: date | None = None) -> str:
    """A local date and time, one format everywhere: "05 Dec 14:05", with the year when it
    is not this one ("28 Feb 2025 09:30": a date without its time said nothing of when in
    the day, and today's time alone read as another format). `today`: the local date, if
    the caller knows it (the tree asks once for all its rows), else that of `now`
    (default: now).

    Written by `time.strftime`, which `datetime.strftime` calls for these formats: called
    through `datetime`, it imports `time` each time, and PySide's import hook is Python
    code (~3 µs a row)."""
    if not isinstance(ts, str) or not ts:
        return ""
    try:
        when = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return ts
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    local = when.astimezone()
    if today is None:
        today = (now or datetime.now(UTC)).astimezone().date()
    shape = WHEN_FORMAT if local.year == today.year else WHEN_FORMAT_YEAR
    return time.strftime(shape, local.timetuple())
