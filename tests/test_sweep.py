"""`fuzzfarm sweep`: the space, the chunk checker, resumption and the device kernel.

The pure tests need no device; those marked ``device`` run the sweep kernel on the first
OpenCL device (PyPI's PoCL is enough).  The full 2^32 sweep is the ``exhaustive`` tier.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from edgecases.catalogue import function
from devices import require_device, selector
from fuzzfarm.store import dataset as store
from fuzzfarm.orchestrate import sweep as sw
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.formats import BINARY16, BINARY32
from fuzzfarm.device.kernels import sweep_source
from fuzzfarm.orchestrate import ranges
from fuzzfarm.target import Target
from fuzzfarm.work.check import Landed, check_and_write
from fuzzfarm.work.unit import IndexRange, WorkUnit

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- the space
def test_unary_space_is_every_pattern_with_each_value_beside_its_negation():
    s = sw.space_for("sin", "binary32")
    assert s.size == 2**32 and s.bits == 32
    x = s.inputs(2 * 0x3F80_0000, 4)["x"]
    assert x.dtype == np.uint32
    assert x.tolist() == [0x3F80_0000, 0xBF80_0000, 0x3F80_0001, 0xBF80_0001]
    assert s.inputs(2**32 - 1, 1)["x"].tolist() == [0xFFFF_FFFF]
    h = sw.space_for("sin", "binary16")
    every = h.inputs(0, h.size)["x"]
    assert np.array_equal(np.sort(every), np.arange(2**16, dtype=np.uint16))


def test_binary16_binary_space_puts_x_low_and_y_high():
    s = sw.space_for("pow", "binary16")
    assert s.size == 2**32
    ins = s.inputs(0x3C00_0001, 2)
    assert ins["x"].dtype == np.uint16
    assert ins["x"].tolist() == [0x0001, 0x0002] and ins["y"].tolist() == [0x3C00, 0x3C00]
    assert sw.space_for("sin", "binary16").size == 2**16


@pytest.mark.parametrize("name, precision, words", [
    ("nosuch", "binary32", "unknown built-in"),
    ("ldexp", "binary32", "integer argument"),
    ("dot", "binary32", "geometric"),
    ("sin", "binary64", "2^64 inputs"),
    ("pow", "binary32", "2^64 inputs"),
    ("convert_int_sat(float)", "binary32", "conversion"),
    ("sin", "binary99", "unknown precision"),
])
def test_unsweepable_spaces_are_refused_in_one_line(name, precision, words):
    with pytest.raises(sw.SweepError) as e:
        sw.space_for(name, precision)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_sweep_kernel_takes_no_input_buffer():
    src = sweep_source(function("frexp"))
    assert "in_x" not in src and "const ulong base" in src
    assert "(((uint)(base + i)) >> 1) | (((uint)(base + i)) << 31)" in src
    assert "out_exp[i] = exp_v;" in src
    src16 = sweep_source(function("pow"), BINARY16)
    assert "as_half((ushort)((base + i) >> 16))" in src16


def test_range_units_tile_the_space_and_name_their_range():
    s = sw.space_for("sin", "binary16")
    plan = ranges.range_plan(s, 2**14, range(4))
    spans = sorted((r.start, r.count) for _, r in plan)
    assert [a for a, _ in spans] == list(range(0, s.size, 2**14 if len(spans) == 4 else
                                                ranges.RARE_UNIT))
    assert sum(c for _, c in spans) == s.size
    suffix, span = ranges.chunk_ranges(s, 1, 2**14)[0]
    unit = WorkUnit("fp-sin.binary16.w1-" + suffix, Target("sin", "binary16"), span)
    assert '"sweep"' in unit.recipe_json and unit.unit_id.endswith("sweep000001")
    assert unit.stored_seed == 2**14 and unit.size == 2**14


# --------------------------------------------------------------------------- checking
def _range(name: str, start: int, count: int, index: int = 0) -> WorkUnit:
    return WorkUnit(f"fp-{name}.binary32.w1-sweep{index:06d}", Target(name),
                    IndexRange(start, count))


def _check(tmp_path, unit, outputs):
    """Check range unit ``unit`` given its outputs, as a sweep's checking process does."""
    meta = {k: "test" for k, _ in store._DEVICE_FIELDS}
    return check_and_write(Landed(unit, 0.0, outputs), Claims(), meta, "sweep-test",
                           tmp_path)


