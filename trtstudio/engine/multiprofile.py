"""An engine's optimization profiles side by side: each profile's figures, and its layers aligned.

An engine built with several optimization profiles holds one copy of its layers per profile; the
copies of profile N>0 carry "[profile N]" in their names, and Myelin renumbers its graphs
(``fc_myl0_4`` in profile 0, ``fc [profile 1]_myl1_4`` in profile 1). :func:`layer_key` is a
layer's name without either; :func:`align` lines the profiles' layers up by it (as ``difflib``
lines up two texts), so that a layer that only one profile has, or that another tactic fused
differently, shows on a row of its own. ``trtstudio layers --all-profiles`` and the window's
profile view print and draw these rows. No Qt here.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Any

from trtstudio.engine.model import EngineInfo, layer_ms
from trtstudio.engine.readers._common import base_name

_MYELIN_GRAPH = re.compile(r"_myl\d+_")
_MYELIN_CONST = re.compile(r"^__mye\d+")


def layer_key(name: str) -> str:
    """``name`` without its "[profile N]" markers and Myelin graph numbers (``_myl11_`` -> ``_myl_``)."""
    return _MYELIN_CONST.sub("__mye", _MYELIN_GRAPH.sub("_myl_", base_name(name)))


def profile_time_ms(engine: EngineInfo) -> float | None:
    """The sum of the layers' times (:func:`~trtstudio.engine.model.layer_ms`), None where no layer is timed."""
    times = [ms for ms in map(layer_ms, engine.layers) if ms is not None]
    return float(sum(times)) if times else None


def align(engines: list[EngineInfo]) -> list[list[int | None]]:
    """Rows of layer indices, one column per engine (None: no such layer in that profile), in the
    first profile's order, the others' extra layers where they come."""
    if not engines:
        return []
    rows: list[list[int | None]] = [[i] + [None] * (len(engines) - 1) for i in range(len(engines[0].layers))]
    keys = [layer_key(lay.name) for lay in engines[0].layers]
    for col, engine in enumerate(engines[1:], start=1):
        theirs = [layer_key(lay.name) for lay in engine.layers]
        out: list[list[int | None]] = []
        out_keys: list[str] = []
        for op, a0, a1, b0, b1 in SequenceMatcher(None, keys, theirs, autojunk=False).get_opcodes():
            if op == "equal":
                for a, b in zip(range(a0, a1), range(b0, b1), strict=True):
                    rows[a][col] = b
                    out.append(rows[a])
                    out_keys.append(keys[a])
                continue
            for a in range(a0, a1):  # delete, replace: the rows of the layers before, then theirs
                out.append(rows[a])
                out_keys.append(keys[a])
            for b in range(b0, b1):  # insert, replace
                row: list[int | None] = [None] * len(engines)
                row[col] = b
                out.append(row)
                out_keys.append(theirs[b])
        rows, keys = out, out_keys
    return rows


def _severities(findings: list[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    return dict(sorted(counts.items()))


def profile_summary(engine: EngineInfo, profile: int) -> dict[str, Any]:
    """One profile's figures: ``profile``, ``layers``, ``time_ms`` (the sum of its layers'), the
    ``findings`` by severity and their kinds, and its shapes (min/opt/max per input) where the
    build's settings name them."""
    kinds: list[str] = []
    for f in engine.findings:
        if f.kind not in kinds:
            kinds.append(f.kind)
    doc: dict[str, Any] = {"profile": profile, "layers": len(engine.layers), "time_ms": profile_time_ms(engine),
                           "findings": _severities(engine.findings), "finding_kinds": kinds}
    shapes = profile_shapes(engine, profile)
    if shapes:
        doc["shapes"] = shapes
    return doc


def profile_shapes(engine: EngineInfo, profile: int) -> dict[str, dict[str, list[int]]] | None:
    """``{input: {min, opt, max}}`` of optimization profile ``profile`` where the build settings
    (trtstudio's build log header, ``settings.profiles``) give them, else None."""
    given = engine.build_settings.get("profiles")
    if not isinstance(given, list) or profile >= len(given) or not isinstance(given[profile], dict):
        return None
    out: dict[str, dict[str, list[int]]] = {}
    for name, mom in given[profile].items():
        if isinstance(mom, (list, tuple)) and len(mom) == 3:
            out[str(name)] = {k: [int(d) for d in v] for k, v in zip(("min", "opt", "max"), mom, strict=True)}
    return out or None


def side_by_side(engines: list[EngineInfo]) -> list[dict[str, Any]]:
    """The aligned rows as documents: ``key`` (the first profile's name without "[profile N]"), per
    profile ``{index, name, type, precision, tactic, time_ms}`` or None, and what ``differ``s between
    the profiles (``type``, ``precision``, ``tactic``; ``missing`` where a profile lacks the layer)."""
    out = []
    for row in align(engines):
        cells: list[dict[str, Any] | None] = []
        key = ""
        for engine, i in zip(engines, row, strict=True):
            if i is None:
                cells.append(None)
                continue
            lay = engine.layers[i]
            key = key or base_name(lay.name)
            cells.append({"index": i, "name": lay.name, "type": lay.type, "precision": lay.precision,
                          "tactic": lay.tactic, "time_ms": layer_ms(lay)})
        present = [c for c in cells if c is not None]
        differ = [k for k in ("type", "precision", "tactic") if len({c[k] for c in present}) > 1]
        out.append({"key": key, "profiles": cells, "differ": differ if len(present) == len(cells) else ["missing"]})
    return out


def analyse_profiles(paths: list[str], graph: Any = None, model_precision: str | None = None) -> list[Any]:
    """Each optimization profile of the engine of ``paths`` read (once), mapped to ``graph`` and
    diagnosed as ``trtstudio layers`` does one: an :class:`~trtstudio.engine.analysis.Analysis` each."""
    from trtstudio.engine.analysis import analyze
    from trtstudio.engine.load import load_engine_profiles

    return [analyze(e, graph, model_precision=model_precision, machine=list(paths), hand_over=True)
            for e in load_engine_profiles(paths)]


def profiles_document(analyses: list[Any]) -> dict[str, Any]:
    """``{profiles: [profile_summary...], side_by_side: [...]}`` of :func:`analyse_profiles`' result
    (what the window's Profiles tab shows)."""
    engines = [a.engine for a in analyses]
    return {"profiles": [profile_summary(e, k) for k, e in enumerate(engines)], "side_by_side": side_by_side(engines)}
