"""Bounded samples of findings with exact counts (fuzzfarm.store.samples, issue 18): a unit
keeps at most SAMPLE_ROWS rows per rule and input class with the extremes, the rows'
``count`` adds up to every finding (recorded or only counted), compaction keeps the sums,
and summaries count findings, not rows."""
from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

import numpy as np
import pyarrow as pa
import pytest

from edgecases import catalogue
from fuzzfarm.formats import BINARY32, INPUT_CLASSES, classify
from fuzzfarm.store import dataset as store
from fuzzfarm.store.samples import SAMPLE_ROWS, counts, sample_findings, sample_table
from fuzzfarm.store.signatures import summarize
from fuzzfarm.verdict.checker import FINDINGS_PER_RULE, check_batch
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.verdict.findings import CheckResult, Finding, class_codes, class_key
from fuzzfarm.work import make, rows as unit_rows

SIN = catalogue.function("sin")


def _f(i, x, err=1.0, rule="ulp.sin", sev="fail"):
    return Finding(i, "sin", rule, "", "", sev, "ret", (int(x),), (0,), "", err)


def _bits(v) -> int:
    return int(np.float32(v).view(np.uint32))


def test_a_unit_keeps_a_bounded_sample_with_its_extremes_and_exact_counts():
    xs = [_bits(v) for v in np.linspace(1.0, 2.0, 50)] + [_bits(-3.0), _bits(-4.0),
                                                         _bits(-5.0)]
    errs = [5.0] * 50 + [6.0, 7.0, 6.5]
    errs[17] = 99.0
    r = CheckResult("sin", 10_000, [_f(i, x, e) for i, (x, e) in enumerate(zip(xs, errs))])
    pos = int(class_codes(SIN, BINARY32, {"x": np.array([xs[0]], np.uint32)})[0])
    r.count_unrecorded("ulp.sin", "fail", np.full(1000, pos))
    kept, cnt, keys = sample_findings(r, SIN, BINARY32, seed=7)
    by = Counter()
    for f, c, k in zip(kept, cnt, keys):
        by[k] += c
    assert by == {"x:pos_normal": 1050, "x:neg_normal": 3}
    assert Counter(keys)["x:pos_normal"] == SAMPLE_ROWS
    idx = {f.index for f in kept}
    assert {0, 17, 49} <= idx                   # first, largest error, smallest/largest x
    assert {50, 51, 52} <= idx                  # a small class whole
    assert sample_findings(r, SIN, BINARY32, seed=7)[0] == kept        # deterministic
    assert sum(cnt) == sum(r.counts_by_rule(None).values())


def test_counts_without_a_class_go_to_the_rules_first_row():
    r = CheckResult("sin", 100, [_f(3, _bits(1.5)), _f(9, _bits(2.5))])
    r.unrecorded[("ulp.sin", "fail")] += 40        # a checker that counts by rule only
    kept, cnt, _ = sample_findings(r, SIN, BINARY32, seed=1)
    assert [f.index for f in kept] == [3, 9] and cnt == [41, 1]


def test_unit_findings_count_every_failure_by_input_class():
    """sinpi with the wrong zero at every integer (more than FINDINGS_PER_RULE): the
    stored rows stand for exactly the failing elements of each input class."""
    fn = catalogue.function("sinpi")
    rng = np.random.default_rng(3)
    n = 6000
    ints = (rng.integers(1, 1 << 20, n) * rng.choice([-1, 1], n)).astype(np.float32)
    x = ints.view(np.uint32).copy()
    y = np.where(ints > 0, np.uint32(0x8000_0000), np.uint32(0))   # wrong sign: fails
    res = check_batch(fn, {"x": x}, {"ret": y}, Claims())
    want = Counter(INPUT_CLASSES[c] for c in classify(x, BINARY32))
    assert sum(res.counts_by_rule("fail").values()) == n > FINDINGS_PER_RULE
    unit = make.make_unit("t", ("sinpi", "binary32", 1), 1, 5, 0, 1, size=1024)
    table = unit_rows.finding_table(res, unit, {}, "run")
    got = Counter()
    for k, c in zip(table["input_class"].to_pylist(), table["count"].to_pylist()):
        got[k.split(":")[1]] += c
    assert got == want
    assert table.num_rows <= SAMPLE_ROWS * 2 * 2       # two rules x two classes


