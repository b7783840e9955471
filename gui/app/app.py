"""`forkwise` without a subcommand: the desktop app.

    forkwise [--store DIR] [--demo] [--self-test] [--connect ADDR]

The store is `--store`, else $FORKWISE_STORE, else the user data dir; `--demo` builds a
demo store (in a temporary directory unless --store is given). `--connect` talks to a
headless `forkwise host` instead of starting one in this process. `--self-test` starts
the window offscreen, checks that the session tree loads, and exits 0 (packaging uses it).
The app serves its store to other processes on `<store>/host.sock`; a second app on a store
another Forkwise process is writing to goes through that socket, or opens the store
read-only (and says so) when nothing answers there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from forkwise.gui.app.pyside_scan import mark_scanned

# (argparse, tempfile and signal are imported where used: `main` runs before Qt is loaded,
# the signals after the first frame; imported after Qt, PySide reads each one's source)
if TYPE_CHECKING:
    import argparse

log = logging.getLogger("forkwise.gui")

NO_DISPLAY = (
    "forkwise: no display found (neither DISPLAY nor WAYLAND_DISPLAY is set).\n"
    "The desktop app needs a graphical session. To use Forkwise from a terminal, run\n"
    "  forkwise sessions --help\n"
    "or run the app without a screen with QT_QPA_PLATFORM=offscreen (for tests)."
)


def build_parser() -> argparse.ArgumentParser:
    import argparse

    from forkwise.core.cli.parser import VersionAction

    parser = argparse.ArgumentParser(
        prog="forkwise", description="Browse and fork AI-agent sessions (desktop app)."
    )
    parser.add_argument("--version", action=VersionAction, nargs=0,
                        help="print the version and exit")
    parser.add_argument("--store", metavar="DIR", help="store directory")
    parser.add_argument("--demo", action="store_true",
                        help="open a generated demo store (a temporary one unless --store)")
    parser.add_argument("--self-test", action="store_true",
                        help="start offscreen, check that the store loads, exit")
    parser.add_argument("--connect", metavar="ADDR",
                        help="use a running `forkwise host` (unix:/path or tcp:host:port)")
    parser.add_argument("--token-file", metavar="FILE",
                        help="file holding the access token for --connect ('-': read it from"
                             " standard input; default: $FORKWISE_TOKEN)")
    # refused with a sentence: a value on the command line is visible to every user (ps)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    return parser


#: why a secret on the command line is refused: every user of the machine reads it in `ps`
TOKEN_IN_ARGV = (
    "forkwise: --token on the command line can be read by every user of this machine "
    "(ps, /proc); put the token in $FORKWISE_TOKEN, or in a file only you can read and "
    "pass --token-file FILE (or --token-file - to read it from standard input)"
)
PASSWORD_IN_ARGV = (
    "forkwise: the --store URL holds a password, which every user of this machine can "
    "read (ps, /proc) while the window is open; leave it out of the URL and put it in "
    "$PGPASSWORD, ~/.pgpass or the system keyring (service forkwise-postgres, user "
    "ROLE@HOST), or pass the whole URL in $FORKWISE_STORE"
)


def secret_in_argv(args: argparse.Namespace) -> str | None:
    """The sentence refusing a secret given on the command line, or None."""
    from forkwise.core.paths import has_password

    if args.token is not None:
        return TOKEN_IN_ARGV
    if args.store and has_password(args.store):
        return PASSWORD_IN_ARGV
    return None


def has_display(env: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    if env.get("QT_QPA_PLATFORM"):
        return True
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    refused = secret_in_argv(args)
    if refused:
        print(refused, file=sys.stderr)
        return 2
    level = os.environ.get("FORKWISE_LOG", "WARNING").upper()
    logging.basicConfig(level=getattr(logging, level, logging.WARNING),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.self_test:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if not has_display():
        print(NO_DISPLAY, file=sys.stderr)
        return 1
    os.environ.setdefault("QT_API", "pyside6")

    store_dir: Path | str | None = None
    if not args.connect:
        from forkwise.core.paths import resolve_store

        if args.demo:
            from forkwise.core.demo import build_demo_store

            if not args.store:  # a throw-away demo: gone when the window closes
                import tempfile

                with tempfile.TemporaryDirectory(prefix="forkwise-demo-") as tmp:
                    build_demo_store(Path(tmp))
                    return run(Path(tmp), None, None, self_test=args.self_test)
            store_dir = Path(args.store)
            build_demo_store(store_dir)
        else:
            store_dir = resolve_store(args.store)
    token = None
    if args.connect:
        from forkwise.core.cli.connect import read_token
        from forkwise.core.errors import ForkwiseError

        try:
            token = read_token(args.token_file)
        except ForkwiseError as exc:
            print(f"forkwise: {exc}", file=sys.stderr)
            return 2
    return run(store_dir, args.connect, token, self_test=args.self_test)


def end_process(status: int) -> NoReturn:
    """End the app's process with `status` once `main` has returned, without the
    interpreter's teardown: by then the store is closed, its index saved and the window's
    settings synced, and that teardown (every module's objects freed one by one, Qt's
    objects destroyed, a last collection over them) took 0.2 s and more of a quit, to
    free memory the exit frees anyway. What is buffered for stdout, stderr and the log
    handlers is written first."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed or gone: nothing to write to
            stream.flush()
    logging.shutdown()
    os._exit(status)


