"""What cuts a build's time: per costly layer, the settings that would and what each saves where
the log lets it be computed (:func:`suggestions`); for the whole build, the settings the log's stated
phases point to (:func:`global_settings`)."""

from __future__ import annotations

from typing import Any

from trtstudio.engine.buildtime.log import BuildPass

TOP_LAYERS = 20


def suggestions(layers: list[dict[str, Any]], n_profiles: int, cache_kind: str | None) -> list[dict[str, Any]]:
    """Per costly layer, the settings that cut its build time, each with its expected saving where
    the log lets it be computed (``saving_s`` None otherwise)."""
    out = []
    for lay in layers:
        tips: list[dict[str, Any]] = []
        if lay["seconds"] > 0:
            tips.append({"setting": "timing cache (--timingCacheFile / trtstudio build --timing-cache)",
                         "saving_s": lay["seconds"],
                         "why": "a rebuild that hits the cache skips timing this layer"
                                + (" (this build already used a global cache: it was a miss)" if cache_kind == "global" else "")})
        runners = lay["seconds_by_runner"]
        chosen = (lay["chosen"] or {}).get("runner")
        others = sum(s for r, s in runners.items() if r != chosen)
        if chosen and others > 0:
            tips.append({"setting": "--tacticSources (drop the runners not chosen)", "saving_s": round(others, 6),
                         "why": f"runners timed but not chosen: {', '.join(r for r in runners if r != chosen)}"})
        if len(lay["profiles"]) > 1 and n_profiles > 1:
            tips.append({"setting": "fewer optimization profiles",
                         "saving_s": round(lay["seconds"] * (len(lay["profiles"]) - 1) / len(lay["profiles"]), 6),
                         "why": f"timed once per profile ({len(lay['profiles'])} profiles; saving assumes equal time each)"})
        tips.append({"setting": "lower builder optimization level (--builderOptimizationLevel / --opt-level)",
                     "saving_s": None, "why": "fewer tactics timed; the log cannot say how many fewer"})
        out.append({"layer": lay["name"], "seconds": lay["seconds"], "settings": tips})
    return out


def global_settings(passes: list[BuildPass]) -> list[dict[str, Any]]:
    """Settings for the whole build: ``--maxAuxStreams=0`` where the passes state multi-stream splitting."""
    aux = sum(s for p in passes for name, s in p.phases if name == "multi-stream splitting")
    return ([{"setting": "--maxAuxStreams=0", "saving_s": round(aux, 6),
              "why": "multi-stream splitting stated by the log"}] if aux else [])
