"""`fuzzfarm repro`: minimized, self-contained reproducers of a finding (fuzzfarm.report.repro).

Fast tier: the shrinker against a planted fault (a pure numpy stand-in for the device), the
choice-sequence encoding that seeds hypothesis, the acceptance test the reproducers embed,
the example database, and the bad-input errors.  Device tier (PyPI's PoCL): a tiny
campaign, then `fuzzfarm repro` end to end, the exported pyopencl script and, where gcc,
CL/cl.h and libOpenCL are here, the C program.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import Phase, find, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from devices import pypi_pocl, require_device
from fuzzfarm.report import repro
from fuzzfarm.report import repro_case
from fuzzfarm.store import dataset as store
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.cli import main

T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)
ONE = 0x3F800000                    # 1.0f
BIG = 0x4AFFFFFE                    # 8388607.0f
NEG_ZERO = 0x80000000


def sinpi_target(**kw) -> repro.Case:
    base = dict(function="sinpi", precision="binary32", width=1, build_options="",
                rule_class="CL.sinpi.positive_integer", severity="fail", output="ret")
    base.update(kw)
    return repro.Case(**base)


def planted_sinpi(inputs: dict) -> dict:
    """A device whose sinpi returns -0.0 for every positive integer x >= 1 and a float64
    sin(pi x) rounded to binary32 elsewhere (x itself at zeros)."""
    bits = inputs["x"]
    x = bits.view(np.float32)
    with np.errstate(all="ignore"):
        ref = np.sin(np.pi * x.astype(np.float64)).astype(np.float32).view(np.uint32)
        bad = np.isfinite(x) & (x >= 1) & (np.floor(x) == x)
    ref = np.where(x == 0, bits, ref)
    return {"ret": np.where(bad, np.uint32(NEG_ZERO), ref).astype(np.uint32)}


def _choices_to_bytes_or_skip():
    try:
        from hypothesis.database import choices_to_bytes
    except ImportError:         # a hypothesis before choice sequences: no seeding
        pytest.skip("this hypothesis has no hypothesis.database.choices_to_bytes")
    return choices_to_bytes


# -- the shrinker, against a planted fault (no device) -------------------------------------

def test_planted_fault_shrinks_8388607_to_one():
    _choices_to_bytes_or_skip()
    rep = repro.Reproducer(sinpi_target(), planted_sinpi, Claims())
    first = rep.evaluate([(BIG,)])[0]
    assert first.holds and first.finding.rule_id == "CL.sinpi.positive_integer"
    assert first.values == (NEG_ZERO,) and first.accept == [{"kind": "bits", "value": 0}]
    # hypothesis alone, from the original (no batched special values)
    best, info = repro.shrink(rep, (BIG,), max_examples=100, landmarks=False)
    assert best == (ONE,)
    assert info.seeded            # the search started from the original input
    assert info.launches <= 60
    # with the batched special-value launch as well
    rep2 = repro.Reproducer(sinpi_target(), planted_sinpi, Claims())
    assert repro.shrink(rep2, (BIG,), max_examples=100)[0] == (ONE,)


def test_planted_fault_keeps_the_rule_class():
    """A fault only for integers >= 4096 shrinks to 4096.0f, not to an input of another
    class or rule."""
    def device(inputs):
        out = planted_sinpi(inputs)
        x = inputs["x"].view(np.float32)
        out["ret"] = np.where((x >= 1) & (x < 4096) & (np.floor(x) == x), np.uint32(0),
                              out["ret"]).astype(np.uint32)
        return out
    rep = repro.Reproducer(sinpi_target(), device, Claims())
    best, info = repro.shrink(rep, (BIG,), max_examples=100, landmarks=False)
    assert best == (np.float32(4096.0).view(np.uint32),)


def test_a_width_4_element_reduces_to_width_1_and_zero_lanes():
    """At width 4 the candidate sits in its lane; the other lanes are zero (or given)."""
    t = sinpi_target(width=4, lane=2)
    ins = t.arrays([(BIG,), (ONE,)])
    assert ins["x"].tolist() == [0, 0, BIG, 0, 0, 0, ONE, 0]
    assert [t.element(k) for k in range(2)] == [2, 6]
    rep = repro.Reproducer(t, planted_sinpi, Claims())
    assert [o.holds for o in rep.evaluate([(BIG,), (0x3F000000,)])] == [True, False]
    ctx = ((5, 6, 7, 8),)
    t2 = sinpi_target(width=4, lane=1, context=ctx)
    assert t2.arrays([(ONE,)])["x"].tolist() == [5, ONE, 7, 8]


@pytest.mark.parametrize("function, precision, cand", [
    ("sinpi", "binary32", (BIG,)),
    ("sinpi", "binary32", (0x80000000,)),                   # -0
    ("sinpi", "binary32", (0x00000001,)),                   # a subnormal
    ("sinpi", "binary32", (0xFF800000,)),                   # -inf
    ("sinpi", "binary32", (0x7F800001,)),                   # a signaling NaN, payload 1
    ("sinpi", "binary32", (0xFFC00005,)),                   # a negative quiet NaN
    ("sinpi", "binary64", (0x7FF0000000000003,)),
    ("pown", "binary32", (0x40000000, -7)),                 # an int argument
    ("ldexp", "binary64", (0x3FF0000000000000, -2147483648)),
    ("nan", "binary32", (0x123,)),                          # a uint argument
    ("convert_int_sat_rte(float)", "binary32", (0x7FC00000,)),
    ("convert_float(uchar)", "binary32", (255,)),
])
def test_encode_is_what_the_strategy_draws(function, precision, cand):
    """The choice sequence ``encode`` writes replays as ``cand`` through
    ``candidate_strategy``: what seeds hypothesis with the original input."""
    from hypothesis.database import InMemoryExampleDatabase
    choices_to_bytes = _choices_to_bytes_or_skip()
    t = repro.Case(function, precision)
    db = InMemoryExampleDatabase()
    db.save(b"k", choices_to_bytes(repro.encode(t, cand)))
    seen = []

    def cond(c):
        seen.append(c)
        return c == cand
    got = find(repro.candidate_strategy(t), cond, database_key=b"k",
               settings=settings(database=db, phases=[Phase.reuse, Phase.shrink],
                                 max_examples=1, deadline=None))
    assert got == cand and seen[0] == cand


# -- the acceptance test the reproducers embed ----------------------------------------------

def _constant_device(bits: int):
    """A stand-in device whose built-in returns ``bits`` for every input."""
    return lambda inputs: {"ret": np.full(len(inputs["x"]), bits, np.uint32)}


def test_on_a_flushing_device_the_reproducer_accepts_what_3_8_3_allows():
    """exp(-100) is subnormal: a flushing device may return a zero of either sign.
    rsqrt(0x1p-145): it may compute rsqrt(+-0) = +-inf.  A wrong 1.0 stays a bug."""
    ftz = Claims(denormals=False)
    for name, x, allowed in (("exp", np.float32(-100.0).view(np.uint32), (0, NEG_ZERO)),
                             ("rsqrt", 0x00000010, (0x7F800000, 0xFF800000))):
        from fuzzfarm.store.signatures import rule_class
        case = repro.Case(name, "binary32",
                          rule_class=rule_class(f"ulp.{name}", name, "binary32", [int(x)]))
        rep = repro.Reproducer(case, _constant_device(ONE), ftz)
        outcome = rep.evaluate([(int(x),)])[0]
        assert outcome.finding is not None and outcome.finding.rule_id == f"ulp.{name}"
        assert outcome.holds                                   # 1.0 is not allowed
        for v in allowed:
            assert repro.acceptable([v], outcome.accept, 32), (name, hex(v))
        strict = repro.Reproducer(case, _constant_device(ONE), Claims()).evaluate(
            [(int(x),)])[0]
        assert not any(repro.acceptable([v], strict.accept, 32) for v in allowed), name


def test_acceptable():
    ok = repro.acceptable
    assert ok([0], [{"kind": "bits", "value": 0}], 32)
    assert not ok([NEG_ZERO], [{"kind": "bits", "value": 0}], 32)
    assert ok([0x7FC00001], [{"kind": "nan"}], 32)
    assert not ok([0x7F800001], [{"kind": "qnan"}], 32) and ok([0x7FC00000], [{"kind": "qnan"}], 32)
    assert ok([NEG_ZERO], [{"kind": "zero"}], 32)
    assert ok([0x7FC00003], [{"kind": "payload", "value": 3}], 32)
    assert not ok([0x7FC00000], [{"kind": "payload", "value": 3}], 32)
    assert ok([-5], [{"kind": "int", "value": -5}], 0)
    ulp = [{"kind": "ulp", "value": ONE, "ulps": 4.0, "abs": 0.0}]
    assert ok([ONE + 4], ulp, 32) and not ok([ONE + 5], ulp, 32)
    assert ok([0x3F7FFFFC], ulp, 32) and not ok([0x7FC00000], ulp, 32)
    assert ok([0x8001], [{"kind": "ulp", "value": 0x0001, "ulps": 2.0, "abs": 0.0}], 16)
    assert ok([1, 2], [{"kind": "differs", "values": [1, 3]}], 32)
    assert not ok([1, 3], [{"kind": "differs", "values": [1, 3]}], 32)
    assert ok([ONE], [{"kind": "bits", "value": 0}, {"kind": "bits", "value": ONE}], 32)


@pytest.mark.parametrize("text, bits, want", [
    ("0x00000000 (+0)", 32, [{"kind": "bits", "value": 0}]),
    ("any NaN", 32, [{"kind": "nan"}]),
    ("a quiet NaN (should)", 32, [{"kind": "qnan"}]),
    ("+0 or -0", 32, [{"kind": "bits", "value": 0}, {"kind": "bits", "value": NEG_ZERO}]),
    ("0x3fc90fdb (pi/2) or 0x3fc90fda (pi/2, rtz)", 32,
     [{"kind": "bits", "value": 0x3FC90FDB}, {"kind": "bits", "value": 0x3FC90FDA}]),
    ("-2147483648 (FP_ILOGB0)", 0, [{"kind": "int", "value": -2147483648}]),
    ("the payload of one of the NaN operands: 0x1 or 0x5", 32,
     [{"kind": "payload", "value": 1}, {"kind": "payload", "value": 5}]),
    ("|quo| = 3 (mod 8), x/y > 0: positive or 0 (integral quotient 11)", 0, None),
    ("every lane a NaN", 32, None),
])
def test_expected_texts(text, bits, want):
    from fuzzfarm.formats import BINARY32
    slot = repro.Buffer("ret", "float" if bits else "int",
                      np.dtype(np.uint32 if bits else np.int32), BINARY32)
    assert repro_case._parse_expected(text, slot) == want


# -- the example database --------------------------------------------------------------------

def test_replay_examples_returns_the_saved_example(tmp_path):
    db = tmp_path / "_hypothesis"
    assert repro.replay_examples(db, "sinpi", "binary32") == []
    t = sinpi_target()
    repro.save_example(db, t, (ONE,))
    repro.save_example(db, t, (ONE,))                     # saved once
    pown = repro.Case("pown", "binary32", rule_class="ulp.pown[x:pos_normal,y:int_neg]")
    repro.save_example(db, pown, (0x40000000, -3))
    assert repro.replay_examples(db, "sinpi", "binary32") == [(ONE,)]
    assert repro.replay_examples(db, "pown", "binary32") == [(0x40000000, 2**64 - 3)]
    assert repro.replay_examples(db, "sinpi", "binary64") == []
    _choices_to_bytes_or_skip()
    # the class key holds a hypothesis entry that a search over candidate_strategy replays
    seen = []
    key = repro.class_key("sinpi", "binary32", "CL.sinpi.positive_integer")
    got = find(repro.candidate_strategy(t), lambda c: seen.append(c) or c == (ONE,),
               database_key=key,
               settings=settings(database=DirectoryBasedExampleDatabase(str(db)),
                                 phases=[Phase.reuse], max_examples=1, deadline=None))
    assert got == (ONE,) and seen[0] == (ONE,)


# -- bad input -------------------------------------------------------------------------------

def finding(**kw) -> dict:
    row = {"run_id": "r1", "unit_id": "u1", "device_fingerprint": "0123456789ab",
           "platform": "Nowhere CL", "device": "imaginary-gpu", "driver_version": "0.0",
           "opencl_version": "OpenCL 3.0", "opencl_c_version": "OpenCL C 1.2",
           "profile": "FULL_PROFILE", "fp_config": "DENORM INF_NAN ROUND_TO_NEAREST",
           "function": "sinpi", "precision": "binary32", "vector_width": 1,
           "build_options": "", "element": 3, "input_bits": [ONE],
           "inputs": "x=0x3f800000 (1.0)", "output": "ret", "output_bits": [NEG_ZERO],
           "outputs": "ret=0x80000000 (-0.0)", "expected": "0x00000000 (+0)",
           "rule_id": "CL.sinpi.positive_integer", "section": "3.8.2",
           "sentence": "sinpi( +n) returns +0 for positive integers n.", "severity": "fail",
           "reading": "", "ulp_error": None, "seed": 1, "recipe": '{"special": true}',
           "time": T0}
    row.update(kw)
    return row


@pytest.fixture()
def results(tmp_path) -> Path:
    out = tmp_path / "res"
    store.write_findings(out, "r1", "u1", [finding()])
    store.write_findings(out, "r2", "u1", [finding(run_id="r2")])
    store.write_findings(out, "r1", "u2", [
        finding(unit_id="u2", element=7),
        finding(unit_id="u2", element=7, rule_id="F9.G10", expected="any NaN")])
    store.write_findings(out, "r1", "u3", [finding(unit_id="u3", element=-1,
                                                   rule_id="device.crash",
                                                   severity="fault")])
    store.write_findings(out, "r1", "u4", [finding(unit_id="u4",
                                                   front_end="opencl-c-constants")])
    return out


def _run(*args):
    return CliRunner().invoke(main, ["repro", *map(str, args)])


@pytest.mark.parametrize("ref, words", [
    ("s0123456789ab", "unknown signature"),
    ("i0123456789ab", "issue id"),
    ("not-a-ref", "neither a signature"),
    ("u1#x", "neither a signature"),
    ("r1/u9#0", "no finding"),
    ("u1#3", "ambiguous"),                     # unit u1 is in runs r1 and r2
    ("r1/u2#7", "ambiguous"),                  # two rules at one element
    ("r1/u3#-1", "neither a signature"),
    ("FAULT", "device fault"),                 # the signature of a device fault
])
def test_bad_references_are_one_line_exit_2(results, tmp_path, ref, words):
    if ref == "FAULT":
        from fuzzfarm.store.signatures import with_signatures
        t = with_signatures(store.read_findings(results)).to_pylist()
        ref = [r["signature"] for r in t if r["severity"] == "fault"][0]
    out = tmp_path / "out"
    res = _run(ref, results, "--out", out)
    assert res.exit_code == 2, res.output
    assert words in res.output
    assert len([ln for ln in res.output.splitlines() if ln.startswith("Error")]) == 1
    assert not out.exists()


def test_missing_results_dir_and_bad_device_are_exit_2(results, tmp_path):
    out = tmp_path / "out"
    res = _run("s0123456789ab", tmp_path / "nowhere", "--out", out)
    assert res.exit_code == 2 and "not a results directory" in res.output
    res = _run("r1/u1#3", results, "--out", out, "--device", "no-such-device-xyz")
    assert res.exit_code == 2 and "no-such-device-xyz" in res.output
    res = _run("r1/u1#3", results)                          # --out is required
    assert res.exit_code == 2 and "--out" in res.output
    assert not out.exists()


def test_a_finding_whose_device_is_not_here_is_exported_unverified(results, tmp_path):
    """The results copied to a machine without the device (imaginary-gpu): the recorded
    finding becomes a reproducer, marked not re-verified, with the recorded values as
    C99 %a and bits."""
    out = tmp_path / "out"
    res = _run("r1/u1#3", results, "--out", out)
    assert res.exit_code == 0, res.output
    assert "not attached here" in res.output and "imaginary-gpu" in res.output
    assert "not re-verified" in res.output
    for name in ("kernel.cl", "repro.py", "repro.c", "README.md", "repro.json"):
        assert (out / name).is_file(), name
    readme = (out / "README.md").read_text()
    assert "NOT RE-VERIFIED" in readme and "imaginary-gpu" in readme
    assert "0x1p+0 (0x3f800000)" in readme                  # the input, %a and bits
    # every item of the finding's list on a line of its own (a tag ending a line of text
    # must not take the line's newline with it)
    for item in ("function", "build options", "rule", "section", "spec", "input", "got"):
        assert f"\n- {item}: " in readme, item
    spec = json.loads((out / "repro.json").read_text())
    assert spec["runs"] == 0 and spec["input_bits"] == [ONE]
    assert spec["got_bits"] == {"ret": [NEG_ZERO]}
    assert spec["judge"]["accept"] == [{"kind": "bits", "value": 0}]     # +0 only
    compile(( out / "repro.py").read_text(), "repro.py", "exec")          # valid Python


def test_a_door_row_is_a_literal_case_whose_kernel_holds_its_candidate():
    def row(**kw):
        return finding(rule_class="CL.sinpi.positive_integer", **kw)
    case = repro.target_for(row(front_end="spirv-constants"))
    assert case.literal and case.front_end == "spirv" and case.target.front_end == "spirv"
    assert repro.target_for(row()).literal is False
    case = repro.target_for(row(front_end="opencl-c-constants"))
    name, source = case.kernel((ONE,))
    assert name == "c_sinpi" and "0x3f800000" in source and "sinpi(x_v)" in source
    assert "__global uint *restrict out_ret" in source and "in_x" not in source
    assert case.kernel((BIG,))[1] != source
    with pytest.raises(ValueError, match="give cand"):
        case.kernel()


def test_a_constants_door_finding_exports_its_literal_kernel(results, tmp_path):
    """A folded result (front end opencl-c-constants) whose device is not here: the
    reproducer's kernel holds the input as a literal, run by one work-item, no input
    buffer."""
    out = tmp_path / "out"
    res = _run("r1/u4#3", results, "--out", out)
    assert res.exit_code == 0, res.output
    spec = json.loads((out / "repro.json").read_text())
    assert spec["literal"] is True and spec["front_end"] == "opencl-c"
    assert spec["inputs"] == [] and spec["local_size"] == 1
    assert spec["kernel_name"] == "c_sinpi" and "0x3f800000" in spec["kernel_source"]
    assert (out / "kernel.cl").read_text() == spec["kernel_source"]
    assert "compile-time constant" in (out / "README.md").read_text()
    compile((out / "repro.py").read_text(), "repro.py", "exec")
    if shutil.which("gcc") is not None:         # C99 with no input buffer: no empty array
        c = subprocess.run(["gcc", "-std=c99", "-pedantic", "-Wall", "-Werror", "-fsyntax-only",
                            "repro.c"], cwd=out, capture_output=True, text=True)
        if "CL/cl.h" not in c.stderr:
            assert c.returncode == 0, c.stderr


def test_lookup_by_signature_gives_the_earliest_failure(results):
    from fuzzfarm.store.signatures import with_signatures
    t = with_signatures(store.read_findings(results))
    sig = [r for r in t.to_pylist() if r["unit_id"] == "u1"][0]["signature"]
    row = repro.lookup(results, sig)
    assert row["rule_id"] == "CL.sinpi.positive_integer" and row["element"] in (3, 7)
    assert repro.lookup(results, "r2/u1#3")["run_id"] == "r2"


# -- device tier: PyPI's PoCL ------------------------------------------------------------------

def tiny_campaign(out: Path, info, function: str = "sinpi", width: int = 1,
                  serials=(0, 1)) -> str:
    """The units ``serials`` of ``function`` run on ``info`` and written as a run would
    (findings, stats, run metadata with the device constants)."""
    from fuzzfarm.device.runner import DeviceRunner
    from fuzzfarm.work.check import check_unit
    from fuzzfarm.work.make import make_inputs, make_unit
    from fuzzfarm.work.session import run_unit
    runner = DeviceRunner(info)
    consts = runner.device_constants()
    claims = Claims.from_fp_config(info.fp_flags("binary32"), info.profile, "binary32",
                                   consts, "")
    run_id = store.new_run_id()
    for serial in serials:
        unit = make_unit(info.fingerprint, (function, "binary32", width), serial, 5, 2048, 1)
        ins = make_inputs(unit)
        outs = run_unit(runner, unit, ins)
        table, stats, _ = check_unit(unit, ins, outs, claims, info.columns("binary32"),
                                     run_id, 0.0)
        store.write_findings_table(out, run_id, unit.unit_id, table)
        store.write_stats(out, run_id, unit.unit_id, stats)
    store.write_run(out, run_id, {"run_id": run_id, "per_recipe": 2048,
                                  "device_constants": {info.fingerprint: consts}})
    return run_id


def _largest_positive_integer_finding(out: Path) -> dict:
    rows = [r for r in store.read_findings(out).to_pylist()
            if r["rule_id"] == "CL.sinpi.positive_integer"]
    assert rows, "sinpi(+n) = -0 not found on PyPI's PoCL"
    return max(rows, key=lambda r: r["input_bits"][0])


@pytest.fixture(scope="module")
def pocl():
    info = pypi_pocl()
    if info is None:
        pytest.skip("PyPI's PoCL (pyopencl's bundled libpocl) is not here")
    return info


def _c_toolchain_or_skip(d: Path) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    res = subprocess.run(repro.BUILD_LINE.split(), cwd=d, capture_output=True, text=True)
    if res.returncode != 0:
        if "CL/cl.h" in res.stderr or "lOpenCL" in res.stderr or "cannot find" in res.stderr:
            pytest.skip(f"no OpenCL headers or ICD loader to build repro.c: "
                        f"{res.stderr.strip().splitlines()[-1]}")
        pytest.fail(f"repro.c does not build: {res.stderr}")
    return d / "repro"


@pytest.mark.device
def test_repro_on_pypi_pocl_end_to_end(pocl, tmp_path):
    res_dir = tmp_path / "res"
    tiny_campaign(res_dir, pocl)
    row = _largest_positive_integer_finding(res_dir)
    assert row["input_bits"][0] > ONE
    out = tmp_path / "repro"
    res = _run(f"{row['run_id']}/{row['unit_id']}#{row['element']}", res_dir, "--out", out,
               "--max-examples", 100)
    assert res.exit_code == 0, res.output
    for name in ("kernel.cl", "repro.py", "repro.c", "README.md", "repro.json", "pocl.icd"):
        assert (out / name).is_file(), name
    spec = json.loads((out / "repro.json").read_text())
    assert spec["original_input_bits"] == row["input_bits"]
    assert spec["input_bits"] == [ONE]                      # sinpi(1.0f) = -0.0f
    assert spec["judged_values"] == [NEG_ZERO] and spec["runs"] == 3
    assert spec["rule_id"] == "CL.sinpi.positive_integer"
    assert (out / "kernel.cl").read_text() == spec["kernel_source"]
    assert "sinpi(x_v)" in spec["kernel_source"]
    readme = (out / "README.md").read_text()
    for words in (pocl.name, pocl.fingerprint, "CL.sinpi.positive_integer",
                  "sinpi( +n) returns +0 for positive integers n.", repro.BUILD_LINE,
                  f"OCL_ICD_VENDORS={out.resolve()}", "0x4", "binary32"):
        assert words in readme, words
    lib = (out / "pocl.icd").read_text().strip()
    assert os.path.isabs(lib) and os.path.exists(lib) and "libpocl" in lib
    # the example is saved for later runs
    assert (ONE,) in repro.replay_examples(res_dir / "_hypothesis", "sinpi", "binary32")

    # the pyopencl script: exit 1 while the bug is present ...
    py = subprocess.run([sys.executable, "repro.py"], cwd=out, capture_output=True,
                        text=True, timeout=300)
    assert py.returncode == 1, py.stdout + py.stderr
    assert "got ret = 0x80000000" in py.stdout
    # ... and 0 when the result is acceptable (here: a script that accepts -0)
    fixed = (out / "repro.py").read_text().replace("{'kind': 'bits', 'value': 0x0}",
                                                   "{'kind': 'bits', 'value': 0x80000000}")
    (tmp_path / "fixed.py").write_text(fixed)
    py = subprocess.run([sys.executable, str(tmp_path / "fixed.py")], capture_output=True,
                        text=True, timeout=300)
    assert py.returncode == 0, py.stdout + py.stderr
    py = subprocess.run([sys.executable, "repro.py", "no-such-device-xyz"], cwd=out,
                        capture_output=True, text=True, timeout=300)
    assert py.returncode == 2

    # the C program, through the system ICD loader pointed at pocl.icd
    exe = _c_toolchain_or_skip(out)
    env = {**os.environ, "OCL_ICD_VENDORS": str(out.resolve())}
    c = subprocess.run([str(exe)], cwd=out, capture_output=True, text=True, env=env,
                       timeout=300)
    assert c.returncode == 1, c.stdout + c.stderr
    assert "got ret = 0x80000000" in c.stdout
    c = subprocess.run([str(exe), "no-such-device-xyz"], cwd=out, capture_output=True,
                       text=True, env=env, timeout=300)
    assert c.returncode == 2


@pytest.mark.device
def test_a_folded_result_is_reproduced_with_the_literal_kernel(pocl, results, tmp_path):
    """The door finding sinpi(1.0f) folded to -0 (recorded on another device), on PyPI's
    PoCL: reproduced exactly where PoCL's own fold of the literal gives -0 as well, and
    its pyopencl script then exits 1 on it; not reproducible (exit 1) where it does not."""
    from edgecases.catalogue import function as builtin
    from fuzzfarm.device.runner import DeviceRunner
    folded = int(DeviceRunner(pocl).run_literals(
        builtin("sinpi"), {"x": np.array([ONE], np.uint32)}).wait()["ret"][0])
    out = tmp_path / "out"
    res = _run("r1/u4#3", results, "--out", out, "--device", pocl.index, "--no-shrink")
    if folded != NEG_ZERO:
        assert res.exit_code == 1 and "not reproducible" in res.output, res.output
        return
    assert res.exit_code == 0, res.output
    spec = json.loads((out / "repro.json").read_text())
    assert spec["literal"] and spec["runs"] == 3 and spec["judged_values"] == [NEG_ZERO]
    py = subprocess.run([sys.executable, "repro.py"], cwd=out, capture_output=True,
                        text=True, timeout=300)
    assert py.returncode == 1 and "got ret = 0x80000000" in py.stdout, py.stdout + py.stderr


@pytest.mark.device
def test_repro_by_signature_from_width_4_reduces_to_width_1(pocl, tmp_path):
    from fuzzfarm.store.signatures import with_signatures
    res_dir = tmp_path / "res"
    tiny_campaign(res_dir, pocl, width=4, serials=(0,))
    t = with_signatures(store.read_findings(res_dir))
    sig = [r for r in t.to_pylist()
           if r["rule_id"] == "CL.sinpi.positive_integer"][0]["signature"]
    out = tmp_path / "repro"
    res = _run(sig, res_dir, "--out", out, "--no-shrink")
    assert res.exit_code == 0, res.output
    spec = json.loads((out / "repro.json").read_text())
    assert spec["finding_vector_width"] == 4 and spec["vector_width"] == 1
    assert "found at width 4" in res.output
    assert spec["input_bits"] == spec["original_input_bits"]     # --no-shrink


@pytest.mark.device
def test_not_reproducible_is_exit_1(pocl, tmp_path, monkeypatch):
    """A finding whose input does not fail now, and one that stops failing during the
    re-verification, are "not reproducible" (exit 1), with nothing exported."""
    res_dir = tmp_path / "res"
    cols = pocl.columns("binary32")
    store.write_findings(res_dir, "r1", "u1", [finding(
        **cols, input_bits=[0x3F000000], inputs="x=0x3f000000 (0.5)")])  # sinpi(0.5) = 1
    res = _run("r1/u1#3", res_dir, "--out", tmp_path / "out1")
    assert res.exit_code == 1, res.output
    assert "not reproducible" in res.output and "0x3f000000" in res.output
    assert not (tmp_path / "out1" / "repro.py").exists()

    store.write_findings(res_dir, "r1", "u2", [finding(**cols, unit_id="u2")])   # 1.0f
    fixed = {"on": False}
    real_call, real_shrink = repro.device_call, repro.shrink

    def call(runner, target):
        run = real_call(runner, target)

        def wrapped(inputs):
            out = run(inputs)
            if fixed["on"]:       # the device "fixes" sinpi once minimized
                out["ret"] = np.where(out["ret"] == NEG_ZERO, np.uint32(0), out["ret"])
            return out
        return wrapped

    def shrink(*a, **kw):
        best = real_shrink(*a, **kw)
        fixed["on"] = True
        return best
    monkeypatch.setattr(repro, "device_call", call)
    monkeypatch.setattr(repro, "shrink", shrink)
    res = _run("r1/u2#3", res_dir, "--out", tmp_path / "out2")
    assert res.exit_code == 1, res.output
    assert "0 of 3 runs" in res.output and "not reproducible" in res.output
    assert not (tmp_path / "out2" / "repro.py").exists()


# -------------------------------------------------------------------- build failures
def _build_failure_row(source: str, fingerprint: str) -> dict:
    import json
    info = require_device()
    return {"run_id": "r", "unit_id": "u-sinpi", "device_fingerprint": fingerprint,
            "platform": info.platform_name, "device": info.name,
            "driver_version": info.driver_version, "opencl_version": info.platform_version,
            "opencl_c_version": "", "function": "sinpi", "precision": "binary32",
            "vector_width": 1, "build_options": "", "rule_id": "device.build_failure",
            "section": "OpenCL 3.0 API §5.8.4", "sentence": "clBuildProgram returns ...",
            "severity": "fault", "element": -1,
            "fault_detail": json.dumps({"kernel_source": source, "build_options": "",
                                        "build_log": "recorded log line", "error_code": -11,
                                        "error_name": "CL_BUILD_PROGRAM_FAILURE"})}


@pytest.mark.device
def test_a_build_failure_reproducer_is_the_kernel_its_log_and_programs_that_build_it(
        tmp_path):
    import subprocess
    import sys

    from fuzzfarm.report import fault_repro
    from fuzzfarm.report.repro import NotReproducible
    info = require_device()
    bad = "__kernel void k(__global float *a) { a[0] = no_such_builtin(a[0]); }\n"
    rep = fault_repro.export(_build_failure_row(bad, info.fingerprint), tmp_path / "r")
    names = sorted(p.name for p in rep.files if not p.name.endswith(".icd"))
    assert names == ["README.md", "build.c", "build.py", "build_log.txt", "kernel.cl",
                     "repro.json"]
    # the ICD files shipped are those repro.shipped_icds names for the device
    assert sorted(p.name for p in rep.files if p.name.endswith(".icd")) == \
        sorted(name for name, _ in repro.shipped_icds(rep.info))
    assert rep.info is not None and "no_such_builtin" in rep.log       # re-verified here
    readme = (tmp_path / "r" / "README.md").read_text()
    assert "recorded log line" in readme and "CL_BUILD_PROGRAM_FAILURE (-11)" in readme
    assert (tmp_path / "r" / "kernel.cl").read_text() == bad
    run = subprocess.run([sys.executable, "build.py", info.name], cwd=tmp_path / "r",
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "does not build" in run.stdout, run.stderr
    assert "int main" in (tmp_path / "r" / "build.c").read_text()
    good = "__kernel void k(__global float *a) { a[0] = sinpi(a[0]); }\n"
    with pytest.raises(NotReproducible, match="builds"):
        fault_repro.export(_build_failure_row(good, info.fingerprint), tmp_path / "g")
    away = fault_repro.export(_build_failure_row(good, "0123456789ab"), tmp_path / "a")
    assert away.info is None and "not re-verified" in "\n".join(fault_repro.summary(away))
    assert "no (the device is not attached here)" in (tmp_path / "a" / "README.md").read_text()


def test_example_database_keys_are_stable():
    """Saved examples (RESULTS/_hypothesis) stay found across versions: the keys are a
    fixed format, not derived from module paths."""
    from fuzzfarm.report.repro_shrink import class_key
    assert class_key("sinpi", "binary32", "CL.sinpi.positive_integer") == \
        b"fuzzfarm.repro:sinpi:binary32:CL.sinpi.positive_integer"
