"""The triage report at 1280 px (issue 30, item 5): summary and tables first, plots after;
no sideways scrolling (headless Chromium, where installed: tests/report_layout.py)."""
import pytest

import report_layout
from fuzzfarm.report import triage_report
from test_triage import finding, stats_row, unit
from fuzzfarm.store import dataset as store

LONG = "x=" + ", ".join(f"0x1.{k:06x}p-{k}" for k in range(40))     # a long example


def _wide_sets(tmp_path):
    """A baseline and a current set whose issues have long examples and many columns."""
    b, c = tmp_path / "b", tmp_path / "c"
    for k, fn in enumerate(("sinpi", "cospi", "convert_int_sat_rte(float)", "lgamma_r")):
        unit(b, "r1", fn, max_ulp=1.0 + k, serial=k)
        row = finding("r2", f"u{k}", fn, f"CL.{fn}.a_rather_long_rule_name_{k}")
        row["inputs"] = LONG
        store.write_findings(c, "r2", f"u{k}", [row])
        store.write_stats(c, "r2", f"u{k}", stats_row("r2", f"u{k}", fn, failures=1,
                                                       max_ulp=3.0 + k))
    return b, c


def test_tables_come_before_the_plots(tmp_path):
    b, c = _wide_sets(tmp_path)
    triage_report.run(b, c, tmp_path / "rep")
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "<table" in page and page.index("<table") < page.index("<h2>Plots</h2>")
    assert "<img" not in page[:page.index("<h2>Plots</h2>")]


@pytest.mark.skipif(report_layout.chromium() is None, reason="no Chromium")
def test_no_sideways_scrolling_at_1280_px(tmp_path):
    b, c = _wide_sets(tmp_path)
    triage_report.run(b, c, tmp_path / "rep")
    m = report_layout.measure(tmp_path / "rep" / "report.html", 1280)
    assert m["scroll_width"] <= 1280, m
    assert m["first_img_y"] is None or m["first_table_y"] < m["first_img_y"]
