"""Front ends compared (verdict.front_ends, a campaign job's ``compare = "front_ends"``):
every input whose results differ bit for bit between OpenCL C and SPIR-V is a failure of
the front end whose result breaks a rule, else a ``front_ends.disagree`` note with both
results; inputs whose results agree have the unit's own verdict only."""
from __future__ import annotations

import numpy as np
import pytest

from fuzzfarm.target import Target
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.verdict.findings import FINDINGS_PER_RULE
from fuzzfarm.verdict.front_ends import DISAGREE, differing
from fuzzfarm.work.check import Landed, check_landed
from fuzzfarm.work.unit import Drawn, WorkUnit


def f32(v: float) -> int:
    return int(np.float32(v).view(np.uint32))


def _unit(name: str, against: str | None = "opencl-c") -> WorkUnit:
    return WorkUnit("u-cmp", Target(name, "binary32", 1, "spirv"), Drawn(1, (8,), ({},)),
                    against=against)


def _check(name: str, x: list, own: list, other: list):
    """check_landed of a compare unit of ``name`` (one argument x, output ret)."""
    landed = Landed(_unit(name), 0.0, {"ret": np.array(own, np.uint32)},
                    {"x": np.array(x, np.uint32)}, other={"ret": np.array(other, np.uint32)})
    return check_landed(landed, Claims(), {}, "r")


def test_differing_is_bit_for_bit_in_every_output():
    a = {"ret": np.array([1, 2, 0x7FC00000], np.uint32), "iptr": np.array([5, 5, 5], np.uint32)}
    b = {"ret": np.array([1, 2, 0x7FC00001], np.uint32), "iptr": np.array([5, 6, 5], np.uint32)}
    assert differing(a, b).tolist() == [1, 2]              # a NaN of another payload differs
    assert differing(a, a).tolist() == []
    with pytest.raises(ValueError, match="names"):
        differing(a, {"ret": a["ret"]})


def test_each_differing_input_is_a_failure_of_the_result_that_breaks_a_rule_else_a_note():
    x = [f32(-1.5), f32(-2.0), f32(3.0), 0x7FC00000]
    good = [f32(1.5), f32(2.0), f32(3.0), 0x7FC00000]
    own = [good[0], good[1], good[2] + 1, good[3]]          # SPIR-V: element 2 wrong
    other = [good[0], good[1] + 1, good[2], 0x7FC00001]     # OpenCL C: element 1 wrong,
    checked = _check("fabs", x, own, other)                 # element 3 another NaN
    by_elem = {}
    for r in checked.findings.to_pylist():
        by_elem.setdefault(r["element"], []).append((r["rule_id"], r["severity"],
                                                     r["front_end"]))
    assert 0 not in by_elem and by_elem[1] and by_elem[2]     # same bits: nothing
    assert all(fe == "opencl-c" and sev == "fail" for _, sev, fe in by_elem[1])
    assert all(fe == "spirv" and sev == "fail" for _, sev, fe in by_elem[2])
    assert (DISAGREE, "note", "spirv") in by_elem[3]          # both NaNs: neither breaks
    note = next(r for r in checked.findings.to_pylist() if r["rule_id"] == DISAGREE)
    assert note["output_bits"] == [0x7FC00000]
    assert note["expected"] == "opencl-c: ret=qNaN (0x7fc00001)"
    assert note["expected"].startswith("opencl-c:")
    assert checked.stats["failures"] == len(by_elem[1]) + len(by_elem[2])


def test_two_results_within_the_bound_that_differ_are_a_note_with_both():
    x = f32(0.5)
    y = f32(float(np.sin(np.float64(0.5))))
    checked = _check("sin", [x], [y], [y + 1])               # one ULP apart, both within 4
    rows = checked.findings.to_pylist()
    assert [(r["rule_id"], r["severity"]) for r in rows] == [(DISAGREE, "note")]
    assert checked.stats["failures"] == 0 and checked.stats["notes"] == 1


def test_a_conversion_is_compared_under_each_front_end_s_text():
    """A saturated NaN: SPIR-V's text makes it 0 (a failure otherwise), OpenCL C's leaves
    a note -- so NaN -> 7 through OpenCL C against 0 through SPIR-V is a disagreement
    that breaks no rule, and 7 through SPIR-V against 0 through OpenCL C is a SPIR-V
    failure."""
    name = "convert_uint_sat(float)"
    checked = _check(name, [0x7FC00000, 0x7FC00000], [0, 7], [7, 0])
    rows = checked.findings.to_pylist()
    assert {(r["element"], r["rule_id"], r["severity"], r["front_end"]) for r in rows
            if r["rule_id"] in (DISAGREE, "SPIRV.convert.sat_nan_zero")} == {
        (0, DISAGREE, "note", "spirv"), (1, "SPIRV.convert.sat_nan_zero", "fail", "spirv")}


