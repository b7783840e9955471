"""The session tree's filter: by title at once, by message text when the client answers, and
by working folder (`folder:NAME`, `folder:"a b"`: imported sessions of many projects share
one list)."""

from __future__ import annotations

import re

from PySide6.QtCore import (
    QModelIndex,
    QModelRoleData,
    QModelRoleDataSpan,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)

from forkwise.core.client.rows import SessionRow
from forkwise.gui.models.session_rows import ID_ROLE, SUMMARY_ROLE, TITLE, home_short

Index = QModelIndex | QPersistentModelIndex
_FOLDER = re.compile(r'(?:^|\s)folder:(?:"([^"]*)"?|(\S*))', re.IGNORECASE)


def split_folder(text: str) -> tuple[str | None, str]:
    """The `folder:` part of a filter (casefolded; None when there is none) and the rest,
    the words looked for in titles and messages."""
    found = _FOLDER.search(text)
    if found is None:
        return None, text.strip().casefold()
    folder = found.group(1) if found.group(1) is not None else found.group(2)
    rest = text[: found.start()] + " " + text[found.end() :]
    return folder.strip().casefold(), " ".join(rest.split()).casefold()


def folder_matches(summary: SessionRow | None, folder: str) -> bool:
    """Whether a row's working folder, as the Folder column writes it (home as ~) or in
    full, holds `folder`."""
    cwd = (summary["cwd"] or "") if summary is not None else ""
    return folder in home_short(cwd).casefold() or folder in cwd.casefold()


class SessionFilterProxy(QSortFilterProxyModel):
    """Filter by title or message text; sorting is passed on to the source model, which
    keeps its rows in order itself (see session_model).

    Message text matches come from outside (`set_text_hits`: ids of sessions whose
    messages contain the pattern), because finding them needs the client.

    Signals: `answeredSignal()` (the message text matches of the pattern are in)."""

    answeredSignal = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pattern = ""
        self._folder: str | None = None
        self._words = ""
        self._text_hits: set[str] = set()
        #: whether the message-text matches of the pattern have arrived
        self.answered = False
        self.setRecursiveFilteringEnabled(True)
        self.setAutoAcceptChildRows(False)
        self.setDynamicSortFilter(True)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        source = self.sourceModel()
        if source is not None:
            source.sort(column, order)

    def multiData(self, index: Index, roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        """The source's answers for the roles a delegate asks at once (QSortFilterProxyModel
        leaves this to Qt's default: a `data()` call per role, each mapping the index to
        the source, which costs an `index()` call into Python every time)."""
        source = self.sourceModel()
        if source is None:
            super().multiData(index, roleDataSpan)
            return
        mapped = self.mapToSource(index)
        if index.isValid() and not mapped.isValid():  # as QSortFilterProxyModel.data does
            super().multiData(QModelIndex(), roleDataSpan)
            return
        source.multiData(mapped, roleDataSpan)

    @property
    def pattern(self) -> str:
        return self._pattern

    def set_pattern(self, text: str) -> None:
        self.beginFilterChange()
        self._pattern = text.strip().casefold()
        self._folder, self._words = split_folder(text)
        self._text_hits = set()
        self.answered = False
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def set_text_hits(self, pattern: str, hits: set[str]) -> None:
        if pattern.strip().casefold() != self._pattern:
            return  # an answer to an older pattern
        self.beginFilterChange()
        self._text_hits = set(hits)
        self.answered = True
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        self.answeredSignal.emit()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        if not self._pattern:
            return True
        model = self.sourceModel()
        index = model.index(source_row, TITLE, source_parent)
        if self._folder and not folder_matches(model.data(index, SUMMARY_ROLE), self._folder):
            return False
        if not self._words:
            return True
        sid = model.data(index, ID_ROLE)
        title = str(model.data(index, Qt.ItemDataRole.DisplayRole) or "")
        return self._words in title.casefold() or sid in self._text_hits
