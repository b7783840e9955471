"""Where Claude Code keeps its sessions, and how it names their folders.

Claude Code writes `<config>/projects/<munged cwd>/<sessionId>.jsonl`, where the config folder
is `$CLAUDE_CONFIG_DIR` or `~/.claude` and the cwd has every character other than an ASCII
letter or digit replaced by `-`; a munged name longer than 200 characters is cut there and
given a hash suffix (Claude Code 2.1's `projects` path rule). Subagent transcripts sit beside
the sessions (`agent-<id>.jsonl`, up to 2.0) or under `<sessionId>/subagents/`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson

from ..base import jsonl_files

#: how long a munged folder name may be before Claude Code cuts it and adds a hash
_MAX_MUNGED = 200


def config_dir(env: Mapping[str, str], home: Path) -> Path:
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else home / ".claude"


def projects_dir(root: Path) -> Path:
    """`root` if it is a `projects` folder already, else the `projects` folder inside it."""
    return root if root.name == "projects" else root / "projects"


def _java_hash(text: str) -> int:
    """JavaScript's `(h << 5) - h + charCode | 0` over UTF-16 code units."""
    data = text.encode("utf-16-le")
    h = 0
    for i in range(0, len(data), 2):
        h = (h * 31 + (data[i] | data[i + 1] << 8)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def munge_cwd(cwd: str) -> str:
    """The project folder name Claude Code uses for `cwd`."""
    munged = "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)
    if len(munged) <= _MAX_MUNGED:
        return munged
    return f"{munged[:_MAX_MUNGED]}-{_base36(abs(_java_hash(cwd)))}"


def session_files(root: Path) -> Iterator[Path]:
    """Every `.jsonl` under `root`, subagent transcripts last. Nothing is read: the import
    verb stores a file forked from another (`--fork-session`, `/branch`) after the file it
    came from, whichever comes first here."""
    if root.is_file():
        yield root
        return
    if not root.is_dir():
        return
    agents: list[Path] = []
    for path in jsonl_files(root):
        if path.name.startswith("agent-"):
            agents.append(path)
        else:
            yield path
    yield from agents


def copied_from(entry: dict[str, object], own: str) -> str | None:
    """The session a tree entry was copied from by a fork, if it says so: 2.1's `/branch`
    writes `forkedFrom`, 2.1's `--fork-session` keeps the origin as `requestSessionId` on
    replies, 2.0's `--fork-session` keeps the origin's `sessionId` on prompts."""
    forked = entry.get("forkedFrom")
    origin = forked.get("sessionId") if isinstance(forked, dict) else None
    if isinstance(origin, str) and origin != own:
        return origin
    for key in ("sessionId", "requestSessionId"):
        sid = entry.get(key)
        if type(sid) is str and sid != own:
            return sid
    return None


def is_subagent_file(path: Path) -> bool:
    return path.name.startswith("agent-")


def sniff(head: bytes) -> bool:
    """Whether the first complete lines of `head` look like Claude Code entries: every entry
    that names its session has a `type` and a top-level `sessionId` (Codex nests its id in a
    `payload`, pi's header is `{"type": "session", "id": …}`); snapshots and summaries name
    no session but have fields of their own."""
    for chunk in head.split(b"\n")[:40]:
        raw = chunk.strip()
        if not raw:
            continue
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # the cut-off last line of the head, or a torn line
        if not isinstance(entry, dict):
            return False
        kind = entry.get("type")
        if "payload" in entry or kind == "session":
            return False
        if isinstance(kind, str) and type(entry.get("sessionId")) is str:
            return True
        if "parentUuid" in entry and "uuid" in entry:
            return True
        if kind == "summary" and "leafUuid" in entry:
            return True
        if kind == "file-history-snapshot" and "messageId" in entry:
            return True
    return False
