"""The diff of two builds: aligned layer groups, a time verdict with its interval, the story.

``diff_sides(base, other)`` is a :class:`PairDiff`; ``diff(base, *others)`` a :class:`Diff` of the
base against each other side, schema ``trtstudio.diff/1``. Everything here is a pure function of
the two sides (:mod:`trtstudio.diff.sides`); the command line, the window and ``compare`` show it.

- **Groups** come from :func:`trtstudio.diff.align.align`: each has one change label and both
  sides' layers, precisions, tactics and times (a layer's median per inference from the profile,
  else its average), ``delta_ms = other_ms - base_ms``.
- **Time**: the engine's time per inference is trtexec's per-inference GPU compute time
  (``--exportTimes``' ``computeMs``; its ``latencyMs`` where that is missing), or a session's run.
  The ratio other/base of the medians carries a 95 % bootstrap interval (``measure.ratio``):
  ``faster``/``slower`` where the interval excludes 1.0, ``no significant difference`` where it
  holds it, ``inconclusive`` where a side has no per-inference samples (then the sums of the layer
  times are compared, as figures only). A side whose samples vary by more than 10 % (CoV) is named.
- **Provenance**: each side's GPU and TensorRT from its own files (``engine.provenance``).
- **Same build?** Two sides whose files record different TensorRT (or TensorRT-RTX) versions are
  ``different versions`` first ("built by different TensorRT-RTX versions (1.6.1.120 -> 1.7.1.116)",
  "the same layers" where nothing changed: never a nondeterministic build). Else two sides built
  from one model with the same recorded options are ``identical`` when every group is ``same``, else
  a ``nondeterministic build`` with what differs.
- **Notes**: what one side does not record (tensor formats, a names-only listing's details), which
  was therefore not compared, one sentence each (``notes``, and the story).
- **Do they belong together?** ``diff.mismatch``: different models, GPUs or TensorRT versions, or
  under half of a side's convolutions/GEMMs aligned, each a sentence in ``warnings`` (the pair's
  and the document's). Different models or too few aligned make the verdict unreliable: the
  summary says ``reliable: false`` and why (``unreliable_because``), its text starts with
  ``unreliable:``, and the CI gate does not judge the pair (``diff.gate``: exit 3).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from trtstudio.diff.align import CHANGES, ALayer, Group, align, formats_of, lacks_formats
from trtstudio.diff.mismatch import mismatches, unreliable
from trtstudio.diff.sides import Side, describe
from trtstudio.engine.provenance import NOT_RECORDED, provenance, runtime_of
from trtstudio.measure.ratio import NO_DIFFERENCE, Ratio, ratio_interval
from trtstudio.measure.verdict import INCONCLUSIVE

if TYPE_CHECKING:
    from trtstudio.diff.prefetch import Prefetch

SCHEMA = "trtstudio.diff/1"
NOISY_COV_PERCENT = 10.0
IDENTICAL = "identical"
NONDETERMINISTIC = "nondeterministic build"
VERSIONS = "different versions"
# build options that say nothing about the engine built (timing runs, file names)
_RUN_KEYS = frozenset(("profile_iterations", "inference_options", "Model", "model", "onnx_file", "source_model",
                       "built_model", "minTiming", "avgTiming", "build_seconds", "build_time", "engine_path"))
_MODEL_KEYS = ("onnx_file", "Model", "model", "source_model")


def _stats(samples: np.ndarray) -> dict[str, Any]:
    if not len(samples):
        return {}
    mean = float(np.mean(samples))
    return {"count": int(len(samples)), "median": float(np.median(samples)), "p99": float(np.percentile(samples, 99)),
            "mean": mean, "cov_percent": float(np.std(samples) / mean * 100) if mean else None}


def _ms(layers: list[ALayer], idx: list[int]) -> float | None:
    t = [v for v in (layers[i].time_ms for i in idx) if v is not None]
    return float(sum(t)) if t else None


def _delta(bms: float | None, oms: float | None, has_base: bool, has_other: bool) -> float | None:
    if has_base and has_other:
        return None if bms is None or oms is None else oms - bms
    if has_other:
        return oms
    return None if bms is None else -bms


def _uniq(layers: list[ALayer], idx: list[int], attr: str) -> list[str]:
    if len(idx) == 1:
        v = getattr(layers[idx[0]], attr)
        return [str(v)] if v else []
    return list(dict.fromkeys(str(v) for v in (getattr(layers[i], attr) for i in idx) if v))


def _nodes(g: Group, base: list[ALayer], other: list[ALayer]) -> list[str]:
    if len(g.base) == 1 and len(g.other) == 1 and base[g.base[0]].nodes == other[g.other[0]].nodes:
        return list(base[g.base[0]].nodes)
    nodes = list(dict.fromkeys(n for i in g.base for n in base[i].nodes))
    seen = set(nodes)
    return nodes + [n for n in dict.fromkeys(n for i in g.other for n in other[i].nodes) if n not in seen]


def _group_json(g: Group, base: list[ALayer], other: list[ALayer]) -> dict[str, Any]:
    gb, go = g.base, g.other
    if len(gb) == 1 and len(go) == 1:  # most groups: one layer a side (each field read once: 50,000 rows)
        a, o = base[gb[0]], other[go[0]]
        bms, oms, nodes = a.time_ms, o.time_ms, a.nodes
        ap, op, at, ot = a.precision, o.precision, a.tactic, o.tactic
        change = g.change
        row = {
            "change": change, "matched_by": g.matched_by, "base_layers": [a.name], "other_layers": [o.name],
            "base_index": [a.pos], "other_index": [o.pos],
            "onnx_nodes": list(nodes) if nodes == o.nodes else _nodes(g, base, other),
            "base_ms": bms, "other_ms": oms, "delta_ms": None if bms is None or oms is None else oms - bms,
            "base_precision": [ap] if ap else [], "other_precision": [op] if op else [],
            "base_tactic": [str(at)] if at else [], "other_tactic": [str(ot)] if ot else [],
            "reason": g.reason or None,
        }
        if change == "format":
            row.update(_formats(g, base, other))
        return row
    bms, oms = _ms(base, g.base), _ms(other, g.other)
    uniq = _uniq
    return {
        "change": g.change, "matched_by": g.matched_by,
        "base_layers": [base[i].name for i in g.base], "other_layers": [other[i].name for i in g.other],
        "base_index": list(g.base), "other_index": list(g.other), "onnx_nodes": _nodes(g, base, other),
        "base_ms": bms, "other_ms": oms,
        # a layer added or removed counts its whole time (the missing side's time is zero)
        "delta_ms": _delta(bms, oms, bool(g.base), bool(g.other)),
        "base_precision": uniq(base, g.base, "precision"), "other_precision": uniq(other, g.other, "precision"),
        "base_tactic": uniq(base, g.base, "tactic"), "other_tactic": uniq(other, g.other, "tactic"),
        "reason": g.reason or None, **_formats(g, base, other),
    }


def _formats(g: Group, base: list[ALayer], other: list[ALayer]) -> dict[str, Any]:
    """A format group's tensor formats, each side's layers' (inputs then outputs); nothing for others."""
    if g.change != "format":
        return {}
    return {"base_formats": formats_of(base, g.base), "other_formats": formats_of(other, g.other)}


