"""Report writers, registered by name and file extension (pyqtgraph's Exporter / glue's Registry idea).

Built in: ``html`` (.html, .htm), ``json`` (.json), ``csv`` (.csv: the layer table, plus the raw
latency samples as ``<stem>.samples.csv``; ``what="samples"`` writes only the samples) and ``pdf``
(.pdf, through Qt's QTextDocument; see ``trtstudio.report.pdf``). Each writer is one function
``write(obj, path, what) -> list[Path]`` imported lazily, so choosing HTML never imports Qt.
Comparisons have their own registry (:data:`COMPARISON_WRITERS`) with html/json/pdf.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.errors import InputError
from trtstudio.fileio import atomic_write

WriteFn = Callable[[Any, Path, "str | None"], list[Path]]


@dataclass(frozen=True)
class Writer:
    """A registered writer: its name, the extensions it claims, a description and its function."""

    name: str
    extensions: tuple[str, ...]
    description: str
    write: WriteFn


class Registry:
    """Writers of one kind of document, by name and by extension."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._writers: dict[str, Writer] = {}

    def register(self, name: str, extensions: tuple[str, ...], description: str = "") -> Callable[[WriteFn], WriteFn]:
        """Decorator: register ``fn(obj, path, what)`` under ``name`` for ``extensions`` (".html", ...)."""
        def deco(fn: WriteFn) -> WriteFn:
            self._writers[name] = Writer(name, tuple(e.lower() for e in extensions), description, fn)
            return fn
        return deco

    def names(self) -> list[str]:
        """Registered writer names."""
        return list(self._writers)

    def extensions(self) -> list[str]:
        """Every claimed extension."""
        return [e for w in self._writers.values() for e in w.extensions]

    def get(self, name: str) -> Writer:
        """The writer called ``name`` (InputError when none is)."""
        try:
            return self._writers[name]
        except KeyError:
            raise InputError(None, f"no {self.kind} writer {name!r} (have: {', '.join(self._writers)})") from None

    def for_path(self, path: str | Path) -> Writer:
        """The writer claiming ``path``'s extension (InputError when none does)."""
        ext = Path(path).suffix.lower()
        for w in self._writers.values():
            if ext in w.extensions:
                return w
        raise InputError(path, f"unknown {self.kind} format {ext or '(no extension)'!r}; use one of "
                               + ", ".join(self.extensions()))


REPORT_WRITERS = Registry("report")
COMPARISON_WRITERS = Registry("comparison")

# Rows of the layer, finding and layer-diff tables in a PDF: Qt lays a 50,000-layer table out for
# over ten minutes (and 2 GB), and 1,000 rows are already 25 pages; the other formats list every row.
PDF_MAX_ROWS = 1000


def write_json_doc(doc: dict[str, Any], path: Path) -> list[Path]:
    """Write a JSON document atomically, indented by two (NaN/Infinity become null, with a warning:
    strict JSON), encoded by ``bigdocs.children.encode_document`` (orjson outside the window's workers)."""
    from trtstudio.bigdocs.children import encode_document
    from trtstudio.jsonio import warn_non_finite

    data, non_finite = encode_document(doc)
    warn_non_finite(non_finite, str(path))
    return [atomic_write(path, lambda fh: fh.write(data), mode="wb")]


@REPORT_WRITERS.register("html", (".html", ".htm"), "one self-contained HTML file (inline SVG plots, print CSS)")
def _report_html(rep: Any, path: Path, what: str | None = None) -> list[Path]:
    from trtstudio.report.html import write_html

    return write_html(rep, path)


@REPORT_WRITERS.register("json", (".json",), "schema trtstudio.report/1: everything needed to redraw the report")
def _report_json(rep: Any, path: Path, what: str | None = None) -> list[Path]:
    return write_json_doc(rep.to_json(), path)


