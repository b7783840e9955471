#!/usr/bin/env bash
# Build the Debian package from a fresh PyInstaller bundle.
#   bash packaging/build_deb.sh                 -> dist/forkwise_<version>_<arch>.deb
#   bash packaging/build_deb.sh --no-bundle     reuse dist/forkwise/ as it is (no PyInstaller run)
# Environment: DEB_COMPRESS=xz|zstd|gzip (default xz), DEB_LEVEL (dpkg-deb -z, default 6 for xz,
# 19 for zstd).
# Layout installed: /usr/lib/forkwise/ (the bundle: the app's own Python and Qt), /usr/bin/forkwise
# -> /usr/lib/forkwise/forkwise, the desktop entry, AppStream metainfo, the MIME type of session
# files, hicolor icons, bash and zsh completions, the manual page, copyright and changelog.
# Depends is read off the bundle (packaging/deb_depends.py): the system libraries it links to.
# The copyright file is written from the bundle's *.dist-info (packaging/deb_copyright.py).
# Reproducible: every timestamp is $SOURCE_DATE_EPOCH (default: the last commit's time), so two
# builds of one commit give the same bytes.
# No maintainer scripts: the icon cache, the desktop and MIME databases are refreshed by the
# dpkg triggers of hicolor-icon-theme, desktop-file-utils and shared-mime-info.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
log() { printf '[forkwise-deb] %s\n' "$*" >&2; }
. packaging/packaging_lock.sh

build_bundle=1
for arg in "$@"; do
  case $arg in
    --no-bundle) build_bundle=0 ;;
    *) echo "usage: bash packaging/build_deb.sh [--no-bundle]" >&2; exit 2 ;;
  esac
done
command -v dpkg-deb >/dev/null || { log "dpkg-deb is missing (Debian: apt-get install dpkg)"; exit 1; }
# deb_depends.py reads the bundle with readelf and finds each library it links to on this
# machine: the libraries Qt's Wayland plugins link to must be installed here too.
build_debs=(binutils libwayland-client0 libwayland-cursor0 libwayland-egl1)
missing=()
for d in "${build_debs[@]}"; do
  dpkg-query -W -f='${Status}' "$d" 2>/dev/null | grep -q 'install ok installed' || missing+=("$d")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing what the package build reads: ${missing[*]}"
  as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ $build_bundle = 1 ]; then
  bash packaging/build_bundle.sh
fi
bundle=$root/dist/forkwise
[ -x "$bundle/forkwise" ] || { log "no bundle at $bundle: run packaging/build_bundle.sh"; exit 1; }

start=$(date +%s.%N)
# One time for every timestamp: the last commit's, unless the caller sets it.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH
# The one version: [project] version in pyproject.toml, as a Debian version (1.2.0rc1 -> 1.2.0~rc1).
version=$(python3 packaging/project_version.py --debian)
arch=$(dpkg --print-architecture)
deb=$root/dist/forkwise_${version}_${arch}.deb

stage=$root/build/deb/forkwise
rm -rf "$stage"
share=$stage/usr/share
install -d "$stage/DEBIAN" "$stage/usr/lib" "$stage/usr/bin" "$share/applications" \
  "$share/doc/forkwise" "$share/man/man1" "$share/metainfo" "$share/mime/packages" \
  "$share/bash-completion/completions" "$share/zsh/vendor-completions"
