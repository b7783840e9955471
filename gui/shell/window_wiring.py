"""What the main window builds after its first frame (`MainWindow.build_rest`): the actions
only menus and shortcuts reach, the menus' entries, every connection of the controller's
signals, and the transcript view in its placeholder's place. Imported once that frame is
painted: nothing here is on the first frame's path."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QVBoxLayout

from forkwise.gui.shell.main_window import _keys

if TYPE_CHECKING:
    from forkwise.gui.shell.main_window import MainWindow
    from forkwise.gui.transcript.transcript_view import TranscriptView


def build_rest(w: MainWindow) -> None:
    """The body of `MainWindow.build_rest` (which keeps it to once)."""
    from forkwise.gui.features.branches.branch_actions import BranchActions
    from forkwise.gui.features.housekeeping.housekeeping import Housekeeping
    from forkwise.gui.widgets.field_keys import FieldKeys

    c = w.controller
    build_more_actions(w)
    w.branches = BranchActions(w)
    fill_menus(w)
    wire(w)
    w.action_find.triggered.connect(w.focus_filter)
    w.action_search.triggered.connect(w.show_search)
    w.housekeeping = Housekeeping(c, w)
    w.tree.addAction(w.action_delete)  # its shortcut works where the list has focus
    w.action_delete.triggered.connect(
        lambda: w.housekeeping.delete(w.selected_session()))
    w.action_duplicate.triggered.connect(
        lambda: w.housekeeping.duplicate(w.selected_session()))
    w.action_approve.triggered.connect(lambda: w.housekeeping.answer(True))
    w.action_deny.triggered.connect(lambda: w.housekeeping.answer(False))
    w.action_use_model.triggered.connect(
        lambda: c.use_configured_model(w.selected_session()))
    w.action_quit.triggered.connect(w.close)
    w.action_about.triggered.connect(lambda: about(w))
    # Escape clears the filter (then, empty, hands the keyboard to the list); Down
    # goes to the rows
    page = w.filter_page
    FieldKeys(w.filter_box, down=page.filter_to_tree, leave=page.filter_to_tree)
    w.branches.wire()
    w._update_fork_action()
    w._update_approval_actions()


def build_more_actions(w: MainWindow) -> None:
    """The actions only the menus, the shortcuts and the list's context menu reach."""
    w.action_find = w._action("actionFind", "&Find…",
                              _keys(QKeySequence.StandardKey.Find, "Ctrl+F"),
                              "Filter sessions by title or message text")
    w.action_search = w._action("actionSearchAll", "Search &all sessions…",
                                "Ctrl+Shift+F",
                                "Find words in every session's messages and titles")
    w.action_use_model = w._action(
        "actionUseConfiguredModel", "Use the &model from Preferences", None,
        "Answer this session's next turns with the model chosen in Preferences")
    w.action_quit = w._action("actionQuit", "&Quit",
                              _keys(QKeySequence.StandardKey.Quit, "Ctrl+Q"),
                              "Close Forkwise")
    w.action_quit.setMenuRole(QAction.MenuRole.QuitRole)
    w.action_about = w._action("actionAbout", "&About Forkwise", None,
                               "Version and store")
    w.action_delete = w._action("actionDeleteSession", "&Delete session",
                                _keys(QKeySequence.StandardKey.Delete, "Del"),
                                "Move the selected session to the store's trash")
    # Delete belongs to the session list: text fields keep their own Delete key
    w.action_delete.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    w.action_duplicate = w._action("actionDuplicateSession", "D&uplicate session",
                                   "Ctrl+D",
                                   "Copy the whole selected session into a new one")
    w.action_approve = w._action("actionApprove", "&Approve tool call",
                                 "Ctrl+Shift+Y",
                                 "Approve the tool call this session waits for")
    w.action_deny = w._action("actionDeny", "D&eny tool call", "Ctrl+Shift+N",
                              "Deny the tool call this session waits for")


def fill_menus(w: MainWindow) -> None:
    """The entries of the menu bar's menus (their titles are in the first frame)."""
    file_menu = w.menus["menuFile"]
    file_menu.addAction(w.action_new)
    file_menu.addSeparator()
    file_menu.addAction(w.action_prefs)
    file_menu.addSeparator()
    file_menu.addAction(w.action_quit)
    edit_menu = w.menus["menuEdit"]
    edit_menu.addAction(w.action_find)
    edit_menu.addAction(w.action_search)
    session_menu = w.menus["menuSession"]
    session_menu.addAction(w.action_fork)
    session_menu.addAction(w.branches.rename)
    session_menu.addSeparator()
    session_menu.addAction(w.branches.previous)
    session_menu.addAction(w.branches.next)
    session_menu.addAction(w.branches.compare)
    session_menu.addSeparator()
    session_menu.addAction(w.action_stop)
    session_menu.addAction(w.action_use_model)
    session_menu.addSeparator()
    session_menu.addAction(w.action_approve)
    session_menu.addAction(w.action_deny)
    session_menu.addSeparator()
    session_menu.addAction(w.action_duplicate)
    session_menu.addAction(w.action_delete)
    w.menus["menuHelp"].addAction(w.action_about)


