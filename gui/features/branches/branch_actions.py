"""The window's branch actions: rename, step between sibling forks, compare
two sessions of a lineage, edit in a new branch or in place (confirmed), retry, and the
"its source changed" state of an opened fork.

Installed through the window's interface (`install(bench)`): the actions are placed in the
Session menu and the session list's menu as data. Each action has a stable object name;
when one is disabled, its text stays short and the reason is its tooltip and status tip.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QAction

from forkwise.core.client.reports import usage_report
from forkwise.core.client.session_info import source_state
from forkwise.core.reading.entries import FORK
from forkwise.gui.domain.siblings import position, step
from forkwise.gui.models.session_costs import shared_text
from forkwise.gui.models.session_rows import ID_ROLE
from forkwise.gui.shell.bench import ActionSpec, Bench, MenuId, Place
from forkwise.gui.transcript.row_links import RowLinks

# The dialogs' and selection's classes are imported where used: importing a PySide class
# creates it and its enums (QMessageBox, QInputDialog: ~1.5 ms before the first frame).
if TYPE_CHECKING:
    from PySide6.QtWidgets import QInputDialog, QLabel, QMessageBox

    from forkwise.gui.features.branches.compare_view import CompareView
    from forkwise.gui.features.branches.fork_questions import ForkQuestions
    from forkwise.gui.transcript.transcript_view import TranscriptView

log = logging.getLogger(__name__)

Json = dict[str, Any]

#: events read after a fork's boundary for the message it was cut before (the turn's
#: start, standalone events such as a model choice, then the message)
ANCHOR_EVENTS = 8

NO_SESSION = "Select a session first"
NO_SIBLINGS = "This session has no other fork of the same point"
FIRST_SIBLING = "This is the first fork of this point"
LAST_SIBLING = "This is the last fork of this point"
NOTHING_TO_COMPARE = ("Select two sessions of one lineage, or open a fork to compare it "
                      "with its source")


class BranchActions(QObject):
    """Owns the actions; `window` places them in menus and wires its signals here."""

    def __init__(self, window: Bench) -> None:
        super().__init__(window.widget())
        self.window = window
        session, rows = MenuId.SESSION, MenuId.SESSION_LIST
        self.rename = window.add_action(ActionSpec(
            "actionRenameSession", "&Rename…", "Give the selected session a title of its own",
            "F2", (Place(session, 0, 20), Place(rows, 0, 30)), self.ask_rename))
        self.previous = window.add_action(ActionSpec(
            "actionPreviousSibling", "&Previous fork", "Open the previous fork of the same point",
            "Alt+Left", (Place(session, 1, 10),), lambda: self.step_sibling(-1)))
        self.next = window.add_action(ActionSpec(
            "actionNextSibling", "Next f&ork", "Open the next fork of the same point",
            "Alt+Right", (Place(session, 1, 20),), lambda: self.step_sibling(+1)))
        self.compare = window.add_action(ActionSpec(
            "actionCompareSessions", "&Compare…",
            "Two sessions of one lineage side by side, from where they part", "Ctrl+Shift+D",
            (Place(session, 1, 30), Place(rows, 0, 40)), self.compare_selected))
        self.compare_view: CompareView | None = None
        self.rename_dialog: QInputDialog | None = None
        self.confirm_box: QMessageBox | None = None
        #: a session opened by stepping: shown at its fork record once that is loaded
        self._land_at_fork: str | None = None
        self._source_changed: dict[str, bool] = {}
        #: what each opened fork's shared prefix used, as its fork record says it
        self._shared: dict[str, str | None] = {}
        #: under the title: which model answers a fork whose source's model is not served
        self.answer_line: QLabel | None = None
        #: reads the question each look-alike fork asked (`install`)
        self.questions: ForkQuestions | None = None

    def wire(self) -> None:
        """Connect to the window's parts (called once they exist)."""
        w, c = self.window, self.window.controller
        c.sessionOpened.connect(self._opened)
        c.tree.rowsInserted.connect(lambda *_a: self._later_update())
        c.tree.rowsRemoved.connect(lambda *_a: self._later_update())
        c.tree.dataChanged.connect(lambda *_a: self._later_update())
        w.tree.selectionModel().selectionChanged.connect(lambda *_a: self.update())
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.update)
        self.update()

    def wire_transcript(self, t: TranscriptView) -> None:
        """Connect to the transcript view, once the window has built it."""
        c = self.window.controller
        t.editReplace.connect(self.confirm_replace)
        t.retryRequested.connect(c.retry)
        t.siblingStep.connect(self.step_sibling)
        t.compareRequested.connect(self.compare_with_source)
        c.transcript.rowsInserted.connect(self._rows_arrived)
        self.update()

    def anchor_text(self, source: str, boundary: int, message: str,
                    landed: Callable[[str], None]) -> None:
        """The text of `message` in `source`, which opens the turn right after event
        `boundary` (a fork cut before it), read from the source's next few events."""
        c = self.window.controller

        def found(events: list[Json]) -> None:
            from forkwise.core.reading.entries import build

            for entry in build(events).entries:
                if entry.message_id == message and entry.text:
                    landed(entry.text)
                    return

        c.ops.run(c.client.events(source, after=boundary, limit=ANCHOR_EVENTS), found,
                  lambda exc: log.info("no text for %s of %s: %s", message, source, exc))

    # --- state ------------------------------------------------------------------------

    def _later_update(self) -> None:
        self._timer.start()

    def _place(self, sid: str | None) -> tuple[int, int] | None:
        tree = self.window.controller.tree
        return position(sid, tree.summary, tree.children_of) if sid else None

    def update(self) -> None:
        """Enable the actions for the selection and refresh the opened fork's record."""
        w = self.window
        sid = w.selected_session()
        _set(self.rename, sid is not None and w.controller.loaded, NO_SESSION,
             "Give the selected session a title of its own")
        current = w.controller.current
        place = self._place(current)
        if place is None:
            _set(self.previous, False, NO_SIBLINGS if current else NO_SESSION, "")
            _set(self.next, False, NO_SIBLINGS if current else NO_SESSION, "")
        else:
            k, n = place
            _set(self.previous, k > 1, FIRST_SIBLING,
                 f"Open version {k - 1} of {n} at this point")
            _set(self.next, k < n, LAST_SIBLING, f"Open version {k + 1} of {n} at this point")
        pair = self.pair()
        _set(self.compare, pair is not None, NOTHING_TO_COMPARE,
             "Two sessions of one lineage side by side, from where they part")
        view = w.transcript_if_built()  # not built yet: it gets the context once it is
        if view is not None:
            view.set_fork_context(place, self._source_changed.get(current or "", False))
            view.set_shared_prefix(self._shared.get(current or ""))

    def pair(self) -> tuple[str, str] | None:
        """What Compare compares: two sessions selected in the tree (of one lineage), or
        the opened fork and its source."""
        w, tree = self.window, self.window.controller.tree
        rows = w.tree.selectionModel().selectedRows(0)
        ids = [str(i.data(ID_ROLE)) for i in rows if i.data(ID_ROLE)]
        if len(ids) == 2:
            return (ids[0], ids[1]) if _root(ids[0], tree) == _root(ids[1], tree) else None
        current = w.controller.current
        summary = tree.summary(current) if current else None
        parent = summary["parentSession"] if summary else None
        if current and isinstance(parent, str) and tree.summary(parent) is not None:
            return parent, current
        return None

    def source_changed(self, sid: str) -> bool:
        """Whether the host said `sid`'s source was rewritten below the fork point."""
        return self._source_changed.get(sid, False)

    # --- opening ------------------------------------------------------------------------

    def _opened(self, sid: str) -> None:
        self.update()
        summary = self.window.controller.tree.summary(sid) if sid else None
        if summary and summary["parentSession"]:
            self._ask_source_state(sid)
            self._ask_shared(sid)

    def _ask_shared(self, sid: str) -> None:
        """What the fork's shared prefix used, for its fork record ("shared prefix $…")."""
        c = self.window.controller

        def landed(report: Json) -> None:
            self._shared[sid] = shared_text(usage_report(report)["shared"])
            if c.current == sid:
                self.update()

        c.ops.run(c.client.usage(sid), landed, lambda exc: log.info(
            "usage of %s unknown: %r", sid, exc))

    def _ask_source_state(self, sid: str) -> None:
        c = self.window.controller

        def landed(info: Json) -> None:
            source = source_state(info)
            self._source_changed[sid] = source is not None and source["changed"] is True
            if c.current == sid:
                self.update()
                self.window.refresh_title()  # the session header says it too

        c.ops.run(c.client.get_session(sid), landed, lambda exc: log.info(
            "source state of %s unknown: %r", sid, exc), what="Checking the source")

    def _rows_arrived(self, *_args: Any) -> None:
        """A session opened by stepping shows its fork record (the point it shares with
        its siblings) at the top, once that row is loaded."""
        c, t = self.window.controller, self.window.transcript
        if self._land_at_fork is None or self._land_at_fork != c.current:
            return
        rows = [r for r, e in enumerate(c.transcript.builder.entries) if e.kind == FORK]
        if not rows:
            return
        self._land_at_fork = None
        t.stop_following()
        index = c.transcript.index(rows[-1])  # its own: a fork of a fork has its source's too
        from PySide6.QtWidgets import QAbstractItemView

        QTimer.singleShot(0, lambda: t.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtTop))

    # --- verbs ------------------------------------------------------------------------

    def step_sibling(self, delta: int) -> None:
        c = self.window.controller
        current = c.current
        target = step(current, delta, c.tree.summary, c.tree.children_of) if current else None
        if target is None:
            return
        own = c.tree.summary(current) if current else None
        if own is not None and target == own["parentSession"]:
            # the original: its source, opened where its forks part from it
            point = own["seedLength"]
            self.window.select_session(target, point if isinstance(point, int) else None)
            return
        self._land_at_fork = target
        self.window.select_session(target)

    def ask_rename(self) -> None:
        sid = self.window.selected_session()
        if sid is None:
            return
        from PySide6.QtWidgets import QInputDialog, QLineEdit

        c = self.window.controller
        dialog = QInputDialog(self.window.widget())
        dialog.setObjectName("renameDialog")
        dialog.setWindowTitle("Rename session")
        dialog.setLabelText("Title:")
        dialog.setTextEchoMode(QLineEdit.EchoMode.Normal)
        title = c.tree.title_of(sid)
        dialog.setTextValue(title)
        # wide enough for the title (Qt's default cut a 30-character one), within reason
        room = dialog.fontMetrics().horizontalAdvance(title) + 80
        dialog.resize(max(440, min(room, 760)), dialog.sizeHint().height())
        dialog.textValueSelected.connect(lambda text: self.rename_to(sid, text))
        self.rename_dialog = dialog
        dialog.open()

    def rename_to(self, sid: str, title: str) -> None:
        """Give `sid` a title; Edit → Undo gives it back the one it had (or takes the
        given one away: it is named as before it was renamed)."""
        c = self.window.controller
        if not title.strip():
            return
        row = c.tree.summary(sid)
        # None: it had no title of its own (the Undo takes the given one away)
        before = row["title"] if row is not None and row["titleSet"] else None
        shown = c.tree.title_of(sid)

        def renamed(result: Json) -> None:
            c.apply_row(result)
            c.undo.push(f"Undo rename of “{shown}”", lambda: self._retitle(sid, before),
                        sid, "rename")

        c.ops.run(c.client.rename_session(sid, title.strip()), renamed,
                  what="Renaming the session")

    def _retitle(self, sid: str, title: str | None) -> None:
        c = self.window.controller
        c.ops.run(c.client.rename_session(sid, title), c.apply_row,
                  what="Undoing the rename")

    def confirm_replace(self, row: int) -> None:
        """Edit and replace deletes history: say what goes, then edit in place."""
        c = self.window.controller
        entry = c.transcript.entry(row)
        if entry is None or entry.message_id is None:
            return
        from PySide6.QtWidgets import QMessageBox

        from forkwise.gui.domain.message_actions import replace_cost

        turns, messages = replace_cost(entry, c.transcript.builder)
        box = QMessageBox(QMessageBox.Icon.Warning, "Edit and replace",
                          f"This deletes {turns} turn{'s' if turns != 1 else ''} "
                          f"({messages} message{'s' if messages != 1 else ''}) from this "
                          "session, starting with this message, and sends your edit in "
                          "their place. No copy is kept.",
                          QMessageBox.StandardButton.Cancel, self.window.widget())
        box.setObjectName("confirmReplace")
        box.setInformativeText("“Edit and resend” keeps them: it sends the edit in a new branch.")
        delete = box.addButton("Delete and edit", QMessageBox.ButtonRole.DestructiveRole)
        delete.setObjectName("confirmReplaceButton")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        message_id, text = entry.message_id, entry.text

        def answered(button: Any) -> None:
            if button is delete:
                self.window.composer.begin_edit(message_id, text, replace=True)

        box.buttonClicked.connect(answered)
        self.confirm_box = box
        box.open()

    def compare_with_source(self) -> None:
        c = self.window.controller
        summary = c.tree.summary(c.current) if c.current else None
        parent = summary["parentSession"] if summary else None
        if c.current and isinstance(parent, str):
            self.show_compare(parent, c.current)

    def compare_selected(self) -> None:
        pair = self.pair()
        if pair is not None:
            self.show_compare(*pair)

    def show_compare(self, left: str, right: str) -> None:
        c = self.window.controller

        async def load() -> tuple[list[Json], list[Json]]:
            return await c.client.events(left), await c.client.events(right)

        def landed(logs: tuple[list[Json], list[Json]]) -> None:
            # imported when first asked for: nothing of the window's first frame needs it
            from forkwise.core.reading.compare import compare
            from forkwise.gui.features.branches.compare_view import CompareView

            view = self.compare_view
            if view is None:
                view = self.compare_view = CompareView(self.window.widget())
            view.show_comparison((left, c.tree.title_of(left)), (right, c.tree.title_of(right)),
                                 compare(*logs, title_of=c.tree.title_of))
            view.show()
            view.raise_()

        c.ops.run(load(), landed, what="Comparing sessions")

    def select_pair(self, a: str, b: str) -> None:
        """Select two rows in the tree (what a person does with Ctrl+click)."""
        w, c = self.window, self.window.controller
        from PySide6.QtCore import QItemSelectionModel

        model = w.tree.selectionModel()
        flags = QItemSelectionModel.SelectionFlag
        for i, sid in enumerate((a, b)):
            index = c.proxy.mapFromSource(c.tree.reveal(sid))
            mode = flags.ClearAndSelect if i == 0 else flags.Select
            model.select(index, mode | flags.Rows)

    def title_note(self, sid: str) -> str | None:
        """After an opened fork's title: that its source changed since it was cut."""
        if not self.source_changed(sid):
            return None
        from forkwise.gui.transcript.fork_header import CHANGED_TEXT

        return f"⚠ {CHANGED_TEXT.lower().replace('its ', '')}"