def app_icon() -> Any:
    """The icon from the desktop theme (the .deb installs it), else from the bundle or the
    checkout's resources/icons."""
    from PySide6.QtGui import QIcon

    roots = [Path(getattr(sys, "_MEIPASS", "")), Path(__file__).resolve().parent.parent]
    for root in roots:
        svg = root / "resources" / "icons" / "forkwise.svg"
        if svg.is_file():
            return QIcon.fromTheme("forkwise", QIcon(str(svg)))
    return QIcon.fromTheme("forkwise")


def run(store_dir: Path | str | None, connect: str | None, token: str | None,
        *, self_test: bool = False) -> int:
    import PySide6.QtWidgets  # noqa: F401  (qasync must find PySide6 first)

    mark_scanned()  # before the app's modules: PySide would read each one's source
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setApplicationName("forkwise")
    app.setOrganizationName("Forkwise")
    app.setDesktopFileName("forkwise")
    app.setQuitOnLastWindowClosed(False)  # cleanup below still needs the running loop
    from forkwise.gui.app.main_thread_gc import MainThreadCollector

    collector = MainThreadCollector(app)
    # The window's first frame, and the index's rows in its tree, come before the asyncio
    # loop is: qasync and its loop are not needed to paint them (~10 ms of CPU).
    window = _build_window(store_dir, connect)
    _paint_now(window)
    from forkwise.gui.app.features import FEATURES

    window.build_rest(FEATURES)  # before any input is handled: every shortcut works from here
    if not connect:
        _preview(window.controller, store_dir)
        app.processEvents()  # the rows paint before the loop and the host's imports
    import qasync  # type: ignore[import-untyped]

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        return int(loop.run_until_complete(
            _session(app, store_dir, connect, token, self_test=self_test, window=window)))
    finally:
        loop.close()
        asyncio.set_event_loop(None)
        collector.stop_at_exit()  # the process ends after this


async def open_client(store_dir: Path | str | None, connect: str | None,
                      token: str | None = None) -> Any:
    """The store a window works on (`forkwise.core.client.local.OpenedStore`), its
    catalogue loaded — with a progress dialog while a missing index is built."""
    from forkwise.core.client.local import open_store
    from forkwise.gui.app.index_progress import build_index

    opened = await open_store(store_dir, connect, token)
    try:
        await build_index(opened.client)
    except BaseException:
        await opened.close()
        raise
    return opened


def _build_window(store_dir: Path | str | None, connect: str | None,
                  settings: Any = None) -> Any:
    """The main window over a controller that has no client yet (it paints a loading
    state); the client comes once the store is open (`_session`)."""
    from PySide6.QtCore import QSettings

    from forkwise.core.paths import store_label
    from forkwise.gui.kernel.controller import Controller
    from forkwise.gui.kernel.notify import Notifier
    from forkwise.gui.shell.main_window import MainWindow

    controller = Controller(None, Notifier())
    label = connect or (store_label(store_dir) if store_dir is not None else "")
    window = MainWindow(controller, settings if settings is not None else QSettings(),
                        store_label=label, rest_later=True)
    # its agents' entries after the index's rows (`_session`), not right after the frame
    window.agents_later = True
    return window


