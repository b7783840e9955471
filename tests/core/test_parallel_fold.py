"""Reading the logs the index does not cover in forked workers (`parallel_fold`) gives
exactly what one process gives: the same listing, the same index and log facts, byte for
byte, on a real store with a torn tail, an invalid line, a blank line and a header of
another session; and a worker that dies or fails costs time, never a result."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from forkwise.core.bench.synth import write_store
from forkwise.core.store.backends import parallel_fold
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.backends.parallel_fold import chunks, fold_all
from forkwise.core.store.writer_lock import WriterLock

#: forks made by this process since it started (a fold's workers among them)
_FORKS: list[int] = []
os.register_at_fork(after_in_parent=lambda: _FORKS.append(1))

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="Linux only")


def _slow(i: int) -> tuple[int, int]:
    time.sleep(0.002)  # no CPU: every process gets runs even on a busy machine
    return os.getpid(), i


def test_results_come_back_in_order_from_every_process(tmp_path: Path) -> None:
    parent = os.getpid()
    worker_ran, parent_ran = tmp_path / "a worker ran", tmp_path / "the parent ran"

    def wait_for(marker: Path) -> None:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.005)

    def job(i: int) -> tuple[int, int]:
        # each side's first job waits for the other's, so that on a busy machine neither
        # the workers take every run before the parent is scheduled nor the reverse
        # (a waiting worker holds one run; the parent always finds one left)
        mine, other = (
            (parent_ran, worker_ran) if os.getpid() == parent else (worker_ran, parent_ran)
        )
        mine.touch()
        wait_for(other)
        return _slow(i)

    seen: list[int] = []
    got = list(fold_all(200, job, [100_000] * 200, processes=3, progress=seen.append))
    assert [i for _, i in got] == list(range(200))
    pids = {pid for pid, _ in got}
    assert parent in pids
    assert len(pids) >= 2
    assert seen == sorted(seen)
    assert seen[-1] <= 200
    assert len(seen) < 200


def test_one_process_forks_nothing() -> None:
    before = len(_FORKS)
    got = list(fold_all(50, _slow, [1 << 20] * 50, processes=1))
    assert got == [(os.getpid(), i) for i in range(50)]
    assert len(_FORKS) == before


def test_what_a_dead_worker_took_is_done_by_the_parent() -> None:
    parent = os.getpid()

    def dies_in_a_worker(i: int) -> int:
        if os.getpid() != parent:
            os._exit(3)
        return i * i

    assert list(fold_all(64, dies_in_a_worker, [1 << 20] * 64, processes=4)) == [
        i * i for i in range(64)
    ]


def test_a_worker_that_hangs_is_killed_and_its_share_done_by_the_parent(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    parent = os.getpid()
    monkeypatch.setattr(parallel_fold, "STALL_SECONDS", 0.5)

    def hangs_in_a_worker(i: int) -> int:
        if os.getpid() != parent:
            (tmp_path / str(os.getpid())).touch()
            time.sleep(3600)  # as a worker stuck on a lock held at the fork would
        deadline = time.monotonic() + 30  # on a busy machine: until a worker has a share
        while not any(tmp_path.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.005)
        return i * i

    start = time.monotonic()
    got = list(fold_all(64, hangs_in_a_worker, [1 << 20] * 64, processes=3))
    assert got == [i * i for i in range(64)]
    assert time.monotonic() - start < 60  # not the hour the workers would sleep
    workers = [int(p.name) for p in tmp_path.iterdir()]
    assert workers  # they did take a share
    for pid in workers:  # killed and reaped: no such process any more
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_failure_is_raised_as_in_one_process() -> None:
    def fails(i: int) -> int:
        if i == 41:
            raise ValueError("job 41")
        return i

    with pytest.raises(ValueError, match="job 41"):
        list(fold_all(64, fails, [1 << 20] * 64, processes=2))


def test_runs_cut_the_jobs_in_order() -> None:
    assert chunks([5, 5, 5, 20, 1, 1], chunk_bytes=10) == [
        range(2),
        range(2, 4),
        range(4, 6),
    ]
    assert chunks([], chunk_bytes=10) == []


def _damaged_store(root: Path) -> Path:
    """300 sessions of ~50 KB, four of them damaged in different ways."""
    write_store(root, 300, 100)
    sessions = root / "sessions"
    torn = sessions / "bench-000010.jsonl"
    torn.write_bytes(torn.read_bytes() + b'{"seq": 999, "type": "mess')  # a crash mid-write
    invalid = sessions / "bench-000120.jsonl"
    lines = invalid.read_bytes().split(b"\n")
    lines[40] = b'{"seq": 40, "type": "message", "ts": "2026-01-01T00:00:00Z"}'
    invalid.write_bytes(b"\n".join(lines))
    blank = sessions / "bench-000200.jsonl"
    lines = blank.read_bytes().split(b"\n")
    blank.write_bytes(b"\n".join([*lines[:30], b"", *lines[30:]]))
    other = sessions / "bench-000250.jsonl"
    other.write_bytes(other.read_bytes().replace(b"bench-000250", b"bench-000251", 1))
    return root


def _build(root: Path, parallel: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, bytes]:
    """The index and the log facts a writable store builds from no index at all."""
    for name in ("index.json", "index-log.json"):
        (root / name).unlink(missing_ok=True)
    monkeypatch.setattr(parallel_fold, "PARALLEL_BYTES", 0 if parallel else 1 << 62)
    monkeypatch.setattr(parallel_fold, "CHUNK_BYTES", 200_000)  # many runs: they interleave
    forks = len(_FORKS)
    backend = JsonlBackend(root)
    try:
        assert len(backend.summaries(set())) == 300
    finally:
        backend.close()
    assert (len(_FORKS) > forks) == (parallel and len(os.sched_getaffinity(0)) > 1)
    return (root / "index.json").read_bytes(), (root / "index-log.json").read_bytes()


def test_a_parallel_build_writes_what_a_serial_one_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _damaged_store(tmp_path)
    serial = _build(root, False, monkeypatch)
    parallel = _build(root, True, monkeypatch)
    assert parallel == serial
    assert b"bench-000120.jsonl, line 41: event 40 (message)" in serial[0]  # refused
    assert b'"bench-000010":' in serial[1]  # its torn tail set aside, its facts kept
    assert b'"bench-000120":' not in serial[1]  # no facts of a refused log


def test_the_read_only_listing_is_the_same_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _damaged_store(tmp_path)
    listings = []
    monkeypatch.setattr(parallel_fold, "CHUNK_BYTES", 200_000)
    writer = WriterLock(root / "writer.lock")  # held: the reader may cache nothing
    assert writer.acquire()
    for threshold in (1 << 62, 0):
        monkeypatch.setattr(parallel_fold, "PARALLEL_BYTES", threshold)
        forks = len(_FORKS)
        backend = JsonlBackend(root, writable=False)
        listings.append(backend.summaries(set()))
        backend.close()
        assert (len(_FORKS) > forks) == (threshold == 0 and len(os.sched_getaffinity(0)) > 1)
    assert listings[0] == listings[1]
    assert sorted(s.id for s in listings[0]) == sorted(
        p.stem for p in (root / "sessions").iterdir()
    )
    errors = {s.id: s.error["code"] for s in listings[0] if s.error is not None}
    assert set(errors) == {"bench-000120", "bench-000250"}
    assert sorted(p.name for p in root.iterdir()) == ["sessions", "writer.lock"]
    writer.release()


@pytest.mark.parametrize("threshold", [1 << 62, 0])
def test_progress_runs_to_the_end_in_one_process_or_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threshold: int
) -> None:
    write_store(tmp_path, 600, 10)
    monkeypatch.setattr(parallel_fold, "PARALLEL_BYTES", threshold)
    monkeypatch.setattr(parallel_fold, "CHUNK_BYTES", 50_000)
    seen: list[tuple[int, int]] = []
    backend = JsonlBackend(tmp_path, writable=False)
    assert len(backend.summaries(set(), lambda d, t: seen.append((d, t)))) == 600
    assert seen[-1] == (600, 600)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    # at 250 and 500 logs read, and the end; in more than one process this one tells only
    # between the logs it reads itself (a busy machine may leave it few)
    assert len(seen) >= (3 if threshold else 1)


#: in a process of its own: a fold whose parent is killed (SIGKILL) once a worker runs;
#: each job is a run of its own and sleeps, so the workers' shares would last ~20 s
KILLED_PARENT = """
import os, signal, sys, time
from pathlib import Path
from forkwise.core.store.backends.parallel_fold import CHUNK_BYTES, fold_all
seen = Path(sys.argv[1])
parent = os.getpid()
def job(i):
    if os.getpid() != parent:
        (seen / str(os.getpid())).touch()
    elif any(seen.iterdir()):
        os.kill(parent, signal.SIGKILL)
    time.sleep(0.05)
    return i
deadline = time.monotonic() + 30  # until a worker ran (a busy machine)
for _ in fold_all(400, job, [CHUNK_BYTES] * 400, processes=3):
    if time.monotonic() > deadline:
        break
"""


def _running(pid: int) -> bool:
    """Whether `pid` is a process that has not exited (a zombie has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_workers_stop_when_their_parent_is_killed(tmp_path: Path) -> None:
    """A worker whose parent died takes no more runs: it stops at once instead of doing
    its share for nobody while holding what it inherited (the writer lock's descriptor)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", KILLED_PARENT, str(tmp_path)], timeout=60, check=False
    )
    assert done.returncode == -9  # the parent was killed mid-fold
    workers = [int(p.name) for p in tmp_path.iterdir()]
    assert workers
    deadline = time.monotonic() + 3  # one job (50 ms) at most, on a busy machine
    while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [pid for pid in workers if _running(pid)]
