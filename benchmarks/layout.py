"""Benchmark trtstudio's layered layout against Graphviz dot and igraph's Sugiyama on an ONNX graph.

    python benchmarks/layout.py --onnx /tmp/t10k.onnx [--no-dot] [--no-igraph] [--timeout S]

Edges: node i -> node j when j consumes an output of i (read with onnx directly). Prints one JSON
line per engine: {"engine", "nodes", "edges", "seconds", "crossings"}; an engine that is missing
or too slow gets an "error" or "timeout" field instead. Crossings of every engine are counted by
the same counter (trtstudio.graph.layout.count_crossings) over adjacent layers, long edges routed
through one virtual point per layer they pass (dot: where its spline crosses the rank's y).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from trtstudio.graph.layout import count_crossings, layout  # noqa: E402


def onnx_edges(path: str) -> tuple[int, np.ndarray, np.ndarray]:
    """(node count, src, dst) of the producer -> consumer edges of the model's main graph."""
    import onnx

    model = onnx.load(path, load_external_data=False)
    nodes = model.graph.node
    producer: dict[str, int] = {}
    for i, node in enumerate(nodes):
        for out in node.output:
            if out:
                producer[out] = i
    src: list[int] = []
    dst: list[int] = []
    for j, node in enumerate(nodes):
        for name in node.input:
            i = producer.get(name)
            if i is not None:
                src.append(i)
                dst.append(j)
    return len(nodes), np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)


def crossings_from_positions(layer: np.ndarray, xpos: np.ndarray, src: np.ndarray, dst: np.ndarray,
                             virtual: list[np.ndarray] | None = None) -> int:
    """Crossings given each node's layer and x, routing long edges through virtual points.

    ``virtual[e]`` (optional) holds the x of edge e at each intermediate layer; without it the
    edge is taken as a straight line between its endpoints.
    """
    keep = src != dst
    src, dst = src[keep], dst[keep]
    if virtual is not None:
        virtual = [v for v, k in zip(virtual, keep, strict=True) if k]
    key = np.unique(src * (layer.size + 1) + dst, return_index=True)[1]
    src, dst = src[key], dst[key]
    if virtual is not None:
        virtual = [virtual[i] for i in key]
    flip = layer[src] > layer[dst]
    s = np.where(flip, dst, src)
    d = np.where(flip, src, dst)
    if virtual is not None:
        virtual = [v[::-1] if f else v for v, f in zip(virtual, flip, strict=True)]
    ls, ld = layer[s], layer[d]
    keep = ls != ld
    n = layer.size
    lay = [layer.astype(np.int64)]
    xs = [xpos.astype(np.float64)]
    seg_u: list[np.ndarray] = []
    seg_v: list[np.ndarray] = []
    next_id = n
    for e in np.flatnonzero(keep):
        span = int(ld[e] - ls[e])
        if span == 1:
            seg_u.append(np.array([s[e]]))
            seg_v.append(np.array([d[e]]))
            continue
        if virtual is not None and len(virtual[e]) == span - 1:
            vx = np.asarray(virtual[e], dtype=np.float64)
        else:
            vx = xpos[s[e]] + (xpos[d[e]] - xpos[s[e]]) * np.arange(1, span) / span
        ids = np.arange(next_id, next_id + span - 1)
        next_id += span - 1
        lay.append(ls[e] + np.arange(1, span))
        xs.append(vx)
        chain = np.r_[s[e], ids, d[e]]
        seg_u.append(chain[:-1])
        seg_v.append(chain[1:])
    all_l = np.concatenate(lay)
    all_x = np.concatenate(xs)
    order = np.lexsort((all_x, all_l))
    pos = np.empty(all_l.size, dtype=np.int64)
    sl = all_l[order]
    starts = np.flatnonzero(np.r_[True, sl[1:] != sl[:-1]])
    pos[order] = np.arange(all_l.size) - np.repeat(starts, np.diff(np.r_[starts, sl.size]))
    if not seg_u:
        return 0
    u = np.concatenate(seg_u)
    v = np.concatenate(seg_v)
    return count_crossings(pos[u], pos[v], all_l[u])


def run_ours(n: int, src: np.ndarray, dst: np.ndarray) -> dict[str, Any]:
    t0 = time.perf_counter()
    lay = layout(n, src, dst)
    sec = time.perf_counter() - t0
    return {"seconds": round(sec, 4), "crossings": lay.crossings, "layers": int(lay.layer.max()) + 1 if n else 0}


def _dot_plain(text: str) -> tuple[dict[str, tuple[float, float]], list[tuple[str, str, np.ndarray]]]:
    nodes: dict[str, tuple[float, float]] = {}
    edges: list[tuple[str, str, np.ndarray]] = []
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "node":
            nodes[parts[1]] = (float(parts[2]), float(parts[3]))
        elif parts[0] == "edge":
            k = int(parts[3])
            pts = np.array([float(p) for p in parts[4 : 4 + 2 * k]]).reshape(k, 2)
            edges.append((parts[1], parts[2], pts))
    return nodes, edges


