"""``trtstudio scenario``: production scenarios (contention, load/unload cycles, soak, cold start).

    trtstudio scenario contention M1 M2 [...] [--backend B] [--streams dedicated|shared] [--iterations N] [--json]
    trtstudio scenario cycles M1 [M2 ...] --cycles M --inferences K [--json]
    trtstudio scenario soak M --minutes T [--json]
    trtstudio scenario coldstart M1 [...] [--json]

JSON: ``schema: trtstudio.scenario/1`` with ``kind``, ``models`` (contention: ``alone``, ``together``,
``slowdown`` per model), ``cycles`` and ``verdict`` (cycles), ``windows`` (soak). Exit 1 when a model
failed mid-scenario (``failure`` names model, phase and cycle; what was measured is still printed).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

HELP = "production scenarios: models contending for a GPU, load/unload cycles, soak runs, cold starts"
BACKEND_CHOICES = ("auto", "ort", "ort-cuda", "ort-trt", "tensorrt", "rtx", "torch", "torch-cuda")


def _common(p: argparse.ArgumentParser, many: bool = True) -> None:
    p.add_argument("models", nargs="+" if many else 1, metavar="MODEL", help="model files (.onnx, .pt2, TorchScript, engine)")
    p.add_argument("--backend", choices=BACKEND_CHOICES, default="auto",
                   help="runtime for every model (auto: ort for .onnx, torch for .pt2/.pt, tensorrt otherwise)")
    p.add_argument("--device", type=int, metavar="N", help="CUDA device for every model")
    p.add_argument("--devices", metavar="LIST", help="CUDA device per model, e.g. 0,1 (or 'cpu')")
    p.add_argument("--shapes", help="input shapes for every model, e.g. input:1x3x224x224")
    p.add_argument("--threads", type=int, help="onnxruntime / torch intra-op threads per model")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def configure(parser: argparse.ArgumentParser) -> None:
    """Subcommands contention, cycles, soak, coldstart."""
    sub = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    c = sub.add_parser("contention", help="models alone, then all at once: slowdown of median and p99")
    _common(c)
    c.add_argument("--streams", choices=("dedicated", "shared"), default="dedicated",
                   help="CUDA stream per model, or one shared per GPU (default dedicated)")
    c.add_argument("--iterations", type=int, default=500, help="measured inferences per model and phase (default 500)")
    c.add_argument("--warmup", type=int, default=20, help="inferences before each phase (default 20)")
    c.add_argument("--cpu-load-ms", type=float, default=0.0, metavar="MS",
                   help="CPU work per inference in each worker, standing in for pre/post-processing")
    c.add_argument("--copies", type=int, default=1, metavar="N", help="run each model N times at once (N contexts)")
    c.add_argument("--trace", metavar="F", help="write the timeline as Chrome-trace / Perfetto JSON")
    y = sub.add_parser("cycles", help="load, run K inferences, unload, M times: leak or fragmentation")
    _common(y)
    y.add_argument("--cycles", type=int, default=10, help="cycles (default 10)")
    y.add_argument("--inferences", type=int, default=50, help="inferences per model and cycle (default 50)")
    y.add_argument("--no-probe", action="store_true", help="skip the largest-block probe")
    y.add_argument("--probe-cap-gib", type=float, default=8.0, metavar="G",
                   help="largest block asked for by the probe (default 8 GiB; 0: up to all free memory)")
    y.add_argument("--release-cache", action="store_true", help="empty PyTorch's CUDA cache after each cycle")
    s = sub.add_parser("soak", help="one model for T minutes: windows, drift, memory slope")
    _common(s, many=False)
    s.add_argument("--minutes", type=float, required=True, help="length of the run")
    s.add_argument("--window", type=float, default=10.0, metavar="S", help="seconds per window (default 10)")
    s.add_argument("--rate", type=float, metavar="HZ", help="inferences per second (default: as fast as they go)")
    k = sub.add_parser("coldstart", help="load and first-inference time per model")
    _common(k)


def specs_from_args(args: argparse.Namespace) -> list[Any]:
    """ModelSpecs for the models on the command line (checked: files exist, devices parse)."""
    from pathlib import Path

    from trtstudio.backends.base import parse_shapes
    from trtstudio.errors import InputError
    from trtstudio.profiling.scenario import ModelSpec
    from trtstudio.profiling.scenario_devices import parse_devices

    paths = [str(m) for m in args.models] * max(1, getattr(args, "copies", 1) or 1)
    for p in paths:
        if not Path(p).is_file():
            raise InputError(p, "no such file")
    if args.device is not None and args.device < 0:
        raise InputError("--device", "must be 0 or more")
    if args.threads is not None and args.threads < 1:
        raise InputError("--threads", "must be positive")
    devices = parse_devices(args.devices, len(paths), args.device)
    shapes = parse_shapes(args.shapes)
    options = {"threads": args.threads} if args.threads else {}
    return [ModelSpec(p, args.backend, d, dict(shapes), dict(options)) for p, d in zip(paths, devices, strict=True)]


def _positive(args: argparse.Namespace, *names: str) -> None:
    from trtstudio.errors import InputError

    for name in names:
        value = getattr(args, name, None)
        if value is not None and value <= 0:
            raise InputError(f"--{name.replace('_', '-')}", "must be positive")


def scenario(args: argparse.Namespace) -> tuple[dict[str, Any], Any]:
    """Run the scenario ``args`` describe; the JSON document and the result."""
    from trtstudio.errors import InputError
    from trtstudio.profiling import scenario as sc

    specs = specs_from_args(args)
    if args.kind == "contention":
        _positive(args, "iterations", "copies")
        if args.warmup < 0 or args.cpu_load_ms < 0:
            raise InputError("--warmup/--cpu-load-ms", "must be 0 or more")
        cfg = sc.ContentionConfig(iterations=args.iterations, warmup=args.warmup, streams=args.streams,
                                  cpu_load_ms=args.cpu_load_ms, timeline=True)
        result = sc.run_contention(specs, cfg)
        if args.trace and result.timeline is not None:
            from trtstudio.profiling.export import write_trace
            from trtstudio.profiling.timeline import chrome_trace

            write_trace(args.trace, chrome_trace(result.timeline))
    elif args.kind == "cycles":
        _positive(args, "cycles", "inferences")
        cap = int(args.probe_cap_gib * 2**30) if args.probe_cap_gib > 0 else None
        result = sc.run_cycles(specs, sc.CyclesConfig(cycles=args.cycles, inferences=args.inferences, probe=not args.no_probe,
                                                      release_cache=args.release_cache, probe_cap_bytes=cap))
    elif args.kind == "soak":
        _positive(args, "minutes", "window", "rate")
        result = sc.run_soak(specs[0], sc.SoakConfig(minutes=args.minutes, window_s=args.window, rate_hz=args.rate))
    else:
        result = sc.run_coldstart(specs)
    return result.to_dict(), result


def _mib(n: Any) -> str:
    return "-" if n is None else f"{n / 2**20:,.0f} MiB"


def _ms(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}"


def render_text(doc: dict[str, Any]) -> str:
    """The scenario as a readable summary."""
    lines = [f"scenario {doc['kind']}"]
    kind = doc["kind"]
    if kind == "contention":
        lines.append(f"streams {doc.get('streams')}   iterations {doc.get('iterations')}   cpu load {doc.get('cpu_load_ms')} ms")
        lines.append(f"{'model':<28}{'device':<10}{'alone p50':>11}{'p99':>9}{'together p50':>14}{'p99':>9}"
                     f"{'slowdown p50':>14}{'p99':>7}")
        for m in doc["models"]:
            a, t, s = m.get("alone", {}), m.get("together", {}), m.get("slowdown", {})
            sd = (f"{s['median']:>13.2f}x{s['p99']:>6.2f}x" if s.get("median") and s.get("p99") else f"{'-':>14}{'-':>7}")
            lines.append(f"{m['model'][:27]:<28}{m['device']:<10}{_ms(a.get('median')):>11}{_ms(a.get('p99')):>9}"
                         f"{_ms(t.get('median')):>14}{_ms(t.get('p99')):>9}{sd}")
        tp = doc.get("throughput", {})
        lines.append(f"throughput: alone (sum) {tp.get('alone_sum_per_s', 0):.1f}/s, together {tp.get('together_per_s', 0):.1f}/s")
        for dev, v in doc.get("timeline", {}).get("devices", {}).items():
            lines.append(f"{dev}: {v['copy_overlapped_share']:.0%} of copy time overlapped compute")
    elif kind == "cycles":
        lines.append(f"{'cycle':>5}{'GPU used':>14}{'CUDA free':>14}{'largest block':>15}{'host RSS':>12}")
        for c in doc["cycles"]:
            lines.append(f"{c['cycle']:>5}{_mib(c.get('gpu_used_bytes')):>14}{_mib(c.get('cuda_free_bytes')):>14}"
                         f"{_mib(c.get('largest_block_bytes')):>15}{_mib(c.get('host_rss_bytes')):>12}")
        v = doc.get("verdict") or {}
        lines.append(f"verdict: {v.get('verdict')}: {v.get('reason')}")
    elif kind == "soak":
        lines.append(f"{'window':>6}{'t (s)':>9}{'count':>9}{'p50 ms':>10}{'p99 ms':>10}{'RSS':>12}")
        for w in doc["windows"]:
            lines.append(f"{w['window']:>6}{w['t_end_s']:>9.1f}{w['count']:>9}{_ms(w['median']):>10}{_ms(w['p99']):>10}"
                         f"{_mib(w.get('host_rss_bytes')):>12}")
        d = doc.get("drift") or {}
        if d:
            lines.append(f"drift: median x{d.get('median_ratio') or 0:.3f}, p99 x{d.get('p99_ratio') or 0:.3f} (last vs first window)")
        for key, m in (doc.get("memory") or {}).items():
            lines.append(f"memory {key}: {m['slope_mib_per_hour']:+.1f} MiB/hour ({m['leak']['verdict']})")
    else:
        lines.append(f"{'model':<28}{'open ms':>10}{'first ms':>10}{'second ms':>11}{'file':>12}")
        for m in doc["models"]:
            lines.append(f"{m['model'][:27]:<28}{m['open_ms']:>10.1f}{_ms(m.get('first_ms')):>10}{_ms(m.get('second_ms')):>11}"
                         f"{_mib(m['file_bytes']):>12}")
    for note in doc.get("notes", []):
        lines.append(f"note: {note}")
    if doc.get("stopped"):
        lines.append("stopped before the end; the figures above are what was measured")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Entry point; exit 1 when a model failed mid-scenario."""
    doc, result = scenario(args)
    if args.json:
        json.dump(doc, sys.stdout, indent=2, default=float)
        sys.stdout.write("\n")
    else:
        print(render_text(doc))
    if result.failure is not None:
        print(f"error: {result.failure.one_line()}", file=sys.stderr)
        return 1
    return 0
