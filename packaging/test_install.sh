#!/usr/bin/env bash
# Prove the .deb on every base it claims: install it into a fresh debootstrap root of each with
# apt-get (so its declared dependencies are really resolved), run the installed app there,
# purge it and compare the root with what it was.
#   bash packaging/test_install.sh [--screenshot OUT.png] [DEB]
# DEB defaults to the newest dist/forkwise_*.deb (bash packaging/build_deb.sh makes it).
# Bases: $FORKWISE_BASES, default "bookworm trixie noble" (Debian 12, Debian 13, Ubuntu 24.04).
# Needs root (debootstrap, chroot, mount) and the Debian (and Ubuntu) mirrors. In each root:
#   * apt-get install --no-install-recommends ./forkwise_*.deb succeeds (Depends suffice);
#   * no library of /usr/lib/forkwise is "not found" by ldd, and none of those it resolves in
#     the bundle is also a library of the system (the bundle shadows nothing);
#   * the running app (forkwise --self-test, LD_DEBUG=files) loads every system library from
#     the system, OpenSSL included;
#   * forkwise --version prints the pyproject version;
#   * forkwise --self-test passes offscreen, as root and as an ordinary user (start-up timed);
#   * forkwise sessions list --json on an empty store prints [];
#   * the .desktop entry, metainfo, MIME type, completions and hicolor icons are installed;
#   * with --screenshot (first base only): the app on the demo store under Xvfb, one PNG;
#   * apt-get purge forkwise, then autoremove of its dependencies, leaves the root as it was
#     (/opt included: every path outside apt's and dpkg's own records compared).
# Cache (reused across runs and clones): each minbase root as a tarball keyed on the
# debootstrap version, and apt's downloaded .debs. Location: $FORKWISE_PACKAGING_CACHE, default
# ~/.cache/forkwise-packaging. Mirrors: $DEBIAN_MIRROR (default http://deb.debian.org/debian),
# $UBUNTU_MIRROR (default http://archive.ubuntu.com/ubuntu).
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
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
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
mkdir -p "$cache"
# One run at a time per cache (the tarball and apt's archive folder are shared).
exec 9>"$cache/.lock"
flock 9
run=""
r=""
cleanup_root() {  # unmount and delete the current root
  local m
  if [ -n "$run" ] && [ -d "$run" ]; then
    for m in var/cache/apt/archives dev/shm dev/pts proc sys; do
      if [ -n "$r" ] && mountpoint -q "$r/$m"; then
        umount "$r/$m" 2>/dev/null || umount -l "$r/$m"
      fi
    done
    if grep -q " $run/" /proc/mounts; then
      log "something is still mounted under $run: left in place"
    else
      rm -rf --one-file-system "$run"
    fi
  fi
  run=""
}
cleanup() {
  local rc=$?
  cleanup_root
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bases=${FORKWISE_BASES:-bookworm trixie noble}
debootstrap_version=$(dpkg-query -W -f='${Version}' debootstrap)

# A minbase root of BASE as a cached tarball; prints its path.
base_tarball() {
  local base=$1 tarball tb tmp mirror extra=()
  tarball=$cache/$base-minbase-$arch-debootstrap-$debootstrap_version.tar
  if [ ! -f "$tarball" ]; then
    case $base in
      noble|jammy)  # Ubuntu: its keyring (Debian's ubuntu-keyring) and the gutsy script
        mirror=${UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}
        extra=(--components=main,universe)
        if [ -f /usr/share/keyrings/ubuntu-archive-keyring.gpg ]; then
          extra+=(--keyring=/usr/share/keyrings/ubuntu-archive-keyring.gpg)
        else
          # No Ubuntu keyring on this Debian (the package is not in every mirror): the first
          # stage is not verified; apt inside the root verifies with the root's own keyring.
          log "no ubuntu-archive-keyring.gpg here: debootstrap $base with --no-check-gpg"
          extra+=(--no-check-gpg)
        fi
        ;;
      *) mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian} ;;
    esac
    local script=/usr/share/debootstrap/scripts/$base
    [ -e "$script" ] || script=/usr/share/debootstrap/scripts/gutsy
    log "debootstrap --variant=minbase $base (cached afterwards as $tarball)"
    tb=$(now)
    tmp=$(mktemp -d "$cache/debootstrap.XXXXXX")
    run=$tmp  # cleaned up by the trap if anything fails
    debootstrap --variant=minbase --arch="$arch" "${extra[@]}" "$base" "$tmp/root" "$mirror" "$script" \
        >"$tmp/log" 2>&1 \
      || { log "debootstrap failed once; retrying"; rm -rf --one-file-system "$tmp/root"
           debootstrap --variant=minbase --arch="$arch" "${extra[@]}" "$base" "$tmp/root" "$mirror" \
             "$script" >"$tmp/log" 2>&1; } \
      || { tail -20 "$tmp/log" >&2; die "debootstrap $base failed"; }
    rm -rf "$tmp/root/var/cache/apt/archives/"*.deb
    tar -C "$tmp/root" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    rm -rf --one-file-system "$tmp"; run=""
    log "debootstrap $base took $(secs "$tb" "$(now)") s"
  fi
  echo "$tarball"
}

