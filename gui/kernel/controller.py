"""What the window does with the client: open, prompt, approve and — above all — fork.

Every client call goes through the `OpRunner`; notifications from the client come in
through a Qt signal (so a call from another thread is queued onto the GUI thread) and are
applied to the item models row by row.

Signals: `selectRequested(session_id)` (the window selects, expands and opens that row),
`sessionOpened(session_id)`, `forkShown(child_id, seconds)` (a fork's child is on screen),
`runningChanged(bool)` (the opened session's turn state), `treeLoaded(count)` (the
catalogue is in the tree), `treePreviewed(count)` (rows from the store's index are, before
the client is there).

The window is built before the store is open (its first frame comes first): a Controller
made without a client gets one in `start(client)`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from forkwise.core.client.rows import session_row
from forkwise.core.errors import HostUnavailable, WorkspaceAttachFailed
from forkwise.core.reading.entries import TURN_END
from forkwise.gui.kernel.notify import Notifier
from forkwise.gui.kernel.ops import OpRunner
from forkwise.gui.kernel.undo import UndoHistory
from forkwise.gui.models.session_filter import SessionFilterProxy, split_folder
from forkwise.gui.models.session_model import SessionTreeModel

if TYPE_CHECKING:  # the client's module comes with the client, after the first frame
    from forkwise.core.client.api import ClientAPI, Json, Notification, Unsubscribe
    from forkwise.gui.models.transcript_model import TranscriptModel

log = logging.getLogger(__name__)


class Controller(QObject):
    selectRequested = Signal(str)
    sessionOpened = Signal(str)
    forkShown = Signal(str, float)
    runningChanged = Signal(bool)
    treeLoaded = Signal(int)
    treePreviewed = Signal(int)
    #: the one change signal: a session's row came, changed or went (its id); the
    #: catalogue's notifications and the ops' results both reach the tree through
    #: `apply_row` / `apply_removed`, which emit it
    sessionChanged = Signal(str)
    _notified = Signal(object)

    def __init__(
        self, client: ClientAPI | None, notifier: Notifier, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._client = client
        self.notifier = notifier
        self.ops = OpRunner(notifier, self)
        #: what Edit → Undo takes back (deletes, renames), newest first
        self.undo = UndoHistory(self)
        self.tree = SessionTreeModel(self)
        self.proxy = SessionFilterProxy(self)
        self.proxy.setSourceModel(self.tree)
        self.current: str | None = None
        self.loaded = False
        #: the tree holds rows from the store's index, not yet the client's listing
        self.previewed = False
        self._unsubscribe: Unsubscribe | None = None
        self._fork_started: dict[str, float] = {}
        self._pending_fork: float | None = None
        self._notified.connect(self._apply)
        from forkwise.gui.kernel.usage_refresh import UsageRefresh

        #: the rows' own usage (the Cost column), asked once the tree is loaded
        self.usage = UsageRefresh(self.tree, self.ops)

    _transcript: TranscriptModel | None = None

    @property
    def transcript(self) -> TranscriptModel:
        """The opened session's rows: built when first asked for (the window's transcript
        view does so after the first frame, which shows none)."""
        if self._transcript is None:
            from forkwise.gui.models.transcript_model import TranscriptModel

            self._transcript = TranscriptModel(self)
            self._transcript.pageRequested.connect(self._fetch_page)
        return self._transcript

    def transcript_if_built(self) -> TranscriptModel | None:
        """The transcript model, or None while nothing has asked for it (no rows yet)."""
        return self._transcript

    # --- start-up -----------------------------------------------------------------

    @property
    def client(self) -> ClientAPI:
        if self._client is None:  # the window keeps what needs it disabled until then
            raise HostUnavailable("the store is still being opened")
        return self._client

    def start(self, client: ClientAPI | None = None) -> None:
        """Subscribe, then load the catalogue (notifications that arrive in between are
        applied as row changes on top of the load). `client`: the one this controller
        was made without."""
        if client is not None:
            self._client = client
        self.ops.run(self._start(), self._started, what="Loading the sessions")

    async def _start(self) -> list[Json]:
        self._unsubscribe = await self.client.subscribe(self._on_note)
        # the client listed the catalogue when it connected and keeps it current from
        # notifications: no second listing of the whole store
        return list(self.client.catalogue.values())

    def preview(self, rows: list[Json]) -> None:
        """Rows from the store's index before the client is there (`indexed_rows`): into
        the tree, to be looked at; what needs the client waits for `start`."""
        if self.loaded or not rows:
            return
        self.tree.load(rows)
        self.previewed = True
        self.treePreviewed.emit(len(rows))

    def _started(self, rows: list[Json]) -> None:
        if self.previewed:  # the listing over the preview: only the rows that differ change
            self.tree.merge(rows)
        else:
            self.tree.load(rows)
        self.loaded = True
        self.treeLoaded.emit(len(rows))
        self.usage.load(self.client)

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            unsubscribe, self._unsubscribe = self._unsubscribe, None
            await unsubscribe()

    # --- notifications --------------------------------------------------------------

    def _on_note(self, note: Notification) -> None:
        self._notified.emit(note)  # queued onto the GUI thread when called from elsewhere

    def _apply(self, note: Notification) -> None:
        from forkwise.core.client.api import (
            CATALOGUE_REMOVE,
            CATALOGUE_UPSERT,
            SESSION_DELTA,
            SESSION_EVENTS,
            SESSION_TRUNCATE,
            SESSION_TURN,
        )

        if note["kind"] == CATALOGUE_UPSERT:
            self.apply_row(note["summary"])
        elif note["kind"] == CATALOGUE_REMOVE:
            self.apply_removed(str(note["sessionId"]))
        elif note["kind"] == SESSION_EVENTS:
            sid = note["sessionId"]
            self.transcript.append_events(str(sid), list(note["events"] or ()))
            if sid == self.current:
                self.runningChanged.emit(self.transcript.running)
        elif note["kind"] == SESSION_DELTA:
            self.transcript.delta(str(note["sessionId"]), note["turn"], str(note["text"]))
        elif note["kind"] == SESSION_TRUNCATE:
            self.transcript.truncate(str(note["sessionId"]), int(note["through_sequence"]))
        elif note["kind"] == SESSION_TURN and note["sessionId"] == self.current:
            running = bool(note["running"])
            if not running:
                self.transcript.end_stream(str(note["sessionId"]))
            self.runningChanged.emit(running or self.transcript.running)

    def apply_row(self, data: Json) -> None:
        """The one way a session's row reaches the tree: a catalogue notification and an
        op's result (a rename, a restore, a new fork) both come here; the host's
        notification of the same row does nothing more (`upsert` of an unchanged row)."""
        row = session_row(data)
        before = self.tree.summary(row["id"])
        self.tree.upsert(row)
        self.usage.changed(before, row)
        if row["id"] == self.current:
            self.transcript.summary = session_row(dict(row))
        self.sessionChanged.emit(row["id"])

    def apply_removed(self, session_id: str) -> None:
        """The one way a session leaves the tree (deleted here, or the host said so)."""
        self.tree.remove(session_id)
        if session_id == self.current:
            self.open_session(None)
        self.sessionChanged.emit(session_id)

    # --- opening ----------------------------------------------------------------------

    def open_session(self, session_id: str | None, *, from_end: bool = True,
                     at_seq: int | None = None) -> None:
        """Show `session_id` at its end (its last page first), from its top
        (`from_end=False`), or at event `at_seq` (a search result). Opening the session
        that is shown at its end again does nothing."""
        if session_id == self.current and session_id is not None and at_seq is None \
                and from_end:
            return
        self.current = session_id
        summary = self.tree.summary(session_id) if session_id else None
        self.transcript.open(session_id, summary, from_end=from_end, at_seq=at_seq)
        if session_id is not None:
            self.transcript.fetchMore()
        self.sessionOpened.emit(session_id or "")
        self.runningChanged.emit(summary is not None and summary["running"])

    def reopen_at_end(self) -> None:
        """Show the opened session again from its end (Ctrl+End far from it)."""
        sid, self.current = self.current, None
        self.open_session(sid)

    def _fetch_page(self, session_id: str, after: int, limit: int) -> None:
        def landed(events: list[Json]) -> None:
            self.transcript.add_page(session_id, after, events)
            self._maybe_fork_shown(session_id)
            if session_id == self.current and self.transcript.at_end:
                # whose the open turn is (the agent's, in an imported session) is known now
                self.runningChanged.emit(self.transcript.running)

        def failed(exc: BaseException) -> None:
            self.transcript.page_failed(session_id)
            self.notifier.error(exc, "Loading the transcript")

        self.ops.run(self.client.events(session_id, after, limit), landed, failed,
                     what="Loading the transcript")

    # --- prompting ----------------------------------------------------------------------

    def send(self, text: str, done: Any, editing: str | None = None,
             replace: bool = False) -> None:
        """Send `text` to the opened session (`done()` when the host accepted it). With
        `editing` (a message id): edit and resend — by default in a new branch forked
        before that message's turn (the session keeps its history); with
        `replace`, in place (that message and what follows are deleted first)."""
        sid = self.current
        if sid is None:
            return
        if editing is not None and replace:
            self.ops.run(self._edit_and_replace(sid, editing, text), lambda _r: done(),
                         self._text_kept_failure("Edit and replace"),
                         what="Edit and replace")
        elif editing is not None:
            self._pending_fork = time.perf_counter()
            self.ops.run(self._branch_and_send(sid, editing, text), lambda _r: done(),
                         self._branch_failed("Edit and resend"), what="Edit and resend")
        else:
            self.ops.run(self.client.prompt(sid, text), lambda _r: done(),
                         self._text_kept_failure("Sending"),
                         what="Sending")

    def retry(self, row: int) -> None:
        """Retry an answer: a branch forked before its turn asks the same question again."""
        entry = self.transcript.entry(row)
        from forkwise.gui.domain.message_actions import question_of

        question = (question_of(entry, self.transcript.builder)
                    if entry is not None else None)
        if self.current is None or question is None or question.message_id is None:
            return
        self._ask_again(self.current, question.message_id, question.text)

    def _ask_again(self, sid: str, message_id: str, text: str) -> None:
        self._pending_fork = time.perf_counter()
        self.ops.run(self._branch_and_send(sid, message_id, text),
                     None, self._branch_failed("Retry"), what="Retry")

    def _failed_question(self, sid: str) -> tuple[str, str] | None:
        """The question of the opened session `sid`'s last turn, if that turn failed."""
        from forkwise.gui.domain.message_actions import question_of

        if sid != self.current:
            return None
        builder = self.transcript.builder
        last = next((e for e in reversed(builder.entries) if e.kind == TURN_END), None)
        if last is None or last.text != "failed":
            return None
        question = question_of(last, builder)
        if question is None or question.message_id is None:
            return None
        return question.message_id, question.text

    def _text_kept_failure(self, what: str) -> Callable[[BaseException], None]:
        """The failure handler of sending: the composer keeps the text, and says so."""

        def failed(exc: BaseException) -> None:
            self.notifier.error(exc, what, text_kept=True)

        return failed

    def _branch_failed(self, what: str) -> Callable[[BaseException], None]:
        def failed(exc: BaseException) -> None:
            self._pending_fork = None
            if isinstance(exc, WorkspaceAttachFailed):
                self._fork_failed(exc)  # the child exists: into the tree, then the error
                return
            self.notifier.error(exc, what, text_kept=what != "Retry")

        return failed

    async def _branch_and_send(self, sid: str, message_id: str, text: str) -> Json:
        """Fork before `message_id`'s turn, show the child, then send `text` in it. The
        source is not touched."""
        child = await self.client.fork_at_message(sid, message_id, include_message=False)
        self._landed(child)  # on the GUI thread (the qasync loop): selected and opened
        await self.client.prompt(child["id"], text)
        return child

    async def _edit_and_replace(self, sid: str, message_id: str, text: str) -> Json:
        await self.client.fork_at_message(sid, message_id, include_message=False, replace=True)
        return await self.client.prompt(sid, text)

    def cancel(self) -> None:
        """Stop the opened session's turn; never an imported session's turn its agent is
        writing (a cancel written into this copy would be lost when the agent appends)."""
        if self.current is not None and not self.transcript.agents_turn:
            self.ops.run(self.client.cancel(self.current), what="Stopping the turn")

    def approve(self, approval_id: str, approved: bool) -> None:
        if self.current is not None:
            self.ops.run(self.client.approve(self.current, approval_id, approved),
                         what="Answering the approval")

    def new_session(self) -> None:
        self._pending_fork = None
        self.ops.run(self.client.create_session(), self._landed, what="Creating a session")

    def use_configured_model(self, session_id: str | None = None) -> None:
        """Switch a session to the model Preferences name (a session otherwise keeps the
        model it started with); refused by the host while a turn runs."""
        sid = session_id or self.current
        if sid is None:
            return

        async def switch() -> Json:
            choice = await self.client.reload_settings()
            row: Json = await self.client.set_model(
                sid, choice["provider"], choice["model"], choice.get("reasoning")
            )
            return row

        failed = self._failed_question(sid)

        def switched(row: Json) -> None:
            self.apply_row(row)
            now = f"This session now uses {row['model']} ({row['provider']})."
            if failed is None:
                self.notifier.info(now)
                return
            # the failed turn's hint sent the person here to have the question answered:
            # switching alone answered nothing, and the question had to be typed again
            message_id, text = failed
            words = text if len(text) <= 40 else text[:37].rstrip() + "…"
            self.notifier.info(f"{now} Retry asks “{words}” again with it, in a branch.",
                               action_label="Retry",
                               action=lambda: self._ask_again(sid, message_id, text))

        self.ops.run(switch(), switched, what="Switching the model")

    # --- forking ------------------------------------------------------------------------

    def fork_session(self, session_id: str | None = None) -> None:
        """Row Fork: the whole session through its last completed turn."""
        sid = session_id or self.current
        if sid is None:
            self.notifier.info("Select a session to fork first.")
            return
        self._pending_fork = time.perf_counter()
        self.ops.run(self.client.fork(sid), self._landed, self._fork_failed, what="Fork")

    def fork_from_message(self, row: int) -> None:
        entry = self.transcript.entry(row)
        if self.current is None or entry is None or entry.message_seq is None:
            return
        self._pending_fork = time.perf_counter()
        self.ops.run(self.client.fork(self.current, at_seq=entry.message_seq),
                     self._landed, self._fork_failed, what="Fork")

    def fork_before_message(self, row: int) -> None:
        entry = self.transcript.entry(row)
        if self.current is None or entry is None or entry.message_id is None:
            return
        self._pending_fork = time.perf_counter()
        self.ops.run(
            self.client.fork_at_message(self.current, entry.message_id, include_message=False),
            self._landed, self._fork_failed, what="Fork",
        )

    def _landed(self, summary: Json) -> None:
        """A new session (a fork's child): into the tree beneath its source, then shown.
        The host's catalogue notification brings the same row (before or after this):
        the tree puts it in once (`upsert` of an unchanged row does nothing)."""
        self.apply_row(summary)
        if self._pending_fork is not None:
            self._fork_started[summary["id"]] = self._pending_fork
            self._pending_fork = None
        self.selectRequested.emit(summary["id"])

    def show_new_session(self, summary: Json) -> None:
        """A session made by another verb (a duplicate): beneath its source, shown."""
        self._landed(summary)

    def _fork_failed(self, exc: BaseException) -> None:
        self._pending_fork = None
        if isinstance(exc, WorkspaceAttachFailed):
            child = exc.details.get("childId")
            summary = self.client.catalogue.get(child) if isinstance(child, str) else None
            if summary is not None:
                self.apply_row(summary)
                self.selectRequested.emit(summary["id"])
        self.notifier.error(exc, "Fork")

    def _maybe_fork_shown(self, session_id: str) -> None:
        started = self._fork_started.pop(session_id, None)
        if started is not None:
            elapsed = time.perf_counter() - started
            log.info("fork child %s shown %.3f s after the click", session_id, elapsed)
            self.forkShown.emit(session_id, elapsed)

    # --- search ------------------------------------------------------------------------

    def search(self, pattern: str) -> None:
        """Filter the tree: titles at once, message text when the client has answered."""
        if pattern.strip():
            self.tree.fetch_all()  # the filter sees only the rows the model has shown
        self.proxy.set_pattern(pattern)
        _folder, words = split_folder(pattern)
        if words:
            self.ops.run(self._text_hits(words),
                         lambda hits: self.proxy.set_text_hits(pattern, hits),
                         what="Searching messages")
        elif pattern.strip():  # `folder:` alone: no message text to look for
            self.proxy.set_text_hits(pattern, set())

    async def _text_hits(self, needle: str) -> set[str]:
        """Sessions with the words of `needle` in a message, from the host's index (one
        call, however many sessions the store holds)."""
        hits = await self.client.search(needle, 500)
        return {str(h["sessionId"]) for h in hits}
