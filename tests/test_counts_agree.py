"""One meaning per number (issue 30, item 2): a stored finding row stands for ``count``
failing inputs (store.samples); every view counts failing inputs the same way, and the
run summary names stored examples apart."""
from fuzzfarm.orchestrate.run import summary_tables
from fuzzfarm.report import triage
from fuzzfarm.store import dataset as store
from fuzzfarm.store import signatures
from test_triage import finding, stats_row

COUNTED = (3000, 77, 14)            # the counts of three stored rows: 3,091 inputs


def _results(tmp_path):
    out = tmp_path / "res"
    rows = []
    for k, n in enumerate(COUNTED):
        r = finding("run1", "u1", "lgamma_r", "CL.lgamma_r.pole_sign", bits=(0xC0000000 + k,))
        r["element"], r["count"] = k, n
        rows.append(r)
    store.write_findings(out, "run1", "u1", rows)
    store.write_stats(out, "run1", "u1", stats_row("run1", "u1", "lgamma_r",
                                                   failures=sum(COUNTED), inputs=10_000))
    return out


def _cells(table) -> dict:
    """{column header: [cells]} of a rich Table."""
    return {c.header: list(c._cells) for c in table.columns}


def test_every_view_counts_the_failing_inputs(tmp_path):
    out = _results(tmp_path)
    total = sum(COUNTED)
    (summary,) = signatures.summarize(store.read_findings(out)).to_pylist()
    assert summary["count"] == total                                   # `fuzzfarm findings`
    per_fn, examples = summary_tables(str(out), "run1")[:2]            # `fuzzfarm run`'s end
    assert _cells(per_fn)["failing inputs"] == [f"{total:,}"]
    assert _cells(examples)["failing inputs"] == [f"{total:,}"]
    assert _cells(examples)["stored examples"] == [str(len(COUNTED))]
    stats, found = triage.read_set(out, "current")
    s = triage.load_set(stats, found)
    _, matrix = triage.implementation_matrix(s.stats, s.findings)      # triage's matrix
    (cell,) = matrix["CL.lgamma_r.pole_sign"].values()
    assert cell[0] == total
    (iss,) = s.issues.values()
    assert iss["failures"] == total                                    # triage's issues
