"""Keeping up with the agents' folders while the app is open: the host watches the tools
whose folders exist (or those the person chose in Agent sources…), first once the session
tree has been still for a moment after its rows came in."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QDialog

from forkwise.core.client.api import (
    IMPORT_PROGRESS,
    SEARCH_INDEXING,
    SOURCES_WARNINGS,
    Notification,
)
from forkwise.core.client.reports import FailedFile, KeptLine, import_problems

if TYPE_CHECKING:
    from forkwise.gui.shell.bench import Bench

Json = dict[str, Any]
WATCH_KEY = "sources/watch"
#: the files whose unread lines the person chose not to hear of again ("Ignore this file")
IGNORED_KEY = "sources/ignoredWarnings"
#: the agents' folders are first looked at once the tree has been still this long (ms)
#: after its rows came in, and at the latest this long (ms) after: that first look
#: imports the formats (~50 ms of CPU on a worker, holding the GIL in pieces), which
#: made the first page-downs of a person who scrolls right away wait
WATCH_WHEN_STILL = 300
WATCH_AT_THE_LATEST = 1000
#: the status bar's words while the host builds the search index after an import
INDEXING = "Indexing sessions for search…"
#: the status bar's words while the first look brings the agents' files in
BRINGING_IN = "Bringing in the agents' sessions…"


def start_watching_when_still(bench: Bench) -> None:
    """`_start_watching` once the tree has not scrolled for `WATCH_WHEN_STILL` ms, or
    `WATCH_AT_THE_LATEST` ms after now, whichever comes first."""
    window = bench.widget()
    if window.property("watchingStarted") or window.property("watchingWaits"):
        return
    window.setProperty("watchingWaits", True)
    still, latest = QTimer(window), QTimer(window)
    for timer, ms in ((still, WATCH_WHEN_STILL), (latest, WATCH_AT_THE_LATEST)):
        timer.setSingleShot(True)
        timer.setInterval(ms)
    moved = bench.tree.verticalScrollBar().valueChanged

    def restart(_value: int) -> None:
        still.start()

    def start() -> None:
        if _inside_a_task():  # Qt's events handled inside a coroutine: not from there
            still.start()
            return
        for timer in (still, latest):
            timer.stop()
            timer.deleteLater()
        moved.disconnect(restart)
        _start_watching(bench)

    moved.connect(restart)
    still.timeout.connect(start)
    latest.timeout.connect(start)
    still.start()
    latest.start()


def _inside_a_task() -> bool:
    """Whether a coroutine is running (a timer fired in events it had Qt handle): a task
    started from there would be stepped inside that one's step, which asyncio refuses."""
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # no loop running
        return False


def _start_watching(bench: Bench) -> None:
    window = bench.widget()
    c = bench.controller
    chosen = bench.settings.value(WATCH_KEY)

    def progress(note: Notification) -> None:
        if note["kind"] == SOURCES_WARNINGS:  # a later pass: files changed since
            warn_lines(bench, import_problems(note)["warnings"])
            return
        if note["kind"] == IMPORT_PROGRESS and not window.findChild(QDialog, "importDialog"):
            done, total = int(note["done"]), int(note["total"])
            status_progress(bench, BRINGING_IN, f"{done:,} of {total:,} files", done < total)
        if note["kind"] == SEARCH_INDEXING:
            search_progress(bench, int(note["done"]), int(note["total"]))

    async def start() -> Json:
        await c.client.subscribe(progress)
        found = await c.client.sources()
        tools = (
            [t for t in str(chosen).split(",") if t]
            if chosen is not None
            else [s["tool"] for s in found["sources"] if s["found"]]
        )
        return await c.client.watch_sources(tools) if tools else found

    def looked(listed: Json) -> None:
        """A file the first look could not read is a session missing from the list: the
        person hears which, and why (the import's own words)."""
        from forkwise.gui.kernel.levels import WARNING

        problems = import_problems(listed)
        failed = problems["failed"]
        if failed:
            text = (f"{len(failed)} of the agents' session files could not be read; their "
                    "sessions are not in the list:" + failure_lines(failed, 3))
            c.notifier.post(WARNING, text, "agent-files-unreadable")
        warn_lines(bench, problems["warnings"])

    if window.property("watchingStarted"):
        return  # once per window: a reload of the tree does not start it again
    window.setProperty("watchingStarted", True)
    c.ops.run(start(), looked, what="Watching the agents' session folders")


