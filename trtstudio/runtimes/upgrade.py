"""``trtstudio upgrade-check``: one model, the same build flags, several TensorRT / TensorRT-RTX runtimes.

Each runtime (:mod:`trtstudio.runtimes.manage`: a virtual environment, or a managed one) builds the
model in a child process of its own Python (``python -m trtstudio build MODEL --json`` with the flags
given), this trtstudio first on the child's path, so its ``trtstudio.build/1`` document is the one
read here. Builds run ``jobs`` at a time. Each document becomes a diff side
(:func:`trtstudio.diff.sides.load_side`, the layers mapped to the model's nodes), and the result holds,
per runtime, side by side: the build (ok, or the failing node in words), its own time, the engine's
size and memory, the share of layer time (of layers where the build timed none) per compute
precision, and the accuracy against ONNX Runtime's FP32 outputs where the engine can run here (the
reason where it cannot: :func:`trtstudio.engine.compat.compare_engine` with that runtime's version
and this machine's GPUs); and per pair of consecutive runtimes what the diff says changed
(:func:`trtstudio.diff.core.diff_sides`). Gates (``--fail-on build,precision,slower:5,size:10,
memory:10``) compare each runtime with the first one given, the version being upgraded from.

:class:`UpgradeResult` keeps the sides, so the window diffs any two (:meth:`UpgradeResult.pair`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trtstudio.errors import InputError
from trtstudio.runtimes.manage import Runtime, child_env, resolve, source_shim

SCHEMA = "trtstudio.upgrade/1"
REDUCED = ("FP16", "BF16", "FP8", "INT8", "INT4", "FP4")  # narrower than FP32/TF32
# gate -> (default threshold, unit, what it compares)
GATES: dict[str, tuple[float | None, str, str]] = {
    "build": (None, "", "the build fails where the first runtime's built"),
    "precision": (1.0, "points", "the share in reduced precision (FP16/BF16/INT8/FP8) falls by more than"),
    "slower": (5.0, "%", "median latency (engines run here) grows by more than"),
    "size": (5.0, "%", "the engine file grows by more than"),
    "memory": (5.0, "%", "device memory grows by more than"),
}
ProgressFn = Any  # (runtime name, "building" | "built" | "failed") -> None


@dataclass
class Gate:
    """One ``--fail-on`` item: a name of :data:`GATES` and its threshold."""

    name: str
    threshold: float | None

    @property
    def text(self) -> str:
        _, unit, what = GATES[self.name]
        return f"{what} {self.threshold:g} {unit}".rstrip() if self.threshold is not None else what


def parse_fail_on(text: str | None) -> list[Gate]:
    """``precision,build,slower:5`` -> gates (thresholds: the defaults of :data:`GATES` where omitted)."""
    out = []
    for item in [t.strip() for t in (text or "").split(",") if t.strip()]:
        name, _, value = item.partition(":")
        if name not in GATES:
            raise InputError(None, f"--fail-on {item!r}: choose from {', '.join(GATES)} (e.g. slower:5)")
        default = GATES[name][0]
        if value and default is None:
            raise InputError(None, f"--fail-on {item!r}: {name} takes no threshold")
        try:
            threshold = float(value) if value else default
        except ValueError:
            raise InputError(None, f"--fail-on {item!r}: {value!r} is not a number") from None
        out.append(Gate(name, threshold))
    return out


@dataclass
class UpgradeRequest:
    """What to check: ``model`` built with ``build_args`` (``trtstudio build`` flags) by each of
    ``runtimes`` (specs :func:`~trtstudio.runtimes.manage.resolve` takes), ``jobs`` builds at a time;
    ``out_dir`` keeps the engines and documents (a temporary folder, removed, when None)."""

    model: str
    runtimes: list[str]
    build_args: list[str] = field(default_factory=list)
    gates: list[Gate] = field(default_factory=list)
    jobs: int = 0  # 0: as many as runtimes, up to the CPU count
    out_dir: str | None = None
    root: str | None = None  # where managed runtimes live (runtimes_root's default when None)
    accuracy: bool = True
    timeout_s: float = 3600.0

    def validate(self) -> None:
        if not Path(self.model).is_file():
            raise InputError(self.model, "no such file")
        if not self.runtimes:
            raise InputError(None, "give at least one --runtime (a virtual environment or a managed runtime)")


@dataclass
class Column:
    """One runtime's build and what it says."""

    runtime: Runtime
    name: str
    folder: Path
    doc: dict[str, Any] | None = None  # its trtstudio.build/1 document
    error: str | None = None  # why it did not build (the build's words, or the child's)
    wall_s: float | None = None  # the child process, start to end
    side: Any = None  # diff.sides.Side where it built
    accuracy: dict[str, Any] = field(default_factory=dict)
    latency: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.side is not None

    def to_json(self) -> dict[str, Any]:
        d = self.doc or {}
        engine = self.side.engine if self.side is not None else None
        return {
            "name": self.name, "runtime": self.runtime.to_json(), "ok": self.ok, "error": self.error,
            "failing_node": failing_node(d), "seconds": d.get("seconds"), "wall_s": self.wall_s,
            "engine_path": d.get("engine_path"), "build_document": str(self.folder / "build.json") if self.doc else None,
            "engine_bytes": d.get("engine_bytes"), "memory": dict(engine.memory) if engine is not None else {},
            "layers": len(engine.layers) if engine is not None else None,
            "precision": precision_mix(engine) if engine is not None else None,
            "versions": d.get("versions") or {}, "warnings": d.get("warnings") or [],
            "accuracy": self.accuracy, "latency": self.latency,
        }


