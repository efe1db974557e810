"""The child an upgrade check starts in a runtime's Python to run that runtime's engine:
``python -m trtstudio.runtimes.engine_run ENGINE MODULE INPUTS.npz OUTPUTS.npz RUNS``.

Loads the engine with :class:`trtstudio.backends.tensorrt.TrtBackend` (``MODULE``: ``tensorrt`` or
``tensorrt_rtx``), runs it 10 times to warm up and ``RUNS`` times timed, writes the last outputs and
prints ``{"median_ms", "samples_ms"}`` (end-to-end time per inference, copies included)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import numpy as np


def main(argv: Sequence[str] | None = None) -> int:
    engine, module, src, dst, runs = list(sys.argv[1:] if argv is None else argv)
    from trtstudio.backends.tensorrt import TrtBackend

    backend = TrtBackend(name="rtx" if module == "tensorrt_rtx" else "tensorrt", module=module)
    backend.load(engine, {})
    try:
        with np.load(src) as data:
            feeds = {k: data[k] for k in data.files}
        backend.prepare_inputs({k: tuple(v.shape) for k, v in feeds.items()}, feeds)
        for _ in range(10):
            backend.infer_once()
        samples = [backend.infer_once().total_ms for _ in range(int(runs))]
        np.savez(dst, **{  # type: ignore[arg-type]
            n: np.array(backend.output(n)) for n in backend._outputs})
    finally:
        backend.close()
    print(json.dumps({"median_ms": float(np.median(samples)), "samples_ms": samples}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