def search_progress(bench: Bench, done: int, total: int) -> None:
    """The host builds the search index in the background after an import: the status
    bar says how far it got (a search made meanwhile is slower until it is done); at the
    end its words go (another message in their place stays)."""
    status_progress(bench, INDEXING, f"{done:,} of {total:,} sessions", done < total)


def status_progress(bench: Bench, words: str, count: str, going: bool) -> None:
    """`words` and `count` in the status bar while `going`; once done, those words go
    unless another message took their place. Cleared with `clearMessage`, never with an
    empty message on a timeout: QStatusBar's timer repeats, and its slot stops it only
    when there is a message to clear, so an empty one left it firing every millisecond
    for as long as the app stayed open."""
    bar = bench.widget().statusBar()
    if going:
        bar.showMessage(f"{words} {count}")
    elif bar.currentMessage().startswith(words):
        bar.clearMessage()


def warn_lines(bench: Bench, warned: list[KeptLine]) -> None:
    """The banner names the lines of the agents' files that could not be read (the host
    reads a file again only when it changed: once per change of it), with "Ignore this
    file": the person's choice is remembered, and that file's lines are not told again."""
    from forkwise.gui.kernel.levels import WARNING

    ignored = ignored_files(bench)
    warned = [w for w in warned if w["path"] not in ignored]
    if not warned:
        return
    paths = list(dict.fromkeys(w["path"] for w in warned))
    # a torn line loses nothing else: the session is in the list without it
    text = (f"{len(warned)} line(s) of the agents' session files could not be read; "
            "their sessions are in the list without them:" + warning_lines(warned, 3))

    def ignore() -> None:
        bench.settings.setValue(IGNORED_KEY, sorted(ignored_files(bench) | set(paths)))
        bench.settings.sync()

    bench.controller.notifier.post(
        WARNING, text, "agent-lines-unreadable",
        action_label="Ignore this file" if len(paths) == 1 else "Ignore these files",
        action=ignore)


def ignored_files(bench: Bench) -> set[str]:
    """The files whose unread lines are not told (`warn_lines`)."""
    value = bench.settings.value(IGNORED_KEY)
    if isinstance(value, str):  # an INI file gives a one-item list back as its item
        return {value} if value else set()
    return {str(path) for path in value or ()}


def failure_lines(failed: list[FailedFile], most: int = 8) -> str:
    """The files an import could not read, a line each (`most` of them, then a count)."""
    text = "".join(f"\n• {_failure(f)}" for f in failed[:most])
    if len(failed) > most:
        text += f"\n• … and {len(failed) - most} more"
    return text


def warning_lines(warned: list[KeptLine], most: int = 8) -> str:
    """The lines an import kept aside, a line each as `path: line N …` (`most` of them,
    then a count); the import's message names the line."""
    text = "".join(f"\n• {w['path']}: {w['message']}" for w in warned[:most])
    if len(warned) > most:
        text += f"\n• … and {len(warned) - most} more"
    return text


def _failure(f: FailedFile) -> str:
    """One failed file: its path once (the host's message usually names it already)."""
    message, path, line = f["error"]["message"], f["path"], f["line"]
    said = not line or f"line {line}" in message  # and its line once
    if path in message:
        return message if said else f"{message} (line {line})"
    return f"{path}: {message}" if said else f"{path}, line {line}: {message}"
