"""TensorRT-RTX's runtime cache in ``trtstudio build-log --cache`` (backends.build.runtime_cache_doc):
with the installed tensorrt_rtx module, a named file is shown by size, hash and time, and what
cannot be read here (its entries: the API has no listing; whether it is usable: that needs an
engine deserialized on a GPU) is said, from the module's own IRuntimeCache."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

from trtstudio.cli import main

pytestmark = [pytest.mark.rtx, pytest.mark.skipif(importlib.util.find_spec("tensorrt_rtx") is None,
                                                   reason="tensorrt_rtx is not installed")]


def test_runtime_cache_file_shown_with_what_cannot_be_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import tensorrt_rtx as trt

    cache = tmp_path / "app.rtxcache"
    cache.write_bytes(bytes(range(256)) * 3)  # a file the application named; its format is TensorRT-RTX's own
    assert main(["build-log", "--cache", str(cache), "--backend", "rtx", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "trtstudio.runtimecache/1"
    assert doc["bytes"] == 768 and doc["sha256"] == hashlib.sha256(cache.read_bytes()).hexdigest()
    assert doc["runtime"] == f"tensorrt_rtx {trt.__version__}"
    # the module's own API, and entries not listed because it offers no listing
    assert doc["api"] == sorted(n for n in dir(trt.IRuntimeCache) if not n.startswith("_"))
    assert doc["entries"] is None and not doc["empty"]
    assert any(n.startswith("entries:") and "nothing that lists them" in n for n in doc["not_read"])
    assert any("GPU" in n for n in doc["not_read"])
    assert main(["build-log", "--cache", str(cache), "--backend", "rtx"]) == 0
    text = capsys.readouterr().out
    assert "768 bytes" in text and "keeps no timing cache" in text and text.count("not read here:") == 3


def test_empty_missing_and_two_runtime_caches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.rtxcache"
    empty.write_bytes(b"")
    assert main(["build-log", "--cache", str(empty), "--backend", "rtx"]) == 0
    assert "empty: no kernel compiled into it yet" in capsys.readouterr().out
    assert main(["build-log", "--cache", str(tmp_path / "none.rtxcache"), "--backend", "rtx"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["build-log", "--cache", str(empty), "--cache", str(empty), "--backend", "rtx"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be diffed" in err
