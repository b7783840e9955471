#!/usr/bin/env bash
# Prove the .deb on a clean Debian 12: install it into a fresh debootstrap root with apt-get
# (so its declared dependencies are really resolved), run the installed app there, remove it.
#   bash packaging/test_install.sh [--screenshot OUT.png] [DEB]
# DEB defaults to the newest dist/forkwise_*.deb (bash packaging/build_deb.sh makes it).
# Needs root (debootstrap, chroot, mount) and the Debian mirror. Checks, in the clean root:
#   * apt-get install --no-install-recommends ./forkwise_*.deb succeeds (Depends suffice);
#   * no library of /opt/forkwise is "not found" by ldd;
#   * forkwise --version prints the pyproject version;
#   * forkwise --self-test passes offscreen, as root and as an ordinary user (start-up timed);
#   * forkwise sessions list --json on an empty store prints [];
#   * the .desktop entry and the hicolor icons are installed;
#   * with --screenshot: the app on the demo store under Xvfb (real xcb platform), one PNG;
#   * apt-get purge forkwise leaves no file of the package behind.
# Cache (reused across runs and clones): the minbase root as a tarball keyed on the debootstrap
# version, and apt's downloaded .debs. Location: $FORKWISE_PACKAGING_CACHE, default
# ~/.cache/forkwise-packaging. Mirror: $DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
log() { printf '[forkwise-install-test] %s\n' "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }
now() { date +%s.%N; }
secs() { awk "BEGIN{printf \"%.2f\", $2 - $1}"; }
. packaging/packaging_lock.sh

screenshot=""
deb=""
while [ $# -gt 0 ]; do
  case $1 in
    --screenshot) screenshot=$(realpath -m "$2"); shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) deb=$1; shift ;;
  esac
done
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot and mount)"
if [ -z "$deb" ]; then
  deb=$(ls -t dist/forkwise_*.deb 2>/dev/null | head -1 || true)
  [ -n "$deb" ] || die "no dist/forkwise_*.deb: run bash packaging/build_deb.sh first"
fi
deb=$(realpath "$deb")
version=$(python3 packaging/project_version.py)
t0=$(now)

if ! command -v debootstrap >/dev/null; then
  log "installing debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
arch=$(dpkg --print-architecture)
cache=${FORKWISE_PACKAGING_CACHE:-${XDG_CACHE_HOME:-${HOME:-/var/tmp}/.cache}/forkwise-packaging}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$cache/apt-archives/partial"
# One run at a time per cache (the tarball and apt's archive folder are shared).
exec 9>"$cache/.lock"
flock 9
tarball=$cache/bookworm-minbase-$arch-debootstrap-$(dpkg-query -W -f='${Version}' debootstrap).tar

run=""
cleanup() {
  local rc=$? m
  if [ -n "$run" ] && [ -d "$run" ]; then
    for m in var/cache/apt/archives dev/shm dev/pts proc sys; do
      if mountpoint -q "$run/root/$m"; then
        umount "$run/root/$m" 2>/dev/null || umount -l "$run/root/$m"
      fi
    done
    if grep -q " $run/" /proc/mounts; then
      log "something is still mounted under $run: left in place"
    else
      rm -rf --one-file-system "$run"
    fi
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ ! -f "$tarball" ]; then
  log "debootstrap --variant=minbase bookworm (cached afterwards as $tarball)"
  tb=$(now)
  tmp=$(mktemp -d "$cache/debootstrap.XXXXXX")
  run=$tmp  # cleaned up by the trap if anything fails
  debootstrap --variant=minbase --arch="$arch" bookworm "$tmp/root" "$mirror" >"$tmp/log" 2>&1 \
    || { log "debootstrap failed once; retrying"; rm -rf --one-file-system "$tmp/root"
         debootstrap --variant=minbase --arch="$arch" bookworm "$tmp/root" "$mirror" >"$tmp/log" 2>&1; } \
    || { tail -20 "$tmp/log" >&2; die "debootstrap failed"; }
  rm -rf "$tmp/root/var/cache/apt/archives/"*.deb
  tar -C "$tmp/root" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
  rm -rf --one-file-system "$tmp"; run=""
  log "debootstrap took $(secs "$tb" "$(now)") s"
fi

run=$(mktemp -d /tmp/forkwise-cleanroot.XXXXXX)
r=$run/root
mkdir "$r"
tar -C "$r" -xf "$tarball"
mount -t proc proc "$r/proc"
mount -t tmpfs -o mode=1777 shm "$r/dev/shm"
mount --bind "$cache/apt-archives" "$r/var/cache/apt/archives"
cp -L /etc/resolv.conf "$r/etc/resolv.conf"
echo 'Acquire::Retries "3";' > "$r/etc/apt/apt.conf.d/80forkwise-retries"
cp "$deb" "$r/tmp/"
debname=$(basename "$deb")
t_root=$(now)

