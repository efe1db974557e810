"""What changed between two builds: aligned layer groups with change labels, a time verdict with its
interval, provenance, and a CI gate (``trtstudio diff``). See :mod:`trtstudio.diff.core`."""
