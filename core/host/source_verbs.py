"""The host's verbs on the agents' own sessions: import, the folders it keeps
up with (`sources.list`, `sources.watch`) and export. A part of Host (a
base class of it); the rules live in importing.py, source_watch.py and exporting.py."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from forkwise.core.notifications import (
    CATALOGUE_UPSERT,
    IMPORT_PROGRESS,
    SEARCH_INDEXING,
    SOURCES_WARNINGS,
    CatalogueUpsert,
    ImportProgress,
    SearchIndexing,
    SourcesWarnings,
)

if TYPE_CHECKING:  # the verbs import their modules when first used (see source_watch)
    import threading

    from forkwise.core.host.import_ledger import ImportLedger
    from forkwise.core.host.source_watch import SourceWatcher
    from forkwise.core.store.search_index import SearchIndex
    from forkwise.core.store.session import Session, SessionSummary
    from forkwise.core.store.session_store import SessionStore

Json = dict[str, Any]
T = TypeVar("T")
log = logging.getLogger(__name__)


class SourceVerbs:
    """Files are found, read and written on this host's machine."""

    if TYPE_CHECKING:  # what Host gives its parts
        store: SessionStore
        _made: threading.Lock
        _imports: ImportLedger | None
        _sources: SourceWatcher | None
        _import_stop: threading.Event
        _closed: bool
        _listeners: Sequence[object]
        index_after_import: bool

        @property
        def search_index(self) -> SearchIndex: ...

        def _check_writable(self) -> None: ...
        def notify(
            self, note: ImportProgress | SourcesWarnings | SearchIndexing | CatalogueUpsert
        ) -> None: ...
        def row(self, summary: SessionSummary) -> Json: ...
        async def shown_states(self, rows: Sequence[Json]) -> None: ...
        async def io(self, fn: Callable[..., T], *args: Any) -> T: ...
        async def _serve(self, session_id: str) -> Session: ...

    @property
    def imports(self) -> ImportLedger:
        """What earlier imports read; one in memory is made when first needed (an import,
        an export, a watched folder's look; any thread): a command that imports nothing
        does not load it."""
        with self._made:
            if self._imports is None:
                from forkwise.core.host.import_ledger import ImportLedger

                self._imports = ImportLedger(None)
                self._imports.attach(self.store)
            return self._imports

    @property
    def sources(self) -> SourceWatcher:
        """The agents' session folders this host keeps up with (off until asked; made
        then, on the loop)."""
        if self._sources is None:
            from forkwise.core.host.source_watch import SourceWatcher

            self._sources = SourceWatcher(
                self._import_changed, self._source_changed, progress=self._watch_progress,
                warned=self._watch_warned, vanished=self._sources_vanished,
            )
        return self._sources

    async def import_sources(self, tool: str | None, paths: Sequence[str]) -> Json:
        """The import verb on files this host can read: `paths` are files or
        folders (none: the tools' default folders on this host's machine); `tool` one of
        claude, codex, pi, forkwise, or None to recognise each file."""
        from forkwise.core.host.importing import TOOLS, UnknownFormat, discover, import_sources

        self._check_writable()
        if tool is not None and tool not in TOOLS:
            raise UnknownFormat(f"unknown tool {tool!r} (known: {', '.join(TOOLS)})", tool=tool)
        home = Path(os.path.expanduser("~"))
        files = await asyncio.to_thread(
            discover, tool, [Path(p) for p in paths], dict(os.environ), home
        )
        report = await self.io(
            import_sources,
            self.store,
            files,
            self.imports,
            self._import_progress(),
            self._import_stop,
        )
        self._search_soon(report.imported or report.updated)
        return report.to_json()

    def _import_progress(self) -> Callable[[int, int, str], None]:
        """`import/progress` notifications from the store worker."""
        loop = asyncio.get_running_loop()

        def progress(done: int, total: int, path: str) -> None:
            note: ImportProgress = {
                "kind": IMPORT_PROGRESS, "done": done, "total": total, "path": path
            }
            loop.call_soon_threadsafe(self.notify, note)

        return progress

    async def _import_changed(self, files: list[tuple[Path, str | None]]) -> Json:
        from forkwise.core.host.importing import import_sources

        report = await self.io(
            import_sources, self.store, files, self.imports, None, self._import_stop
        )
        self._search_soon(report.imported or report.updated)
        return report.to_json()

    def _search_soon(self, stored: Sequence[str]) -> None:
        """After an import that stored sessions, build the search index in the background
        when it is not current (`search/indexing` notifications as it goes), so that the
        first search answers at once; only for a host someone listens to (the app, a
        served host), not a one-shot command. One build at a time; closing halts it."""
        if not stored or self._closed or not self._listeners or not self.index_after_import:
            return
        if self.search_index.ready:
            return
        running = self.__dict__.get("_search_build")
        if running is not None and not running.done():
            return
        self.__dict__["_search_build"] = asyncio.get_running_loop().create_task(
            self._build_search()
        )

    async def _build_search(self) -> None:
        from forkwise.core.store.search_build import Stopped

        loop = asyncio.get_running_loop()

        def progress(done: int, total: int) -> None:  # on the build's thread
            note: SearchIndexing = {"kind": SEARCH_INDEXING, "done": done, "total": total}
            loop.call_soon_threadsafe(self.notify, note)

        try:
            await asyncio.to_thread(self.search_index.sync, self.store, progress)
        except Stopped:
            pass  # the host is closing: the next search (or import) builds it
        except Exception:  # a search builds it then, and says what failed
            log.exception("the search index's build in the background failed")

    async def search_built(self) -> None:
        """Wait for a build of the search index in the background, if one runs."""
        running = self.__dict__.get("_search_build")
        if running is not None:
            await asyncio.gather(running, return_exceptions=True)

    def _watch_progress(self, done: int, total: int, path: str) -> None:
        self.notify({"kind": IMPORT_PROGRESS, "done": done, "total": total, "path": path})

    def _watch_warned(self, warnings: list[Json]) -> None:
        self.notify({"kind": SOURCES_WARNINGS, "warnings": warnings})

    async def _sources_vanished(self, paths: list[Path]) -> None:
        """Agents' session files gone while watched (the tool deleted them): their
        sessions stay, and their rows are told again as a listing shows them (an open turn
        of the agent's is `interrupted`: nothing will write it now)."""
        ids = sorted({sid for path in paths for sid in self.imports.sessions_of(path)})
        if not ids:
            return

        def rows() -> list[Json]:
            return [self.row(self.store.summary(sid)) for sid in ids if self.store.exists(sid)]

        told = await self.io(rows)
        await self.shown_states(told)
        for row in told:
            self.notify({"kind": CATALOGUE_UPSERT, "summary": row})

    def _source_changed(self, path: Path) -> bool:
        from forkwise.core.host.import_ledger import source_stamp

        try:
            st = source_stamp(path)
        except OSError:
            return False
        return self.imports.unchanged(path, st) is None

    async def watch_sources(
        self, tools: Sequence[str], folders: Mapping[str, Sequence[str]] | None = None
    ) -> Json:
        """`sources.watch`: keep up with these tools' session folders (their default ones
        on this host's machine, or `folders`); an empty list stops. The first pass runs
        before this returns, so what is there already is in the store when it does; what
        `sources.list` returns, with `failed`: the files that pass could not import (as
        the import verb reports them), whose sessions are not in the store, and
        `warnings`: the lines of the files it read that were kept unread."""
        self._check_writable()
        self.sources.watch(tools, folders)
        report = await self.sources.scan() if self.sources.tools else None
        listed = await self.list_sources()
        listed["failed"] = report["failed"] if report is not None else []
        listed["warnings"] = report["warnings"] if report is not None else []
        return listed

    async def list_sources(self) -> Json:
        """`sources.list`: the tools found on this host's machine and those watched."""
        from forkwise.core.host.source_watch import available_sources

        home = Path(os.path.expanduser("~"))
        found = await asyncio.to_thread(available_sources, dict(os.environ), home)
        return {"sources": found, "watching": list(self.sources.tools)}

    async def export(
        self, session_id: str, tool: str, out: str | None = None, assets: bool = False
    ) -> Json:
        """The export verb: `{"tool", "path", "id", "resume"}`, or for a
        document (markdown, html) `{"format", "path", "assets"}`; the file is written on
        this host's machine. A document only reads the store."""
        from forkwise.core.host.exporting import export_session
        from forkwise.core.reading import DOCUMENTS

        if tool not in DOCUMENTS:
            self._check_writable()
        await self._serve(session_id)
        return await self.io(
            functools.partial(export_session, ledger=self.imports, assets=assets),
            self.store, session_id, tool, out,
        )