def _correct_sin(x: np.ndarray) -> np.ndarray:
    """binary32 sin results within 0.5 ulp + a hair (float64 sin rounded)."""
    with np.errstate(invalid="ignore"):
        return np.sin(x.view(np.float32).astype(np.float64)).astype(np.float32).view(np.uint32)


def test_check_chunk_counts_planted_faults_and_finds_the_worst(tmp_path):
    space = sw.space_for("sin", "binary32")
    unit = _range("sin", 2 * 0x3F80_0000, 1 << 16)
    x = space.inputs(unit.source.start, unit.source.count)["x"]
    good = _correct_sin(x)
    res = _check(tmp_path, unit, {"ret": good})
    assert res.failures == 0 and res.inputs == 1 << 16
    assert res.max_ulp_error <= 0.5 + 2**-20
    bad = good.copy()
    planted = {100: 5, 2000: -7, 40000: 12}          # ulps off
    for i, k in planted.items():
        bad[i] = np.uint32(int(bad[i]) + k)
    res = _check(tmp_path, unit, {"ret": bad})
    assert res.failures == 3
    assert res.max_ulp_inputs == [int(x[40000])]
    assert 11.5 < res.max_ulp_error < 12.5
    rows = pq.read_table(tmp_path / "sweep-test" / f"{unit.unit_id}.parquet").to_pylist()
    assert sorted(r["element"] for r in rows) == sorted(planted)
    assert {r["rule_id"] for r in rows} == {"ulp.sin"}
    st = pq.read_table(tmp_path / "_stats" / "sweep-test" / f"{unit.unit_id}.parquet")
    assert st.column("failures")[0].as_py() == 3
    assert st.column("max_ulp_inputs")[0].as_py() == [int(x[40000])]


def test_a_systematic_failure_is_counted_in_full_but_recorded_in_part(tmp_path):
    # sinpi(+n) = +0 for positive integers n (CL.sinpi.positive_integer): every binary32
    # at or above 2^23 is an integer; a device returning -0 for all of them fails each.
    unit = _range("sinpi", 2 * 0x4B00_0000, 1 << 18, 1)
    out = np.full(unit.size, 0x8000_0000, np.uint32)
    res = _check(tmp_path, unit, {"ret": out})
    assert res.failures == 1 << 17          # the positive half; sinpi(-n) = -0 holds
    rows = pq.read_table(tmp_path / "sweep-test" / f"{unit.unit_id}.parquet")
    assert 0 < rows.num_rows < 1 << 18
    assert set(rows.column("rule_id").to_pylist()) == {"CL.sinpi.positive_integer"}


# --------------------------------------------------------------------------- on a device
pyopencl = pytest.importorskip("pyopencl", reason="pyopencl is not installed")
from fuzzfarm.device.sweep_kernel import run_chunk_on  # noqa: E402


@pytest.mark.device
@pytest.mark.parametrize("name, start", [("sin", 0x3F80_0000), ("frexp", 0x7F7F_0000),
                                         ("cospi", 0x4AFF_F000)])
def test_sweep_kernel_matches_the_buffer_kernel(name, start):
    from fuzzfarm.device.runner import DeviceRunner
    info = require_device()
    runner = DeviceRunner(info)
    space = sw.space_for(name, "binary32")
    n = 1 << 16
    outs = run_chunk_on(runner, space, start, n)
    ref = runner.run(space.fn, space.inputs(start, n), BINARY32)
    for o in space.fn.outputs:
        assert np.array_equal(outs[o.name], ref[o.name]), o.name


def test_the_plan_puts_the_units_of_rare_classes_first():
    """Zeros and subnormals (chunk 0), infinities and NaNs (chunk 255): the units whose
    host check is longest go first, the rest in order; a two-argument space as it is."""
    space = sw.space_for("exp", "binary32")
    order = [r.start >> 24 for _, r in ranges.range_plan(space, 1 << 24, range(256))]
    assert order == [0] * 16 + [255] * 16 + list(range(1, 255))
    part = [r.start >> 24 for _, r in ranges.range_plan(space, 1 << 24, [100, 101, 102, 255])]
    assert part == [255] * 16 + [100, 101, 102]         # a resumed sweep's chunks left
    two = sw.space_for("pow", "binary16")
    assert [r.start >> 24 for _, r in ranges.range_plan(two, 1 << 24, range(256))] == \
        list(range(256))


