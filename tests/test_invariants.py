"""Invariants over every real engine in ``../shared/fixtures/trt-real`` (as scikit-learn runs its
common checks on every estimator): what holds for any engine holds for each one found there, so a
fixture added later is covered without a new test.

An engine is the files of one folder that share the part of their name before ``.engine`` (TREx's
``x.onnx.engine.graph.json``, ``.profile.json``, ...), else one file. A group of files that is not
an engine (a Polygraphy model dump, a log of a failed build) must be refused in one line, never
crash. For each engine:

- per inference everywhere: time by type == time by precision == the engine's layer time per
  inference == the sum of each layer's per-inference time (median, else average) == the layer
  table's split == the report's figure; the sum of the profile's averages == its total over runs
  divided by its count of runs (within rounding), so no figure is a total over runs;
- the layers read == the layers the file lists;
- a diff of an engine with itself is all ``same``; diff(A, B) and diff(B, A) hold the same groups
  with their changes mirrored and their deltas negated (every pair within one source);
- every number of the report's JSON and of ``layers --json`` is finite, the HTML report shows the
  report's own figures, and every bar of the plots shows the value behind it.
"""

from __future__ import annotations

import collections
import itertools
import json
import math
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import FIXTURES

ROOT = FIXTURES
MIRRORED = {"only_base": "only_other", "only_other": "only_base"}


def _engine_key(path: Path) -> tuple[Path, str]:
    base = re.sub(r"__added_in_[0-9a-f]+", "", path.name)
    return path.parent, base.split(".engine", 1)[0] if ".engine" in base else base


def _groups() -> list[list[Path]]:
    """Every file under the fixtures, grouped into the engines they describe."""
    if not ROOT.is_dir():
        return []
    groups: dict[tuple[Path, str], list[Path]] = collections.defaultdict(list)
    for p in sorted(ROOT.rglob("*")):
        if p.is_file() and p.suffix.lower() != ".md":
            groups[_engine_key(p)].append(p)
    return list(groups.values())


GROUPS = _groups()


def _id(files: list[Path]) -> str:
    return str(files[0].relative_to(ROOT).parent / _engine_key(files[0])[1])


@cache
def _load(files: tuple[Path, ...]) -> Any:
    """The engine of ``files``, or the one-line refusal (an ``InputError``'s text)."""
    from trtstudio.engine.load import load_engine, require_layers
    from trtstudio.errors import InputError

    try:
        engine = load_engine(list(files))
        require_layers(engine)
        return engine
    except InputError as e:
        return str(e)


def _engines() -> list[list[Path]]:
    return [g for g in GROUPS if not isinstance(_load(tuple(g)), str)] if GROUPS else []


ENGINES = _engines()
needs_fixtures = pytest.mark.skipif(not GROUPS, reason="real TensorRT fixtures (../shared/fixtures/trt-real) are absent")
per_engine = pytest.mark.parametrize("files", ENGINES, ids=[_id(g) for g in ENGINES])


@needs_fixtures
def test_the_fixtures_hold_engines_and_everything_else_is_refused_in_one_line() -> None:
    assert len(ENGINES) >= 50  # TREx's, the cookbook's, fuzzylabs', HaX-CoNN's, DETR's...
    for g in GROUPS:
        got = _load(tuple(g))
        if isinstance(got, str):
            assert "\n" not in got.strip() and str(g[0]) in got, got


def _close(a: float | None, b: float | None, rel: float = 1e-9) -> bool:
    return a is not None and b is not None and math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


def _profile_docs(files: list[Path]) -> list[list[dict[str, Any]]]:
    """The trtexec ``--exportProfile`` documents among ``files`` (a list of records, the first
    ``{"count": N}``)."""
    out = []
    for p in files:
        if p.suffix.lower() not in (".json", ".profile"):
            continue
        try:
            doc = json.loads(p.read_text(errors="replace"))
        except ValueError:
            continue
        if isinstance(doc, list) and doc and isinstance(doc[0], dict) and "count" in doc[0]:
            out.append(doc)
    return out


