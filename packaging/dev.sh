#!/usr/bin/env bash
# Set up a development checkout on Debian and run the app or every check.
#   bash packaging/dev.sh run [forkwise args…]   install, then start the app (demo store when none exists)
#   bash packaging/dev.sh test [pytest args…]    install, then ruff, mypy, import contract, core-without-Qt, pytest
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mode=${1:-test}; shift || true

log() { printf '[forkwise-dev] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# Debian packages: Python with venv, and the system libraries Qt needs (offscreen and X11).
debs=(python3 python3-venv python3-pip libgl1 libegl1 libxkbcommon0 libfontconfig1 libdbus-1-3
      libglib2.0-0 fonts-dejavu-core libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1
      libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0)
# the tests start a real PostgreSQL server (initdb/pg_ctl in a temporary folder)
if [ "$mode" = test ]; then debs+=(postgresql); fi
if command -v dpkg-query >/dev/null; then
  missing=()
  for d in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$d" 2>/dev/null | grep -q 'install ok installed' || missing+=("$d")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    # A Python found on PATH (pyenv, a custom build) makes Debian's python3 unnecessary.
    if command -v python3 >/dev/null && python3 -c 'import venv, ensurepip' 2>/dev/null; then
      filtered=(); for d in "${missing[@]}"; do case $d in python3*) ;; *) filtered+=("$d");; esac; done
      missing=("${filtered[@]}")
    fi
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

py=${PYTHON:-python3}
"$py" -c 'import sys; assert sys.version_info >= (3, 11), sys.version' \
  || { log "Python 3.11 or newer is needed (found $($py --version 2>&1))"; exit 1; }

# Reinstall only when the project's dependency list changed.
ensure_venv() {  # dir extras
  local dir=$1 extras=$2 stamp
  stamp="$(sha256sum pyproject.toml | cut -c1-16)-$extras"
  if [ ! -x "$dir/bin/python" ]; then
    log "creating $dir"
    "$py" -m venv "$dir"
  fi
  if [ "$(cat "$dir/.forkwise-stamp" 2>/dev/null)" != "$stamp" ]; then
    log "installing Python packages into $dir ($extras)"
    mkdir -p build
    if ! "$dir/bin/python" -m pip install -q --disable-pip-version-check -e ".[$extras]" \
        > build/pip-install.log 2>&1; then
      cat build/pip-install.log >&2
      log "pip install failed (log above)"; exit 1
    fi
    echo "$stamp" > "$dir/.forkwise-stamp"
  fi
}

case $mode in
  run)
    ensure_venv .venv gui,test
    if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}${QT_QPA_PLATFORM:-}" ]; then
      log "no display found: set DISPLAY, or run under xvfb-run, or QT_QPA_PLATFORM=offscreen"
    fi
    if [ $# -eq 0 ] && ! .venv/bin/python -c \
        'import sys; from forkwise.core.paths import resolve_store_dir as r; sys.exit(not any((r() / "sessions").glob("*.jsonl")))'; then
      log "no store yet at the default location: opening a demo store (forkwise --demo)"
      set -- --demo
    fi
    exec .venv/bin/forkwise "$@"
    ;;
  test)
    ensure_venv .venv gui,test
    export QT_QPA_PLATFORM=offscreen
    export QT_LOGGING_RULES="qt.qpa.*=false"
    log "ruff"
    .venv/bin/ruff check core gui tests packaging
    log "mypy (strict on core) and the import contract (core never imports Qt)"
    .venv/bin/python packaging/typecheck.py
    # Everything but the GUI and packaging tests runs where PySide6 is not installed:
    # proof that the core, host, CLI and providers work without Qt.
    qt_free=(tests --ignore=tests/gui --ignore=tests/packaging)
    log "core, host and CLI tests in an environment without PySide6"
    ensure_venv .venv-core test
    .venv-core/bin/python -m pip uninstall -q -y PySide6-Essentials shiboken6 pytest-qt qasync >/dev/null 2>&1 || true
    .venv-core/bin/python -c 'import importlib.util as u, sys; sys.exit(u.find_spec("PySide6") is not None)' \
      || { log ".venv-core still has PySide6"; exit 1; }
    # A test still running after 10 minutes is hung: pytest prints every thread's stack
    # and ends the run (CI would otherwise sit silent until its own 90 minutes). A GUI
    # scenario has a tighter limit of its own (tests/gui/scenario_watchdog.py).
    hang_dump=(-o faulthandler_timeout=600 -o faulthandler_exit_on_timeout=true)
    set +e
    .venv-core/bin/python -m pytest -q -p no:cacheprovider "${hang_dump[@]}" -W ignore::pytest.PytestConfigWarning "${qt_free[@]}" "$@"
    rc=$?
    set -e
    if [ $rc -eq 5 ]; then log "no Qt-free tests were collected"; exit 1; fi
    if [ $rc -ne 0 ]; then log "tests without Qt failed (exit $rc)"; exit $rc; fi
    log "GUI and packaging tests (offscreen)"
    gui_tests=()
    for d in tests/gui tests/packaging; do [ -d "$d" ] && gui_tests+=("$d"); done
    if [ ${#gui_tests[@]} -eq 0 ]; then log "no GUI tests yet"; exit 0; fi
    set +e
    .venv/bin/python -m pytest -q "${hang_dump[@]}" "${gui_tests[@]}" "$@"
    rc=$?
    set -e
    if [ $rc -eq 5 ]; then log "pytest collected no GUI tests"; exit 1; fi
    if [ $rc -ne 0 ]; then exit $rc; fi
    # Tests elsewhere that start the real desktop app (marked gui) were skipped without Qt.
    log "app tests outside tests/gui (offscreen)"
    set +e
    .venv/bin/python -m pytest -q "${hang_dump[@]}" -m gui "${qt_free[@]}" "$@"
    rc=$?
    set -e
    if [ $rc -eq 5 ]; then log "no app tests were collected outside tests/gui"; exit 1; fi
    exit $rc
    ;;
  *)
    echo "usage: bash packaging/dev.sh run|test [args…]" >&2; exit 2;;
esac
