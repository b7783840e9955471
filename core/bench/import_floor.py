"""How close an import can come to parsing its files: `python -m forkwise.core.bench.import_floor
FOLDER` (a Claude Code projects folder or a Codex home; every `*.jsonl` under it).

The figures `import` and `import-codex` compare `sessions import` with reading the files and
decoding every line. This runs bare scripts that do no more than an import must, each in a
fresh process, and prints their CPU seconds (user + system, every thread; the median of
three) as multiples of the first:

- parse: read the files, decode every line (the figures' baseline);
- + encode: one event dict a line (seq, type, ts, the line as its payload, src), each
  encoded with orjson, a file's lines joined;
- + write, fsync: each file written to a temporary name, fsynced on 8 threads, linked to its
  name, the folder fsynced (what the store must do before it reports a session imported);
- + map, check: a second dict a line (a reader's record, then its numbered copy) and the type
  checks of seq, type and ts.

None of them maps a tool's format, checks turn brackets or keeps an index: the last line is
below what any import that stores durable, checked sessions costs, and the CLI's own start-up
(`sessions import` with nothing to import) comes on top of it.
"""

from __future__ import annotations

import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from forkwise.core.bench import process_env

LEVELS = ("parse", "+ encode", "+ write, fsync", "+ map, check")

SCRIPT = """
import os, sys
from concurrent.futures import ThreadPoolExecutor
import orjson
src, dest, level = sys.argv[1], sys.argv[2], int(sys.argv[3])
loads, dumps = orjson.loads, orjson.dumps
files = sorted(os.path.join(d, n) for d, _, ns in os.walk(src) for n in ns if n.endswith(".jsonl"))
pool = ThreadPoolExecutor(8) if level >= 2 else None
pending = []
def name_all():
    for tmp, final, fd, synced in pending:
        synced.result(); os.close(fd); os.link(tmp, final); os.unlink(tmp)
    pending.clear()
if level >= 2:
    os.makedirs(dest)
for i, path in enumerate(files):
    with open(path, "rb") as fh:
        data = fh.read()
    if level == 0:
        for raw in data.split(b"\\n"):
            if raw:
                loads(raw)
        continue
    sid = f"s{i}"
    lines = [b'{"format":3,"id":"' + sid.encode() + b'"}']
    for no, raw in enumerate(data.split(b"\\n"), 1):
        if not raw:
            continue
        obj = loads(raw)
        kind, ts = obj.get("type") or "entry", obj.get("timestamp") or ""
        src_ = {"id": sid, "lines": [no]}
        if level >= 3:
            rec = {"type": kind, "payload": obj.get("payload", obj), "ts": ts, "src": src_}
            rec = {"seq": no, "type": rec["type"], "ts": rec["ts"], **rec}
            seq, kind, ts = rec["seq"], rec["type"], rec["ts"]
            if type(seq) is not int or type(kind) is not str or type(ts) is not str:
                raise SystemExit(f"{path}:{no}: not an event")
        else:
            payload = obj.get("payload", obj)
            rec = {"seq": no, "type": kind, "ts": ts, "payload": payload, "src": src_}
        lines.append(dumps(rec))
    lines.append(b"")
    blob = b"\\n".join(lines)
    if level >= 2:
        tmp, final = f"{dest}/.{sid}.tmp", f"{dest}/{sid}.jsonl"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, blob)
        pending.append((tmp, final, fd, pool.submit(os.fsync, fd)))
        if len(pending) >= 64:
            name_all()
if pool is not None:
    name_all()
    folder = os.open(dest, os.O_RDONLY)
    os.fsync(folder)
    os.close(folder)
"""


def cpu_of(level: int, source: Path, scratch: Path) -> float:
    """CPU seconds of a fresh process running one level over `source`."""
    dest = scratch / f"level-{level}"
    shutil.rmtree(dest, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-c", SCRIPT, str(source), str(dest), str(level)],
        check=True,
        env=process_env(),
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(dest, ignore_errors=True)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def floors(source: Path, repeat: int = 3) -> list[float]:
    """The median CPU seconds of each level, the levels run in turn `repeat` times."""
    took: list[list[float]] = [[] for _ in LEVELS]
    scratch = Path(tempfile.mkdtemp(prefix="forkwise-floor-"))
    try:
        for _ in range(repeat):
            for level in range(len(LEVELS)):
                took[level].append(cpu_of(level, source, scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return [statistics.median(t) for t in took]


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print(__doc__, file=sys.stderr)
        return 2
    found = floors(Path(argv[0]))
    parse = found[0] or float("inf")
    print(f"{argv[0]}: CPU seconds, median of 3 fresh processes")
    for name, took in zip(LEVELS, found, strict=True):
        print(f"  {name:16s} {took:6.3f} s  {took / parse:5.2f}x parse")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