@needs_fixtures
@per_engine
def test_every_time_is_per_inference_and_every_view_sums_to_the_same(files: list[Path]) -> None:
    from trtstudio import api
    from trtstudio.engine.summary import average_time_ms
    from trtstudio.engine.table import layer_columns, time_by
    from trtstudio.report.model import build_report

    engine = _load(tuple(files))
    per = [lay.time.per_inference_ms for lay in engine.layers if lay.time is not None]
    per = [v for v in per if v is not None]
    total = engine.total_time_ms
    if not per:
        assert total is None
        return
    assert _close(total, float(sum(per)))
    for key in ("type", "precision"):
        assert _close(sum(v for _, v in time_by(engine, key)), total), key
    cols = layer_columns(engine)
    assert _close(float(np.nansum(cols.num["ms"])), total)
    assert _close(sum(v for _, v in cols.time_by_type), total) and _close(sum(v for _, v in cols.time_by_precision), total)
    pct = cols.num["percent"][~np.isnan(cols.num["ms"])]
    assert float(np.nansum(pct)) == pytest.approx(100.0, abs=0.5)  # the profile's shares, or ours
    plan = api.open_engine(*map(str, files))
    assert _close(sum(plan.time_by_type().values()), total) and _close(sum(plan.time_by_precision().values()), total)
    rep = build_report(engine=engine)
    assert _close(rep.engine["total_layer_time_ms"], total)
    # no figure is a total over the profile's runs: the runs' total over their count is the sum of
    # the averages (TREx's "average time"), which our per-inference figure stays close to
    for doc in _profile_docs(files):
        rows = [r for r in doc[1:] if isinstance(r, dict) and "timeMs" in r]
        count = doc[0]["count"]
        if not rows or not count or count <= 1:
            continue
        per_run = sum(r["timeMs"] for r in rows) / count
        averages = sum(r["averageMs"] for r in rows if r.get("averageMs") is not None)
        assert averages == pytest.approx(per_run, rel=0.01)  # the file's own rounding
        assert average_time_ms(engine) == pytest.approx(per_run, rel=0.01)
        assert total == pytest.approx(per_run, rel=0.15)  # medians below averages, never x count
        assert total < sum(r["timeMs"] for r in rows) / 2


def _listed_layers(p: Path) -> int | None:
    """How many layers the file itself lists (JSON layer information and profiles), None for
    files whose count needs a reader."""
    if p.suffix.lower() not in (".json", ".profile"):
        return None
    try:
        doc = json.loads(p.read_text(errors="replace"))
    except ValueError:
        return None
    if isinstance(doc, dict) and isinstance(doc.get("Layers"), list):
        return len(doc["Layers"])
    if isinstance(doc, list) and doc and isinstance(doc[0], dict) and "count" in doc[0]:
        return sum(1 for r in doc[1:] if isinstance(r, dict) and "name" in r and "[profile" not in str(r["name"]))
    return None


@needs_fixtures
@per_engine
def test_the_layers_read_are_the_layers_the_files_list(files: list[Path]) -> None:
    engine = _load(tuple(files))
    counts = {p.name: n for p in files if (n := _listed_layers(p)) is not None}
    for name, n in counts.items():
        assert len(engine.layers) == n, (name, n, len(engine.layers))


def _side(files: list[Path]) -> Any:
    from trtstudio.diff.sides import load_side

    return load_side(",".join(map(str, files)))


