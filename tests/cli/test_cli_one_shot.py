"""What a one-shot CLI process loads and leaves behind: a listing does not load the import
verb, the foreign formats, the replay fold, the transcript's fold, the fork policy, the
turn state or SQLite, a fork neither the import verb nor the replay fold nor the turn loop, and a command run
in-process gives the cyclic collector back as it found it; the collector does not walk a one-shot command's objects at exit; each
subcommand's arguments are there when it is chosen; `--json` output written in parts is
the one encoding byte for byte."""

from __future__ import annotations

import gc
import io
import random
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from forkwise.core.cli import main as cli

LOG = (
    b'{"type":"session","version":1,"id":"s-1","created":"2026-01-01T00:00:00Z",'
    b'"cwd":"/w","parentSession":null,"seedLength":0,"meta":{}}\n'
    b'{"seq":1,"type":"turn/start","ts":"2026-01-01T00:00:01Z","turn":"turn:1"}\n'
    b'{"seq":2,"type":"message","ts":"2026-01-01T00:00:02Z","turn":"turn:1",'
    b'"id":"user:q:1","role":"user","parts":[{"type":"text","text":"hello"}]}\n'
    b'{"seq":3,"type":"turn/end","ts":"2026-01-01T00:00:03Z","turn":"turn:1",'
    b'"status":"completed"}\n'
)

#: modules a listing and a fork have no use for (what `sessions import`, `export`, a
#: replay and a turn load when they run: a fork's child gets its agent once prompted)
UNUSED = (
    "forkwise.core.host.importing",
    "forkwise.core.host.exporting",
    "forkwise.core.formats.base",
    "forkwise.core.log.replay",
    "forkwise.core.runtime.agent",
)
#: what only other verbs use: forks, turns, a followed disk, the search index, a token,
#: the transcript's fold (a list titles its rows from their summaries alone); and what
#: only help and usage errors use: the terminal's size (shutil)
LISTING_UNUSED = (
    "forkwise.core.reading.entries",
    "forkwise.core.host.forking",
    "forkwise.core.runtime.turn_state",
    "forkwise.core.host.disk_follow",
    "forkwise.core.store.search_build",
    "sqlite3",
    "hmac",
    "shutil",
)

PROBE = """
import sys
from forkwise.core.cli import main as cli
code = cli.main(sys.argv[1:], out=open("/dev/null", "w"))
print(sorted(m for m in {unused!r} if m in sys.modules))
sys.exit(code)
"""


def _store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    (root / "sessions").mkdir(parents=True)
    (root / "sessions" / "s-1.jsonl").write_bytes(LOG)
    return root


def _loaded(*argv: str, unused: tuple[str, ...] = UNUSED) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(unused=unused), *argv],
        capture_output=True,
        check=True,
        text=True,
    )
    return list(orjson.loads(done.stdout.strip().replace("'", '"')))


def test_list_and_fork_do_not_load_the_import_verb(tmp_path: Path) -> None:
    root = str(_store(tmp_path))
    assert _loaded("sessions", "list", "--store", root, "--json") == []
    assert _loaded("sessions", "fork", "s-1", "--store", root, "--json") == []
    # the replay is loaded when it is used: the probe sees a module that is imported
    assert _loaded("sessions", "context", "s-1", "--store", root, "--json") == [
        "forkwise.core.log.replay"
    ]


def test_a_listing_does_not_load_what_only_other_verbs_use(tmp_path: Path) -> None:
    root = str(_store(tmp_path))
    listed = _loaded("sessions", "list", "--store", root, "--json", unused=LISTING_UNUSED)
    assert listed == []
    # the probe sees them where they are used: a fork applies the fork policy and reads
    # whether the source's turn is open (from its log: the index the listing left, which
    # knows, is dropped)
    for cache in ("index.json", "index-log.json"):
        (Path(root) / cache).unlink(missing_ok=True)
    forked = _loaded("sessions", "fork", "s-1", "--store", root, "--json", unused=LISTING_UNUSED)
    assert {"forkwise.core.host.forking", "forkwise.core.runtime.turn_state"} <= set(forked)


#: says, after everything else at exit, whether the collector's objects were frozen then
FROZEN_AT_EXIT = """
import atexit, gc, sys
from forkwise.core.cli import main as cli
atexit.register(lambda: print(gc.get_freeze_count() > 0))  # runs after those main adds
code = cli.main(sys.argv[1:], out=open("/dev/null", "w"))
print(gc.get_freeze_count() > 0)
sys.exit(code)
"""


def test_a_one_shot_command_leaves_its_objects_to_the_exit(tmp_path: Path) -> None:
    """At exit a one-shot command's process freezes what it made (the interpreter's last
    collections do not walk it); while it runs nothing is frozen, and a command that
    writes (a new session) leaves the exit as it is."""
    root = str(_store(tmp_path))

    def frozen(*argv: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", FROZEN_AT_EXIT, *argv],
            capture_output=True,
            check=True,
            text=True,
        )
        return done.stdout.split()

    assert frozen("sessions", "list", "--store", root, "--json") == ["False", "True"]
    assert frozen("sessions", "new", "--store", root, "--id", "n-1") == ["False", "False"]