class _Tally:
    """What the summary, the totals, the story and the build verdict read of a pair's rows, gathered
    as the rows are made: 50,000 rows walked once rather than once for each figure (each walk of rows
    that have left the cache cost 10-20 ms). Sums add in row order, as ``sum`` over the rows did."""

    __slots__ = ("best", "changed", "changes", "layer_base", "layer_other", "one_sided", "worst")

    def __init__(self) -> None:
        # change -> [groups, base sum, base timed, other sum, other timed, added, removed], in the
        # order each change first occurs
        self.changes: dict[str, list[Any]] = {}
        self.layer_base: float = 0  # the sums of the layer times (a missing time as 0.0)
        self.layer_other: float = 0
        self.best: dict[str, Any] | None = None  # the first timed two-sided row of least delta_ms
        self.worst: dict[str, Any] | None = None  # ... and of greatest
        self.changed: list[dict[str, Any]] = []  # the first 200 rows that changed, in order
        self.one_sided: list[dict[str, Any]] = []  # the rows with no layer on a side, in order

    def add(self, g: dict[str, Any]) -> None:
        bms, oms, bl, ol = g["base_ms"], g["other_ms"], g["base_layers"], g["other_layers"]
        self.layer_base = self.layer_base + (bms or 0.0)
        self.layer_other = self.layer_other + (oms or 0.0)
        t = self.changes.get(ch := g["change"])
        if t is None:
            t = self.changes[ch] = [0, 0, 0, 0, 0, 0, 0]
        t[0] += 1
        if bms is not None:
            t[1] = t[1] + bms
            t[2] += 1
        if oms is not None:
            t[3] = t[3] + oms
            t[4] += 1
        if bl and ol:
            d = g["delta_ms"]
            if d is not None:  # (min and max over the rows in order: the first of least, of greatest)
                if self.best is None:
                    self.best = self.worst = g
                elif d < self.best["delta_ms"]:
                    self.best = g
                elif d > self.worst["delta_ms"]:  # type: ignore[index]
                    self.worst = g
        else:
            t[6 if bl else 5] += 1
            self.one_sided.append(g)
        if ch != "same" and len(self.changed) < 200:
            self.changed.append(g)

    def changed_count(self) -> int:
        return sum(t[0] for ch, t in self.changes.items() if ch != "same")

    def kinds(self) -> Counter[str]:
        """How many rows changed each way (a Counter in the order each change first occurs)."""
        return Counter({ch: t[0] for ch, t in self.changes.items() if ch != "same"})


