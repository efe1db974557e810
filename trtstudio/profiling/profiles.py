"""TensorRT optimization profiles chosen from measurements (a sweep's steps or a shape mix).

A profile is min/opt/max per dynamic input. TensorRT tunes its kernels at ``opt``; a server that
pads requests to the profile's ``opt`` (to run the one tuned shape, or to batch requests) needs an
``opt`` that covers every request the profile takes: its group's largest shape. The latency lost to
padding of a set of profiles is then

    sum over shapes s of count(s) * (L(opt of s's profile) - L(s))

with ``L`` the measured median latency of a shape. :func:`recommend` tries one profile (all shapes)
and two profiles (the shapes ordered by size and split in two where the loss is least), and
recommends two only when they lose ``SPLIT_GAIN`` less of the mix's latency. Where a group's largest
shape (the elementwise max) was not measured, its latency is the largest measured in the group (a
lower bound, said in ``estimated``). Each profile also names its ``typical`` shape (where the group
spends most time): the ``opt`` for a server that runs requests at their own shapes, unpadded.

The profiles print as ``trtstudio build`` flags (``--min-shapes/--opt-shapes/--max-shapes``, one
profile per engine) and trtexec ``--minShapes/--optShapes/--maxShapes``; an engine holding both
profiles is built through :class:`~trtstudio.backends.build_request.BuildRequest` (``profiles``
takes several), see :func:`build_profiles`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

Shape = tuple[int, ...]
SPLIT_GAIN = 0.05  # two profiles when they lose 5% less of the mix's latency to padding than one


@dataclass(frozen=True)
class ShapePoint:
    """One measured shape: every input's shape, how often it comes, its median latency (ms)."""

    shapes: dict[str, Shape]
    count: float
    latency_ms: float


def _x(shape: Any) -> str:
    return "x".join(str(int(d)) for d in shape)


def _covers(big: dict[str, Shape], small: dict[str, Shape]) -> bool:
    return all(len(big[n]) == len(s) and all(b >= d for b, d in zip(big[n], s, strict=True)) for n, s in small.items())


def _size(p: ShapePoint) -> int:
    return int(sum(int(np.prod(s)) for s in p.shapes.values()))


def _group(points: list[ShapePoint], names: list[str]) -> dict[str, Any]:
    """The profile over ``points`` (see the module docstring) and its padding loss; ``typical`` is the
    shape where the group spends most time (count x latency), the opt of a server that does not pad."""
    mins = {n: tuple(int(v) for v in np.min([p.shapes[n] for p in points], axis=0)) for n in names}
    maxs = {n: tuple(int(v) for v in np.max([p.shapes[n] for p in points], axis=0)) for n in names}
    at_max = next((p for p in points if all(p.shapes[n] == maxs[n] for n in names)), None)
    l_max = at_max.latency_ms if at_max is not None else max(p.latency_ms for p in points)
    loss = float(sum(p.count * max(0.0, l_max - p.latency_ms) for p in points))
    typical = max(points, key=lambda p: (p.count * p.latency_ms, p.count))
    return {"inputs": {n: {"min": list(mins[n]), "opt": list(maxs[n]), "max": list(maxs[n])} for n in names},
            "typical": {n: list(typical.shapes[n]) for n in names},
            "shapes": len(points), "requests": float(sum(p.count for p in points)), "padding_loss_ms": loss,
            "estimated": at_max is None}


def _flags(prof: dict[str, Any], model: str | None) -> tuple[str, str]:
    parts = {k: ",".join(f"{n}:{_x(v[k])}" for n, v in prof["inputs"].items()) for k in ("min", "opt", "max")}
    build = (f"trtstudio build {model or 'MODEL'} --min-shapes {parts['min']} --opt-shapes {parts['opt']} "
             f"--max-shapes {parts['max']}")
    trtexec = f"--minShapes={parts['min']} --optShapes={parts['opt']} --maxShapes={parts['max']}"
    return build, trtexec