def run_dot(n: int, src: np.ndarray, dst: np.ndarray, timeout: float) -> dict[str, Any]:
    if shutil.which("dot") is None:
        return {"error": "dot not installed"}
    lines = ["digraph G {", "node [shape=box, width=2.222, height=0.5, fixedsize=true];"]
    lines += [f"n{i};" for i in range(n)]
    lines += [f"n{a} -> n{b};" for a, b in zip(src.tolist(), dst.tolist(), strict=True)]
    lines.append("}")
    with tempfile.NamedTemporaryFile("w", suffix=".dot", delete=False) as fh:
        fh.write("\n".join(lines))
        path = fh.name
    try:
        t0 = time.perf_counter()
        proc = subprocess.run(["dot", "-Tplain", path], capture_output=True, text=True, timeout=timeout)
        sec = time.perf_counter() - t0
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip()[:200]}
    nodes, edges = _dot_plain(proc.stdout)
    ys = np.array([nodes[f"n{i}"][1] for i in range(n)])
    xs = np.array([nodes[f"n{i}"][0] for i in range(n)])
    rank_y, layer = np.unique(-ys, return_inverse=True)  # dot's y grows upward
    rank_y = -rank_y
    # x of each spline where it crosses each intermediate rank (control polygon, linearly)
    virt: dict[tuple[int, int], np.ndarray] = {}
    for a, b, pts in edges:
        ia, ib = int(a[1:]), int(b[1:])
        la, lb = layer[ia], layer[ib]
        lo, hi = min(la, lb), max(la, lb)
        if hi - lo < 2:
            continue
        ry = rank_y[lo + 1 : hi]
        py, px = pts[:, 1], pts[:, 0]
        o = np.argsort(py)
        vx = np.interp(ry, py[o], px[o])
        virt[(ia, ib)] = vx if la < lb else vx[::-1]
    virtual = [virt.get((a, b), np.zeros(0)) for a, b in zip(src.tolist(), dst.tolist(), strict=True)]
    cr = crossings_from_positions(layer, xs, src, dst, virtual)
    return {"seconds": round(sec, 4), "crossings": cr, "layers": int(layer.max()) + 1}


def _igraph_child(n: int, src: np.ndarray, dst: np.ndarray, q: Any) -> None:
    try:
        import igraph

        keep = src != dst
        s, d = src[keep], dst[keep]
        key = np.unique(s * (n + 1) + d, return_index=True)[1]
        s, d = s[key], d[key]
        g = igraph.Graph(n=n, edges=list(zip(s.tolist(), d.tolist(), strict=True)), directed=True)
        t0 = time.perf_counter()
        lay = g.layout_sugiyama()
        sec = time.perf_counter() - t0
        coords = np.asarray(lay.coords)[:n]
        layer = np.round(coords[:, 1]).astype(np.int64)
        virtual = [np.asarray(r, dtype=np.float64).reshape(-1, 2)[:, 0] for r in lay.edge_routing]
        cr = crossings_from_positions(layer, coords[:, 0], s, d, virtual)
        q.put({"seconds": round(sec, 4), "crossings": cr, "layers": int(layer.max()) + 1})
    except Exception as exc:  # noqa: BLE001 - reported as the engine's error
        q.put({"error": f"{type(exc).__name__}: {exc}"})


def run_igraph(n: int, src: np.ndarray, dst: np.ndarray, timeout: float) -> dict[str, Any]:
    try:
        import igraph  # noqa: F401
    except ImportError:
        return {"error": "igraph not installed"}
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_igraph_child, args=(n, src, dst, q))
    p.start()
    try:
        res = q.get(timeout=timeout)
    except Exception:  # noqa: BLE001 - queue.Empty
        p.kill()
        p.join()
        return {"timeout": timeout}
    p.join()
    return res


def main(argv: list[str] | None = None) -> int:
    """Run the engines and print one JSON line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--onnx", required=True)
    parser.add_argument("--no-dot", action="store_true")
    parser.add_argument("--no-igraph", action="store_true")
    parser.add_argument("--timeout", type=float, default=120.0, help="per external engine, seconds")
    parser.add_argument("--repeat", type=int, default=3, help="runs of ours; the best time is printed")
    args = parser.parse_args(argv)
    n, src, dst = onnx_edges(args.onnx)
    base = {"nodes": n, "edges": int(src.size)}
    runs = [run_ours(n, src, dst) for _ in range(max(args.repeat, 1))]
    best = min(runs, key=lambda r: r["seconds"])
    print(json.dumps({"engine": "trtstudio", **base, **best}), flush=True)
    if not args.no_dot:
        print(json.dumps({"engine": "dot", **base, **run_dot(n, src, dst, args.timeout)}), flush=True)
    if not args.no_igraph:
        print(json.dumps({"engine": "igraph", **base, **run_igraph(n, src, dst, args.timeout)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
