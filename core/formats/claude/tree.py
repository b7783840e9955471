"""A Claude Code transcript as a tree of entries, and the lines of conversation in it.

Every user/assistant/system/attachment/progress entry has a `uuid` and a `parentUuid`
(a compaction boundary has `parentUuid: null` and the entry before it as
`logicalParentUuid`). A rewind leaves several children under one entry; parallel tool calls
leave the results of all but the last call as leaves too, and a compaction may replay
entries under new uuids with their old timestamps. This module finds the main line (the
chain ending at the last main-chain entry, what `claude --resume` continues), the rewound
branches (a leaf whose own part holds a typed prompt that the main line does not replay),
and attaches every other leaf to the line it hangs from, in one pass over the entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..base import FormatError, ReadWarning, read_source, unreadable_text, unreadable_warning

Entry = dict[str, Any]
INTERRUPT_PREFIX = "[Request interrupted by user"
#: the type of the entry that stands for a line that is not JSON (no entry of Claude Code
#: has it): `{"type": UNREADABLE_ENTRY, "text": the line}`
UNREADABLE_ENTRY = "\0unreadable"
#: entries of the conversation tree; one with a `uuid` and no `parentUuid` at all (a
#: minimal or hand-written file) follows the one before it in the file
_TREE_KINDS = frozenset({"user", "assistant", "system", "attachment", "progress"})


@dataclass(slots=True)
class Transcript:
    """The decoded lines of one file. `entries[i]` is line `lines[i]` (1-based)."""

    path: Path
    entries: list[Entry]
    lines: list[int]
    #: the last line was cut off mid-write (the file is being written)
    torn: bool = False
    #: index of each tree entry by its uuid (the last one wins, as in Claude Code)
    by_uuid: dict[str, int] = field(default_factory=dict)
    #: lines that are not JSON, kept as `UNREADABLE_ENTRY` entries
    warnings: list[ReadWarning] = field(default_factory=list)


def load(path: Path) -> Transcript:
    """Decode every line once. A line that is not a JSON object is kept as an
    `UNREADABLE_ENTRY` with a warning; a torn last line (no newline after it) is one the
    file's writer has not finished: left out, `torn` set.

    Each line is decoded from a view of the file's bytes, not from a copy: the lines of a
    Claude Code file are large, and copying them all (`split`) while their decoded entries
    are kept cost a fifth of the import (fresh pages for both, measured)."""
    try:
        data = read_source(path)
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror}", path=str(path)) from exc
    out = Transcript(path, [], [])
    entries, numbers, by_uuid = out.entries, out.lines, out.by_uuid
    loads = orjson.loads
    view = memoryview(data)
    find = data.find
    size = len(data)
    start = 0
    no = 0
    last_node: str | None = None  # the uuid of the last tree entry, for one without parent
    while start <= size:
        end = find(b"\n", start)
        last = end < 0  # no newline after it: the file's last line
        if last:
            end = size
        no += 1
        if end == start:
            start = end + 1
            continue
        why = ""
        try:
            entry = loads(view[start:end])
        except orjson.JSONDecodeError as exc:
            if not data[start:end].strip():
                start = end + 1
                continue
            if last:  # cut off while being written
                out.torn = True
                break
            entry, why = None, str(exc)
        if type(entry) is not dict:
            out.warnings.append(unreadable_warning(path, no, why or "not a JSON object"))
            entry = {"type": UNREADABLE_ENTRY, "text": unreadable_text(view[start:end])}
        start = end + 1
        uuid = entry.get("uuid")
        if uuid is not None and type(uuid) is str:
            if "parentUuid" not in entry and entry.get("type") in _TREE_KINDS:
                entry["parentUuid"] = last_node
            if "parentUuid" in entry:
                by_uuid[uuid] = len(entries)
                last_node = uuid
        entries.append(entry)
        numbers.append(no)
    return out


def is_node(entry: Entry) -> bool:
    return type(entry.get("uuid")) is str and "parentUuid" in entry


def prompt_text(entry: Entry) -> str | None:
    """The text a person typed, if `entry` is a typed prompt (not meta, not a compaction
    summary, not tool results only, not an interruption marker)."""
    if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isCompactSummary"):
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        texts: list[str] = []
        typed = False
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_result":
                return None
            if kind == "text":
                texts.append(str(block.get("text", "")))
                typed = True
            elif kind in ("image", "document"):
                typed = True
        if not typed:
            return None
        text = "\n".join(texts)
    else:
        return None
    if text.startswith(INTERRUPT_PREFIX):
        return None
    return text


@dataclass(slots=True)
class Line:
    """One line of conversation: the tree entries (indexes, file order) it is made of."""

    leaf: int
    nodes: list[int]
    #: index in the list of lines of the line this one left, or None for a first line
    parent: int | None = None
    #: the uuid of the first entry that is this line's own (for its id)
    fork_key: str | None = None
    #: tree entries of another part of the tree that repeat this line's prompts
    replays: list[list[int]] = field(default_factory=list)


def _twin_key(entry: Entry) -> tuple[object, ...]:
    """What two copies of one entry written under different uuids have in common."""
    kind = entry.get("type")
    ts = str(entry.get("timestamp"))
    message = entry.get("message")
    if kind == "assistant":
        mid = message.get("id") if isinstance(message, dict) else None
        return ("assistant", ts, str(mid))
    if kind == "user":
        text = prompt_text(entry)
        if text is not None:
            return ("prompt", ts, text)
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            calls = tuple(
                str(b.get("tool_use_id"))
                for b in content
                if isinstance(b, dict) and "tool_use_id" in b
            )
            if calls:
                return ("result", ts, calls)
        return ("user", ts, str(content)[:200])
    return (str(kind), ts, str(entry.get("subtype")))


def parent_of(t: Transcript, idx: int) -> int | None:
    entry = t.entries[idx]
    parent = entry.get("parentUuid")
    if type(parent) is not str:
        parent = entry.get("logicalParentUuid")
    if type(parent) is not str:
        return None
    found = t.by_uuid.get(parent)
    return None if found is None or found == idx else found


def lines_of(t: Transcript, members: list[int]) -> list[Line]:
    """The lines of the tree made of `members` (tree entry indexes in file order, all of one
    kind: main chain or sidechain): the main line first, then rewound branches."""
    if not members:
        return []
    member = set(members)
    parents: dict[int, int | None] = {}
    by_uuid, entries = t.by_uuid, t.entries
    for i in members:  # parent_of, inlined: this runs once per entry of the file
        entry = entries[i]
        up = entry.get("parentUuid")
        if type(up) is not str:
            up = entry.get("logicalParentUuid")
        found = by_uuid.get(up) if type(up) is str else None
        parents[i] = None if found == i else found
    has_child = {p for p in parents.values() if p is not None and p in member}
    owner: dict[int, int] = {}  # tree entry -> line that holds it
    attached: dict[int, list[int]] = {}  # entry -> leaves hanging from it (same line)
    lines: list[Line] = []

    def walk(leaf: int) -> tuple[list[int], int | None]:
        part: list[int] = []
        node: int | None = leaf
        while node is not None and node not in owner and node in member:
            part.append(node)
            owner[node] = -1  # claimed; set properly below
            node = parents.get(node)
        part.reverse()
        return part, node if node is not None and node in owner else None

    main_leaf = members[-1]
    part, _ = walk(main_leaf)
    lines.append(Line(main_leaf, part))
    main_part = part
    seen: set[tuple[object, ...]] | None = None  # made when a second leaf shows up
    for i in part:
        owner[i] = 0
    for leaf in reversed(members):
        if leaf in owner or leaf in has_child:
            continue
        if seen is None:
            seen = {_twin_key(t.entries[i]) for i in main_part}
        part, fork_at = walk(leaf)
        holder = owner[fork_at] if fork_at is not None else 0
        keys = [_twin_key(t.entries[i]) for i in part]
        if all(k in seen for k in keys):
            # entries written again under new uuids with their old timestamps (a compaction,
            # or Claude Code splitting a multi-block reply when it resumes): kept, not shown
            lines[holder].replays.append(part)
            for i in part:
                owner[i] = holder
        elif any(prompt_text(t.entries[i]) is not None for i in part):
            lines.append(Line(leaf, part, parent=holder, fork_key=str(t.entries[part[0]]["uuid"])))
            seen.update(keys)
            for i in part:
                owner[i] = len(lines) - 1
        else:  # results of parallel tool calls, progress entries: part of the line above
            anchor = fork_at if fork_at is not None else main_leaf
            attached.setdefault(anchor, []).extend(part)
            for i in part:
                owner[i] = holder
    for n, line in enumerate(lines):
        chain: list[int] = main_part if n == 0 else []  # the main walk went to the root
        node: int | None = None if n == 0 else line.leaf
        while node is not None and node in member:
            chain.append(node)
            node = parents.get(node)
            if len(chain) > len(members):
                raise FormatError("the parentUuid chain loops", path=str(t.path))
        if attached:
            chain = chain + [j for i in chain for j in attached.get(i, ())]
        line.nodes = sorted(chain)
    return lines
