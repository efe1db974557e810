"""Big documents never stall the window or the end of a process.

A 100,000-node model or a 300,000-layer engine with its analysis is millions of small objects and
tens of MB of JSON. Made, parsed, written or freed in one go, each holds the GIL (or the process)
for up to seconds. The modules here are the ways around that, one per moment of a document's life:

- :mod:`~trtstudio.bigdocs.gcpause`: building one without the cyclic collector walking it again and again;
- :mod:`~trtstudio.bigdocs.children`: parsing big JSON (and ONNX shape inference) in child processes
  or in pieces, so that the window's thread gets the GIL between them (``children.FLAGS`` are the
  private command-line flags the child runs under);
- :mod:`~trtstudio.bigdocs.forked`: writing one to standard output in two parts, the head encoded by
  a forked child while the rest is computed (``trtstudio layers --json``);
- :mod:`~trtstudio.bigdocs.release`: letting go of one in a background thread, a chunk at a time.

Nothing here imports Qt; the package imports nothing of itself on import.
"""
