"""The main window: lineage tree on the left, transcript and composer on the right."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QKeySequence,
    QPaintEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QLabel,
    QLineEdit,
    QMainWindow,
    QSplitter,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from forkwise.gui.kernel.controller import Controller
from forkwise.gui.kernel.notify import Banner
from forkwise.gui.models.session_rows import ACTIVITY, ID_ROLE, WAITING_TEXT
from forkwise.gui.sessions.session_tree import SessionTree
from forkwise.gui.sessions.tree_columns import TreeColumns
from forkwise.gui.shell.bench import TranscriptCalls
from forkwise.gui.shell.menus import ActionsWindow, keys
from forkwise.gui.transcript.composer import Composer
from forkwise.gui.widgets.badges import badge_icon
from forkwise.gui.widgets.elided_label import ElidedLabel

# Classes the first frame does not use are imported where they are: importing a PySide
# class creates it and its enums.
if TYPE_CHECKING:
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QMenu

    from forkwise.gui.shell.bench import Feature, TitleNote
    from forkwise.gui.shell.filter_page import FilterPage
    from forkwise.gui.shell.tree_keeping import TreeKeeping
    from forkwise.gui.transcript.row_links import RowLinks
    from forkwise.gui.transcript.transcript_view import TranscriptView

log = logging.getLogger(__name__)

FORK_SHORTCUT = "Ctrl+Shift+K"
FORK_TIP = "Fork the selected session at its last completed turn"


def agent_writing_text(tool: str | None) -> str:
    """Stop's tooltip on a turn an agent writes into its own file."""
    from forkwise.gui.widgets.source_badges import tool_name

    who = tool_name(tool) if tool else "its agent"
    return (f"{who} is writing this turn in its own file: it is stopped there, "
            "not here")


#: the composer's text on a session whose log cannot be read
UNREADABLE_TEXT = "This session's file cannot be read: nothing can be written to it"


