#!/usr/bin/env bash
# Build the Debian package from a fresh PyInstaller bundle.
#   bash packaging/build_deb.sh                 -> dist/forkwise_<version>_<arch>.deb
#   bash packaging/build_deb.sh --no-bundle     reuse dist/forkwise/ as it is (no PyInstaller run)
# Environment: DEB_COMPRESS=xz|zstd|gzip (default xz), DEB_LEVEL (dpkg-deb -z, default 6 for xz,
# 19 for zstd).
# Layout installed: /opt/forkwise/ (the bundle), /usr/bin/forkwise -> /opt/forkwise/forkwise,
# /usr/share/applications/forkwise.desktop, /usr/share/icons/hicolor/*/apps/forkwise.{png,svg},
# /usr/share/man/man1/forkwise.1.gz, /usr/share/doc/forkwise/{copyright,changelog.gz}.
# No maintainer scripts: the icon cache and the desktop database are refreshed by the dpkg
# triggers of hicolor-icon-theme and desktop-file-utils.
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

if [ $build_bundle = 1 ]; then
  bash packaging/build_bundle.sh
fi
bundle=$root/dist/forkwise
[ -x "$bundle/forkwise" ] || { log "no bundle at $bundle: run packaging/build_bundle.sh"; exit 1; }

start=$(date +%s.%N)
# The one version: [project] version in pyproject.toml, as a Debian version (1.2.0rc1 -> 1.2.0~rc1).
version=$(python3 packaging/project_version.py --debian)
arch=$(dpkg --print-architecture)
deb=$root/dist/forkwise_${version}_${arch}.deb

stage=$root/build/deb/forkwise
rm -rf "$stage"
mkdir -p "$stage/DEBIAN" "$stage/opt" "$stage/usr/bin" "$stage/usr/share/applications" \
  "$stage/usr/share/doc/forkwise"
cp -a "$bundle" "$stage/opt/forkwise"
ln -s /opt/forkwise/forkwise "$stage/usr/bin/forkwise"
install -m 644 resources/forkwise.desktop "$stage/usr/share/applications/forkwise.desktop"
for png in resources/icons/forkwise-*.png; do
  size=$(basename "$png" .png); size=${size#forkwise-}
  install -D -m 644 "$png" "$stage/usr/share/icons/hicolor/${size}x${size}/apps/forkwise.png"
done
install -D -m 644 resources/icons/forkwise.svg "$stage/usr/share/icons/hicolor/scalable/apps/forkwise.svg"
install -d "$stage/usr/share/man/man1"
gzip -9n < packaging/forkwise.1 > "$stage/usr/share/man/man1/forkwise.1.gz"
cat > "$stage/usr/share/doc/forkwise/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: forkwise
Comment: /opt/forkwise bundles CPython, Qt for Python (PySide6, LGPL-3.0) and the Python
 packages listed in /opt/forkwise/_internal/*.dist-info, each under its own license.

Files: *
Copyright: the Forkwise contributors
License: MIT
EOF
# A native package's changelog: one entry for the version built, dated by the last commit.
stamp=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
{
  echo "forkwise ($version) unstable; urgency=medium"
  echo
  echo "  * Release $version."
  echo
  echo " -- Forkwise maintainers <maintainers@forkwise.invalid>  $(date -R -u -d "@$stamp")"
} | gzip -9n > "$stage/usr/share/doc/forkwise/changelog.gz"
# Normalise permissions whatever the umask was.
find "$stage" -type d -exec chmod 755 {} +
find "$stage/opt" -type f -exec chmod go-w {} +
find "$stage/opt" -type f -name '*.so*' -exec chmod a-x {} +  # libraries are not programs

installed_kb=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
# Libraries the bundle does not carry (PyInstaller leaves GL/EGL/libxcb/wayland to the system)
# and those Qt's xcb platform plugin loads for a real X display.
depends="libc6 (>= 2.36), libgl1, libegl1, libxkbcommon0, libxkbcommon-x11-0, libfontconfig1, libfreetype6, libdbus-1-3, libglib2.0-0, libx11-6, libx11-xcb1, libxcb1, libxcb-cursor0, libxcb-icccm4, libxcb-image0, libxcb-keysyms1, libxcb-randr0, libxcb-render-util0, libxcb-shape0, libxcb-shm0, libxcb-sync1, libxcb-xfixes0, libxcb-xkb1, libwayland-client0, libwayland-cursor0, libwayland-egl1"
cat > "$stage/DEBIAN/control" <<EOF
Package: forkwise
Version: $version
Architecture: $arch
Maintainer: Forkwise maintainers <maintainers@forkwise.invalid>
Installed-Size: $installed_kb
Depends: $depends
Recommends: fonts-dejavu-core, hicolor-icon-theme
Section: devel
Priority: optional
Description: browse and fork AI-agent sessions
 Forkwise is a desktop browser for AI-agent sessions stored as append-only
 event logs. It shows every session in a tree grouped by lineage, forks a
 session (whole, or at a message) into an independent child, edits and resends
 a question in place, and keeps working in any branch.
 .
 This package ships a self-contained build (Python and Qt included) under
 /opt/forkwise and the forkwise command.
EOF

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
