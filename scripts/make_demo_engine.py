"""Build the sample model with TensorRT-RTX (SM86) and save the verbose build log for ``trtstudio demo``.

Writes ``trtstudio/resources/sample/mobilenetv2_035.rtx-sm86.build.log`` (the whole verbose log,
headed by a ``# trtstudio.buildlog/1`` JSON line; trimmed to the parts the rtx_log reader uses if it
grows past ~1 MB) and, when the inspector could read the engine (a GPU it was built for),
``mobilenetv2_035.rtx-sm86.layers.json``. The engine itself goes to a temporary folder unless
``--engine`` names a file. Runs on a machine without a GPU.

Usage: python scripts/make_demo_engine.py [--target sm86] [--engine OUT.engine]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "trtstudio" / "resources" / "sample"
MODEL = SAMPLE_DIR / "mobilenetv2_035.onnx"
MAX_LOG_BYTES = 1_000_000
# Log records the reader needs when the log has to be trimmed (besides the layer listing itself).
KEEP = (
    "Input filename",
    "Opset version",
    "Producer name",
    "Total ",
    "Max Scratch",
    "Engine generation",
    "Number of target",
)


def trim(text: str, limit: int = MAX_LOG_BYTES) -> str:
    """The log unchanged if under ``limit``, else its header, warnings/errors, facts and listings."""
    if len(text.encode()) <= limit:
        return text
    out: list[str] = []
    keep_block = False
    for i, line in enumerate(text.split("\n")):
        starts_record = line.startswith("[")
        if starts_record:
            keep_block = (
                line.endswith("Layers:")
                or line.endswith("I/O Tensors:")
                or "Engine Layer Information:" in line
            )
        if (
            i == 0
            or keep_block
            or (starts_record and ("] [W] " in line or "] [E] " in line or any(k in line for k in KEEP)))
        ):
            out.append(line)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="sm86")
    ap.add_argument("--engine", type=Path, default=None, help="also keep the engine here")
    args = ap.parse_args(argv)

    from trtstudio.backends.build import BuildOptions, build_engine
    from trtstudio.engine.readers.rtx_log import read

    os.chdir(ROOT)  # so the log names the model by its path in the repository
    with tempfile.TemporaryDirectory() as tmp:
        engine = args.engine or Path(tmp) / "demo.engine"
        res = build_engine(
            MODEL.relative_to(ROOT), engine, BuildOptions(backend="rtx", targets=[args.target])
        )
        if not res.ok:
            print(f"build failed: {res.error}", file=sys.stderr)
            return 1
        stem = f"mobilenetv2_035.rtx-{args.target.lower()}"
        log_path = SAMPLE_DIR / f"{stem}.build.log"
        log_path.write_text(trim(res.log_text()), encoding="utf-8")
        info = read(log_path, log_path.read_text(encoding="utf-8"))
        print(
            f"built in {res.seconds:.2f} s, engine {res.engine_bytes} bytes; "
            f"{log_path.relative_to(ROOT)}: {log_path.stat().st_size} bytes, {len(info.layers)} layers"
        )
        if res.layer_info_json:
            js = SAMPLE_DIR / f"{stem}.layers.json"
            js.write_text(res.layer_info_json, encoding="utf-8")
            print(f"{js.relative_to(ROOT)}: inspector JSON")
        else:
            print(
                "no inspector JSON (the engine cannot be deserialized on this machine); layers come from the log"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
