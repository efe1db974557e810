"""The runtimes an upgrade check can use, as entries of the environment report (``trtstudio environment``,
``python -m trtstudio.environment``): this Python's TensorRT / TensorRT-RTX and the managed runtimes
(:mod:`trtstudio.runtimes.manage`), each warning where a combination cannot load an engine. Apart from
:mod:`trtstudio.environment`, which :mod:`trtstudio.engine.compat` imports."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trtstudio.environment import (
    RUNTIMES,
    SCHEMA,
    Item,
    _dist_version,
    _item,
    check_environment,
    format_table,
)


def _cuda_major(text: str | None) -> int | None:
    m = re.search(r"cu(\d+)", text or "") or re.match(r"(\d+)", text or "")
    return int(m.group(1)) if m else None


def runtime_items(root: str | None = None, engines: Sequence[str] = (), probe_gpu: bool = True) -> list[Item]:
    """One entry per runtime an upgrade check can use (this Python's TensorRT / TensorRT-RTX and the
    managed runtimes of :mod:`trtstudio.runtimes.manage`), warning where a combination cannot load an
    engine: a runtime built for a CUDA major the driver does not support, TensorRT-RTX beside SM90
    GPUs only, and for each of ``engines`` (plans or files trtstudio reads) what
    :func:`trtstudio.engine.compat.compare_engine` says with that runtime's version (its own version
    against the runtime's, version compatibility, hardware compatibility level, targets)."""
    from trtstudio.engine.compat import Machine, compare_engine, this_machine
    from trtstudio.runtimes.manage import list_runtimes

    here = this_machine(probe_gpu=probe_gpu)
    rows: list[tuple[str, str | None, str | None, str | None, str]] = []  # name, module, version, package, where
    for mod, ver in here.runtimes.items():
        dist, _ = _dist_version(next(r.dists for r in RUNTIMES.values() if r.module == mod))
        rows.append((f"runtime here: {mod}", mod, ver, dist, sys.prefix))
    rows += [(f"runtime {r.name}", r.module, r.version, r.package, r.prefix) for r in list_runtimes(root)]
    infos = [(e, _engine_info(e)) for e in engines]
    items = []
    for name, module, version, package, where in rows:
        warnings: list[str] = []
        need = _cuda_major(package)
        if need and here.cuda_driver and (_cuda_major(here.cuda_driver) or 0) < need:
            warnings.append(f"{package} needs a driver for CUDA {need}; this driver supports CUDA up to {here.cuda_driver}")
        if module == "tensorrt_rtx" and here.gpus and all(g.get("compute_capability") == "9.0" for g in here.gpus):
            warnings.append("TensorRT-RTX engines cannot run on SM90 (every GPU here): builds for other targets only")
        machine = Machine(runtimes={module: version} if module and version else {}, gpus=here.gpus,
                          driver=here.driver, cuda_driver=here.cuda_driver, probed=here.probed)
        for path, info in infos:
            plan = path if info is None else None
            warnings += [f"{Path(path).name}: {f['message']}" for f in compare_engine(info, plan, machine)
                         if f["severity"] in ("error", "warning")]
        item = _item(name, "warning" if warnings else "ok", version,
                     "; ".join([f"{package or module} in {where}", *warnings]),
                     "rebuild the engine with this runtime (trtstudio upgrade-check MODEL --runtime ...)" if warnings else None)
        item["runtime"] = {"module": module, "version": version, "package": package, "prefix": where}
        item["warnings"] = warnings
        items.append(item)
    return items


def _engine_info(path: str) -> Any:
    """None for a serialized plan (its header is read), else the engine its files describe."""
    from trtstudio.engine.compat import read_plan_header
    from trtstudio.engine.load import load_engine

    return None if read_plan_header(path) is not None else load_engine([path])


def configure(ap: argparse.ArgumentParser) -> None:
    """The flags of ``python -m trtstudio.environment`` and ``trtstudio environment``."""
    ap.add_argument("--json", action="store_true", help=f'one JSON document, "schema": "{SCHEMA}"')
    ap.add_argument("--no-gpu", action="store_true", help="do not load NVML, libcuda or onnxruntime")
    ap.add_argument("--engine", action="append", default=[], metavar="FILE",
                    help="warn where a runtime cannot load this engine (a plan, or files trtstudio reads)")
    ap.add_argument("--runtimes-root", help="where managed runtimes live (as trtstudio runtimes --root)")


def run(args: argparse.Namespace) -> int:
    """Print the report; exit 1 if a required package is missing."""
    items = check_environment(probe_gpu=not args.no_gpu)
    items += runtime_items(args.runtimes_root, args.engine, probe_gpu=not args.no_gpu)
    if args.json:
        from trtstudio.jsonio import write_json

        write_json({"schema": SCHEMA, "items": items})
    else:
        print(format_table(items))
    return 1 if any(it["required"] and it["status"] == "missing" for it in items) else 0


