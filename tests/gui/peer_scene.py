"""A long Claude Code session as people have them, to read in the app beside what the
peers a person would compare with (claude-code-log, pi's HTML export) show for it: a
slash command, thinking, a Markdown answer (headings, a list, a table, a link, code in
three languages, a quote), a shell call with its output and one with 80 lines, a read, a
to-do list, an edit with its recorded structuredPatch deep in a file, a MultiEdit, a
write of 27 lines, a grep, a subagent (Task) with its own transcript, a failed call, a
pasted image, a system reminder."""

from __future__ import annotations

import os
from pathlib import Path

import claude_fixtures as cf
from test_claude_document import PNG, _call

SID = "5d1e2d3f-4a5b-4c6d-8e7f-901a2b3c4d5e"
ANSWER = """## What I found

The cache layer has **three** problems, see [the RFC](https://example.org/rfc/cache) and `cache.py`:

1. Entries never expire — `ttl` is read but *ignored*.
2. The lock is held across I/O.
3. Keys collide for `None` and `"None"`.

| problem | file | severity |
|---------|------|----------|
| no expiry | `cache.py` | high |
| lock over I/O | `store.py` | medium |
| key collision | `keys.py` | low |

### The fix in Python

```python
class Cache:
    def get(self, key: str) -> bytes | None:
        hit = self._items.get(key)
        if hit is None or hit.expires < time.monotonic():
            return None
        return hit.value
```

And the client side in TypeScript:

```typescript
export async function fetchCached(url: string): Promise<Response> {
  const hit = cache.get(url);
  if (hit) return hit;
  return await fetch(url);
}
```

Run it with:

```bash
for f in tests/*.py; do
  python -m pytest -q "$f" || exit 1
done
```

> Note: the Rust client is unaffected.
"""
LONG_OUT = "\n".join(
    [f"tests/test_cache.py::test_case_{i:03d} PASSED{' ' * 10}[{i}%]" for i in range(1, 81)]
    + ["", "============== 80 passed in 3.21s =============="])
WRITTEN = '''"""Cache entries with an expiry."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class Item:
    value: bytes
    expires: float


class Cache:
    def __init__(self, ttl: float = 60.0) -> None:
        self.ttl = ttl
        self._items: dict[str, Item] = {}

    def put(self, key: str, value: bytes) -> None:
        self._items[key] = Item(value, time.monotonic() + self.ttl)

    def get(self, key: str) -> bytes | None:
        hit = self._items.get(key)
        if hit is None or hit.expires < time.monotonic():
            return None
        return hit.value
'''
CACHE = "/home/dev/shop/src/cache.py"
LISTING = ("total 24\ndrwxr-xr-x 2 dev dev 4096 Jan  5 09:00 .\n"
           "-rw-r--r-- 1 dev dev 1830 Jan  5 09:00 cache.py\n"
           "-rw-r--r-- 1 dev dev  912 Jan  5 09:00 keys.py\n"
           "-rw-r--r-- 1 dev dev 2210 Jan  5 09:00 store.py")
SLOW = "Three tests are slow: test_store_flush, test_big_put, test_ttl_sweep."


def session() -> cf.Transcript:
    t = cf.Transcript(SID, cwd="/home/dev/shop")
    t.user("<command-message>init is analyzing your codebase…</command-message>\n"
           "<command-name>/init</command-name>\n<command-args>focus on the cache</command-args>")
    t.assistant([{"type": "thinking", "signature": "c2ln",
                  "thinking": "The user wants an overview focused on the cache.\n\nI should"
                              " list the files first, then read cache.py."},
                 {"type": "text", "text": "I'll start by looking at the layout of the project."}],
                stop="tool_use")
    _call(t, "Bash", {"command": "ls -la src", "description": "List the sources"}, LISTING,
          {"stdout": LISTING, "stderr": ""})
    body = "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(WRITTEN.splitlines()[:14], 1))
    _call(t, "Read", {"file_path": CACHE}, body,
          {"type": "text", "file": {"filePath": CACHE, "content": body, "numLines": 14,
                                    "startLine": 1}})
    _call(t, "TodoWrite", {"todos": [
        {"content": "Read the cache code", "status": "completed", "activeForm": "Reading"},
        {"content": "Fix the expiry", "status": "in_progress", "activeForm": "Fixing"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Testing"}]},
          "Todos have been modified successfully.")
    fixed = "        if hit is None or hit.expires < time.monotonic():"
    patch = [{"oldStart": 22, "oldLines": 5, "newStart": 22, "newLines": 5, "lines": [
        "     def get(self, key: str) -> bytes | None:", "         hit = self._items.get(key)",
        "-        if hit is None:", f"+{fixed}", "             return None",
        "         return hit.value"]}]
    _call(t, "Edit", {"file_path": CACHE, "old_string": "        if hit is None:",
                      "new_string": fixed}, f"The file {CACHE} has been updated.",
          {"filePath": CACHE, "structuredPatch": patch},
          text="The expiry is read but never checked. Fixing `get`:")
    _call(t, "MultiEdit", {"file_path": "/home/dev/shop/src/keys.py", "edits": [
        {"old_string": "def key(x):\n    return str(x)", "new_string": "def key(x):\n    return repr(x)"},
        {"old_string": "SEP = ':'", "new_string": "SEP = '\\x1f'"}]}, "Applied 2 edits.")
    item = "/home/dev/shop/src/cache_item.py"
    _call(t, "Write", {"file_path": item, "content": WRITTEN},
          f"File created successfully at: {item}",
          {"type": "create", "filePath": item, "content": WRITTEN})
    _call(t, "Bash", {"command": "python -m pytest -q tests/test_cache.py",
                      "description": "Run the cache tests"}, LONG_OUT,
          {"stdout": LONG_OUT, "stderr": ""})
    _call(t, "Grep", {"pattern": "_lock", "path": "src", "output_mode": "content"},
          "src/store.py:14:        with self._lock:\n"
          "src/store.py:15:            data = self._disk.read(key)")
    _call(t, "Task", {"description": "Survey slow tests", "prompt": "Find the slow tests under tests/",
                      "subagent_type": "general-purpose"}, [{"type": "text", "text": SLOW}],
          {"status": "completed", "agentId": "a1b2c3", "content": []})
    _call(t, "Bash", {"command": "mypy src"},
          "src/store.py:31: error: Missing return statement  [return]\n"
          "Found 1 error in 1 file (checked 3 source files)", error=True)
    t.assistant([{"type": "text", "text": ANSWER}])
    t.user([{"type": "text", "text": "Here is what the dashboard shows now — does it look right?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}])
    t.assistant([{"type": "thinking", "signature": "c2ln",
                  "thinking": "The screenshot shows a window with two bars."},
                 {"type": "text", "text": "Yes: the **hit rate** panel is back, and both bars are drawn."}])
    t.user("thanks<system-reminder>The file app.py was opened.</system-reminder>")
    t.assistant([{"type": "text", "text": "You are welcome."}])
    return t


def write(root: Path) -> Path:
    """The session and its subagent's transcript under `root/projects/…`; the session's
    file."""
    t = session()
    path = t.write(cf.project_file(root, t))
    agent = cf.Transcript(SID, sidechain=True, agent_id="a1b2c3", cwd="/home/dev/shop")
    agent.user("Find the slow tests under tests/", parent=None)
    agent.assistant([{"type": "text", "text": SLOW}])
    side = agent.write(path.parent / "agent-a1b2c3.jsonl")
    for made in (path, side):
        os.utime(made, (1_700_000_000, 1_700_000_000))
    return path
