"""Session files kept open between appends: every append still lands in the file the
store has at that path, whatever was rewritten, deleted or replaced meanwhile, and no
descriptor outlives its use."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from logdata import turn

from forkwise.core.errors import StorageError
from forkwise.core.store.backends.appenders import Appenders
from forkwise.core.store.backends.jsonl import JsonlBackend, parse_log
from forkwise.core.store.session_store import SessionStore


def log_path(root: Path, sid: str) -> Path:
    return root / "sessions" / f"{sid}.jsonl"


def seqs(path: Path) -> list[int]:
    return [e.seq for e in parse_log(path.read_bytes(), str(path))[0].events]


def open_logs(root: Path) -> list[str]:
    """This process's descriptors on files under the store's sessions folder."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        with_path = os.path.realpath(f"/proc/self/fd/{fd}")
        if with_path.startswith(str((root / "sessions").resolve())):
            found.append(with_path)
    return found


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


def test_appends_after_a_truncation_land_in_the_rewritten_file(root: Path) -> None:
    store = SessionStore(JsonlBackend(root))
    store.create("s")
    store.append("s", turn("t1"))
    kept = store.last_seq("s")
    store.append("s", turn("t2"))
    store.truncate("s", kept)
    store.append("s", turn("t3"))
    expected = list(range(1, store.last_seq("s") + 1))
    store.close()
    assert seqs(log_path(root, "s")) == expected
    assert open_logs(root) == []


def test_a_deleted_session_gets_nothing_more_and_its_id_starts_a_new_file(root: Path) -> None:
    store = SessionStore(JsonlBackend(root))
    store.create("s")
    store.append("s", turn("t1"))
    store.delete("s")
    (trashed,) = (root / "trash").iterdir()
    before = trashed.read_bytes()
    store.create("s")
    store.append("s", turn("again"))
    store.close()
    assert trashed.read_bytes() == before
    assert seqs(log_path(root, "s")) == list(range(1, len(turn("again")) + 1))


def test_a_log_deleted_behind_the_stores_back_is_an_error_not_a_lost_write(root: Path) -> None:
    store = SessionStore(JsonlBackend(root))
    store.create("s")
    store.append("s", turn("t1"))
    log_path(root, "s").unlink()
    with pytest.raises(StorageError):
        store.append("s", turn("t2"))
    store.close()
    assert open_logs(root) == []


def test_a_log_replaced_behind_the_stores_back_gets_the_next_append(root: Path) -> None:
    store = SessionStore(JsonlBackend(root))
    store.create("s")
    store.append("s", turn("t1"))
    path = log_path(root, "s")
    copy = path.with_name("copy")
    copy.write_bytes(path.read_bytes())
    os.replace(copy, path)  # as an editor saves
    store.append("s", turn("t2"))
    expected = list(range(1, store.last_seq("s") + 1))
    store.close()
    assert seqs(path) == expected


def test_at_most_the_limit_stays_open_and_every_append_arrives(root: Path) -> None:
    backend = JsonlBackend(root)
    backend._appenders.limit = 2
    store = SessionStore(backend)
    ids = [f"s{i}" for i in range(5)]
    for sid in ids:
        store.create(sid)
    for n in range(3):
        for sid in ids:
            store.append(sid, turn(f"{sid}-{n}"))
            assert len(backend._appenders) <= 2
            assert len(open_logs(root)) <= 2
    expected = {sid: list(range(1, store.last_seq(sid) + 1)) for sid in ids}
    store.close()
    assert {sid: seqs(log_path(root, sid)) for sid in ids} == expected
    assert open_logs(root) == []


def test_a_busy_appender_is_never_closed_to_make_room(tmp_path: Path) -> None:
    files = [tmp_path / f"f{i}" for i in range(4)]
    for f in files:
        f.write_bytes(b"")
    appenders = Appenders(limit=1)
    busy, _ = appenders.acquire("f0", lambda: files[0])
    for i in (1, 2, 3):
        appenders.acquire(f"f{i}", lambda i=i: files[i])
        appenders.release(f"f{i}")
    os.write(busy.fd, b"still mine\n")  # its descriptor was not closed (or reused)
    assert files[0].read_bytes() == b"still mine\n"
    assert len(appenders) == 2  # the busy one, and the latest
    appenders.close_all()
    assert len(appenders) == 0
