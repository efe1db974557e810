"""Pinned vs pageable host<->device bandwidth (GB/s) for 64-256 MiB, and a GPU memory-monitor check.

Prints one JSON line per measurement. Needs pycuda and a GPU (and nvidia-ml-py for the NVML line).
    python benchmarks/transfer.py [--sizes-mib 64,128,256] [--repeats 10] [--memory-check]
"""

from __future__ import annotations

import argparse
import json

from trtstudio.backends import cuda


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes-mib", default="64,128,256")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--memory-check", action="store_true", help="allocate 1 GiB and report what each monitor saw")
    args = ap.parse_args()
    ctx = cuda.CudaContext(0)
    ctx.push()
    print(json.dumps({"bench": "device", "name": ctx.name()}))
    for mib in (int(s) for s in args.sizes_mib.split(",")):
        for pinned in (True, False):
            for r in cuda.transfer_benchmark(mib << 20, pinned=pinned, repeats=args.repeats):
                print(json.dumps({"bench": "transfer", "direction": r.direction, "pinned": r.pinned, "mib": mib,
                                  "gbps": round(r.gbps, 2), "median_ms": round(r.median_ms, 3)}))
    if args.memory_check:
        from trtstudio.profiling.memory import MemoryMonitor, default_probes

        mon = MemoryMonitor(default_probes(gpu=True))
        before = mon.record(0)
        buf = cuda.device_alloc(1 << 30)
        after = mon.record(1)
        buf.free()
        freed = mon.record(2)
        delta = {k: (after[k] - before.get(k, 0)) / 2**20 for k in after}
        print(json.dumps({"bench": "memory_check", "allocated_mib": 1024, "delta_mib": delta,
                          "after_free_delta_mib": {k: (freed[k] - before.get(k, 0)) / 2**20 for k in freed},
                          "monitors": sorted(after)}))
    ctx.pop()


if __name__ == "__main__":
    main()