def failing_node(doc: dict[str, Any]) -> str | None:
    """A failed build in words: the nodes the parser rejected (name, op, why), else None."""
    rows = doc.get("unsupported") or []
    if not rows:
        return None
    first = rows[0]
    text = f"{first.get('node')} ({first.get('op_type') or '?'}): {first.get('reason')}"
    return text + (f" and {len(rows) - 1} more" if len(rows) > 1 else "")


def precision_mix(engine: Any) -> dict[str, Any]:
    """Per compute precision, its share of the layer time (``basis`` ``time``), or, where no layer is
    timed, of the layers that have a precision (``basis`` ``layers``): ``{"basis", "shares": {p:
    percent}, "layers": {p: count}, "reduced_percent"}`` (the share in FP16/BF16/INT8/FP8...)."""
    from trtstudio.engine.table import precision_detail

    rows = precision_detail(engine)
    counts: dict[str, int] = {}
    for lay in engine.layers:
        pin, pout = lay.precisions()
        if pin or pout:
            counts[pin or pout] = counts.get(pin or pout, 0) + 1
    if rows and any(r["percent"] for r in rows):
        basis = "time"
        shares = {r["precision"]: float(r["percent"] or 0.0) for r in rows}
    else:
        basis = "layers"
        total = sum(counts.values())
        shares = {p: 100.0 * n / total for p, n in sorted(counts.items(), key=lambda kv: -kv[1])} if total else {}
    reduced = sum(v for p, v in shares.items() if p.upper() in REDUCED)
    return {"basis": basis, "shares": shares, "layers": counts, "reduced_percent": reduced if shares else None}