def test_chunks_of_rare_classes_are_swept_as_smaller_units_that_tile_them():
    space = sw.space_for("exp", "binary32")
    for i in (0, 255):          # zeros and subnormals; infinities and NaNs
        parts = ranges.chunk_ranges(space, i, 1 << 24)
        assert len(parts) == (1 << 24) // ranges.RARE_UNIT
        assert [r.start for _, r in parts] == list(range(i << 24, (i + 1) << 24,
                                                         ranges.RARE_UNIT))
        assert all(r.count == ranges.RARE_UNIT for _, r in parts)
        assert parts[3][0] == f"sweep{i:06d}-003"
    assert ranges.chunk_ranges(space, 1, 1 << 24) == [("sweep000001",
                                                       IndexRange(1 << 24, 1 << 24))]
    assert ranges.chunk_ranges(space, 0, ranges.RARE_UNIT) == [
        ("sweep000000", IndexRange(0, ranges.RARE_UNIT))]


def test_a_sweep_keeps_pandas_out_of_its_processes(tmp_path):
    """pyarrow imports pandas, where installed, at its first array (about a second): a
    sweep runs without it, and after the sweep the process is as it was.  A stand-in
    pandas package records being imported."""
    fake = tmp_path / "pandas"
    fake.mkdir()
    (fake / "__init__.py").write_text("import os\nopen(os.environ['MARK'], 'w').close()\n"
                                      "raise ImportError('stand-in')\n")
    code = ("import sys, importlib.util, pyarrow as pa\n"
            "from fuzzfarm.orchestrate.sweep import without_pandas\n"
            "if sys.argv[1] == 'blocked':\n"
            "    with without_pandas():\n"
            "        assert importlib.util.find_spec('pandas') is not None\n"
            "        pa.Table.from_pylist([{'a': 1}])\n"
            "    assert 'pandas' not in sys.modules\n"
            "    assert type(sys.meta_path[0]).__name__ != '_NoPandas'\n"
            "else:\n"
            "    pa.Table.from_pylist([{'a': 1}])\n")
    for mode, imported in (("blocked", False), ("plain", True)):
        mark = tmp_path / f"mark-{mode}"
        r = subprocess.run([sys.executable, "-c", code, mode], cwd=ROOT, capture_output=True,
                           text=True, env={**os.environ, "MARK": str(mark),
                                           "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"})
        assert r.returncode == 0, r.stderr
        assert mark.exists() is imported, mode


def test_a_check_pool_outlives_the_executors_it_serves(tmp_path):
    from fuzzfarm.orchestrate.pipeline import CheckPool, LocalExecutor
    pool = CheckPool(2, 4, 1 << 16)
    try:
        assert pool.fits(2, 4, 1 << 16) and not pool.fits(3, 4, 1 << 16)
        assert not pool.fits(2, 5, 1 << 16) and not pool.fits(2, 4, (1 << 16) + 1)
        with pytest.raises(ValueError, match="cannot take 2 workers and 5 slots"):
            LocalExecutor(2, 5, 1 << 10, 1 << 8, tmp_path, "r", None, pool=pool)
        for _ in range(2):
            ex = LocalExecutor(2, 3, 1 << 10, 1 << 8, tmp_path, "r", None, pool=pool)
            assert [s.index for s in ex.slots] == [0, 1, 2]
            ex.close()                      # the pool's processes still take work
            assert pool.pool.apply(os.getpid) != os.getpid()
    finally:
        pool.close()


@pytest.mark.device
def test_sweep_resumes_by_chunk_without_repeating_one(tmp_path):
    info = require_device()
    space = sw.space_for("exp2", "binary32")
    opts = sw.SweepOptions(space, info, tmp_path, 1 << 16, workers=2, limit=3)
    m1 = sw.sweep(opts)
    assert m1["status"] == "partial" and m1["chunks_done"] == 3
    assert list(m1["phase_seconds"]) == ["pool", "context", "units", "join", "compact",
                                         "summarize"]
    assert m1["inputs"] == 3 << 16
    opts.limit = 2
    m2 = sw.sweep(opts)
    assert m2["chunks_done"] == 5 and m2["inputs"] == 5 << 16
    # each chunk's stats row once (the files are compacted at the end of each session)
    ids = sorted(store.read_stats(tmp_path, m2["run_id"]).column("unit_id").to_pylist())
    assert [i[-6:] for i in ids] == [f"{k:06d}" for k in range(5)]
    # chunks 0-4 are ±0 and the subnormals of both signs: exp2 of them is 1 (or near)
    assert m2["failures"] == 0
    with pytest.raises(sw.SweepError, match="--chunk-bits 16"):
        sw.resume_state(sw.SweepOptions(space, info, tmp_path, 1 << 17))


