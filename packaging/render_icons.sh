#!/usr/bin/env bash
# Render the PNG icon sizes from resources/icons/forkwise.svg (the one source of the icon).
#   bash packaging/render_icons.sh
# Needs rsvg-convert (Debian: librsvg2-bin). The PNGs are committed, so building the bundle
# or the .deb does not need this tool; re-run it after editing the SVG.
set -euo pipefail
cd "$(dirname "$0")/../resources/icons"
command -v rsvg-convert >/dev/null || { echo "rsvg-convert missing: apt-get install librsvg2-bin" >&2; exit 1; }
for size in 16 24 32 48 64 128 256 512; do
  rsvg-convert -w "$size" -h "$size" forkwise.svg -o "forkwise-$size.png"
done
ls -l forkwise-*.png
