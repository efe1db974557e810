"""The measurement vocabulary every part of trtstudio speaks: ``verdict`` (a Verdict with its
evidence), ``trend`` (the one trend fit), ``ratio`` (other / baseline with an interval) and
``devices`` (GPU and memory probes, NVML opened once). Statistics of samples are
``profiling.stats.latency_stats``."""
