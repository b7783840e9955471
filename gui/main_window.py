"""The main window: lineage tree on the left, transcript and composer on the right."""

from __future__ import annotations

import logging
from collections.abc import Callable
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QSettings, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QKeySequence,
    QPaintEvent,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QLabel,
    QLineEdit,
    QMainWindow,
    QSplitter,
    QToolBar,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from .badges import badge_icon
from .composer import Composer
from .context_menu import ContextMenuMixin
from .controller import Controller
from .elided_label import ElidedLabel
from .notify import Banner
from .session_rows import ACTIVITY, ID_ROLE, WAITING_TEXT
from .sort_header import SortHeader
from .tree_columns import TreeColumns
from .viewport import adopt_viewport

# Classes the first frame does not use are imported where they are: importing a PySide
# class creates it and its enums.
if TYPE_CHECKING:
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QMenu

    from .branch_actions import BranchActions
    from .housekeeping import Housekeeping
    from .transcript_view import TranscriptView

log = logging.getLogger(__name__)

FORK_SHORTCUT = "Ctrl+Shift+K"
FORK_TIP = "Fork the selected session at its last completed turn"


def _keys(standard: QKeySequence.StandardKey, fallback: str) -> list[QKeySequence]:
    """The platform's keys for a standard action, or `fallback` where it defines none."""
    return QKeySequence.keyBindings(standard) or [QKeySequence(fallback)]


