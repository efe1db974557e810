"""trtstudio.bigdocs.gcpause.gc_paused, which the engine readers, the mapping, the rules, load_model and
the layer document's encoding share."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from trtstudio.bigdocs.gcpause import gc_paused
from trtstudio.engine.load import load_engine
from trtstudio.errors import InputError


@pytest.fixture
def collector():  # type: ignore[no-untyped-def]
    was = gc.isenabled()
    gc.enable()
    gc.unfreeze()
    yield
    gc.unfreeze()
    (gc.enable if was else gc.disable)()


def test_off_inside_and_frozen_after_success(collector) -> None:  # type: ignore[no-untyped-def]
    kept = []
    with gc_paused():
        assert not gc.isenabled()
        kept.extend([i] for i in range(1000))
    assert gc.isenabled() and gc.get_freeze_count() >= len(kept)


def test_freeze_false_and_a_disabled_collector_freeze_nothing(collector) -> None:  # type: ignore[no-untyped-def]
    with gc_paused(freeze=False):
        assert not gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled() and gc.get_freeze_count() == 0


def test_an_engine_file_that_fails_to_read_freezes_nothing(collector, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.layers.json"
    bad.write_text('{"Layers": [{"Name": "a", "LayerType": ')
    with pytest.raises(InputError):
        load_engine([bad])
    assert gc.isenabled() and gc.get_freeze_count() == 0
    good = tmp_path / "good.layers.json"
    good.write_text('{"Layers": [{"Name": "a", "LayerType": "Convolution"}]}')
    assert load_engine([good]).layers[0].name == "a"
    assert gc.isenabled() and gc.get_freeze_count() > 0