def recommend(points: list[ShapePoint], names: list[str], basis: str, model: str | None = None) -> dict[str, Any] | None:
    """One and two profiles over ``points`` for the inputs ``names`` (the dynamic ones), the
    recommended count and a sentence; None with no measured point or no input to set."""
    points = [p for p in points if p.latency_ms == p.latency_ms and p.count > 0]
    if not points or not names:
        return None
    total = sum(p.count * p.latency_ms for p in points)
    requests = sum(p.count for p in points)
    one = _group(points, names)
    ordered = sorted(points, key=lambda p: (_size(p), [p.shapes[n] for n in names]))
    two: list[dict[str, Any]] | None = None
    for k in range(1, len(ordered)):
        cand = [_group(ordered[:k], names), _group(ordered[k:], names)]
        if two is None or sum(c["padding_loss_ms"] for c in cand) < sum(c["padding_loss_ms"] for c in two):
            two = cand

    def option(profs: list[dict[str, Any]]) -> dict[str, Any]:
        loss = sum(p["padding_loss_ms"] for p in profs)
        for p in profs:
            p["build_flags"], p["trtexec"] = _flags(p, model)
        return {"profiles": profs, "padding_loss_ms_per_request": loss / requests,
                "padding_loss_fraction": loss / total if total > 0 else 0.0}

    out: dict[str, Any] = {"basis": basis, "inputs": list(names), "one": option([one]),
                           "two": option(two) if two is not None else None}
    f1 = out["one"]["padding_loss_fraction"]
    f2 = out["two"]["padding_loss_fraction"] if two is not None else f1
    out["recommended"] = 2 if two is not None and f1 - f2 > SPLIT_GAIN else 1
    if out["recommended"] == 2:
        out["text"] = (f"two profiles: padding to opt loses {100 * f2:.1f}% of the {basis}'s latency, one profile "
                       f"{100 * f1:.1f}% ({len(points)} measured shapes)")
    else:
        out["text"] = (f"one profile: padding to opt loses {100 * f1:.1f}% of the {basis}'s latency"
                       + (f"; two would lose {100 * f2:.1f}%, not {100 * SPLIT_GAIN:.0f} points less" if two else "")
                       + f" ({len(points)} measured shapes)")
    return out


def dynamic_names(specs: list[dict[str, Any]]) -> list[str]:
    """The inputs with a dynamic dimension (what a profile must set)."""
    return [s["name"] for s in specs if any(not isinstance(d, int) or d < 0 for d in s["shape"])]


def from_sweep(results: list[Any], names: list[str] | None = None, model: str | None = None) -> dict[str, Any] | None:
    """Profiles from a sweep's steps (each step counted once, its median as its latency)."""
    points = [ShapePoint(r.step.shapes, 1.0, float(np.median(r.latencies))) for r in results if r.ok]
    if names is None:  # the inputs whose shape the sweep changed
        names = sorted({n for p in points for n in p.shapes if len({p2.shapes[n] for p2 in points}) > 1})
    return recommend(points, names, "sweep", model)


def build_profiles(doc: dict[str, Any], which: int | None = None) -> list[dict[str, tuple[Shape, Shape, Shape]]]:
    """The recommended profiles (``which``: 1 or 2, default the recommended count) as
    :class:`~trtstudio.backends.build_request.BuildRequest` ``profiles``."""
    n = which or int(doc["recommended"])
    option = doc["one"] if n == 1 else doc["two"]
    return [{name: (tuple(v["min"]), tuple(v["opt"]), tuple(v["max"])) for name, v in p["inputs"].items()}
            for p in option["profiles"]]


def render_text(doc: dict[str, Any] | None, model: str | None = None) -> list[str]:
    """Lines for a text report: the sentence, then each recommended profile's flags."""
    if not doc:
        return []
    lines = ["", f"optimization profiles from the {doc['basis']}: {doc['text']}"]
    option = doc["one"] if doc["recommended"] == 1 else doc["two"]
    for k, prof in enumerate(option["profiles"]):
        head = f"  profile {k}" if len(option["profiles"]) > 1 else "  profile"
        ranges = "; ".join(f"{n} {_x(v['min'])} .. opt {_x(v['opt'])} .. {_x(v['max'])}" for n, v in prof["inputs"].items())
        typical = ", ".join(f"{n} {_x(v)}" for n, v in prof["typical"].items())
        lines.append(f"{head}: {ranges} ({prof['shapes']} shapes; most time at {typical}, the opt for unpadded requests)")
        lines.append(f"    {prof['build_flags']}")
        lines.append(f"    trtexec {prof['trtexec']}")
    if len(option["profiles"]) > 1:
        lines.append("  (`trtstudio build` makes one profile per engine; one engine with both: "
                     "BuildRequest(profiles=[...]) in trtstudio.backends.build_request)")
    return lines
