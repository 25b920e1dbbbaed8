"""benchmarks/findings_diff.py: the before/after comparison of a fixed-seed campaign
(issues 14 and 16) sees equal findings as equal and any moved row as a difference."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from fuzzfarm.store import dataset as store
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.work import check, make

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("findings_diff",
                                               ROOT / "benchmarks" / "findings_diff.py")
findings_diff = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(findings_diff)


def _results(tmp_path, name: str, tweak=None) -> str:
    """A results directory with the findings of sinpi's special-value unit run on a
    stand-in device that returns +0 for every input (``tweak`` edits the outputs)."""
    u = make.make_unit("dev", ("sinpi", "binary32", 1), 0, 1, 8192, 1)
    ins = make.make_inputs(u)
    outs = {"ret": np.zeros(len(ins["x"]), np.uint32)}
    if tweak:
        tweak(ins, outs)
    rows = check.check_unit(u, ins, outs, Claims(), {"device": "d"}, "r1", 0.0).findings
    out = tmp_path / name
    store.write_findings_table(store.check_writable(out), "r1", u.unit_id, rows)
    return str(out)


def test_equal_findings_agree(tmp_path):
    a, b = _results(tmp_path, "a"), _results(tmp_path, "b")
    res = CliRunner().invoke(findings_diff.main, [a, b, "--rows"])
    assert res.exit_code == 0, res.output
    assert "0 of " in res.output and "findings rows differ" in res.output


def test_the_same_counts_from_other_results_differ_by_row(tmp_path):
    a = _results(tmp_path, "a")

    def other_wrong_zero(ins, outs):      # -0 instead of +0 where +0 was already wrong
        x = ins["x"]
        neg_one = np.flatnonzero(x == np.uint32(0xBF800000))   # sinpi(-1) = -0 prescribed
        assert neg_one.size
        outs["ret"][neg_one] = np.uint32(0x3F800000)           # still wrong, differently

    b = _results(tmp_path, "b", other_wrong_zero)
    counts_only = CliRunner().invoke(findings_diff.main, [a, b])
    assert counts_only.exit_code == 0, counts_only.output
    rows = CliRunner().invoke(findings_diff.main, [a, b, "--rows"])
    assert rows.exit_code == 1
    assert "0 of " not in rows.output.splitlines()[-1]


def test_a_missing_directory_is_a_one_line_error(tmp_path):
    res = CliRunner().invoke(findings_diff.main, [str(tmp_path / "nope"), str(tmp_path)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
    assert "no such results directory" in res.output
