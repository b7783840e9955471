"""The client's source and export verbs: importing agents' session files, the agents'
folders the host keeps up with, and exports (to an agent's format or a document). A
part of `Client` (a base class of it). Paths name files on the host's machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forkwise.core.client.api import Json


class SourceVerbs:
    """Imports, watched sources and exports."""

    if TYPE_CHECKING:  # what Client gives its parts (its wire, `forkwise.core.client.wire`)
        catalogue: dict[str, Json]

        async def call(self, method: str, params: Json | None = None) -> Any: ...

    async def import_files(self, paths: list[str], tool: str | None = None) -> Json:
        """`{"imported", "updated", "unchanged", "failed", "warnings", "unmapped"}`: files or
        folders (none: the tools' default folders), read by the host — so they name files
        on its machine; `tool`: claude, codex, pi, forkwise, or None to recognise each
        file. The host reports `import/progress` notifications to subscribers."""
        result: Json = await self.call("session.import", {"paths": paths, "tool": tool})
        return result

    async def sources(self) -> Json:
        """`{"sources": [{"tool", "folders", "found"}], "watching": [tool, …]}`: the agents
        whose session folders exist on the host's machine, and those it keeps up with."""
        result: Json = await self.call("sources.list")
        return result

    async def watch_sources(self, tools: list[str]) -> Json:
        """Keep up with these tools' session folders (new and grown sessions are imported
        within a couple of seconds); `[]` stops. Returns what `sources()` does, with
        `failed`: the files its first look could not import (`[{"path", "line", "error"}]`,
        as `import_files` reports them; tried again when they change) and `warnings`
        (`[{"path", "line", "code", "message"}]`: lines kept unread in the files it read)."""
        result: Json = await self.call("sources.watch", {"tools": tools})
        return result

    async def export_session(
        self, session_id: str, tool: str, out: str | None = None, assets: bool = False
    ) -> Json:
        """Write the session as a native session of `tool` (claude, codex, pi) on the
        host's machine: `{"tool", "path", "id", "resume"}`; or as a document (`tool`
        markdown, html): `{"format", "path", "assets"}` (`assets`: a Markdown document's
        images as files beside it)."""
        params: Json = {"sessionId": session_id, "tool": tool, "out": out}
        if assets:
            params["assets"] = True
        result: Json = await self.call("session.export", params)
        return result
