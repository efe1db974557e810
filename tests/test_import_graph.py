"""The package's import graph: no module imports another that imports it back (directly or
around a circle), lazy imports inside functions included, ``if TYPE_CHECKING:`` imports not.
(import-linter's contracts in pyproject.toml check the packages; this checks every module.)"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import grimp
import pytest

# Circles that other items of issue 33 take apart; none may be added, and each goes from this
# list as it goes from the code (a circle listed here that no longer exists is fine).
KNOWN = {
    frozenset({"trtstudio.backends.inputs", "trtstudio.backends.shapes"}),  # item 2: the shape rule
    frozenset({"trtstudio.backends.build", "trtstudio.backends.support"}),  # item 3: one TensorRT parsing module
}


def circles(graph: grimp.ImportGraph, package: str) -> list[frozenset[str]]:
    """The strongly connected components of more than one module among ``package``'s modules."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    inside = set(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iterative (no recursion limit)
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start) & inside)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child) & inside))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))

    for module in modules:
        if module not in index:
            visit(module)
    return found


# Circles through a package's ``__init__`` (counted by ``with_parents``): found when that check came
# (issue 43 item 10); the same rule, none added, each goes as it goes from the code.
KNOWN_WITH_PARENTS = KNOWN | {
    frozenset({"trtstudio.backends.shapes", "trtstudio.backends.shapes.plan", "trtstudio.backends.shapes.planner",
               "trtstudio.backends.shapes.probe", "trtstudio.backends.shapes.text"}),
}


def with_parents(graph: grimp.ImportGraph, package: str) -> grimp.ImportGraph:
    """``graph`` with an import of its package by every submodule: Python runs ``a/__init__.py``
    before ``a.b``, so ``a`` importing ``a.b`` (at the top of ``__init__``) and ``a.b`` importing
    ``a.c`` is a circle at run time that grimp's graph does not show."""
    for module in list(graph.modules):
        parent = module.rpartition(".")[0]
        if module.startswith(package + ".") and parent != package and parent in graph.modules:
            graph.add_import(importer=module, imported=parent)
    return graph


def test_no_import_circles_inside_the_package() -> None:
    graph = grimp.build_graph("trtstudio", exclude_type_checking_imports=True)
    new = [sorted(c) for c in circles(graph, "trtstudio") if c not in KNOWN]
    assert not new, f"modules that import each other (around a circle): {new}"


def test_no_import_circles_through_a_package_init() -> None:
    """A package's ``__init__`` that imports its own modules closes a circle with any of them that
    imports another (``report`` <-> ``report.compare`` <-> ``report.html`` <-> ``report.model`` <->
    ``report.writers`` was one): every package but the ones listed imports nothing of its own."""
    graph = with_parents(grimp.build_graph("trtstudio", exclude_type_checking_imports=True), "trtstudio")
    found = circles(graph, "trtstudio")
    new = [sorted(c) for c in found if c not in KNOWN_WITH_PARENTS]
    assert not new, f"modules that import each other through a package's __init__: {new}"
    assert not any("trtstudio.report" in c for c in found)



def lazy_faces(package: str = "trtstudio") -> dict[str, set[str]]:
    """Each package ``__init__`` of ``package`` that hands names on lazily (a module ``__getattr__`` or
    a callable module class, PEP 562) -> the modules it loads on first use: the imports it lists under
    ``if TYPE_CHECKING:`` for the type checker, and the modules it names in strings (``import_module``)."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=False)
    root = Path(importlib.util.find_spec(package).origin).parent  # type: ignore[union-attr, arg-type]
    faces: dict[str, set[str]] = {}
    for init in sorted(root.rglob("__init__.py")):
        name = ".".join((package, *init.parent.relative_to(root).parts))
        tree = ast.parse(init.read_text(encoding="utf-8"))
        top = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        if "__getattr__" not in top and "_CallableModule" not in top:
            continue
        named = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in graph.modules}
        faces[name] = {m for m in graph.find_modules_directly_imported_by(name) | named if m.startswith(package)}
    return faces


def face_users(package: str, faces: set[str]) -> dict[str, set[str]]:
    """module -> the lazy faces it takes a name from (``from trtstudio.report import plots``,
    ``from trtstudio import __version__``, ``import trtstudio``; lazy imports included, ``if
    TYPE_CHECKING:`` blocks not): Python asks the face's ``__getattr__`` for that name first."""
    root = Path(importlib.util.find_spec(package).origin).parent  # type: ignore[union-attr, arg-type]
    users: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        module = ".".join((package, *parts[:-1])) if parts[-1] == "__init__" else ".".join((package, *parts))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(block.test) for n in ast.walk(block)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in faces:
                users.setdefault(module, set()).add(node.module)
            elif isinstance(node, ast.Import):
                users.setdefault(module, set()).update(a.name for a in node.names if a.name in faces and not a.asname)
    return users


