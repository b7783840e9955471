#!/usr/bin/env bash
# Build the self-contained one-folder app bundle with PyInstaller.
#   bash packaging/build_bundle.sh            -> dist/forkwise/forkwise (+ dist/forkwise/_internal/)
# The build uses its own virtual environment (build/pyinstaller-venv), never the app's .venv:
# it holds PyInstaller and a non-editable install of this checkout with the `gui` extra.
# Works offline with the package index configured for pip. Python: $PYTHON, default the
# distribution's /usr/bin/python3 (>= 3.11, with its shared libpython: Debian's libpython3.X).
# The bundle runs on the distribution it was built on and newer ones (glibc, libstdc++ and the
# system libraries it links to are taken from there), so build on the oldest base you claim:
# Debian 12 for the published .deb.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
log() { printf '[forkwise-bundle] %s\n' "$*" >&2; }
. packaging/packaging_lock.sh

PYINSTALLER_VERSION=6.22.3
py=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=$(command -v "$py") || { log "no Python at ${PYTHON:-/usr/bin/python3}"; exit 1; }
venv=$root/build/pyinstaller-venv
dist=$root/dist
work=$root/build/pyinstaller

"$py" -c 'import sys; assert sys.version_info >= (3, 11), sys.version' \
  || { log "Python 3.11 or newer is needed (found $($py --version 2>&1))"; exit 1; }

start=$(date +%s.%N)
# The build environment is remade when the interpreter or the dependency list changes.
pyid=$("$py" -c 'import sys; print(sys.executable, sys.version.split()[0])')
stamp="$(sha256sum pyproject.toml | cut -c1-16)-pyinstaller-$PYINSTALLER_VERSION-${pyid// /-}"
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.forkwise-python" 2>/dev/null)" != "$pyid" ]; then
  log "the build environment was made with another Python: recreating it"
  rm -rf "$venv"
fi
if [ ! -x "$venv/bin/python" ]; then
  log "creating the build environment $venv"
  "$py" -m venv "$venv"
  echo "$pyid" > "$venv/.forkwise-python"
fi
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
if [ "$(cat "$venv/.forkwise-stamp" 2>/dev/null)" != "$stamp" ]; then
  log "installing PyInstaller $PYINSTALLER_VERSION and the app's dependencies"
  "${pip[@]}" "pyinstaller==$PYINSTALLER_VERSION" "setuptools>=77" wheel
  "${pip[@]}" --no-build-isolation ".[gui]"
  echo "$stamp" > "$venv/.forkwise-stamp"
fi
# Always install the current sources (not editable: the bundle must see a wheel's layout).
# setuptools builds in build/lib: clear it so files removed from the tree do not linger.
rm -rf "$root/build/lib" "$root/build/bdist."*
# FORKWISE_SRC: another source tree to bundle (default: this checkout).
"${pip[@]}" --no-build-isolation --no-deps --force-reinstall "${FORKWISE_SRC:-.}" 2>&1 \
  | { grep -v "is ignored: it is neither a file nor a directory" || true; } >&2

log "running PyInstaller"
# Reproducible: a fixed hash seed (sets and dicts marshalled into the archive keep one order)
# and one time for every timestamp PyInstaller writes (the last commit's).
export PYTHONHASHSEED=0
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH
# PyInstaller's cache (bincache) of this checkout: the one in ~/.cache is shared by every
# checkout, and two builds at once can corrupt it ("bincache may be corrupted").
export PYINSTALLER_CONFIG_DIR="$root/build/pyinstaller-config"
"$venv/bin/pyinstaller" --noconfirm --clean --log-level WARN \
  --distpath "$dist" --workpath "$work" packaging/forkwise.spec

bundle=$dist/forkwise
# Dangling symlinks would mean the spec dropped a library something still links to.
if [ -n "$(find "$bundle" -xtype l)" ]; then
  log "dangling symlinks in the bundle:"; find "$bundle" -xtype l >&2; exit 1
fi
end=$(date +%s.%N)
size=$(du -sm "$bundle" | cut -f1)
files=$(find "$bundle" -type f | wc -l)
log "bundle: $bundle (${size} MB, $files files) built in $(awk "BEGIN{printf \"%.0f\", $end - $start}") s"
