"""What `get_session` says of a session beyond its row, typed where a front end reads it:
where a fork stands against its source (`source`), and the file an imported session was
read from (its header's `meta.source`).

The host builds `source` with `core.host.lineage.source_state` and the importers write
`meta.source` (`core.formats.base.SourceRef.to_meta`); these make typed values of what
arrived, None where the session has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict


class SourceState(TypedDict):
    """A fork's child against its source."""

    sourceId: str
    #: True: the source no longer starts with what the child copied; None: not known
    changed: bool | None
    #: the source is gone
    missing: bool


class ImportedFrom(TypedDict):
    """The file (and the agent's own session id) an imported session was read from."""

    path: str
    id: str


def source_state(info: Mapping[str, Any]) -> SourceState | None:
    source = info.get("source")
    if not isinstance(source, Mapping):
        return None
    changed = source.get("changed")
    return SourceState(sourceId=str(source.get("sourceId", "")),
                       changed=changed if isinstance(changed, bool) else None,
                       missing=source.get("missing") is True)


def imported_from(info: Mapping[str, Any]) -> ImportedFrom | None:
    header = info.get("header")
    meta = header.get("meta") if isinstance(header, Mapping) else None
    source = meta.get("source") if isinstance(meta, Mapping) else None
    if not isinstance(source, Mapping):
        return None
    return ImportedFrom(path=str(source.get("path") or ""), id=str(source.get("id") or ""))