def test_no_import_circles_through_a_lazy_package_face() -> None:
    """The circle issue 53 found: ``trtstudio.report`` loads ``report.model`` and ``report.writers`` on
    first use, and ``report.model``, ``report.html``, ``report.shapes``... took ``plots`` from the package
    (``from trtstudio.report import plots``); ``engine/readers``, ``graph/model`` and ``report/model``
    took ``jsonio`` or ``__version__`` from ``trtstudio``, whose face loads ``trtstudio.api``, which
    reaches them. A face counts here as the module it is: what it loads lazily, and who takes names from
    it (a submodule merely running its face first is no edge: a lazy face imports nothing then)."""
    graph = grimp.build_graph("trtstudio", exclude_type_checking_imports=True)
    faces = lazy_faces()
    assert {"trtstudio", "trtstudio.report", "trtstudio.diff"} <= set(faces)
    assert {"trtstudio.report.model", "trtstudio.report.writers", "trtstudio.api"} <= faces["trtstudio.report"]
    for face, loaded in faces.items():
        for module in loaded:
            graph.add_import(importer=face, imported=module)
    for module, used in face_users("trtstudio", set(faces)).items():
        for face in used:
            if module != face:
                graph.add_import(importer=module, imported=face)
    found = [sorted(c) for c in circles(graph, "trtstudio") if c & set(faces)]
    assert not found, f"modules that import each other through a lazy package face: {found}"

def test_importing_the_report_package_imports_none_of_its_modules() -> None:
    """At run time too: ``import trtstudio.report`` loads no submodule; its names load on first use."""
    import subprocess
    import sys

    code = ("import sys, trtstudio.report as r; "
            "print(sorted(m for m in sys.modules if m.startswith('trtstudio.report.'))); "
            "print(r.build_report.__module__, r.write_report.__module__, r.RunData.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "trtstudio.report.model trtstudio.report.writers trtstudio.report.session"


def test_the_check_finds_a_circle() -> None:
    graph = grimp.ImportGraph()
    for m in ("p", "p.a", "p.b", "p.c", "p.d"):
        graph.add_module(m)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.c")
    graph.add_import(importer="p.c", imported="p.a")  # a -> b -> c -> a
    graph.add_import(importer="p.d", imported="p.a")  # d leads into it, is no part of it
    assert circles(graph, "p") == [frozenset({"p.a", "p.b", "p.c"})]


def test_the_check_finds_a_circle_through_a_package_init() -> None:
    graph = grimp.ImportGraph()
    for m in ("p", "p.q", "p.q.a", "p.q.b"):
        graph.add_module(m)
    graph.add_import(importer="p.q", imported="p.q.a")  # q/__init__.py imports its module a
    graph.add_import(importer="p.q.a", imported="p.q.b")  # a imports b: b's import runs q/__init__ first
    assert circles(graph, "p") == []
    assert circles(with_parents(graph, "p"), "p") == [frozenset({"p.q", "p.q.a", "p.q.b"})]


def test_report_model_and_session_do_not_import_each_other() -> None:
    graph = grimp.build_graph("trtstudio", exclude_type_checking_imports=True)
    assert "trtstudio.report.model" not in graph.find_modules_directly_imported_by("trtstudio.report.session")
    assert not graph.find_shortest_chain(importer="trtstudio.report.session", imported="trtstudio.report.model")


def test_graph_paint_and_graph_view_do_not_import_each_other_even_for_types() -> None:
    graph = grimp.build_graph("trtstudio", exclude_type_checking_imports=False)
    assert not graph.find_shortest_chain(importer="trtstudio.ui.graph_paint", imported="trtstudio.ui.graph_view")
    assert "trtstudio.ui.graph_paint" in graph.find_modules_directly_imported_by("trtstudio.ui.graph_view")


def test_the_layering_names_every_part_of_the_package() -> None:
    """Every top-level module and package of trtstudio stands in one layer of pyproject.toml's layers
    contract (import-linter checks the order; a part left out would escape it)."""
    tomllib = pytest.importorskip("tomllib")
    here = Path(__file__).resolve().parents[1]
    config = tomllib.loads((here / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["name"].startswith("One layering")]
    named = {part.strip() for layer in contract["layers"] for part in layer.split("|")}
    root = here / "trtstudio"
    parts = {f"trtstudio.{p.stem}" for p in root.glob("*.py") if p.name != "__init__.py"}
    parts |= {f"trtstudio.{p.parent.name}" for p in root.glob("*/__init__.py")}
    assert parts - {"trtstudio.resources"} == named  # resources: data files, no code
