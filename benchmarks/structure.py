#!/usr/bin/env python3
"""Structure counts of a fuzzfarm tree (issue 27's before/after): kind branches outside
fuzzfarm/target.py and fuzzfarm/work/kinds.py, hasattr probes, functions over 80 lines,
modules outside fuzzfarm/device/ that import pyopencl, and the lines of the device
pipeline(s).  Read from the source with ``ast``; nothing is imported.

    python3 benchmarks/structure.py [ROOT ...]      (default: this checkout)

No assertions: figures (tests/test_architecture.py holds the rules)."""
from __future__ import annotations

import ast
from pathlib import Path

import click

PACKAGES = ("fuzzfarm", "strategies", "edgecases", "cluster")
#: Functions that are (part of) a device pipeline, by module: the loop that launches,
#: lands and hands units to checks.
PIPELINES = {"fuzzfarm/orchestrate/sweep.py": ("_pipeline",),
             "cluster/farm.py": ("_work",),
             "fuzzfarm/orchestrate/pipeline.py": ("Pipeline",)}


def _modules(root: Path) -> dict[str, ast.AST]:
    return {str(f.relative_to(root)): ast.parse(f.read_text(), str(f))
            for pkg in PACKAGES for f in sorted((root / pkg).rglob("*.py"))}


def counts(root: Path) -> dict:
    trees = _modules(root)
    kind_branches, probes, long_fns, cl = [], [], [], []
    pipeline_lines = 0
    for path, tree in trees.items():
        outside = path not in ("fuzzfarm/target.py", "fuzzfarm/work/kinds.py") and \
            not path.startswith("edgecases")
        for node in ast.walk(tree):
            if outside and ((isinstance(node, ast.Attribute) and node.attr == "is_conversion")
                            or (isinstance(node, ast.Name) and node.id == "is_conversion_name")
                            or (isinstance(node, ast.Call)
                                and isinstance(node.func, ast.Attribute)
                                and node.func.attr == "startswith" and node.args
                                and isinstance(node.args[0], ast.Constant)
                                and str(node.args[0].value).startswith("convert"))):
                kind_branches.append(f"{path}:{node.lineno}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "hasattr":
                probes.append(f"{path}:{node.lineno}")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.end_lineno - node.lineno + 1 > 80:
                long_fns.append(f"{path}:{node.lineno} {node.name} "
                                f"({node.end_lineno - node.lineno + 1})")
            if isinstance(node, (ast.Import, ast.ImportFrom)) and \
                    not path.startswith("fuzzfarm/device/"):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) \
                    else [node.module or ""]
                if any(n.split(".")[0] == "pyopencl" for n in names) and path not in cl:
                    cl.append(path)
            if path in PIPELINES and isinstance(node, (ast.FunctionDef, ast.ClassDef)) \
                    and node.name in PIPELINES[path]:
                pipeline_lines += node.end_lineno - node.lineno + 1
    return {"kind_branches_outside_target_and_kinds": kind_branches,
            "hasattr_probes": probes, "functions_over_80_lines": long_fns,
            "modules_outside_device_importing_pyopencl": cl,
            "device_pipeline_lines": pipeline_lines}


@click.command()
@click.argument("roots", nargs=-1,
                type=click.Path(exists=True, file_okay=False, path_type=Path))
def main(roots: tuple[Path, ...]) -> None:
    """Print the counts of each ROOT (a fuzzfarm checkout; default: this one)."""
    roots = roots or (Path(__file__).resolve().parents[1],)
    for root in roots:
        if not (root / "fuzzfarm").is_dir():
            raise click.BadParameter(f"{root} is not a fuzzfarm checkout (no fuzzfarm/ in it)",
                                     param_hint="ROOT")
    for root in roots:
        c = counts(root)
        click.echo(f"{root}:")
        for k, v in c.items():
            click.echo(f"  {k}: {len(v) if isinstance(v, list) else v}")
            for item in v if isinstance(v, list) else ():
                click.echo(f"    {item}")


if __name__ == "__main__":
    main()
