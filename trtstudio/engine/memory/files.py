"""One engine's memory from its files: :func:`engine_memory` names the engine as every command does
(``engine.naming.resolve``), :func:`memory_of` reads its logs (a build document's log included), a
plan's size and the engine's own information."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from trtstudio.engine.memory.categories import CATEGORIES, EngineMemory, Figure
from trtstudio.engine.memory.from_info import fill_from_info
from trtstudio.engine.memory.from_log import log_figures
from trtstudio.engine.memory.layers import layer_rows, live_memory
from trtstudio.engine.memory.log import LINE_KINDS, Line, read_log
from trtstudio.engine.model import EngineInfo
from trtstudio.errors import InputError

_PLAN_SUFFIXES = (".engine", ".plan", ".trt", ".trtengine")


def _text_of(path: Path) -> str | None:
    """A file's text where it is a text log (not a JSON document, not binary); None otherwise."""
    from trtstudio.engine.readers import is_binary, read_head

    head = read_head(path)
    if is_binary(head) or head.lstrip()[:1] == b"{":
        return None
    return path.read_bytes().decode("utf-8", errors="replace")


def _build_doc_log(path: Path) -> tuple[str | None, int | None]:
    """A ``trtstudio.build/1`` document's log as text, and its ``engine_bytes``."""
    import json

    from trtstudio.engine.buildlog import build_log_text, log_line
    from trtstudio.engine.readers import read_head

    if b'"trtstudio.build/1"' not in read_head(path)[:400]:  # the schema comes first; a layer JSON is not read twice
        return None, None
    try:
        doc = json.loads(path.read_text(errors="replace"))
    except ValueError:
        return None, None
    if not isinstance(doc, dict) or doc.get("schema") != "trtstudio.build/1":
        return None, None
    lines = [log_line(str(r.get("source") or "TRT"), str(r.get("severity") or ""), str(r.get("message")))
             for r in doc.get("log") or [] if isinstance(r, dict)]
    size = doc.get("engine_bytes")
    return build_log_text({}, {}, lines), size if isinstance(size, int) else None


def engine_memory(names: Sequence[str] | str, name: str | None = None) -> EngineMemory:
    """The memory of the one engine ``names`` name (``engine.naming.resolve``: a folder, FILE,FILE,
    a TREx prefix, a file, a build document, a session)."""
    from trtstudio.engine.naming import resolve

    named = resolve(names)
    if named.session:
        from trtstudio.report.session import load_session

        s = load_session(named.session)
        if not s.engines:
            raise InputError(named.session, "this session holds no engine")
        rec = s.engines[0]
        return memory_of(rec.info, [p for p in rec.paths if Path(p).is_file()], name or named.label,
                         session=named.session)
    from trtstudio.engine.load import load_engine

    try:
        info: EngineInfo | None = load_engine(named.files)
    except InputError as exc:  # a plan this machine cannot deserialize, a log of memory lines only
        rest = [f for f in named.files if Path(f).suffix.lower() not in _PLAN_SUFFIXES]
        try:
            info = load_engine(rest) if rest and len(rest) < len(named.files) else None
        except InputError:
            info = None
        out = memory_of(info, named.files, name or named.label)
        if not any(f.bytes is not None for f in out.categories.values()):
            raise
        if len(rest) < len(named.files):
            out.warnings.insert(0, f"the plan's layers were not read ({exc.one_line()[:200]}): its size only")
        return out
    return memory_of(info, named.files, name or named.label)


def memory_of(info: EngineInfo | None, files: Sequence[str], name: str, session: str | None = None,
              per_layer: bool = True) -> EngineMemory:
    """An engine's memory from its EngineInfo (layers, I/O, the readers' figures) and its files
    (logs read line by line here, a plan's size, a build document's log and ``engine_bytes``).
    ``per_layer=False``: the categories only, without the per-layer rows and the live activations
    (what diff and compare show)."""
    figs = {n: Figure(n) for n in CATEGORIES}
    per_profile: dict[int, dict[str, Figure]] = {}
    ctx = Figure("context_device_memory")
    log_layers: list[Line] = []
    log_source = ""
    kinds = dict.fromkeys(LINE_KINDS, 0)
    warnings: list[str] = []
    plan_size: Figure | None = None
    for f in files:
        p = Path(f)
        text, doc_size = None, None
        if p.suffix.lower() in _PLAN_SUFFIXES:
            plan_size = Figure("engine_size", p.stat().st_size, f"{f}: the plan file's size")
            continue
        if p.suffix.lower() == ".json":
            text, doc_size = _build_doc_log(p)
            if doc_size is not None:
                plan_size = Figure("engine_size", doc_size, f"{f}: engine_bytes")
        else:
            text = _text_of(p)
        if not text:
            continue
        log = read_log(f"{f}#log" if doc_size is not None else f, text)
        if doc_size is not None:  # numbered as the document's log records (the text has a header line first)
            for line in log.lines:
                line.number -= 1
        for line in log.lines:
            kinds[line.kind] += 1
        if not log.lines:
            continue
        builds = [b for b in log.builds if b.has_figures()]
        if len(builds) > 1:
            warnings.append(f"{f}: the log holds {len(builds)} engine builds; the figures are the last one's")
        lf, lp, lc, ll = log_figures(log)
        for n, fig in lf.items():
            if fig.bytes is not None and figs[n].bytes is None:
                figs[n] = fig
        per_profile = per_profile or lp
        ctx = ctx if ctx.bytes is not None else lc
        if ll and not log_layers:
            log_layers, log_source = ll, f
    label = session or (files[0] if len(files) == 1 else name)
    if info is not None:
        fill_from_info(figs, info, label, session)
    if plan_size is not None:
        old = figs["engine_size"]
        if old.bytes is not None:
            plan_size.also.append({"bytes": old.bytes, "source": old.source})
        figs["engine_size"] = plan_size
    if not per_layer:
        rows, live = [], None
    elif info is not None and info.layers:
        rows = layer_rows(info.layers, log_layers, log_source)
        outputs = [t.name for t in info.io_tensors]
        live = live_memory(info.layers, outputs)
    else:
        rows = layer_rows([], log_layers, log_source)
        live = None
    dm = info.memory.get("device_memory") if info is not None else None
    if ctx.bytes is None and isinstance(dm, int):
        ctx = Figure("context_device_memory", dm, f"{session or label}: engine.memory['device_memory']")
    profiles = []
    if len(per_profile) > 1:
        profiles = [{"profile": p, "categories": [f.to_json() for f in pf.values()]} for p, pf in per_profile.items()]
    if info is not None:
        warnings += [w for w in info.warnings if w not in warnings]
    return EngineMemory(name, list(files) or ([session] if session else []), figs, profiles, ctx, rows, live,
                        kinds, warnings)
