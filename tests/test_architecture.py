"""The layers point one way: no import cycle among fuzzfarm/, strategies/, edgecases/ and
cluster/, counting imports inside functions too; each module imports only its own layer
and the layers below it; no module is over 800 lines (issue 16).

The graph is read from the source with ``ast`` (nothing is imported): an edge A -> B for
every ``import B`` / ``from B import ...`` in A, relative imports resolved, a name imported
from a package counted as its submodule when it is one.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("fuzzfarm", "strategies", "edgecases", "cluster")


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = f.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = f
    return out


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        pkg = m if f.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[:len(pkg.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for n in names:
                while n and n not in mods:
                    n = n.rpartition(".")[0]
                if n and n != m:
                    graph[m].add(n)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    found: list = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(g) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


#: The base every layer stands on: binary formats as bit patterns, and correct rounding.
BASE = {"fuzzfarm", "fuzzfarm.errors", "fuzzfarm.formats", "fuzzfarm.rounding"}


def test_the_spec_layer_imports_nothing_above_it():
    """edgecases (the spec as data) depends on itself and the number-format base only;
    the base depends on nothing of the project."""
    graph = import_graph()
    for m, deps in graph.items():
        if m.startswith("edgecases"):
            assert all(d.startswith("edgecases") or d in BASE for d in deps), (m, deps)
        if m in BASE:
            assert deps <= BASE, (m, deps)


#: The pipeline, bottom up (README "Architecture"): a module may import its own layer and
#: the layers before it, never one after.  Each entry: module-name prefixes.
LAYERS = (
    ("base", ("fuzzfarm.errors", "fuzzfarm.formats", "fuzzfarm.rounding")),
    ("spec", ("edgecases",)),
    ("target", ("fuzzfarm.target",)),
    ("inputs", ("strategies",)),
    ("device", ("fuzzfarm.device",)),
    ("oracle", ("fuzzfarm.oracle",)),
    ("verdict", ("fuzzfarm.verdict",)),
    ("store", ("fuzzfarm.store",)),
    ("work", ("fuzzfarm.work",)),
    ("report", ("fuzzfarm.report",)),
    ("orchestrate", ("fuzzfarm.orchestrate",)),
    ("cluster", ("cluster",)),
    ("edge", ("fuzzfarm.cli", "fuzzfarm.__main__")),
)


def layer_of(module: str) -> int:
    """Index in LAYERS of ``module`` (the longest matching prefix); the bare ``fuzzfarm``
    package (its version) is base."""
    if module == "fuzzfarm":
        return 0
    best, at = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, at = len(p), i
    if at is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS (and the README map)")
    return at


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((m, d) for m, deps in graph.items() for d in deps
                  if layer_of(d) > layer_of(m))


def test_every_import_points_down_the_pipeline():
    assert upward_imports(import_graph()) == []


def test_the_layer_check_finds_an_upward_import():
    g = {"fuzzfarm.verdict.checker": {"fuzzfarm.orchestrate.run", "fuzzfarm.oracle"},
         "fuzzfarm.oracle": {"fuzzfarm.formats"}, "fuzzfarm.formats": set(),
         "fuzzfarm.orchestrate.run": set()}
    assert upward_imports(g) == [("fuzzfarm.verdict.checker", "fuzzfarm.orchestrate.run")]
    assert layer_of("fuzzfarm.report.templates_helper") == layer_of("fuzzfarm.report")


#: No module under the four packages is longer than this (tests and benchmarks aside).
MAX_LINES = 800


def long_modules(limit: int = MAX_LINES) -> dict[str, int]:
    out = {}
    for m, f in modules().items():
        n = len(f.read_text().splitlines())
        if n > limit:
            out[m] = n
    return out


def test_no_module_over_800_lines():
    assert long_modules() == {}


def test_the_size_check_sees_a_long_module():
    assert long_modules(limit=10)          # every package has modules over ten lines
