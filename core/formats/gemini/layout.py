"""Where Gemini CLI keeps its sessions, and how it names their folders and files.

Gemini CLI's home is `$GEMINI_CLI_HOME/.gemini` or `~/.gemini`. Each project folder gets a
short slug (its base name, lower-cased, every run of other characters a `-`, `-1`, `-2` …
on a clash), registered in `projects.json` (`{"projects": {cwd: slug}}`) and claimed by a
`.project_root` file holding the cwd in `tmp/<slug>/`. Sessions are
`tmp/<slug>/chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of the id>.jsonl` (older ones
`session-*.json`, one JSON document), a subagent's `chats/<parent session id>/<id>.jsonl`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson

from forkwise.core.safe_read import read_regular

SESSION_PREFIX = "session-"
ROOT_MARKER = ".project_root"
_SLUG_RUN = re.compile(r"[^a-z0-9]+")


def gemini_dir(env: Mapping[str, str], home: Path) -> Path:
    """`$GEMINI_CLI_HOME/.gemini` (Gemini CLI's own override of the home folder) or
    `~/.gemini`."""
    configured = env.get("GEMINI_CLI_HOME")
    return (Path(configured).expanduser() if configured else home) / ".gemini"


def tmp_dir(root: Path) -> Path:
    """`root` if it is a `tmp` folder already, else the `tmp` folder of a Gemini home."""
    return root if root.name == "tmp" else root / "tmp"


def session_files(root: Path) -> Iterator[Path]:
    """The session files under `root`, sorted by path: every `chats/session-*.jsonl`, a
    `session-*.json` only when it was not migrated to a `.jsonl` beside it (Gemini CLI
    keeps both after a resume), and every subagent file `chats/<parent>/<id>.jsonl`."""
    if root.is_file():
        yield root
        return
    found: list[str] = []
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                names = [(e.name, e.is_dir(follow_symlinks=False), e.is_file()) for e in entries]
        except OSError:
            continue
        in_chats = os.path.basename(folder) == "chats"
        in_sub = os.path.basename(os.path.dirname(folder)) == "chats"
        present = {n for n, _, _ in names}
        for name, is_dir, is_file in names:
            path = os.path.join(folder, name)
            if is_dir:
                stack.append(path)
            elif not is_file:
                continue
            elif in_chats and name.startswith(SESSION_PREFIX):
                if name.endswith(".jsonl") or (
                    name.endswith(".json") and name + "l" not in present
                ):
                    found.append(path)
            elif in_sub and name.endswith(".jsonl"):
                found.append(path)
    for path in sorted(found):
        yield Path(path)


def project_folder(path: Path) -> Path:
    """The project's `tmp/<slug>` folder of a session file (main or subagent)."""
    chats = path.parent if path.parent.name == "chats" else path.parent.parent
    return chats.parent


def project_cwd(path: Path) -> str | None:
    """The project folder a session file belongs to: its `.project_root` marker, else the
    `projects.json` entry naming its slug."""
    folder = project_folder(path)
    try:
        marker = read_regular(folder / ROOT_MARKER, follow=True)[0].decode().strip()
    except (OSError, UnicodeDecodeError):
        marker = ""
    if marker:
        return marker
    named = [cwd for cwd, slug in registry(folder.parent.parent).items() if slug == folder.name]
    return named[0] if named else None


def registry(gemini: Path) -> dict[str, str]:
    """`projects.json` of a Gemini home: project folder -> slug (empty when missing)."""
    try:
        data = orjson.loads(read_regular(gemini / "projects.json", follow=True)[0])
    except (OSError, orjson.JSONDecodeError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {k: v for k, v in projects.items() if isinstance(k, str) and isinstance(v, str)}


def slugify(name: str) -> str:
    return _SLUG_RUN.sub("-", name.lower()).strip("-") or "project"


def project_slug(gemini: Path, cwd: str) -> str:
    """The slug Gemini CLI uses for `cwd`, registering one as Gemini CLI would when the
    project has none yet (the first free `<base name>`, `<base name>-1` …)."""
    cwd = os.path.abspath(cwd)
    known = registry(gemini)
    tmp = gemini / "tmp"
    slug = known.get(cwd)
    if slug is not None and _owner(tmp / slug) in (None, cwd):
        _claim(tmp / slug, cwd)
        _register(gemini, known, cwd, slug)
        return slug
    base = slugify(os.path.basename(cwd))
    taken = set(known.values())
    n = 0
    while True:
        candidate = base if n == 0 else f"{base}-{n}"
        n += 1
        owner = _owner(tmp / candidate)
        if owner == cwd or (owner is None and candidate not in taken):
            _claim(tmp / candidate, cwd)
            _register(gemini, known, cwd, candidate)
            return candidate


def _owner(folder: Path) -> str | None:
    try:
        return read_regular(folder / ROOT_MARKER, follow=True)[0].decode().strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def _claim(folder: Path, cwd: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / ROOT_MARKER
    if not marker.exists():
        marker.write_text(cwd, encoding="utf-8")


def _register(gemini: Path, known: dict[str, str], cwd: str, slug: str) -> None:
    if known.get(cwd) == slug:
        return
    projects = {**known, cwd: slug}
    target = gemini / "projects.json"
    temp = target.with_name(f"projects.json.{os.getpid()}.tmp")
    temp.write_bytes(orjson.dumps({"projects": projects}, option=orjson.OPT_INDENT_2))
    os.replace(temp, target)
