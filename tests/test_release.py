"""trtstudio.bigdocs.release: big documents are freed in the background, never while someone still uses
them, and never a container that something else still refers to."""

from __future__ import annotations

import gc
import weakref
from dataclasses import dataclass, field
from typing import Any

from trtstudio.bigdocs import release


class Leaf:
    pass


@dataclass
class Doc:
    items: list[Any] = field(default_factory=list)
    index: dict[int, Any] = field(default_factory=dict)
    shared: list[int] = field(default_factory=list)


def test_freed_only_after_the_last_other_holder_lets_go() -> None:
    leaves = [Leaf() for _ in range(5000)]
    probe = weakref.ref(leaves[1234])
    shared = list(range(3000))
    doc = Doc(items=leaves, index={i: leaf for i, leaf in enumerate(leaves)}, shared=shared)
    del leaves
    keep = doc  # a view still shows the document
    release.release_later(doc)
    del doc
    assert not release.wait_idle(0.3)  # it waits for ``keep``
    assert len(keep.items) == 5000 and len(keep.index) == 5000 and probe() is not None
    del keep
    assert release.wait_idle(10)
    gc.collect()
    assert probe() is None
    assert shared == list(range(3000))  # referred to from here too: left whole


def test_nothing_to_release_is_a_no_op() -> None:
    release.release_later(None, None)
    assert release.wait_idle(1)
