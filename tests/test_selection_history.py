"""The workspace's selection history (issue 52 item 2), without Qt: back/forward as a browser's,
Esc's empty selection not recorded (back returns to what it cleared), replays not recorded, a new
engine or model starts a new history."""

from __future__ import annotations

from trtstudio.workspace import Workspace


def test_back_forward_and_esc() -> None:
    ws = Workspace()
    heard: list[list[int]] = []
    ws.events.connect("selection", lambda w: heard.append(list(w.selection.layers)))
    for layers in ([1], [2], [3]):
        ws.select_layers(layers)
    ws.select_layers([3])  # the same again: one entry
    assert [s.layers for s in ws.history.items] == [[1], [2], [3]]
    ws.clear_selection()
    assert ws.selection.layers == [] and heard[-1] == []
    assert ws.history.can_go_back(ws.selection)
    assert ws.selection_back().layers == [3]  # back to what Esc cleared
    with ws.replaying():
        ws.select_layers([3])
    assert ws.selection_back().layers == [2]
    with ws.replaying():
        ws.select_layers([2])
    assert ws.selection_back().layers == [1]
    with ws.replaying():
        ws.select_layers([1])
    assert ws.selection_back() is None and not ws.history.can_go_back(ws.selection)
    assert ws.selection_forward().layers == [2]
    with ws.replaying():
        ws.select_layers([2])
    ws.select_nodes(["Conv_0"])  # a new selection after going back drops [3]
    assert [s.layers or s.nodes for s in ws.history.items] == [[1], [2], ["Conv_0"]]
    assert ws.selection_forward() is None
    ws.set_engine(None)
    assert ws.history.items == [] and ws.selection_back() is None


def test_history_is_bounded() -> None:
    ws = Workspace()
    ws.history.limit = 5
    for i in range(12):
        ws.select_layers([i])
    assert [s.layers[0] for s in ws.history.items] == [7, 8, 9, 10, 11] and ws.history.pos == 4