LAYER_COLUMNS = ("index", "name", "type", "precision", "precision_in", "precision_out", "tactic", "provider", "time_ms",
                 "percent", "onnx_nodes", "findings", "severity", "hints")


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, list):
        return ";".join(str(x) for x in v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def write_layers_csv(rows: list[dict[str, Any]], path: Path) -> Path:
    """The layer table as CSV (lists joined with ';')."""
    def write(fh: Any) -> None:
        w = csv.writer(fh)
        w.writerow(LAYER_COLUMNS)
        for r in rows:
            w.writerow([_cell(r.get(c)) for c in LAYER_COLUMNS])
    return atomic_write(path, write)


def write_latency_csv(samples: np.ndarray, path: Path) -> Path:
    """Raw latencies as CSV: ``index,latency_ms``."""
    vals = np.asarray(samples, dtype=np.float64)

    def write(fh: Any) -> None:
        fh.write("index,latency_ms\n")
        if vals.size:
            body = np.column_stack((np.arange(vals.size), vals))
            np.savetxt(fh, body, fmt=("%d", "%.9g"), delimiter=",")
    return atomic_write(path, write)


def samples_path(path: Path) -> Path:
    """``report.csv`` -> ``report.samples.csv``."""
    return path.with_name(path.stem + ".samples" + path.suffix)


@REPORT_WRITERS.register("csv", (".csv",), "layer table; raw latency samples as <stem>.samples.csv (what='samples': only those)")
def _report_csv(rep: Any, path: Path, what: str | None = None) -> list[Path]:
    what = what or "all"
    if what not in ("all", "layers", "samples"):
        raise InputError(None, f"--what must be layers, samples or all, not {what!r}")
    samples = getattr(rep, "samples", None)
    out: list[Path] = []
    if what == "samples":
        if samples is None:
            raise InputError(path, "the report has no run, so no latency samples to write")
        return [write_latency_csv(samples, path)]
    out.append(write_layers_csv(rep.layers, path))
    if what == "all" and samples is not None and len(samples):
        out.append(write_latency_csv(samples, samples_path(path)))
    return out


@REPORT_WRITERS.register("pdf", (".pdf",), "PDF of the same content (Qt's QTextDocument, headless)")
def _report_pdf(rep: Any, path: Path, what: str | None = None) -> list[Path]:
    from trtstudio.report.html import render_report
    from trtstudio.report.pdf import write_pdf

    text, resources = render_report(rep, inline=False, max_rows=PDF_MAX_ROWS)
    return [write_pdf(text, resources, path, rep.title)]


@REPORT_WRITERS.register("md", (".md", ".markdown"), "Markdown: At a glance, runs, findings (for PRs and wikis)")
def _report_md(rep: Any, path: Path, what: str | None = None) -> list[Path]:
    from trtstudio.report.markdown import render_markdown

    text = render_markdown(rep)
    return [atomic_write(path, lambda fh: fh.write(text))]


def write_report(report: Any, path: str | Path, what: str | None = None, fmt: str | None = None) -> list[Path]:
    """Write ``report`` in the format ``path``'s extension names (or ``fmt``, a writer name);
    returns the files written. ``what`` only matters for CSV."""
    p = Path(path)
    writer = REPORT_WRITERS.get(fmt) if fmt else REPORT_WRITERS.for_path(p)
    if p.parent and not p.parent.is_dir():
        raise InputError(p, "the folder does not exist")
    return writer.write(report, p, what)


@COMPARISON_WRITERS.register("html", (".html", ".htm"), "one self-contained HTML file, one-page summary first")
def _comparison_html(comp: Any, path: Path, what: str | None = None) -> list[Path]:
    from trtstudio.report.html import render_comparison

    text, _ = render_comparison(comp, inline=True)
    return [atomic_write(path, lambda fh: fh.write(text))]


@COMPARISON_WRITERS.register("json", (".json",), "schema trtstudio.comparison/2")
def _comparison_json(comp: Any, path: Path, what: str | None = None) -> list[Path]:
    return write_json_doc(comp.to_json(), path)


@COMPARISON_WRITERS.register("pdf", (".pdf",), "PDF of the same content")
def _comparison_pdf(comp: Any, path: Path, what: str | None = None) -> list[Path]:
    from trtstudio.report.html import render_comparison
    from trtstudio.report.pdf import write_pdf

    text, resources = render_comparison(comp, inline=False, max_rows=PDF_MAX_ROWS)
    return [write_pdf(text, resources, path, comp.title)]


def write_comparison(comp: Any, path: str | Path) -> list[Path]:
    """Write a comparison in the format ``path``'s extension names (.html, .json, .pdf)."""
    p = Path(path)
    writer = COMPARISON_WRITERS.for_path(p)
    if p.parent and not p.parent.is_dir():
        raise InputError(p, "the folder does not exist")
    return writer.write(comp, p, None)