@dataclass
class UpgradeResult:
    """Every column, the consecutive diffs, the gates; ``to_json`` is the ``trtstudio.upgrade/1``
    document."""

    request: UpgradeRequest
    columns: list[Column]
    diffs: list[Any] = field(default_factory=list)  # diff.core.PairDiff of consecutive built columns
    gates: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    def pair(self, base: int, other: int) -> Any:
        """The :class:`~trtstudio.diff.core.PairDiff` of columns ``other`` against ``base`` (both built)."""
        from trtstudio.diff.core import diff_sides

        a, b = self.columns[base], self.columns[other]
        if not (a.ok and b.ok):
            raise ValueError(f"{(b if a.ok else a).name} did not build: nothing to diff")
        return diff_sides(a.side, b.side)

    @property
    def regressions(self) -> list[str]:
        return [g["text"] for g in self.gates if g["failed"]]

    def to_json(self) -> dict[str, Any]:
        builds = [float(c.doc["seconds"]) for c in self.columns if c.doc and c.doc.get("seconds") is not None]
        return {
            "schema": SCHEMA, "model": self.request.model, "build_flags": self.request.build_args,
            "runtimes": [c.to_json() for c in self.columns],
            "diffs": [_pair_json(p) for p in self.diffs],
            "gates": self.gates, "regressions": self.regressions, "notes": self.notes,
            "wall_s": round(self.wall_s, 4), "builds_s": round(sum(builds), 4) if builds else None,
            "out_dir": self.request.out_dir,
        }


def _pair_json(p: Any) -> dict[str, Any]:
    changes = {k: v["groups"] for k, v in p.totals.items() if k != "same"}
    return {"base": p.base.name, "other": p.other.name, "build": p.build.get("verdict"),
            "build_text": p.build.get("text"), "changes": changes, "groups": len(p.groups),
            "changed_groups": sum(changes.values()), "story": p.story, "alignment": p.alignment,
            "unmatched": {k: len(v) for k, v in p.unmatched().items()}}


def _names(runtimes: list[Runtime]) -> list[str]:
    labels = [r.label for r in runtimes]
    return [r.label if labels.count(r.label) == 1 else r.name for r in runtimes]


def _build_one(col: Column, model: str, args: list[str], timeout_s: float, cancel: Any) -> None:
    """Run the child build of ``col``; its document (or why there is none) goes into ``col``."""
    col.folder.mkdir(parents=True, exist_ok=True)
    engine = col.folder / (Path(model).stem + ".engine")
    cmd = [col.runtime.python, "-m", "trtstudio", "build", model, "-o", str(engine), "--json", *args]
    t0 = time.perf_counter()
    # in its own folder: ``python -m`` puts the working folder first on the child's path
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(source_shim()),
                            cwd=col.folder, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        col.error = f"the build ran past {timeout_s:.0f} s and was stopped"
    col.wall_s = time.perf_counter() - t0
    if cancel is not None and cancel():
        col.error = "cancelled"
        return
    try:
        doc = json.loads(out) if out.strip() else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith("trtstudio.build/"):
        last = [ln for ln in err.decode(errors="replace").splitlines() if ln.strip()]
        col.error = col.error or (last[-1][:400] if last else f"the child exited {proc.returncode} with no document")
        return
    col.doc = doc
    (col.folder / "build.json").write_text(json.dumps(doc), encoding="utf-8")
    if not doc.get("ok"):
        col.error = failing_node(doc) or doc.get("error") or "the build failed"


def _read_side(col: Column, model: str) -> None:
    from trtstudio.diff.sides import load_side

    try:
        col.side = load_side(str(col.folder / "build.json"), model=model, name=col.name)
    except InputError as exc:
        col.error = f"built, but its document cannot be read: {exc.message}"


