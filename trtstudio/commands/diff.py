"""``trtstudio diff``: what changed between two builds, layer group by layer group, and a CI gate."""

from __future__ import annotations

import argparse
from typing import Any

from trtstudio.commands._args import add_json

HELP = "what changed between two or more engine builds: aligned layer groups, time with its interval, a CI gate"

EPILOG = """\
Each side names one engine as every command does: a folder of its files (trtexec/TREx layout; an
.onnx beside them is its model), its files joined with commas, a TREx prefix (DIR/NAME.onnx.engine
for NAME.onnx.engine.graph.json, ...), one file (a `trtstudio build --json` document, a log, a
layer JSON), or a .trtstudio session. The first side is the base.

exit codes:
  0  done; with --fail-if-slower: no side is slower than the base by more than PCT
  1  --fail-if-slower: a side is slower by more than PCT, the whole 95 % interval above the limit
  2  bad input (one line: error: FILE: what is wrong)
  3  --fail-if-slower: inconclusive (the interval holds the limit, or a side has no per-inference
     timings: trtexec --exportTimes), or a side that does not belong beside the base (different
     models or input shapes, under half of the convolutions/GEMMs aligned): not judged

Sides that do not belong together (different models, GPUs, TensorRT versions, too few layers
aligned) are the first lines of the output (warning: ...) and the JSON's "warnings".
"""

INPUTS: tuple[str, ...] = ()  # sides are named as engine.naming.resolve takes them: it checks them


def configure(parser: argparse.ArgumentParser) -> None:
    """Flags of ``trtstudio diff``."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("base", metavar="BASE", help="the base engine (folder, FILE,FILE,..., TREx prefix, file or session)")
    parser.add_argument("others", nargs="+", metavar="OTHER", help="the engines to compare with the base")
    parser.add_argument("--onnx", action="append", default=[], metavar="SIDE=MODEL",
                        help="the ONNX model of a side (SIDE: its position 1, 2, ... or its name); a model beside "
                             "a folder's files is found by itself; a bare MODEL applies to every side")
    parser.add_argument("--names", help="comma-separated labels, one per side (default: folder or file names)")
    parser.add_argument("-o", "--output", action="append", default=[], metavar="OUT",
                        help="write the diff: .html, .pdf, .md or .json (repeatable)")
    parser.add_argument("--fail-if-slower", type=float, metavar="PCT",
                        help="CI gate: exit 1 when a side's median is slower than the base's by more than PCT "
                             "(percent) with its whole 95%% interval above, 3 when inconclusive, else 0")
    parser.add_argument("--junit", metavar="FILE", help="JUnit XML: a test case per side and metric")
    parser.add_argument("--markdown", metavar="FILE", help="a Markdown summary for a CI job page")
    add_json(parser, "trtstudio.diff/1")
    parser.add_argument("--indent", type=int, metavar="N", help="indent --json output by N spaces (default compact)")


_WRITERS = (".html", ".pdf", ".md", ".json")


def _models(specs: list[str], sides: list[str], names: list[str] | None) -> list[str | None]:
    from trtstudio.errors import InputError

    out: list[str | None] = [None] * len(sides)
    for spec in specs:
        key, sep, model = spec.rpartition("=")
        if not sep:
            out = [model] * len(sides)
            continue
        if key.isdigit() and 1 <= int(key) <= len(sides):
            out[int(key) - 1] = model
        elif names and key in names:
            out[names.index(key)] = model
        else:
            raise InputError(None, f"--onnx {spec}: SIDE must be 1..{len(sides)} or a name given with --names")
    return out


def run(args: argparse.Namespace) -> int:
    """Load every side, diff the others against the base, print, write, gate."""
    import os
    from pathlib import Path

    from trtstudio.commands._emit import ENDING, emit, keep, skip_teardown

    if ENDING.in_entry:  # as the program only: a caller's own process keeps its environment
        # no linear algebra here: numpy's OpenBLAS need not start a thread per core when the diff imports
        # it (70 ms of CPU on a 2-core machine at startup, more on a big one); a user's setting is kept
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from trtstudio.errors import InputError

    specs = [args.base, *args.others]
    names = [n.strip() for n in args.names.split(",")] if args.names else None
    if names is not None and len(names) != len(specs):
        raise InputError(None, f"--names has {len(names)} labels for {len(specs)} sides")
    for out in args.output:
        if Path(out).suffix.lower() not in _WRITERS:
            raise InputError(out, f"unknown output type: use {', '.join(_WRITERS)}")
    if args.fail_if_slower is not None and not args.fail_if_slower >= 0:
        raise InputError(None, "--fail-if-slower: PCT must be a number of 0 or more")
    models = _models(args.onnx, specs, names)
    from trtstudio.diff import prefetch

    # a second process for what each side gives alone, started before this one imports numpy
    helper = prefetch.start(specs, models, names)
    try:
        from trtstudio.diff import gate as gates
        from trtstudio.diff.core import diff
        from trtstudio.diff.sides import load_side, unique_names

        skip_teardown()  # two engines' layers and their groups are garbage once printed: no freeing one by one
        sides = [load_side(s, m, names[i] if names else None) for i, (s, m) in enumerate(zip(specs, models, strict=True))]
        unique_names(sides)
        result = diff(sides[0], *sides[1:], prefetch=helper)
    finally:
        if helper is not None:
            helper.close()
    doc = result.to_json()
    keep(sides, result, doc)  # freed by the process's end, not when this returns
    results = [gates.gate(p, args.fail_if_slower) for p in doc["diffs"]] if args.fail_if_slower is not None else []
    if results:
        doc["gate"] = {"fail_if_slower_percent": args.fail_if_slower, "exit": gates.worst([c for c, _ in results]),
                       "results": [{"other": p["other"]["name"], "exit": c, "text": t}
                                   for p, (c, t) in zip(doc["diffs"], results, strict=True)]}
    from trtstudio.diff.render import markdown, write, write_text

    written = [write(doc, out, [t for _, t in results]) for out in args.output]
    if args.junit:
        written.append(write_text(args.junit, gates.junit_xml(doc, args.fail_if_slower)))
    if args.markdown:
        written.append(write_text(args.markdown, markdown(doc, [t for _, t in results])))
    from trtstudio.diff.core import count_non_finite_doc

    rc = emit(doc, args.json, _render, indent=args.indent, written=written,
              non_finite=count_non_finite_doc(doc) if args.json else None)
    return doc["gate"]["exit"] if results else rc


def _render(doc: dict[str, Any]) -> str:
    from trtstudio.diff.render import text

    out = text(doc)
    for r in (doc.get("gate") or {}).get("results", []):
        out += f"\n{r['text']}"
    return out
