"""One rule for naming an engine's files, for every command and the Python API.

What a user names (:func:`resolve`) becomes the files of ONE engine (:class:`EngineFiles`):

- a folder holding one engine's files (the trtexec/TREx layout; an ``.onnx`` beside them is its
  model). Only files a reader claims by their content count: a README or notes file is not another
  engine. A folder with several engines is refused, naming each by its prefix; a plan is the engine
  of the ``trtstudio build`` document that names it (``engine_path``), or of the one build log
  beside it that records its TensorRT-RTX version, whatever their names (``engine.load`` then reads
  the plan's header only, never deserializing it);
- files joined with commas (``layers.json,profile.json``), in one argument or several;
- a TREx-style prefix: ``DIR/resnet.onnx.engine`` for ``resnet.onnx.engine.graph.json``,
  ``.profile.json``, ... (where the prefix is itself a serialized plan, the exports beside it are
  read, as TREx read them: the plan needs the TensorRT that built it and a GPU);
- one file (a layer JSON, a profile, a log, a ``trtstudio build --json`` document, a plan);
- a ``.trtstudio`` session (its engine and model), alone.

An ``.onnx`` among the names is the engine's model. Every refusal is one :class:`NamingError`
(an ``InputError``, so the CLI prints ``error: NAME: ...`` and exits 2; a ``ValueError`` in Python,
or a ``FileNotFoundError`` for a name that matches nothing), ending with :data:`FORMS`.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trtstudio.errors import InputError

FORMS = ("name one engine as a folder of its files, its files joined with commas (FILE,FILE,...), "
         "a TREx prefix (DIR/NAME.onnx.engine for NAME.onnx.engine.graph.json, ...), one file, "
         "a trtstudio build --json document or a .trtstudio session")

# trtexec/TREx file names: NAME.engine.graph.json, NAME.engine.profile.metadata.json, ...
_PART_RE = re.compile(r"(\.engine)?\.(graph|profile|timing|times|metadata|build|layers|layer_info|log)\b.*$", re.I)
_PLAN_SUFFIXES = (".engine", ".plan", ".trt", ".trtengine")

Name = str | os.PathLike[str]


class NamingError(InputError, ValueError):
    """A name that is not one engine's files (one line, ending with :data:`FORMS`)."""

    def __init__(self, path: Name | None, message: str, forms: bool = True) -> None:
        super().__init__(path, f"{message}; {FORMS}" if forms else message)


class NameNotFound(NamingError, FileNotFoundError):
    """A name that is no file, folder or prefix of engine files."""


@dataclass
class EngineFiles:
    """One engine's files as :func:`resolve` found them: ``files`` (what ``load_engine`` reads),
    ``model`` (an ONNX file among or beside them), ``session`` (a ``.trtstudio`` file: its own
    engine and model, ``files`` empty), ``label`` (a folder's or prefix's name) and ``form``
    (``folder``, ``list``, ``prefix``, ``file``, ``session``)."""

    files: list[str] = field(default_factory=list)
    model: str | None = None
    session: str | None = None
    label: str = ""
    form: str = ""


def stem(name: str) -> str:
    """The engine a file name belongs to: ``resnet.onnx`` for ``resnet.onnx.engine.graph.json``."""
    base = re.sub(r"__added_in_[0-9a-f]+", "", name)
    if ".engine" in base:
        return base.split(".engine", 1)[0]
    return _PART_RE.sub("", Path(base).stem) or base


def is_engine_file(path: Path) -> bool:
    """Whether a reader claims ``path`` by its content (its sniffer), not by its name alone: what
    counts as an engine's file in a folder or under a prefix."""
    from trtstudio.engine.readers import is_binary, read_head, readers

    try:
        head = read_head(path)
    except InputError:
        return False
    if not head.strip():
        return False
    binary = is_binary(head)
    text = "" if binary else head.decode("utf-8", errors="replace")
    for r in readers():  # in find_reader's order, sniffers only
        if r.sniff is None:
            continue
        if r.binary and r.sniff(head.decode("latin-1"), path):
            return True
        if not r.binary and not binary and r.sniff(text, path):
            return True
    return False


def _prefix_of(files: list[Path]) -> str:
    """The TREx prefix of one engine's files: their common name up to a dot (``DIR/NAME.onnx.engine``)."""
    names = [p.name for p in files]
    common = os.path.commonprefix(names)
    if len(names) > 1:
        common = common[: common.rfind(".")] if "." in common else ""
    return str(files[0].parent / common) if common else ""


def _engines_of(paths: list[Path]) -> dict[str, list[Path]]:
    """The engine files among ``paths`` grouped by engine (:func:`stem`), in name order."""
    groups: dict[str, list[Path]] = {}
    for p in sorted(paths):
        if p.is_file() and not p.name.startswith(".") and _kind(p) == "engine" and is_engine_file(p):
            groups.setdefault(stem(p.name), []).append(p)
    return groups


_ENGINE_PATH_RE = re.compile(r'"engine_path":\s*"((?:[^"\\]|\\.)*)"')
_LOG_VERSION_RE = re.compile(r'"tensorrt_rtx":\s*"([^"]+)"')


