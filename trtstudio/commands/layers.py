"""``trtstudio layers``: read an engine's layer information (and profile, timings, logs), map the
layers to the ONNX model's nodes, run the diagnostics and print a table or JSON."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from trtstudio.commands._args import add_json

INPUTS = ("onnx",)  # the engine's names: engine.naming.resolve checks them (folders and prefixes too)
HELP = "list an engine's layers (precision, tactic, time) with findings, from inspector JSON, profiles or logs"
_TACTIC_WIDTH = 40
_NAME_WIDTH = 60


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the layers options."""
    parser.add_argument(
        "files", nargs="+", metavar="ENGINE",
        help="ONE engine: a folder of its files, FILE,FILE,... or several files (layer info JSON, "
             "--exportProfile/--exportTimes JSON, trtexec/build logs, TREx metadata, engine plan), a TREx prefix "
             "(DIR/NAME.onnx.engine), a trtstudio build --json document or a .trtstudio session",
    )
    parser.add_argument("--onnx", metavar="MODEL", help="ONNX model the engine was built from (maps layers to nodes)")
    parser.add_argument("--profile", type=int, default=0, help="optimization profile whose layers to show (default 0)")
    parser.add_argument("--all-profiles", action="store_true",
                        help="every optimization profile: each one's layer count, time and findings, and their "
                             "layers side by side (JSON: profiles, side_by_side)")
    parser.add_argument("--precision", help="precision the model is meant to run in (fp16, bf16, int8, ...)")
    add_json(parser, "trtstudio.layers/1")
    parser.add_argument("--indent", type=int, metavar="N", help="indent --json output by N spaces (default compact)")
    parser.add_argument("--findings-only", action="store_true", help="print only the findings")


