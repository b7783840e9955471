"""The runtime of one live session: turns, steps, tool calls, approvals, the prompt queue.

Everything the runtime does is decided from the session's log, never from memory alone:
each pass of the driver reads the log and takes the next step (start a queued prompt,
run the model, run approved tools, end the turn). That is what lets a turn that waits on
an approval stay open across a restart and continue when the person answers it, in a
later process. Reading the log is cheap (`agent_writes.py`: a pass reuses the snapshot the
last write returned while nothing changed the session since); the replay a step needs is
kept between steps (`live_replay.py`).

A turn writes `turn/start`, the user message, then steps (`step/start`, the assistant
message — streamed to subscribers as `session/delta` notes, a few per step however fast
the model is, persisted whole — tool calls with their `approval/request`,
`approval/resolve` and `tool/result`, `step/end`) and one `turn/end` whose status is
completed, cancelled, failed (with the error text) or interrupted. The drafts that open a
step (`turn/start`, the user message and the first `step/start`; a later `step/start`) are
held back (`held_drafts.py`) and written with what the step produced when the model has
its result at once — a plain offline turn is one store-worker call and one flush — or on
their own as soon as the step has to wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Protocol, TypeVar

from forkwise.core.errors import ApprovalNotFound, ForkwiseError, ProviderError
from forkwise.core.log.events import (
    APPROVAL_RESOLVE,
    MESSAGE,
    STEP_END,
    TOOL_RESULT,
    TURN_START,
    text_part,
)
from forkwise.core.log.ids import new_message_id, new_token
from forkwise.core.log.replay import Replay, Replayer
from forkwise.core.notifications import SESSION_TURN, SessionDelta, SessionTurn
from forkwise.core.runtime.agent_writes import AgentWrites, WriteRuntime
from forkwise.core.runtime.deltas import DeltaStream
from forkwise.core.runtime.fresh_notes import fresh
from forkwise.core.runtime.providers.base import ModelChoice, Provider
from forkwise.core.runtime.providers.steps import StepResult, TextDelta
from forkwise.core.runtime.step_drafts import (
    ending,
    partial_message,
    step_result_drafts,
    step_start,
)
from forkwise.core.runtime.tools import Delegate, Tool, ToolContext, ToolFailed, tool_specs
from forkwise.core.runtime.turn_state import OpenTurn, PendingCall, choice_of, outcome_of
from forkwise.core.store.session import Session
from forkwise.core.store.session_store import SessionStore

log = logging.getLogger(__name__)
T = TypeVar("T")
Json = dict[str, Any]

MAX_STEPS_PER_TURN = 16
MAX_DRIVE_PASSES = 100_000


class Runtime(WriteRuntime, Protocol):
    """What an agent needs from its host (what its reads and writes need: see
    `WriteRuntime`)."""

    tools: Mapping[str, Tool]

    def provider(self, name: str) -> Provider: ...
    def default_choice(self) -> ModelChoice: ...

    @property
    def delegate(self) -> Delegate | None: ...


class Agent(AgentWrites):
    """One live session. All methods run on the host's event loop; its reads and writes of
    the log are `AgentWrites`'s."""

    rt: Runtime

    def __init__(self, rt: Runtime, session_id: str, turn_open: bool) -> None:
        super().__init__(rt, session_id)
        self._turn_open = turn_open
        self._queue: deque[tuple[str, asyncio.Future[Json]]] = deque()
        self._current: asyncio.Future[Json] | None = None
        self._waiters: list[tuple[asyncio.Future[Json], Callable[[Json], bool]]] = []
        self._runner: asyncio.Task[None] | None = None
        self._work: asyncio.Task[Any] | None = None
        self._cancel = False
        self._again = False
        self._waiting = False
        #: a `session/turn` note to send on the loop's next turn
        self._announcing: asyncio.Handle | None = None

    # --- state ---------------------------------------------------------------------

    @property
    def queued(self) -> int:
        return len(self._queue)

    @property
    def busy(self) -> bool:
        """A turn is open (running or waiting for an approval) or prompts are queued."""
        return self._turn_open or self._runner is not None or bool(self._queue)

    @property
    def driving(self) -> bool:
        """This host runs a turn of the session or holds prompts for it (a turn open in
        the log alone may be an imported session's agent's)."""
        return self._runner is not None or bool(self._queue)

    async def agents_turn_open(self) -> bool:
        """The log's open turn is an imported session's agent's, still writing it (read
        from the snapshot this agent holds when nothing changed the session since)."""
        turn = OpenTurn.of(await self._read())
        return turn is not None and turn.agent

    def state(self) -> Json:
        """`running`: a turn is open or about to start; `waiting`: it waits on approvals."""
        return {"running": self.busy, "queued": len(self._queue), "waiting": self._waiting}

    def _announce_state(self, now: bool = False) -> None:
        """Tell subscribers the state (`session/turn`) as it is on the loop's next turn:
        changes made meanwhile are one note (a prompt that starts at once: one, not two).
        `now`: at once, with any note still to come (the driver stopped)."""
        if self._announcing is not None:
            if not now:
                return  # one is coming, with the state as it will be then
            self._announcing.cancel()
        if now:
            self._send_state()
        else:
            self._announcing = asyncio.get_running_loop().call_soon(self._send_state)

    def _send_state(self) -> None:
        self._announcing = None
        note: SessionTurn = {
            "kind": SESSION_TURN,
            "sessionId": self.id,
            "running": self.busy,
            "queued": len(self._queue),
            "waiting": self._waiting,
        }
        self.rt.notify(fresh(note))

    # --- commands ------------------------------------------------------------------

    def prompt(self, text: str) -> tuple[int, asyncio.Future[Json]]:
        """Queue a prompt; returns how many prompts run before it and its outcome future."""
        ahead = len(self._queue) + (1 if self.busy else 0)
        future: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
        self._queue.append((text, future))
        self._kick()
        self._announce_state()
        return ahead, future

    async def approve(self, approval_id: str, approved: bool) -> asyncio.Future[Json]:
        """Answer a pending approval and continue the turn; returns the next-outcome future."""
        await self.rt.session_io(
            self.id, _resolve_approval, self.rt.store, self.id, approval_id, approved
        )

        def answered(outcome: Json) -> bool:
            asked = {a["approval"] for a in outcome.get("approvals", ())}
            return outcome["status"] != "running" and approval_id not in asked

        future = self._next_outcome(answered)
        self._kick()
        return future

    async def cancel(self) -> Json | None:
        """Cancel the open turn and drop queued prompts; returns once the turn has ended."""
        for _, future in self._queue:
            _settle(future, {"sessionId": self.id, "turn": None, "status": "cancelled"})
        self._queue.clear()
        if not self.busy:
            self._announce_state()
            return None
        self._cancel = True
        if self._work is not None:
            self._work.cancel()
        future = self._next_outcome(lambda o: o["status"] not in ("running", "waiting"))
        self._kick()
        return await future

    async def shutdown(self) -> None:
        """Stop running work; a running turn ends `interrupted` (a waiting one stays open)."""
        if self._runner is None and not (self._turn_open or self._queue or self._waiters):
            return  # never ran here (e.g. a fork's child nobody prompted): nothing to end
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        turn = OpenTurn.of(await self._read())
        if turn is not None and not turn.pending and not turn.agent:  # an agent's: not ours
            reason = "the host shut down during the turn"
            await self._end_turn(turn.end("interrupted", reason), turn.id)
        outcome = {"sessionId": self.id, "turn": None, "status": "interrupted"}
        for _, future in self._queue:
            _settle(future, outcome)
        self._queue.clear()
        self._settle(outcome, ended=True)

    # --- the driver ----------------------------------------------------------------

    def _kick(self) -> None:
        self._again = True
        if self._runner is None:
            self._runner = asyncio.get_running_loop().create_task(self._drive())

    def _next_outcome(self, wanted: Callable[[Json], bool]) -> asyncio.Future[Json]:
        """A future for the first outcome that satisfies `wanted` (a later one, not one a
        pass already in flight computed from an older log)."""
        future: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
        self._waiters.append((future, wanted))
        return future

    async def _drive(self) -> None:
        try:
            for _ in range(MAX_DRIVE_PASSES):
                self._again = False
                if not await self._pass() and not self._again:
                    return
            log.error("session %s: the driver made %d passes; stopping", self.id, MAX_DRIVE_PASSES)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("session %s: the agent runtime failed", self.id)
            text = exc.message if isinstance(exc, ForkwiseError) else f"internal error: {exc}"
            await self._fail_turn(text)
            # whoever waits on this prompt learns why it stopped (a turn that could not even
            # be written, e.g. on a full disk, has no turn/end to carry the reason)
            self._settle({**self._idle(), "status": "failed", "error": text}, ended=True)
        finally:
            self._runner = None
            self._announce_state(now=True)

    async def _pass(self) -> bool:
        """One step forward from what the log says; False when there is nothing to do."""
        snap = await self._read()
        turn = OpenTurn.of(snap)
        self._turn_open = turn is not None
        self._waiting = bool(turn and turn.pending)
        if turn is None:
            self._cancel = False
            if not self._queue:
                self._settle(self._idle(), ended=True)
                await self._replay.write_checkpoint()
                return False
            text, future = self._queue.popleft()
            self._current = future
            await self._begin(snap, text)
            return True
        if self._cancel:
            await self._end_turn(turn.end("cancelled"), turn.id)
            return True
        if turn.pending:
            self._settle(await self._outcome(turn.id), ended=False)
            self._announce_state()
            return False
        unanswered = [c for c in turn.calls if not c.answered]
        if unanswered:
            await self._run_tool(snap, turn, unanswered[0])
        elif turn.open_step is not None:
            await self._append([{"type": STEP_END, "turn": turn.id, "step": turn.open_step}])
        elif turn.steps >= MAX_STEPS_PER_TURN:
            await self._end_turn(turn.end("failed", f"stopped after {turn.steps} steps"), turn.id)
        else:
            await self._step(snap, turn)
        return True

    async def _begin(self, snap: Session, text: str) -> None:
        """Open a turn with the prompt and its first step (held back for the step's own
        write, or written as soon as the step waits), then run the step."""
        turn = new_token("turn")
        replayer = await self._replay.up_to(snap)
        choice = choice_of(replayer.model) or self.rt.default_choice()
        step, start = step_start(turn, choice)
        opening: list[Json] = [
            {"type": TURN_START, "turn": turn},
            {
                "type": MESSAGE,
                "id": new_message_id("user", text, replayer.message_ids),
                "role": "user",
                "turn": turn,
                "parts": [text_part(text)],
            },
            start,
        ]
        replayer.feed(self._opening.hold(opening, snap.last_seq))
        self._turn_open = True
        self._announce_state()
        await self._run_step(replayer, turn, step, choice)

    async def _step(self, snap: Session, turn: OpenTurn) -> None:
        replayer = await self._replay.up_to(snap)
        choice = choice_of(replayer.model) or self.rt.default_choice()
        step, start = step_start(turn.id, choice)
        replayer.feed(self._opening.hold([start], snap.last_seq))
        await self._run_step(replayer, turn.id, step, choice)

    async def _run_step(
        self, replayer: Replayer, turn: str, step: str, choice: ModelChoice
    ) -> None:
        """Stream step `step` (its step/start is folded into `replayer`, and held or
        written) and write what it produced."""
        replayed: Replay = replayer.result()
        streamed: list[str] = []
        try:
            provider = self.rt.provider(choice.provider)
            result = await self._cancellable(
                self._stream(provider, replayed, choice, turn, streamed)
            )
        except ProviderError as exc:
            await self._end_turn(ending(turn, step, "failed", exc.message), turn)
            return
        except asyncio.CancelledError:
            if _being_cancelled():
                raise
            # our own cancel: what the person already read stays, as the step's assistant
            # message (forks and replay see it); the next pass ends the turn cancelled
            partial = "".join(streamed)
            if partial:
                message_id = new_message_id("assistant", partial, replayer.message_ids)
                await self._append([partial_message(turn, step, message_id, partial)])
            return
        message, drafts = step_result_drafts(
            turn,
            step,
            result,
            self.rt.tools,
            new_message_id("assistant", result.text, replayer.message_ids),
        )
        if result.tool_calls:
            await self._append([message, *drafts])
        else:
            await self._end_turn([message, *drafts, *ending(turn, step, "completed")], turn)

    async def _stream(
        self,
        provider: Provider,
        replayed: Replay,
        choice: ModelChoice,
        turn: str,
        streamed: list[str],
    ) -> StepResult:
        """The step's result; `streamed` collects the text sent so far (kept on cancel)."""
        tools = tool_specs(self.rt.tools)
        deltas = DeltaStream(self._tell, self.id, turn)
        items = provider.stream_step(replayed.transcript, choice, tools)
        # the step's opening is written on its own once the step waits for anything
        waiting = self._opening.write_when_waiting(self._write_opening)
        try:
            # closed as soon as the result is here (a network stream is let go before the
            # message is written, and the loop is spared a finalizer call per step)
            async with contextlib.aclosing(items):
                async for item in items:
                    if isinstance(item, TextDelta):
                        if item.text:
                            deltas.add(item.text)
                            streamed.append(item.text)
                    else:
                        return item
        finally:
            if waiting is not None:
                waiting.cancel()  # the result is at hand: the opening goes with it
            deltas.flush()  # all streamed text is out before the message is appended
        raise ProviderError(f"provider {provider.name!r} ended the step without a result")

    def _tell(self, note: SessionDelta) -> None:
        """A streamed-text note: held while the step's opening is (`HeldDrafts.tell`)."""
        self._opening.tell(note, self.rt.notify)

    async def _run_tool(self, snap: Session, turn: OpenTurn, call: PendingCall) -> None:
        if call.decision != "approved":
            output: Any = "The person denied this tool call."
            is_error = True
        else:
            tool = self.rt.tools[call.tool]
            ctx = ToolContext(self.id, snap.header.cwd, self.rt.delegate)
            try:
                output, is_error = await self._cancellable(tool.run(call.args, ctx)), False
            except (ToolFailed, ForkwiseError) as exc:
                output, is_error = str(exc), True
            except asyncio.CancelledError:
                if _being_cancelled():
                    raise
                return
        await self._append(
            [
                {
                    "type": TOOL_RESULT,
                    "turn": turn.id,
                    "call": call.call,
                    "tool": call.tool,
                    "output": output,
                    "isError": is_error,
                }
            ]
        )

    async def _cancellable(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` as the task `cancel()` interrupts."""
        task = asyncio.get_running_loop().create_task(work)
        self._work = task
        if self._cancel:  # a cancel that came while the step was being set up
            task.cancel()
        try:
            return await task
        finally:
            self._work = None

    async def _fail_turn(self, text: str) -> None:
        try:
            turn = OpenTurn.of(await self._read())
            if turn is not None:
                await self._end_turn(turn.end("failed", text), turn.id)
        except Exception:
            log.exception("session %s: could not end the failed turn", self.id)

    # --- outcomes ------------------------------------------------------------------

    async def _outcome(self, turn: str) -> Json:
        return outcome_of(await self._read(), turn)

    async def _end_turn(self, drafts: list[Json], turn: str) -> None:
        """Append drafts that end `turn`, then settle everyone waiting on it."""
        snap = await self._append(drafts)
        self._turn_open = False
        self._waiting = False
        self._settle(outcome_of(snap, turn), ended=True)

    def _idle(self) -> Json:
        return {
            "sessionId": self.id,
            "turn": None,
            "status": "idle",
            "reply": None,
            "error": None,
            "approvals": [],
        }

    def _settle(self, outcome: Json, ended: bool) -> None:
        if self._current is not None:
            _settle(self._current, outcome)
            if ended:
                self._current = None
        keep = []
        for future, wanted in self._waiters:
            if wanted(outcome) or outcome["status"] == "idle":
                _settle(future, outcome)
            elif not future.done():
                keep.append((future, wanted))
        self._waiters = keep


def _resolve_approval(store: SessionStore, session_id: str, approval: str, approved: bool) -> None:
    """Check and record an answer in one store-worker call, so two answers cannot race."""
    snap = store.get(session_id)
    turn = OpenTurn.of(snap)
    request = turn.pending.get(approval) if turn is not None else None
    if turn is None or request is None:
        raise ApprovalNotFound(
            f"approval {approval!r} is not waiting for an answer in session {session_id!r}",
            session_id=session_id,
            approval=approval,
        )
    store.append(
        session_id,
        [
            {
                "type": APPROVAL_RESOLVE,
                "turn": turn.id,
                "approval": approval,
                "call": request.call,
                "decision": "approved" if approved else "denied",
            }
        ],
    )


def _settle(future: asyncio.Future[Json], outcome: Json) -> None:
    if not future.done():
        future.set_result(outcome)


def _being_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
