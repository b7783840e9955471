"""Session housekeeping: Delete (to the store's trash, with Undo in the banner and in
Edit → Undo while the app runs), the Trash window (Session → Trash…), Duplicate (a fork at
the end), and answering the opened session's pending approval from the keyboard. Every
call goes through the client (`session.delete`, `session.restore`, `trash.list`,
`trash.empty`, `session.forkAt`, `session.approve`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QKeySequence

from forkwise.gui.kernel.controller import Controller
from forkwise.gui.shell.bench import ActionSpec, MenuId, Place
from forkwise.gui.shell.menus import keys

if TYPE_CHECKING:  # the client's module comes with the client, after the first frame
    from PySide6.QtWidgets import QWidget

    from forkwise.core.client.api import Json
    from forkwise.gui.features.housekeeping.trash_dialog import TrashDialog
    from forkwise.gui.shell.bench import Bench
    from forkwise.gui.transcript.transcript_view import TranscriptView

#: the window's actions this feature answers (gui/shell/window_wiring makes and places them)
DELETE, DUPLICATE = "actionDeleteSession", "actionDuplicateSession"
APPROVE, DENY = "actionApprove", "actionDeny"
UNDO, TRASH = "actionUndo", "actionShowTrash"


class Housekeeping(QObject):
    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.window = parent
        self.trash: TrashDialog | None = None

    def delete(self, session_id: str | None) -> None:
        """Move a session to the trash; the banner offers Undo."""
        c = self.controller
        if session_id is None:
            return
        title = self._title(session_id)  # its own, as the list names it: not its source's

        def deleted(_result: Json) -> None:
            c.apply_removed(session_id)
            c.undo.push(f"Undo delete of “{title}”", lambda: self.undo_delete(session_id),
                        session_id, "delete")
            c.notifier.info(f"“{title}” moved to the trash.", action_label="Undo",
                            action=lambda: self.undo_delete(session_id, banner=True))

        c.ops.run(c.client.delete_session(session_id), deleted, what="Deleting the session")

    def undo_delete(self, session_id: str, *, banner: bool = False) -> None:
        """Bring a deleted session back (the banner's Undo, or Edit → Undo); the banner's
        also takes its record off Edit → Undo."""
        c = self.controller
        if banner:
            c.undo.discard(session_id, "delete")

        def restored(row: Json) -> None:
            c.apply_row(row)
            c.selectRequested.emit(session_id)
            c.notifier.info(f"“{self._title(session_id)}” is back.")

        c.ops.run(c.client.restore_session(session_id), restored,
                  what="Restoring the session")

    def duplicate(self, session_id: str | None) -> None:
        """A copy of the whole session: a fork at its last event, shown beneath it."""
        c = self.controller
        if session_id is None:
            return
        c.ops.run(c.client.fork_at(session_id, end=True), c.show_new_session,
                  what="Duplicate")  # a failure is shown in the banner

    def pending_approval(self) -> str | None:
        """The opened session's approval that waits for an answer (the latest one)."""
        model = self.controller.transcript_if_built()
        if model is None:  # not built yet: no session was opened
            return None
        for entry in reversed(model.builder.entries):
            if entry.waiting:
                return entry.approval_id
        return None

    def answer(self, approved: bool) -> None:
        approval = self.pending_approval()
        if approval is None:
            self.controller.notifier.info("Nothing in this session waits for an approval.")
            return
        self.controller.approve(approval, approved)

    def _title(self, session_id: str) -> str:
        """What the list calls it (a fork: "<source title> — fork N")."""
        tree = self.controller.tree
        return tree.title_of(session_id) if tree.summary(session_id) else session_id

    def show_trash(self) -> TrashDialog:
        """The Trash window (one, raised again when asked again), read afresh."""
        from forkwise.gui.features.housekeeping.trash_dialog import TrashDialog

        if self.trash is None:
            self.trash = TrashDialog(self.controller, self.window)
        self.trash.reload()
        self.trash.show()
        self.trash.raise_()
        return self.trash


def install(bench: Bench) -> Housekeeping:
    """Delete and Duplicate (the selected session), Approve and Deny (what the opened
    session waits for; enabled while something does)."""
    keeping = Housekeeping(bench.controller, bench.widget())
    bench.action(DELETE).triggered.connect(lambda: keeping.delete(bench.selected_session()))
    bench.action(DUPLICATE).triggered.connect(
        lambda: keeping.duplicate(bench.selected_session()))
    undo = bench.add_action(ActionSpec(
        UNDO, "&Undo", "Take back the last delete or rename",
        keys(QKeySequence.StandardKey.Undo, "Ctrl+Z"), (Place(MenuId.EDIT, -1, 10),),
        keeping.controller.undo.undo))
    bench.add_action(ActionSpec(
        TRASH, "&Trash…", "The deleted sessions: restore one, or delete them for good",
        None, (Place(MenuId.SESSION, 4, 30),), keeping.show_trash))

    def undo_state() -> None:
        latest = keeping.controller.undo.latest()
        undo.setEnabled(latest is not None)
        undo.setText(f"&{latest.text}" if latest is not None else "&Undo")
        undo.setStatusTip(latest.text if latest is not None else "Nothing to undo")

    keeping.controller.undo.changed.connect(undo_state)
    undo_state()
    approve, deny = bench.action(APPROVE), bench.action(DENY)
    approve.triggered.connect(lambda: keeping.answer(True))
    deny.triggered.connect(lambda: keeping.answer(False))

    def update(*_args: object) -> None:
        waiting = keeping.pending_approval() is not None
        approve.setEnabled(waiting)
        deny.setEnabled(waiting)

    def watch(_view: TranscriptView) -> None:
        model = bench.controller.transcript
        for signal in (model.rowsInserted, model.dataChanged, model.modelReset,
                       model.rowsRemoved):
            signal.connect(update)

    bench.on_transcript(watch)
    update()
    return keeping
