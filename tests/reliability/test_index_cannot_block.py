"""Issue 18, item 9: an index entry that claims an open turn (its size and mtime still
matching the file) cannot block a session: facts that would refuse a write are confirmed
against the log. Real CLI processes on a real store."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.reliability.conftest import FORKWISE, run


def test_an_index_claiming_an_open_turn_does_not_block_prompts(tmp_path: Path) -> None:
    store = tmp_path / "store"
    done = run([FORKWISE, "sessions", "new", "--store", str(store), "--id", "s", "--json"])
    assert done.returncode == 0, done.stderr
    done = run([FORKWISE, "sessions", "prompt", "s", "first", "--store", str(store), "--json"])
    assert done.returncode == 0, done.stdout + done.stderr
    run([FORKWISE, "sessions", "list", "--store", str(store)])  # the index has the entry
    index = orjson.loads((store / "index-log.json").read_bytes())  # the log facts
    entry = index["logs"]["s"]
    facts = orjson.loads(entry["log"])
    assert facts["openTurn"] is None  # the log's last turn is closed
    facts.update(openTurn="turn:phantom", openTurnSeq=facts["events"])
    entry["log"] = orjson.dumps(facts).decode()
    (store / "index-log.json").write_bytes(orjson.dumps(index))
    st = (store / "sessions" / "s.jsonl").stat()
    assert (entry["size"], entry["mtime"]) == (st.st_size, st.st_mtime_ns)  # still "valid"
    done = run([FORKWISE, "sessions", "prompt", "s", "second", "--store", str(store), "--json"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert orjson.loads(done.stdout)["status"] == "completed"
