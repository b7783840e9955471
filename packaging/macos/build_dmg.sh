#!/usr/bin/env bash
# macOS: Forkwise.app (PyInstaller BUNDLE from packaging/forkwise.spec) in a compressed .dmg.
# NOT RUN on the Linux development machine (hdiutil and the macOS PySide6 wheels exist only
# on macOS): see packaging/README.md, "macOS", for what still has to be verified there.
#   bash packaging/macos/build_dmg.sh        -> dist/Forkwise-<version>.dmg
# Optional: CODESIGN_IDENTITY="Developer ID Application: …" signs the app (hardened runtime);
# notarisation (xcrun notarytool) is a separate, credentialed step.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(uname -s)" = Darwin ] || { echo "build_dmg.sh runs on macOS only" >&2; exit 1; }
py=${PYTHON:-python3}
venv=build/pyinstaller-venv
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q "pyinstaller==6.22.3" "setuptools>=77" wheel
"$venv/bin/python" -m pip install -q --no-build-isolation ".[gui]"
"$venv/bin/python" -m pip install -q --no-build-isolation --force-reinstall --no-deps .
"$venv/bin/pyinstaller" --noconfirm --clean --distpath dist --workpath build/pyinstaller \
  packaging/forkwise.spec
app=dist/Forkwise.app
"$app/Contents/MacOS/forkwise" --version
QT_QPA_PLATFORM=offscreen "$app/Contents/MacOS/forkwise" --self-test
if [ -n "${CODESIGN_IDENTITY:-}" ]; then
  codesign --force --deep --options runtime --timestamp --sign "$CODESIGN_IDENTITY" "$app"
  codesign --verify --deep --strict "$app"
fi
version=$(python3 packaging/project_version.py)
stage=build/dmg
rm -rf "$stage" && mkdir -p "$stage"
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
dmg=dist/Forkwise-$version.dmg
rm -f "$dmg"
hdiutil create -volname "Forkwise $version" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$dmg"
hdiutil verify "$dmg"
echo "$dmg"
