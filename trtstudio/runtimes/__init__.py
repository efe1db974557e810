"""Runtimes: Python environments that hold a TensorRT or TensorRT-RTX version and this trtstudio, and
the upgrade check that builds one model with several of them side by side.

- :mod:`trtstudio.runtimes.manage`: managed runtimes (``trtstudio runtimes add|list|remove``), a
  runtime given as a virtual environment's folder, and what each one holds (:func:`~.manage.probe`).
- :mod:`trtstudio.runtimes.upgrade`: ``trtstudio upgrade-check`` (builds in child processes of those
  environments, their documents read and diffed here).
- :mod:`trtstudio.runtimes.engine_run`: the child that runs a built engine in its runtime (where a GPU
  it can run on is present) for the accuracy and latency columns.
"""