async def _session(app: Any, store_dir: Path | str | None, connect: str | None, token: str | None,
                   *, self_test: bool = False, settings: Any = None, window: Any = None) -> int:
    """The window first (it paints a loading state), then the store: the host stack is
    imported and opened after the first frame, and the controller gets its client then.
    `window`: built, painted and previewed already (`run` does so before the loop)."""
    from forkwise.gui.kernel.levels import WARNING

    started = time.perf_counter()
    painted = window is not None
    if window is None:
        window = _build_window(store_dir, connect, settings)
    controller = window.controller
    notifier = controller.notifier
    label = window.store_label
    loop = asyncio.get_running_loop()
    closed: asyncio.Future[None] = loop.create_future()
    loaded: asyncio.Future[int] = loop.create_future()

    def window_closed() -> None:
        if not closed.done():
            closed.set_result(None)

    def tree_loaded(count: int) -> None:
        if not loaded.done():
            loaded.set_result(count)

    app.lastWindowClosed.connect(window_closed)
    controller.treeLoaded.connect(tree_loaded)
    if not painted:
        await _shown(window)
        from forkwise.gui.app.features import FEATURES

        window.build_rest(FEATURES)
        if not connect:
            _preview(controller, store_dir)
            await asyncio.sleep(0)  # the rows paint before the host's imports take the thread
    elif not window.isVisible():  # closed before the loop ran
        window_closed()
    window.agents_later = False
    window.install_agents()
    # after the first frame and the index's rows: its SVG loads an image plugin
    app.setWindowIcon(app_icon())
    try:
        opened = await open_client(store_dir, connect, token)
    except Exception as exc:
        await _start_failed(window, exc, label, remote=bool(connect), dialog=not self_test)
        return 1
    client = opened.client
    status = 0
    previous = _quit_on_signals(window)
    try:
        if opened.warning and not opened.read_only:
            notifier.post(WARNING, opened.warning, "invalid-settings")
        if opened.read_only:
            print(f"forkwise: {opened.warning}", file=sys.stderr)
            notifier.post(WARNING, opened.warning, "read-only-store")
            label += " (read-only)"
        elif opened.shared and not connect:
            label += " (shared: another Forkwise process has it open)"
        window.set_store_label(label)
        controller.start(client)
        if self_test:
            status = await _self_test(controller, loaded, started, window.windowTitle())
        elif not closed.done():
            await closed
    finally:
        _restore_signals(previous)
        if not self_test:  # an offscreen self-test must not leave its geometry behind
            window.save_state()
        await controller.stop()
        controller.ops.cancel_all()
        await opened.close()
        window.deleteLater()
        if opened.host is not None and not opened.read_only:
            await _save_index_head(store_dir)
    return status


async def _save_index_head(store_dir: Path | str | None) -> None:
    """The index as this run's host left it, its first page apart for the next start's
    preview (`save_index_head`); written off the GUI thread, after the store is closed."""
    from forkwise.core.client.local import save_index_head

    try:
        await asyncio.to_thread(save_index_head, store_dir)
    except Exception:  # a cache: the next start reads the whole index instead
        log.exception("the index head could not be saved")


def _preview(controller: Any, store_dir: Path | str | None) -> None:
    """The tree's rows from the store's index while the host stack is imported and opened
    (`indexed_rows`: the client's read of the index, no host); the caller lets them paint
    before that starts. Sorted by last activity (as it opens unless the person chose
    another column), only its first page is read: the host's listing brings the rest a
    moment later."""
    from PySide6.QtCore import Qt

    from forkwise.core.client.local import indexed_rows
    from forkwise.gui.models.session_rows import ACTIVITY

    tree = controller.tree
    by_activity = tree.sort_order == (ACTIVITY, Qt.SortOrder.DescendingOrder)
    try:
        rows = indexed_rows(store_dir, tree.page_rows if by_activity else None)
    except Exception:  # a preview only: the listing that follows says what is wrong
        log.exception("the index could not be previewed")
        return
    controller.preview(rows)


