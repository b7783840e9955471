"""The sessions' own usage in the tree's rows: the whole listing's once the tree is loaded
(`sessions list` with usage: the host folds each log once and keeps the folds), then a
session's again when its row changed at rest (a turn ended, an import grew it). Read off
the GUI thread like every host call; a failure leaves the Cost column as it was."""

from __future__ import annotations

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


class UsageRefresh:
    """Keeps `tree`'s rows' `usage` current through `client` (asked through `ops`)."""

    def __init__(self, tree: SessionTreeModel, ops: OpRunner) -> None:
        self.tree = tree
        self.ops = ops
        self.client: ClientAPI | None = None
        #: sessions whose usage is being asked for (asked once at a time)
        self._asking: set[str] = set()

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
        self.ops.run(self._own(sid), self._got, self._failed)

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