def test_a_sweep_resumes_inside_a_chunk_swept_as_smaller_units(tmp_path):
    """A chunk swept as RARE_UNIT-input units, stopped between two of them, resumes at
    the next; a chunk recorded whole (an earlier, unsplit session) is not redone; a
    limit counts chunks, each with all its units."""
    space = sw.space_for("exp2", "binary32")
    info = types.SimpleNamespace(fingerprint="f00d", to_dict=dict)
    opts = sw.SweepOptions(space, info, tmp_path, ranges.RARE_UNIT * 4, workers=1)
    run_id, _, todo = sw.resume_state(opts)
    assert [s[-10:] for s, _ in todo[:5]] == [
        "000000-000", "000000-001", "000000-002", "000000-003", "000001-000"]
    prefix = sw.unit_prefix("f00d", space)

    def done(unit_id):
        row = {f.name: None for f in store.STATS_SCHEMA}
        row.update(run_id=run_id, unit_id=unit_id)
        store.write_stats(tmp_path, run_id, unit_id, row)
    done(f"{prefix}-{todo[0][0]}")
    done(f"{prefix}-{todo[1][0]}")
    done(f"{prefix}-sweep000001")                                       # chunk 1, whole
    _, _, left = sw.resume_state(opts)
    assert [s[-10:] for s, _ in left[:3]] == ["000000-002", "000000-003", "000002-000"]
    assert len(left) == len(todo) - 2 - 4


