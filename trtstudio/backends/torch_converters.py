"""Converters onnx2torch lacks, registered into its registry by :func:`register` (imports torch and onnx2torch:
only ``torch_convert`` imports this module, once the torch backend converts an ONNX model).

- ``GlobalMaxPool``: the maximum over every spatial axis, kept as size-1 axes.
- ``Pad`` in ``reflect``/``edge`` mode on any rank (opsets 11, 13, 18): onnx2torch's own refuses a pad of
  the last axis of a 2-D tensor (silero-vad's STFT); constant mode stays onnx2torch's.
- ``LSTM`` (opsets 7 and 14): ``torch.nn.LSTM`` with ONNX's gate order (i, o, f, c) reordered to
  PyTorch's (i, f, c, o) and the two bias halves as ``bias_ih``/``bias_hh``. Forward, reverse and
  bidirectional, ``layout`` 0 and 1, optional initial states. Refused with the reason: peepholes (P),
  ``clip``, activations other than the default, ``input_forget``, per-batch ``sequence_lens``, and
  weights that are not initializers.
"""

from __future__ import annotations

from typing import Any

import torch
from onnx2torch.node_converters.registry import _CONVERTER_REGISTRY, OperationDescription, add_converter
from onnx2torch.utils.common import OnnxMapping, OperationConverterResult, onnx_mapping_from_node
from torch import nn

_DEFAULT_ACTIVATIONS = {"Sigmoid", "Tanh"}
_PAD_MODES = {"reflect": "reflect", "edge": "replicate"}
_REGISTERED = False


