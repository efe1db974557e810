"""engine.diagnose's one registry (``rules.RULES``): on every real engine of the fixtures, the findings
of ``diagnose`` are exactly what the registry's rules give, in its order, each of a kind and a
severity its entry declares; every kind is owned by one entry; each family module holds the rules
of its family and no other, and each rule documents its kinds."""

from __future__ import annotations

import collections
import dataclasses
import importlib
import inspect
from typing import Any

import pytest
from conftest import SAMPLE
from test_invariants import ENGINES, _load

from trtstudio.engine.diagnose import FAMILIES, RULES, diagnose, rules
from trtstudio.engine.model import Finding

PARSER = [{"node": "/roi/RoiAlign", "op_type": "RoiAlign", "reason": "no importer"}, {"op_type": "NonZero"}]


def _recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, list[tuple[Finding, str, str]]]]:
    """Wrap each registry entry's rule so that every call records (entry, [(finding, kind, severity as
    the rule gave it)]); ``diagnose`` runs the wrapped registry."""
    calls: list[tuple[Any, list[tuple[Finding, str, str]]]] = []

    def wrap(entry: Any) -> Any:
        def check(*args: Any) -> list[Finding]:
            out = entry.check(*args)
            calls.append((entry, [(f, f.kind, f.severity) for f in out]))
            return out
        return dataclasses.replace(entry, check=check)

    monkeypatch.setattr(rules, "RULES", tuple(wrap(r) for r in RULES))
    return calls


@pytest.mark.skipif(not ENGINES, reason="real TensorRT fixtures (../shared/fixtures/trt-real) are absent")
def test_the_findings_are_the_registry_rules_in_its_order(monkeypatch: pytest.MonkeyPatch) -> None:
    import copy

    from trtstudio.graph.model import load_model

    model = load_model(str(SAMPLE), infer_shapes=False) if SAMPLE.is_file() else None
    calls = _recorded(monkeypatch)
    given: dict[str, set[str]] = collections.defaultdict(set)  # entry's kind -> the kinds it gave
    for files in ENGINES:
        engine = _load(tuple(files))
        for graph, kw in ((None, {}), (model, {"unsupported": PARSER, "model_precision": "int8"})):
            calls.clear()
            found = diagnose(copy.deepcopy(engine), graph, **kw)
            # one call per entry, in the registry's order, and nothing but what they gave
            assert [entry.kind for entry, _ in calls] == [r.kind for r in RULES]
            assert [id(f) for _, out in calls for f, _, _ in out] == [id(f) for f in found]
            for entry, out in calls:
                for f, kind, severity in out:
                    assert kind in entry.kinds, (entry.kind, kind, f.message)
                    assert severity in entry.severities, (entry.kind, severity, f.message)
                    given[entry.kind].add(kind)
    # every kind an entry declares is given on the real engines (no entry declares a kind it never gives)
    assert {r.kind: set(r.kinds) for r in RULES} == dict(given)


def test_every_kind_is_owned_by_one_entry() -> None:
    owners = collections.Counter(r.kind for r in RULES)
    assert all(n == 1 for n in owners.values()), owners
    for r in RULES:
        assert r.family in FAMILIES
        assert set(r.severities) <= {"error", "warning", "info"} and r.severities
        assert set(r.needs) <= set(rules.INPUTS)
        assert all(k in owners and k != r.kind for k in r.also)  # given here, owned by another entry


def _rule_functions(module: Any) -> set[Any]:
    """The functions of ``module`` shaped as rules: defined there, public, taking a ``Ctx`` first and
    returning ``list[Finding]``."""
    out = set()
    for name, fn in vars(module).items():
        if not inspect.isfunction(fn) or fn.__module__ != module.__name__ or name.startswith("_"):
            continue
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        if params and params[0].annotation == "Ctx" and sig.return_annotation == "list[Finding]":
            out.add(fn)
    return out


def test_each_family_module_holds_the_rules_of_its_family_only() -> None:
    for family in FAMILIES:
        module = importlib.import_module(f"trtstudio.engine.diagnose.{family}")
        assert _rule_functions(module) == {r.check for r in RULES if r.family == family}, family
    for other in ("context", "classify", "rules"):  # the shared parts hold no rule
        assert not _rule_functions(importlib.import_module(f"trtstudio.engine.diagnose.{other}")), other


def test_each_rule_documents_its_kinds_and_the_package_lists_them_by_family() -> None:
    import trtstudio.engine.diagnose as package

    doc = package.__doc__ or ""
    for r in RULES:
        assert r.doc.lstrip().startswith(f"``{r.kind}``"), r.kind  # its paragraph opens with the kind it owns
        assert all(f"``{k}``" in r.doc for k in r.kinds), r.kind
        # the package's overview names the kind in its family's entry
        entry = doc.split(f"``{r.family}`` (:mod:`.{r.family}`)", 1)[1].split("\n``", 1)[0]
        assert all(f"``{k}``" in entry for k in r.kinds), (r.family, r.kind)