cp -a "$bundle" "$stage/usr/lib/forkwise"
ln -s ../lib/forkwise/forkwise "$stage/usr/bin/forkwise"
install -m 644 resources/forkwise.desktop "$share/applications/forkwise.desktop"
install -m 644 resources/org.forkwise.Forkwise.metainfo.xml "$share/metainfo/"
install -m 644 resources/forkwise-mime.xml "$share/mime/packages/forkwise.xml"
install -m 644 resources/completions/forkwise.bash "$share/bash-completion/completions/forkwise"
install -m 644 resources/completions/_forkwise "$share/zsh/vendor-completions/_forkwise"
for png in resources/icons/forkwise-*.png; do
  size=$(basename "$png" .png); size=${size#forkwise-}
  install -D -m 644 "$png" "$share/icons/hicolor/${size}x${size}/apps/forkwise.png"
done
install -D -m 644 resources/icons/forkwise.svg "$share/icons/hicolor/scalable/apps/forkwise.svg"
gzip -9n < packaging/forkwise.1 > "$share/man/man1/forkwise.1.gz"
# The licences of everything bundled, from the bundle's metadata; CPython's from the
# interpreter the bundle was built with.
python_licence=$("$root/build/pyinstaller-venv/bin/python" -c \
  'import sysconfig, pathlib; print(pathlib.Path(sysconfig.get_path("stdlib")) / "LICENSE.txt")')
[ -f "$python_licence" ] || python_licence=/usr/share/doc/libpython3.11/copyright
python3 packaging/deb_copyright.py "$bundle" "$python_licence" > "$share/doc/forkwise/copyright"
# A native package's changelog: one entry for the version built, dated by the last commit.
{
  echo "forkwise ($version) unstable; urgency=medium"
  echo
  echo "  * Release $version."
  echo
  echo " -- Forkwise maintainers <maintainers@forkwise.invalid>  $(date -R -u -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$share/doc/forkwise/changelog.gz"
# Normalise permissions whatever the umask was.
find "$stage" -type d -exec chmod 755 {} +
find "$stage/usr/lib/forkwise" -type f -exec chmod go-w {} +
find "$stage/usr/lib/forkwise" -type f -name '*.so*' -exec chmod a-x {} +  # libraries are not programs
find "$stage/usr/lib/forkwise/_internal" -type f -path "*.dist-info/*" -exec chmod a-x {} +  # metadata

installed_kb=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
# The system libraries the bundle links to (it carries none of them), and libGL/libEGL.
depends=$(python3 packaging/deb_depends.py "$bundle")
cat > "$stage/DEBIAN/control" <<EOF
Package: forkwise
Version: $version
Architecture: $arch
Maintainer: Forkwise maintainers <maintainers@forkwise.invalid>
Installed-Size: $installed_kb
Depends: $depends
Recommends: ca-certificates, fonts-dejavu-core, hicolor-icon-theme, shared-mime-info
Section: devel
Priority: optional
Description: browse and fork AI-agent sessions
 Forkwise is a desktop browser for AI-agent sessions stored as append-only
 event logs. It shows every session in a tree grouped by lineage, forks a
 session (whole, or at a message) into an independent child, edits and resends
 a question in place, and keeps working in any branch.
 .
 This package ships a self-contained build (its own Python and Qt for Python)
 under /usr/lib/forkwise; it uses the system's libraries otherwise.
EOF
# Reproducible: dpkg-deb sorts the entries and clamps their times to SOURCE_DATE_EPOCH; every
# time is set to it, so that a file older than the commit gives the same bytes too.
find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

compress=${DEB_COMPRESS:-xz}
case $compress in
  xz) level=${DEB_LEVEL:-6} ;;
  zstd) level=${DEB_LEVEL:-19} ;;
  gzip) level=${DEB_LEVEL:-9} ;;
  *) log "DEB_COMPRESS must be xz, zstd or gzip"; exit 2 ;;
esac
rm -f "$root"/dist/forkwise_*.deb
log "dpkg-deb --build ($compress -$level)"
dpkg-deb --root-owner-group -Z"$compress" -z"$level" --build "$stage" "$deb" >/dev/null
end=$(date +%s.%N)
log "package: $deb ($(du -m "$deb" | cut -f1) MB, installs $((installed_kb / 1024)) MB)" \
  "built in $(awk "BEGIN{printf \"%.0f\", $end - $start}") s (without the bundle)"
echo "$deb"
