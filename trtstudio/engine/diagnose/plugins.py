"""Rules of the family ``plugins``: layers TensorRT runs through a plugin, opaque to its fusions and
kernel choice."""

from __future__ import annotations

import re

from trtstudio.engine.diagnose.context import Ctx, finding, share_text
from trtstudio.engine.model import Finding

PLUGIN_WARN_SHARE = 5.0
_PLUGIN_LOG_RE = re.compile(r"Successfully created plugin: ?(\S+)")


def plugin_layers(ctx: Ctx) -> list[Finding]:
    """``plugin`` (info; warning when the plugin takes >= 5 % of the time)
        Layers of type ``PluginV2``/``PluginV3``/``Plugin*`` (or named ``[PluginV2...]``,
        ``[PluginV3...]``), and ``Successfully created plugin: NAME`` lines in the engine's log when the
        layers do not show it. Plugins are opaque to fusion and often force reformats around them."""
    out = []
    for lay in ctx.plugins:
        share = ctx.share(lay)
        sev = "warning" if share is not None and share >= PLUGIN_WARN_SHARE else "info"
        kind = lay.type if lay.type.startswith("Plugin") else "plugin"
        out.append(finding(
            "plugin", sev, lay,
            f"{lay.name} runs a {kind} layer{share_text(share)}: TensorRT cannot fuse across it or choose its kernels",
            "check that the plugin supports the precision and formats of its neighbours (else reformats are "
            "inserted around it); prefer a native TensorRT op when one exists",
        ))
    if not out:
        created: list[str] = []
        for line in ctx.engine.log:
            if "plugin" not in line:
                continue
            m = _PLUGIN_LOG_RE.search(line)
            if m and m.group(1) not in created:
                created.append(m.group(1))
        for name in created:
            out.append(finding(
                "plugin", "info", None,
                f"the build log shows plugin {name} being created; the engine contains a plugin layer",
                "check that the plugin supports the precision and formats of its neighbours; export the layer "
                "information (--exportLayerInfo --profilingVerbosity=detailed) to see which layer it is",
            ))
    return out
