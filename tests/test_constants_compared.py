"""Compile-time constants, the third door (a campaign job's ``compare = "constants"``,
docs/constants.md): a catalogue job's special values also compiled as OpenCL C literals
or SPIR-V OpConstants (device.kernels.literal_source, device.spirv.literal_module,
DeviceRunner.run_literals), the folded results judged by the same rules and compared bit
for bit with the run time's: a failure of the folded result is a row of the door
(``opencl-c-constants``, ``spirv-constants``); a difference where neither breaks a rule is
a ``constants.disagree`` note with both."""
from __future__ import annotations

import numpy as np
import pytest

from edgecases.catalogue import function
from fuzzfarm.device.kernels import literal_source
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64
from fuzzfarm.target import CONSTANTS_DOORS, Target, constants_door
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.verdict.front_ends import CONSTANTS_DISAGREE
from fuzzfarm.work.check import Landed, check_landed
from fuzzfarm.work.make import MAX_LITERAL_INPUTS, literal_sample
from fuzzfarm.work.unit import Special, WorkUnit


CONSTANTS_DOOR = constants_door("opencl-c")


def f32(v: float) -> int:
    return int(np.float32(v).view(np.uint32))


def test_every_pattern_is_a_constant_of_its_type():
    src = literal_source(function("ldexp"), BINARY64, [(0x7FF0000000000001, -5)])
    assert "as_double((ulong)0x7ff0000000000001UL)" in src        # a signaling NaN
    assert "as_int(0xfffffffbU)" in src                             # an int argument
    src = literal_source(function("frexp"), BINARY32, [(0x7FC00001,), (1,)])
    assert src.count("frexp(x_v, &exp_v)") == 2
    assert "out_ret[1] = as_uint(ret_v);" in src and "out_exp[1] = exp_v;" in src
    assert "x_v * y_v" in literal_source(function("mul"), BINARY32, [(1, 2)])
    with pytest.raises(ValueError, match="empty"):
        literal_source(function("sin"), BINARY32, [])


def _constant_words(binary: bytes) -> set:
    """The values of a SPIR-V binary's OpConstant instructions (one or two literal words)."""
    words = np.frombuffer(binary, np.uint32)
    out, i = set(), 5                       # past the header
    while i < words.size:
        count, op = int(words[i]) >> 16, int(words[i]) & 0xFFFF
        if op == 43:                        # OpConstant: type, id, the value's words
            lits = [int(w) for w in words[i + 3:i + count]]
            out.add(lits[0] | (lits[1] << 32 if len(lits) > 1 else 0))
        i += count
    return out


@pytest.mark.parametrize("fmt, patterns", [
    (BINARY32, [0x7F800001, 0x7FC00000, 0xFFC00001, 0xFF800000, 0, 0x80000000, 1, 0x807FFFFF,
                0x3FB504F3, 0x7F7FFFFF, 0x00800000]),
    (BINARY64, [0x7FF0000000000001, 0xFFF8000000000000, 1, 0x800FFFFFFFFFFFFF,
                0x3FF0000000000001, 0x8000000000000000]),
    (BINARY16, [0x7C01, 0x7E00, 1, 0x83FF, 0x3C00, 0xFC00, 0x8000]),
])
def test_every_pattern_is_an_opconstant_of_its_bits(fmt, patterns):
    """spirv-as makes each hex-float literal (spirv.hex_float) the very pattern --
    signaling NaNs and payloads, subnormals, signed zeros -- and spirv-val accepts the
    module, one kernel of an int argument and two outputs among them."""
    from fuzzfarm.device import spirv
    try:
        spirv.tool("spirv-as")
    except spirv.SpirvToolMissing:
        pytest.skip("SPIRV-Tools (the spirv extra) not installed")
    for name in ("fabs", "frexp", "ldexp", "mul"):
        fn = function(name)
        rows = [tuple(p if a.kind == "float" else -7 for a in fn.inputs) for p in patterns]
        binary = spirv.assemble(spirv.literal_module(fn, fmt, rows))
        spirv.validate(binary)
        assert set(patterns) <= _constant_words(binary), name


def test_a_pool_is_cut_to_every_kth_row():
    n = 3 * MAX_LITERAL_INPUTS + 1
    cut = literal_sample({"x": np.arange(n, dtype=np.uint32), "y": np.arange(n, dtype=np.uint32)})
    assert 0 < cut["x"].size <= MAX_LITERAL_INPUTS and cut["x"][:2].tolist() == [0, 4]
    assert np.array_equal(cut["x"], cut["y"])
    small = {"x": np.arange(7, dtype=np.uint32)}
    assert literal_sample(small) is small


def _check(name: str, x: list, run_time: list, folded: list):
    unit = WorkUnit("u-const", Target(name, "binary32", 1, "opencl-c"), Special(1),
                    against=CONSTANTS_DOOR)
    landed = Landed(unit, 0.0, {"ret": np.array(run_time, np.uint32)},
                    {"x": np.array(x, np.uint32)}, other={"ret": np.array(folded, np.uint32)})
    return check_landed(landed, Claims(), {}, "r").findings.to_pylist()


def test_a_folded_result_that_breaks_a_rule_is_a_failure_of_the_constants_door():
    # sinpi(+2) = +0 (CL.sinpi.positive_integer): the folder's -0 breaks it; the run time's
    # +0 does not.  Element 1: both right, the same bits: nothing.
    rows = _check("sinpi", [f32(2.0), f32(0.5)], [0, f32(1.0)], [0x80000000, f32(1.0)])
    fails = [r for r in rows if r["severity"] == "fail"]
    assert fails and {r["element"] for r in fails} == {0}
    assert {r["front_end"] for r in fails} == {CONSTANTS_DOOR}
    assert not any(r["rule_id"] == CONSTANTS_DISAGREE for r in rows)