class GlobalMaxPool(nn.Module):
    """ONNX GlobalMaxPool: max over axes 2.. with keepdim."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=tuple(range(2, x.dim())), keepdim=True)


class Pad(nn.Module):
    """ONNX Pad in reflect/replicate mode: the padded trailing axes k stay, the axes before them are
    folded into one batch axis (PyTorch pads k axes of a (k+1)-D tensor), then unfolded."""

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

    def forward(self, x: torch.Tensor, pads: torch.Tensor) -> torch.Tensor:
        p = [int(v) for v in pads.tolist()]
        n = len(p) // 2
        begin, end = p[:n], p[n:]
        padded = [i for i in range(n) if begin[i] or end[i]]
        if not padded:
            return x
        k = n - padded[0]
        if k > 3:
            raise RuntimeError(f"{self.mode} padding of {k} axes: PyTorch pads at most 3")
        torch_pads = [v for i in range(n - 1, n - k - 1, -1) for v in (begin[i], end[i])]
        lead = x.shape[: x.dim() - k]
        y = nn.functional.pad(x.reshape(-1, *x.shape[x.dim() - k:]), torch_pads, mode=self.mode)
        return y.reshape(*lead, *y.shape[1:])


class Lstm(nn.Module):
    """ONNX LSTM on ``torch.nn.LSTM``: returns (Y, Y_h, Y_c) in ONNX's layouts."""

    def __init__(self, lstm: nn.LSTM, reverse: bool, batch_first: bool) -> None:
        super().__init__()
        self.lstm = lstm
        self.reverse = reverse
        self.batch_first = batch_first  # ONNX layout 1: X [batch, seq, in], Y [batch, seq, dirs, hidden]

    def forward(self, x: torch.Tensor, h0: torch.Tensor | None = None,
                c0: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if self.batch_first:
            x = x.transpose(0, 1)
            h0 = h0.transpose(0, 1) if h0 is not None else None
            c0 = c0.transpose(0, 1) if c0 is not None else None
        if self.reverse:
            x = torch.flip(x, dims=(0,))
        dirs, hidden = 2 if self.lstm.bidirectional else 1, self.lstm.hidden_size
        state = None
        if h0 is not None or c0 is not None:
            zeros = x.new_zeros(dirs, x.shape[1], hidden)
            state = (h0 if h0 is not None else zeros, c0 if c0 is not None else zeros)
        y, (h, c) = self.lstm(x, state)
        if self.reverse:
            y = torch.flip(y, dims=(0,))
        y = y.view(y.shape[0], y.shape[1], dirs, hidden)  # [seq, batch, dirs, hidden]
        if self.batch_first:
            return y.permute(1, 0, 2, 3), h.transpose(0, 1), c.transpose(0, 1)
        return y.permute(0, 2, 1, 3), h, c


def _gates(w: torch.Tensor, hidden: int) -> torch.Tensor:
    """ONNX packs gates i, o, f, c; PyTorch i, f, c(g), o."""
    i, o, f, c = (w[k * hidden:(k + 1) * hidden] for k in range(4))
    return torch.cat([i, f, c, o], dim=0)


def _constant(graph: Any, name: str, what: str) -> torch.Tensor:
    if name not in graph.initializers:
        raise NotImplementedError(f"LSTM {what} '{name}' is computed at run time; only constant weights convert")
    return graph.initializers[name].to_torch()


def _lstm_checks(node: Any) -> None:
    attrs = node.attributes
    inputs = list(node.input_values) + [""] * (8 - len(node.input_values))
    if inputs[7]:
        raise NotImplementedError("LSTM with peephole weights (input P) has no PyTorch equivalent")
    if attrs.get("clip") is not None:
        raise NotImplementedError("LSTM with clip has no PyTorch equivalent")
    if attrs.get("input_forget", 0):
        raise NotImplementedError("LSTM with input_forget=1 (coupled gates) has no PyTorch equivalent")
    if set(attrs.get("activations", [])) - _DEFAULT_ACTIVATIONS or (attrs.get("activations") or ["Sigmoid"])[0] != "Sigmoid":
        raise NotImplementedError(f"LSTM activations {attrs.get('activations')}: PyTorch's LSTM has Sigmoid/Tanh/Tanh only")
    if inputs[4]:
        raise NotImplementedError("LSTM with sequence_lens (per-batch lengths) is not converted; pad the batch instead")


def _lstm(node: Any, graph: Any) -> OperationConverterResult:
    _lstm_checks(node)
    attrs = node.attributes
    inputs = list(node.input_values) + [""] * (8 - len(node.input_values))
    direction = attrs.get("direction", "forward")
    w = _constant(graph, inputs[1], "W")
    r = _constant(graph, inputs[2], "R")
    dirs, four_h, in_size = w.shape
    hidden = int(attrs.get("hidden_size", four_h // 4))
    b = _constant(graph, inputs[3], "B") if inputs[3] else torch.zeros(dirs, 8 * hidden, dtype=w.dtype)
    lstm = nn.LSTM(in_size, hidden, num_layers=1, bias=True, bidirectional=direction == "bidirectional")
    with torch.no_grad():
        for d in range(dirs):
            suffix = "_reverse" if d == 1 else ""
            getattr(lstm, f"weight_ih_l0{suffix}").copy_(_gates(w[d], hidden))
            getattr(lstm, f"weight_hh_l0{suffix}").copy_(_gates(r[d], hidden))
            getattr(lstm, f"bias_ih_l0{suffix}").copy_(_gates(b[d, :4 * hidden], hidden))
            getattr(lstm, f"bias_hh_l0{suffix}").copy_(_gates(b[d, 4 * hidden:], hidden))
    module = Lstm(lstm, reverse=direction == "reverse", batch_first=int(attrs.get("layout", 0)) == 1)
    mapping = OnnxMapping(inputs=(inputs[0], inputs[5], inputs[6]), outputs=node.output_values)
    return OperationConverterResult(torch_module=module, onnx_mapping=mapping)


def _pad(node: Any, graph: Any) -> OperationConverterResult:
    mode = node.attributes.get("mode", "constant")
    inputs = list(node.input_values)
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Pad mode '{mode}' has no PyTorch equivalent")
    if len(inputs) > 3 and inputs[3]:
        raise NotImplementedError("Pad with an axes input is not converted")
    return OperationConverterResult(torch_module=Pad(_PAD_MODES[mode]), onnx_mapping=OnnxMapping(
        inputs=(inputs[0], inputs[1]), outputs=node.output_values))


_ORIGINAL_PAD: dict[int, Any] = {}  # onnx2torch's own Pad converters by version (constant mode)


def _global_max_pool(node: Any, graph: Any) -> OperationConverterResult:
    return OperationConverterResult(torch_module=GlobalMaxPool(), onnx_mapping=onnx_mapping_from_node(node))


def register() -> None:
    """Add the converters onnx2torch has no entry for (once; an entry it gained since is kept)."""
    global _REGISTERED
    if _REGISTERED:
        return
    for op, versions, fn in (("GlobalMaxPool", (1,), _global_max_pool), ("LSTM", (7, 14), _lstm)):
        for version in versions:
            if OperationDescription("", op, version) not in _CONVERTER_REGISTRY:
                add_converter(operation_type=op, version=version)(fn)
    for version in (11, 13, 18):
        key = OperationDescription("", "Pad", version)
        original = _CONVERTER_REGISTRY.pop(key, None)
        if original is not None:
            _ORIGINAL_PAD[version] = original
        _CONVERTER_REGISTRY[key] = _pad_for(version)
    _REGISTERED = True


def _pad_for(version: int) -> Any:
    def convert(node: Any, graph: Any) -> OperationConverterResult:
        mode = node.attributes.get("mode", "constant")
        if mode == "constant":
            original = _ORIGINAL_PAD.get(version)
            if original is None:
                raise NotImplementedError(f"Pad-{version} in constant mode: onnx2torch has no converter")
            return original(node, graph)
        return _pad(node, graph)
    return convert
