"""Jetson's own monitor: ``tegrastats`` lines and the L4T release file.

NVML is absent on Jetson up to Orin, so memory, GPU load, clocks and power come from
``tegrastats``: one line per interval. Formats seen (test data in ``tests/data/tegrastats/``):

- JetPack 4 (L4T 32): ``RAM 4722/7844MB (lfb 1x512kB) CPU [55%@2035,...] ... GR3D_FREQ 33%@1300 ...
  VDD_IN 14025/14416`` - rails have no unit (mW), the GPU clock is one number;
- JetPack 5/6 (L4T 35/36): a ``MM-DD-YYYY HH:MM:SS`` prefix, rails in ``mW``, the GPU load per GPC
  cluster clock ``GR3D_FREQ 0%@[305,305]``, sensors that are off read ``-256C``;
- Thor (L4T 38): ``GR3D_FREQ @[0,0,0]`` without a load figure.

Memory is one pool (the GPU allocates from RAM): it is reported as ``ram_used_bytes`` /
``ram_total_bytes``, never as separate GPU memory.
"""

from __future__ import annotations

import re
from typing import Any

_MB = 1 << 20
_DATE = re.compile(r"^(\d\d-\d\d-\d{4} \d\d:\d\d:\d\d)\s+")
_RAM = re.compile(r"\bRAM (\d+)/(\d+)MB")
_SWAP = re.compile(r"\bSWAP (\d+)/(\d+)MB")
_CPU = re.compile(r"\bCPU \[([^\]]*)\]")
_CORE = re.compile(r"(\d+)%(?:@(\d+))?")
_EMC = re.compile(r"\bEMC_FREQ (\d+)%(?:@(\d+))?")
_GR3D = re.compile(r"\bGR3D_FREQ (?:(\d+)%)?(?:@(\[[\d,]*\]|\d+))?")
_TEMP = re.compile(r"(?<![\w.])([A-Za-z][A-Za-z0-9_]*)@(-?\d+(?:\.\d+)?)C\b")
_RAIL = re.compile(r"\b([A-Z][A-Z0-9_]*) (\d+)(mW)?/(\d+)(?:mW)?(?:/(\d+)(?:mW)?)?(?![\w/])")
_NOT_RAILS = frozenset({"RAM", "SWAP", "IRAM"})
SENSOR_OFF_C = -256.0


def parse_line(line: str) -> dict[str, Any] | None:
    """One tegrastats line as figures (bytes, percent, MHz, mW, degrees C); None for a line that
    is not tegrastats output (no RAM figure)."""
    text = line.strip()
    ram = _RAM.search(text)
    if ram is None:
        return None
    out: dict[str, Any] = {"ram_used_bytes": int(ram.group(1)) * _MB, "ram_total_bytes": int(ram.group(2)) * _MB}
    date = _DATE.match(text)
    out["time"] = date.group(1) if date else None
    swap = _SWAP.search(text)
    if swap:
        out["swap_used_bytes"], out["swap_total_bytes"] = int(swap.group(1)) * _MB, int(swap.group(2)) * _MB
    cpu = _CPU.search(text)
    if cpu:
        cores: list[dict[str, int] | None] = []
        for item in cpu.group(1).split(","):
            m = _CORE.fullmatch(item.strip())
            cores.append({"load_percent": int(m.group(1)), "freq_mhz": int(m.group(2) or 0)} if m else None)
        out["cpu"] = cores
    emc = _EMC.search(text)
    if emc:
        out["emc_percent"] = int(emc.group(1))
    out.update(_gpu(text))
    out["temps_c"] = {name: float(v) for name, v in _TEMP.findall(text) if float(v) > SENSOR_OFF_C}
    out["rails_mw"] = _rails(text)
    power = _input_power(out["rails_mw"])
    if power is not None:
        out["power_mw"] = power
    return out


def _gpu(text: str) -> dict[str, Any]:
    m = _GR3D.search(text)
    if m is None:
        return {}
    load = int(m.group(1)) if m.group(1) is not None else None
    freq = m.group(2)
    clocks = [int(x) for x in freq.strip("[]").split(",") if x] if freq else []
    return {"gpu_load_percent": load, "gpu_freq_mhz": clocks}


def _rails(text: str) -> dict[str, dict[str, int]]:
    rails: dict[str, dict[str, int]] = {}
    for name, cur, _unit, avg, third in _RAIL.findall(text):
        if name in _NOT_RAILS:
            continue
        entry = {"current_mw": int(cur), "average_mw": int(avg)}
        if third:
            entry["max_mw"] = int(third)  # newer releases print a third figure
        rails[name] = entry
    return rails


def _input_power(rails: dict[str, dict[str, int]]) -> int | None:
    """The board's input power: VDD_IN (Xavier, Orin Nano/NX), POM_5V_IN (Nano, TX2), else the sum of
    the rails (AGX Orin and Thor list their rails without an input total)."""
    for name in ("VDD_IN", "POM_5V_IN", "VIN"):
        if name in rails:
            return rails[name]["current_mw"]
    return sum(r["current_mw"] for n, r in rails.items() if n != "NC") if rails else None


def parse_l4t_release(text: str) -> dict[str, str] | None:
    """``/etc/nv_tegra_release`` (``# R36 (release), REVISION: 4.4, ...``) as {l4t, release, revision,
    board}; None for anything else."""
    m = re.search(r"#\s*R(\d+)\s*\(release\),\s*REVISION:\s*([\d.]+)", text)
    if m is None:
        return None
    out = {"release": f"R{m.group(1)}", "revision": m.group(2), "l4t": f"{m.group(1)}.{m.group(2)}"}
    board = re.search(r"BOARD:\s*([^,\s]+)", text)
    if board:
        out["board"] = board.group(1)
    return out


def series(records: list[dict[str, Any]], t_s: list[float]) -> dict[str, list[float]]:
    """Parsed lines as memory-series columns (``t_s``, ``ram_used_bytes``, ``gpu_load_percent``,
    ``power_mw``): what a run's memory plot and report show on a Jetson."""
    cols: dict[str, list[float]] = {"t_s": list(t_s), "ram_used_bytes": [], "gpu_load_percent": [], "power_mw": []}
    for r in records:
        cols["ram_used_bytes"].append(float(r["ram_used_bytes"]))
        load = r.get("gpu_load_percent")
        cols["gpu_load_percent"].append(float(load) if load is not None else float("nan"))
        power = r.get("power_mw")
        cols["power_mw"].append(float(power) if power is not None else float("nan"))
    return cols