def test_two_results_within_the_bound_that_differ_are_a_constants_note_with_both():
    x, y = f32(0.75), f32(float(np.sin(np.float64(0.75))))
    rows = _check("sin", [x], [y], [y + 1])                   # one ULP apart, both within 4
    (note,) = rows
    assert (note["rule_id"], note["severity"], note["front_end"]) == \
        (CONSTANTS_DISAGREE, "note", "opencl-c")
    assert note["output_bits"] == [y]
    assert note["expected"].startswith(f"{CONSTANTS_DOOR}: ret=")
    assert _check("sin", [x], [y], [y]) == []                  # the same bits: no row


def test_a_unit_of_the_constants_door_is_judged_as_its_own_target():
    assert CONSTANTS_DOORS == ("opencl-c-constants", "spirv-constants")
    for fe in ("opencl-c", "spirv"):
        unit = WorkUnit("u", Target("sin", "binary32", 1, fe), Special(1),
                        against=constants_door(fe))
        assert unit.other_target == unit.target


def test_a_constants_job_leases_units_of_the_door_and_journals_it():
    from fuzzfarm.orchestrate import campaign
    from fuzzfarm.orchestrate.scheduler import Scheduler, Ticket, streams_for
    spirv = campaign.loads('[[jobs]]\ncompare = "constants"\nsource = "catalogue"\n'
                           'front_ends = ["spirv"]\nfunctions = ["sin"]\n')
    assert spirv.jobs[0].against == "spirv-constants"
    c = campaign.loads('[[jobs]]\ncompare = "constants"\nsource = "catalogue"\n'
                       'functions = ["sin"]\nbuild_options = ["", "-cl-denorms-are-zero"]\n')
    job = c.jobs[0]
    assert job.against == CONSTANTS_DOOR
    assert campaign.Campaign.from_dict(c.to_dict()) == c
    s = Scheduler(streams_for(c, "p", ["binary32"]))
    s.add_device("d", "p")
    t = s.lease("d")
    assert t.unit.against == CONSTANTS_DOOR
    assert Ticket.from_json(t.to_json()).unit.against == CONSTANTS_DOOR


@pytest.mark.device
def test_opconstants_run_on_a_device_that_takes_spirv_as_the_run_time_computes_exact_ones():
    """fabs and copysign on special values as SPIR-V OpConstants (Intel's CPU runtime):
    the run time's bits."""
    from devices import spirv_device
    from fuzzfarm.device.runner import DeviceRunner
    runner = DeviceRunner(spirv_device(), "")
    x = np.array([0, 0x80000000, 1, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00001,
                  f32(1.5), f32(-2.5)], np.uint32)
    for name, ins in (("fabs", {"x": x}), ("copysign", {"x": x, "y": np.roll(x, 1)})):
        fn = function(name)
        lit = runner.run_literals(fn, ins, BINARY32, "spirv")
        assert np.array_equal(lit.wait()["ret"],
                              runner.run(fn, ins, BINARY32, front_end="spirv")["ret"]), name


@pytest.mark.device
def test_literals_run_on_the_device_as_the_run_time_computes_exact_built_ins():
    """fabs and copysign on special values, folded or not, are exact: the literal programs
    (two of them: more rows than one program holds) give the run time's bits."""
    from devices import require_device
    from fuzzfarm.device.runner import LITERALS_PER_PROGRAM, DeviceRunner
    runner = DeviceRunner(require_device(), "")
    x = np.array([0, 0x80000000, 1, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00001,
                  f32(1.5), f32(-2.5)] * 10, np.uint32)[:LITERALS_PER_PROGRAM + 3]
    y = np.roll(x, 1)
    for name, ins in (("fabs", {"x": x}), ("copysign", {"x": x, "y": y})):
        fn = function(name)
        lit = runner.run_literals(fn, ins, BINARY32)
        assert lit.device_seconds > 0
        assert np.array_equal(lit.wait()["ret"], runner.run(fn, ins, BINARY32)["ret"]), name


@pytest.mark.device
@pytest.mark.cluster
def test_a_constants_job_runs_end_to_end(tmp_path):
    """A campaign's constants job on the test device: one unit per target and build
    options, at most MAX_LITERAL_INPUTS inputs each; a folded result's row is a failure of
    the door or a constants.disagree note on the run time's row, never both at one input."""
    from devices import failed_at, require_device, run_campaign
    stats, rows = run_campaign(
        tmp_path, f'seed = 5\ndevices = ["{require_device().fingerprint}"]\n[[jobs]]\n'
                  'compare = "constants"\nsource = "catalogue"\nfunctions = ["mul", "sinpi"]\n'
                  'build_options = ["", "-cl-denorms-are-zero"]\n')
    assert len(stats) == 4 and all(0 < r["inputs_tested"] <= MAX_LITERAL_INPUTS for r in stats)
    for r in rows:
        assert r["front_end"] == "opencl-c" or (r["front_end"] == CONSTANTS_DOOR
                                                and r["severity"] == "fail")
        if r["rule_id"] == CONSTANTS_DISAGREE:
            assert r["expected"].startswith(f"{CONSTANTS_DOOR}:")
            assert not failed_at(rows, r)