async def _start_failed(window: Any, exc: BaseException, label: str, *, remote: bool,
                        dialog: bool = True) -> None:
    """The store (or host) could not be opened: a line on stderr, then a modal dialog over
    the window that says so (see start_error); the window goes once it is closed. A
    self-test has no person to read a dialog (packaging runs it unattended): stderr only."""
    from forkwise.gui.app.start_error import build_start_error, show_start_error
    from forkwise.gui.kernel.error_text import describe_store_open

    log.info("the store could not be opened: %r", exc)
    text, advice = describe_store_open(exc, label, remote=remote)
    print(f"forkwise: {text}", file=sys.stderr, flush=True)
    try:
        if dialog:
            window.controller.tree.load([])  # rows from the index: not a store to work on
            window.tree.placeholder.setText("The sessions could not be loaded.")
            window.tree.placeholder.show()
            box = build_start_error(window, text, advice)
            previous = _quit_on_signals(box)
            try:
                await show_start_error(box)
            finally:
                _restore_signals(previous)
    finally:
        window.hide()
        window.deleteLater()


async def _shown(window: Any, timeout: float = 0.5) -> None:
    """Show `window` (a MainWindow) and return once it has painted (or after `timeout`: a
    window that is not exposed, e.g. on another desktop, gets no paint until it is)."""
    painted: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def done() -> None:
        if not painted.done():
            painted.set_result(None)

    window.on_paint = done
    window.show()
    try:
        await asyncio.wait_for(painted, timeout)
    except TimeoutError:
        log.info("the window was not painted within %.1f s; opening the store anyway", timeout)
    finally:
        window.on_paint = None
    await asyncio.sleep(0)  # the paint event itself completes before the store work starts


def _paint_now(window: Any, timeout: float = 0.5) -> None:
    """`_shown` before there is an asyncio loop: show `window` (a MainWindow) and run Qt's
    events until it has painted (or for `timeout`, as `_shown` does)."""
    from PySide6.QtCore import QEventLoop, QTimer

    waiter = QEventLoop()
    window.on_paint = lambda: QTimer.singleShot(0, waiter.quit)  # once the paint is done
    limit = QTimer(waiter)
    limit.setSingleShot(True)
    limit.timeout.connect(waiter.quit)
    limit.start(int(timeout * 1000))
    window.show()
    waiter.exec()
    if limit.isActive():
        limit.stop()
    else:
        log.info("the window was not painted within %.1f s; opening the store anyway", timeout)
    window.on_paint = None


def _quit_on_signals(window: Any) -> dict[int, Any]:
    """Ctrl+C in the terminal or a SIGTERM closes the window like the Quit action: the
    host ends its running turns as interrupted, releases the store and removes its socket.
    (Python runs the handler the next time it gets control; the GUI-thread collector's
    timer makes that happen within half a second even when the window is idle.)"""
    import signal

    previous: dict[int, Any] = {}

    def request_quit(_signum: int, _frame: Any) -> None:
        window.close()

    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, request_quit)
    return previous


def _restore_signals(previous: dict[int, Any]) -> None:
    import signal

    for sig, handler in previous.items():
        signal.signal(sig, handler)


async def _self_test(
    controller: Any, loaded: asyncio.Future[int], started: float, title: str
) -> int:
    try:
        count = await asyncio.wait_for(loaded, 30)
    except TimeoutError:
        errors = [n.text for n in controller.notifier.errors()]
        print(f"forkwise self-test FAILED: the session tree did not load {errors}",
              file=sys.stderr)
        return 1
    rows = controller.tree.rowCount()
    if count and not rows:
        print("forkwise self-test FAILED: sessions listed but the tree is empty", file=sys.stderr)
        return 1
    await controller.ops.wait_idle(30)
    errors = controller.notifier.errors()
    if errors:
        print(f"forkwise self-test FAILED: {errors[0].text}", file=sys.stderr)
        return 1
    print(f"forkwise self-test ok: {count} sessions, {rows} top-level rows, "
          f"{controller.transcript.rowCount()} transcript rows, "
          f"{time.perf_counter() - started:.2f} s, title {title!r}")
    return 0
