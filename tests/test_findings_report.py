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
    body = [ln for ln in lines if re.match(r"s[0-9a-f]{6,12} ", ln) and "->" in ln]
    # floats are %a (or inf / qNaN / sNaN), never decimal; most lines show one
    assert body and not any(re.search(r"=-?\d+\.\d", ln) for ln in body)
    assert sum(bool(HEX_FLOAT.search(ln)) for ln in body) > len(body) // 2
    assert "\x1b[" not in r.output                                      # no escape codes


def test_narrower_and_wider_terminals(tmp_path):
    res = _results(tmp_path)
    for cols in (60, 132):
        r = CliRunner().invoke(main, ["findings", res], env={"COLUMNS": str(cols)})
        assert r.exit_code == 0 and all(len(ln) <= cols for ln in r.output.splitlines())
    # the input's bits beside its value where they fit
    assert any(re.search(r"\(0x[0-9a-f]{8}\)", ln) for ln in r.output.splitlines())


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


def test_each_line_starts_with_an_id_repro_takes(tmp_path):
    """The id at the start of each line is the shortest unique prefix of the signature,
    and `repro`'s lookup takes it; every signature has a line or is counted as left out."""
    from fuzzfarm.report.repro import lookup
    from fuzzfarm.store import signatures
    res = _results(tmp_path)
    summary = signatures.summarize(store.read_findings(res)).to_pylist()
    r = CliRunner().invoke(main, ["findings", res, "--limit", "0", "--severity", "all"],
                           env={"COLUMNS": "80"})
    shown = [m.group(1) for m in map(re.compile(r"^(s[0-9a-f]{6,12}) ").match,
                                     r.output.splitlines()) if m]
    assert len(shown) == len(summary) == len(set(shown))
    for prefix in shown:
        full = [x["signature"] for x in summary if x["signature"].startswith(prefix)]
        assert len(full) == 1 and lookup(res, prefix)["signature"] == full[0]
    few = CliRunner().invoke(main, ["findings", res, "--limit", "1", "--severity", "all"],
                             env={"COLUMNS": "80"})
    kinds = {x["severity"] for x in summary}
    left = sum(max(0, sum(x["severity"] == k for x in summary) - 1) for k in kinds)
    assert sum(int(n) for n in re.findall(r"\((\d+) more not listed", few.output)) == left


def test_short_ids_and_distinct_names():
    ids = ["s0123456789ab", "s0123459999ab", "s0123456780ff", "sffffff000000"]
    short = report.short_ids(ids)
    assert short == {"s0123456789ab": "s0123456789", "s0123459999ab": "s0123459",
                     "s0123456780ff": "s0123456780", "sffffff000000": "sffffff"}
    assert all(sum(i.startswith(p) for i in ids) == 1 for p in short.values())
    w, cut = report.distinct_fit(["CL.nan.signaling_should_quiet_the_x",
                                  "CL.nan.signaling_should_quiet_the_y", "CL.ulp"], 20)
    assert len(set(cut.values())) == 3 and w == 20                   # the ends differ
    assert cut["CL.ulp"] == "CL.ulp" and cut["CL.nan.signaling_should_quiet_the_x"] == \
        "CL.nan.sig…iet_the_x"
    w, cut = report.distinct_fit(["a" * 10 + "x" + "b" * 10, "a" * 10 + "y" + "b" * 10], 9)
    assert len(set(cut.values())) == 2 and w == 21        # only the middle differs
    w, cut = report.distinct_fit(["convert_int_sat_rte(float)/f32", "convert_int/f32"], 16)
    assert len(set(cut.values())) == 2 and w == 16      # distinct already at 16