def run_upgrade(request: UpgradeRequest, progress: ProgressFn | None = None, cancel: Any = None) -> UpgradeResult:
    """Build with every runtime, read and diff the builds, check accuracy where the engines can run here,
    apply the gates. Bad input (no model, an unknown runtime) raises InputError before anything builds."""
    t0 = time.perf_counter()
    request.validate()
    model = str(Path(request.model).resolve())
    with ThreadPoolExecutor(max_workers=len(request.runtimes)) as pool:  # a child each (about 50 ms)
        runtimes = list(pool.map(lambda spec: resolve(spec, request.root), request.runtimes))
    for spec, rt in zip(request.runtimes, runtimes, strict=True):
        why = rt.problem()
        if why:
            raise InputError(spec, f"this runtime cannot build: {why}")
    temp = None
    if request.out_dir is None:
        temp = tempfile.mkdtemp(prefix="trtstudio-upgrade-")
    out = Path(request.out_dir or temp or ".")
    names = _names(runtimes)
    columns = [Column(rt, name, out / _folder_name(rt, i)) for i, (rt, name) in enumerate(zip(runtimes, names, strict=True))]
    jobs = request.jobs or min(len(columns), os.cpu_count() or 1)
    try:
        def one(col: Column) -> None:
            if progress is not None:
                progress(col.name, "building")
            _build_one(col, model, request.build_args, request.timeout_s, cancel)
            if col.doc is not None and col.doc.get("ok"):
                _read_side(col, model)
            if progress is not None:
                progress(col.name, "built" if col.ok else "failed")

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            list(pool.map(one, columns))
        result = UpgradeResult(request, columns)
        built = [c for c in columns if c.ok]
        from trtstudio.diff.core import diff_sides

        result.diffs = [diff_sides(a.side, b.side) for a, b in zip(built, built[1:], strict=False)]
        if request.accuracy:
            from trtstudio.runtimes.accuracy import check_accuracy

            result.notes += check_accuracy(model, columns, request.build_args)
        result.gates = apply_gates(columns, request.gates)
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
    result.wall_s = time.perf_counter() - t0
    return result


def _folder_name(rt: Runtime, i: int) -> str:
    return f"{i + 1:02d}-{rt.name}".replace(os.sep, "_")


def _grew(base: float | None, other: float | None) -> float | None:
    return 100.0 * (other - base) / base if base and other is not None else None


def apply_gates(columns: list[Column], gates: list[Gate]) -> list[dict[str, Any]]:
    """Each gate on each runtime after the first, against the first: ``{"gate", "runtime", "failed",
    "checked", "text"}``; a gate that cannot be checked (no latency here) says so and does not fail."""
    if not columns:
        return []
    base, out = columns[0], []
    for col in columns[1:]:
        for g in gates:
            failed, checked, figure = False, True, ""
            if g.name == "build":
                failed = base.ok and not col.ok
                figure = f"the build fails: {col.error}" if failed else ("builds" if col.ok else "fails as the first")
            elif not (base.ok and col.ok):
                checked, figure = False, "not checked: a build failed"
            elif g.name == "precision":
                a = precision_mix(base.side.engine)["reduced_percent"] or 0.0
                b = precision_mix(col.side.engine)["reduced_percent"] or 0.0
                failed = a - b > (g.threshold or 0.0)
                figure = f"reduced precision {a:.1f} % -> {b:.1f} % of the engine"
            elif g.name == "slower":
                a_ms = (base.latency or {}).get("median_ms")
                b_ms = (col.latency or {}).get("median_ms")
                pct = _grew(a_ms, b_ms)
                if pct is None:
                    checked, figure = False, "not checked: the engines did not run here"
                else:
                    failed, figure = pct > (g.threshold or 0.0), f"median {a_ms:.4g} -> {b_ms:.4g} ms ({pct:+.1f} %)"
            else:
                key = "engine_bytes" if g.name == "size" else "memory"
                a_v = (base.doc or {}).get("engine_bytes") if key == "engine_bytes" else base.side.engine.memory.get("device_memory")
                b_v = (col.doc or {}).get("engine_bytes") if key == "engine_bytes" else col.side.engine.memory.get("device_memory")
                pct = _grew(a_v, b_v)
                if pct is None:
                    checked, figure = False, f"not checked: no {'size' if key == 'engine_bytes' else 'device memory'} recorded"
                else:
                    failed, figure = pct > (g.threshold or 0.0), f"{a_v:,} -> {b_v:,} bytes ({pct:+.1f} %)"
            text = f"{col.name} against {base.name}: {figure}"
            if failed:
                text = f"{g.name} regression: {text} ({g.text})"
            out.append({"gate": g.name, "threshold": g.threshold, "runtime": col.name, "failed": failed,
                        "checked": checked, "text": text})
    return out


def _mib(v: Any) -> str:
    return f"{v / 2**20:.2f} MiB" if isinstance(v, (int, float)) else "-"


