"""The regression gate for CI: ``trtstudio diff BASE NEW --fail-if-slower PCT``.

Per other side, the median ratio other/base with its 95 % interval against the threshold
``1 + PCT/100``:

- exit **1** (fail) when the whole interval is above the threshold: slower by more than PCT, and
  the noise cannot explain it;
- exit **0** (pass) when the whole interval is at or below the threshold;
- exit **3** (inconclusive) when the interval straddles it, or when a side has no per-inference
  samples to make one (noisy or short runs), or when the pair's verdict is unreliable (different
  models, or under half of a side's convolutions/GEMMs aligned: ``diff.mismatch``): not judged,
  and the text says why. Different GPUs or TensorRT versions are gated as usual, the text noting them.

Several other sides: the worst outcome (1 before 3 before 0). ``junit_xml`` writes one test case
per other side and metric (median, p99), the failure text naming the slowest groups, a metric
with no data skipped;
``markdown`` a summary for a CI job page.
"""

from __future__ import annotations

from typing import Any

PASS, FAIL, INCONCLUSIVE_EXIT = 0, 1, 3


def gate(pair: dict[str, Any], pct: float) -> tuple[int, str]:
    """(exit code, one sentence) for one pair of a ``trtstudio.diff/1`` document."""
    s = pair["summary"]
    name, base = pair["other"]["name"], pair["base"]["name"]
    if s.get("reliable") is False:
        return INCONCLUSIVE_EXIT, (f"inconclusive: {name} vs {base}: not gated, the sides do not belong together "
                                   f"({s.get('unreliable_because')})")
    code, text = _gate(pair, pct)
    notes = [w for k, w in (pair.get("mismatch") or {}).items() if k in ("gpu", "tensorrt")]
    return code, text + "".join(f"; note: {w}" for w in notes)


def _gate(pair: dict[str, Any], pct: float) -> tuple[int, str]:
    s = pair["summary"]
    name, base = pair["other"]["name"], pair["base"]["name"]
    limit = 1.0 + pct / 100.0
    iv = s.get("interval")
    if not iv or iv[0] is None or iv[1] is None:
        return INCONCLUSIVE_EXIT, (f"inconclusive: {name} vs {base}: no interval ({s.get('text')}); "
                                   "give both sides per-inference timings (trtexec --exportTimes) or longer runs")
    low, high = iv
    fig = f"x{s['ratio']:.3f} (95 % interval {low:.3f}-{high:.3f}) against a limit of x{limit:.3f}"
    if low > limit:
        return FAIL, f"FAIL: {name} is slower than {base} by more than {pct:g} %: {fig}{_slowest(pair)}"
    if high <= limit:
        return PASS, f"pass: {name} is not slower than {base} by more than {pct:g} %: {fig}"
    noisy = f"; noisy: {', '.join(s['noisy'])}" if s.get("noisy") else ""
    return INCONCLUSIVE_EXIT, f"inconclusive: {name} vs {base}: the interval holds the limit: {fig}{noisy}"


def _slowest(pair: dict[str, Any], n: int = 3) -> str:
    worse = sorted((g for g in pair["groups"] if (g.get("delta_ms") or 0) > 0), key=lambda g: -g["delta_ms"])[:n]
    if not worse:
        return ""
    return "; slowest groups: " + ", ".join(f"{(g['other_layers'] or g['base_layers'])[0]} ({g['delta_ms']:+.3g} ms)"
                                            for g in worse)


def worst(codes: list[int]) -> int:
    """The outcome of several gates: a failure, else an inconclusive one, else a pass."""
    return FAIL if FAIL in codes else INCONCLUSIVE_EXIT if INCONCLUSIVE_EXIT in codes else PASS


def junit_xml(doc: dict[str, Any], pct: float | None) -> str:
    """JUnit XML: a test suite per diff, a test case per other side and metric (median, p99); a
    metric with no data is ``<skipped>``, never a pass."""
    # (imported here: it imports urllib and http, 17 ms that every diff paid)
    from xml.sax.saxutils import escape, quoteattr

    cases = []
    failures = skipped = 0
    for pair in doc["diffs"]:
        s = pair["summary"]
        name = f"{pair['other']['name']} vs {pair['base']['name']}"
        code, text = gate(pair, pct) if pct is not None else (PASS, s.get("text") or "")
        for metric in ("median", "p99"):
            b, o = s.get(f"base_{metric}_ms"), s.get(f"other_{metric}_ms")
            figures = f"{metric} {b if b is None else f'{b:.4g}'} -> {o if o is None else f'{o:.4g}'} ms"
            body = ""
            if b is None or o is None:  # no data is no pass: "p99 None -> None ms" passed before
                skipped += 1
                missing = " and ".join(n for n, v in ((pair["base"]["name"], b), (pair["other"]["name"], o)) if v is None)
                why = f"no {metric} latency: {missing} {'has' if (b is None) != (o is None) else 'have'} no per-inference timings"
                body = f"<skipped message={quoteattr(why)}/>"
            elif metric == "median" and code == FAIL:
                failures += 1
                body = f"<failure message={quoteattr(text)}>{escape(figures + '; ' + text)}</failure>"
            elif metric == "median" and code == INCONCLUSIVE_EXIT:
                skipped += 1
                body = f"<skipped message={quoteattr(text)}/>"
            elif metric == "p99" and b is not None and o is not None and pct is not None and o > b * (1 + pct / 100):
                body = f"<system-out>{escape(f'p99 slower by more than {pct:g} %: {figures}')}</system-out>"
            else:
                body = f"<system-out>{escape(figures)}</system-out>"
            cases.append(f'  <testcase classname={quoteattr("trtstudio.diff." + pair["other"]["name"])} '
                         f'name={quoteattr(f"{name}: {metric} latency")}>{body}</testcase>')
    head = (f'<?xml version="1.0" encoding="utf-8"?>\n<testsuite name="trtstudio diff" tests="{len(cases)}" '
            f'failures="{failures}" skipped="{skipped}" errors="0">')
    return "\n".join([head, *cases, "</testsuite>"]) + "\n"
