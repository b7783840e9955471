"""The window as a feature sees it: one narrow interface that the main window implements.

A feature is an `install(bench)` function listed in forkwise.gui.app.features (the app
runs that list); it reaches the window only through `Bench`, never through the window's
class, and it never imports another feature (features talk through the service's
signals). Menus are data: an action names its menu, its group in that menu and its order
in the group (`Place`); nothing looks a menu up by name or inserts at a position.

Typing only: importing this module builds no widget and imports no Qt class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QAction, QKeySequence
    from PySide6.QtWidgets import QMainWindow, QMenu, QSplitter, QWidget

    from forkwise.gui.kernel.controller import Controller
    from forkwise.gui.sessions.session_tree import SessionTree
    from forkwise.gui.transcript.composer import Composer
    from forkwise.gui.transcript.row_links import RowLinks
    from forkwise.gui.transcript.transcript_view import TranscriptView


class TranscriptCalls:
    """What features asked to do with the transcript view (`Bench.on_transcript`): done
    when the view is built (after the first frame), or at once once it is. The main
    window keeps one, and so does any stand-in for it."""

    def __init__(self) -> None:
        self._calls: list[Callable[[TranscriptView], None]] = []
        self._view: TranscriptView | None = None

    def add(self, call: Callable[[TranscriptView], None]) -> None:
        self._calls.append(call)
        if self._view is not None:
            call(self._view)

    def built(self, view: TranscriptView) -> None:
        """The view is there: every call so far is made on it, and later ones at once."""
        self._view = view
        for call in self._calls:
            call(view)


class MenuId(StrEnum):
    """The menus an action can be placed in (the value is the menu's object name)."""

    FILE = "menuFile"
    EDIT = "menuEdit"
    SESSION = "menuSession"
    HELP = "menuHelp"
    #: a row's context menu in the session list (built each time it opens)
    SESSION_LIST = "sessionMenu"


@dataclass(frozen=True)
class Place:
    """Where an entry goes: its menu, its group (groups are parted by a separator, lower
    first) and its order within the group (lower first)."""

    menu: MenuId
    group: int
    order: int


@dataclass(frozen=True)
class ActionSpec:
    """An action as data. `id` is its object name (tests and assistive tools find it by
    that); `needs_session`: enabled only while a session is selected and the store loaded."""

    id: str
    text: str
    tip: str
    shortcut: str | Sequence[QKeySequence] | None = None
    places: tuple[Place, ...] = ()
    triggered: Callable[[], Any] | None = None
    needs_session: bool = False


#: a contributor to a message's context menu: (menu, row, fork actions enabled)
MenuContributor = Callable[["QMenu", int, bool], None]
#: a note after a session's title in the detail pane ("source changed"), or None
TitleNote = Callable[[str], "str | None"]


class Bench(Protocol):
    """What a feature may use of the main window."""

    #: the session service: the client's calls, the tree and transcript models, signals
    controller: Controller
    settings: QSettings
    tree: SessionTree
    composer: Composer
    splitter: QSplitter

    @property
    def transcript(self) -> TranscriptView:
        """The transcript view (built when first asked for)."""
        ...

    def transcript_if_built(self) -> TranscriptView | None:
        """The transcript view if it exists yet (asking does not build it)."""
        ...

    def on_transcript(self, call: Callable[[TranscriptView], None]) -> None:
        """`call(view)` once the transcript view is built (at once if it is)."""
        ...

    def link_rows(self, links: RowLinks) -> None:
        """Provide what transcript rows link to (a Task call's subagent, the forks cut
        after a message, a fork's anchor text), once the transcript is built; each hook
        takes one provider."""
        ...

    def widget(self) -> QMainWindow:
        """The window as a widget: the parent of a feature's dialogs."""
        ...

    def selected_session(self) -> str | None: ...

    def select_session(self, session_id: str, at_seq: int | None = None) -> None:
        """Select `session_id` in the list and open it (at event `at_seq` if given)."""
        ...

    def add_action(self, spec: ActionSpec) -> QAction:
        """Make the action, place it in its menus, give its shortcut to the window."""
        ...

    def add_menu(self, place: Place, menu: QMenu) -> None:
        """A submenu placed like an action."""
        ...

    def action(self, action_id: str) -> QAction:
        """One of the window's own actions by its id (e.g. Preferences, to connect)."""
        ...

    def add_detail_line(self, line: QWidget) -> None:
        """A line under the opened session's title (lines come in the order added)."""
        ...

    def add_title_note(self, note: TitleNote) -> None:
        """A note the title shows after the session's state, asked each time it is set."""
        ...

    def refresh_title(self) -> None:
        """Set the opened session's title line again (a note's answer changed)."""
        ...

    def copy_text(self, text: str) -> None: ...


@dataclass(frozen=True)
class Feature:
    """One entry of the app's feature list (forkwise.gui.app.features). `install` returns
    the feature's object (kept in `window.features[name]`); `late`: installed once the
    first frame is painted and the tree shows its first rows, else right after that frame."""

    name: str
    install: Callable[[Bench], object]
    late: bool = False
