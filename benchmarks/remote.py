"""Remote profiling over SSH against a local run of the same model: stream overhead and first-sample delay.

    python benchmarks/remote.py [--model M.onnx] [--iterations 3000] [--pairs 3]

Starts a real sshd on 127.0.0.1 (tests/sshd.py), then runs `trtstudio profile` locally and with
`--remote` interleaved (A B B A ...), ONNX Runtime on the CPU. Budgets (issue 31): remote median
within 2 % of local (median of the per-pair ratios); the first sample reaches the desktop within
1 s of the target sending it. Prints one JSON line per run and a summary line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def _run(model: str, iterations: int, env: dict[str, str], remote: str | None) -> dict[str, object]:
    argv = [sys.executable, "-m", "trtstudio", "profile", model, "--backend", "ort", "--iterations", str(iterations),
            "--warmup", "200", "--threads", "1", "--json"] + (["--remote", remote] if remote else [])
    res = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    return json.loads(res.stdout)


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import onnx
    import onnx_models
    import sshd

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model")
    ap.add_argument("--iterations", type=int, default=3000)
    ap.add_argument("--pairs", type=int, default=3)
    args = ap.parse_args(argv)
    why = sshd.missing()
    if why:
        print(json.dumps({"benchmark": "remote", "skipped": why}))
        return 0
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        model = args.model
        if model is None:
            model = str(tmp / "conv_net.onnx")
            onnx.save(onnx_models.conv_net(batch=1, channels=32), model)
        srv = sshd.start(tmp / "sshd")
        env = {**os.environ, "TRTSTUDIO_SSH_CONFIG": str(srv.config)}
        ratios, delays = [], []
        try:
            for k in range(args.pairs):
                order = (None, srv.url) if k % 2 == 0 else (srv.url, None)
                med = {}
                for remote in order:
                    doc = _run(model, args.iterations, env, remote)
                    med["remote" if remote else "local"] = doc["latency_ms"]["median"]
                    if remote:
                        delays.append(doc["remote"]["first_sample_delay_s"])
                    print(json.dumps({"pair": k, "where": "remote" if remote else "local",
                                      "median_ms": doc["latency_ms"]["median"], "p99_ms": doc["latency_ms"]["p99"]}),
                          flush=True)
                ratios.append(med["remote"] / med["local"])
        finally:
            srv.kill()
        ratio = float(np.median(ratios))
        print(json.dumps({"benchmark": "remote", "model": os.path.basename(model), "pairs": args.pairs,
                          "median_ratio_remote_over_local": round(ratio, 4), "ratios": [round(r, 4) for r in ratios],
                          "first_sample_delay_s": delays, "budget_ratio": 1.02, "budget_first_sample_s": 1.0,
                          "ok": ratio <= 1.02 and max(delays) <= 1.0}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