@pytest.mark.device
@pytest.mark.parametrize("args, words", [
    (["sweep", "ldexp"], "integer argument"),
    (["sweep", "sin", "-p", "binary64"], "2^64"),
    (["sweep", "nosuch"], "unknown built-in"),
    (["sweep", "sin", "--device", "nosuchdevice"], "nosuchdevice"),
])
def test_sweep_cli_bad_input_is_one_line_and_exit_2(args, words, tmp_path):
    from fuzzfarm.cli import main
    r = CliRunner().invoke(main, args + ["--out", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert words in r.output and len(r.output.strip().splitlines()) == 1


@pytest.mark.device
def test_sigint_keeps_every_finished_chunk_whole(tmp_path):
    device = selector(require_device())
    def cmd(chunks):    # 2^16 chunks of 2^16: not over before the signal on any device
        return [sys.executable, "-m", "fuzzfarm", "sweep", "sin", "--chunk-bits", "16",
                "--chunks", str(chunks), "--out", str(tmp_path), "-j", "2", "--device", device]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    p = subprocess.Popen(cmd(1 << 16), cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    stats = tmp_path / "_stats"
    deadline = time.time() + 120
    while time.time() < deadline and not list(stats.glob("*/*.parquet")) \
            and p.poll() is None:
        time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err.decode()[-2000:]
    # every finished chunk once (its stats row; the files may be compacted into one)
    done = store.read_stats(tmp_path).column("unit_id").to_pylist()
    assert 1 <= len(done) < 1 << 16 and len(set(done)) == len(done)
    assert not [f for f in tmp_path.rglob(".tmp-*")]
    assert not [f for f in tmp_path.rglob(".compact-*")]
    # resuming does the rest of what was asked, and nothing twice
    r = subprocess.run(cmd(2), cwd=ROOT, env=env, capture_output=True)
    assert r.returncode in (0, 1), r.stderr.decode()[-2000:]
    again = store.read_stats(tmp_path).column("unit_id").to_pylist()
    assert len(again) == len(set(again)) == len(done) + 2 and set(done) <= set(again)


@pytest.mark.exhaustive
@pytest.mark.device
@pytest.mark.parametrize("name", ["sinpi"])
def test_full_binary32_sweep(tmp_path, name):
    info = require_device()
    m = sw.sweep(sw.SweepOptions(sw.space_for(name, "binary32"), info, tmp_path))
    assert m["status"] == "completed" and m["inputs"] == 2**32
    assert m["screened"] + m["exact"] + m["unjudged"] <= 2**32
    assert m["max_ulp_error"] is not None


def test_screen_proven_failures_beyond_the_cap_are_counted_after_an_exact_probe(tmp_path):
    # every result 8 ulp off (bound 4): the screen proves each failure; the first 1,000
    # are judged and recorded exactly, the rest counted once those confirm them
    space = sw.space_for("sin", "binary32")
    unit = _range("sin", 2 * 0x3F00_0000, 1 << 19, 2)
    x = space.inputs(unit.source.start, unit.source.count)["x"]
    bad = (_correct_sin(x).astype(np.int64) + 8).astype(np.uint32)
    res = _check(tmp_path, unit, {"ret": bad})
    assert res.failures == 1 << 19
    rows = pq.read_table(tmp_path / "sweep-test" / f"{unit.unit_id}.parquet")
    # a bounded sample per input class, standing for every failure
    from fuzzfarm.store.samples import SAMPLE_ROWS
    assert set(rows.column("input_class").to_pylist()) == {"x:pos_normal", "x:neg_normal"}
    assert rows.num_rows == 2 * SAMPLE_ROWS
    assert sum(rows.column("count").to_pylist()) == 1 << 19
    assert set(rows.column("rule_id").to_pylist()) == {"ulp.sin"}
    assert all(7.4 < e < 8.6 for e in rows.column("ulp_error").to_pylist())
    st = pq.read_table(tmp_path / "_stats" / "sweep-test" / f"{unit.unit_id}.parquet")
    assert st.column("exact")[0].as_py() < 1100       # the probe, not the whole chunk
    assert 7.4 < res.max_ulp_error < 8.6


def test_the_slot_pool_is_bounded_whatever_the_cores():
    space = sw.space_for("sincos", "binary32")          # two outputs: 8 bytes per input
    opts = sw.SweepOptions(space, None, Path("."), 1 << 26, workers=512)
    assert opts.slots * (1 << 26) * 8 <= sw.SLOT_MEMORY
    assert opts.slots >= 2
    assert sw.SweepOptions(space, None, Path("."), 1 << 16, workers=4).slots == 6


@pytest.mark.device
def test_a_sweep_kernel_that_does_not_build_is_a_recorded_device_fault(tmp_path):
    """The driver's compiler rejects the sweep kernel (planted #error): the sweep ends
    with exit 1 and one line, and the fault is a finding with the build log and source."""
    import json

    from fuzzfarm.cli import main
    res = CliRunner().invoke(main, ["sweep", "sinpi", "-d", selector(), "-o", str(tmp_path),
                                    "--chunks", "1", "-j", "1"],
                             env={"FUZZFARM_PLANT_FAULTS": json.dumps({"build": ["sinpi"]})})
    assert res.exit_code == 1, res.output
    # stdout is no terminal here: the line log's event, one line
    (fault,) = [ln for ln in res.output.splitlines() if " device_fault " in ln]
    assert "rule_id=device.build_failure" in fault and "Traceback" not in res.output
    rows = store.read_findings(tmp_path).to_pylist()
    assert [r["rule_id"] for r in rows] == ["device.build_failure"]
    detail = json.loads(rows[0]["fault_detail"])
    assert "planted build failure" in detail["build_log"] and "sinpi(" in detail["kernel_source"]
    assert detail["error_code"] == -11


@pytest.mark.parametrize("fmt_name", ["binary16", "binary32"])
def test_class_counts_from_the_numbering_equal_the_counted_ones(fmt_name):
    """A sweep chunk's input classes come from its index range alone; they equal
    strategies.input_class_counts over the chunk's actual inputs, at every class
    boundary (zero, subnormal, normal, infinity, signaling and quiet NaNs), for odd and
    even starts and lengths."""
    from strategies import input_class_counts
    space = sw.space_for("sin", fmt_name)
    f = space.fmt
    edges = [0, 1, 2, f.min_normal, f.pos_inf, f.pos_inf + 1, f.pos_inf | f.quiet_bit,
             f.abs_mask]
    rng = np.random.default_rng(7)
    cases = [(2 * e + d, n) for e in edges for d in (-3, -1, 0, 1, 2)
             for n in (1, 2, 5, 64)] + [(int(s), int(n)) for s, n in
                                       zip(rng.integers(0, space.size - 5000, 40),
                                           rng.integers(1, 5000, 40))]
    cases.append((0, space.size if f.bits == 16 else 1 << 20))
    for start, count in cases:
        start = max(0, min(start, space.size - 1))
        count = min(count, space.size - start)
        want = input_class_counts(space.inputs(start, count), space.fn, f)
        assert space.class_counts(start, count) == want, (start, count)
    if fmt_name == "binary16":           # two arguments: counted from the data
        assert sw.space_for("atan2", fmt_name).class_counts(0, 10) is None


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_the_default_workers_are_the_cores_the_process_may_run_on():
    """A sweep pinned to one core (taskset, a container's cpuset) starts one checking
    process, not one per core of the machine."""
    code = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "from fuzzfarm.orchestrate.sweep import default_workers; print(default_workers())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.strip() == "1"
    assert sw.default_workers() == len(os.sched_getaffinity(0))