@dataclass
class PairDiff:
    """The base against one other side (see the module docstring)."""

    base: Side
    other: Side
    groups: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    totals: dict[str, dict[str, Any]] = field(default_factory=dict)
    alignment: dict[str, Any] = field(default_factory=dict)
    build: dict[str, Any] = field(default_factory=dict)
    memory: dict[str, Any] = field(default_factory=dict)
    build_time: list[dict[str, Any]] = field(default_factory=list)  # engine.buildtime.compare_rows of the sides' build logs
    story: list[str] = field(default_factory=list)
    ratio: Ratio | None = None
    mismatch: dict[str, str] = field(default_factory=dict)  # diff.mismatch: kind -> sentence
    notes: list[str] = field(default_factory=list)  # what a side does not record, so was not compared
    # the rows with no layer on a side, in order, as diff_sides made them (None: found in groups)
    one_sided: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def warnings(self) -> list[str]:
        """Why the two sides may not belong together (``diff.mismatch``), one sentence each."""
        return list(self.mismatch.values())

    def unmatched(self) -> dict[str, list[dict[str, Any]]]:
        """Layers with no counterpart, each with the reason."""
        out: dict[str, list[dict[str, Any]]] = {"base": [], "other": []}
        for g in self.groups if self.one_sided is None else self.one_sided:
            if not g["other_layers"]:
                out["base"] += [{"layer": n, "change": g["change"], "reason": g["reason"]} for n in g["base_layers"]]
            elif not g["base_layers"]:
                out["other"] += [{"layer": n, "change": g["change"], "reason": g["reason"]} for n in g["other_layers"]]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "base": describe(self.base), "other": describe(self.other),
            "provenance": {"base": provenance(self.base.engine), "other": provenance(self.other.engine)},
            "warnings": self.warnings, "mismatch": self.mismatch, "notes": self.notes,
            "summary": self.summary, "story": self.story, "totals": self.totals, "alignment": self.alignment,
            "build": self.build, "memory": self.memory, "build_time": self.build_time,
            "groups": self.groups, "unmatched": self.unmatched(),
        }


@dataclass
class Diff:
    """The base against each other side, in order."""

    pairs: list[PairDiff]

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "base": self.pairs[0].base.name if self.pairs else None,
                "warnings": list(dict.fromkeys(w for p in self.pairs for w in p.warnings)),
                "diffs": [p.to_json() for p in self.pairs]}


