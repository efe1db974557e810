"""GPU memory of 1, 2 and 4 processes of a model, predicted against measured (issue 49 budget: within
5 % for three third-party models), as ``trtstudio memory MODEL --measure 1,2,4 --json`` reports it,
one whole process per model. JSON lines, then a summary.

    python benchmarks/memory_measure.py MODEL.onnx [MODEL.onnx ...]

Needs a CUDA GPU, torch, onnx2torch (and onnxslim) and nvidia-ml-py.
"""

from __future__ import annotations

import json
import subprocess
import sys


def main(models: list[str]) -> None:
    worst = []
    for m in models:
        p = subprocess.run([sys.executable, "-m", "trtstudio", "memory", m, "--measure", "1,2,4", "--json"],
                           capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            print(json.dumps({"model": m, "error": (p.stderr.strip().splitlines() or ["?"])[-1]}), flush=True)
            continue
        doc = json.loads(p.stdout)
        rows = [{k: r[k] for k in ("instances", "predicted_bytes", "measured_bytes", "processes_bytes", "error")}
                for r in doc["rows"]]
        worst.append(max(abs(r["error"]) for r in rows))
        print(json.dumps({"model": m, "context_mib": doc["context"]["bytes"] / 2**20,
                          "model_mib": doc["model_bytes"] / 2**20, "rows": rows}), flush=True)
    print(json.dumps({"summary": True, "models": len(worst), "worst_abs_error": max(worst) if worst else None,
                      "within_5_percent": sum(w <= 0.05 for w in worst)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
