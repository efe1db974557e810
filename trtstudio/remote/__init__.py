"""Profile where the model runs: targets reached over SSH (Jetson boards, lab GPU servers).

The desktop is a client. ``target`` runs commands on ``ssh://[user@]host[:port]`` with the system
OpenSSH client (the user's ~/.ssh/config, agents and ProxyJump apply; ``BatchMode`` so that a
prompt never hangs a run) and copies files into a content-hashed cache there. ``agent`` is what
runs on the target: the same profiling run a local ``trtstudio profile`` makes, streaming its
samples back as JSON lines on stdout. ``client`` reads them into a local ``SampleBuffer`` (so the
window's live panels and the CLI do not know the difference) and rebuilds the run. ``tegrastats``
reads Jetson's own monitor, where NVML is absent.
"""