def sample_figures(base: Side, other: Side) -> tuple[dict[str, Any], dict[str, Any], Ratio | None]:
    """What the two sides' samples alone give the summary: each side's statistics and, where both
    have two samples or more, the ratio of their medians with its interval (a helper process works
    it out too, :mod:`trtstudio.diff.prefetch`)."""
    bs, os_ = _stats(base.samples), _stats(other.samples)
    both = len(base.samples) >= 2 and len(other.samples) >= 2
    return bs, os_, ratio_interval(base.samples, other.samples, "median") if both else None


def _summary(base: Side, other: Side, tally: _Tally,
             figures: tuple[dict[str, Any], dict[str, Any], Ratio | None]) -> tuple[dict[str, Any], Ratio | None]:
    bs, os_, r = figures
    metric = base.metric if base.metric == other.metric else f"{base.metric or 'none'} vs {other.metric or 'none'}"
    out: dict[str, Any] = {"metric": metric, "base_median_ms": bs.get("median"), "other_median_ms": os_.get("median"),
                           "base_p99_ms": bs.get("p99"), "other_p99_ms": os_.get("p99"),
                           "base_cov_percent": bs.get("cov_percent"), "other_cov_percent": os_.get("cov_percent"),
                           "base_samples": bs.get("count", 0), "other_samples": os_.get("count", 0)}
    thr = [s.engine.latency_ms.get("throughput_qps") for s in (base, other)]
    out["throughput"] = {"base": thr[0], "other": thr[1], "unit": "inferences/s (trtexec)"}
    lb, lo = tally.layer_base, tally.layer_other
    out["layer_sum_ms"] = {"base": lb or None, "other": lo or None}
    noisy = [f"{s.name} (CoV {c['cov_percent']:.0f} %)" for s, c in ((base, bs), (other, os_))
             if c.get("cov_percent") is not None and c["cov_percent"] > NOISY_COV_PERCENT]
    out["noisy"] = noisy
    if r is not None:
        out.update(ratio=r.value, interval=[r.low, r.high] if r.has_interval else None)
        if not r.has_interval:
            verdict = INCONCLUSIVE
        elif not r.significant:
            verdict = NO_DIFFERENCE
        else:
            verdict = "faster" if r.value < 1 else "slower"
        out["verdict"] = verdict
        out["text"] = _time_text(base, other, r, verdict, noisy, bs["median"], os_["median"])
        return out, r
    out["ratio"] = lo / lb if lb and lo else None
    out["interval"] = None
    out["verdict"] = INCONCLUSIVE
    missing = [s.name for s in (base, other) if len(s.samples) < 2]
    sums = f" (sums of layer times {lb:.3g} -> {lo:.3g} ms)" if lb and lo else ""
    out["text"] = (f"inconclusive: {' and '.join(missing)} {'has' if len(missing) == 1 else 'have'} no per-inference timings (trtexec --exportTimes, or a "
                   f"session's run) to resample{sums}")
    return out, None


def _time_text(base: Side, other: Side, r: Ratio, verdict: str, noisy: list[str], bm: float, om: float) -> str:
    what = {"gpu_compute": "GPU compute time", "latency": "latency", "run": "run latency"}.get(base.metric, "time")
    interval = f"95 % interval {r.low:.3f}-{r.high:.3f}x" if r.has_interval else "no interval"
    figures = f"median {bm:.3g} -> {om:.3g} ms, x{r.value:.3f}, {interval}"
    noise = f"; noisy: {', '.join(noisy)}" if noisy else ""
    if verdict == NO_DIFFERENCE:
        return f"{NO_DIFFERENCE} in {what} between {other.name} and {base.name} ({figures}){noise}"
    if verdict == INCONCLUSIVE:
        return f"inconclusive: {figures}{noise}"
    pct = abs(1 - r.value) * 100
    return f"{other.name} {'cuts' if r.value < 1 else 'adds'} {pct:.0f} % {what} against {base.name} ({figures}){noise}"


def _totals(tally: _Tally) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for ch in CHANGES:
        t = tally.changes.get(ch)
        if t is None:
            continue
        n, bsum, bn, osum, on, added, removed = t
        out[ch] = {"groups": n, "base_ms": bsum if bn else None, "other_ms": osum if on else None,
                   "delta_ms": (osum if on else 0.0) - (bsum if bn else 0.0) if (bn or on) else None,
                   "added": added, "removed": removed}
    return out


