"""Entropy calibration as TensorRT does it (2048 histogram bins, 128 quantized levels), fast.

onnxruntime's ``HistogramCollector.get_entropy_threshold`` merges and expands bins in Python loops
(``sum()`` over numpy slices): with TensorRT's 2048 bins, calibrating PaddleOCR's text-direction
classifier (162 tensors) took 140 s, all of it there (cProfile), and with onnxruntime's default 128
bins it never clips (the threshold is always the maximum). :func:`entropy_threshold` is the same
computation with the loops vectorised, and :func:`speed_up` puts it on a calibrator after its data
is collected; onnxruntime's ``smooth_distribution`` and ``entropy`` still compute the divergence.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def entropy_threshold(histogram: tuple[Any, ...], num_quantized_bins: int) -> tuple[Any, Any]:
    """onnxruntime's ``get_entropy_threshold`` (the KL-divergence search of TensorRT's entropy
    calibrator) with the same result: ``histogram`` is (counts, edges, min, max)."""
    from onnxruntime.quantization.calibrate import entropy
    from onnxruntime.quantization.quant_utils import smooth_distribution

    hist, edges = histogram[0], histogram[1]
    num_bins = hist.size
    zero = num_bins // 2
    half = num_quantized_bins // 2
    csum = np.concatenate(([0], np.cumsum(hist)))
    total = csum[-1]
    divergences = np.zeros(zero - half + 1)
    thresholds = []
    for i in range(half, zero + 1):
        start, end = zero - i, min(zero + i + 1, num_bins)
        thresholds.append((edges[start], edges[end]))
        sliced = hist[start:end]
        p = sliced.copy()
        p[0] += csum[start]
        p[-1] += total - csum[end]
        nonzero = (p != 0).astype(np.int64)
        merged = sliced.size // num_quantized_bins
        whole = num_quantized_bins * merged
        quantized = sliced[:whole].reshape(num_quantized_bins, merged).sum(axis=1).astype(np.int64)
        quantized[-1] += sliced[whole:].sum()
        norm = nonzero[:whole].reshape(num_quantized_bins, merged).sum(axis=1)
        level = np.zeros(num_quantized_bins, dtype=np.int64)
        np.floor_divide(quantized, norm, out=level, where=norm != 0)  # onnxruntime stores q as int64
        q = np.zeros(p.size, dtype=np.int64)
        q[:whole] = np.repeat(level, merged)
        ps, qs = smooth_distribution(p), smooth_distribution(q)
        divergences[i - half] = np.inf if ps is None or qs is None else float(entropy(ps, qs))
    lo, hi = thresholds[int(np.argmin(divergences))]
    lo = histogram[2] if lo < histogram[2] else lo
    hi = histogram[3] if hi > histogram[3] else hi
    dtype = edges.dtype
    return np.asarray(lo, dtype=dtype), np.asarray(hi, dtype=dtype)


def speed_up(calibrator: Any) -> bool:
    """Make an onnxruntime entropy calibrator whose data is collected use :func:`entropy_threshold`;
    False (and nothing changed) where its collector is not the one this was written against."""
    collector = getattr(calibrator, "collector", None)
    if collector is None or getattr(collector, "method", None) != "entropy" \
            or not callable(getattr(collector, "get_entropy_threshold", None)):
        return False
    collector.get_entropy_threshold = entropy_threshold
    return True