def wire(w: MainWindow) -> None:
    """The controller's signals, the tool bar's actions and the tree's to the window."""
    c = w.controller
    page, keeping = w.filter_page, w.tree_keeping
    w.action_new.triggered.connect(c.new_session)
    w.action_fork.triggered.connect(lambda: c.fork_session(w.selected_session()))
    w.action_stop.triggered.connect(c.cancel)
    w.action_prefs.triggered.connect(w.open_settings)
    w._filter_timer = QTimer(w)
    w._filter_timer.setSingleShot(True)
    w._filter_timer.setInterval(200)
    w._filter_timer.timeout.connect(page.filter_now)
    w.filter_box.textChanged.connect(lambda _t: w._filter_timer.start())
    # message-text matches arrive later: their rows' ancestors are expanded too
    w._expand_timer = QTimer(w)
    w._expand_timer.setSingleShot(True)
    w._expand_timer.setInterval(0)
    w._expand_timer.timeout.connect(page.filter_shown)
    c.proxy.rowsInserted.connect(
        lambda *_a: w._expand_timer.start() if c.proxy.pattern else None)
    w.tree.selectionModel().currentChanged.connect(w._current_changed)
    c.selectRequested.connect(w._write_next)  # first: opening may be at once
    c.selectRequested.connect(w.select_session)
    c.sessionOpened.connect(w._show_opened)
    c.runningChanged.connect(w._running)
    c.ops.busyChanged.connect(w._busy)
    c.ops.activityChanged.connect(w._activity)  # a method: let go with the window
    c.tree.dataChanged.connect(w._tree_changed)
    c.treeLoaded.connect(keeping.tree_loaded)
    c.tree.foldersDiffer.connect(lambda *_folders: w.columns.offer_folder(True))
    c.tree.foldersDiffer.connect(lambda *folders: w.columns.name_folders(folders, more=True))
    c.treePreviewed.connect(keeping.tree_previewed)
    c.tree.rowsFetched.connect(keeping.expand_lineage)
    c.proxy.layoutChanged.connect(keeping.expand_reordered_lineage)
    c.tree.modelReset.connect(keeping.collapsed.clear)  # a load expands every lineage
    c.tree.modelAboutToBeReset.connect(keeping.keep_selection)
    w.tree.collapsed.connect(lambda index: keeping.expanded_changed(index, False))
    w.tree.expanded.connect(lambda index: keeping.expanded_changed(index, True))
    c.forkShown.connect(w._fork_shown)
    w.composer.sendRequested.connect(w._send)
    w.composer.stopRequested.connect(c.cancel)


def build_transcript(w: MainWindow) -> TranscriptView:
    """The transcript view in the first frame's placeholder's place, wired."""
    from forkwise.gui.transcript.transcript_view import TranscriptView

    c, slot = w.controller, w.transcript_slot
    assert slot is not None  # built once: `transcript` keeps the view
    right = slot.parentWidget()
    assert right is not None  # the detail pane (`_build_panes`)
    t = TranscriptView(right)
    t.setModel(c.transcript)
    t.title_of = w._title_of
    layout = right.layout()
    assert isinstance(layout, QVBoxLayout)
    layout.replaceWidget(slot, t)
    slot.hide()
    slot.deleteLater()
    w.transcript_slot = None  # no reference left to a deleted widget
    w._transcript = t
    w._order_focus()
    t.forkFromMessage.connect(c.fork_from_message)
    t.forkBeforeMessage.connect(c.fork_before_message)
    t.editResend.connect(w.begin_edit)
    t.sourceRequested.connect(w.select_session)
    t.sessionRequested.connect(w.select_session)  # a subagent's or a fork's link
    t.approvalDecided.connect(c.approve)
    t.endRequested.connect(c.reopen_at_end)
    for signal in (c.transcript.rowsInserted, c.transcript.dataChanged,
                   c.transcript.modelReset, c.transcript.rowsRemoved):
        signal.connect(w._update_approval_actions)
    w.branches.wire_transcript(t)
    return t


def about(w: MainWindow) -> None:
    """Help → About: the version and the store, as a notice."""
    from forkwise.core import __version__

    w.controller.notifier.info(
        f"Forkwise {__version__} — browse and fork AI-agent sessions. {w.windowTitle()}"
    )
