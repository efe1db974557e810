"""The display graph lives in the core: building it loads neither Qt nor any module of the window."""

from __future__ import annotations

import subprocess
import sys

import grimp

PROBE = """
import sys
import onnx
from onnx import helper, TensorProto
from trtstudio.graph.model import load_model
from trtstudio.graph.display import build_display
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
g = helper.make_graph([helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Relu", ["h"], ["y"])], "g", [x], [y])
onnx.save(helper.make_model(g), sys.argv[1])
d = build_display(load_model(sys.argv[1], infer_shapes=False).graph)
print(d.n, sorted(m for m in sys.modules if m.startswith(("PySide6", "pyqtgraph", "trtstudio.ui"))))
"""


def test_building_a_display_graph_loads_no_window_module(tmp_path) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "m.onnx")],
                         capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert int(out[0]) == 4  # input, two nodes, output
    assert out[1].strip() == "[]"


def test_graph_package_imports_nothing_from_ui() -> None:
    graph = grimp.build_graph("trtstudio", exclude_type_checking_imports=True)
    found = [m for m in graph.modules if m.startswith("trtstudio.graph")
             if any(i.startswith("trtstudio.ui") for i in graph.find_upstream_modules(m))]
    assert not found, f"graph modules that reach trtstudio.ui: {found}"