def install(bench: Bench) -> BranchActions:
    """Rename, the sibling steps and Compare in the Session menu and the list's menu; the
    transcript's fork record, edit and retry; "source changed" after the title."""
    branches = BranchActions(bench)
    branches.wire()
    bench.on_transcript(branches.wire_transcript)
    bench.link_rows(RowLinks(anchor_text=branches.anchor_text))
    bench.add_title_note(branches.title_note)
    from forkwise.gui.features.branches.answering_model import install_answer_line

    branches.answer_line = install_answer_line(bench)
    from forkwise.gui.features.branches.fork_questions import ForkQuestions

    # branches of one point that look alike are named by what they asked
    branches.questions = ForkQuestions(bench.controller)
    if bench.controller.loaded:
        branches.questions.scan()
    return branches


def _root(sid: str, tree: Any) -> str:
    seen: set[str] = set()
    while sid not in seen:
        seen.add(sid)
        row = tree.summary(sid)
        parent = row["parentSession"] if row is not None else None
        if not isinstance(parent, str) or tree.summary(parent) is None:
            return sid
        sid = parent
    return sid


def _set(action: QAction, enabled: bool, reason: str, tip: str) -> None:
    """Enabled with what it does, or disabled with why (short text, reason in the tips)."""
    action.setEnabled(enabled)
    text = tip if enabled and tip else reason
    keys = action.shortcut().toString()
    action.setToolTip(f"{text} ({keys})" if keys else text)
    action.setStatusTip(text)
