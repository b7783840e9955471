"""What a fork's child knows of its source: whether the source still starts with the
prefix the child copied.

The child's `history/fork` event records the digest of the lines it copied
(`forkwise.core.log.digest`). A source that merely grew still starts with those lines; one
rewritten below the fork point (replace in place, a re-import) does not.
"""

from __future__ import annotations

from typing import Any

from forkwise.core.errors import SourceNotFound
from forkwise.core.log.digest import DIGEST_FIELD, prefix_digest
from forkwise.core.log.event_log import head
from forkwise.core.log.events import HISTORY_FORK
from forkwise.core.store.session import Session
from forkwise.core.store.session_store import SessionStore

Json = dict[str, Any]


def recorded_digest(child: Session) -> str | None:
    """The digest the child's `history/fork` recorded, if it has one (a child made before
    digests were recorded, or one truncated into its seed, has none)."""
    b = child.header.seed_length
    if child.header.parent_session is None or len(child.events) <= b:
        return None
    event = child.events[b]
    if event.type != HISTORY_FORK:
        return None
    digest = event.get(DIGEST_FIELD)
    return digest if isinstance(digest, str) else None


def source_state(store: SessionStore, child: Session) -> Json | None:
    """For a fork's child: `{"sourceId", "changed"}` — `changed` True when the source no
    longer starts with the copied prefix, False when it does, None when that cannot be told
    (no digest recorded, or the source is gone: `"missing": True`). None for a session that
    is not a fork."""
    parent = child.header.parent_session
    if parent is None:
        return None
    out: Json = {"sourceId": parent, "changed": None, "missing": False}
    digest = recorded_digest(child)
    try:
        source = store.get(parent)
    except SourceNotFound:
        out["missing"] = True
        return out
    if digest is None:
        return out
    b = child.header.seed_length
    if len(source.events) < b:
        out["changed"] = True
    else:
        out["changed"] = prefix_digest(head(source.events, b)) != digest
    return out
