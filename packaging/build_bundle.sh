#!/usr/bin/env bash
# Build the one-folder PyInstaller bundle dist/trtstudio/ from the current Python environment (which
# must have trtstudio and its [ort] extra installed), then smoke-test it: --version, and an offscreen
# screenshot of the demo that must be a real PNG (> 20 KB). Also runs the bundle with an empty
# environment (env -i) to show it needs neither the venv nor PYTHONHOME/PYTHONPATH.
set -euo pipefail
cd "$(dirname "$0")/.."
# Not $PYTHON: .ci/run uses that for the interpreter it makes its venv from.
PY=${BUNDLE_PYTHON:-$(command -v python || command -v python3)}
SHOT=${BUNDLE_SHOT:-/tmp/bundle.png}

"$PY" -m pip install -q "pyinstaller>=6.0"
start=$(date +%s)
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/trtstudio.spec
echo "bundle built in $(( $(date +%s) - start )) s: $(du -sh dist/trtstudio | cut -f1) in dist/trtstudio/"

dist/trtstudio/trtstudio --version
rm -f "$SHOT"
QT_QPA_PLATFORM=offscreen dist/trtstudio/trtstudio demo --no-profile --screenshot "$SHOT"
size=$(stat -c %s "$SHOT" 2>/dev/null || echo 0)
if [ "$size" -le 20480 ]; then
    echo "FAIL: $SHOT is missing or too small ($size bytes)"; exit 1
fi
echo "demo screenshot: $SHOT ($size bytes)"

# No Python from outside: an empty environment (no PYTHONHOME/PYTHONPATH/VIRTUAL_ENV), only
# /usr/bin:/bin on PATH, run from another folder so nothing is imported from this checkout.
BUNDLE=$(pwd)/dist/trtstudio/trtstudio
SAMPLE=$(pwd)/trtstudio/resources/sample/mobilenetv2_035.onnx
rm -f "$SHOT"
(cd / && env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 "$BUNDLE" --version)
(cd / && env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 "$BUNDLE" inspect "$SAMPLE" --json >/dev/null)
# ONNX Runtime is in the bundle: a short CPU profile of the sample must run.
(cd / && env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 "$BUNDLE" profile "$SAMPLE" --backend ort \
    --iterations 20 --json | grep -q '"schema": "trtstudio.profile/1"') || { echo "FAIL: ort profile"; exit 1; }
(cd / && env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen "$BUNDLE" demo --no-profile \
    --screenshot "$SHOT")
size=$(stat -c %s "$SHOT" 2>/dev/null || echo 0)
if [ "$size" -le 20480 ]; then
    echo "FAIL: with env -i, $SHOT is missing or too small ($size bytes)"; exit 1
fi
echo "bundle OK (also with an empty environment: screenshot $size bytes)"