def _alignment(groups: list[Group], base: list[ALayer], other: list[ALayer]) -> dict[str, Any]:
    conv_b = [a.pos for a in base if a.compute]
    conv_o = [a.pos for a in other if a.compute]
    aligned_b = {i for g in groups if g.base and g.other for i in g.base}
    aligned_o = {i for g in groups if g.base and g.other for i in g.other}
    return {
        "groups": len(groups), "aligned_groups": sum(1 for g in groups if g.base and g.other),
        "matched_by": dict(Counter(g.matched_by for g in groups if g.base and g.other)),
        "compute_layers": {"base": len(conv_b), "other": len(conv_o),
                           "base_aligned": sum(1 for i in conv_b if i in aligned_b),
                           "other_aligned": sum(1 for i in conv_o if i in aligned_o)},
    }


def _build(base: Side, other: Side, tally: _Tally) -> dict[str, Any]:
    def opts(s: Side) -> dict[str, Any]:
        return {k: v for k, v in s.engine.build_settings.items() if k not in _RUN_KEYS}
    same_model = bool(base.model and other.model and _same_file(base.model, other.model)) or (
        _model_name(base) is not None and _model_name(base) == _model_name(other))
    same_opts = opts(base) == opts(other)
    changed = tally.changed_count()
    groups = sum(t[0] for t in tally.changes.values())
    rb, ro = runtime_of(base.engine), runtime_of(other.engine)
    if NOT_RECORDED not in (rb, ro) and rb != ro:
        # the version first: a new TensorRT builds other engines, which is no nondeterminism
        kinds = tally.kinds()
        what = (f"{changed} of {groups} groups changed ({', '.join(f'{n} {k}' for k, n in kinds.most_common())})"
                if changed else "the same layers (every layer, precision, tactic and format matches what both record)")
        return {"verdict": VERSIONS, "text": f"built by different {_versions(rb, ro)}: {what}", "same_model": same_model,
                "same_options": same_opts, "differences": []}
    if not changed:
        verdict = IDENTICAL
        text = f"{other.name} and {base.name} are the same engine: every layer, precision, tactic and format matches"
    elif same_model and same_opts:
        verdict = NONDETERMINISTIC
        kinds = tally.kinds()
        text = (f"one model, the same recorded build options, different engines: "
                f"{', '.join(f'{n} {k}' for k, n in kinds.most_common())} (TensorRT times tactics on the GPU at build "
                "time: pin them with a timing cache, --timingCacheFile, to build the same engine again)")
    else:
        verdict = "different builds"
        text = f"{changed} of {groups} groups changed"
    return {"verdict": verdict, "text": text, "same_model": same_model, "same_options": same_opts,
            "differences": [{"change": g["change"], "base_layers": g["base_layers"], "other_layers": g["other_layers"]}
                            for g in tally.changed] if verdict == NONDETERMINISTIC else []}


def _versions(rb: str, ro: str) -> str:
    """'TensorRT-RTX versions (1.6.1.120 -> 1.7.1.116)', or both names where the runtimes differ."""
    (nb, _, vb), (no, _, vo) = rb.rpartition(" "), ro.rpartition(" ")
    if nb == no:
        return f"{nb} versions ({vb} -> {vo})"
    return f"TensorRT versions ({rb} -> {ro})"


def _notes(base: Side, other: Side, bv: list[ALayer], ov: list[ALayer]) -> list[str]:
    """What one side does not record, so was not compared (no change is made of it)."""
    out = []
    lack = [s.name for s, v in ((base, bv), (other, ov)) if lacks_formats(v)]
    has = [s.name for s, v in ((base, bv), (other, ov)) if any(any(a.formats) for a in v)]
    if len(lack) == 1 and len(has) == 1:
        out.append(f"{lack[0]} records no tensor formats (its listing gives data types only, as TensorRT-RTX 1.4's "
                   f"build log does): formats were not compared with {has[0]}'s")
    thin = [s.name for s in (base, other) if not s.engine.detailed and s.engine.layers]
    if len(thin) == 1:
        out.append(f"{thin[0]} lists layer names only (no precisions, tactics or formats): those were not compared")
    return out


