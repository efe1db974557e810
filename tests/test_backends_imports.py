"""No import circle inside trtstudio.backends (build <-> support and inputs <-> shapes imported each
other): every module there can be read, and replaced, below the ones that use it."""

from __future__ import annotations

import itertools

import pytest

grimp = pytest.importorskip("grimp")  # import-linter's graph library


def test_no_import_circle_in_backends() -> None:
    graph = grimp.build_graph("trtstudio")
    mods = sorted(m for m in graph.modules if m.startswith("trtstudio.backends"))
    assert "trtstudio.backends.shapes.probe" in mods and "trtstudio.backends.trt_parser" in mods
    circles = [(a, b) for a, b in itertools.permutations(mods, 2)
               if graph.direct_import_exists(importer=a, imported=b) and graph.chain_exists(importer=b, imported=a)]
    assert circles == []
    assert not graph.chain_exists(importer="trtstudio.backends.support", imported="trtstudio.backends.build")
    assert not graph.chain_exists(importer="trtstudio.backends.inputs", imported="trtstudio.backends.shapes")
