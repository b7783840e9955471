"""Reads Claude Code transcripts (`~/.claude/projects/**/*.jsonl`) as Forkwise sessions.

One file gives its main line (`claude-<sessionId>`), each rewound branch
(`claude-<sessionId>-<first uuid of the branch>`, a fork of the line it left), and each
inline sidechain (a subagent of the session holding the Task call that started it). A
subagent file (`agent-<id>.jsonl`) gives that subagent's session. A file written by
`--fork-session` or `/branch` repeats its parent's entries under the same uuids, marked by
`forkedFrom` (2.1's /branch), `requestSessionId` (2.1's --fork-session) or by keeping the
parent's `sessionId` (2.0): its main line is a fork of the parent, and the repeated entries
read as the same events as in the parent.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from ...errors import ForkwiseError
from ..base import (
    FormatError,
    ImportedSession,
    Relation,
    SourceRef,
    Tool,
    collector_paused,
    source_session_id,
)
from . import layout
from .events import TITLE_KINDS, Builder
from .tree import Line, Transcript, lines_of, load, parent_of, prompt_text

_TASK_TOOLS = frozenset({"Task", "Agent"})
#: entries outside the conversation that Claude Code (2.0, 2.1) writes about its own state
BOOKKEEPING = frozenset(
    {
        "file-history-snapshot", "queue-operation", "last-prompt", "mode", "permission-mode",
        "atis-latch", "tools-used", "cost-state", "api-request", "api-request-shape",
        "api-request-blob", "attribution-snapshot", "content-replacement", "memory-mode",
        "tag", "agent-name", "agent-color", "agent-setting", "pr-link", "frame-link",
        "relocated", "history-suppression", "session-owner", "isolation-latch",
        "bridge-session", "dev-mods", "derived-from", "ended-by-model", "observer-ref",
        "worktree-state", "artifact-autoreact-ledger", "artifact-comment-monitor",
    }
)  # fmt: skip


class ClaudeReader:
    tool: Tool = "claude"

    def __init__(self, live_window: float = 30.0) -> None:
        #: a file written to within this many seconds, whose last turn has not ended, is
        #: taken to be still running: that turn is left open
        self.live_window = live_window
        #: which session spawned each subagent, by parent file (path, size, mtime)
        self._spawners: dict[tuple[str, int, int], dict[str, str]] = {}

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [layout.projects_dir(layout.config_dir(env, home))]

    def session_files(self, root: Path) -> Iterator[Path]:
        return layout.session_files(root)

    def sniff(self, head: bytes) -> bool:
        return layout.sniff(head)

    def read(self, path: Path) -> list[ImportedSession]:
        return self._read(path, defer=False)

    def read_deferred(self, path: Path) -> list[ImportedSession]:
        """`read`, each rewound branch built when it is stored (`DefersBranches`)."""
        return self._read(path, defer=True)

    def _read(self, path: Path, *, defer: bool) -> list[ImportedSession]:
        # Everything decoded is kept until the sessions are built, and none of it forms
        # cycles (the collector took half the time of a large file).
        with collector_paused():
            t = load(path)
            sessions = _FileReader(t, self._live(t), self._spawner).sessions(defer)
            if sessions:
                sessions[0].warnings.extend(t.warnings)
            return sessions

    def _spawner(self, agent_file: Path, session_id: str, agent_id: str) -> str | None:
        """The Forkwise id of the session whose Task call started subagent `agent_id`: the
        parent file is read once (and remembered while it is unchanged)."""
        name = f"{session_id}.jsonl"
        found = [
            p
            for p in (agent_file.parent / name, agent_file.parent.parent.parent / name)
            if p.is_file()
        ]
        if not found:
            return None
        stat = found[0].stat()
        key = (str(found[0]), stat.st_size, stat.st_mtime_ns)
        table = self._spawners.get(key)
        if table is None:
            try:
                table = _FileReader(load(found[0]), False).spawned()
            except ForkwiseError:  # unreadable, or refused by the safe reader
                table = {}
            if len(self._spawners) >= 8:
                self._spawners.clear()
            self._spawners[key] = table
        return table.get(agent_id)

    def _live(self, t: Transcript) -> bool:
        if t.torn:
            return True
        try:
            age = time.time() - os.stat(t.path).st_mtime
        except OSError:
            return False
        return age < self.live_window


class _FileReader:
    """The sessions of one decoded file."""

    def __init__(
        self,
        t: Transcript,
        live: bool,
        spawner: Callable[[Path, str, str], str | None] | None = None,
    ) -> None:
        self.t = t
        self.live = live
        self.spawner = spawner
        self.tools: dict[str, str] = {}
        self.task_prompts: dict[str, int] = {}  # Task prompt -> assistant entry
        main: list[int] = []
        side: list[int] = []
        ids: list[str] = []
        # where entries outside the tree go: before everything (`lead`), after a tree entry
        # (`after`), or folded into a tree entry's `src` (`folded`)
        lead: list[int] = []
        after: dict[int, list[int]] = {}
        folded: dict[int, list[int]] = {}
        previous: int | None = None
        pending: list[int] = []
        by_uuid = t.by_uuid
        for i, entry in enumerate(t.entries):
            sid = entry.get("sessionId")
            if sid is not None and type(sid) is str and (not ids or ids[-1] != sid):
                ids.append(sid)
            kind = entry.get("type")
            if type(kind) is not str:
                kind = "entry"
            uuid = entry.get("uuid")
            if type(uuid) is str and by_uuid.get(uuid) == i:
                if entry.get("isSidechain"):
                    side.append(i)
                else:
                    main.append(i)
                    previous = i
                    if pending:
                        folded.setdefault(i, []).extend(pending)
                        pending = []
                if kind == "assistant":
                    self._scan_tools(i, entry)
                continue
            if type(uuid) is str and "parentUuid" in entry:
                continue  # an older copy of an entry written again later: that one counts
            if kind in TITLE_KINDS:
                anchor = previous
                if kind == "summary":
                    leaf = by_uuid.get(str(entry.get("leafUuid")))
                    if leaf is not None:
                        anchor = leaf
                if anchor is None:
                    lead.append(i)
                else:
                    after.setdefault(anchor, []).append(i)
                continue
            if kind not in BOOKKEEPING:
                if previous is None:
                    lead.append(i)
                else:
                    after.setdefault(previous, []).append(i)
                continue
            # The tool's own bookkeeping, which a fork file never repeats: kept in the `src`
            # of the entry it belongs to (and counted as unmapped), so that a fork still
            # reads the same as its parent.
            target = previous
            if kind == "file-history-snapshot":
                named = by_uuid.get(str(entry.get("messageId")))
                target = named if named is not None else previous
            if target is None:
                pending.append(i)
            else:
                folded.setdefault(target, []).append(i)
        if pending:
            lead.extend(pending)
        self.extras = (lead, after, folded)
        self.main, self.side = main, side
        self.subagent_file = layout.is_subagent_file(t.path)
        stem = t.path.stem
        if not (main or side):
            self.sid = stem
        elif not ids:
            raise FormatError(
                "no entry names its session (sessionId)", path=str(t.path), line=t.lines[0]
            )
        elif self.subagent_file or stem not in ids:
            self.sid = ids[-1]
        else:
            self.sid = stem
        self.source_id = f"{self.sid}/{stem}" if self.subagent_file else self.sid
        self.parent_source = self._forked_from()
        self.owner: dict[int, str] = {}

    def _scan_tools(self, i: int, entry: dict[str, object]) -> None:
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                name = str(block.get("name", ""))
                self.tools[str(block.get("id", ""))] = name
                args = block.get("input")
                if name in _TASK_TOOLS and isinstance(args, dict):
                    prompt = args.get("prompt")
                    if isinstance(prompt, str):
                        self.task_prompts.setdefault(prompt, i)

    def _forked_from(self) -> str | None:
        """The session this file's entries were copied from, if it is a fork."""
        if self.subagent_file:
            return None
        for i in self.main:
            entry = self.t.entries[i]
            origin = layout.copied_from(entry, self.sid)
            if origin is not None or entry.get("type") == "assistant":
                return origin  # a copy starts the file and marks its first reply at the latest
        return None

    # --- sessions ------------------------------------------------------------------

    def sessions(self, defer: bool = False) -> list[ImportedSession]:
        """The main line, its rewound branches (`defer`: built when stored) and the
        subagents."""
        out: list[ImportedSession] = []
        extras = self.extras
        lines = lines_of(self.t, self.main)
        for n, line in enumerate(lines):
            if n == 0:
                sid = source_session_id("claude", self.sid)
                parent = (
                    source_session_id("claude", self.parent_source) if self.parent_source else None
                )
                relation: Relation | None = "fork" if parent else None
            else:
                sid = source_session_id("claude", self.sid, line.fork_key)
                parent, relation = self.owner_id(lines, line.parent), "fork"
            for i in line.nodes:
                self.owner.setdefault(i, sid)
            if defer and n > 0:
                make = functools.partial(self._session, sid, line, extras, parent, relation)
                source = SourceRef("claude", str(self.t.path), self.source_id, None)
                later = functools.partial(make, live=False)
                out.append(ImportedSession(sid, "", "", source, [], parent=parent,
                                           relation=relation, later=later))  # fmt: skip
                continue
            out.append(self._session(sid, line, extras, parent, relation, live=n == 0))
        out.extend(self._subagents(extras))
        return out

    def owner_id(self, lines: list[Line], index: int | None) -> str:
        if not index:
            return source_session_id("claude", self.sid)
        return source_session_id("claude", self.sid, lines[index].fork_key)

    def _session(
        self,
        sid: str,
        line: Line,
        extras: tuple[list[int], dict[int, list[int]], dict[int, list[int]]],
        parent: str | None,
        relation: Relation | None,
        *,
        live: bool,
        lead: bool = True,
    ) -> ImportedSession:
        before, after, folded = extras
        builder = Builder(self.t, self.source_id, self.live and live, self.tools)
        if lead:
            for i in before:
                builder.feed(i, [])
        replay_at = {part[0]: part for part in line.replays}
        for i in sorted([*line.nodes, *replay_at]):
            if i in replay_at:
                builder.replayed(replay_at[i])
                continue
            builder.feed(i, folded.get(i, []))
            for j in after.get(i, ()):
                builder.feed(j, [])
        events = builder.finish()
        entries = [self.t.entries[i] for i in line.nodes]
        cwd = next((str(e["cwd"]) for e in entries if isinstance(e.get("cwd"), str)), "")
        version = next(
            (str(e["version"]) for e in reversed(entries) if isinstance(e.get("version"), str)),
            None,
        )
        created = events[0]["ts"] if events else ""
        return ImportedSession(
            id=sid,
            created=created,
            cwd=cwd,
            source=SourceRef("claude", str(self.t.path), self.source_id, version),
            events=events,
            title=builder.title,
            parent=parent,
            relation=relation,
            unmapped=builder.unmapped,
        )

    def spawned(self) -> dict[str, str]:
        """agentId -> the Forkwise id of the line holding the Task result that names it."""
        lines = lines_of(self.t, self.main)
        owner: dict[int, str] = {}
        for n, line in enumerate(lines):
            sid = self.owner_id(lines, n)
            for i in line.nodes:
                owner.setdefault(i, sid)
        out: dict[str, str] = {}
        for i in self.main:
            result = self.t.entries[i].get("toolUseResult")
            agent = result.get("agentId") if isinstance(result, dict) else None
            if isinstance(agent, str) and i in owner:
                out.setdefault(agent, owner[i])
        return out

    def _subagents(
        self, extras: tuple[list[int], dict[int, list[int]], dict[int, list[int]]]
    ) -> list[ImportedSession]:
        """Sidechain trees: each is a subagent of the session that started it."""
        roots: dict[int, int] = {}
        groups: dict[int, list[int]] = {}
        for i in self.side:
            chain = [i]
            node = i
            while True:
                known = roots.get(node)
                if known is not None:
                    root = known
                    break
                up = parent_of(self.t, node)
                if up is None or up == node or not self.t.entries[up].get("isSidechain"):
                    root = node
                    break
                node = up
                chain.append(node)
                if len(chain) > len(self.side):
                    raise FormatError("the parentUuid chain loops", path=str(self.t.path))
            for c in chain:
                roots[c] = root
            groups.setdefault(root, []).append(i)
        out: list[ImportedSession] = []
        main_id = source_session_id("claude", self.sid)
        for n, (root, members) in enumerate(sorted(groups.items())):
            root_entry = self.t.entries[root]
            agent = root_entry.get("agentId")
            if self.subagent_file:
                agent_id = self.t.path.stem.removeprefix("agent-")
                key = agent_id if n == 0 else str(root_entry["uuid"])
                found = self.spawner(self.t.path, self.sid, agent_id) if self.spawner else None
                parent = found or main_id
            else:
                key = str(agent) if isinstance(agent, str) else str(root_entry["uuid"])
                text = prompt_text(root_entry)
                spawner = self.task_prompts.get(text) if text is not None else None
                parent = self.owner.get(spawner, main_id) if spawner is not None else main_id
            sub_id = source_session_id("claude", self.sid, key)
            lines = lines_of(self.t, members)
            for m, line in enumerate(lines):
                if m == 0:
                    out.append(
                        self._session(
                            sub_id, line, extras, parent, "subagent", live=True, lead=False
                        )
                    )
                else:
                    fork_id = source_session_id("claude", self.sid, line.fork_key)
                    fork_parent = (
                        sub_id
                        if not line.parent
                        else source_session_id("claude", self.sid, lines[line.parent].fork_key)
                    )
                    out.append(
                        self._session(
                            fork_id, line, extras, fork_parent, "fork", live=False, lead=False
                        )
                    )
        return out


READER = ClaudeReader()