# Run a command in the clean root with a clean environment.
in_root() {
  chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

log "apt-get install ./$debname in a clean bookworm root"
in_root apt-get update -qq >/dev/null
before=$(in_root dpkg-query -W -f='${Package}\n' | wc -l)
ta=$(now)
in_root apt-get install -y -q --no-install-recommends "/tmp/$debname" >"$run/apt.log" 2>&1 \
  || { tail -30 "$run/apt.log" >&2; die "apt-get install failed"; }
t_apt=$(secs "$ta" "$(now)")
after=$(in_root dpkg-query -W -f='${Package}\n' | wc -l)
log "installed: forkwise and $((after - before - 1)) dependencies in $t_apt s"

# Every ELF file of the bundle must find its libraries in the bundle or the declared Depends.
missing=$(in_root sh -c 'cd /opt/forkwise && find . -type f \( -name "*.so*" -o -name forkwise \) \
  | while read -r f; do LD_LIBRARY_PATH=/opt/forkwise/_internal ldd "$f" 2>/dev/null \
  | grep "not found" | sed "s|^|$f: |"; done' || true)
[ -z "$missing" ] || { printf '%s\n' "$missing" >&2; die "libraries not found (missing Depends?)"; }

[ -L "$r/usr/bin/forkwise" ] || die "/usr/bin/forkwise is missing"
[ -f "$r/usr/share/applications/forkwise.desktop" ] || die "the .desktop entry is missing"
[ -f "$r/usr/share/icons/hicolor/scalable/apps/forkwise.svg" ] || die "the SVG icon is missing"
[ -f "$r/usr/share/icons/hicolor/48x48/apps/forkwise.png" ] || die "the 48 px icon is missing"

tv=$(now)
got=$(in_root forkwise --version)
t_version=$(secs "$tv" "$(now)")
[ "$got" = "forkwise $version" ] || die "forkwise --version printed '$got', expected 'forkwise $version'"
log "forkwise --version: $got ($t_version s)"

selftest() {  # user [extra args] -> prints the wall time
  local ts out user=$1
  shift
  ts=$(now)
  if [ "$user" = root ]; then
    out=$(in_root env QT_QPA_PLATFORM=offscreen forkwise --self-test "$@" 2>&1) \
      || { printf '%s\n' "$out" >&2; die "forkwise --self-test $* failed as root"; }
  else
    out=$(in_root setpriv --reuid="$user" --regid="$user" --init-groups \
      env HOME="/home/$user" QT_QPA_PLATFORM=offscreen forkwise --self-test "$@" 2>&1) \
      || { printf '%s\n' "$out" >&2; die "forkwise --self-test $* failed as $user"; }
  fi
  printf '%s\n' "$out" | grep -i "self-test" >&2 || true
  secs "$ts" "$(now)"
}
cold=$(selftest root)
warm=$(selftest root)
in_root useradd -m -s /bin/sh tester
as_user=$(selftest tester)
demo=$(selftest tester --demo)
log "forkwise --self-test offscreen: cold $cold s, warm $warm s, as a normal user $as_user s," \
  "on the demo store $demo s"

in_root mkdir -p /tmp/empty-store
tl=$(now)
listed=$(in_root forkwise sessions list --json --store /tmp/empty-store)
t_list=$(secs "$tl" "$(now)")
[ "$(printf '%s' "$listed" | tr -d '[:space:]')" = "[]" ] \
  || die "sessions list --json on an empty store printed '$listed'"
log "forkwise sessions list --json (empty store): $listed ($t_list s)"

if [ -n "$screenshot" ]; then
  log "screenshot: installing xvfb, xauth and imagemagick in the root"
  in_root apt-get install -y -q --no-install-recommends xvfb xauth imagemagick >>"$run/apt.log" 2>&1 \
    || { tail -30 "$run/apt.log" >&2; die "installing xvfb failed"; }
  cat > "$r/tmp/shot.sh" <<'EOF'
set -eu
export QT_QPA_PLATFORM=xcb
# A first start: no settings left by the self-tests above.
export HOME=/tmp/shot-home XDG_CONFIG_HOME=/tmp/shot-home/.config
mkdir -p "$HOME"
forkwise --demo --store /tmp/demo-store >/tmp/app.log 2>&1 &
pid=$!
sleep "${SHOT_DELAY:-4}"
kill -0 "$pid" || { cat /tmp/app.log; exit 1; }
import -window root /tmp/screen.png
# No window manager under Xvfb: the window sits at the top left; cut the empty screen away.
convert /tmp/screen.png -trim +repage /tmp/installed-demo.png
kill "$pid"; wait "$pid" 2>/dev/null || true
cat /tmp/app.log
EOF
  in_root setpriv --reuid=tester --regid=tester --init-groups env HOME=/home/tester \
    xvfb-run -a -s "-screen 0 1440x900x24" sh /tmp/shot.sh || die "the screenshot run failed"
  mkdir -p "$(dirname "$screenshot")"
  cp "$r/tmp/installed-demo.png" "$screenshot"
  log "screenshot: $screenshot"
fi

in_root apt-get purge -y -q forkwise >>"$run/apt.log" 2>&1 || die "apt-get purge forkwise failed"
[ ! -e "$r/opt/forkwise" ] || die "/opt/forkwise is still there after purge"
[ ! -e "$r/usr/bin/forkwise" ] || die "/usr/bin/forkwise is still there after purge"
[ ! -e "$r/usr/share/applications/forkwise.desktop" ] || die "the .desktop entry is still there"
leftover=$(find "$r/usr/share" -name 'forkwise*' 2>/dev/null || true)
[ -z "$leftover" ] || die "icons left after purge: $leftover"
log "apt-get purge forkwise: nothing left behind"

t_end=$(now)
log "PASS in $(secs "$t0" "$t_end") s (root ready + install + checks: $(secs "$t_root" "$t_end") s)"
echo "RESULT apt_install_s=$t_apt deps=$((after - before - 1)) version_s=$t_version" \
  "list_s=$t_list selftest_cold_s=$cold selftest_warm_s=$warm total_s=$(secs "$t0" "$t_end")"