class MainWindow(ActionsWindow):
    """Implements `Bench` (gui/shell/bench), the interface the features are installed
    through (`features`: the app's list, forkwise.gui.app.features)."""

    #: the transcript's placeholder until the view takes its place (then None: deleted)
    transcript_slot: QAbstractScrollArea | None
    #: built with the rest (`build_rest`, gui/shell/window_wiring)
    action_find: QAction
    action_search: QAction
    action_use_model: QAction
    action_quit: QAction
    action_about: QAction
    action_delete: QAction
    action_duplicate: QAction
    action_approve: QAction
    action_deny: QAction
    #: the filter's debounce, and the expansion of matches that come in later
    filter_timer: QTimer
    expand_timer: QTimer
    _rest_built = False

    def __init__(
        self,
        controller: Controller,
        settings: QSettings,
        *,
        store_label: str = "",
        parent: QWidget | None = None,
        rest_later: bool = False,
        features: Sequence[Feature] = (),
    ) -> None:
        """`rest_later`: what the first frame does not show is left to `build_rest`, which
        the app calls right after that frame (before it handles any input); else it is
        built here."""
        super().__init__(parent)
        self.controller = controller
        self.settings = settings
        self.setObjectName("mainWindow")
        self.set_store_label(store_label)
        self.setAccessibleName("Forkwise")
        self.feature_list = tuple(features)
        #: what each installed feature's `install` returned, by the feature's name
        self.features: dict[str, object] = {}
        self.detail_lines: list[QWidget] = []
        self.title_notes: list[TitleNote] = []
        self.transcript_calls = TranscriptCalls()
        self._build_actions()
        self._build_panes()
        self._build_menus()
        self.action_new.setEnabled(controller.loaded)  # it needs the client: once loaded
        self.tree.placeholder.setVisible(not controller.loaded)
        self.update_actions()
        if not rest_later:
            self.build_rest()
        self._restore()
        # after the first frame (`paintEvent`): the agents' menu entries and the origin
        # line (nothing in that frame shows them; their module is the window's largest)
        self._agents_installed = False
        #: set by the app while the tree fills from the store's index after the first
        #: frame: it calls `install_agents` once those rows are in (they come first)
        self.agents_later = False

    #: called once, at the window's next paint (the app waits for its first frame so); a
    #: Python event filter for it would be handed every event of the window until then
    on_paint: Callable[[], None] | None = None

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self.on_paint is not None:
            call, self.on_paint = self.on_paint, None
            call()
        if not self._agents_installed and not self.agents_later:
            QTimer.singleShot(0, self.install_agents)

    def install_agents(self) -> None:
        """Import…, Agent sources… and Continue in ▸ (`agents.install`), once; if the
        tree loaded first (a window never painted), the agents' folders are watched now."""
        if self._agents_installed:
            return
        self._agents_installed = True
        self.build_rest()  # the agents' entries go in its menus
        self.columns.settle()  # the tree's widths with the style's own margin
        self.banner  # noqa: B018  (built now: notices may come from here on)
        self.transcript  # noqa: B018  (built now: the agents add to its menu)
        for feature in self.feature_list:
            if feature.late:
                self.features[feature.name] = feature.install(self)
        from forkwise.gui.shell.window_wiring import install_late

        install_late(self)

    _banner: Banner | None = None

    @property
    def banner(self) -> Banner:
        """The notifications' strip over the transcript's top, built when first asked for (at
        the latest after the tree's first rows): hidden until a notice comes, it is not in
        the first frame, and the notifier holds what is posted before it exists."""
        if self._banner is None:
            right = self.header_label.parentWidget()
            assert right is not None  # the detail pane (`_build_panes`)
            self._banner = Banner(self.controller.notifier, right)
            # over the transcript's top, not in the layout: showing it moves nothing
            over = self._transcript if self._transcript is not None else self.transcript_slot
            if over is not None:
                self._banner.float_over(over)
            self.order_focus()
        return self._banner

    _transcript: TranscriptView | None = None

    @property
    def transcript(self) -> TranscriptView:
        """The transcript view, built (in the placeholder's place) when first asked for."""
        if self._transcript is None:
            self._transcript = self._build_transcript()
        return self._transcript

    def _build_transcript(self) -> TranscriptView:
        from forkwise.gui.shell.window_wiring import build_transcript

        view = build_transcript(self)
        self._transcript = view
        if self._banner is not None:
            self._banner.float_over(view)
        self.order_focus()
        self.transcript_calls.built(view)
        return view

    def transcript_if_built(self) -> TranscriptView | None:
        return self._transcript

    def on_transcript(self, call: Callable[[TranscriptView], None]) -> None:
        self.transcript_calls.add(call)

    def link_rows(self, links: RowLinks) -> None:
        self.on_transcript(lambda view: view.link_rows(links))

    def widget(self) -> QMainWindow:
        return self

    def order_focus(self) -> None:
        """Tab goes list, banner, transcript, composer, as the panes are laid out: the
        banner and the transcript, built after the first frame, would come last."""
        chain: list[QWidget] = [self.tree]
        if self._banner is not None:
            chain += [self._banner.close_button, self._banner.action_button]
        if self._transcript is not None:
            chain.append(self._transcript)
        chain += [self.composer.edit, self.composer.send_button, self.composer.stop_button]
        for first, second in pairwise(chain):
            QWidget.setTabOrder(first, second)

    @property
    def search_page(self) -> Any:
        """The Search all sessions panel (`FilterPage.search_page`)."""
        return self.filter_page.search_page()

    _filter_page: FilterPage | None = None

    @property
    def filter_page(self) -> FilterPage:
        """The filter field's and the search page's behaviour, built when first used."""
        if self._filter_page is None:
            from forkwise.gui.shell.filter_page import FilterPage

            self._filter_page = FilterPage(self, self.tree_keeping)
        return self._filter_page

    _tree_keeping: TreeKeeping | None = None

    @property
    def tree_keeping(self) -> TreeKeeping:
        """The tree's selection and expansion kept as its rows change, built when first
        used (by the connections `build_rest` makes)."""
        if self._tree_keeping is None:
            from forkwise.gui.shell.tree_keeping import TreeKeeping

            self._tree_keeping = TreeKeeping(self)
        return self._tree_keeping

    search_panel: Any = None
    #: the list gives way to the transcript in a small window (gui/shell/pane_balance)
    pane_balance: Any = None

    def set_store_label(self, store_label: str) -> None:
        """The title names the store (and says read-only or shared once that is known)."""
        self.store_label = store_label
        self.setWindowTitle(f"Forkwise — {store_label}" if store_label else "Forkwise")

    # --- building -----------------------------------------------------------------------

    def add_detail_line(self, line: QWidget) -> None:
        right = self.header_label.parentWidget()
        assert right is not None  # the detail pane (`_build_panes`)
        layout = right.layout()
        assert isinstance(layout, QVBoxLayout)
        below = layout.indexOf(self.header_label) + 1 + len(self.detail_lines)
        layout.insertWidget(below, line)
        self.detail_lines.append(line)

    def add_title_note(self, note: TitleNote) -> None:
        self.title_notes.append(note)

    def refresh_title(self) -> None:
        self.show_opened(self.controller.current or "")

    def _build_actions(self) -> None:
        """The tool bar's actions (the first frame shows them); `build_more_actions`
        (gui/shell/window_wiring) the others."""
        self.action_new = self.make_action("actionNewSession", "&New session",
                                       keys(QKeySequence.StandardKey.New, "Ctrl+N"),
                                       "Start an empty session")
        self.action_fork = self.make_action("actionForkSession", "&Fork", FORK_SHORTCUT, FORK_TIP)
        self.action_fork.setIcon(badge_icon("fork"))
        self.action_stop = self.make_action("actionStop", "&Stop", "Ctrl+.",
                                        "Cancel the running turn")
        self.action_stop.setEnabled(False)
        self.action_prefs = self.make_action("actionPreferences", "&Preferences…",
                                         keys(QKeySequence.StandardKey.Preferences, "Ctrl+,"),
                                         "Choose the model provider")
        self.action_prefs.setMenuRole(QAction.MenuRole.PreferencesRole)

    def _build_panes(self) -> None:
        c = self.controller
        left = QWidget(self)
        left.setObjectName("sessionPane")
        self.filter_box = QLineEdit(left)
        self.filter_box.setObjectName("filterBox")
        self.filter_box.setAccessibleName("Filter sessions")
        self.filter_box.setPlaceholderText("Filter by title or message text, folder:name")
        self.filter_box.setClearButtonEnabled(True)
        self.tree = SessionTree(self, c)
        self.tree.enter_rows = lambda: self.transcript.setFocus(Qt.FocusReason.TabFocusReason)
        self.tree.setModel(c.proxy)
        self.tree.sortByColumn(ACTIVITY, Qt.SortOrder.DescendingOrder)
        self.columns = TreeColumns(self.tree, self.settings)
        lay = QVBoxLayout(left)
        lay.setContentsMargins(6, 6, 0, 6)
        lay.addWidget(self.filter_box)
        lay.addWidget(self.tree, 1)

        right = QWidget(self)
        right.setObjectName("sessionDetail")
        # elided in the middle, as the tree does: a fork's "— fork 2" stays in view
        self.header_label = ElidedLabel(right, Qt.TextElideMode.ElideMiddle)
        self.header_label.setObjectName("sessionHeader")
        self.header_label.setAccessibleName("Opened session")
        self.header_label.setTextFormat(Qt.TextFormat.PlainText)
        self.header_label.setContentsMargins(8, 4, 8, 0)
        font = self.header_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        font.setBold(True)
        self.header_label.setFont(font)
        # The transcript view in the first frame is this empty frame of the same look:
        # its module (the window's largest) and its widget come once they are used
        # (`transcript`), at the latest right after the tree's first rows (`install_agents`).
        # (a scroll area draws the list view's frame and base-coloured viewport)
        slot = QAbstractScrollArea(right)
        slot.setObjectName("transcriptSlot")
        self.transcript_slot = slot
        self.composer = Composer(right)
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 6, 6, 0)
        rl.setSpacing(4)
        rl.addWidget(self.header_label)
        rl.addWidget(slot, 1)
        rl.addWidget(self.composer)

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.setAccessibleName("Sessions and transcript")
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([500, 780])
        self.setCentralWidget(self.splitter)

        self.toolbar = QToolBar("Main", self)
        self.toolbar.setObjectName("mainToolbar")
        self.toolbar.setAccessibleName("Main toolbar")
        self.toolbar.setMovable(False)
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toolbar.addAction(self.action_new)
        self.toolbar.addAction(self.action_fork)
        self.toolbar.addAction(self.action_stop)
        self.toolbar.addSeparator()
        self.toolbar.addAction(self.action_prefs)
        self.addToolBar(self.toolbar)
        self.busy_label = QLabel("", self)
        self.busy_label.setObjectName("busyLabel")
        self.busy_label.setAccessibleName("Activity")
        self.statusBar().addPermanentWidget(self.busy_label)
        self.show_opened("")

    def _build_menus(self) -> None:
        """The menu bar's titles (in the first frame); `fill_menus` (gui/shell/window_wiring)
        their entries."""
        bar = self.menuBar()
        #: by their ids (`MenuId`'s values: the bench module is not on the first frame's path)
        self.menus: dict[str, QMenu] = {}
        for menu_id, title in (("menuFile", "&File"), ("menuEdit", "&Edit"),
                               ("menuSession", "&Session"), ("menuHelp", "&Help")):
            menu = bar.addMenu(title)
            menu.setObjectName(menu_id)
            self.menus[menu_id] = menu

    def build_rest(self, features: Sequence[Feature] | None = None) -> None:
        """What the first frame does not show, once: the actions only menus and shortcuts
        reach, the menus' entries, the features not marked late (`features`, given here by
        the app: their list is not on the first frame's path), the filter field's keys,
        and every connection (nothing happens in the window before this: the app calls it
        right after the first frame, before it handles input or previews rows). The
        window's own shortcuts work from here on."""
        if features is not None:
            self.feature_list = tuple(features)
        if self._rest_built:
            return
        self._rest_built = True
        from forkwise.gui.shell.window_wiring import build_rest

        build_rest(self, self.filter_page, self.tree_keeping)
        for feature in self.feature_list:
            if not feature.late:
                self.features[feature.name] = feature.install(self)
        self.update_actions()

    # --- behaviour --------------------------------------------------------------------------

    def selected_session(self) -> str | None:
        index = self.tree.currentIndex()
        sid = index.siblingAtColumn(0).data(ID_ROLE) if index.isValid() else None
        return str(sid) if sid else None

    def select_session(self, session_id: str, at_seq: int | None = None) -> None:
        """Select `session_id` in the tree and open it (`TreeKeeping.select`)."""
        self.tree_keeping.select(session_id, at_seq)

    def current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        sid = current.siblingAtColumn(0).data(ID_ROLE) if current.isValid() else None
        if sid and self.controller.loaded:  # a row of the preview opens once loaded
            self.controller.open_session(str(sid))
        self.update_actions()

    def activity(self, _what: str) -> None:
        self.busy(self.controller.ops.busy)

    def busy(self, busy: bool) -> None:
        # what runs, in the ops' own words ("Importing sessions…"), not just "Working…"
        what = self.controller.ops.activity or "Working"
        self.busy_label.setText(f"{what}…" if busy else "")

    def fork_shown(self, _sid: str, _seconds: float) -> None:
        self.transcript.follow_to_end()

    def tree_changed(self, *_args: Any) -> None:
        sid = self.controller.current
        if sid:
            self.show_opened(sid)

    def session_ready(self) -> bool:
        return self.selected_session() is not None and self.controller.loaded

    def update_actions(self) -> None:
        """Fork and the actions that need a session: enabled while one is selected."""
        has = self.session_ready()
        self.action_fork.setEnabled(has)
        for action in self.session_actions:
            action.setEnabled(has)
        tip = FORK_TIP if has else "Select a session to fork"
        self.action_fork.setStatusTip(tip)
        self.action_fork.setToolTip(f"{tip} ({FORK_SHORTCUT})")

    def show_opened(self, sid: str) -> None:
        summary = self.controller.tree.summary(sid) if sid else None
        if summary is None:
            self.header_label.setText("No session open")
            self.composer.set_session(None)
            return
        bits = [self.title_of(sid)]
        if summary["error"]:
            bits[0] += " — cannot be read"  # as its row says (the banner says why)
        if summary["model"]:
            bits.append(str(summary["model"]))
        if summary["waiting"]:
            bits.append(WAITING_TEXT)  # as its row says: it waits for the person, not "running"
        elif summary["running"]:
            bits.append("running")
        bits += [text for note in self.title_notes if (text := note(sid))]
        # cut short, the title gives way first, then the model: a state stays in view
        states = bits[2:] if summary["model"] else bits[1:]  # running, source changed
        self.header_label.head = bits[0]
        self.header_label.kept = tuple("".join(f"  ·  {bit}" for bit in tail)
                                       for tail in (bits[1:], states) if tail)
        self.header_label.setText("  ·  ".join(bits))
        self.header_label.setToolTip(f"{self.header_label.text()}\nid: {sid}")
        blocked = UNREADABLE_TEXT if summary["error"] else None
        if blocked or not self.composer.edit.isEnabled() or self._opened_id != sid:
            self.composer.set_session(sid, blocked)
        self._opened_id = sid
        if sid == self._write_in:  # a session just made here: write its next message
            self._write_in = None
            self.composer.edit.setFocus(Qt.FocusReason.OtherFocusReason)

    _opened_id = ""
    _write_in: str | None = None

    def write_next(self, sid: str) -> None:
        """A new session or a fork was made here (New session, Fork): once it is open, the
        keyboard is in the composer, as in a chat app's new conversation."""
        self._write_in = sid

    def running(self, running: bool) -> None:
        """Stop while a turn runs, unless the turn is the agent's an imported session came
        from (`agents_turn`): then Stop is off and its tooltip says who writes it."""
        c = self.controller
        elsewhere = None
        if running and c.transcript.agents_turn:
            summary = c.tree.summary(c.current or "")
            elsewhere = agent_writing_text(summary["source"] if summary else None)
        self.composer.set_running(running, elsewhere)
        self.action_stop.setEnabled(running and elsewhere is None)
        tip = elsewhere or "Cancel the running turn"
        self.action_stop.setStatusTip(tip)
        self.action_stop.setToolTip(tip)

    def begin_edit(self, row: int) -> None:
        """Edit and resend: the edit goes out in a new branch (see BranchActions for the
        confirmed edit in place)."""
        entry = self.controller.transcript.entry(row)
        if entry is not None and entry.message_id is not None:
            self.composer.begin_edit(entry.message_id, entry.text)

    def send(self, text: str) -> None:
        self.transcript.go_to_end()  # whoever sends wants to see the answer come
        self.controller.send(text, self.composer.sent, editing=self.composer.editing_message,
                             replace=self.composer.replacing)

    def focus_filter(self) -> None:
        self.filter_page.focus_filter()

    def show_search(self) -> None:
        """The search in the session list's place (`FilterPage.show_search`)."""
        self.filter_page.show_search()

    def hide_search(self, focus: bool = True) -> None:
        """The session list back in its place (`FilterPage.hide_search`)."""
        self.filter_page.hide_search(focus)

    def copy_text(self, text: str) -> None:
        from PySide6.QtGui import QGuiApplication

        QGuiApplication.clipboard().setText(text)

    def title_of(self, sid: str) -> str:
        return self.controller.tree.title_of(sid)

    # --- persistence ----------------------------------------------------------------------

    def _restore(self) -> None:
        """The window's saved place and size. Qt refuses a geometry saved on a screen of
        another width (by more than a quarter: a laptop's, reopened on a larger monitor),
        and the window then came up at its bare size hint (626x397): its saved size is
        kept apart and restored then, within the screen."""
        geometry = self.settings.value("window/geometry")
        if geometry is None:
            self.resize(1280, 800)
        elif not self.restoreGeometry(geometry):
            size = self.settings.value("window/size")
            wanted = size if isinstance(size, QSize) and size.isValid() else QSize(1280, 800)
            screen = self.screen()
            if screen is not None:
                wanted = wanted.boundedTo(screen.availableGeometry().size())
            self.resize(wanted)
        state = self.settings.value("window/splitter")
        if state is not None and self.list_chosen():
            self.splitter.restoreState(state)
        else:  # the list's fair share of this window's width (gui/shell/pane_balance)
            from forkwise.gui.shell.pane_balance import balanced, fair_share

            share = fair_share(self.width())
            self.splitter.setSizes(balanced([share, self.width() - share], share))
        self.columns.restore()

    def list_chosen(self) -> bool:
        """Whether the person set the list's width (dragged the panes' handle)."""
        return str(self.settings.value("window/listChosen", "false")).lower() == "true"

    def save_state(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/size", self.normalGeometry().size()
                               if self.isMaximized() or self.isFullScreen() else self.size())
        self.settings.setValue("window/splitter", self.splitter.saveState())
        balance = self.pane_balance
        chosen = balance.chosen if balance is not None else self.list_chosen()
        self.settings.setValue("window/listChosen", chosen)
        self.columns.save()
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        super().closeEvent(event)

    def menu_point(self, view: QAbstractItemView, index: QModelIndex) -> QPoint:
        return view.visualRect(index).center()