def _same_file(a: str, b: str) -> bool:
    import hashlib
    import os

    try:
        if os.path.samefile(a, b):
            return True
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return hashlib.sha256(fa.read()).digest() == hashlib.sha256(fb.read()).digest()
    except OSError:
        return False


def _model_name(s: Side) -> str | None:
    m = next((s.engine.build_settings[k] for k in _MODEL_KEYS if s.engine.build_settings.get(k)), None)
    return str(m) if m else None


def side_memory(side: Side) -> Any:
    """A side's memory by category (``engine.memory.memory_of``, an ``EngineMemory``) from its files
    that can still be read (a side can outlive them: upgrade-check's builds); the engine's own
    figures where they cannot."""
    from trtstudio.engine.memory import memory_of
    from trtstudio.errors import InputError

    try:
        return memory_of(side.engine, [p for p in side.paths if os.path.isfile(p)], side.name, per_layer=False)
    except InputError:
        return memory_of(side.engine, [], side.name, per_layer=False)


def pair_memory(base: Side, other: Side, base_memory: Any = None, other_memory: Any = None) -> dict[str, Any]:
    """The two engines' memory by category (``engine.memory``: weights, activations as allocated,
    persistent, scratch, I/O, engine size, ...) side by side: ``{category: {base, other,
    base_source, other_source, change}}`` for the categories either side's files record
    (``base_memory``, ``other_memory``: a side's :func:`side_memory` where another process made it)."""
    from trtstudio.engine.memory import memory_rows

    rows = memory_rows(base_memory if base_memory is not None else side_memory(base),
                       other_memory if other_memory is not None else side_memory(other))
    return {r["name"]: {"base": r["a_bytes"], "other": r["b_bytes"], "base_source": r["a_source"],
                        "other_source": r["b_source"], "change": r["change_bytes"]}
            for r in rows if r["a_bytes"] is not None or r["b_bytes"] is not None}


def _story(p: PairDiff, tally: _Tally) -> list[str]:
    s = p.summary
    prov = provenance(p.other.engine)
    where = f" on {prov['gpu']}" if prov["gpu"] != "not recorded" else ""
    first = s["text"]
    if s.get("ratio") is not None and s["verdict"] in ("faster", "slower"):
        pct = abs(1 - s["ratio"]) * 100
        first = (f"{p.other.name} {'cuts' if s['ratio'] < 1 else 'adds'} {pct:.0f} % "
                 f"{'GPU time' if p.base.metric == 'gpu_compute' else 'latency'} "
                 f"({s['base_median_ms']:.3g} -> {s['other_median_ms']:.3g} ms{where})")
    bits = []
    t = p.totals
    if "precision" in t:
        bits.append(f"{t['precision']['groups']} groups changed precision")
    if "fused" in t:
        bits.append(f"{t['fused']['groups']} fused differently")
    if "format" in t:
        f = t["format"]
        if f["removed"] or f["added"]:
            d = f["delta_ms"]
            bits.append(f"{f['removed']} reformats are gone, {f['added']} new"
                        + (f" ({d:+.3g} ms)" if d is not None else ""))
    if "format" in t and t["format"]["groups"] > t["format"]["removed"] + t["format"]["added"]:
        bits.append(f"{t['format']['groups'] - t['format']['removed'] - t['format']['added']} changed tensor format")
    if "tactic" in t:
        bits.append(f"{t['tactic']['groups']} changed kernel")
    for key, side in (("only_base", p.base.name), ("only_other", p.other.name)):
        if key in t:
            gs = [g for g in tally.one_sided if g["change"] == key]
            names = [n for g in gs for n in (g["base_layers"] or g["other_layers"])]
            bits.append(f"{_n(len(names), 'layer')} only in {side} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})")
    best, worst = tally.best, tally.worst
    if best is not None and best["delta_ms"] < 0:
        bits.append(f"the largest gain is {best['base_layers'][0]} ({best['delta_ms']:+.3g} ms)")
    if worst is not None and worst["delta_ms"] > 0:
        bits.append(f"the largest loss is {worst['base_layers'][0]} ({worst['delta_ms']:+.3g} ms)")
    if not bits and "same" in t:
        bits.append(f"all {t['same']['groups']} groups the same")
    out = [first + ("; " + "; ".join(bits) if bits else "") + "."]
    if p.build["verdict"] in (IDENTICAL, NONDETERMINISTIC, VERSIONS):
        out.append(p.build["text"] + ".")
    out += [n + "." for n in p.notes]
    pb, po = provenance(p.base.engine), provenance(p.other.engine)
    out.append(f"{p.base.name}: {pb['text']}; {p.other.name}: {po['text']} (from the engines' own files).")
    return out


