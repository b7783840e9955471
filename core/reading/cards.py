"""A tool call as a card of its kind, never as raw JSON arguments.

One classifier per kind of tool, across the agents: a shell command (`$ cmd` and its
output), a file read (`path:lines` and the content), a file written, an edit (a unified
diff), a to-do list, a search (pattern and hits), a web fetch or search, a subagent, and
anything else with its arguments pretty-printed. A card is data; `render` draws it as HTML
and the Markdown export writes it as text, so both show the same thing.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .diffs import (
    FileDiff,
    from_apply_patch,
    from_numbered,
    from_structured_patch,
    from_texts,
)
from .entries import Entry
from .images import Image, in_output

SHELL, READ, WRITE, EDIT, TODO, SEARCH, WEB, TASK, OTHER = (
    "shell", "read", "write", "edit", "todo", "search", "web", "task", "other")
#: a section longer than this is folded
FOLD_LINES = 20
#: a line's number as Claude Code's Read writes it (`    12\t` or `12→`), after the newline
#: that starts the line: matched on the text behind a newline, the literal newline lets the
#: search skip to each line's start (a multi-line `^` tries every character: 3x slower)
_NUMBERED = re.compile(r"\n *(\d+)(?:\t|→)")
#: a line that is neither numbered nor empty
_UNNUMBERED = re.compile(r"\n(?! *\d+(?:\t|→)|\n|\Z)")

Json = dict[str, Any]


@dataclass
class Section:
    """One part of a card. `kind`: code (with a language or file name to highlight by),
    diff, checklist (items of (status, text)), markdown, text, note (a word about the
    part above it, such as how many of its lines a fold hides)."""

    kind: str
    text: str = ""
    label: str = ""
    language: str = ""
    filename: str = ""
    first_line: int | None = None  # code numbered from this line (a read slice)
    diff: FileDiff | None = None
    items: list[tuple[str, str]] = field(default_factory=list)

    @property
    def folded(self) -> bool:
        if self.kind == "diff" and self.diff is not None:
            return len(self.diff.lines) > 4 * FOLD_LINES
        return self.kind in ("code", "text") and self.text.count("\n") >= FOLD_LINES

    def fold_label(self) -> str:
        """What a folded section says it holds: `content (30 lines)`."""
        lines = (len(self.diff.lines) if self.diff else 0) if self.kind == "diff" else (
            self.text.count("\n") + 1)
        return f"{self.label or 'content'} ({lines} lines)"


@dataclass
class Card:
    kind: str
    tool: str  # the tool's own name
    title: str  # `$ pytest -q`, `src/app.py:1-40`, …
    note: str = ""  # what the agent said the call is for (a shell command's description)
    sections: list[Section] = field(default_factory=list)
    failed: bool = False
    images: list[Image] = field(default_factory=list)
    link: str | None = None  # a subagent's session id
    pending: bool = False  # no result yet


def output_text(output: Any) -> str:
    """A result's output as text: Claude Code's content blocks joined, Codex's JSON
    envelope (`{"output": …, "metadata": …}`) opened, anything else pretty-printed."""
    if output is None:
        return ""
    if isinstance(output, str):
        if output.startswith('{"output"'):
            try:
                decoded = json.loads(output)
            except ValueError:
                return output
            if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
                return str(decoded["output"])
        return output
    if isinstance(output, list):
        texts = [str(b.get("text", "")) for b in output
                 if isinstance(b, Mapping) and b.get("type") == "text"]
        if texts or all(isinstance(b, Mapping) and b.get("type") == "image" for b in output):
            return "\n".join(texts)
    return pretty(output)


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _s(args: Mapping[str, Any], *keys: str) -> str:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _command(args: Mapping[str, Any]) -> str | list[str]:
    value: Any = args.get("command", args.get("cmd"))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if len(value) == 3 and value[1] in ("-lc", "-c") and value[0].endswith("sh"):
            return str(value[2])
        return [str(v) for v in value]
    return "" if value is None else str(value)


def _shell(tool: str, args: Json, out: str, detail: Any) -> Card:
    command = _command(args.get("action", args) if tool == "local_shell" else args)
    if isinstance(command, list):
        if command and command[0] == "apply_patch" and len(command) > 1:
            return _apply_patch(tool, {"input": command[1]}, out, detail)
        command = shlex.join(command)
    card = Card(SHELL, tool, f"$ {command}", note=_s(args, "description"))
    if out:
        card.sections.append(Section("code", out, label="output"))
    return card


def _path(args: Mapping[str, Any]) -> str:
    return _s(args, "file_path", "path", "notebook_path", "filename")


def read_numbers(content: str) -> tuple[int, int] | None:
    """The first and last line numbers of a read numbered the way Claude Code numbers it
    (every line that is not empty starts with its number), else None."""
    text = "\n" + content
    # an unnumbered line first: a file's own text (Claude Code's record) fails at once
    if _UNNUMBERED.search(text) is not None:
        return None
    first = _NUMBERED.search(text)
    if first is None:
        return None
    shown = text.rstrip("\n")  # the last line that is not empty is numbered
    last = _NUMBERED.match(shown, shown.rfind("\n"))
    return (int(first.group(1)), int(last.group(1))) if last is not None else None


def _read(tool: str, args: Json, out: str, detail: Any) -> Card:
    path = _path(args)
    content = out
    if isinstance(detail, Mapping) and isinstance(detail.get("file"), Mapping):
        found = detail["file"].get("content")
        content = found if isinstance(found, str) else content
    offset = args.get("offset")
    start = offset if isinstance(offset, int) and offset > 0 else 1
    end = start + content.count("\n") - (1 if content.endswith("\n") else 0)
    numbered = read_numbers(content)
    if numbered is not None:
        # Claude Code numbers what it read (`cat -n`): the numbers say which lines
        start, end = numbered
        content = _NUMBERED.sub("\n", "\n" + content)[1:]
    where = f"{path}:{start}-{end}" if content else path
    card = Card(READ, tool, where)
    if content:
        card.sections.append(Section("code", content, filename=path, first_line=start))
    return card


def _write(tool: str, args: Json, out: str, detail: Any) -> Card:
    path = _path(args)
    content = _s(args, "content", "contents", "text")
    card = Card(WRITE, tool, path)
    card.sections.append(Section("code", content, filename=path))
    return _said(card, out)


def _edits(args: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(old, new) pairs of an Edit, MultiEdit or pi edit's arguments."""
    found = args.get("edits")
    pairs = found if isinstance(found, list) else [args]
    out = []
    for edit in pairs:
        if isinstance(edit, Mapping):
            old = _s(edit, "old_string", "oldText", "old_str")
            new = _s(edit, "new_string", "newText", "new_str")
            if old or new:
                out.append((old, new))
    return out


