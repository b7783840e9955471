"""The sessions' own usage in the tree's rows: the whole listing's once the tree is loaded
(`sessions list` with usage: the host folds each log once and keeps the folds), then a
session's again when its row changed at rest (a turn ended, an import grew it). Rows that
change together (an import's) are asked for together, through one listing with usage:
a session's own call serves its log, which the host then keeps loaded (an import of 700
files left 700 logs in memory, each saved again to the index when the app quit). Read off
the GUI thread like every host call; a failure leaves the Cost column as it was."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from forkwise.core.client.reports import RowUsage, usage_report

if TYPE_CHECKING:
    from forkwise.core.client.api import ClientAPI
    from forkwise.core.client.rows import SessionRow
    from forkwise.gui.kernel.ops import OpRunner
    from forkwise.gui.models.session_model import SessionTreeModel

log = logging.getLogger(__name__)
Json = dict[str, Any]
#: rows are asked for once none changed for this long (seconds), or at the latest this
#: long after the first of them changed (an import's rows come over seconds)
GATHER_STILL = 0.1
GATHER_AT_MOST = 1.0
#: that many rows or more: their usage from one listing (summaries; no log is loaded)
LISTED_AT_LEAST = 8


class UsageRefresh:
    """Keeps `tree`'s rows' `usage` current through `client` (asked through `ops`)."""

    def __init__(self, tree: SessionTreeModel, ops: OpRunner) -> None:
        self.tree = tree
        self.ops = ops
        self.client: ClientAPI | None = None
        #: sessions whose usage is being asked for (asked once at a time)
        self._asking: set[str] = set()
        #: of those, the ones gathered to be asked for together, and since when
        self._gathered: list[str] = []
        self._first = 0.0
        self._asking_soon: asyncio.TimerHandle | None = None

    def load(self, client: ClientAPI) -> None:
        """Every row's usage, after the listing without it."""
        self.client = client
        self.ops.run(client.list_sessions(usage=True), self._listed, self._failed)

    def _listed(self, rows: list[Json]) -> None:
        self.tree.set_usage({row["id"]: row["usage"] for row in rows if "usage" in row})

    def changed(self, before: SessionRow | None, row: SessionRow) -> None:
        """`row` replaced `before` (None: a new row): its usage is asked again once it
        rests with other events than before."""
        if self.client is None or row["running"] or "usage" in row:
            return
        if before is not None and before["events"] == row["events"]:
            return
        sid = row["id"]
        if sid in self._asking:
            return
        self._asking.add(sid)
        self._gathered.append(sid)
        loop = asyncio.get_running_loop()
        if len(self._gathered) == 1:
            self._first = loop.time()
        if self._asking_soon is not None:
            self._asking_soon.cancel()
        when = min(loop.time() + GATHER_STILL, self._first + GATHER_AT_MOST)
        self._asking_soon = loop.call_at(when, self._ask)

    def _ask(self) -> None:
        gathered, self._gathered, self._asking_soon = self._gathered, [], None
        if self.client is None or not gathered:
            self._asking.difference_update(gathered)
            return
        if len(gathered) >= LISTED_AT_LEAST:
            self.ops.run(self._listed_of(gathered), self.tree.set_usage, self._failed)
            return
        for sid in gathered:
            self.ops.run(self._own(sid), self._got, self._failed)

    async def _listed_of(self, sids: list[str]) -> dict[str, Json]:
        """The own usage of the sessions `sids` from one listing with usage."""
        assert self.client is not None
        wanted = set(sids)
        try:
            rows = await self.client.list_sessions(usage=True)
        finally:
            self._asking.difference_update(wanted)
        return {row["id"]: row["usage"] for row in rows if row["id"] in wanted and "usage" in row}

    async def _own(self, sid: str) -> tuple[str, RowUsage]:
        assert self.client is not None
        try:
            report = usage_report(await self.client.usage(sid))
        finally:
            self._asking.discard(sid)
        return sid, RowUsage(own=report["own"])

    def _got(self, found: tuple[str, RowUsage]) -> None:
        sid, usage = found
        self.tree.set_usage({sid: usage})

    def _failed(self, exc: BaseException) -> None:
        log.info("usage not read: %s", exc)