def _mix_text(mix: dict[str, Any] | None) -> str:
    if not mix or not mix["shares"]:
        return "-"
    return ", ".join(f"{p} {v:.0f} %" for p, v in list(mix["shares"].items())[:3])


def table_rows(doc: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The side-by-side table of a ``trtstudio.upgrade/1`` document: (row label, a cell per runtime);
    the text output and the window's table show these rows."""
    cols = doc["runtimes"]
    basis = next((c["precision"]["basis"] for c in cols if c.get("precision")), "layers")
    changes = {d["other"]: d for d in doc.get("diffs") or []}

    def change_text(c: dict[str, Any]) -> str:
        d = changes.get(c["name"])
        if d is None:
            return "-"
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(d["changes"].items(), key=lambda kv: -kv[1]))
        return f"{d['changed_groups']}/{d['groups']} groups" + (f": {kinds}" if kinds else "")

    rows: list[tuple[str, Any]] = [
        ("build", lambda c: "ok" if c["ok"] else f"FAILED: {c['error']}"),
        ("build time", lambda c: f"{c['seconds']:.2f} s" if c.get("seconds") is not None else "-"),
        ("engine size", lambda c: _mib(c.get("engine_bytes"))),
        ("device memory", lambda c: _mib((c.get("memory") or {}).get("device_memory"))),
        ("weights", lambda c: _mib((c.get("memory") or {}).get("weights"))),
        ("layers", lambda c: str(c["layers"]) if c.get("layers") is not None else "-"),
        (f"precision (of {'time' if basis == 'time' else 'layers'})", lambda c: _mix_text(c.get("precision"))),
        ("changes vs previous", change_text),
        ("accuracy vs ORT FP32", lambda c: (c.get("accuracy") or {}).get("text") or "-"),
    ]
    return [(label, [str(fn(c)) for c in cols]) for label, fn in rows]


def render_text(doc: dict[str, Any]) -> str:
    """The ``trtstudio.upgrade/1`` document as a table (a column per runtime, :func:`table_rows`), the
    diffs' stories and the gates."""
    cols = doc["runtimes"]
    flags = " ".join(doc.get("build_flags") or []) or "default flags"
    lines = [f"upgrade check of {Path(doc['model']).name} ({flags}), {len(cols)} runtime(s)"]
    rows = table_rows(doc)
    width = max(26, *(len(c["name"]) + 2 for c in cols))
    head = max(len(r[0]) for r in rows) + 2
    lines.append(" " * head + "".join(f"{c['name']:<{width}}" for c in cols))
    for label, cells in rows:
        if label in ("build", "accuracy vs ORT FP32") and any(len(x) > width - 2 for x in cells):
            lines.append(f"{label}:")
            lines += [f"  {c['name']}: {x}" for c, x in zip(cols, cells, strict=True)]
            continue
        lines.append(f"{label:<{head}}" + "".join(f"{x:<{width}}" for x in cells))
    for d in doc.get("diffs") or []:
        lines.append(f"{d['other']} against {d['base']}: {d['build_text']}")
        lines += [f"  {s}" for s in d["story"]]
    shared = set.intersection(*(set(c.get("warnings") or []) for c in cols)) if len(cols) > 1 else set()
    lines += [f"warning: every runtime: {w}" for w in dict.fromkeys(w for c in cols for w in c.get("warnings") or [])
              if w in shared]
    for c in cols:
        lines += [f"warning: {c['name']}: {w}" for w in c.get("warnings") or [] if w not in shared]
    lines += [f"note: {n}" for n in doc.get("notes") or []]
    for g in doc.get("gates") or []:
        lines.append(f"{'FAIL' if g['failed'] else 'ok  ' if g['checked'] else 'n/a '} {g['gate']:<9} {g['text']}")
    builds = doc.get("builds_s")
    if builds:
        lines.append(f"{doc['wall_s']:.2f} s in all, the builds' own times {builds:.2f} s")
    return "\n".join(lines)
