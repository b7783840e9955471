"""The branches of an imported file hold their seed by reference to their parent's lines
(the header's `seedIn`), and read exactly as a full copy of it: the events an in-memory
store (which copies every seed) holds for the same import. Whatever is later done to the
parent — a delete, a truncation, a re-import of a source that got shorter — first makes
its children whole; a parent changed behind the store's back is an error with a code,
never other events."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from forkwise.core.bench.synth_sources import claude_rewound
from forkwise.core.errors import BrokenSeed
from forkwise.core.host.import_ledger import ImportLedger
from forkwise.core.host.importing import discover, import_sources
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.backends.memory import MemoryBackend
from forkwise.core.store.session_store import SessionStore

REWINDS = 12


def imported(store: SessionStore, source: Path) -> None:
    files = discover("claude", [source], {}, Path("/nonexistent"))
    report = import_sources(store, files, ImportLedger(None))
    assert report.failed == [], report.failed


def all_lines(store: SessionStore) -> dict[str, list[bytes]]:
    return {sid: [e.encode() for e in store.get(sid).events] for sid in store.ids()}


def header(folder: Path, sid: str) -> dict[str, object]:
    first = (folder / "sessions" / f"{sid}.jsonl").read_bytes().split(b"\n", 1)[0]
    loaded: dict[str, object] = orjson.loads(first)
    return loaded


class Rewound:
    """A Claude Code file rewound at every turn, imported into a folder store, and what a
    store that copies every seed holds for it (the reference)."""

    def __init__(self, tmp: Path) -> None:
        self.file = claude_rewound(tmp / "claude", REWINDS)
        self.source = self.file.parents[1]
        self.folder = tmp / "store"
        self.store = SessionStore(JsonlBackend(self.folder))
        imported(self.store, self.source)
        copies = SessionStore(MemoryBackend())
        imported(copies, self.source)
        self.reference = all_lines(copies)
        self.main = next(sid for sid in self.reference if self.store.get(sid).header.parent_session is None)
        self.branches = sorted(sid for sid in self.reference if sid != self.main)

    def reopened(self) -> SessionStore:
        """The store read again from its files (nothing remembered from the writes)."""
        self.store.close()
        self.store = SessionStore(JsonlBackend(self.folder))
        return self.store


@pytest.fixture
def rewound(tmp_path: Path) -> Rewound:
    made = Rewound(tmp_path)
    yield made  # type: ignore[misc]
    made.store.close()


def test_branches_store_their_seed_once_and_read_as_full_copies(rewound: Rewound) -> None:
    assert len(rewound.branches) == REWINDS
    for sid in rewound.branches:
        head = header(rewound.folder, sid)
        seed = head["seedLength"]
        assert head["seedIn"] == {"session": rewound.main, "events": seed,
                                  "digest": head["seedIn"]["digest"]}  # type: ignore[index]  # fmt: skip
        own = (rewound.folder / "sessions" / f"{sid}.jsonl").read_bytes().splitlines()[1:]
        assert orjson.loads(own[0])["seq"] == seed + 1  # type: ignore[operator]
    store_bytes = sum(p.stat().st_size for p in (rewound.folder / "sessions").glob("*.jsonl"))
    assert store_bytes <= 3 * rewound.file.stat().st_size
    assert all_lines(rewound.store) == rewound.reference
    assert all_lines(rewound.reopened()) == rewound.reference
    # listed as a copy lists: the same rows
    rows = {r.id: (r.events, r.turns, r.messages, r.error) for r in rewound.store.list()}
    assert all(rows[sid] == (len(lines), *rows[sid][1:3], None) for sid, lines in rewound.reference.items())


def test_a_deleted_parent_leaves_its_children_whole(rewound: Rewound) -> None:
    rewound.store.delete(rewound.main)
    for sid in rewound.branches:
        assert "seedIn" not in header(rewound.folder, sid)
    store = rewound.reopened()
    store.empty_trash()
    for sid in rewound.branches:
        assert [e.encode() for e in store.get(sid).events] == rewound.reference[sid]
    # a deleted branch goes to the trash whole, and comes back so
    store.delete(rewound.branches[0])
    assert [e.encode() for e in store.restore(rewound.branches[0]).events] == rewound.reference[
        rewound.branches[0]
    ]


def test_a_deleted_branch_is_trashed_whole_and_restored_after_its_parent_changed(
    rewound: Rewound,
) -> None:
    sid = rewound.branches[-1]
    rewound.store.delete(sid)
    rewound.store.truncate(rewound.main, 0)  # the seed it referred to is gone
    store = rewound.reopened()
    assert [e.encode() for e in store.restore(sid).events] == rewound.reference[sid]


def test_a_truncated_parent_leaves_its_children_whole(rewound: Rewound) -> None:
    first_turn = [e.type for e in rewound.store.get(rewound.main).events].index("turn/end") + 1
    rewound.store.truncate(rewound.main, first_turn)
    store = rewound.reopened()
    for sid in rewound.branches:
        assert [e.encode() for e in store.get(sid).events] == rewound.reference[sid]


def test_a_source_imported_again_shorter_leaves_the_branches_whole(rewound: Rewound) -> None:
    """The file cut after its 4th main turn: the import cuts the main line back (a
    rewrite of its file), the branches that left it later keep their events."""
    lines = rewound.file.read_bytes().splitlines(keepends=True)
    rewound.file.write_bytes(b"".join(lines[: 2 + 4 * 3]))
    imported(rewound.store, rewound.source)
    assert len(rewound.store.get(rewound.main).events) < len(rewound.reference[rewound.main])
    store = rewound.reopened()
    for sid in rewound.branches:
        assert [e.encode() for e in store.get(sid).events] == rewound.reference[sid]


def test_a_parent_changed_or_gone_behind_the_store_is_an_error(rewound: Rewound) -> None:
    rewound.store.close()
    path = rewound.folder / "sessions" / f"{rewound.main}.jsonl"
    data = path.read_bytes()
    at = data.index(b"step 1:", data.index(b"\n"))  # in the first prompt, not the title
    path.write_bytes(data[:at] + b"STEP 1:" + data[at + 7 :])  # the same length, other text
    store = rewound.reopened()
    for sid in rewound.branches:
        with pytest.raises(BrokenSeed) as caught:
            store.get(sid)
        assert caught.value.code == "seed-reference-broken"
    store.close()
    path.unlink()
    store = rewound.reopened()
    with pytest.raises(BrokenSeed, match="not in the store"):
        store.get(rewound.branches[0])


def test_a_fork_of_a_branch_copies_what_it_reads(rewound: Rewound) -> None:
    """A user's fork of a branch is a full copy (a seed by reference only comes from an
    import), and it reads the branch's events."""
    sid = rewound.branches[3]
    child = rewound.store.fork(sid, child_id="mine")
    assert "seedIn" not in header(rewound.folder, "mine")
    seed = child.header.seed_length
    assert [e.encode() for e in child.events][:seed] == rewound.reference[sid][:seed]
    store = rewound.reopened()
    assert [e.encode() for e in store.get("mine").events][:seed] == rewound.reference[sid][:seed]