def shorten(text: str | None, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis in the middle."""
    if not text:
        return ""
    if len(text) <= width:
        return text
    head = (width - 3) * 2 // 3
    return text[:head] + "..." + text[len(text) - (width - 3 - head):]


def _fmt_ms(v: float | None) -> str:
    return "" if v is None else f"{v:.4f}"


def _table(engine: Any, by_layer: dict[int, list[str]]) -> list[str]:
    total = engine.total_time_ms
    rows = [("#", "name", "type", "precision", "tactic", "ms/inf", "%", "findings")]
    for lay in engine.layers:
        t = lay.time
        ms = t.per_inference_ms if t else None
        pct = t.percent if t and t.percent is not None else (100.0 * ms / total if ms is not None and total else None)
        prec = lay.precision or ""
        if lay.precision_in and lay.precision_out and lay.precision_in != lay.precision_out:
            prec = f"{lay.precision_in}>{lay.precision_out}"
        rows.append((
            str(lay.index), shorten(lay.name, _NAME_WIDTH), lay.type, prec, shorten(lay.tactic, _TACTIC_WIDTH),
            _fmt_ms(ms), "" if pct is None else f"{pct:.1f}", ",".join(by_layer.get(lay.index, [])),
        ))
    return _columns(rows, right={0, 5, 6})


def _summary(engine: Any, mapping: Any) -> list[str]:
    from trtstudio.engine.summary import summary_lines

    lines = [f"{len(engine.layers)} layers from {', '.join(engine.sources)} ({', '.join(engine.formats)})"]
    lines += summary_lines(engine)  # TREx's summary: I/O, layers, average time, weights, activations
    total = engine.total_time_ms
    if total is not None:
        lines.append(f"layer time per inference: {total:.4f} ms (sum of each layer's median, else average)")
    for k in ("mean", "median", "compute_mean"):
        if k in engine.latency_ms:
            lines.append(f"latency {k}: {engine.latency_ms[k]:.4f} ms")
            break
    if engine.versions:
        lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in engine.versions.items()))
    if mapping is not None:
        from trtstudio.engine.summary import mapping_text

        lines.append(mapping_text(engine, mapping))
    return lines


def _inputs_state(args: argparse.Namespace) -> list[tuple[int, int, int] | None]:
    """``fileio.file_stamp`` of each input file: equal before and after two reads, the two
    processes read the same files."""
    from trtstudio.fileio import file_stamp

    return [file_stamp(path) for path in [*args.files, *([args.onnx] if args.onnx else [])]]


def _all_json(paths: list[str]) -> bool:
    """Whether every file looks like a JSON document (its first non-blank byte opens one): those
    are read twice at no cost but time; an engine plan would be deserialized twice, on the GPU."""
    for path in paths:
        try:
            with open(path, "rb") as fh:
                head = fh.read(256).lstrip()
        except OSError:
            return False
        if not head.startswith((b"{", b"[")):
            return False
    return True


def _read(args: argparse.Namespace) -> tuple[Any, Any]:
    """The engine of ``args.files`` (with layers) and the graph of ``args.onnx`` (or None)."""
    from trtstudio.engine.load import load_engine, require_layers
    from trtstudio.errors import InputError

    if args.session_file:  # its engine as the session holds it (layers mapped to its model already)
        from trtstudio.report.session import load_session

        s = load_session(args.session_file)
        if not s.engines:
            raise InputError(args.session_file, "this session holds no engine")
        engine = s.engines[0].info
    else:
        engine = load_engine(args.files, profile=args.profile)
    if not engine.layers and engine.kernels:
        raise KernelsOnly(engine)
    require_layers(engine)
    graph = None
    if args.onnx:
        from trtstudio.graph.model import load_model

        # the mapping and the rules read node names, op types and which node writes a tensor:
        # not the shapes that inference would add (0.7 s at 100,000 nodes)
        graph = load_model(args.onnx, infer_shapes=False).graph
    return engine, graph


def _mapped_head(engine: Any, graph: Any) -> list[tuple[str, Any]]:
    """In the forked child: the document's first keys, up to the layers, mapped to ``graph`` as
    ``analyze`` maps them in the parent (the rules do not change the layers), with the layer sums
    the diagnosis adds to the engine's memory."""
    if graph is not None:
        from trtstudio.engine.mapping import map_layers

        map_layers(engine, graph)
    from trtstudio.engine.summary import add_layer_memory

    add_layer_memory(engine)  # as the diagnosis adds it in the parent
    return engine.json_pieces()[:5]


def _head(args: argparse.Namespace, state: list[tuple[int, int, int] | None]) -> list[tuple[str, Any]]:
    """In the child forked before the read: :func:`_mapped_head` of its own read."""
    engine, graph = _read(args)
    if _inputs_state(args) != state:
        raise RuntimeError("an input file changed while it was read")  # the parent writes it all then
    return _mapped_head(engine, graph)


class KernelsOnly(Exception):
    """The files hold kernels (an Nsight Systems export without TensorRT layer ranges), no layers."""

    def __init__(self, engine: Any) -> None:
        super().__init__("kernels only")
        self.engine = engine


def _kernels_only(engine: Any, as_json: bool) -> int:
    """An export of kernels alone (PyTorch's aten:: ranges): its kernel table, per range."""
    from trtstudio.commands._emit import emit

    doc = {"schema": "trtstudio.layers/1", "source": engine.sources, "formats": engine.formats, "layers": [],
           "kernels": engine.kernels, "warnings": engine.warnings}
    return emit(doc, as_json, lambda d: render_kernels(d["kernels"]))


def render_kernels(k: dict[str, Any], limit: int = 20) -> str:
    """Ranges by kernel time with their heaviest kernels."""
    share = 100.0 * k["attributed_ms"] / k["total_ms"] if k["total_ms"] else 0.0
    lines = [f"{k['kernels']:,} kernels, {k['total_ms']:.4g} ms on GPU(s) {', '.join(map(str, k['devices']))}; "
             f"{k['attributed_kernels']:,} ({share:.0f} % of the time) inside NVTX ranges", ""]
    for r in k["ranges"][:limit]:
        lines.append(f"{r['ms']:>10.4f} ms  {r['count']:>6}x  {r['domain']:<10} {shorten(r['name'], _NAME_WIDTH)}")
        for kern in r["kernels"][:3]:
            lines.append(f"{'':>14}{kern['ms']:>10.4f} ms  {kern['count']:>6}x  {shorten(kern['name'], _NAME_WIDTH)}")
    if len(k["ranges"]) > limit:
        lines.append(f"... {len(k['ranges']) - limit} more ranges (--json lists all)")
    lines += [f"note: {n}" for n in k["notes"]]
    return "\n".join(lines)


def name_engine(args: argparse.Namespace) -> None:
    """``args.files`` as the engine's files (``engine.naming.resolve``), ``args.onnx`` the model
    among or beside them unless given, ``args.session_file`` a session named alone."""
    from trtstudio.engine.naming import resolve

    named = resolve(args.files)
    args.session_file = named.session
    args.files = [named.session] if named.session else named.files
    args.onnx = args.onnx or named.model


def run(args: argparse.Namespace) -> int:
    """Read, map, diagnose, print. Exit 0; bad input raises InputError (exit 2)."""
    name_engine(args)
    try:
        return _run_all_profiles(args) if args.all_profiles else _run(args)
    except KernelsOnly as only:
        return _kernels_only(only.engine, args.json)


def _run(args: argparse.Namespace) -> int:
    from trtstudio.bigdocs.forked import ForkedHead
    from trtstudio.commands._emit import keep, skip_teardown
    from trtstudio.engine.analysis import analyze

    skip_teardown()  # all it holds is garbage once printed: exit without freeing 50,000 layers one by one
    fork = args.json and args.indent is None and not args.findings_only and ForkedHead.available()
    # JSON documents are read by a child forked before the read too: it maps the layers and
    # encodes (and writes) the document's head while this process reads and runs the rules. Forked
    # after the read, each process copied the pages of the other's objects as it touched them
    # (0.15 s at 50,000 layers, 1.5 s at 300,000). Other files (an engine plan deserialized on the
    # GPU) are read once, and the child forked after. The output is the one written in one go.
    before = fork and _all_json(args.files)
    forked = None
    state: list[tuple[int, int, int] | None] = []
    if before:
        state = _inputs_state(args)
        forked = ForkedHead(lambda: _head(args, state))
    try:
        engine, graph = _read(args)
        if forked is not None and _inputs_state(args) != state:
            forked.cancel()  # a file changed while it was read: this read alone is written
            forked = None
        elif fork and not before and ForkedHead.available():  # (a runtime may have started threads)
            forked = ForkedHead(lambda: _mapped_head(engine, graph))
        # the one analysis (mapping, rules, engine vs this machine) the window and reports make too
        analysis = analyze(engine, graph, model_precision=args.precision, machine=list(args.files), hand_over=True)
        engine, mapping = analysis.engine, analysis.mapping
        keep(analysis, graph)  # freed by the process's end, not when this returns
        n = None
        if forked is not None:
            rest = engine.json_pieces()[5:]  # findings, warnings
            if mapping is not None:
                rest.append(("mapping", {**mapping.to_json(), "model": args.onnx}))
            n = forked.finish(rest)
    except BaseException:
        if forked is not None:
            forked.cancel()  # whatever failed here, the child writes nothing more
        raise
    from trtstudio.commands._emit import emit

    if not args.json:
        return emit({}, False, lambda _doc: render_text(engine, mapping, args.findings_only))
    from trtstudio.jsonio import warn_non_finite

    if n is not None:  # the forked writer wrote it all
        warn_non_finite(n)
        return 0
    from trtstudio.bigdocs.gcpause import gc_paused
    from trtstudio.engine.model import count_non_finite_doc

    with gc_paused():
        doc = analysis.to_json()
    keep(doc)
    if mapping is not None:
        doc["mapping"]["model"] = args.onnx
    if args.findings_only:
        doc = {"schema": doc["schema"], "source": doc["source"], "findings": doc["findings"],
               "warnings": doc["warnings"]}
    return emit(doc, True, indent=args.indent, non_finite=count_non_finite_doc(doc))


def _run_all_profiles(args: argparse.Namespace) -> int:
    """``--all-profiles``: each optimization profile read, mapped and diagnosed as ``layers`` does
    one, then printed side by side (JSON ``profiles``: each profile's ``layers/1`` document with its
    ``summary``; ``side_by_side``: the aligned rows)."""
    from trtstudio.commands._emit import emit
    from trtstudio.engine.load import require_layers
    from trtstudio.engine.multiprofile import analyse_profiles, profile_summary, side_by_side
    from trtstudio.errors import InputError

    if args.session_file:
        raise InputError(args.session_file, "--all-profiles reads an engine's files; a session holds one profile")
    if args.profile:
        raise InputError(None, "give --profile N or --all-profiles, not both")
    graph = None
    if args.onnx:
        from trtstudio.graph.model import load_model

        graph = load_model(args.onnx, infer_shapes=False).graph
    analyses = analyse_profiles(list(args.files), graph, args.precision)
    engines = [a.engine for a in analyses]
    if not engines[0].layers and engines[0].kernels:
        raise KernelsOnly(engines[0])
    require_layers(engines[0])
    docs = []
    for k, a in enumerate(analyses):
        doc = a.to_json()
        if a.mapping is not None:
            doc["mapping"]["model"] = args.onnx
        for key in ("schema", "source", "formats"):
            doc.pop(key, None)
        docs.append({**profile_summary(a.engine, k), "document": doc})
    if args.findings_only:
        for d in docs:
            d["document"] = {"findings": d["document"]["findings"], "warnings": d["document"]["warnings"]}
    out = {"schema": "trtstudio.layers/1", "source": engines[0].sources, "formats": engines[0].formats,
           "profiles": docs, "side_by_side": [] if args.findings_only else side_by_side(engines)}
    return emit(out, args.json, lambda d: render_profiles(engines, d, args.findings_only), indent=args.indent)


def render_profiles(engines: list[Any], doc: dict[str, Any], findings_only: bool = False) -> str:
    """``--all-profiles`` as text: a line per profile (layers, time, findings, shapes), the layers
    side by side (name, then type, precision and time per profile), each profile's findings."""
    profiles = doc["profiles"]
    lines = [f"{len(profiles)} optimization profile{'s' if len(profiles) != 1 else ''} from "
             f"{', '.join(doc['source'])} ({', '.join(doc['formats'])})", ""]
    head = ("profile", "layers", "time ms", "findings", "shapes (min .. opt .. max)")
    rows = [head]
    for p in profiles:
        f = p["findings"]
        found = f"{sum(f.values())}" + (" (" + ", ".join(f"{v} {k}" for k, v in f.items()) + ")" if f else "")
        shapes = "; ".join(f"{n} {'x'.join(map(str, s['min']))} .. {'x'.join(map(str, s['opt']))} .. "
                           f"{'x'.join(map(str, s['max']))}" for n, s in (p.get("shapes") or {}).items())
        rows.append((str(p["profile"]), str(p["layers"]), _fmt_ms(p["time_ms"]) or "-", found, shapes))
    lines += _columns(rows, right={0, 1, 2})
    if len(profiles) == 1:
        lines += ["", "the files list one optimization profile"]
    if not findings_only and len(profiles) > 1:
        lines += ["", "layers side by side (matched by name, \"[profile N]\" and Myelin graph numbers aside):"]
        table = [("name", *(f"p{p['profile']} type/precision  time ms" for p in profiles), "differs")]
        for row in doc["side_by_side"]:
            cells = []
            for c in row["profiles"]:
                cells.append("-" if c is None else
                             f"{c['type']} {c['precision'] or ''}  {_fmt_ms(c['time_ms'])}".rstrip())
            table.append((shorten(row["key"], _NAME_WIDTH), *cells, ",".join(row["differ"])))
        lines += _columns(table, right=set())
    for p, engine in zip(profiles, engines, strict=True):
        lines += ["", f"profile {p['profile']}: findings {len(engine.findings)}"]
        for f in engine.findings:
            where = f"[{f.layer_index}] " if f.layer_index is not None else ""
            lines.append(f"  {f.severity:7s} {f.kind:18s} {where}{f.message}")
    warnings = list(dict.fromkeys(w for e in engines for w in e.warnings if "optimization profiles; showing" not in w))
    lines += [""] + [f"warning: {w}" for w in warnings] if warnings else []
    return "\n".join(lines)


def _columns(rows: Sequence[Sequence[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        out.append("  ".join(cells).rstrip())
    return out


def render_text(engine: Any, mapping: Any, findings_only: bool) -> str:
    """The summary, the layer table and the findings (``findings_only``: the findings alone)."""
    out: list[str] = []
    if not findings_only:
        by_layer: dict[int, list[str]] = {}
        for f in engine.findings:
            if f.layer_index is not None:
                lst = by_layer.setdefault(f.layer_index, [])
                if f.kind not in lst:
                    lst.append(f.kind)
        out += _summary(engine, mapping)
        out.append("")
        out += _table(engine, by_layer)
        out.append("")
    counts: dict[str, int] = {}
    for f in engine.findings:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    out.append(f"findings: {len(engine.findings)}" + (
        " (" + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + ")" if counts else ""))
    for f in engine.findings:
        where = f"[{f.layer_index}] " if f.layer_index is not None else ""
        out.append(f"  {f.severity:7s} {f.kind:18s} {where}{f.message}")
        if f.hint:
            out.append(f"          hint: {f.hint}")
    for w in engine.warnings:
        out.append(f"warning: {w}")
    return "\n".join(out)