def test_a_systematic_disagreement_is_counted_and_its_rows_bounded():
    n = 3 * FINDINGS_PER_RULE
    x = np.full(n, f32(0.5), np.uint32)
    y = f32(float(np.sin(np.float64(0.5))))
    checked = _check("sin", x.tolist(), [y] * n, [y + 1] * n)
    assert checked.stats["notes"] == n
    assert checked.findings.num_rows <= FINDINGS_PER_RULE


def test_a_unit_compares_with_nothing_unless_a_compare_job_made_it():
    assert _unit("sin", None).other_target is None
    assert _unit("sin").other_target == Target("sin", "binary32", 1, "opencl-c")


def test_a_compare_job_runs_spirv_targets_against_opencl_c_and_journals_it():
    from fuzzfarm.orchestrate import campaign
    from fuzzfarm.orchestrate.scheduler import Scheduler, Ticket, streams_for
    c = campaign.loads('[[jobs]]\ncompare = "front_ends"\nfunctions = ["sin", '
                       '"convert_int_rte(float)"]\nunits = 1\n')
    job = c.jobs[0]
    assert job.compare == "front_ends"
    assert {Target.of(t).front_end for t in job.targets} == {"spirv"}
    assert campaign.Campaign.from_dict(c.to_dict()) == c
    s = Scheduler(streams_for(c, "p", ["binary32", "spirv"]))
    s.add_device("d", "p")
    t = s.lease("d")
    assert t.unit.against == "opencl-c"
    assert Ticket.from_json(t.to_json()) == t and Ticket.from_json(t.to_json()).unit.against
    assert streams_for(c, "p", ["binary32"]) == []             # no SPIR-V: no unit


@pytest.mark.parametrize("text, key, message", [
    ('compare = "front_ends"\nfront_ends = ["spirv"]\nfunctions = ["sin"]', "compare",
     "takes no front_ends"),
    ('compare = "front_ends"\nsource = "sweep"\nfunctions = ["sin"]', "compare", "no sweep"),
    ('compare = "front_ends"\nfunctions = ["dot"]\nunits = 1', "functions", "geometric"),
    ('compare = "sideways"\nfunctions = ["sin"]\nunits = 1', "compare",
     "unknown comparison"),
    # the constants doors (tests/test_constants_compared.py): the catalogue's special
    # values of element-wise built-ins, scalar, through one front end
    ('compare = "constants"\nfunctions = ["sin"]\nunits = 1', "source", "catalogue"),
    ('compare = "constants"\nsource = "catalogue"\nfront_ends = ["opencl-c", "spirv"]\n'
     'functions = ["sin"]', "front_ends", "one front end"),
    ('compare = "constants"\nsource = "catalogue"\nwidths = [4]\nfunctions = ["sin"]',
     "widths", "[1]"),
    ('compare = "constants"\nsource = "catalogue"\nfunctions = ["convert_int(float)"]',
     "functions", "element-wise"),
    ('compare = "constants"\nsource = "catalogue"\nfunctions = ["dot"]', "functions",
     "element-wise"),
])
def test_a_malformed_compare_job_is_one_line_at_its_key(text, key, message):
    """A front-ends or constants compare job that cannot run says so at its key."""
    from fuzzfarm.orchestrate import campaign
    with pytest.raises(campaign.CampaignError) as exc:
        campaign.loads("[[jobs]]\n" + text + "\n", "c.toml")
    assert exc.value.key == f"jobs[1].{key}" and message in exc.value.message
    assert "\n" not in str(exc.value)


@pytest.mark.device
@pytest.mark.cluster
def test_a_compare_job_runs_end_to_end_on_a_device_that_takes_spirv(tmp_path):
    """A campaign's compare job on a device with SPIR-V (Intel's CPU runtime): every unit
    is a SPIR-V unit compared with OpenCL C; a row of OpenCL C's appears only as a failure,
    a disagreement never on an input that has a failure."""
    from devices import failed_at, run_campaign, spirv_device
    stats, rows = run_campaign(
        tmp_path, f'seed = 5\ndevices = ["{spirv_device().fingerprint}"]\n[unit]\n'
                  'inputs = 4096\n[[jobs]]\ncompare = "front_ends"\n'
                  'functions = ["convert_uint_sat(float)", "sin", "fmax"]\nunits = 1\n')
    assert len(stats) == 6 and {r["front_end"] for r in stats} == {"spirv"}
    for r in rows:
        assert r["front_end"] == "spirv" or r["severity"] == "fail"
        if r["rule_id"] == DISAGREE:
            assert r["expected"].startswith("opencl-c:")
            assert not failed_at(rows, r)
