"""`fuzzfarm findings` reads at 3 a.m. (issue 18, item 5): one line per signature that
fits the terminal (80 columns: COLUMNS=80), values as C99 %a with their bits where they
fit; --wide for the full tables, --json for NDJSON."""
from __future__ import annotations

import json
import re

import numpy as np
from click.testing import CliRunner

from fuzzfarm.cli import main
from fuzzfarm.report import findings as report
from fuzzfarm.store import dataset as store
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.work import check, make

HEX_FLOAT = re.compile(r"-?0x[0-9a-f](\.[0-9a-f]+)?p[+-]\d+")


def _results(tmp_path) -> str:
    """Findings of sinpi's and fract's special-value units on a stand-in device that
    returns +0 everywhere (sinpi(-n) = -0 and fract's pointer rules fail)."""
    out = store.check_writable(tmp_path / "res")
    for target in (("sinpi", "binary32", 1), ("sinpi", "binary64", 1),
                   ("fract", "binary32", 1), ("ldexp", "binary32", 4)):
        u = make.make_unit("dev", target, 0, 1, 8192, 1)
        ins = make.make_inputs(u)
        n = len(next(iter(ins.values())))
        fmt = u.target.fmt
        outs = {o.name: np.zeros(n, fmt.uint) for o in u.target.outputs}
        rows = check.check_unit(u, ins, outs, Claims(precision=u.target.precision),
                                {"device": "stand-in"}, "r1", 0.0).findings
        store.write_findings_table(out, "r1", u.unit_id, rows)
    return str(out)


def test_every_line_fits_80_columns_and_shows_hex_floats(tmp_path):
    res = _results(tmp_path)
    r = CliRunner().invoke(main, ["findings", res, "--limit", "0"], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert len(lines) > 4
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    body = [ln for ln in lines if ln.startswith(" ") and "->" in ln]
    # floats are %a (or inf / qNaN / sNaN), never decimal; most lines show one
    assert body and not any(re.search(r"=-?\d+\.\d", ln) for ln in body)
    assert sum(bool(HEX_FLOAT.search(ln)) for ln in body) > len(body) // 2
    assert any(re.search(r"\(0x[0-9a-f]{8}\)", ln) for ln in body)     # bits where they fit
    assert "\x1b[" not in r.output                                      # no escape codes


def test_narrower_and_wider_terminals(tmp_path):
    res = _results(tmp_path)
    for cols in (60, 132):
        r = CliRunner().invoke(main, ["findings", res], env={"COLUMNS": str(cols)})
        assert r.exit_code == 0 and all(len(ln) <= cols for ln in r.output.splitlines())


def test_wide_and_json(tmp_path):
    res = _results(tmp_path)
    wide = CliRunner().invoke(main, ["findings", res, "--wide"], env={"COLUMNS": "200"})
    assert wide.exit_code == 0 and "governed by" in wide.output
    js = CliRunner().invoke(main, ["findings", res, "--json"])
    recs = [json.loads(line) for line in js.output.splitlines()]
    assert recs and all({"signature", "rule_id", "count", "example_inputs"} <= set(x)
                        for x in recs)


def test_older_stored_values_print_in_the_current_form():
    from fuzzfarm.formats import modernize
    assert modernize("x=0x3f800000 (1.0), y=0x7f800001 (sNaN)") == \
        "x=0x1p+0 (0x3f800000), y=sNaN (0x7f800001)"
    assert modernize("ret=0x8000 (-0.0)") == "ret=-0x0p+0 (0x8000)"
    assert modernize("n=3") == "n=3"


def test_counts_stay_short():
    assert [report._count(n) for n in (7, 9_999, 16_847, 880_803_840, 4_294_967_296)] == \
        ["7", "9,999", "16.8k", "881M", "4.3G"]
