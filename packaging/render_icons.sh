#!/usr/bin/env bash
# Render every icon file from resources/icons/forkwise.svg (the one source of the icon):
# PNG sizes for hicolor (Linux), forkwise.ico (Windows) and forkwise.icns (macOS).
#   bash packaging/render_icons.sh
# Needs rsvg-convert, ImageMagick's convert and png2icns (Debian: librsvg2-bin imagemagick
# icnsutils). The outputs are committed, so building the bundle, the .deb or the Windows and
# macOS installers needs none of these tools; re-run this after editing the SVG.
set -euo pipefail
cd "$(dirname "$0")/../resources/icons"
for tool in rsvg-convert convert png2icns; do
  command -v "$tool" >/dev/null || { echo "$tool missing: apt-get install librsvg2-bin imagemagick icnsutils" >&2; exit 1; }
done
for size in 16 24 32 48 64 128 256 512; do
  rsvg-convert -w "$size" -h "$size" forkwise.svg -o "forkwise-$size.png"
done
convert forkwise-16.png forkwise-24.png forkwise-32.png forkwise-48.png forkwise-64.png \
  forkwise-128.png forkwise-256.png forkwise.ico
png2icns forkwise.icns forkwise-16.png forkwise-32.png forkwise-48.png forkwise-128.png \
  forkwise-256.png forkwise-512.png >/dev/null
ls -l forkwise-*.png forkwise.ico forkwise.icns