def _n(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def diff_sides(base: Side, other: Side, prefetched: Callable[..., Any] | None = None) -> PairDiff:
    """The :class:`PairDiff` of ``other`` against ``base``; ``prefetched``: what a helper process
    worked out of the sides (:meth:`trtstudio.diff.prefetch.Prefetch.for_pair`), where it has."""
    from trtstudio.bigdocs.gcpause import gc_paused

    with gc_paused():
        groups, bv, ov = align(base.engine.layers, other.engine.layers, known=prefetched)
        rows: list[dict[str, Any]] = []
        tally = _Tally()
        append, add = rows.append, tally.add
        for g in groups:  # each row tallied while it is in the cache
            append(row := _group_json(g, bv, ov))
            add(row)
    p = PairDiff(base, other, rows)
    p.one_sided = tally.one_sided
    p.notes = _notes(base, other, bv, ov)
    figures = prefetched("figures") if prefetched is not None else None
    p.summary, p.ratio = _summary(base, other, tally, figures if figures is not None else sample_figures(base, other))
    p.totals = _totals(tally)
    p.alignment = _alignment(groups, bv, ov)
    p.mismatch = mismatches(base.name, base.engine, other.name, other.engine, p.alignment)
    because = unreliable(p.mismatch)
    p.summary["reliable"] = because is None
    p.summary["unreliable_because"] = because
    if because is not None:
        p.summary["text"] = f"unreliable: {p.summary['text']}"
    p.build = _build(base, other, tally)
    known = prefetched if prefetched is not None else lambda what, side: None
    p.memory = pair_memory(base, other, known("memory", 0), known("memory", 1))
    from trtstudio.engine.buildtime import build_time_rows

    p.build_time = build_time_rows(base.paths, other.paths)
    p.story = _story(p, tally)
    return p


def diff(base: Side, *others: Side, prefetch: Prefetch | None = None) -> Diff:
    """The base against each of ``others`` (``prefetch``: the helper process the command started
    for these sides, :mod:`trtstudio.diff.prefetch`)."""
    if not others:
        raise ValueError("a diff needs a base and at least one other side")
    return Diff([diff_sides(base, o, prefetch.for_pair(k, (base.paths, o.paths)) if prefetch is not None else None)
                 for k, o in enumerate(others, 1)])


def count_non_finite_doc(doc: dict[str, Any]) -> int:
    """NaN/infinite floats in a ``trtstudio.diff/1`` document, as :func:`trtstudio.jsonio.count_non_finite`
    counts them, but reading only the time fields of the groups (100,000s of values: the general
    walk took 0.3 s at 50,000 layers) and the rest of each pair whole."""
    import math
    from itertools import chain
    from operator import itemgetter

    from trtstudio.jsonio import count_non_finite

    n = count_non_finite({k: v for k, v in doc.items() if k != "diffs"})
    times = itemgetter("base_ms", "other_ms", "delta_ms")
    for pair in doc.get("diffs", []):
        n += count_non_finite({k: v for k, v in pair.items() if k not in ("groups", "unmatched")})
        try:  # most documents: a finite exact sum of every time, so no time that is not finite (one C pass)
            if math.isfinite(math.fsum(filter(None, chain.from_iterable(map(times, pair["groups"]))))):
                continue
        except (OverflowError, TypeError, ValueError):  # (a sum beyond floats, a time of another type, inf - inf)
            pass
        for g in pair["groups"]:
            for key in ("base_ms", "other_ms", "delta_ms"):
                v = g[key]
                if type(v) is float and v - v != 0.0:
                    n += 1
    return n