class SessionTree(ContextMenuMixin, QTreeView):
    """The lineage tree; its row context menu is built by `build_context_menu`."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        self.setHeader(SortHeader(self))  # its arrow points the way the rows go
        self.setObjectName("sessionTree")
        self.setAccessibleName("Sessions")
        self.setAccessibleDescription("Sessions grouped by lineage: forks and subagents "
                                      "beneath the session they came from")
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        # forks differ at the end of their titles ("… — fork 2"): keep both ends in view
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        # two rows (Ctrl+click) can be compared; the current row is the one opened
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setSortingEnabled(True)
        self.setAnimated(False)
        self.setExpandsOnDoubleClick(True)
        # The scroll bar is there from the loading state on: appearing with the rows, it
        # would narrow the viewport and so the stretched Title column under the cursor.
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        # shown while the store opens (the window's first frame comes before the store)
        # (the viewport as gui/viewport wraps it: cheaper before the first frame)
        self.placeholder = QLabel("Loading sessions…", adopt_viewport(self))
        self.placeholder.setObjectName("treePlaceholder")
        self.placeholder.setAccessibleName("Loading sessions")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setEnabled(False)  # drawn in the palette's placeholder grey

        self.rest_pending = False

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.placeholder.setGeometry(self.viewport().rect())

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self.rest_pending and self.model().rowCount():
            # The model hands over its first page of rows at load (they paint at once);
            # the rest follows right after that frame, so that the scroll bar, End and
            # Page Down cover the whole store (laying out 10,000 rows takes ~0.1 s).
            self.rest_pending = False
            QTimer.singleShot(0, self.window_.controller.tree.fetch_all)

    def build_context_menu(self, index: QModelIndex) -> QMenu:
        from PySide6.QtWidgets import QMenu

        w = self.window_
        menu = QMenu(self)
        menu.setObjectName("sessionMenu")
        menu.setToolTipsVisible(True)
        menu.addAction(w.action_fork)
        menu.addAction(w.action_new)
        menu.addAction(w.branches.rename)
        menu.addAction(w.branches.compare)
        menu.addAction(w.action_duplicate)
        menu.addAction(w.action_delete)
        menu.addSeparator()
        copy = menu.addAction("Copy session id")
        copy.setObjectName("actionCopySessionId")
        sid = index.data(ID_ROLE) if index.isValid() else None
        copy.setEnabled(bool(sid))
        copy.triggered.connect(lambda: w.copy_text(str(sid)))
        return menu


#: the composer's text on a session whose log cannot be read
UNREADABLE_TEXT = "This session's file cannot be read: nothing can be written to it"


class MainWindow(QMainWindow):
    #: the transcript's placeholder until the view takes its place (then None: deleted)
    transcript_slot: QAbstractScrollArea | None
    #: built with the rest (`build_rest`)
    branches: BranchActions
    housekeeping: Housekeeping
    _rest_built = False

    def __init__(
        self,
        controller: Controller,
        settings: QSettings,
        *,
        store_label: str = "",
        parent: QWidget | None = None,
        rest_later: bool = False,
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
        self.settings_dialog: Any = None
        self._collapsed: set[str] = set()  # sessions a person collapsed in the tree
        self._build_actions()
        self._build_panes()
        self._build_menus()
        self.action_new.setEnabled(controller.loaded)  # it needs the client: once loaded
        self.tree.placeholder.setVisible(not controller.loaded)
        self._update_fork_action()
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
        from .agents import _start_watching_when_still, install

        install(self)
        if self.controller.loaded:
            _start_watching_when_still(self)

    _banner: Banner | None = None

    @property
    def banner(self) -> Banner:
        """The notifications' strip above the transcript, built when first asked for (at
        the latest after the tree's first rows): hidden until a notice comes, it is not in
        the first frame, and the notifier holds what is posted before it exists."""
        if self._banner is None:
            right = self.header_label.parentWidget()
            assert right is not None  # the detail pane (`_build_panes`)
            self._banner = Banner(self.controller.notifier, right)
            layout = right.layout()
            assert isinstance(layout, QVBoxLayout)
            layout.insertWidget(layout.indexOf(self.header_label) + 1, self._banner)
            self._order_focus()
        return self._banner

    _transcript: TranscriptView | None = None

    @property
    def transcript(self) -> TranscriptView:
        """The transcript view, built (in the placeholder's place) when first asked for."""
        if self._transcript is None:
            self._transcript = self._build_transcript()
        return self._transcript

    def _build_transcript(self) -> TranscriptView:
        from .transcript_view import TranscriptView

        c, slot = self.controller, self.transcript_slot
        assert slot is not None  # built once: `transcript` keeps the view
        right = slot.parentWidget()
        assert right is not None  # the detail pane (`_build_panes`)
        t = TranscriptView(right)
        t.setModel(c.transcript)
        t.title_of = self._title_of
        layout = right.layout()
        assert isinstance(layout, QVBoxLayout)
        layout.replaceWidget(slot, t)
        slot.hide()
        slot.deleteLater()
        self.transcript_slot = None  # no reference left to a deleted widget
        self._transcript = t
        self._order_focus()
        t.forkFromMessage.connect(c.fork_from_message)
        t.forkBeforeMessage.connect(c.fork_before_message)
        t.editResend.connect(self.begin_edit)
        t.sourceRequested.connect(self.select_session)
        t.sessionRequested.connect(self.select_session)  # a subagent's or a fork's link
        t.approvalDecided.connect(c.approve)
        t.endRequested.connect(c.reopen_at_end)
        for signal in (c.transcript.rowsInserted, c.transcript.dataChanged,
                       c.transcript.modelReset, c.transcript.rowsRemoved):
            signal.connect(self._update_approval_actions)
        self.branches.wire_transcript(t)
        return t

    def _order_focus(self) -> None:
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
        """The Search all sessions panel, built when first asked for (hidden): in the
        session pane, where it takes the list's place while open (`show_search`)."""
        if self.search_panel is None:
            from .search_panel import SearchPanel

            pane = self.tree.parentWidget()
            assert pane is not None  # the session pane (`_build_panes`)
            self.search_panel = panel = SearchPanel(self.controller, pane)
            panel.hide()
            layout = pane.layout()
            assert isinstance(layout, QVBoxLayout)
            layout.addWidget(panel, 1)
            panel.resultActivated.connect(
                lambda sid, seq: self.select_session(sid, at_seq=seq or None))
            panel.closeRequested.connect(self.hide_search)
        return self.search_panel

    search_panel: Any = None
    #: the list gives way to the transcript in a small window (gui/pane_balance)
    pane_balance: Any = None

    def set_store_label(self, store_label: str) -> None:
        """The title names the store (and says read-only or shared once that is known)."""
        self.store_label = store_label
        self.setWindowTitle(f"Forkwise — {store_label}" if store_label else "Forkwise")

    # --- building -----------------------------------------------------------------------

    def _action(self, name: str, text: str, shortcut: Any, tip: str) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        if shortcut:
            if isinstance(shortcut, list):
                action.setShortcuts(shortcut)
            else:
                action.setShortcut(shortcut)
        keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        action.setToolTip(f"{tip} ({keys})" if keys else tip)
        action.setStatusTip(tip)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        """The tool bar's actions (the first frame shows them); `_build_more_actions` the
        others."""
        self.action_new = self._action("actionNewSession", "&New session",
                                       _keys(QKeySequence.StandardKey.New, "Ctrl+N"),
                                       "Start an empty session")
        self.action_fork = self._action("actionForkSession", "&Fork", FORK_SHORTCUT, FORK_TIP)
        self.action_fork.setIcon(badge_icon("fork"))
        self.action_stop = self._action("actionStop", "&Stop", "Ctrl+.",
                                        "Cancel the running turn")
        self.action_stop.setEnabled(False)
        self.action_prefs = self._action("actionPreferences", "&Preferences…",
                                         _keys(QKeySequence.StandardKey.Preferences, "Ctrl+,"),
                                         "Choose the model provider")
        self.action_prefs.setMenuRole(QAction.MenuRole.PreferencesRole)

    def _build_more_actions(self) -> None:
        """The actions only the menus, the shortcuts and the list's context menu reach."""
        self.action_find = self._action("actionFind", "&Find…",
                                        _keys(QKeySequence.StandardKey.Find, "Ctrl+F"),
                                        "Filter sessions by title or message text")
        self.action_search = self._action("actionSearchAll", "Search &all sessions…",
                                          "Ctrl+Shift+F",
                                          "Find words in every session's messages and titles")
        self.action_use_model = self._action(
            "actionUseConfiguredModel", "Use the &model from Preferences", None,
            "Answer this session's next turns with the model chosen in Preferences")
        self.action_quit = self._action("actionQuit", "&Quit",
                                        _keys(QKeySequence.StandardKey.Quit, "Ctrl+Q"),
                                        "Close Forkwise")
        self.action_quit.setMenuRole(QAction.MenuRole.QuitRole)
        self.action_about = self._action("actionAbout", "&About Forkwise", None,
                                         "Version and store")
        self.action_delete = self._action("actionDeleteSession", "&Delete session",
                                          _keys(QKeySequence.StandardKey.Delete, "Del"),
                                          "Move the selected session to the store's trash")
        # Delete belongs to the session list: text fields keep their own Delete key
        self.action_delete.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.action_duplicate = self._action("actionDuplicateSession", "D&uplicate session",
                                             "Ctrl+D",
                                             "Copy the whole selected session into a new one")
        self.action_approve = self._action("actionApprove", "&Approve tool call",
                                           "Ctrl+Shift+Y",
                                           "Approve the tool call this session waits for")
        self.action_deny = self._action("actionDeny", "D&eny tool call", "Ctrl+Shift+N",
                                        "Deny the tool call this session waits for")

    def _build_panes(self) -> None:
        c = self.controller
        left = QWidget(self)
        left.setObjectName("sessionPane")
        self.filter_box = QLineEdit(left)
        self.filter_box.setObjectName("filterBox")
        self.filter_box.setAccessibleName("Filter sessions")
        self.filter_box.setPlaceholderText("Filter by title or message text, folder:name")
        self.filter_box.setClearButtonEnabled(True)
        self.tree = SessionTree(self)
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
        self._show_opened("")

    def _build_menus(self) -> None:
        """The menu bar's titles (in the first frame); `_fill_menus` their entries."""
        bar = self.menuBar()
        self.menus: dict[str, QMenu] = {}
        for name, title in (("menuFile", "&File"), ("menuEdit", "&Edit"),
                            ("menuSession", "&Session"), ("menuHelp", "&Help")):
            menu = bar.addMenu(title)
            menu.setObjectName(name)
            self.menus[name] = menu

    def _fill_menus(self) -> None:
        file_menu = self.menus["menuFile"]
        file_menu.addAction(self.action_new)
        file_menu.addSeparator()
        file_menu.addAction(self.action_prefs)
        file_menu.addSeparator()
        file_menu.addAction(self.action_quit)
        edit_menu = self.menus["menuEdit"]
        edit_menu.addAction(self.action_find)
        edit_menu.addAction(self.action_search)
        session_menu = self.menus["menuSession"]
        session_menu.addAction(self.action_fork)
        session_menu.addAction(self.branches.rename)
        session_menu.addSeparator()
        session_menu.addAction(self.branches.previous)
        session_menu.addAction(self.branches.next)
        session_menu.addAction(self.branches.compare)
        session_menu.addSeparator()
        session_menu.addAction(self.action_stop)
        session_menu.addAction(self.action_use_model)
        session_menu.addSeparator()
        session_menu.addAction(self.action_approve)
        session_menu.addAction(self.action_deny)
        session_menu.addSeparator()
        session_menu.addAction(self.action_duplicate)
        session_menu.addAction(self.action_delete)
        self.menus["menuHelp"].addAction(self.action_about)

    def _wire(self) -> None:
        c = self.controller
        self.action_new.triggered.connect(c.new_session)
        self.action_fork.triggered.connect(lambda: c.fork_session(self.selected_session()))
        self.action_stop.triggered.connect(c.cancel)
        self.action_prefs.triggered.connect(self.open_settings)
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(200)
        self._filter_timer.timeout.connect(self._filter_now)
        self.filter_box.textChanged.connect(lambda _t: self._filter_timer.start())
        # message-text matches arrive later: their rows' ancestors are expanded too
        self._expand_timer = QTimer(self)
        self._expand_timer.setSingleShot(True)
        self._expand_timer.setInterval(0)
        self._expand_timer.timeout.connect(self._filter_shown)
        c.proxy.rowsInserted.connect(
            lambda *_a: self._expand_timer.start() if c.proxy.pattern else None)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        c.selectRequested.connect(self._write_next)  # first: opening may be at once
        c.selectRequested.connect(self.select_session)
        c.sessionOpened.connect(self._show_opened)
        c.runningChanged.connect(self._running)
        c.ops.busyChanged.connect(self._busy)
        c.ops.activityChanged.connect(self._activity)  # a method: let go with the window
        c.tree.dataChanged.connect(self._tree_changed)
        c.treeLoaded.connect(self._tree_loaded)
        c.tree.foldersDiffer.connect(lambda: self.columns.offer_folder(True))
        c.treePreviewed.connect(self._tree_previewed)
        c.tree.rowsFetched.connect(self._expand_lineage)
        c.proxy.layoutChanged.connect(self._expand_reordered_lineage)
        c.tree.modelReset.connect(self._collapsed.clear)  # a load expands every lineage
        c.tree.modelAboutToBeReset.connect(self._keep_selection)
        self.tree.collapsed.connect(lambda index: self._expanded_changed(index, False))
        self.tree.expanded.connect(lambda index: self._expanded_changed(index, True))
        c.forkShown.connect(self._fork_shown)
        self.composer.sendRequested.connect(self._send)
        self.composer.stopRequested.connect(c.cancel)

    def build_rest(self) -> None:
        """What the first frame does not show, once: the actions only menus and shortcuts
        reach, the menus' entries, the branch and housekeeping actions, the filter field's
        keys, and every connection (nothing happens in the window before this: the app
        calls it right after the first frame, before it handles input or previews rows).
        The window's own shortcuts work from here on."""
        if self._rest_built:
            return
        self._rest_built = True
        from .branch_actions import BranchActions
        from .field_keys import FieldKeys
        from .housekeeping import Housekeeping

        c = self.controller
        self._build_more_actions()
        self.branches = BranchActions(self)
        self._fill_menus()
        self._wire()
        self.action_find.triggered.connect(self.focus_filter)
        self.action_search.triggered.connect(self.show_search)
        self.housekeeping = Housekeeping(c, self)
        self.tree.addAction(self.action_delete)  # its shortcut works where the list has focus
        self.action_delete.triggered.connect(
            lambda: self.housekeeping.delete(self.selected_session()))
        self.action_duplicate.triggered.connect(
            lambda: self.housekeeping.duplicate(self.selected_session()))
        self.action_approve.triggered.connect(lambda: self.housekeeping.answer(True))
        self.action_deny.triggered.connect(lambda: self.housekeeping.answer(False))
        self.action_use_model.triggered.connect(
            lambda: c.use_configured_model(self.selected_session()))
        self.action_quit.triggered.connect(self.close)
        self.action_about.triggered.connect(self._about)
        # Escape clears the filter (then, empty, hands the keyboard to the list); Down
        # goes to the rows
        FieldKeys(self.filter_box, down=self._filter_to_tree, leave=self._filter_to_tree)
        self.branches.wire()
        self._update_fork_action()
        self._update_approval_actions()

    # --- behaviour --------------------------------------------------------------------------

    def selected_session(self) -> str | None:
        index = self.tree.currentIndex()
        sid = index.siblingAtColumn(0).data(ID_ROLE) if index.isValid() else None
        return str(sid) if sid else None

    def select_session(self, session_id: str, at_seq: int | None = None) -> None:
        """Select `session_id` in the tree (lineage expanded) and open it: at its end, or
        at event `at_seq`."""
        c = self.controller
        source = c.tree.reveal(session_id)  # fetches its top-level row if need be
        if not source.isValid():
            return
        if at_seq is not None:  # opened there first: selecting the row keeps it open
            c.open_session(session_id, at_seq=at_seq)
        index = c.proxy.mapFromSource(source)
        if not index.isValid() and c.proxy.pattern:
            self.filter_box.clear()
            c.search("")
            index = c.proxy.mapFromSource(source)
        parent = index.parent()
        while parent.isValid():
            self.tree.expand(parent)
            parent = parent.parent()
        from PySide6.QtCore import QItemSelectionModel

        self.tree.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.tree.scrollTo(index)
        c.open_session(session_id)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        sid = current.siblingAtColumn(0).data(ID_ROLE) if current.isValid() else None
        if sid and self.controller.loaded:  # a row of the preview opens once loaded
            self.controller.open_session(str(sid))
        self._update_fork_action()

    def _activity(self, _what: str) -> None:
        self._busy(self.controller.ops.busy)

    def _busy(self, busy: bool) -> None:
        # what runs, in the ops' own words ("Importing sessions…"), not just "Working…"
        what = self.controller.ops.activity or "Working"
        self.busy_label.setText(f"{what}…" if busy else "")

    def _fork_shown(self, _sid: str, _seconds: float) -> None:
        self.transcript.follow_to_end()

    def _tree_previewed(self, _count: int) -> None:
        """Rows from the store's index, shown while the store opens: to look at and
        select; opening a session and the actions wait for `_tree_loaded`. The rows after
        the first page wait too: laying them out would hold the host's start back."""
        self.tree.placeholder.hide()
        self._expand_lineage()

    def _keep_selection(self) -> None:
        """The listing replaces a preview's rows (a reset): the row chosen meanwhile is
        chosen again once it is in (`_tree_loaded`)."""
        c = self.controller
        self._kept_selection = self.selected_session() if c.previewed and not c.loaded else None

    _kept_selection: str | None = None

    def _tree_loaded(self, count: int) -> None:
        self.install_agents()
        self.columns.offer_folder(self.controller.tree.several_folders())
        self.tree.placeholder.hide()
        self.tree.rest_pending = True
        self.action_new.setEnabled(True)
        self._expand_lineage()
        current = self.tree.currentIndex()
        kept, self._kept_selection = self._kept_selection, None
        if current.isValid():  # chosen in the preview: opened now
            self._current_changed(current, QModelIndex())
        elif kept is not None and self.controller.tree.summary(kept) is not None:
            self.select_session(kept)
        elif count:
            first = self.controller.proxy.index(0, 0)
            if first.isValid():
                self.tree.setCurrentIndex(first)
        self._update_fork_action()

    def _expand_lineage(self, first: int = 0, last: int | None = None) -> None:
        """Expand the rows with forks or subagents beneath them among the fetched top-level
        rows first..last (expandAll would visit every row: 0.12 s on 10,000 sessions)."""
        model, proxy = self.controller.tree, self.controller.proxy
        for sid in model.lineage_parents(first, last):
            self.tree.expand(proxy.mapFromSource(model.index_for(sid)))

    def _expand_reordered_lineage(self, *_args: Any) -> None:
        """A new order (a sort) can bring top-level rows that were not fetched yet into
        the fetched ones, with no rowsFetched for them: expand the lineage among those.
        Rows a person collapsed stay collapsed."""
        model, proxy = self.controller.tree, self.controller.proxy
        for sid in model.lineage_parents():
            if sid not in self._collapsed:
                self.tree.expand(proxy.mapFromSource(model.index_for(sid)))

    def _expanded_changed(self, index: QModelIndex, expanded: bool) -> None:
        sid = index.data(ID_ROLE)
        if isinstance(sid, str):
            (self._collapsed.discard if expanded else self._collapsed.add)(sid)

    def _tree_changed(self, *_args: Any) -> None:
        sid = self.controller.current
        if sid:
            self._show_opened(sid)

    def _update_approval_actions(self, *_args: Any) -> None:
        waiting = self.housekeeping.pending_approval() is not None
        self.action_approve.setEnabled(waiting)
        self.action_deny.setEnabled(waiting)

    def _update_fork_action(self) -> None:
        has = self.selected_session() is not None and self.controller.loaded
        self.action_fork.setEnabled(has)
        if self._rest_built:
            self.action_use_model.setEnabled(has)
            self.action_delete.setEnabled(has)
            self.action_duplicate.setEnabled(has)
        tip = FORK_TIP if has else "Select a session to fork"
        self.action_fork.setStatusTip(tip)
        self.action_fork.setToolTip(f"{tip} ({FORK_SHORTCUT})")

    def _show_opened(self, sid: str) -> None:
        summary = self.controller.tree.summary(sid) if sid else None
        if summary is None:
            self.header_label.setText("No session open")
            self.composer.set_session(None)
            return
        bits = [self._title_of(sid)]
        if summary.get("error"):
            bits[0] += " — cannot be read"  # as its row says (the banner says why)
        if summary.get("model"):
            bits.append(str(summary["model"]))
        if summary.get("waiting"):
            bits.append(WAITING_TEXT)  # as its row says: it waits for the person, not "running"
        elif summary.get("running"):
            bits.append("running")
        if self.branches.source_changed(sid):
            from .fork_header import CHANGED_TEXT  # (a fork's header: after the first frame)

            bits.append(f"⚠ {CHANGED_TEXT.lower().replace('its ', '')}")
        # cut short, the title gives way first, then the model: a state stays in view
        states = bits[2:] if summary.get("model") else bits[1:]  # running, source changed
        self.header_label.head = bits[0]
        self.header_label.kept = tuple("".join(f"  ·  {bit}" for bit in tail)
                                       for tail in (bits[1:], states) if tail)
        self.header_label.setText("  ·  ".join(bits))
        self.header_label.setToolTip(f"{self.header_label.text()}\nid: {sid}")
        blocked = UNREADABLE_TEXT if summary.get("error") else None
        if blocked or not self.composer.edit.isEnabled() or self._opened_id != sid:
            self.composer.set_session(sid, blocked)
        self._opened_id = sid
        if sid == self._write_in:  # a session just made here: write its next message
            self._write_in = None
            self.composer.edit.setFocus(Qt.FocusReason.OtherFocusReason)

    _opened_id = ""
    _write_in: str | None = None

    def _write_next(self, sid: str) -> None:
        """A new session or a fork was made here (New session, Fork): once it is open, the
        keyboard is in the composer, as in a chat app's new conversation."""
        self._write_in = sid

    def _running(self, running: bool) -> None:
        self.composer.set_running(running)
        self.action_stop.setEnabled(running)

    def begin_edit(self, row: int) -> None:
        """Edit and resend: the edit goes out in a new branch (see BranchActions for the
        confirmed edit in place)."""
        entry = self.controller.transcript.entry(row)
        if entry is not None and entry.message_id is not None:
            self.composer.begin_edit(entry.message_id, entry.text)

    def _send(self, text: str) -> None:
        self.transcript.go_to_end()  # whoever sends wants to see the answer come
        self.controller.send(text, self.composer.sent, editing=self.composer.editing_message,
                             replace=self.composer.replacing)

    def _filter_now(self) -> None:
        self.controller.search(self.filter_box.text())
        self._filter_shown()

    def _filter_shown(self) -> None:
        """While filtering, every match is shown with the path to it (its ancestors are
        expanded: the matching fork is seen beneath its source); once the filter is
        cleared, lineages are expanded as the person left them and the open session is
        selected and in view again."""
        c = self.controller
        if c.proxy.pattern:
            self.tree.expandAll()  # only the matches and their ancestors are rows
            return
        self._expand_reordered_lineage()
        if c.current:
            self.select_session(c.current)

    def _filter_to_tree(self) -> None:
        self.tree.setFocus(Qt.FocusReason.OtherFocusReason)
        if not self.tree.currentIndex().isValid():
            first = self.controller.proxy.index(0, 0)
            if first.isValid():
                self.tree.setCurrentIndex(first)

    def focus_filter(self) -> None:
        self.hide_search(focus=False)
        self.filter_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter_box.selectAll()

    def show_search(self) -> None:
        """The search in the session list's place (the list keeps its selection)."""
        panel = self.search_page
        self.filter_box.hide()
        self.tree.hide()
        panel.show()
        panel.focus()

    def hide_search(self, focus: bool = True) -> None:
        """The session list back in its place, with the keyboard in it."""
        if self.search_panel is None or not self.search_panel.isVisibleTo(self):
            return
        self.search_panel.hide()
        self.filter_box.show()
        self.tree.show()
        if focus:
            self.tree.setFocus(Qt.FocusReason.OtherFocusReason)

    def copy_text(self, text: str) -> None:
        from PySide6.QtGui import QGuiApplication

        QGuiApplication.clipboard().setText(text)

    def _title_of(self, sid: str) -> str:
        return self.controller.tree.title_of(sid)

    def open_settings(self) -> None:
        from .settings_dialog import SettingsDialog

        if self.settings_dialog is None:
            self.settings_dialog = SettingsDialog(self.controller, self)
        self.settings_dialog.load()
        self.settings_dialog.open()

    def _about(self) -> None:
        from forkwise.core import __version__

        self.controller.notifier.info(
            f"Forkwise {__version__} — browse and fork AI-agent sessions. {self.windowTitle()}"
        )

    # --- persistence ----------------------------------------------------------------------

    def _restore(self) -> None:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 800)
        state = self.settings.value("window/splitter")
        if state is not None:
            self.splitter.restoreState(state)
        self.columns.restore()

    def save_state(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/splitter", self.splitter.saveState())
        self.columns.save()
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        super().closeEvent(event)

    def menu_point(self, view: QAbstractItemView, index: QModelIndex) -> QPoint:
        return view.visualRect(index).center()
