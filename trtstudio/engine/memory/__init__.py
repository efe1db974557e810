"""Where an engine's GPU memory goes, from whatever files describe it, and what a deployment will need.

:func:`engine_memory` reads one engine's files (named as every command names them,
``engine.naming.resolve``) and gives its memory by category (:data:`CATEGORIES`), each figure
with the line or field it came from; what no file says is ``not recorded`` (``bytes`` None),
never guessed:

``weights``
    "Total Weights Memory" of the engine that was kept, else the GPU that "[MemUsageChange]
    TensorRT-managed allocation in engine deserialization" took, else the layers' ``Weights`` and
    ``Bias`` (and ``Constant`` layers') counts times their type size. How much of it is streamable
    is not printed by TensorRT (``getStreamableWeightsSize`` needs the runtime): the figure says so.
``activations``
    "Total Activation Memory" (the device memory TensorRT allocates, tensors sharing blocks), with
    "[BlockAssignment] ... requiring B bytes" beside it; per optimization profile where the log
    builds several ("Constructing optimization profile number N"); the engine's figure is the
    largest, which a context allocates by default (``kSTATIC``).
``activations_naive``
    TREx's figure (``engine.summary.layer_memory``'s ``layer_activations``): every layer's inputs
    plus outputs, as if nothing were shared. Users read this one as the engine's need; it is not.
``device_persistent``, ``host_persistent``, ``scratch``
    "Total Device/Host Persistent Memory", "Max Scratch Memory" (TensorRT 8: "Total Scratch Memory").
``io``
    the engine's I/O tensors at their shapes (the first profile's max shapes where the files record
    them): the buffers the application allocates per context.
``cuda_context``
    "[MemUsageChange] Init CUDA: ... now: GPU N (MiB)": the GPU in use once CUDA was up, which
    holds this process's context (and anything else on that GPU then).
``libraries``
    the GPU that "[MemUsageChange] Init builder kernel library", "Init cuBLAS/cuBLASLt" and "Init
    cuDNN" took (the builder's kernel library is loaded only to build).
``builder_peak``
    "[MemUsageStats] Peak memory usage of TRT CPU/GPU memory allocators" (GPU; CPU in the note).
``engine_size``
    the plan file's size, else a build document's ``engine_bytes``, else "Created engine with size",
    else "Loaded engine size".
``other``
    TensorRT-managed allocations the log reports that none of the above holds.

The context's own device memory ("Created execution context with device memory size", "Allocated
device scratch memory of size") is ``context`` beside the categories. A log may hold several
builds (a script building three engines) and, within one, several candidate engines (TensorRT
10.16's backend strategies: "Building graph using backend strategy N", "Chose this engine with
backend strategy N"): the figures are those of the last build's kept engine, as the layer reader
reads the last listing.

Per layer (:func:`layer_rows`): each layer's output activation and weight bytes from the layer
information, and the host/device persistent and scratch bytes that a verbose log's "Layer: NAME
Host Persistent: .. Device Persistent: .. Scratch Memory: .." lines give. :func:`live_memory`:
the activation bytes alive along the layer order (a tensor from the layer that writes it to the
last layer that reads it), its peak and the tensors alive there.

:func:`predict` plans a deployment: K contexts of each engine in each of P processes on a GPU of
M bytes, with TensorRT's fixes and what each saves (see its docstring). :func:`memory_rows` puts
two engines' categories side by side (for diff and compare).

Modules
-------

:mod:`.log` reads the log's memory lines (``read_log``, ``LogReader``: the one reader of
``[MemUsageChange]``/``[MemUsageStats]`` lines, ``engine.buildtime`` included);
:mod:`.categories` holds ``Figure``, ``EngineMemory`` and ``memory_rows``; :mod:`.from_log` the
categories of a log, :mod:`.from_info` those of the engine's own information (the naive activation
figure, I/O); :mod:`.layers` the per-layer rows and live activations; :mod:`.files` names and reads
an engine's files (``engine_memory``, ``memory_of``); :mod:`.deployment` the deployment (``predict``);
:mod:`.text` the document and its text.

Each name loads from its module when first asked for (PEP 562): importing ``engine.memory`` runs
none of them, so ``engine.buildtime`` takes the line reader (``engine.memory.log``) alone, and the
modules here importing one another close no circle through this file.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trtstudio.engine.memory.categories import CATEGORIES, NOT_RECORDED, EngineMemory, Figure, memory_rows
    from trtstudio.engine.memory.deployment import (
        CUDA_CONTEXT_BASIS,
        DEFAULT_CUDA_CONTEXT_BYTES,
        parse_size,
        predict,
    )
    from trtstudio.engine.memory.files import engine_memory, memory_of
    from trtstudio.engine.memory.from_log import log_figures
    from trtstudio.engine.memory.layers import layer_rows, live_memory
    from trtstudio.engine.memory.log import LINE_KINDS, MIB, Line, LogMemory, LogReader, read_log
    from trtstudio.engine.memory.text import SCHEMA, memory_doc, render_text, short_source

__all__ = [
    "CATEGORIES", "CUDA_CONTEXT_BASIS", "DEFAULT_CUDA_CONTEXT_BYTES", "LINE_KINDS", "MIB", "NOT_RECORDED", "SCHEMA",
    "EngineMemory", "Figure", "Line", "LogMemory", "LogReader", "engine_memory", "layer_rows", "live_memory",
    "log_figures", "memory_doc", "memory_of", "memory_rows", "parse_size", "predict", "read_log", "render_text",
    "short_source",
]
_HOME = {  # each name of __all__ -> the module that defines it
    **dict.fromkeys(("CATEGORIES", "NOT_RECORDED", "EngineMemory", "Figure", "memory_rows"), "categories"),
    "engine_memory": "files", "memory_of": "files", "log_figures": "from_log",
    "layer_rows": "layers", "live_memory": "layers",
    **dict.fromkeys(("LINE_KINDS", "MIB", "Line", "LogMemory", "LogReader", "read_log"), "log"),
    **dict.fromkeys(("CUDA_CONTEXT_BASIS", "DEFAULT_CUDA_CONTEXT_BYTES", "parse_size", "predict"), "deployment"),
    **dict.fromkeys(("SCHEMA", "memory_doc", "render_text", "short_source"), "text"),
}


def __getattr__(name: str) -> Any:
    """A name of ``__all__``, from its module, loaded on first use (PEP 562) and kept here."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
    return value