def test_a_subcommand_has_its_arguments_when_chosen(capsys: pytest.CaptureFixture[str]) -> None:
    """Each subcommand's parser and arguments are made when it is chosen: its help
    names them, and a command line with them parses."""
    wants = {
        ("host",): ["--listen", "--allow-remote", "--token-file"],
        ("store", "copy"): ["SRC", "DST", "--json"],
        ("sessions", "list"): ["--store", "--json", "--connect", "--token-file"],
        ("sessions", "show"): ["--store", "id"],
        ("sessions", "context"): ["--json", "id"],
        ("sessions", "new"): ["--id", "--title", "--cwd"],
        ("sessions", "fork"): ["source", "--boundary", "--child", "--at", "--replace"],
        ("sessions", "truncate"): ["--message", "--exclude-message"],
        ("sessions", "import"): ["--from", "PATH"],
        ("sessions", "export"): ["--to", "--out"],
        ("sessions", "delete"): ["--store", "id"],
        ("sessions", "prompt"): ["id", "text"],
        ("sessions", "approve"): ["APPROVAL_ID", "--deny"],
    }
    for command, names in wants.items():
        with pytest.raises(SystemExit) as info:
            cli.main([*command, "--help"])
        assert info.value.code == 0
        shown = capsys.readouterr().out
        assert shown.startswith(f"usage: forkwise {' '.join(command)} "), shown
        for name in names:
            assert name in shown, (command, name)
    args = cli.build_parser().parse_args(
        ["sessions", "fork", "s-1", "--at", "3", "--child", "c", "--store", "/s"]
    )
    assert (args.action, args.source, args.at, args.child, args.store) == (
        "fork",
        "s-1",
        3,
        "c",
        "/s",
    )


def test_a_one_shot_command_in_process_leaves_the_collector_as_it_found_it(
    tmp_path: Path,
) -> None:
    root = str(_store(tmp_path))
    assert gc.isenabled()
    out, err = io.StringIO(), io.StringIO()
    for argv in (
        ("sessions", "list", "--store", root, "--json"),
        ("sessions", "context", "s-1", "--store", root),
        ("sessions", "fork", "s-1", "--store", root, "--json"),
        ("sessions", "fork", "no-such", "--store", root, "--json"),  # fails: exit 1
    ):
        code = cli.main(list(argv), out=out, err=err)
        assert code == (1 if "no-such" in argv else 0), err.getvalue()
        assert gc.isenabled(), argv
    gc.disable()
    try:
        assert cli.main(["sessions", "list", "--store", root], out=out, err=err) == 0
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def _value(rng: random.Random, depth: int = 0) -> object:
    pick = rng.random()
    if depth > 3 or pick < 0.3:
        return rng.choice([1, -2.5, 'x\u00e9\n"', None, True, "", "\u00fc\u20ac"])
    if pick < 0.6:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {f"k{i}": _value(rng, depth + 1) for i in range(rng.randint(0, 3))}


def test_json_is_written_in_parts_byte_for_byte_as_in_one_piece() -> None:
    """A listing's rows and a context's messages are encoded a part at a time: the bytes
    are those of one encoding, on a binary stream and on a text one."""
    rng = random.Random(3)
    many = cli._PART_ITEMS * 2 + 345
    cases: list[object] = [
        [],
        {},
        [1],
        {"a": []},
        list(range(many)),
        [_value(rng) for _ in range(many)],
        {"sessionId": "s", "model": {"m": 1}, "messages": [_value(rng) for _ in range(many)]},
        {"m": [_value(rng) for _ in range(cli._PART_ITEMS)]},  # one part exactly
        {"m": [_value(rng) for _ in range(cli._PART_ITEMS + 1)]},  # and one item more
        {"messages": [_value(rng) for _ in range(many)], "after": 1},  # not the last value
        {"\u00e9": [{}] * many},
    ]
    for data in cases:
        want = orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
        raw = io.BytesIO()
        binary = io.TextIOWrapper(raw, encoding="utf-8")
        cli._write_json(binary, data)
        assert raw.getvalue() == want
        text = io.StringIO()
        cli._write_json(text, data)
        assert text.getvalue().encode() == want


def test_a_one_shot_import_does_not_start_the_search_index(tmp_path: Path) -> None:
    """The app's host builds the search index after an import; a one-shot command's does
    not (it would wait for the build's first batch to exit, and the next search builds it
    anyway): the store has no search database after `sessions import`."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "formats"))
    from claude_fixtures import Transcript, det_uuid

    folder = tmp_path / "projects" / "p"
    for i in range(30):
        t = Transcript(det_uuid(f"session {i}"))
        t.exchange(f"where is the axolotl {i}", f"in the pond {i}")
        t.write(folder / f"{t.session_id}.jsonl")
    store = tmp_path / "store"
    out, err = io.StringIO(), io.StringIO()
    argv = ["sessions", "import", "--from", "claude", str(tmp_path / "projects"),
            "--store", str(store), "--json"]  # fmt: skip
    assert cli.main(argv, out=out, err=err) == 0, err.getvalue()
    assert len(orjson.loads(out.getvalue())["imported"]) == 30
    assert not (store / "search.sqlite").exists()