def _row(i, rule="ulp.sin", sev="fail", err=1.0, count=None, t=0, cls="x:pos_normal"):
    row = {f.name: None for f in store.FINDINGS_SCHEMA}
    row.update(run_id="r", unit_id=f"u{i:06d}", function="sin", precision="binary32",
               element=i, rule_id=rule, severity=sev, ulp_error=err, count=count,
               input_class=cls, input_bits=[i], output_bits=[i],
               time=datetime.fromtimestamp(1_700_000_000 + t, timezone.utc))
    return row


def test_compaction_sample_keeps_counts_first_last_and_largest_error():
    rows = [_row(i, err=float(i % 7), count=3, t=i) for i in range(40)]
    rows[23]["ulp_error"] = 1e6
    rows += [_row(100 + i, rule="device.crash", sev="fault", t=i) for i in range(12)]
    rows += [_row(200, cls="x:neg_normal", count=None)]
    t = pa.Table.from_pylist(rows, schema=store.FINDINGS_SCHEMA)
    s = sample_table(t)
    sums = Counter()
    for r, c in zip(s.to_pylist(), counts(s).to_pylist()):
        sums[(r["rule_id"], r["input_class"])] += c
    assert sums == {("ulp.sin", "x:pos_normal"): 120, ("device.crash", "x:pos_normal"): 12,
                    ("ulp.sin", "x:neg_normal"): 1}
    kept = {r["element"] for r in s.to_pylist() if r["rule_id"] == "ulp.sin"}
    assert {0, 39, 23, 200} <= kept and len(kept) == SAMPLE_ROWS + 1
    assert sum(r["rule_id"] == "device.crash" for r in s.to_pylist()) == 12    # never cut
    # the same findings written in another order (a campaign killed and resumed): the
    # same sample, the same counts -- the time a unit was written does not choose rows
    late = [dict(r, time=datetime.fromtimestamp(1_800_000_000 - k, timezone.utc))
            for k, r in enumerate(rows)]
    s2 = sample_table(pa.Table.from_pylist(late, schema=store.FINDINGS_SCHEMA))
    assert [(r["unit_id"], r["element"], r["rule_id"]) for r in s2.to_pylist()] == \
        [(r["unit_id"], r["element"], r["rule_id"]) for r in s.to_pylist()]
    assert counts(s2).to_pylist() == counts(s).to_pylist()
    # summaries count findings, not rows; an old row without a count stands for 1
    summary = Counter()
    for r in summarize(s).to_pylist():
        summary[r["rule_id"]] += r["count"]
    assert summary["ulp.sin"] == 121 and summary["device.crash"] == 12


@pytest.mark.parametrize("code, want", [(0, "x:pos_zero,{n}:int_zero"),
                                        (0x24, "x:pos_normal,{n}:int_neg")])
def test_class_key_names_each_argument(code, want):
    pown = catalogue.function("pown")
    assert class_key(pown, code) == want.format(n=pown.inputs[1].name)
    x = np.array([0x3F80_0000], np.uint32)
    y = np.array([-3], np.int32)
    assert class_key(pown, int(class_codes(pown, BINARY32, {"x": x, pown.inputs[1].name: y})[0])) \
        == "x:pos_normal,{n}:int_neg".format(n=pown.inputs[1].name)


def test_first_of_each_is_the_first_occurrence_of_every_value():
    from fuzzfarm.verdict.findings import first_of_each
    rng = np.random.default_rng(4)
    for hi in (3, 200, 1 << 20):            # few values, many, beyond the bincount path
        codes = rng.integers(0, hi, 5000)
        want = np.sort(np.unique(codes, return_index=True)[1])
        assert first_of_each(codes).tolist() == want.tolist()
    assert first_of_each(np.zeros(0, np.int64)).size == 0
