#!/usr/bin/env python3
"""Compare the findings of two results directories of the same fixed-seed campaign.

    python3 benchmarks/findings_diff.py BEFORE AFTER [--json FILE]

Counts findings per (function, precision, rule id, severity) in each directory (every run
in it, read with fuzzfarm.store.dataset.read_findings) and prints the keys whose counts differ,
then totals per severity.  Two versions of fuzzfarm that judge alike give no differing
key; a change of verdict (a rule made a note, a note dropped) shows as the keys it moved.
With ``--rows`` the findings themselves are compared too: the multiset of (KEY, input
bits, output bits, expected) rows, so the same counts reached through other inputs or
results still differ.  Exit status 0 when the two agree, 1 when they differ, 2 for a
missing or corrupt directory (a one-line error).

benchmarks/campaigns/fixed_seed.toml is the campaign this is meant for.
"""
from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

KEY = ("function", "precision", "rule_id", "severity")
#: What identifies one finding for ``--rows``.
ROW = KEY + ("input_bits", "output_bits", "expected")


class BadResults(click.ClickException):
    """A missing or unreadable results directory: one line, exit status 2."""

    exit_code = 2


def counts(results: str, key: tuple = KEY) -> collections.Counter:
    """Findings per ``key`` tuple (default KEY) in ``results`` (list columns as tuples).
    Raises BadResults for a missing or unreadable directory."""
    from fuzzfarm.store import dataset as store
    if not Path(results).is_dir():
        raise BadResults(f"{results}: no such results directory")
    try:
        table = store.read_findings(results).select(list(key))
    except Exception as exc:  # noqa: BLE001  (pyarrow raises several kinds)
        raise BadResults(f"{results}: cannot read its findings: {exc}") from None
    cols = [[tuple(v) if isinstance(v, list) else v for v in table[c].to_pylist()]
            for c in key]
    return collections.Counter(zip(*cols))


@click.command()
@click.argument("before")
@click.argument("after")
@click.option("--json", "json_out", type=click.Path(dir_okay=False),
              help="Also write the differing keys and totals to this JSON file.")
@click.option("--rows", is_flag=True,
              help="Also compare the findings row by row (inputs, outputs, expected).")
def main(before: str, after: str, json_out: str | None, rows: bool) -> None:
    b, a = counts(before), counts(after)
    changed = [(k, b[k], a[k]) for k in sorted(set(a) | set(b)) if a[k] != b[k]]
    for k, nb, na in changed:
        click.echo(f"{k[0]:34s} {k[1]:9s} {k[2]:42s} {k[3]:5s} {nb:9d} -> {na:9d}")
    totals = {}
    for sev in sorted({k[3] for k in set(a) | set(b)}):
        totals[sev] = (sum(v for k, v in b.items() if k[3] == sev),
                       sum(v for k, v in a.items() if k[3] == sev))
        click.echo(f"{sev}: {totals[sev][0]} -> {totals[sev][1]}")
    click.echo(f"{len(changed)} of {len(set(a) | set(b))} (function, precision, rule, "
               f"severity) keys differ")
    rows_differ = 0
    if rows:
        rb, ra = counts(before, ROW), counts(after, ROW)
        rows_differ = sum(((rb - ra) + (ra - rb)).values())
        click.echo(f"{rows_differ} of {sum(rb.values())} / {sum(ra.values())} findings rows "
                   f"differ (inputs, outputs, expected)")
    if json_out:
        Path(json_out).write_text(json.dumps(
            {"changed": [{**dict(zip(KEY, k)), "before": nb, "after": na}
                         for k, nb, na in changed],
             "totals": {s: {"before": t[0], "after": t[1]} for s, t in totals.items()}},
            indent=1) + "\n")
    sys.exit(1 if changed or rows_differ else 0)


if __name__ == "__main__":
    main()
