#!/usr/bin/env python3
"""Compare the ULP maxima of two results directories of the same fixed-seed campaign.

    python3 benchmarks/maxima_diff.py A B [--tolerance ULPS] [--json FILE]

Reads every run's statistics in each directory (fuzzfarm.store.dataset.read_stats) and
pairs the units that drew the same inputs -- (function, precision, vector width, build
options, front end, seed, recipe) -- then compares each unit's ``max_ulp_error`` and each
target's (the largest over its paired units).  Each screen's maximum is exact within two
of its margins (docs/device_screen.md, "Exact maxima"): two inputs whose errors tie that
closely may either be reported.  Two ways of judging the same results (``--screen auto``
and ``--screen host``) agree on a target where their maxima differ by at most
``--tolerance`` ULPs (default 2**-18, above two margins of every device screen and of the
host's binary16 and binary32 screens; the host's binary64 screen, margin 0.25 ULP, ties
within half a ULP, which a unit may show and a target's maximum over several units rarely
does).  Prints the counts and every target that differs, within the tolerance or beyond;
exit status 0 when none differs beyond it, 1 when some do, 2 for a missing or corrupt
directory (a one-line error).
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: What identifies a unit's inputs across two runs of one campaign.
UNIT = ("function", "precision", "vector_width", "build_options", "front_end", "seed",
        "recipe")
#: A target: the unit key less the inputs.
TARGET = UNIT[:5]


class BadResults(click.ClickException):
    """A missing or unreadable results directory: one line, exit status 2."""

    exit_code = 2


def unit_maxima(out: Path) -> dict:
    """{unit key: (max_ulp_error, max_ulp_inputs tuple)} of every unit in ``out`` that
    measured a maximum (NaN and null maxima left out).  Raises BadResults."""
    from fuzzfarm.errors import CorruptResults
    from fuzzfarm.store.dataset import read_stats
    if not out.is_dir():
        raise BadResults(f"{out}: no such results directory")
    try:
        t = read_stats(out).select([*UNIT, "max_ulp_error", "max_ulp_inputs"]).to_pylist()
    except CorruptResults as e:
        raise BadResults(f"{out}: {e}") from None
    units: dict = {}
    for r in t:
        m = r["max_ulp_error"]
        if m is None or math.isnan(m):
            continue
        key = tuple(r[k] for k in UNIT)
        if key in units:
            raise BadResults(f"{out}: unit {key} appears twice (two campaigns in one "
                             f"directory?)")
        units[key] = (float(m), tuple(r["max_ulp_inputs"] or ()))
    return units


def compare(a: dict, b: dict, tolerance: float = 2.0 ** -18) -> dict:
    """The comparison of ``unit_maxima`` ``a`` and ``b`` over the units both hold, each
    target's maxima within ``tolerance`` ULPs: counts of units and targets compared, equal
    and on the same input, the largest difference, the targets that differ within the
    tolerance and those beyond it (sorted, with both maxima and inputs)."""
    both = sorted(set(a) & set(b), key=repr)
    targets: dict = {}
    units = {"compared": len(both), "equal": 0, "same_input": 0,
             "only_in_a": len(set(a) - set(b)), "only_in_b": len(set(b) - set(a))}
    for k in both:
        (ma, ia), (mb, ib) = a[k], b[k]
        units["equal"] += ma == mb
        units["same_input"] += ia == ib
        t = targets.setdefault(k[:len(TARGET)], [(-1.0, ()), (-1.0, ())])
        t[0], t[1] = max(t[0], (ma, ia)), max(t[1], (mb, ib))
    differ: dict = {"within": [], "beyond": []}
    for k, (ta, tb) in sorted(targets.items(), key=lambda kv: repr(kv[0])):
        if ta[0] == tb[0]:
            continue
        differ["within" if abs(ta[0] - tb[0]) <= tolerance else "beyond"].append(
            {"target": dict(zip(TARGET, k)), "a": ta[0], "b": tb[0],
             "a_input": list(ta[1]), "b_input": list(tb[1])})
    worst = max((abs(a[k][0] - b[k][0]) for k in both), default=0.0)
    return {"tolerance_ulps": tolerance, "units": units,
            "targets": {"compared": len(targets),
                        "equal": sum(ta[0] == tb[0] for ta, tb in targets.values()),
                        "within": len(differ["within"]), "beyond": len(differ["beyond"])},
            "largest_difference_ulps": worst, "targets_within": differ["within"],
            "targets_beyond": differ["beyond"]}


@click.command()
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option("--tolerance", type=float, default=2.0 ** -18, show_default=True,
              help="ULPs by which two targets' maxima may differ and still agree.")
@click.option("--json", "json_out", type=click.Path(path_type=Path), default=None,
              help="Write the comparison there as JSON.")
def main(a: Path, b: Path, tolerance: float, json_out: Path | None) -> None:
    result = compare(unit_maxima(a), unit_maxima(b), tolerance)
    u, t = result["units"], result["targets"]
    click.echo(f"units: {u['compared']} compared, {u['equal']} equal, {u['same_input']} "
               f"on the same input; only in A {u['only_in_a']}, only in B {u['only_in_b']}")
    click.echo(f"targets: {t['compared']} compared, {t['equal']} equal, {t['within']} "
               f"within {tolerance:.3g} ULP, {t['beyond']} beyond; largest unit difference "
               f"{result['largest_difference_ulps']:.3g} ULP")
    for what in ("within", "beyond"):
        for d in result[f"targets_{what}"]:
            k = d["target"]
            click.echo(f"  {what}: {k['function']} {k['precision']} "
                       f"w{k['vector_width']} {k['build_options'] or '-'} "
                       f"{k['front_end'] or 'opencl-c'}: A {d['a']:.9g} at {d['a_input']}, "
                       f"B {d['b']:.9g} at {d['b_input']}")
    if json_out is not None:
        json_out.write_text(json.dumps(result, indent=1) + "\n")
    sys.exit(1 if result["targets_beyond"] else 0)


if __name__ == "__main__":
    main()