@needs_fixtures
@per_engine
def test_a_diff_of_an_engine_with_itself_is_all_same(files: list[Path]) -> None:
    from trtstudio.diff.core import diff_sides

    engine = _load(tuple(files))
    p = diff_sides(_side(files), _side(files))
    assert {g["change"] for g in p.groups} == {"same"}
    assert sum(len(g["base_layers"]) for g in p.groups) == len(engine.layers)
    assert all(g["base_layers"] == g["other_layers"] for g in p.groups)
    assert all(g["delta_ms"] in (None, 0.0) for g in p.groups)
    if engine.total_time_ms:
        assert _close(p.summary["layer_sum_ms"]["base"], engine.total_time_ms)


def _pairs() -> list[tuple[list[Path], list[Path]]]:
    by_source: dict[str, list[list[Path]]] = collections.defaultdict(list)
    for g in ENGINES:
        by_source[g[0].relative_to(ROOT).parts[0]].append(g)
    return [pair for engines in by_source.values() for pair in itertools.combinations(engines, 2)]


def _groups_of(p: Any, swap: bool) -> tuple[collections.Counter[Any], dict[Any, float | None]]:
    keys: collections.Counter[Any] = collections.Counter()
    deltas: dict[Any, float | None] = {}
    for g in p.groups:
        b, o = tuple(g["base_layers"]), tuple(g["other_layers"])
        change = g["change"]
        if swap:
            b, o, change = o, b, MIRRORED.get(change, change)
        keys[(b, o, change)] += 1
        d = g["delta_ms"]
        deltas[(b, o)] = None if d is None else (-d if swap else d)
    return keys, deltas


@needs_fixtures
def test_diff_a_b_mirrors_diff_b_a_on_every_pair_of_one_source() -> None:
    from trtstudio.diff.core import diff_sides

    pairs = _pairs()
    assert len(pairs) >= 100
    sides: dict[tuple[Path, ...], Any] = {}

    def side(files: list[Path]) -> Any:
        if tuple(files) not in sides:
            sides[tuple(files)] = _side(files)
        return sides[tuple(files)]

    bad = []
    for a, b in pairs:
        ab, ba = diff_sides(side(a), side(b)), diff_sides(side(b), side(a))
        k1, d1 = _groups_of(ab, swap=False)
        k2, d2 = _groups_of(ba, swap=True)
        if k1 != k2:
            bad.append((_id(a), _id(b), sorted(map(str, k1 - k2))[:2], sorted(map(str, k2 - k1))[:2]))
            continue
        for k, v in d1.items():
            w = d2[k]
            assert (v is None) == (w is None) and (v is None or w is None or math.isclose(v, w, abs_tol=1e-12)), (k, v, w)
        sb, so = ab.summary["layer_sum_ms"], ba.summary["layer_sum_ms"]
        assert (sb["base"], sb["other"]) == (pytest.approx(so["other"]), pytest.approx(so["base"]))
    assert not bad, bad[:3]


def _numbers(doc: Any) -> list[float]:
    if isinstance(doc, bool):
        return []
    if isinstance(doc, int | float):
        return [float(doc)]
    if isinstance(doc, dict):
        return [x for v in doc.values() for x in _numbers(v)]
    if isinstance(doc, list):
        return [x for v in doc for x in _numbers(v)]
    return []


@needs_fixtures
@per_engine
def test_the_report_is_finite_and_its_html_shows_its_own_figures(files: list[Path]) -> None:
    from trtstudio.jsonio import dumps
    from trtstudio.report.html import render_report
    from trtstudio.report.model import build_report

    rep = build_report(engine=[str(f) for f in files])
    doc = json.loads(dumps(rep.to_json()))  # strict: NaN or infinity would not parse back
    assert all(math.isfinite(x) for x in _numbers(doc))
    html, _ = render_report(rep)
    eng = doc["engine"]
    assert f"{eng['layers']:,}" in html or str(eng["layers"]) in html
    total = eng.get("total_layer_time_ms")
    if total:  # the Engine table's row shows it, to its printed precision
        shown = re.search(r"<td>layer time per inference ms[^<]*</td><td>([^<]+)</td>", html)
        assert shown is not None and float(shown.group(1).replace(",", "")) == pytest.approx(total, rel=1e-3, abs=1e-4)
    charts = doc.get("plots", {}).get("layer_times")
    engine = _load(tuple(files))
    if charts:  # the chart's data is each layer's time per inference
        want = [(lay.name, lay.time.per_inference_ms) for lay in engine.layers
                if lay.time is not None and lay.time.per_inference_ms is not None]
        assert list(zip(charts["names"], charts["ms"], strict=True)) == [(n, pytest.approx(v)) for n, v in want]


