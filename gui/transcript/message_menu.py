"""The message context menu of the transcript: which actions a message has and why not
(gui/domain/message_actions) as menu items, and what each does (the view's signals, or Copy).
Built by `build_context_menu` (tests call it) and shown with `popup()` (gui/widgets/context_menu).

`MessageMenuMixin` is part of `TranscriptView` (gui/transcript/transcript_view).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPoint, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QListView, QMenu

from forkwise.gui.domain.message_actions import (
    COPY,
    EDIT_REPLACE,
    EDIT_RESEND,
    FORK_BEFORE,
    FORK_FROM,
    RETRY,
    ActionState,
)
from forkwise.gui.models.transcript_model import TranscriptModel, plain_text
from forkwise.gui.widgets.context_menu import ContextMenuMixin

if TYPE_CHECKING:
    _Base = QListView  # the view these are part of (gui/transcript/transcript_view)
else:
    _Base = object


class MessageMenuMixin(ContextMenuMixin, _Base):
    """The menu of the message at a row (Menu key, Shift+F10, right-click)."""

    if TYPE_CHECKING:  # what the view has
        menu_extensions: list[Callable[[QMenu, int, bool], None]]
        forkFromMessage: Signal
        forkBeforeMessage: Signal
        editResend: Signal
        retryRequested: Signal
        editReplace: Signal

        def transcript(self) -> TranscriptModel: ...

    def build_context_menu(self, index: QModelIndex) -> QMenu:
        """The menu for the entry at `index` (built, not shown)."""
        model = self.transcript()
        row = index.row() if index.isValid() else -1
        states = model.actions_for(row)
        menu = QMenu(self)
        menu.setObjectName("messageMenu")
        menu.setToolTipsVisible(True)
        handlers: dict[str, Callable[[], None]] = {
            FORK_FROM: lambda: self.forkFromMessage.emit(row),
            FORK_BEFORE: lambda: self.forkBeforeMessage.emit(row),
            EDIT_RESEND: lambda: self.editResend.emit(row),
            RETRY: lambda: self.retryRequested.emit(row),
            EDIT_REPLACE: lambda: self.editReplace.emit(row),
            COPY: lambda: self._copy(row),
        }
        for state in states:
            if state.name in (EDIT_RESEND, EDIT_REPLACE, COPY):
                menu.addSeparator()
            menu.addAction(_action(menu, state, handlers[state.name]))
            if state.name == FORK_FROM:
                for extend in self.menu_extensions:  # e.g. Continue in ▸ (features/agents)
                    extend(menu, row, state.enabled)
        return menu

    def _copy(self, row: int) -> None:
        entry = self.transcript().entry(row)
        if entry is not None:
            QGuiApplication.clipboard().setText(plain_text(entry))

    def menu_position(self, row: int) -> QPoint:
        """Where a context menu for `row` would be asked for (tests send events there)."""
        rect = self.visualRect(self.model().index(row, 0))
        return rect.center()



#: each action's label with its access key (Alt+letter, or the letter with the menu open);
#: Continue &in (features/agents) keeps its "i"
ACCESS_KEYS = {FORK_FROM: "&Fork from here", FORK_BEFORE: "Fork &before this message",
               EDIT_RESEND: "&Edit and resend…", RETRY: "&Retry",
               EDIT_REPLACE: "Edit and re&place…", COPY: "&Copy"}


def with_access_key(name: str, label: str) -> str:
    """`label` with its access key, where the action has one and the label is the usual."""
    keyed = ACCESS_KEYS.get(name)
    return keyed if keyed is not None and keyed.replace("&", "") == label else label


def _action(menu: QMenu, state: ActionState, handler: Callable[[], None]) -> Any:
    from PySide6.QtGui import QAction

    # short: the reason is the tooltip and status tip
    action = QAction(with_access_key(state.name, state.label), menu)
    action.setObjectName(state.name)
    action.setEnabled(state.enabled)
    action.setToolTip(state.reason or state.label)
    action.setStatusTip(state.reason)
    if state.name == COPY:
        action.setShortcut("Ctrl+C")
    action.triggered.connect(handler)
    return action
