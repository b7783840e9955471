"""The `forkwise sessions …` contract, on real files in a temporary store."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from forkwise.core.cli import main as cli

HAND_WRITTEN = """\
{"type":"session","version":1,"id":"hand-1","created":"2026-01-01T00:00:00Z","cwd":"/work/x","parentSession":null,"seedLength":0,"meta":{}}
{"seq":1,"type":"session/title","ts":"2026-01-01T00:00:01Z","title":"Written by hand"}
{"seq":2,"type":"turn/start","ts":"2026-01-01T00:00:02Z","turn":"turn:1"}
{"seq":3,"type":"message","ts":"2026-01-01T00:00:03Z","turn":"turn:1","id":"user:hello:0001","role":"user","parts":[{"type":"text","text":"hello"}]}
{"seq":4,"type":"model/select","ts":"2026-01-01T00:00:03Z","provider":"offline","model":"echo-1"}
{"seq":5,"type":"message","ts":"2026-01-01T00:00:04Z","turn":"turn:1","id":"assistant:hi:0002","role":"assistant","parts":[{"type":"text","text":"hi there"}]}
{"seq":6,"type":"turn/end","ts":"2026-01-01T00:00:05Z","turn":"turn:1","status":"completed"}
{"seq":7,"type":"plugin/notes/pin","ts":"2026-01-01T00:00:06Z","note":"keep"}
{"seq":8,"type":"turn/start","ts":"2026-01-01T00:00:07Z","turn":"turn:2"}
{"seq":9,"type":"message","ts":"2026-01-01T00:00:08Z","turn":"turn:2","id":"user:again:0003","role":"user","parts":[{"type":"text","text":"again"},{"type":"tool_call","id":"call-1","name":"read_file","args":{"path":"x"}}]}
{"seq":10,"type":"approval/request","ts":"2026-01-01T00:00:09Z","turn":"turn:2","approval":"approval-1","call":"call-1","tool":"read_file","args":{"path":"x"}}
"""
# Turn 2 waits for an approval: it stays open when a host serves the session (a turn a
# crash left running would be closed as interrupted).


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def imported(store: Path, tmp_path: Path) -> Path:
    src = tmp_path / "hand-1.jsonl"
    src.write_text(HAND_WRITTEN)
    code, out, err = run("sessions", "import", "--store", str(store), str(src))
    assert (code, out.strip(), err) == (0, "hand-1", "")
    return store / "sessions" / "hand-1.jsonl"


def test_hand_written_log_imports_unchanged_and_lists(store: Path, imported: Path) -> None:
    assert imported.read_text() == HAND_WRITTEN
    code, out, _ = run("sessions", "list", "--store", str(store), "--json")
    assert code == 0
    (row,) = orjson.loads(out)
    assert row["id"] == "hand-1"
    assert row["title"] == "Written by hand"
    assert (row["events"], row["turns"], row["messages"]) == (10, 2, 3)
    assert row["running"] is True
    assert row["model"] == "echo-1"
    assert row["parentSession"] is None
    assert row["seedLength"] == 0
    assert row["updated"] == "2026-01-01T00:00:09Z"


def test_list_orders_sessions_of_one_instant_as_the_app_does(
    store: Path, tmp_path: Path
) -> None:
    """Newest first, and among sessions whose logs end at the same instant (one import's,
    one script's) by id, newest first too: the order of the app's tree and its preview."""
    ids = ["tie-b", "tie-c", "tie-a", "later"]
    for sid in ids:
        text = HAND_WRITTEN.replace("hand-1", sid)
        if sid == "later":
            text = text.replace("2026-01-01T00:00:09Z", "2026-01-02T00:00:00Z")
        (tmp_path / f"{sid}.jsonl").write_text(text)
    code, _, err = run(
        "sessions", "import", "--store", str(store), *(str(tmp_path / f"{s}.jsonl") for s in ids)
    )
    assert (code, err) == (0, "")
    code, out, _ = run("sessions", "list", "--store", str(store), "--json")
    assert code == 0
    assert [row["id"] for row in orjson.loads(out)] == ["later", "tie-c", "tie-b", "tie-a"]


def test_fork_without_position_goes_through_last_completed_turn(
    store: Path, imported: Path
) -> None:
    before = imported.read_bytes()
    code, out, _ = run(
        "sessions", "fork", "hand-1", "--store", str(store), "--json", "--child", "kid"
    )
    assert code == 0
    assert orjson.loads(out) == {"child": "kid", "seedLength": 6}
    assert imported.read_bytes() == before
    lines = (store / "sessions" / "kid.jsonl").read_bytes().splitlines()
    header = orjson.loads(lines[0])
    assert header["parentSession"] == "hand-1"
    assert header["seedLength"] == 6
    assert header["cwd"] == "/work/x"
    # the prefix is copied line for line, same seq numbers
    assert lines[1:7] == before.splitlines()[1:7]
    fork_event = orjson.loads(lines[7])
    assert fork_event["seq"] == 7
    assert fork_event["type"] == "history/fork"
    assert (fork_event["source"], fork_event["boundary"]) == ("hand-1", 6)
    assert fork_event["anchorMessage"] == "assistant:hi:0002"
    # the child runs on the model its source last chose (the offline model serves echo-1)
    model = orjson.loads(lines[8])
    assert (model["type"], model["provider"], model["model"]) == ("model/select", "offline", "echo-1")
    assert len(lines) == 9


def test_fork_boundary_applies_the_store_contract_exactly(store: Path, imported: Path) -> None:
    files_before = sorted(os.listdir(store / "sessions"))
    code, out, _ = run(
        "sessions", "fork", "hand-1", "--store", str(store), "--boundary", "end", "--json"
    )
    assert code == 1
    assert orjson.loads(out)["error"]["code"] == "boundary-in-open-turn"
    for bad, expected in [
        ("8", "boundary-in-open-turn"),
        ("3", "boundary-in-open-turn"),
        ("10", "boundary-in-open-turn"),
        ("11", "invalid-boundary"),
        ("-1", "invalid-boundary"),
        ("x", "invalid-boundary"),
    ]:
        code, out, _ = run(
            "sessions", "fork", "hand-1", "--store", str(store), "--boundary", bad, "--json"
        )
        assert (code, orjson.loads(out)["error"]["code"]) == (1, expected), bad
    assert sorted(os.listdir(store / "sessions")) == files_before
    code, out, _ = run(
        "sessions", "fork", "hand-1", "--store", str(store), "--boundary", "7", "--json"
    )
    assert code == 0
    assert orjson.loads(out)["seedLength"] == 7
    code, out, _ = run(
        "sessions", "fork", "hand-1", "--store", str(store), "--boundary", "0", "--json"
    )
    assert orjson.loads(out)["seedLength"] == 0


def test_errors_are_typed_on_stdout_with_json_and_plain_on_stderr(
    store: Path, imported: Path
) -> None:
    code, out, err = run("sessions", "fork", "nope", "--store", str(store), "--json")
    assert code == 1
    assert err == ""
    assert orjson.loads(out)["error"]["code"] == "source-not-found"
    code, out, err = run("sessions", "fork", "hand-1", "--store", str(store), "--child", "hand-1")
    assert code == 1
    assert out == ""
    assert "duplicate-session-id" in err
    assert err.count("\n") == 1
    code, out, _ = run("sessions", "show", "../etc", "--store", str(store), "--json")
    assert orjson.loads(out)["error"]["code"] == "invalid-session-id"


def test_usage_errors_exit_2(store: Path) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["sessions", "fork"], out=io.StringIO(), err=io.StringIO())
    assert info.value.code == 2


def test_new_with_title_then_show(store: Path, tmp_path: Path) -> None:
    code, out, _ = run(
        "sessions",
        "new",
        "--store",
        str(store),
        "--id",
        "n1",
        "--title",
        "Plan",
        "--cwd",
        str(tmp_path),
    )
    assert (code, out.strip()) == (0, "n1")
    code, out, _ = run("sessions", "show", "n1", "--store", str(store), "--json")
    shown = orjson.loads(out)
    assert shown["header"]["cwd"] == str(tmp_path)
    # a new session records the model it starts on, then its title, in one write
    assert [e["type"] for e in shown["events"]] == ["model/select", "session/title"]
    assert shown["events"][1]["title"] == "Plan"
    code, out, _ = run("sessions", "new", "--store", str(store), "--id", "n1", "--json")
    assert orjson.loads(out)["error"]["code"] == "duplicate-session-id"


def test_truncate_replaces_in_place(store: Path, imported: Path) -> None:
    run("sessions", "fork", "hand-1", "--store", str(store), "--child", "kid")
    code, out, _ = run(
        "sessions",
        "truncate",
        "kid",
        "--message",
        "assistant:hi:0002",
        "--exclude-message",
        "--store",
        str(store),
        "--json",
    )
    assert orjson.loads(out)["error"]["code"] == "boundary-in-open-turn"
    code, out, _ = run(
        "sessions",
        "truncate",
        "kid",
        "--message",
        "user:hello:0001",
        "--exclude-message",
        "--store",
        str(store),
        "--json",
    )
    assert code == 0
    assert orjson.loads(out)["through_sequence"] == 1
    lines = (store / "sessions" / "kid.jsonl").read_bytes().splitlines()
    assert len(lines) == 2
    assert orjson.loads(lines[0])["seedLength"] == 1
    assert orjson.loads(lines[1])["type"] == "session/title"


def test_truncate_refused_while_a_turn_is_open(store: Path, imported: Path) -> None:
    before = imported.read_bytes()
    _code, out, _ = run(
        "sessions",
        "truncate",
        "hand-1",
        "--message",
        "user:hello:0001",
        "--store",
        str(store),
        "--json",
    )
    assert orjson.loads(out)["error"]["code"] == "session-busy"
    assert imported.read_bytes() == before


def test_import_takes_each_file_whole_and_reports_the_bad_one(
    store: Path, tmp_path: Path
) -> None:
    """The import rules: a bad file fails with its path and line; the others are imported; exit 1."""
    good = tmp_path / "good.jsonl"
    good.write_text(HAND_WRITTEN)
    bad = tmp_path / "bad.jsonl"
    lines = HAND_WRITTEN.replace('"id":"hand-1"', '"id":"bad-1"').splitlines()
    lines[3] = lines[3].replace('"seq":3', '"seq":4')
    bad.write_text("\n".join(lines) + "\n")
    code, out, _ = run("sessions", "import", "--store", str(store), str(good), str(bad), "--json")
    report = orjson.loads(out)
    assert code == 1
    assert report["imported"] == ["hand-1"]
    assert (report["updated"], report["unchanged"]) == ([], [])
    (failed,) = report["failed"]
    assert failed["path"] == str(bad)
    assert failed["error"]["code"] == "corrupt-log"
    assert "line 4" in failed["error"]["message"]
    assert not (store / "sessions" / "bad-1.jsonl").exists()
    assert (store / "sessions" / "hand-1.jsonl").read_text() == HAND_WRITTEN
    # the same files again: the good one is unchanged, nothing is touched
    stat = (store / "sessions" / "hand-1.jsonl").stat()
    code, out, _ = run("sessions", "import", "--store", str(store), str(good), "--json")
    assert (code, orjson.loads(out)["unchanged"]) == (0, ["hand-1"])
    assert (store / "sessions" / "hand-1.jsonl").stat().st_mtime_ns == stat.st_mtime_ns


def test_list_of_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    code, out, _ = run("sessions", "list", "--store", str(tmp_path / "none"))
    assert (code, out.strip()) == (0, "no sessions")
    assert not (tmp_path / "none").exists()


def test_store_from_environment_and_console_script(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("forkwise")
    env = dict(os.environ, FORKWISE_STORE=str(tmp_path / "envstore"))
    made = subprocess.run(
        [str(exe), "sessions", "new", "--id", "e1"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert made.stdout.strip() == "e1"
    listed = subprocess.run(
        [str(exe), "sessions", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert [r["id"] for r in orjson.loads(listed.stdout)] == ["e1"]
    assert "PySide6" not in subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, forkwise.gui.app.launcher as l; l.main(['sessions','list']); "
            "print(sorted(m for m in sys.modules if m.startswith('PySide6')))",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()[-1].strip("[]")


def test_a_direct_fork_and_a_fork_through_a_running_host_make_the_same_child(
    store: Path, imported: Path, tmp_path: Path
) -> None:
    """One verb, one result — `sessions fork` with the store to itself and with
    a `forkwise host` holding it give the same events (apart from ids and times) and the
    same listing row, for every way of choosing the fork point."""
    ways = [[], ["--boundary", "7"], ["--boundary", "0"], ["--at", "3"],
            ["--message", "assistant:hi:0002"], ["--message", "user:hello:0001",
             "--exclude-message"]]
    direct = [_fork_child(store, f"d{i}", way) for i, way in enumerate(ways)]
    sock = tmp_path / "h.sock"
    host = subprocess.Popen(
        [sys.executable, "-m", "forkwise.core.cli", "host", "--store", str(store),
         "--listen", f"unix:{sock}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert host.stdout is not None
        assert "listening" in host.stdout.readline()
        hosted = [_fork_child(store, f"h{i}", way) for i, way in enumerate(ways)]
        _code, out, _ = run("sessions", "list", "--store", str(store), "--json")
        rows = {r["id"]: r for r in orjson.loads(out)}
    finally:
        host.terminate()
        host.communicate(timeout=30)
    for i, (d, h) in enumerate(zip(direct, hosted, strict=True)):
        assert d == h, ways[i]
        row_d, row_h = rows[f"d{i}"], rows[f"h{i}"]
        for key in ("id", "created", "updated", "title"):
            row_d.pop(key), row_h.pop(key)
        assert row_d == row_h, ways[i]
    # the workspace: each child joined its source's
    from forkwise.core.runtime.workspaces import FileWorkspaces

    spaces = FileWorkspaces(store / "workspaces.json")
    members = {s for g in spaces.groups() for s in g["sessions"]}
    source_space = spaces.workspace_of("hand-1")
    for i in range(len(ways)):
        assert {f"d{i}", f"h{i}"} <= members  # attached, not merely absent
        assert spaces.workspace_of(f"d{i}") == spaces.workspace_of(f"h{i}") == source_space


def _fork_child(store: Path, child: str, way: list[str]) -> list[dict[str, object]]:
    code, out, err = run("sessions", "fork", "hand-1", "--store", str(store),
                         "--child", child, "--json", *way)
    assert code == 0, (way, out, err)
    lines = (store / "sessions" / f"{child}.jsonl").read_bytes().splitlines()
    header = orjson.loads(lines[0])
    events = [orjson.loads(line) for line in lines[1:]]
    for e in events:
        e.pop("ts")
    return [{k: v for k, v in header.items() if k not in ("id", "created")}, *events]


def test_context_is_the_provider_transcript(store: Path, imported: Path) -> None:
    """What the model would get next: chat messages, tool calls with their ids; no
    plugin note, no approval; the model the log selected last."""
    made = orjson.loads(run("sessions", "context", "hand-1", "--store", str(store), "--json")[1])
    assert (made["model"]["provider"], made["model"]["model"]) == ("offline", "echo-1")
    assert made["messages"] == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi there"},
        {
            "role": "user",
            "content": "again",
            "tool_calls": [
                {
                    "id": "call-1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path":"x"}'},
                }
            ],
        },
    ]
    code, out, err = run("sessions", "context", "hand-1", "--store", str(store))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "model offline/echo-1",
        "[user] hello",
        "[assistant] hi there",
        "[user] again",
        '  -> call-1 read_file({"path":"x"})',
    ]
    assert imported.read_text() == HAND_WRITTEN  # a read: the file is untouched


def test_a_listing_that_reads_every_file_says_so_on_stderr_and_indexes_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store without an index (copied from elsewhere, written by hand) lists after
    reading every log; the listing says so on stderr, leaves stdout to the rows, and,
    as no process holds the writer lock, leaves the index behind: the next listing reads
    no log and says nothing."""
    from forkwise.core.bench.synth import write_store

    root = write_store(tmp_path / "store", 300, 5)
    (root / "index.json").unlink(missing_ok=True)
    code, out, _ = run("sessions", "list", "--store", str(root), "--json")
    assert code == 0
    assert len(orjson.loads(out)) == 300
    said = capsys.readouterr().err
    assert "read 300 session files the store's index did not cover" in said
    assert "the index is saved for the next listing" in said  # as it is: no lock held
    assert (root / "index.json").exists()
    code, out, _ = run("sessions", "list", "--store", str(root), "--json")
    assert (code, capsys.readouterr().err) == (0, "")
    assert len(orjson.loads(out)) == 300