def _edit(tool: str, args: Json, out: str, detail: Any) -> Card:
    path = _path(args)
    if tool.lower() == "notebookedit":
        card = Card(EDIT, tool, path)
        card.sections.append(Section("code", _s(args, "new_source"), language="python"))
        return card
    card = Card(EDIT, tool, path)
    lines = None
    if isinstance(detail, Mapping) and isinstance(detail.get("structuredPatch"), list):
        lines = from_structured_patch(detail["structuredPatch"])  # Claude Code's record
    elif isinstance(detail, Mapping) and isinstance(detail.get("diff"), str):
        lines = from_numbered(detail["diff"])  # pi's, numbered by the file's lines
    if lines:
        card.sections.append(Section("diff", diff=FileDiff(path, lines)))
    else:
        for old, new in _edits(args):
            card.sections.append(Section("diff", diff=FileDiff(path, from_texts(old, new))))
    return _said(card, out)


def _said(card: Card, out: str) -> Card:
    """What the tool answered, after what it did (an error is added by `card_of`)."""
    if out:
        card.sections.append(Section("text", out, label="output"))
    return card


def _apply_patch(tool: str, args: Any, out: str, detail: Any) -> Card:
    patch = args if isinstance(args, str) else _s(args, "input", "patch") or str(
        args.get("command", [""])[-1] if isinstance(args.get("command"), list) else "")
    files = from_apply_patch(patch)
    title = ", ".join(f.path for f in files) or "apply_patch"
    card = Card(EDIT, tool, title)
    card.sections.extend(Section("diff", label=f.action, diff=f) for f in files)
    return _said(card, out)


def _todo(tool: str, args: Json, out: str, detail: Any) -> Card:
    items: list[tuple[str, str]] = []
    for item in args.get("todos") or args.get("plan") or ():
        if isinstance(item, Mapping):
            items.append((str(item.get("status", "pending")), _s(item, "content", "step")))
    card = Card(TODO, tool, "To-do list" if tool.lower() == "todowrite" else "Plan")
    if _s(args, "explanation"):
        card.sections.append(Section("markdown", args["explanation"]))
    card.sections.append(Section("checklist", items=items))
    return _said(card, out)


