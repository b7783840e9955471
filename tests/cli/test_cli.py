"""The `forkwise sessions …` contract, on real files in a temporary store."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from forkwise.core import cli

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
{"seq":9,"type":"message","ts":"2026-01-01T00:00:08Z","turn":"turn:2","id":"user:again:0003","role":"user","parts":[{"type":"text","text":"again"}]}
"""


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
    assert (row["events"], row["turns"], row["messages"]) == (9, 2, 3)
    assert row["running"] is True
    assert row["model"] == "echo-1"
    assert row["parentSession"] is None
    assert row["seedLength"] == 0
    assert row["updated"] == "2026-01-01T00:00:08Z"


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
    assert len(lines) == 8


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
        ("10", "invalid-boundary"),
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
    assert [e["type"] for e in shown["events"]] == ["session/title"]
    assert shown["events"][0]["title"] == "Plan"
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


def test_import_refuses_a_bad_file_and_imports_nothing(store: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(HAND_WRITTEN)
    bad = tmp_path / "bad.jsonl"
    lines = HAND_WRITTEN.replace('"id":"hand-1"', '"id":"bad-1"').splitlines()
    lines[3] = lines[3].replace('"seq":3', '"seq":4')
    bad.write_text("\n".join(lines) + "\n")
    code, out, _ = run("sessions", "import", "--store", str(store), str(good), str(bad), "--json")
    error = orjson.loads(out)["error"]
    assert code == 1
    assert error["code"] == "corrupt-log"
    assert "line 4" in error["message"]
    assert not (store / "sessions" / "hand-1.jsonl").exists()


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
            "import sys, forkwise.gui.launcher as l; l.main(['sessions','list']); "
            "print(sorted(m for m in sys.modules if m.startswith('PySide6')))",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()[-1].strip("[]")


HOST_MODULES = ("asyncio", "forkwise.core.cli_host", "forkwise.core.host", "forkwise.core.rpc")
#: what a short command with --store needs none of (a few ms to 15 ms each): the filelock
#: package (flock is taken directly), secrets (hmac, OpenSSL), platformdirs, socket
SLOW_MODULES = ("filelock", "secrets", "hmac", "platformdirs", "socket")


def test_store_fork_does_not_import_the_host(store: Path) -> None:
    """A fork through the store (no --at/--message) is a short command: it must not pay
    for asyncio, the host or the RPC layer, nor for the modules it does not need. Checked
    in a fresh process, after the fork."""
    (store / "sessions").mkdir(parents=True)
    (store / "sessions" / "hand-1.jsonl").write_text(HAND_WRITTEN)
    script = (
        "import sys; from forkwise.core import cli; "
        f"code = cli.main(['sessions', 'fork', 'hand-1', '--store', {str(store)!r}, "
        "'--child', 'c1', '--json']); "
        f"print(code, sorted(m for m in {HOST_MODULES + SLOW_MODULES!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    *printed, last = done.stdout.splitlines()
    assert last == "0 []"
    assert orjson.loads("\n".join(printed)) == {"child": "c1", "seedLength": 6}
