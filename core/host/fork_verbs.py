"""The host's fork verbs: fork at the anchor rule, at a message, in place (truncate), and
the subagent a `delegate` tool call starts. A part of Host (a base class of it); the
policy — where a fork cuts and which model the child runs on — is forking.py's, and every
entry point (GUI, CLI, RPC, subagent) comes through `fork_session` or `truncate`.

A fork follows the anchor rule, which picks the boundary, the child is created with the
latest model/select of the source recorded after its `history/fork` (one atomic write, so
nothing can run the child on another model), it is registered as a live agent, and only
then attached to the source's workspace — an attach failure reports the child's id."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from forkwise.core.errors import DuplicateSessionId, SessionBusy, WorkspaceAttachFailed
from forkwise.core.log.ids import validate_session_id
from forkwise.core.log.turns import message_boundary

if TYPE_CHECKING:  # what Host gives its parts
    from forkwise.core.host.forking import ForkAt
    from forkwise.core.runtime.agent import Agent
    from forkwise.core.runtime.providers.base import ModelChoice, Provider
    from forkwise.core.store.session import Session, SessionSummary
    from forkwise.core.store.session_store import SessionStore

log = logging.getLogger(__name__)
Json = dict[str, Any]
T = TypeVar("T")


class ForkVerbs:
    """Forks and in-place cuts of a session."""

    if TYPE_CHECKING:  # what Host gives its parts
        store: SessionStore
        providers: dict[str, Provider]
        _agents: dict[str, Agent]
        _default_model: ModelChoice

        def row(self, summary: SessionSummary) -> Json: ...
        def models(self) -> list[Json]: ...
        def _check_writable(self) -> None: ...
        def _publish(self, session_id: str) -> None: ...
        def _recover_sync(self, session_id: str) -> Session: ...
        async def io(self, fn: Callable[..., T], *args: Any) -> T: ...
        async def _serve(self, session_id: str) -> Session: ...
        async def agent(self, session_id: str) -> Agent: ...
        async def _attach_like(self, source: str | None, child: str) -> None: ...

    async def fork(self, session_id: str, at_seq: int | None = None) -> Json:
        """`session.fork`: the anchor rule picks the boundary."""
        # the policy is imported where a fork is made: a one-shot listing makes none
        from forkwise.core.host.forking import ForkAt

        return await self.fork_session(session_id, ForkAt(at_seq=at_seq))

    async def fork_at_message(
        self,
        session_id: str,
        message_id: str,
        include_message: bool = True,
        replace: bool = False,
    ) -> Json:
        """Seed-002 fork at a message; `replace` truncates this session in place instead."""
        if replace:
            return await self.truncate(session_id, message_id, include_message)
        from forkwise.core.host.forking import ForkAt

        at = ForkAt(message_id=message_id, include_message=include_message)
        return await self.fork_session(session_id, at)

    def serves(self, choice: ModelChoice) -> bool:
        """Whether a configured provider of this host serves `choice`: one that lists the
        model, lists no particular model (an endpoint that takes any name), or answers the
        same whatever model is named (the offline one)."""
        if getattr(self.providers.get(choice.provider), "any_model", False):
            return True
        for row in self.models():
            if row.get("provider") == choice.provider and row.get("model") in (None, choice.model):
                return True
        return False

    def _child_follow(self, source: SessionSummary) -> list[Json]:
        from forkwise.core.host.forking import child_model, follow_drafts

        return follow_drafts(child_model(source, self.serves, self._default_model))

    async def fork_session(
        self,
        source: str,
        at: ForkAt,
        child_id: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Json:
        """The one fork: cut `source` where `at` says, give the child the model its source
        runs on (or this host's default when none serves it), publish the child, attach it
        to its source's workspace. Raises `WorkspaceAttachFailed` (with the child's id)
        after the child exists."""

        def create() -> SessionSummary:
            if child_id is not None and self.store.exists(validate_session_id(child_id)):
                # the child's id is checked first, as the store's own fork does
                raise DuplicateSessionId(
                    f"a session {child_id!r} exists already", session_id=child_id
                )
            if at.exact:
                # the store contract on the log as it is: an exact boundary inside a turn
                # a crash left open is refused, not moved past the turn/end that serving
                # the session (recovery) would append first
                at.resolve(self.store.get(source).events, source)
            if at.last_turn:
                made = self.store.fork_indexed(
                    source, child_id, meta=meta, follow=self._child_follow
                )
                if made is not None:
                    return made
            snap = self._recover_sync(source)
            boundary = at.resolve(snap.events, source)
            follow = self._child_follow(self.store.summary(source))
            child = self.store.fork(
                snap, boundary, child_id, meta=meta, follow=follow, anchor=at.anchor()
            )
            return self.store.summary(child.id)

        self._check_writable()
        made = await self.io(create)
        self._publish(made.id)
        await self._attach_like(source, made.id)
        return self.row(made)

    async def truncate(self, session_id: str, message_id: str, include_message: bool) -> Json:
        """Replace in place (seed 002 `replace=True`): the session keeps its id and ends at
        that message's turn; refused while a turn is open or prompts are queued."""
        self._check_writable()
        await self._serve(session_id)
        agent = self._agents.get(session_id)
        if agent is not None and agent.busy:
            raise SessionBusy(
                "this session is running a turn or has queued prompts", session_id=session_id
            )

        from forkwise.core.runtime.turn_state import OpenTurn

        def truncate() -> Json:
            snap = self.store.get(session_id)
            if OpenTurn.of(snap) is not None:
                raise SessionBusy("this session has an open turn", session_id=session_id)
            boundary = message_boundary(snap.events, message_id, include_message, session_id)
            self.store.truncate(snap, boundary)
            return self.row(self.store.summary(session_id))

        return await self.io(truncate)

    async def run_subagent(self, parent: str, task: str) -> Json:
        """The `delegate` tool: a child clipped to the parent's last completed turn."""
        from forkwise.core.host.forking import ForkAt

        meta = {"relation": "subagent", "title": f"Subagent: {task[:60]}"}
        try:
            row = await self.fork_session(parent, ForkAt(subagent=True), meta=meta)
        except WorkspaceAttachFailed as exc:
            log.warning("subagent %s could not join its parent's workspace", exc.details)
            row = {"id": exc.details["childId"]}
        _, outcome = (await self.agent(row["id"])).prompt(task)
        result = await outcome
        return {
            "session": row["id"],
            "status": result["status"],
            "reply": result["reply"],
            "error": result.get("error"),
        }
