"""What the main window builds after its first frame (`MainWindow.build_rest`): the actions
only menus and shortcuts reach, the menus' entries (as data: `Place`), every connection of
the controller's signals, and the transcript view in its placeholder's place; then, once
the tree shows its first rows, the transcript's row links (`install_late`). Imported once
that frame is painted: nothing here is on the first frame's path."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QVBoxLayout

from forkwise.gui.shell.bench import ActionSpec, MenuId, Place
from forkwise.gui.shell.menus import keys

if TYPE_CHECKING:
    from forkwise.gui.shell.filter_page import FilterPage
    from forkwise.gui.shell.tree_keeping import TreeKeeping
    from forkwise.gui.shell.window_parts import Window
    from forkwise.gui.transcript.transcript_view import TranscriptView

FILE, EDIT, SESSION, HELP = MenuId.FILE, MenuId.EDIT, MenuId.SESSION, MenuId.HELP
LIST = MenuId.SESSION_LIST


def build_rest(w: Window, page: FilterPage, keeping: TreeKeeping) -> None:
    """The body of `MainWindow.build_rest` (which keeps it to once)."""
    from forkwise.gui.widgets.field_keys import FieldKeys

    build_more_actions(w)
    place_own_entries(w)
    for menu_id, menu in w.menus.items():
        w.menu_book.attach(MenuId(menu_id), menu)
    wire(w, page, keeping)
    w.action_find.triggered.connect(w.focus_filter)
    w.action_search.triggered.connect(w.show_search)
    w.tree.addAction(w.action_delete)  # its shortcut works where the list has focus
    w.action_quit.triggered.connect(w.close)
    w.action_about.triggered.connect(lambda: about(w))
    # Escape clears the filter (then, empty, hands the keyboard to the list); Down
    # goes to the rows
    FieldKeys(w.filter_box, down=page.filter_to_tree, leave=page.filter_to_tree)
    w.tree.fill_menu = lambda menu: w.menu_book.fill(menu, LIST)


def build_more_actions(w: Window) -> None:
    """The actions only the menus, the shortcuts and the list's context menu reach
    (Delete, Duplicate, Approve and Deny are answered by the housekeeping feature)."""
    c = w.controller
    # Ctrl+F is Find in the open session (the reading feature); the list's filter has
    # its own key
    w.action_find = w.add_action(ActionSpec(
        "actionFind", "&Filter sessions…", "Filter sessions by title or message text",
        "Ctrl+L", (Place(EDIT, 0, 10),)))
    w.action_search = w.add_action(ActionSpec(
        "actionSearchAll", "Search &all sessions…",
        "Find words in every session's messages and titles", "Ctrl+Shift+F",
        (Place(EDIT, 0, 20),)))
    w.action_use_model = w.add_action(ActionSpec(
        "actionUseConfiguredModel", "Use the &model from Preferences",
        "Answer this session's next turns with the model chosen in Preferences", None,
        (Place(SESSION, 2, 20),), lambda: c.use_configured_model(w.selected_session()),
        needs_session=True))
    w.action_quit = w.add_action(ActionSpec(
        "actionQuit", "&Quit", "Close Forkwise", keys(QKeySequence.StandardKey.Quit, "Ctrl+Q"),
        (Place(FILE, 2, 10),)))
    w.action_quit.setMenuRole(QAction.MenuRole.QuitRole)
    w.action_about = w.add_action(ActionSpec(
        "actionAbout", "&About Forkwise", "Version and store", None, (Place(HELP, 0, 10),)))
    w.action_delete = w.add_action(ActionSpec(
        "actionDeleteSession", "&Delete session",
        "Move the selected session to the store's trash",
        keys(QKeySequence.StandardKey.Delete, "Del"),
        (Place(SESSION, 4, 20), Place(LIST, 0, 60)), needs_session=True))
    # Delete belongs to the session list: text fields keep their own Delete key
    w.action_delete.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    w.action_duplicate = w.add_action(ActionSpec(
        "actionDuplicateSession", "D&uplicate session",
        "Copy the whole selected session into a new one", "Ctrl+D",
        (Place(SESSION, 4, 10), Place(LIST, 0, 50)), needs_session=True))
    w.action_approve = w.add_action(ActionSpec(
        "actionApprove", "&Approve tool call", "Approve the tool call this session waits for",
        "Ctrl+Shift+Y", (Place(SESSION, 3, 10),)))
    w.action_deny = w.add_action(ActionSpec(
        "actionDeny", "D&eny tool call", "Deny the tool call this session waits for",
        "Ctrl+Shift+N", (Place(SESSION, 3, 20),)))
    w.action_approve.setEnabled(False)  # until something waits (the housekeeping feature)
    w.action_deny.setEnabled(False)


def place_own_entries(w: Window) -> None:
    """The menu entries of the actions the first frame made (the tool bar's)."""
    book = w.menu_book
    for place, action in (
        (Place(FILE, 0, 10), w.action_new),
        (Place(FILE, 1, 10), w.action_prefs),
        (Place(SESSION, 0, 10), w.action_fork),
        (Place(SESSION, 2, 10), w.action_stop),
        (Place(LIST, 0, 10), w.action_fork),
        (Place(LIST, 0, 20), w.action_new),
    ):
        book.place(place, action)


def wire(w: Window, page: FilterPage, keeping: TreeKeeping) -> None:
    """The controller's signals, the tool bar's actions and the tree's to the window."""
    c = w.controller
    w.action_new.triggered.connect(c.new_session)
    w.action_fork.triggered.connect(lambda: c.fork_session(w.selected_session()))
    w.action_stop.triggered.connect(c.cancel)
    w.filter_timer = QTimer(w.widget())
    w.filter_timer.setSingleShot(True)
    w.filter_timer.setInterval(200)
    w.filter_timer.timeout.connect(page.filter_now)
    w.filter_box.textChanged.connect(lambda _t: w.filter_timer.start())
    # message-text matches arrive later: their rows' ancestors are expanded too
    w.expand_timer = QTimer(w.widget())
    w.expand_timer.setSingleShot(True)
    w.expand_timer.setInterval(0)
    w.expand_timer.timeout.connect(page.filter_shown)
    c.proxy.rowsInserted.connect(
        lambda *_a: w.expand_timer.start() if c.proxy.pattern else None)
    w.tree.selectionModel().currentChanged.connect(w.current_changed)
    c.selectRequested.connect(w.write_next)  # first: opening may be at once
    c.selectRequested.connect(w.select_session)
    c.sessionOpened.connect(w.show_opened)
    c.runningChanged.connect(w.running)
    c.ops.busyChanged.connect(w.busy)
    c.ops.activityChanged.connect(w.activity)  # a method: let go with the window
    c.tree.dataChanged.connect(w.tree_changed)
    c.treeLoaded.connect(keeping.tree_loaded)
    # Last activity makes room for a year once a row is of an earlier one
    c.treeLoaded.connect(lambda _n: w.columns.fit_years(c.tree.activity_times()))
    c.sessionChanged.connect(
        lambda sid: w.columns.fit_years([row["updated"]] if (row := c.tree.summary(sid)) else []))
    c.tree.foldersDiffer.connect(lambda *_folders: w.columns.offer_folder(True))
    c.tree.foldersDiffer.connect(lambda *folders: w.columns.name_folders(folders, more=True))
    c.treePreviewed.connect(keeping.tree_previewed)
    c.tree.rowsFetched.connect(keeping.expand_lineage)
    c.proxy.layoutChanged.connect(keeping.expand_reordered_lineage)
    c.tree.modelReset.connect(keeping.collapsed.clear)  # a load expands every lineage
    c.tree.modelAboutToBeReset.connect(keeping.keep_selection)
    w.tree.collapsed.connect(lambda index: keeping.expanded_changed(index, False))
    w.tree.expanded.connect(lambda index: keeping.expanded_changed(index, True))
    c.forkShown.connect(w.fork_shown)
    w.composer.sendRequested.connect(w.send)
    w.composer.stopRequested.connect(c.cancel)


def build_transcript(w: Window) -> TranscriptView:
    """The transcript view in the first frame's placeholder's place, wired."""
    from forkwise.gui.transcript.transcript_view import TranscriptView

    c, slot = w.controller, w.transcript_slot
    assert slot is not None  # built once: `transcript` keeps the view
    right = slot.parentWidget()
    assert right is not None  # the detail pane (`_build_panes`)
    t = TranscriptView(right)
    t.setModel(c.transcript)
    t.title_of = w.title_of
    layout = right.layout()
    assert isinstance(layout, QVBoxLayout)
    layout.replaceWidget(slot, t)
    slot.hide()
    slot.deleteLater()
    w.transcript_slot = None  # no reference left to a deleted widget
    t.forkFromMessage.connect(c.fork_from_message)
    t.forkBeforeMessage.connect(c.fork_before_message)
    t.editResend.connect(w.begin_edit)
    t.sourceRequested.connect(w.select_session)
    t.sessionRequested.connect(w.select_session)  # a subagent's or a fork's link
    t.approvalDecided.connect(c.approve)
    t.endRequested.connect(c.reopen_at_end)
    return t


def install_late(w: Window) -> None:
    """Once the tree shows its first rows (after the late features): the links under the
    transcript's rows to forks and subagents, what an empty list says, the panes' balance
    in a small window."""
    from forkwise.gui.sessions import empty_list
    from forkwise.gui.shell.pane_balance import PaneBalance
    from forkwise.gui.transcript.fork_marks import forks_at
    from forkwise.gui.transcript.row_links import RowLinks
    from forkwise.gui.transcript.subagent_link import add_open_subagent, subagent_of

    c, view, tree = w.controller, w.transcript, w.controller.tree
    # where forks continue from; the subagent a Task call started
    w.link_rows(RowLinks(subagent_of=lambda row: subagent_of(c, row),
                         forks_at=lambda row: forks_at(c, row)))
    # a Task call's menu opens the subagent it started
    view.add_menu_contributor(
        lambda menu, row, _enabled: add_open_subagent(c, w.select_session, menu, row))

    def rows_changed(parent: QModelIndex, *_rows: Any) -> None:
        """A subagent (or a fork) of the opened session came or went after its row was
        shown: the links follow. Rows elsewhere in the tree change nothing here (a sync
        walks every loaded row: 26 ms for 5,000 rows of a 100k-event session)."""
        from forkwise.gui.models.session_rows import ID_ROLE

        if c.current is not None and parent.isValid() and parent.data(ID_ROLE) == c.current:
            view.sync_links()

    tree.rowsInserted.connect(rows_changed)
    tree.rowsRemoved.connect(rows_changed)

    def rows_moved(old: QModelIndex, _first: int, _last: int, new: QModelIndex,
                   _row: int) -> None:  # a row that found its source
        rows_changed(old)
        rows_changed(new)

    tree.rowsMoved.connect(rows_moved)
    tree.modelReset.connect(view.sync_links)
    view.sync_links()  # the transcript shown before this was installed
    # an empty list says how to start (New session, Import…)
    empty_list.install(w.tree.placeholder, c, w.filter_box.text)
    # the list's fair share of the window, or what the person set; it gives way in a small
    # window
    w.pane_balance = PaneBalance(w.splitter, w.list_chosen())
    w.pane_balance.balance()


def about(w: Window) -> None:
    """Help → About: the version and the store, as a notice."""
    from forkwise.core import __version__

    w.controller.notifier.info(
        f"Forkwise {__version__} — browse and fork AI-agent sessions. {w.windowTitle()}"
    )