def _built_plans(groups: dict[str, list[Path]]) -> dict[str, list[Path]]:
    """``groups`` with each plan-only group joined to the group of its build: a ``trtstudio build``
    document naming it as its ``engine_path``, else, one plan and one other group, a build log or
    document of the TensorRT-RTX version its header records (``build -o model.engine --save-log
    build.log``: two names, one engine)."""
    from trtstudio.engine.compat import read_plan_header

    plans = {k: g for k, g in groups.items() if all(p.suffix.lower() in _PLAN_SUFFIXES for p in g)}
    if not plans or len(plans) == len(groups):
        return groups
    out = {k: list(g) for k, g in groups.items() if k not in plans}
    heads = {k: _head(g) for k, g in out.items()}
    for key, plan_files in plans.items():
        owner = next((k for k, (named, _) in heads.items() if any(_same(p, named) for p in plan_files)), None)
        if owner is None and len(plans) == 1 and len(out) == 1:
            version = (read_plan_header(plan_files[0]) or {}).get("version")
            (k, (_, recorded)), = heads.items()
            owner = k if version and recorded and recorded.startswith(f"{version}.") else None
        if owner is None:
            out[key] = plan_files
        else:
            out[owner] += plan_files
    return out


def _head(files: list[Path]) -> tuple[list[str], str | None]:
    """(the plans a group's build documents name, the TensorRT-RTX version its build document or log records)."""
    from trtstudio.engine.buildlog import LOG_HEADER
    from trtstudio.engine.readers import read_head

    named: list[str] = []
    version = None
    for p in files:
        try:
            text = read_head(p).decode("utf-8", errors="replace")
        except InputError:
            continue
        if '"trtstudio.build/1"' in text[:200]:
            named += [m.group(1).encode().decode("unicode_escape") for m in _ENGINE_PATH_RE.finditer(text[:4096])][:1]
        elif not text.startswith(LOG_HEADER):
            continue
        found = _LOG_VERSION_RE.search(text)
        version = version or (found.group(1) if found else None)
    return named, version


def _same(plan: Path, named: list[str]) -> bool:
    for n in named:
        try:
            if os.path.samefile(plan, n):
                return True
        except OSError:
            if Path(n).name == plan.name and not os.path.exists(n):  # a folder moved since: by name
                return True
    return False


def _kind(p: Path) -> str:
    from trtstudio.filekinds import classify

    return classify(p, sniff=False)


def _several(where: Name, groups: dict[str, list[Path]]) -> NamingError:
    shown = [_prefix_of(g) or str(g[0]) for g in groups.values()]
    names = ", ".join(os.path.basename(s) for s in shown[:4]) + (", ..." if len(shown) > 4 else "")
    return NamingError(where, f"holds the files of {len(groups)} engines ({names}): name one, e.g. {shown[0]}")


def _folder(folder: Path) -> tuple[list[str], str | None]:
    """A folder's one engine's files and the model beside them."""
    from trtstudio.fileio import check_input

    check_input(folder, allow_dir=True)
    entries = list(folder.iterdir())
    groups = _built_plans(_engines_of(entries))
    if not groups:
        raise NamingError(folder, "no engine files in this folder (layer JSON, profile, timings, logs)")
    if len(groups) > 1:
        raise _several(folder, groups)
    (name, files), = groups.items()
    models = sorted(str(p) for p in entries if p.is_file() and _kind(p) == "onnx")
    if len(models) > 1:
        models = [m for m in models if stem(Path(m).name) == name]
    return [str(p) for p in files], models[0] if len(models) == 1 else None


def _prefixed(name: str) -> list[Path]:
    """The engine files whose names start with ``name`` and a dot (a TREx prefix), one engine's."""
    matches = [Path(p) for p in glob.glob(glob.escape(name) + ".*")]
    groups = _engines_of([p for p in matches if _kind(p) == "engine"])
    if len(groups) > 1:
        raise _several(name, groups)
    return next(iter(groups.values()), [])


def _split(names: Sequence[Name] | Name) -> list[str]:
    """Each name as a string, comma lists split (a name that exists with a comma in it is kept)."""
    items = [names] if isinstance(names, (str, os.PathLike)) else list(names)
    out: list[str] = []
    for n in items:
        s = os.fspath(n)
        out += [p for p in s.split(",") if p] if "," in s and not os.path.exists(s) else [s]
    return out


def resolve(names: Sequence[Name] | Name) -> EngineFiles:
    """The files of the one engine that ``names`` name (see the module docstring); NamingError
    (one line, with :data:`FORMS`) for anything else."""
    from trtstudio.fileio import check_input

    items = _split(names)
    if not items:
        raise NamingError(None, "no engine named")
    out = EngineFiles(form="list" if len(items) > 1 else "")
    models: list[str] = []
    for item in items:
        p = Path(item)
        kind = _kind(p)
        if kind == "onnx":
            models.append(item)
            continue
        if kind == "session":
            if len(items) > 1:
                raise NamingError(item, "a session names its engine alone (it holds its model and engine files)")
            check_input(p, what="a .trtstudio session file")
            return EngineFiles(session=item, label=p.stem, form="session")
        if p.is_dir():
            files, beside = _folder(p)
            out.files += files
            models += [beside] if beside else []
            out.label = out.label or p.resolve().name
            out.form = out.form or "folder"
            continue
        exports = _prefixed(item) if not p.is_file() or p.suffix.lower() in _PLAN_SUFFIXES else []
        if exports:  # a TREx prefix (a plan beside its exports counts as their prefix)
            out.files += [str(f) for f in exports]
            out.label = out.label or stem(p.name)
            out.form = out.form or "prefix"
        elif os.path.lexists(p):
            check_input(p, what="an engine's file")
            out.files.append(item)
            out.label = out.label or stem(p.name)
            out.form = out.form or "file"
        else:
            raise NameNotFound(item, "no such file, folder or prefix of engine files")
    if len(set(models)) > 1:
        raise NamingError(models[1], "only one ONNX model per engine")
    out.model = models[0] if models else None
    if not out.files:
        raise NamingError(items[0], "no engine files given, only a model")
    out.files = list(dict.fromkeys(out.files))
    return out
