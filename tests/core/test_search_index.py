"""The full-text index beside a JSONL store: built from the logs, kept current from the
store's change events, equal to a rebuild after any mix of changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from forkwise.core.log.events import text_part
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.search_index import SearchIndex, fts_query
from forkwise.core.store.session_store import SessionStore


def open_store(root: Path) -> SessionStore:
    return SessionStore(JsonlBackend(root))


def turn(store: SessionStore, sid: str, n: int, question: str, answer: str) -> None:
    t = f"turn:{n}"
    store.append(sid, [
        {"type": "turn/start", "turn": t},
        {"type": "message", "id": f"user:q{n}:0001", "role": "user", "turn": t,
         "parts": [text_part(question)]},
        {"type": "message", "id": f"assistant:a{n}:0002", "role": "assistant", "turn": t,
         "parts": [text_part(answer),
                   {"type": "tool_call", "id": f"c{n}", "name": "read_file",
                    "args": {"path": "CHANGELOG.md"}}]},
        {"type": "turn/end", "turn": t, "status": "completed"},
    ])


def found(index: SearchIndex, query: str) -> set[tuple[str, int]]:
    return {(h.session_id, h.seq) for h in index.search(query, 500)}


def test_built_from_the_logs_then_kept_current(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    a = store.create("alpha", meta={"title": "Plan the zebra release"}).id
    turn(store, a, 1, "When does the walrus ship?", "The walrus ships on Friday.")
    index = SearchIndex(tmp_path / "search.sqlite")
    index.attach(store)
    assert index.sync(store) == 1
    assert found(index, "walrus") == {(a, 2), (a, 3)}
    assert found(index, "zebra") == {(a, 0)}  # the title in the header
    assert found(index, "CHANGELOG") == {(a, 3)}  # a tool call's arguments
    assert found(index, "read_file") == {(a, 3)}
    hit = index.search("friday")[0]
    assert hit.message_id == "assistant:a1:0002"
    assert hit.kind == "assistant"
    assert "«Friday»" in hit.snippet
    assert found(index, "walr") == found(index, "walrus")  # the last word is a prefix
    assert found(index, "walrus friday") == {(a, 3)}  # every word
    assert found(index, 'walrus" OR "x') == set()  # typed text is never query syntax

    # appended, forked, truncated, deleted: applied as the store commits them
    turn(store, a, 2, "And the narwhal?", "The narwhal waits.")
    assert found(index, "narwhal") == {(a, 6), (a, 7)}
    child = store.fork(a, 4).id
    assert found(index, "walrus") == {(a, 2), (a, 3)}  # the copied prefix is not repeated
    turn(store, child, 3, "What about the okapi?", "Okapi later.")
    assert {s for s, _ in found(index, "okapi")} == {child}
    store.truncate(a, 4)
    assert found(index, "narwhal") == set()
    store.delete(child)
    assert found(index, "okapi") == set()
    turn(store, a, 4, "The narwhal again", "Yes.")
    assert found(index, "narwhal") == {(a, 6)}

    # the same answers as an index made anew from the logs
    fresh = SearchIndex(tmp_path / "fresh.sqlite")
    fresh.sync(store)
    for word in ("walrus", "narwhal", "okapi", "zebra", "friday", "yes"):
        assert found(fresh, word) == found(index, word), word
    index.close()
    fresh.close()


def test_a_reopened_index_catches_up_with_what_changed_while_closed(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    a = store.create("a").id
    b = store.create("b").id
    turn(store, a, 1, "first capybara", "ok")
    turn(store, b, 1, "first quokka", "ok")
    index = SearchIndex(tmp_path / "search.sqlite")
    index.sync(store)
    index.close()
    turn(store, a, 2, "second capybara", "ok")  # nobody applies these
    store.delete(b)
    index = SearchIndex(tmp_path / "search.sqlite")
    assert index.sync(store) == 1  # only the session that grew is read again
    assert found(index, "capybara") == {(a, 2), (a, 6)}
    assert found(index, "quokka") == set()
    index.close()


def test_a_corrupt_index_file_is_rebuilt_from_the_logs(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    a = store.create("a").id
    turn(store, a, 1, "the axolotl", "ok")
    (tmp_path / "search.sqlite").write_bytes(b"this is not a database" * 100)
    index = SearchIndex(tmp_path / "search.sqlite")
    index.sync(store)
    assert found(index, "axolotl") == {(a, 2)}
    assert index.rebuild(store) == 1
    assert found(index, "axolotl") == {(a, 2)}
    index.close()


@pytest.mark.parametrize("typed", ["", "  ", "«»", "***"])
def test_no_words_no_query(typed: str) -> None:
    assert fts_query(typed) is None


def test_a_sync_never_holds_up_the_stores_writers(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from forkwise.core.store import search_build

    store = open_store(tmp_path)
    a = store.create("a").id
    b = store.create("b").id
    turn(store, a, 1, "old gecko", "ok")
    turn(store, b, 1, "old gecko", "ok")
    reading, go = threading.Event(), threading.Event()
    real = search_build.log_rows

    def slow(st: SessionStore, sid: str, done: int | None) -> object:
        got = real(st, sid, done)
        reading.set()
        assert go.wait(10)
        return got

    monkeypatch.setattr(search_build, "log_rows", slow)
    index = SearchIndex(tmp_path / "search.sqlite")
    index.attach(store)
    syncing = threading.Thread(target=index.sync, args=(store,))
    syncing.start()
    assert reading.wait(10)
    # while the logs are read: writes go on (each of these would wait if they could)
    turn(store, a, 2, "new gecko", "ok")
    store.truncate(b, 0)
    c = store.create("c").id
    turn(store, c, 1, "third gecko", "ok")
    assert syncing.is_alive()  # the writes above did not wait for it
    go.set()
    syncing.join(10)
    assert index.ready
    assert found(index, "gecko") == {(a, 2), (a, 6), (c, 2)}
    assert found(index, "third") == {(c, 2)}
    index.close()


@pytest.mark.parametrize("limit", [("BATCH_ROWS", 5), ("BATCH_TEXT", 150)])
def test_a_build_in_many_batches_finds_what_incremental_indexing_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: tuple[str, int]) -> None:
    from forkwise.core.store import search_build

    store = open_store(tmp_path)
    live = SearchIndex(tmp_path / "live.sqlite")
    live.attach(store)
    live.sync(store)  # from now on every change is applied as it is committed
    # JSON's escapes, and a NUL (a batch holding one is bound row by row)
    odd = 'quote " back \\ slash, tab\t, é, 😀, <b>tag</b> {"json": 1}'
    ids = []
    for i in range(12):
        sid = store.create(f"s{i}", meta={"title": f"title {i} pelican"}).id
        ids.append(sid)
        for n in range(1, 4):
            nul = " nul \x00 inside" if i == 5 else ""
            turn(store, sid, n, f"pelican question {i} {n}", f"answer {n} heron {odd}{nul}")
    child = store.fork(ids[0], 4).id
    turn(store, child, 9, "pelican in the child", "heron too")
    store.truncate(ids[1], 4)

    monkeypatch.setattr(search_build, *limit)  # many batches (of rows, or of text)
    rebuilt = SearchIndex(tmp_path / "rebuilt.sqlite")
    assert rebuilt.sync(store) == 13
    for word in ("pelican", "heron", "slash", "é", "nul", "inside", "json", "title", "child"):
        # the same hits, snippets and all (in the order each index read them)
        assert set(rebuilt.search(word, 500)) == set(live.search(word, 500)), word
    assert len(found(rebuilt, "heron")) == 12 * 3 - 2 + 1  # 2 truncated, 1 in the child
    assert len(found(rebuilt, "inside")) == 3
    assert any('quote " back \\ «slash», tab , é, 😀' in h.snippet for h in rebuilt.search("slash"))

    def counts(index: SearchIndex) -> list[tuple[str, int]]:
        assert index._db is not None
        return sorted(index._db.execute("SELECT id, indexed FROM sessions").fetchall())

    assert counts(rebuilt) == counts(live)
    live.close()
    rebuilt.close()


def test_an_index_file_of_the_older_schema_is_made_anew(tmp_path: Path) -> None:
    import sqlite3

    store = open_store(tmp_path)
    a = store.create("a").id
    turn(store, a, 1, "the tapir", "ok")
    old = sqlite3.connect(tmp_path / "search.sqlite")
    old.executescript(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
        "INSERT INTO meta VALUES('schema', '1');"
        "CREATE TABLE sessions(id TEXT PRIMARY KEY, indexed INTEGER NOT NULL);"
        f"INSERT INTO sessions VALUES('{a}', 6);"
        "CREATE TABLE msgs(rowid INTEGER PRIMARY KEY, session TEXT NOT NULL, seq INTEGER NOT"
        " NULL, message TEXT, ts TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL);"
        "CREATE VIRTUAL TABLE docs USING fts5(text, content='msgs', content_rowid='rowid');"
    )
    old.commit()
    old.close()
    index = SearchIndex(tmp_path / "search.sqlite")
    assert index.sync(store) == 1  # the old file's counts were not trusted
    assert found(index, "tapir") == {(a, 2)}
    index.close()


def test_a_log_that_fails_to_read_fails_the_sync_and_leaves_no_reader(tmp_path: Path) -> None:
    import threading

    from forkwise.core.errors import CorruptLog

    store = open_store(tmp_path)
    a = store.create("a").id
    turn(store, a, 1, "the ibis", "ok")
    path = store.backend.path(a)  # type: ignore[attr-defined]
    store.close()
    store = open_store(tmp_path)
    store.list()
    good = path.read_bytes()
    header, rest = good.split(b"\n", 1)
    path.write_bytes(header + b"\n{not json\n" + rest)  # a line that does not decode
    index = SearchIndex(tmp_path / "search.sqlite")
    with pytest.raises(CorruptLog):
        index.sync(store)  # raised on the reader thread, handed to the caller
    assert not index.ready
    assert [t for t in threading.enumerate() if t.name == "search-index-reader"] == []
    path.write_bytes(good)
    assert index.sync(store) == 1  # nothing half-made was kept
    assert found(index, "ibis") == {(a, 2)}
    index.close()


def test_an_interrupted_rebuild_leaves_the_index_that_was_there(tmp_path: Path) -> None:
    from forkwise.core.errors import CorruptLog

    store = open_store(tmp_path)
    a = store.create("a").id
    turn(store, a, 1, "the heron", "ok")
    b = store.create("b").id
    turn(store, b, 1, "the egret", "ok")
    index = SearchIndex(tmp_path / "search.sqlite")
    index.sync(store)
    index.close()
    path = store.backend.path(b)  # type: ignore[attr-defined]
    store.close()
    store = open_store(tmp_path)
    store.list()
    good = path.read_bytes()
    header, rest = good.split(b"\n", 1)
    path.write_bytes(header + b"\n{not json\n" + rest)  # the rebuild stops at this log
    build_file = tmp_path / ".search.sqlite.build"
    build_file.write_bytes(b"what a killed build left" * 100)
    index = SearchIndex(tmp_path / "search.sqlite")
    with pytest.raises(CorruptLog):
        index.rebuild(store)
    assert not build_file.exists()
    assert found(index, "heron") == {(a, 2)}  # the index from before, whole
    assert found(index, "egret") == {(b, 2)}
    path.write_bytes(good)
    turn(store, a, 2, "a new ibis", "ok")
    assert index.rebuild(store) == 2
    assert found(index, "ibis") == {(a, 6)}
    assert found(index, "egret") == {(b, 2)}
    assert sorted(p.name for p in tmp_path.iterdir() if "search" in p.name) == [
        "search.sqlite", "search.sqlite-shm", "search.sqlite-wal"]
    index.close()


def test_a_session_says_a_line_once_however_many_rows_hold_it(tmp_path: Path) -> None:
    """A title that is also the first question, in the header and in a title event: one
    hit, the message's (it opens at the message); a different line of the same session
    and the same line in another session are hits of their own."""
    store = open_store(tmp_path)
    a = store.create("a", meta={"title": "Plan the gnu release"}).id
    store.append(a, [{"type": "session/title", "title": "Plan the gnu release"}])
    turn(store, a, 1, "Plan the gnu release", "The gnu release is planned.")
    b = store.create("b", meta={"title": "Plan the gnu release"}).id
    index = SearchIndex(tmp_path / "search.sqlite")
    index.sync(store)
    hits = index.search("gnu")
    assert [(h.session_id, h.kind) for h in hits] == [(b, "title"), (a, "assistant"), (a, "user")]
    assert index.search("gnu", limit=2) == hits[:2]
    index.close()


def test_hits_with_the_last_word_whole_come_before_those_it_only_begins(
    tmp_path: Path,
) -> None:
    """The last word is a prefix, so that a search finds as it is typed; once the word is
    whole, the texts that have it whole come first ("module 37" before the newer "module
    370" … "module 379"), the latest first within each, and none twice."""
    store = open_store(tmp_path)
    sid = store.create("s").id
    turn(store, sid, 1, "refactor module 37 please", "done with module 37")
    for n in range(2, 12):
        turn(store, sid, n, f"refactor module 3{n + 68} please", f"done with module 3{n + 68}")
    index = SearchIndex(tmp_path / "search.sqlite")
    index.attach(store)
    index.sync(store)
    hits = index.search("module 37", 50)
    assert [(h.seq) for h in hits[:2]] == [3, 2]  # turn 1's answer, then its question
    assert len(hits) == 22  # the other 20, newest first, after them
    assert [h.seq for h in hits[2:]] == sorted((h.seq for h in hits[2:]), reverse=True)
    assert len({(h.session_id, h.seq) for h in hits}) == len(hits)
    assert found(index, "module 3") == found(index, "module 37") | found(index, "module 371")
    assert [h.seq for h in index.search("module 37", 2)] == [3, 2]  # even when few are asked
