"""Built-in tools: what the agent may do on the person's machine, each call approved first.

File tools are confined to the session's working directory: a path that resolves outside
it (`..`, an absolute path, a symlink pointing out) is refused. `delegate` starts a
subagent session (see `Host.delegate`) and returns its reply.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from forkwise.core.safe_read import NotRegularFile, read_head

MAX_READ_BYTES = 64 * 1024
MAX_LIST_ENTRIES = 500

#: `(parent session id, task)` → the subagent's outcome as JSON
Delegate = Callable[[str, str], Awaitable[dict[str, Any]]]


class ToolFailed(Exception):
    """The tool ran but could not do what was asked; the text goes back to the model."""


@dataclass(frozen=True, slots=True)
class ToolContext:
    session_id: str
    cwd: str
    delegate: Delegate | None = None


class Tool(Protocol):
    name: str
    description: str
    parameters: Mapping[str, Any]

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> Any: ...


def confined_path(cwd: str, requested: object) -> Path:
    """`requested` resolved inside `cwd`, or ToolFailed if it would leave it."""
    if not cwd:
        raise ToolFailed("this session has no working directory, so file tools are disabled")
    if not isinstance(requested, str) or not requested:
        raise ToolFailed("'path' must be a non-empty string")
    if "\x00" in requested:  # the OS would refuse it with ValueError, failing the turn
        raise ToolFailed("'path' must not contain a NUL character")
    if "\x00" in cwd:  # a header edited or imported with one: no folder has that name
        raise ToolFailed(
            "this session's working directory contains a NUL character, so file tools are"
            " disabled"
        )
    root = Path(cwd).resolve()
    target = (root / requested).resolve()
    if target != root and not target.is_relative_to(root):
        raise ToolFailed(f"{requested!r} is outside the session directory {str(root)!r}")
    return target


class ReadFile:
    name = "read_file"
    description = "Read a text file inside the session's working directory."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "relative to the cwd"}},
        "required": ["path"],
    }

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> Any:
        path = confined_path(ctx.cwd, args.get("path"))
        return await asyncio.to_thread(_read_text, path)


def _read_text(path: Path) -> dict[str, Any]:
    try:
        # the path is resolved already: a link there now is a swap after the check
        data = read_head(path, MAX_READ_BYTES)
    except NotRegularFile as exc:
        raise ToolFailed(f"cannot read {path.name}: it is not a regular file") from exc
    except OSError as exc:
        raise ToolFailed(f"cannot read {path.name}: {exc.strerror or exc}") from exc
    truncated = len(data) > MAX_READ_BYTES
    text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
    return {"path": path.name, "text": text, "truncated": truncated}


class ListDir:
    name = "list_dir"
    description = "List a directory inside the session's working directory."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "relative to the cwd"}},
    }

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> Any:
        path = confined_path(ctx.cwd, args.get("path", "."))
        return await asyncio.to_thread(_list, path)


def _list(path: Path) -> dict[str, Any]:
    try:
        with os.scandir(path) as it:
            names = sorted(e.name + ("/" if e.is_dir() else "") for e in it)
    except OSError as exc:
        raise ToolFailed(f"cannot list {path.name or path}: {exc.strerror or exc}") from exc
    return {"entries": names[:MAX_LIST_ENTRIES], "truncated": len(names) > MAX_LIST_ENTRIES}


class DelegateTool:
    name = "delegate"
    description = (
        "Hand a task to a subagent: a new session forked from this one's last completed "
        "turn, shown as this session's child. Returns the subagent's reply."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"task": {"type": "string"}},
        "required": ["task"],
    }

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> Any:
        task = args.get("task")
        if not isinstance(task, str) or not task.strip():
            raise ToolFailed("'task' must be a non-empty string")
        if ctx.delegate is None:
            raise ToolFailed("delegation is not available here")
        return await ctx.delegate(ctx.session_id, task)


def builtin_tools() -> dict[str, Tool]:
    tools: list[Tool] = [ReadFile(), ListDir(), DelegateTool()]
    return {t.name: t for t in tools}


def tool_specs(tools: Mapping[str, Tool]) -> list[dict[str, Any]]:
    """The tools as a provider is told about them (OpenAI function format)."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": dict(t.parameters),
            },
        }
        for t in tools.values()
    ]
