"""The measurement vocabulary every part of trtstudio speaks: ``verdict`` (a Verdict with its
evidence), ``trend`` (the one trend fit), ``ratio`` (other / baseline with an interval),
``stats`` (the one summary of samples, ``latency_stats``) and ``devices`` (GPU and memory probes, NVML
opened once)."""