def _search(tool: str, args: Json, out: str, detail: Any) -> Card:
    pattern = _s(args, "pattern", "query", "regex")
    where = " ".join(x for x in (_s(args, "path"), _s(args, "glob", "include")) if x)
    card = Card(SEARCH, tool, f"{tool} {pattern}" + (f" in {where}" if where else ""))
    if out:
        card.sections.append(Section("code", out, label="hits"))
    return card


def _web(tool: str, args: Json, out: str, detail: Any) -> Card:
    target = _s(args, "url", "query", "q")
    card = Card(WEB, tool, f"{tool} {target}")
    if _s(args, "prompt"):
        card.sections.append(Section("text", args["prompt"], label="prompt"))
    if out:
        card.sections.append(Section("markdown", out, label="result"))
    return card


def _task(tool: str, args: Json, out: str, detail: Any) -> Card:
    what = _s(args, "description") or _s(args, "subagent_type") or "subagent"
    kind = _s(args, "subagent_type")
    card = Card(TASK, tool, f"{what}" + (f" ({kind})" if kind else ""))
    if _s(args, "prompt"):
        card.sections.append(Section("markdown", args["prompt"], label="prompt"))
    if out:
        card.sections.append(Section("markdown", out, label="result"))
    return card


def _other(tool: str, args: Any, out: str, detail: Any) -> Card:
    card = Card(OTHER, tool, tool)
    if args:
        text = args if isinstance(args, str) else pretty(args)
        card.sections.append(Section("code", text, label="arguments", language="json"
                                     if not isinstance(args, str) else ""))
    if out:
        card.sections.append(Section("code", out, label="output"))
    return card


Classifier = Callable[[str, Any, str, Any], Card]
_BY_NAME: dict[str, Classifier] = {
    **dict.fromkeys(("bash", "shell", "exec_command", "local_shell", "shell_command",
                     "container.exec"), _shell),
    **dict.fromkeys(("read", "read_file", "view"), _read),
    **dict.fromkeys(("write", "write_file", "create_file"), _write),
    **dict.fromkeys(("edit", "multiedit", "notebookedit", "str_replace_edit"), _edit),
    "apply_patch": _apply_patch,
    **dict.fromkeys(("todowrite", "update_plan"), _todo),
    **dict.fromkeys(("grep", "glob", "search", "find", "ls"), _search),
    **dict.fromkeys(("webfetch", "websearch", "web_search", "web_fetch"), _web),
    **dict.fromkeys(("task", "agent"), _task),
}


def plugin_card(event: Mapping[str, Any]) -> Card | None:
    """A tool the agent ran itself, kept by the import as a plugin event: Codex's
    `web_search_call` (its query, or the page it opened)."""
    if event.get("type") != "plugin/codex/web_search_call":
        return None
    payload = event.get("payload")
    action = payload.get("action") if isinstance(payload, Mapping) else None
    action = action if isinstance(action, Mapping) else {}
    target = _s(action, "query", "url", "pattern")
    return Card(WEB, "web_search", f"web_search {target}".rstrip())


def card_of(entry: Entry, subagents: Mapping[str, str] | None = None) -> Card:
    """The card of a tool entry of the transcript fold (its call, result and detail)."""
    data = entry.data
    tool = str(data.get("name") or entry.text or "tool")
    args = data.get("args")
    result = data.get("result")
    out = output_text(result)
    detail = data.get("detail")
    classify = _BY_NAME.get(tool.lower(), _other)
    if classify is not _other and not isinstance(args, Mapping) and classify is not _apply_patch:
        classify = _other
    card = classify(tool, args if args is not None else {}, out, detail)
    card.failed = bool(data.get("is_error"))
    card.pending = "result" in data and result is None and "detail" not in data
    card.images = [*in_output(result, str(data.get("call") or "")), *entry.images]
    if card.failed and card.kind == READ:
        # what a failed read says is its error, not the file's lines
        card.title = _path(args) if isinstance(args, Mapping) else card.title
        card.sections = [Section("text", out, label="error")] if out else []
    elif card.failed:  # what a failed edit, write or plan answered is its error
        for section in card.sections:
            if section.kind == "text" and section.label == "output":
                section.label = "error"
    if card.kind == TASK and isinstance(detail, Mapping) and subagents:
        agent = detail.get("agentId")
        card.link = subagents.get(str(agent)) if agent is not None else None
    return card
