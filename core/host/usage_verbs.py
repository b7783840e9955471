"""The host's usage verbs: `session.usage` (a session's tokens and cost, split at its seed)
and the `usage` of listed rows. A part of Host (a base class of it); the CLI's `sessions
usage`, the RPC and the client all reach this one implementation.

A session's usage is folded from its own log (`forkwise.core.log.usage`): what it shares
with its source is in its file too, below its seed. A listing prices each session's own
part as its summary keeps it (`SessionSummary.usage`, in the summary index): it reads no
log. Folds from a log (`sessions usage`, a summary that keeps none) are kept per session
while the session is unchanged (its generation and length). Prices come from
`forkwise.core.log.costs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from forkwise.core.errors import ForkwiseError

if TYPE_CHECKING:
    from collections.abc import Callable

    from forkwise.core.log.usage import SessionTokens
    from forkwise.core.store.session import Session, SessionSummary
    from forkwise.core.store.session_store import SessionStore

Json = dict[str, Any]
T = TypeVar("T")


class UsageVerbs:
    """Tokens and cost of sessions, for every client alike."""

    if TYPE_CHECKING:  # what Host gives its parts
        store: SessionStore

        async def io(self, fn: Callable[..., T], *args: Any) -> T: ...
        async def _serve(self, session_id: str) -> Session: ...

    def _usage_folds(self) -> dict[str, tuple[tuple[str, int], SessionTokens]]:
        kept: dict[str, tuple[tuple[str, int], SessionTokens]] | None = self.__dict__.get(
            "_usage_kept"
        )
        if kept is None:
            kept = self.__dict__["_usage_kept"] = {}
        return kept

    def _tokens_of(self, snap: Session) -> SessionTokens:
        """The session's usage fold (on the store worker), kept while it is unchanged."""
        from forkwise.core.log.usage import session_tokens

        key = (snap.generation, snap.last_seq)
        kept = self._usage_folds().get(snap.id)
        if kept is not None and kept[0] == key:
            return kept[1]
        counted = self._source_replies(snap.header.parent_session)
        folded = session_tokens(snap.events, snap.header.seed_length, counted)
        self._usage_folds()[snap.id] = (key, folded)
        return folded

    def _source_replies(self, source: str | None) -> frozenset[str]:
        """The replies a source's log counts (none when there is no source, or it is gone):
        what of them a fork's log repeats after its seed is shared, not its own."""
        if source is None:
            return frozenset()
        from forkwise.core.log.usage import session_tokens

        try:
            _, events = self.store.read_log(source)
        except ForkwiseError:
            return frozenset()
        return frozenset(session_tokens(events, len(events)).replies)

    def _report_sync(self, snap: Session) -> Json:
        from forkwise.core.log.costs import usage_report

        report = usage_report(self._tokens_of(snap))
        report["id"] = snap.id
        report["seedLength"] = snap.header.seed_length
        report["parentSession"] = snap.header.parent_session
        return report

    async def usage(self, session_id: str) -> Json:
        """`session.usage`: {"own", "shared", "total", "byModel"}, each part's tokens
        (input, output, cacheRead, cacheWrite, reasoning) and cost in USD (null: no price)."""
        snap = await self._serve(session_id)
        return await self.io(self._report_sync, snap)

    def _own_parts_sync(
        self, rows: Sequence[Json], summaries: Sequence[SessionSummary]
    ) -> dict[str, Json]:
        """Each row's own usage part: as its summary keeps it (the index: no log read), or
        for a summary that keeps none (an index written before usage was kept) folded
        from its log unless the fold kept for it is of the same log (its event count and
        last activity): a log at a time, none kept loaded."""
        from forkwise.core.log.costs import part
        from forkwise.core.log.usage import session_tokens

        kept = self._row_folds()
        out: dict[str, Json] = {}
        replies: dict[str, frozenset[str]] = {}  # of the rows folded so far
        for row, summary in zip(rows, summaries, strict=True):
            sid = row["id"]
            usage = summary.usage
            if usage is not None and not usage.head:
                try:
                    out[sid] = {"own": part(usage.buckets())}
                    continue
                except TypeError:
                    pass  # not of this form: from the log
            key = (row.get("events"), row.get("updated"), row.get("seedLength"))
            found = kept.get(sid)
            if found is None or found[0] != key:
                try:
                    header, events = self.store.read_log(sid)
                except ForkwiseError:
                    continue  # a row whose log cannot be read says so itself (its `error`)
                counted = replies.get(header.parent_session) if header.parent_session else None
                if counted is None:
                    counted = self._source_replies(header.parent_session)
                folded = session_tokens(events, header.seed_length, counted)
                found = kept[sid] = (key, folded)
            replies[sid] = frozenset(found[1].replies)
            out[sid] = {"own": part(found[1].own)}
        return out

    def _row_folds(self) -> dict[str, tuple[tuple[Any, ...], SessionTokens]]:
        kept: dict[str, tuple[tuple[Any, ...], SessionTokens]] | None = self.__dict__.get(
            "_usage_rows"
        )
        if kept is None:
            kept = self.__dict__["_usage_rows"] = {}
        return kept

    async def add_usage(self, rows: list[Json], summaries: Sequence[SessionSummary]) -> list[Json]:
        """`rows` (a listing's, made of `summaries`) with each one's `usage`: {"own": …}
        (on the store worker; a row whose log had to be read and cannot be gets none)."""
        parts = await self.io(self._own_parts_sync, rows, summaries)
        for row in rows:
            found = parts.get(row["id"])
            if found is not None:
                row["usage"] = found
        return rows
