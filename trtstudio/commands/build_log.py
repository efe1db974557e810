"""``trtstudio build-log``: where a build spent its time, from its log (any TensorRT's wording):
the phases, the layers that cost the most build time with the settings that cut it, timing-cache
hits and misses, build memory; and, with full TensorRT, a timing-cache file's entries or two diffed."""

from __future__ import annotations

import argparse

HELP = "build timeline, tactic timing per layer, timing-cache hits and memory from a TensorRT build log"
INPUTS = ("log", "cache")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", nargs="?", help="build log: trtexec --verbose, TensorRT's Python logger, "
                                              "or trtstudio build --save-log")
    parser.add_argument("--cache", action="append", metavar="FILE",
                        help="a timing-cache file to list (twice: the two diffed); needs full TensorRT. With "
                             "TensorRT-RTX: a runtime cache file (size, hash; its entries cannot be listed)")
    parser.add_argument("--backend", choices=("tensorrt", "rtx", "auto"), default="auto",
                        help="runtime that reads --cache files (default: auto)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON document (trtstudio.buildlog/1, or trtstudio.timingcache/1 for --cache)")


def run(args: argparse.Namespace) -> int:
    """Exit 0; 2 for a file that is not a build log, or a cache no installed TensorRT can read."""
    from trtstudio.commands._emit import emit
    from trtstudio.engine import buildtime
    from trtstudio.errors import InputError

    if args.cache:
        from trtstudio.backends.trt_parser import import_runtime

        if len(args.cache) > 2:
            raise InputError(args.cache[2], "give one --cache to list or two to diff")
        trt, _ = import_runtime(args.backend)
        if trt.__name__ == "tensorrt_rtx":  # no timing cache: its runtime cache instead
            from trtstudio.backends.build import render_runtime_cache, runtime_cache_doc

            if len(args.cache) > 1:
                raise InputError(args.cache[1], "TensorRT-RTX's runtime caches cannot be diffed (their entries "
                                                "cannot be listed): give one --cache")
            return emit(runtime_cache_doc(args.cache[0], trt), args.json, render_runtime_cache)
        docs = [buildtime.timing_cache_entries(c, trt) for c in args.cache]
        doc = docs[0] if len(docs) == 1 else buildtime.diff_timing_caches(docs[0], docs[1])
        return emit(doc, args.json, _cache_text)
    if not args.log:
        raise InputError(None, "give a build log (or --cache FILE)")
    doc = buildtime.read_build_log(args.log)
    return emit(doc, args.json, buildtime.render_text)


def _cache_text(doc: dict) -> str:  # type: ignore[type-arg]
    if "entries" in doc:
        lines = [f"{doc['source']}: {len(doc['entries'])} timing-cache entries"]
        lines += [f"  {k}  {v['tactic']}  {v['ms'] if v['ms'] is not None else '-'} ms" for k, v in doc["entries"].items()]
        return "\n".join(lines)
    return "\n".join([f"{doc['a']} vs {doc['b']}: {doc['same']} keys same, {len(doc['changed_tactic'])} changed tactic, "
                      f"{len(doc['only_a'])} only in A, {len(doc['only_b'])} only in B"]
                     + [f"  {c['key']}: {c['a']['tactic']} -> {c['b']['tactic']}" for c in doc["changed_tactic"]])
