"""Edits as unified diffs with line numbers, from what each agent records.

Claude Code keeps the hunks of every Edit/MultiEdit/Write (`structuredPatch`, imported with
the result's `detail`); Codex sends `apply_patch` its own patch format; pi and an edit whose
patch was not kept give the old and new text, diffed here with difflib.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

HUNK, CONTEXT, REMOVED, ADDED = "hunk", "context", "removed", "added"
_HEADER = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True, slots=True)
class DiffLine:
    kind: str  # HUNK, CONTEXT, REMOVED or ADDED
    text: str
    old: int | None = None  # line number in the old file
    new: int | None = None  # line number in the new file

    @property
    def mark(self) -> str:
        return {HUNK: "", CONTEXT: " ", REMOVED: "-", ADDED: "+"}[self.kind]


@dataclass
class FileDiff:
    """The change to one file: `action` is update, add, delete or move."""

    path: str
    lines: list[DiffLine]
    action: str = "update"

    def unified(self) -> str:
        """The diff as text (a ```diff block of the Markdown export)."""
        return "\n".join(line.text if line.kind == HUNK else line.mark + line.text
                         for line in self.lines)


def numbered(lines: Iterable[tuple[str, str]], old: int | None, new: int | None) -> list[DiffLine]:
    """(mark, text) pairs numbered from `old`/`new` (None: numbers unknown)."""
    out: list[DiffLine] = []
    for mark, text in lines:
        if mark == "-":
            out.append(DiffLine(REMOVED, text, old, None))
            old = old + 1 if old is not None else None
        elif mark == "+":
            out.append(DiffLine(ADDED, text, None, new))
            new = new + 1 if new is not None else None
        elif mark == "@":
            out.append(DiffLine(HUNK, text))
        else:
            out.append(DiffLine(CONTEXT, text, old, new))
            old = old + 1 if old is not None else None
            new = new + 1 if new is not None else None
    return out


def from_structured_patch(hunks: Sequence[Any]) -> list[DiffLine] | None:
    """Claude Code's recorded hunks (`oldStart`, `newStart`, `lines` of " -+" text)."""
    out: list[DiffLine] = []
    for hunk in hunks:
        if not isinstance(hunk, dict) or not isinstance(hunk.get("lines"), list):
            return None
        old, new = hunk.get("oldStart"), hunk.get("newStart")
        old = old if isinstance(old, int) else None
        new = new if isinstance(new, int) else None
        head = (f"@@ -{old},{hunk.get('oldLines', '')} +{new},{hunk.get('newLines', '')} @@"
                if old is not None and new is not None else "@@")
        pairs = [("@", head)]
        for line in hunk["lines"]:
            text = str(line)
            mark = text[:1]
            pairs.append((mark, text[1:]) if mark in ("-", "+", " ") else (" ", text))
        out.extend(numbered(pairs, old, new))
    return out


def from_texts(old: str, new: str, context: int = 3) -> list[DiffLine]:
    """A unified diff of two texts (numbers count from the first line given)."""
    out: list[DiffLine] = []
    old_no = new_no = 1
    for raw in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=context):
        if raw.startswith(("---", "+++")):
            continue
        header = _HEADER.match(raw)
        if header is not None:
            old_no, new_no = int(header.group(1)), int(header.group(2))
            out.append(DiffLine(HUNK, raw))
            continue
        line = numbered([(raw[:1], raw[1:])], old_no, new_no)[0]
        out.append(line)
        if line.kind != ADDED:
            old_no += 1
        if line.kind != REMOVED:
            new_no += 1
    return out


_NUMBERED_LINE = re.compile(r"^([ +-])\s*(\d+) ?(.*)$")


def from_numbered(diff: str) -> list[DiffLine] | None:
    """pi's own diff of an edit (`details.diff`): each line its mark, the file's line
    number and the text (`-12 old`, `+12 new`, ` 13 same`), gaps as `...`. None when the
    text is not in that shape."""
    out: list[DiffLine] = []
    shift = 0  # new line number minus old, after the changes so far
    for raw in diff.splitlines():
        if raw.strip() in ("...", "…"):
            out.append(DiffLine(HUNK, "⋯"))
            continue
        found = _NUMBERED_LINE.match(raw)
        if found is None:
            return None
        mark, number, text = found.group(1), int(found.group(2)), found.group(3)
        if mark == "-":
            out.append(DiffLine(REMOVED, text, number, None))
            shift -= 1
        elif mark == "+":
            out.append(DiffLine(ADDED, text, None, number))
            shift += 1
        else:
            out.append(DiffLine(CONTEXT, text, number, number + shift))
    return out or None


def from_apply_patch(patch: str) -> list[FileDiff]:
    """Codex's `*** Begin Patch` format: one FileDiff per `*** Add/Update/Delete File`."""
    files: list[FileDiff] = []
    pairs: list[tuple[str, str]] = []
    current: FileDiff | None = None

    def close() -> None:
        if current is not None:
            start = 1 if current.action == "add" else None
            current.lines = numbered(pairs, None, start)
            files.append(current)

    for raw in patch.splitlines():
        if raw.startswith("*** ") and " File: " in raw:
            close()
            pairs = []
            verb, path = raw[4:].split(" File: ", 1)
            current = FileDiff(path.strip(), [], verb.strip().lower())
        elif raw.startswith("*** Move to: ") and current is not None:
            current.path = f"{current.path} → {raw[13:].strip()}"
            current.action = "move"
        elif raw.startswith(("*** Begin Patch", "*** End Patch", "*** End of File")):
            continue
        elif current is not None:
            if raw.startswith("@@"):
                pairs.append(("@", raw))
            elif raw[:1] in ("-", "+", " "):
                pairs.append((raw[:1], raw[1:]))
            else:
                pairs.append((" ", raw))
    close()
    return files