# Every path of the root but apt's and dpkg's records, caches, logs and scratch space:
# what must be the same before the install and after purge + autoremove.
snapshot() {
  (cd "$r" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp \
      -o -path ./run -o -path ./var/lib/dpkg -o -path ./var/lib/apt -o -path ./var/cache \
      -o -path ./var/log -o -path ./var/tmp -o -path ./root -o -path ./home \) -prune \
      -o -printf '%p %M\n' | LC_ALL=C sort)
}

test_base() {
  local base=$1 tarball t_root ta t_apt before after tv got t_version cold warm as_user demo
  local tl listed t_list missing shadow loaded
  tarball=$(base_tarball "$base")
  run=$(mktemp -d /tmp/forkwise-cleanroot.XXXXXX)
  r=$run/root
  mkdir "$r"
  tar -C "$r" -xf "$tarball"
  mount -t proc proc "$r/proc"
  mount -t tmpfs -o mode=1777 shm "$r/dev/shm"
  mkdir -p "$cache/apt-archives-$base/partial"
  mount --bind "$cache/apt-archives-$base" "$r/var/cache/apt/archives"
  cp -L /etc/resolv.conf "$r/etc/resolv.conf"
  echo 'Acquire::Retries "3";' > "$r/etc/apt/apt.conf.d/80forkwise-retries"
  cp "$deb" "$r/tmp/"
  debname=$(basename "$deb")
  t_root=$(now)

  log "[$base] apt-get install ./$debname in a clean $base root"
  in_root apt-get update -qq >/dev/null
  in_root apt-get install -y -q --no-install-recommends setpriv >/dev/null 2>&1 || true
  in_root useradd -m -s /bin/sh tester 2>/dev/null || true
  [ -d "$r/opt" ] || die "[$base] the clean root has no /opt to check"
  snapshot > "$run/before.txt"
  before=$(in_root dpkg-query -W -f='${Package}\n' | wc -l)
  ta=$(now)
  in_root apt-get install -y -q --no-install-recommends "/tmp/$debname" >"$run/apt.log" 2>&1 \
    || { tail -30 "$run/apt.log" >&2; die "[$base] apt-get install failed"; }
  t_apt=$(secs "$ta" "$(now)")
  after=$(in_root dpkg-query -W -f='${Package}\n' | wc -l)
  log "[$base] installed: forkwise and $((after - before - 1)) dependencies in $t_apt s"

  # Every ELF file of the bundle must find its libraries in the bundle or the declared Depends,
  # and a library it finds in the bundle must not be one the system has too (shadowing).
  in_root sh -c 'cd /usr/lib/forkwise && find . -type f \( -name "*.so*" -o -name forkwise \) \
    | while read -r f; do LD_LIBRARY_PATH=/usr/lib/forkwise/_internal ldd "$f" 2>/dev/null \
    | sed "s|^|$f: |"; done' > "$run/ldd.txt" || true
  missing=$(grep "not found" "$run/ldd.txt" || true)
  [ -z "$missing" ] || { printf '%s\n' "$missing" >&2; die "[$base] libraries not found (missing Depends?)"; }
  shadow=$({ grep -o "=> /usr/lib/forkwise/[^ ]*" "$run/ldd.txt" || true; } | sed 's|.*/||' | sort -u \
    | while read -r lib; do
        for d in /lib /usr/lib /lib/*-linux-gnu /usr/lib/*-linux-gnu; do
          if [ -e "$r$d/$lib" ]; then echo "$lib (the system has $d/$lib)"; fi
        done
      done | sort -u)
  [ -z "$shadow" ] || { printf '%s\n' "$shadow" >&2; die "[$base] the bundle shadows system libraries"; }
  grep -q "libssl.so.3 => /usr/lib/forkwise" "$run/ldd.txt" && die "[$base] bundled OpenSSL"
  grep -q "libssl.so.3 => /" "$run/ldd.txt" || die "[$base] Python's ssl module does not link the system's libssl"

  [ -L "$r/usr/bin/forkwise" ] || die "[$base] /usr/bin/forkwise is missing"
  for f in applications/forkwise.desktop icons/hicolor/scalable/apps/forkwise.svg \
      icons/hicolor/48x48/apps/forkwise.png metainfo/org.forkwise.Forkwise.metainfo.xml \
      mime/packages/forkwise.xml bash-completion/completions/forkwise \
      zsh/vendor-completions/_forkwise man/man1/forkwise.1.gz doc/forkwise/copyright; do
    [ -f "$r/usr/share/$f" ] || die "[$base] /usr/share/$f is missing"
  done

  tv=$(now)
  got=$(in_root forkwise --version)
  t_version=$(secs "$tv" "$(now)")
  [ "$got" = "forkwise $version" ] || die "[$base] forkwise --version printed '$got', expected 'forkwise $version'"
  log "[$base] forkwise --version: $got ($t_version s)"

  # The running app: which file each library was loaded from.
  in_root env QT_QPA_PLATFORM=offscreen LD_DEBUG=files LD_DEBUG_OUTPUT=/tmp/ld forkwise --self-test \
    >/dev/null 2>&1 || die "[$base] forkwise --self-test under LD_DEBUG failed"
  loaded=$(cat "$r"/tmp/ld.* | sed -n 's/.*calling init: //p' | sort -u)
  printf '%s\n' "$loaded" > "$run/loaded.txt"
  shadow=$(printf '%s\n' "$loaded" | { grep "^/usr/lib/forkwise/" || true; } | sed 's|.*/||' | while read -r lib; do
      for d in /lib /usr/lib /lib/*-linux-gnu /usr/lib/*-linux-gnu; do
        if [ -e "$r$d/$lib" ]; then echo "$lib"; fi
      done
    done | sort -u)
  [ -z "$shadow" ] || { printf '%s\n' "$shadow" >&2; die "[$base] the app loaded bundled copies of system libraries"; }
  log "[$base] the running app loaded $(printf '%s\n' "$loaded" | grep -vc "^/usr/lib/forkwise/")" \
    "system libraries from the system and $(printf '%s\n' "$loaded" | grep -c "^/usr/lib/forkwise/")" \
    "of its own (Qt, ICU, Python)"

  cold=$(selftest root)
  warm=$(selftest root)
  as_user=$(selftest tester)
  demo=$(selftest tester --demo)
  log "[$base] forkwise --self-test offscreen: cold $cold s, warm $warm s, as a normal user" \
    "$as_user s, on the demo store $demo s"

  in_root mkdir -p /tmp/empty-store
  tl=$(now)
  listed=$(in_root forkwise sessions list --json --store /tmp/empty-store)
  t_list=$(secs "$tl" "$(now)")
  [ "$(printf '%s' "$listed" | tr -d '[:space:]')" = "[]" ] \
    || die "[$base] sessions list --json on an empty store printed '$listed'"
  log "[$base] forkwise sessions list --json (empty store): $listed ($t_list s)"

  # What a file manager does with a session file (Exec=forkwise %F): import it, open the app.
  in_root sh -c 'mkdir -p /tmp/made /tmp/opened && forkwise sessions new --store /tmp/made \
    --id shared-1 --title "From a file manager" >/dev/null && cp /tmp/made/sessions/shared-1.jsonl /tmp/'
  got=$(in_root env QT_QPA_PLATFORM=offscreen forkwise --store /tmp/opened --self-test \
    /tmp/shared-1.jsonl 2>&1) || { printf '%s\n' "$got" >&2; die "[$base] forkwise FILE failed"; }
  [ -f "$r/tmp/opened/sessions/shared-1.jsonl" ] || die "[$base] forkwise FILE did not import it"
  printf '%s\n' "$got" | grep -q "self-test ok: 1 sessions" || die "[$base] forkwise FILE: $got"
  log "[$base] forkwise FILE: the session file was imported and the app opened on it"

  if [ -n "$screenshot" ]; then
    take_screenshot
    screenshot=""  # one is enough
  fi

  in_root apt-get purge -y -q forkwise >>"$run/apt.log" 2>&1 || die "[$base] apt-get purge forkwise failed"
  in_root apt-get autoremove --purge -y -q >>"$run/apt.log" 2>&1 || die "[$base] apt-get autoremove failed"
  [ -d "$r/opt" ] || die "[$base] /opt was removed by the purge"
  [ ! -e "$r/usr/lib/forkwise" ] || die "[$base] /usr/lib/forkwise is still there after purge"
  snapshot > "$run/after.txt"
  if ! diff -u "$run/before.txt" "$run/after.txt" > "$run/diff.txt"; then
    cat "$run/diff.txt" >&2
    die "[$base] the root differs after purge + autoremove"
  fi
  log "[$base] apt-get purge forkwise + autoremove: the root is as before (/opt kept)"
  echo "RESULT base=$base apt_install_s=$t_apt deps=$((after - before - 1)) version_s=$t_version" \
    "list_s=$t_list selftest_cold_s=$cold selftest_warm_s=$warm root_s=$(secs "$t_root" "$(now)")"
  cleanup_root
}

# Run a command in the clean root with a clean environment.
in_root() {
  chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

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
  secs "$ts" "$(now)"
}

take_screenshot() {
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
  # What the screenshot installed goes again, so that the purge check sees only forkwise's.
  in_root apt-get purge -y -q xvfb xauth imagemagick >>"$run/apt.log" 2>&1 || true
  rm -rf "$r/tmp/shot-home" "$r/tmp/demo-store"
}

for base in $bases; do
  test_base "$base"
done
log "PASS on $bases in $(secs "$t0" "$(now)") s"
