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


# --------------------------------------------------------------------------- seams (issue 27)
def _trees() -> dict:
    return {m: ast.parse(f.read_text(), str(f)) for m, f in modules().items()}


def pyopencl_importers(trees: dict | None = None) -> list[str]:
    """The modules that import pyopencl (at the top or inside a function)."""
    out = []
    for m, tree in (trees or _trees()).items():
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n == "pyopencl" or n.startswith("pyopencl.") for n in names):
                out.append(m)
                break
    return sorted(out)


def test_only_the_device_layer_imports_pyopencl():
    """README: fuzzfarm/device/ is the only layer that talks to OpenCL; the oracle's device
    screen and the pipeline enqueue through fuzzfarm.device.commands."""
    outside = [m for m in pyopencl_importers() if not m.startswith("fuzzfarm.device")]
    assert outside == []


def test_the_pyopencl_check_sees_an_import():
    tree = ast.parse("def f():\n    import pyopencl as cl\n")
    assert pyopencl_importers({"fuzzfarm.oracle.x": tree}) == ["fuzzfarm.oracle.x"]
    assert pyopencl_importers({"m": ast.parse("import numpy")}) == []


#: No function or method of the four packages is longer than this many lines.
MAX_FUNCTION_LINES = 80


def long_functions(limit: int = MAX_FUNCTION_LINES, trees: dict | None = None) -> dict:
    """{"module:line name": lines} of the functions longer than ``limit`` lines."""
    out = {}
    for m, tree in (trees or _trees()).items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    out[f"{m}:{node.lineno} {node.name}"] = n
    return out


def test_no_function_over_80_lines():
    assert long_functions() == {}


def test_the_function_check_sees_a_long_function():
    assert long_functions(limit=20)             # there are functions over twenty lines


#: Files a clone has: what the packages, docs and tests may point to.  Design notes the
#: code relies on live in docs/; nothing may send a reader outside the repository.
OUTSIDE = ("../shared", "DESIGN.md", "STYLE.md")


def references_outside(root: Path = ROOT) -> list[str]:
    """``path:line`` of each mention of a file outside the repository (OUTSIDE) in the
    packages, docs, tests, benchmarks and the README."""
    files = [root / "README.md"]
    for folder in (*PACKAGES, "docs", "tests", "benchmarks"):
        for ext in ("py", "md", "toml", "cl", "j2", "sh", "yaml"):
            files += sorted((root / folder).rglob(f"*.{ext}"))
    out = []
    for f in files:
        if f.name == "test_architecture.py":
            continue
        for k, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            if any(word in line for word in OUTSIDE):
                out.append(f"{f.relative_to(root)}:{k}")
    return out


def test_no_reference_to_a_file_outside_the_repository():
    assert references_outside() == []


def test_kinds_are_told_apart_only_in_target_and_kinds():
    """A conversion, a geometric built-in and an element-wise one differ in
    fuzzfarm/work/kinds.py (and are parsed in fuzzfarm/target.py): nobody else asks
    ``is_conversion`` or looks at a name's ``convert_`` prefix."""
    allowed = {"fuzzfarm.target", "fuzzfarm.work.kinds"}
    found = []
    for m, tree in _trees().items():
        if m in allowed or m.startswith("edgecases"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "is_conversion":
                found.append((m, node.lineno))
            elif isinstance(node, ast.Name) and node.id == "is_conversion_name":
                found.append((m, node.lineno))
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "startswith" and node.args
                  and isinstance(node.args[0], ast.Constant)
                  and str(node.args[0].value).startswith("convert")):
                found.append((m, node.lineno))
    assert found == []


def test_no_duck_typing_by_hasattr_in_the_packages():
    """One typed value per concept: nothing probes an object for an attribute."""
    found = [(m, node.lineno) for m, tree in _trees().items() for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
             and node.func.id == "hasattr"]
    assert found == []


def _modules_after(code: str) -> set[str]:
    """The names in sys.modules after running ``code`` in a fresh interpreter."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_a_sweep_s_inputs_need_no_hypothesis():
    # The sweep and the check of a stored unit read Space, Recipe and the sampler; the
    # hypothesis strategies are loaded on first use (0.2 s of every sweep otherwise).
    quiet = _modules_after("from strategies import Recipe, Space, expand, space_of, special_inputs\n"
                           "import fuzzfarm.work.session, fuzzfarm.orchestrate.sweep")
    assert "strategies._internal.space" in quiet and "hypothesis" not in quiet
    drawn = _modules_after("from strategies import draw_recipes, float_bits")
    assert "hypothesis" in drawn
