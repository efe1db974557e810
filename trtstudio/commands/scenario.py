"""``trtstudio scenario``: production scenarios (contention, load/unload cycles, soak, cold start).

    trtstudio scenario contention M1 M2 [...] [--backend B] [--isolation process|thread]
        [--streams dedicated|shared] [--iterations N] [--json]
    trtstudio scenario cycles M1 [M2 ...] --cycles M --inferences K [--json]
    trtstudio scenario soak M --minutes T [--json]
    trtstudio scenario coldstart M1 [...] [--json]

The flags build a :class:`~trtstudio.profiling.scenario.ScenarioRequest` (the scenario dialog builds
the same from its form) and :func:`~trtstudio.profiling.scenario.run_scenario` runs it. JSON:
``schema: trtstudio.scenario/1`` with ``kind``, ``models`` (contention: ``isolation``, and per model
``alone``, ``together``, ``slowdown`` with its ``causes``), ``cycles`` and ``verdict`` (cycles),
``windows`` (soak). Exit 1 when a model failed mid-scenario (``failure`` names model, phase and cycle;
what was measured is still printed).
"""

from __future__ import annotations

import argparse
from typing import Any

HELP = "production scenarios: models contending for a GPU, load/unload cycles, soak runs, cold starts"

# request field -> the flag that sets it (errors from the core name fields; the CLI shows flags)
FIELD_FLAGS = {"models": "MODEL", "kind": "KIND", "backend": "--backend", "device": "--device", "devices": "--devices",
               "shapes": "--shapes", "threads": "--threads", "copies": "--copies", "iterations": "--iterations",
               "warmup": "--warmup", "streams": "--streams", "isolation": "--isolation", "cpu_load_ms": "--cpu-load-ms",
               "cycles": "--cycles", "inferences": "--inferences", "probe_cap_bytes": "--probe-cap-gib",
               "minutes": "--minutes", "window_s": "--window", "rate_hz": "--rate"}


def _common(p: argparse.ArgumentParser, many: bool = True) -> None:
    from trtstudio.backends.catalogue import choices

    p.add_argument("models", nargs="+" if many else 1, metavar="MODEL", help="model files (.onnx, .pt2, TorchScript, engine)")
    p.add_argument("--backend", choices=choices(), default="auto",
                   help="runtime for every model (auto: as `trtstudio profile` picks: ort for .onnx, torch for "
                        ".pt2/TorchScript, tensorrt otherwise)")
    p.add_argument("--device", type=int, metavar="N", help="CUDA device for every model")
    p.add_argument("--devices", metavar="LIST", help="CUDA device per model, e.g. 0,1 (or 'cpu')")
    p.add_argument("--shapes", help="input shapes for every model, e.g. input:1x3x224x224")
    p.add_argument("--threads", type=int, help="onnxruntime / torch intra-op threads per model")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def configure(parser: argparse.ArgumentParser) -> None:
    """Subcommands contention, cycles, soak, coldstart."""
    sub = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    c = sub.add_parser("contention", help="models alone, then all at once: slowdown of median and p99, and why")
    _common(c)
    c.add_argument("--isolation", choices=("process", "thread"),
                   help="each model in its own process (default; as a server runs model instances) or as a thread "
                        "of one process (default with --streams shared)")
    c.add_argument("--streams", choices=("dedicated", "shared"), default="dedicated",
                   help="CUDA stream per model, or one shared per GPU (threads only; default dedicated)")
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


def request_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~trtstudio.profiling.scenario.ScenarioRequest` these flags describe (the scenario
    dialog builds the same request from its form)."""
    from trtstudio.backends.base import parse_shapes
    from trtstudio.profiling.scenario import ScenarioRequest
    from trtstudio.profiling.scenario_devices import parse_devices

    copies = getattr(args, "copies", 1) or 1
    devices = parse_devices(args.devices, len(args.models) * max(1, copies), args.device) if args.devices else None
    streams = getattr(args, "streams", "dedicated")
    isolation = getattr(args, "isolation", None) or ("thread" if streams == "shared" else "process")
    cap = getattr(args, "probe_cap_gib", 8.0)
    return ScenarioRequest(
        kind=args.kind, models=[str(m) for m in args.models], backend=args.backend, device=args.device, devices=devices,
        shapes=parse_shapes(args.shapes), threads=args.threads, copies=copies,
        iterations=getattr(args, "iterations", 500), warmup=getattr(args, "warmup", 20), streams=streams,
        isolation=isolation, cpu_load_ms=getattr(args, "cpu_load_ms", 0.0),
        cycles=getattr(args, "cycles", 10), inferences=getattr(args, "inferences", 50),
        probe=not getattr(args, "no_probe", False), release_cache=getattr(args, "release_cache", False),
        probe_cap_bytes=int(cap * 2**30) if cap > 0 else None,
        minutes=getattr(args, "minutes", 10.0), window_s=getattr(args, "window", 10.0), rate_hz=getattr(args, "rate", None),
    )


def scenario(args: argparse.Namespace) -> tuple[dict[str, Any], Any]:
    """Run the scenario ``args`` describe; the JSON document and the result."""
    from trtstudio.errors import FieldError
    from trtstudio.profiling.scenario import run_scenario

    try:
        result = run_scenario(request_from_args(args))
    except FieldError as exc:
        raise exc.named(FIELD_FLAGS.get(exc.field, exc.field)) from None
    if getattr(args, "trace", None) and result.timeline is not None:
        from trtstudio.profiling.export import write_trace
        from trtstudio.profiling.timeline import chrome_trace

        write_trace(args.trace, chrome_trace(result.timeline))
    doc = result.to_json()
    if result.failure is not None:
        doc["error"] = result.failure.one_line()
    return doc, result


def _write_json(doc: dict[str, Any]) -> None:
    from trtstudio.jsonio import dumps, write_stdout

    write_stdout(dumps({k: v for k, v in doc.items() if k != "error"}, indent=2))


def _render_text(doc: dict[str, Any]) -> str:
    from trtstudio.profiling.scenario_text import render_text

    return render_text(doc)


def run(args: argparse.Namespace) -> int:
    """Entry point; exit 1 when a model failed mid-scenario."""
    from trtstudio.commands._emit import emit

    doc, _result = scenario(args)
    return emit(doc, args.json, _render_text, _write_json)