_BAR = re.compile(r'<rect x="(\d+)" y="[\d.]+" width="([\d.]+)" height="13" fill="[^"]+"/><text x="[\d.]+" y="[\d.]+" '
                  r'font-size="10">([^<]*)</text>')


def _bars(svg: str) -> list[tuple[float, str]]:
    return [(float(w), text) for _, w, text in _BAR.findall(svg)]


@needs_fixtures
@per_engine
def test_every_bar_shows_the_value_behind_it(files: list[Path]) -> None:
    from trtstudio import api
    from trtstudio.report.plots import bar_text

    engine = _load(tuple(files))
    if engine.total_time_ms is None:
        return
    plan = api.open_engine(*map(str, files))
    for data, svg in ((plan.time_by_type(), str(plan.plot_time_by_type())),
                      (plan.time_by_precision(), str(plan.plot_time_by_precision()))):
        bars = _bars(svg)
        assert [t.split(" ms")[0] for _, t in bars] == [bar_text(v) for v in data.values()]
        widths = np.array([w for w, _ in bars])
        values = np.array(list(data.values()))
        if values.max() > 0:  # the widths are the values to the drawing's scale (0.1 px)
            scale = widths.max() / values.max()
            assert np.allclose(widths, values * scale, atol=0.11)


@needs_fixtures
@per_engine
def test_layers_json_is_finite_and_gives_the_same_layers(files: list[Path], capfd: pytest.CaptureFixture[str]) -> None:
    from trtstudio import cli

    rc = cli.main(["layers", *map(str, files), "--json"])
    out = capfd.readouterr().out
    assert rc == 0
    doc = json.loads(out)
    assert all(math.isfinite(x) for x in _numbers(doc))
    engine = _load(tuple(files))
    assert [lay["name"] for lay in doc["layers"]] == [lay.name for lay in engine.layers]


def _forms(files: list[Path]) -> list[str]:
    """The ways a user names this engine: its files joined with commas, always; its TREx prefix
    where its files have one; its folder where the folder holds this engine alone."""
    from trtstudio.engine.naming import NamingError, resolve

    forms = [",".join(map(str, files))]
    names = [f.name for f in files]
    common = os.path.commonprefix(names) if len(names) > 1 else ""
    common = common[: common.rfind(".")] if "." in common else ""
    if common.endswith(".engine"):
        forms.append(str(files[0].parent / common))
    try:
        in_folder = resolve(str(files[0].parent)).files
    except NamingError:
        in_folder = []
    if in_folder and set(in_folder) <= {str(f) for f in files}:
        forms.append(str(files[0].parent))
    return forms


@needs_fixtures
@per_engine
def test_every_form_of_naming_an_engine_gives_the_same_layers_everywhere(files: list[Path],
                                                                        capfd: pytest.CaptureFixture[str]) -> None:
    from trtstudio import api, cli
    from trtstudio.diff.sides import load_side

    engine = _load(tuple(files))
    names = [lay.name for lay in engine.layers]
    forms = _forms(files)
    for form in forms:
        assert [lay.name for lay in api.open_engine(form).engine.layers] == names, form
        assert [lay.name for lay in load_side(form).engine.layers] == names, form
    for form in forms[1:]:  # the short forms on the command line too
        assert cli.main(["layers", form, "--json"]) == 0
        assert [lay["name"] for lay in json.loads(capfd.readouterr().out)["layers"]] == names, form
