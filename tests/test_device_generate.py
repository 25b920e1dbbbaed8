"""Inputs made on the device (fuzzfarm.device.generate): the generator kernel gives the
numpy sampler's patterns bit for bit, for every class variant, exponent window and NaN
payload; its class tallies are the host's; a unit made on the device gets the verdicts
of the same unit made on the host, and inputs the device got wrong are a device fault,
never a verdict; units it does not make are refused by name.

Device tests run on the test device (tests/devices.py; PyPI's PoCL is enough)."""
from __future__ import annotations

import numpy as np
import pytest

from devices import require_device
from edgecases import catalogue
from fuzzfarm.device import generate as gen
from fuzzfarm.formats import BINARY32, BINARY64
from dataclasses import replace
import pickle

from fuzzfarm.work.make import make_inputs, make_unit
from strategies import FLOAT_CLASSES, NAN_PAYLOADS, Recipe, Stream, class_tally, expand
from strategies._internal.classes import FLOAT_DEFS, Params
from strategies._internal.distinct import realize


# --------------------------------------------------------------------------- pure
def test_every_large_float_variant_has_a_builder_and_every_other_a_table():
    from strategies._internal.distinct import TABLE_LIMIT, variant_size
    blob, offsets = gen._tables(BINARY32)
    for cdef in FLOAT_DEFS:
        for v in cdef.variants:
            key = (v.cls, v.name)
            if variant_size(v, BINARY32, Params()) > TABLE_LIMIT:
                assert key in gen._builders(BINARY32), key
            else:
                assert key in offsets or key in gen._builders(BINARY32), key
    assert blob.dtype == np.uint64


def test_realize_at_gives_the_rows_realize_gives():
    """Random access into a plan: shuffled, whole small classes, spills and (binary16,
    more rows than patterns) repeats."""
    from strategies import expand_plans
    from strategies._internal.distinct import realize_at
    from fuzzfarm.formats import BINARY16
    rng = np.random.default_rng(3)
    for fmt, n, weights in ((BINARY32, 5000, {"zero": 1.0, "normal": 1.0}),
                            (BINARY32, 1, {"boundary": 1.0}),
                            (BINARY32, 40_000, {"subnormal": 2.0, "qnan": 1.0, "integer": 1.0}),
                            (BINARY16, 70_000, {"normal": 1.0}),
                            (BINARY16, 140_000, {"zero": 1.0})):
        recipe = Recipe(float_weights=weights, seed=int(rng.integers(1 << 40)))
        lane = expand_plans(recipe, catalogue.function("sin"), n, fmt, 1,
                            Stream(recipe.seed))[0][0]
        params = Params(recipe.exponent_window, recipe.nan_payload)
        full = realize(lane, fmt, params)
        rows = rng.integers(0, n, size=min(n, 700))
        np.testing.assert_array_equal(realize_at(lane, rows, fmt, params), full[rows])
        assert lane.repeat == (n == 140_000)      # 2 zeros + 2**16 patterns: repeated


@pytest.mark.parametrize("target", [("sin", "binary16", 1), ("sin", "binary32", 4),
                                    ("sin", "binary64", 2), ("atan2", "binary32", 2),
                                    ("ldexp", "binary32", 2), ("pown", "binary64", 1),
                                    ("nan", "binary32", 1),
                                    ("convert_int_sat_rte(float)", "binary32", 1),
                                    ("normalize", "binary32", 4)])
def test_units_the_device_does_not_make_are_refused(target):
    unit = make_unit("d", target, 3, 1, 0, 1, size=256)
    with pytest.raises(gen.NotOnDevice):
        gen.unit_plan(unit.target, unit.source)


def test_a_target_the_session_makes_on_the_host_gets_no_more_plans():
    """Once the device actor reports that its session does not make a target's inputs
    (``made_on_host``), the makers make that target's later units on the host (no plan
    to redo on the actor); other targets still get plans, and none where the run makes
    every input on the host."""
    from fuzzfarm.orchestrate.pipeline import LocalMaker, Maker
    from fuzzfarm.orchestrate.scheduler import Ticket
    from fuzzfarm.work.session import is_device_plan
    sin, cos = (make_unit("t", (f, "binary32", 1), 1, 5, 0, 1, size=4096)
                for f in ("sin", "cos"))
    maker = LocalMaker(on_device=True)
    assert isinstance(maker, Maker) and maker.first_ready([Ticket(cos, "p", 0, 2)]) == 0
    assert is_device_plan(maker.finish(Ticket(sin, "p", 0, 1))[1])
    maker.made_on_host(sin)
    assert not maker.on_device_for(sin) and maker.on_device_for(cos)
    assert isinstance(maker.finish(Ticket(sin, "p", 0, 1))[1], dict)
    assert is_device_plan(maker.finish(Ticket(cos, "p", 0, 1))[1])
    assert not LocalMaker(on_device=False).on_device_for(cos)


def test_special_value_and_version_1_units_are_refused():
    from fuzzfarm.work.session import prepare_inputs
    special = make_unit("d", ("sin", "binary32", 1), 0, 1, 0, 1)
    assert isinstance(prepare_inputs(special, on_device=True)[1], dict)   # made on the host
    unit = make_unit("d", ("sin", "binary32", 1), 3, 1, 0, 1, size=256)
    old = replace(unit.source, recipes=tuple({**r, "version": 1} for r in unit.recipes))
    with pytest.raises(gen.NotOnDevice):
        gen.unit_plan(unit.target, old)


def test_a_unit_plan_covers_its_rows_once():
    unit = make_unit("d", ("sinpi", "binary32", 1), 5, 2, 0, 1, size=10_000)
    plan = gen.unit_plan(unit.target, unit.source)
    (parts,) = plan.columns
    assert plan.names == ("x",) and plan.ties == ()
    assert plan.n == 10_000 == sum(p.n for p in parts)
    assert [p.offset for p in parts] == list(np.cumsum([0] + [p.n for p in parts])[:-1])
    for p in parts:
        assert p.segments[-1, 0] == p.n          # the last segment ends at the part's end


# --------------------------------------------------------------------------- device
def _made(fmt):
    """(runner, generator, run(plan) -> (patterns, the device's generate.tally)) for
    ``fmt``."""
    pytest.importorskip("pyopencl")
    import pyopencl as cl

    from fuzzfarm.device.runner import DeviceRunner, KernelBuildError
    runner = DeviceRunner(require_device())
    try:
        g = gen.DeviceGenerator(runner, fmt)
    except KernelBuildError as exc:     # binary64's tally: cl_khr_int64_base_atomics
        pytest.skip(f"this device does not build the {fmt.name} generator: {str(exc)[:200]}")
    size = fmt.bits // 8

    def run(plan):
        """(x's patterns, or {argument: patterns} for several, the device's tally)"""
        bufs = [cl.Buffer(runner.context, cl.mem_flags.READ_WRITE, size=size * max(1, plan.n))
                for _ in plan.names]
        _, ev, counts = g.enqueue(runner.queue, plan, bufs)
        ev.wait()
        out = {}
        for name, kind, buf in zip(plan.names, plan.kinds or ("float",), bufs):
            out[name] = np.empty(plan.n, fmt.uint if kind == "float" else np.int32)
            cl.enqueue_copy(runner.queue, out[name], buf)
            buf.release()
        return (out["x"] if len(out) == 1 else out), gen.tally(counts, plan.names, plan.kinds)
    return runner, g, run


@pytest.fixture(scope="module")
def made():
    return _made(BINARY32)


@pytest.fixture(scope="module")
def made64():
    return _made(BINARY64)


def _one_lane(recipe: Recipe, n: int, fmt=BINARY32):
    """(device plan of ``recipe``'s n values of sin's x in ``fmt``, the numpy values)."""
    fn = catalogue.function("sin")
    from strategies import expand_plans
    lane = expand_plans(recipe, fn, n, fmt, 1, Stream(recipe.seed))[0][0]
    params = Params(recipe.exponent_window, recipe.nan_payload)
    shuffle = None if lane.shuffle is None else (gen._bits_for(n), *lane.shuffle)
    plan = gen.UnitPlan(n, ("x",), ((gen.PartPlan(0, n, gen.encode(lane, fmt, params), shuffle),),))
    return plan, realize(lane, fmt, params)


@pytest.mark.device
@pytest.mark.parametrize("fmt", [BINARY32, BINARY64], ids=lambda f: f.name)
@pytest.mark.parametrize("cls", FLOAT_CLASSES)
def test_every_class_is_made_on_the_device_as_numpy_makes_it(request, fmt, cls):
    """One class at a time, small batches (whole small variants taken in order) and large
    ones (keyed bijections, cycle walks, spills into random_bits), in binary32 and binary64
    (64-bit patterns and the tally's 64-bit hash set: its distinct counts those of
    strategies.class_tally)."""
    _, _, run = request.getfixturevalue("made64" if fmt is BINARY64 else "made")
    for seed, n in ((1, 1), (2, 37), (3, 5000), (4, 70_000)):
        recipe = Recipe(float_weights={cls: 1.0}, seed=seed)
        plan, want = _one_lane(recipe, n, fmt)
        got, tally = run(plan)
        assert got.dtype == fmt.uint
        np.testing.assert_array_equal(got, want, err_msg=f"{cls} n={n}")
        assert tally == class_tally({"x": want}, catalogue.function("sin"), fmt)


@pytest.mark.device
@pytest.mark.parametrize("payload", NAN_PAYLOADS)
def test_exponent_windows_and_nan_payloads(made, payload):
    _, _, run = made
    for seed, window in ((5, None), (6, (-3, 4)), (7, (100, 127)), (8, (-126, -120))):
        recipe = Recipe(float_weights={"normal": 2.0, "qnan": 1.0, "snan": 1.0, "integer": 1.0},
                        exponent_window=window, nan_payload=payload, seed=seed)
        plan, want = _one_lane(recipe, 20_000)
        got, tally = run(plan)
        np.testing.assert_array_equal(got, want)
        assert tally == class_tally({"x": want}, catalogue.function("sin"), BINARY32)


@pytest.mark.device
@pytest.mark.parametrize("name", ["sin", "sinpi", "exp", "fract", "tanpi"])
def test_drawn_units_match_make_inputs_with_their_parts(made, name):
    """Whole units: several recipes sharing one Stream (no member taken twice across
    parts), as fuzzfarm run draws them."""
    _, _, run = made
    for serial in (1, 2, 3):
        unit = make_unit("d", (name, "binary32", 1), serial, 9, 0, 1, size=(1 << 15) + serial)
        plan = gen.unit_plan(unit.target, unit.source)
        want = make_inputs(unit)["x"]
        got, tally = run(plan)
        np.testing.assert_array_equal(got, want)
        assert tally == class_tally({"x": want}, catalogue.function("sin"), BINARY32)
        # the refactored numpy path is still expand's
        fn = catalogue.function(name)
        r0 = Recipe.from_dict({k: v for k, v in unit.recipes[0].items() if k != "n"})
        np.testing.assert_array_equal(
            want[:unit.recipes[0]["n"]],
            expand(r0, fn, unit.recipes[0]["n"], BINARY32, stream=Stream(unit.source.seed))["x"])


#: built-ins of two and three float arguments, both formats, and of an int argument
SEVERAL = ["atan2", "fmin", "fma", "nextafter", "hypot/binary64", "fma/binary64",
           "copysign/binary64", "pown", "rootn", "ldexp"]


@pytest.mark.device
@pytest.mark.parametrize("name", SEVERAL)
def test_units_of_several_arguments_are_made_on_the_device_as_the_host_makes_them(request, name):
    """Every argument made from its own plan, the later ones tied to the first where the
    recipe ties (version 3: strategies.tie_masks, on the device by fuzzfarm_ties), the
    tallies (classes per argument, distinct rows by fuzzfarm_tally_rows) the host's, and
    ``inputs_at`` gives any row's arguments alone."""
    name, _, precision = name.partition("/")
    _, _, run = request.getfixturevalue("made64" if precision else "made")
    precision = precision or "binary32"
    tied = 0
    ties_possible = sum(a.kind == "float" for a in catalogue.function(name).inputs) > 1
    for serial in range(1, 7):
        unit = make_unit("d", (name, precision, 1), serial, 9, 0, 1, size=(1 << 14) + serial)
        plan = gen.unit_plan(unit.target, unit.source)
        want = make_inputs(unit)
        got, tally = run(plan)
        assert plan.names == tuple(want) and len(plan.names) > 1
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])
        assert tally == class_tally(want, unit.target.fn, unit.target.fmt)
        rows = np.random.default_rng(serial).integers(0, plan.n, 300)
        at = gen.inputs_at(unit.target, unit.source, rows)
        for k in want:
            np.testing.assert_array_equal(at[k], want[k][rows])
        tied += bool(plan.ties)
        if plan.ties:       # some rows tie: the later arguments equal +-x there
            x = want[plan.names[0]]
            expected = sum(r["n"] * r["tie_rate"] for r in unit.recipes)
            for k in plan.names[1:]:
                assert ((want[k] == x) | (want[k] == x ^ unit.target.fmt.uint(
                    unit.target.fmt.sign_mask))).sum() > 0.8 * expected
    assert tied or not ties_possible, "no unit of these seeds ties: choose others"


def test_version_2_units_that_tie_are_made_on_the_host():
    """A stored version-2 recipe ties by numpy's generator over the whole part: the
    device does not make it (the host does, as it always did); untied ones it makes."""
    unit = make_unit("d", ("atan2", "binary32", 1), 3, 9, 0, 1, size=4096)
    recipes = tuple({**r, "version": 2, "tie_rate": 0.5} for r in unit.recipes)
    with pytest.raises(gen.NotOnDevice, match="version-2"):
        gen.unit_plan(unit.target, replace(unit.source, recipes=recipes))
    untied = tuple({**r, "version": 2, "tie_rate": 0.0} for r in unit.recipes)
    assert gen.unit_plan(unit.target, replace(unit.source, recipes=untied)).ties == ()


@pytest.mark.parametrize("name", ["ilogb", "frexp", "remquo", "ldexp", "pown", "rootn"])
def test_binary64_units_of_an_int_column_are_made_on_the_host(name):
    """An int column beside binary64 patterns (ilogb's result, frexp's and remquo's second
    output, ldexp's, pown's and rootn's argument) is not gathered: those units are made on
    the host, whose screens still judge them; binary32's and modf's are made on the
    device."""
    from fuzzfarm.target import Target
    from fuzzfarm.work.kinds import kind_of
    for precision, on_device in (("binary64", False), ("binary32", True)):
        unit = make_unit("d", (name, precision, 1), 3, 9, 0, 1, size=4096)
        plan = kind_of(unit.target).device_plan(unit.target, unit.source)
        assert (plan is not None) == on_device, (name, precision)
    unit = make_unit("d", ("modf", "binary64", 1), 3, 9, 0, 1, size=4096)
    assert kind_of(Target.of(("modf", "binary64", 1))).device_plan(
        unit.target, unit.source) is not None


@pytest.mark.device
@pytest.mark.parametrize("columns", [2, 3])
def test_the_row_tally_counts_rows_not_arguments(made, columns):
    """Known bad for the distinct rows: rows repeated whole, rows equal in one argument
    and not another (distinct), the all-ones pattern and zeros: the count is
    class_tally's, exact (the set compares the rows themselves)."""
    import pyopencl as cl
    runner, g, _ = made
    rng = np.random.default_rng(columns)
    n = 6000
    cols = [rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
            for _ in range(columns)]
    for c in cols:
        c[100:200] = c[0:100]                   # 100 rows repeated whole
        c[700] = c[701] = np.uint32(0xFFFFFFFF)
    cols[1][300:400] = cols[1][0:100]           # equal y, another x: new rows
    cols[0][500:520] = 0                        # equal x, other y: new rows
    mf = cl.mem_flags
    bufs = [cl.Buffer(runner.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=c)
            for c in cols]
    counts = np.zeros(1, np.uint32)
    cbuf = cl.Buffer(runner.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=counts)
    g.enqueue_rows(runner.queue, bufs, n, cbuf, 0)
    cl.enqueue_copy(runner.queue, counts, cbuf)
    fn = catalogue.function("fma" if columns == 3 else "atan2")
    want = class_tally(dict(zip([a.name for a in fn.inputs], cols)), fn, BINARY32)[2]
    assert int(counts[0]) == want == n - 101


# --------------------------------------------------------------------------- the run path
def _screen(made, name, chunk=1 << 18):
    from fuzzfarm.oracle import device_screen as ds
    from fuzzfarm.verdict.claims import Claims
    runner = made[0]
    if not runner.info.has_fp64:
        pytest.skip("the device screen needs cl_khr_fp64")
    claims = Claims.by_precision(runner.info, runner.device_constants(), "")["binary32"]
    from fuzzfarm.device.runner import KernelBuildError
    try:
        screen, why = ds.screen_for(runner, name, "binary32", claims, chunk)
    except KernelBuildError as exc:     # Oclgrind: sinpi's kernels cannot be created
        pytest.skip(f"this device has no screen of {name}: {str(exc)[:200]}")
    assert screen is not None, why
    return screen, claims


def _session(made):
    """A DeviceSession on the test device (what a device actor runs units through)."""
    from fuzzfarm.work.session import DeviceSession
    runner = made[0]
    if not runner.info.has_fp64:
        pytest.skip("the device screen needs cl_khr_fp64")
    return DeviceSession(runner.info)


def _landed(session, unit, inputs, every_row=False):
    """``unit`` launched and landed on ``session``, its arrays copied out of the
    launch's memory (as an executor moves them on)."""
    launch = session.launch(unit, inputs)
    try:
        return pickle.loads(pickle.dumps(session.land(launch, every_row=every_row)))
    finally:
        launch.release()


def _both_ways(made, name, serial=2, size=(1 << 17) + 5, precision="binary32"):
    """The unit launched with host inputs, and twice with inputs made on the device, all
    screened: (unit, claims, the host run's Landed, the marked rows' Landed, every row's
    Landed)."""
    from fuzzfarm.device.runner import KernelBuildError
    session = _session(made)
    unit = make_unit("d", (name, precision, 1), serial, 21, 0, 1, size=size)
    plan = gen.unit_plan(unit.target, unit.source)
    try:
        if not session.makes(unit, plan):
            pytest.skip(f"this device does not screen {name}")
    except KernelBuildError as exc:     # Oclgrind: sinpi's kernels cannot be created
        pytest.skip(f"this device has no screen of {name}: {str(exc)[:200]}")
    a = _landed(session, unit, make_inputs(unit))
    assert a.answer is not None
    marked = _landed(session, unit, plan)
    every = _landed(session, unit, plan, every_row=True)
    return unit, session.claims(unit), a, marked, every


@pytest.mark.device
@pytest.mark.parametrize("name", ["sin", "sinpi", "tanpi", "log", "ilogb", "floor", "half_exp",
                                  "sin/binary64", "floor/binary64", "sqrt/binary64",
                                  "atan2", "fmin", "fma", "pow", "hypot/binary64",
                                  "fmod/binary64", "mad/binary64", "pown", "ldexp",
                                  "frexp", "modf", "fract", "remquo", "modf/binary64",
                                  "fract/binary64", "pow/binary64", "sincos",
                                  "sincos/binary64"])
def test_a_unit_made_on_the_device_gets_the_verdicts_of_one_made_on_the_host(made, name):
    """fuzzfarm.work.units.check_made_unit, with only the rows the verdict reads gathered
    on the device (as the device actor hands them over) and with every row, against
    check_unit on host inputs: the same outputs, answers, failures per rule, finding rows
    and stats (binary32, and binary64: its 64-bit patterns made, gathered and tallied;
    built-ins of two and three arguments: every argument made, tied and gathered; of two
    outputs: the second gathered too)."""
    from fuzzfarm.verdict.screened import SparseOutputs
    from fuzzfarm.work.check import check_landed, check_made
    name, _, precision = name.partition("/")
    unit, claims, a, marked, every = _both_ways(made, name,
                                                precision=precision or "binary32")
    host = make_inputs(unit)
    out_a = a.outputs
    n = len(next(iter(host.values())))
    for k in host:
        np.testing.assert_array_equal(every.made.inputs[k], host[k])
    for k in out_a:
        np.testing.assert_array_equal(out_a[k], every.made.outputs[k])
    for f in a.answer._fields:
        for got in (marked.answer, every.answer):
            if f.startswith("agg_c") and getattr(got, f).size == 0:    # none counted
                assert not a.answer.agg.any() and not getattr(a.answer, f).any()
                continue
            np.testing.assert_array_equal(getattr(a.answer, f), getattr(got, f))
    assert marked.made.marked and not every.made.marked
    pos = SparseOutputs.positions(a.answer, n)
    # floor: every input passed bit for bit, nothing (not even a largest error) to read
    assert (0 < pos.size or name == "floor") and pos.size < n and marked.made.count == pos.size
    for k in host:
        np.testing.assert_array_equal(marked.made.inputs[k], host[k][pos])
    for k in out_a:
        np.testing.assert_array_equal(marked.made.outputs[k], out_a[k][pos])
    ta, sa, ra = check_landed(a, claims, {}, "r")
    tb, sb, rb = check_made(marked, claims, {}, "r")
    td, sd, rd = check_made(every, claims, {}, "r")
    assert td.drop_columns(["time"]).equals(tb.drop_columns(["time"]))
    assert rd.counts_by_rule("fail") == rb.counts_by_rule("fail")
    assert (ra.n, ra.screened, ra.exact) == (rb.n, rb.screened, rb.exact)
    assert ra.counts_by_rule("fail") == rb.counts_by_rule("fail")
    assert ta.drop_columns(["time"]).equals(tb.drop_columns(["time"]))
    for key in ("inputs_by_class", "distinct_by_class", "distinct_inputs", "failures",
                "failures_by_rule", "max_ulp_error", "max_ulp_inputs", "ulp_histogram"):
        assert sa.get(key) == sb.get(key), key


@pytest.mark.device
def test_a_unit_made_and_judged_on_the_device_reports_itself_resident(made, tmp_path):
    """UnitReport.resident (the scheduler sizes such a target's units by the device's
    memory, work.make.UnitSizer): a unit made and screened on the device, not one of host
    inputs nor one judged on the host."""
    from dataclasses import replace
    from fuzzfarm.work.check import check_and_write
    unit, claims, a, marked, _ = _both_ways(made, "sin")
    reports = [check_and_write(landed, claims, {}, "r", tmp_path / k)
               for k, landed in (("host", a), ("made", marked))]
    assert [r.resident for r in reports] == [False, True]
    assert [r.inputs for r in reports] == [unit.size] * 2
    assert not check_and_write(replace(a, answer=None), claims, {}, "r",
                               tmp_path / "judged").resident


@pytest.mark.device
def test_an_input_the_device_made_wrong_is_a_device_fault_not_a_verdict(made):
    """Known bad: one input the verdict reads and the host makes again (verified_rows: a
    sample of the rows read, and every finding's) changed in the device's copy (as a
    device whose integer arithmetic is wrong would make it): InputsDisagree naming the row
    and both patterns, recorded as the integer_arithmetic device fault."""
    from fuzzfarm.verdict.screened import SparseOutputs
    from fuzzfarm.work.check import VERIFIED_ROWS, InputsDisagree, check_made, verified_rows
    from fuzzfarm.work.rows import fault_rows
    unit, claims, _, made_, _ = _both_ways(made, "sinpi", size=1 << 18)
    pos = SparseOutputs.positions(made_.answer, made_.made.n)
    sample = verified_rows(unit, pos, [])
    # a sample of the rows read where there are more of them (PoCL here), else every one
    # (NVIDIA's sinpi, where the device screen leaves a unit one row or a few)
    assert sample.size == min(pos.size, VERIFIED_ROWS) and np.isin(sample, pos).all()
    i = int(np.searchsorted(pos, sample[sample.size // 2]))
    row = int(pos[i])
    made_.made.inputs["x"][i] ^= np.uint32(1)
    bad = {row: int(made_.made.inputs["x"][i])}
    with pytest.raises(InputsDisagree) as err:
        check_made(made_, claims, {}, "r")
    detail = err.value.detail()
    assert f"row {row}: device {bad[row]:#010x}, host {bad[row] ^ 1:#010x}" in detail["error"]
    finding, stats = fault_rows(unit, {}, "r", "integer_arithmetic", detail)
    assert finding["rule_id"] == "device.integer_arithmetic"
    assert finding["severity"] == "fault" and stats["inputs_tested"] == 0


@pytest.mark.device
@pytest.mark.parametrize("name,argument", [("atan2", "y"), ("fma", "c"), ("pown", "y")])
def test_a_later_argument_the_device_made_wrong_is_a_device_fault(made, name, argument):
    """Known bad: one row of a later argument changed in the device's copy (its tie or
    its own pattern): InputsDisagree naming the argument, not a verdict."""
    from fuzzfarm.verdict.screened import SparseOutputs
    from fuzzfarm.work.check import InputsDisagree, check_made, verified_rows
    unit, claims, _, made_, _ = _both_ways(made, name, size=1 << 16)
    check_made(made_, claims, {}, "r")                                # known good
    pos = SparseOutputs.positions(made_.answer, made_.made.n)
    sample = verified_rows(unit, pos, [])
    i = int(np.searchsorted(pos, sample[0]))
    made_.made.inputs[argument][i] ^= 1
    with pytest.raises(InputsDisagree) as err:
        check_made(made_, claims, {}, "r")
    bits = int(made_.made.inputs[argument][i]) & 0xFFFFFFFF    # an int shown as its pattern
    assert (f"row {int(pos[i])} ({argument}): device {bits:#010x}, host {bits ^ 1:#010x}"
            in err.value.detail()["error"])


@pytest.mark.device
def test_a_finding_on_an_input_the_device_made_wrong_is_a_device_fault(made):
    """Known bad: the row of a finding is always made again on the host, wherever the
    sample falls: one changed in the device's copy is InputsDisagree, not a finding."""
    from fuzzfarm.work.check import InputsDisagree, check_made, verified_rows
    unit, claims, _, made_, _ = _both_ways(made, "sinpi", size=1 << 18)
    _, _, res = check_made(made_, claims, {}, "r")                     # known good
    from fuzzfarm.verdict.screened import SparseOutputs
    pos = SparseOutputs.positions(made_.answer, made_.made.n)
    sample = set(verified_rows(unit, pos, []).tolist())
    rows = [f.index for f in res.findings if f.index not in sample]
    if not rows:
        pytest.skip("this device's sinpi has no finding outside the sample")
    # a result the device got wrong, now on another input: the host must not judge it
    i = int(np.searchsorted(pos, rows[0]))
    made_.made.inputs["x"][i] ^= np.uint32(1)
    with pytest.raises(InputsDisagree):
        check_made(made_, claims, {}, "r")


@pytest.mark.device
@pytest.mark.parametrize("change", ["row_missing", "row_added", "top_moved"])
def test_rows_gathered_other_than_the_screen_marked_are_a_device_fault(made, change):
    """Known bad: the device's gathering (fuzzfarm_mark_*) returns one row too few or too
    many, or another passed row of largest error: InputsDisagree before any verdict."""
    from fuzzfarm.work.check import InputsDisagree, check_made
    unit, claims, _, made_, _ = _both_ways(made, "sin")
    check_made(made_, claims, {}, "r")                                # known good
    m = made_.made
    if change == "row_missing":
        m = replace(m, inputs={"x": m.inputs["x"][:-1]},
                    outputs={k: v[:-1] for k, v in m.outputs.items()})
    elif change == "row_added":
        m = replace(m, inputs={"x": np.append(m.inputs["x"], m.inputs["x"][:1])},
                    outputs={k: np.append(v, v[:1]) for k, v in m.outputs.items()})
    else:
        m = replace(m, top=m.top + 1)
    with pytest.raises(InputsDisagree) as err:
        check_made(replace(made_, made=m), claims, {}, "r")
    assert "gathered" in err.value.detail()["error"]


@pytest.mark.device
@pytest.mark.parametrize("n", [1, 31, 2048, 100_003])
def test_the_device_gathers_exactly_the_marked_rows_in_order(made, n):
    """enqueue_marked on drawn pairs chosen to mark many rows in scattered runs (NaN,
    subnormal and zero inputs, wrong results) and to tie the largest passed error (exact
    results: error 0): its rows are x and y at SparseOutputs.positions, in order, and its
    top is the host's."""
    import pyopencl as cl

    from fuzzfarm.verdict.screened import SparseOutputs, top_position
    runner = made[0]
    screen, _ = _screen(made, "sinpi", chunk=1 << 17)
    rng = np.random.default_rng(n)
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    ints = np.arange(n, dtype=np.float32) % 1000 + 1     # sinpi(integer) = +-0: exact
    x[::3] = ints[::3].view(np.uint32)
    y = np.zeros(n, np.uint32)
    y[::3] = 0                                           # +0: sinpi's, exact
    y[1::3] = rng.integers(0, 1 << 32, y[1::3].size, dtype=np.uint64).astype(np.uint32)
    mf = cl.mem_flags
    xb, yb = (cl.Buffer(runner.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
              for a in (x, y))
    land = screen.landing(n)
    ev = screen.enqueue(yb, 0, n, land.answer, xbuf=xb, blocking=False)
    screen.enqueue_marked(xb, yb, n, land, wait_for=[ev]).wait()
    pos = SparseOutputs.positions(land.answer, n)
    count, top, gins, gy = land.marked()
    assert count == pos.size and top == top_position(land.answer)
    if gins is None:
        assert count > land.x.size
    else:
        np.testing.assert_array_equal(gins[0], x[pos])
        np.testing.assert_array_equal(gy, y[pos])
    land.release()


@pytest.mark.device
def test_marked_rows_that_do_not_fit_the_landing_come_back_whole(made, monkeypatch):
    """A unit whose marked rows exceed the landing (GATHER_FRACTION of it) is handed over
    with every row, read from the launch's buffers after the fact: the same verdict."""
    from fuzzfarm.oracle import device_screen as ds
    from fuzzfarm.work.check import check_made
    # a landing of one row: the device screen decides nearly every input of a unit now
    # (zeros, subnormals, infinities and NaNs included), leaving a few marked rows
    monkeypatch.setattr(ds, "GATHER_FRACTION", 0.0)
    session = _session(made)
    unit = make_unit("d", ("log", "binary32", 1), 3, 21, 0, 1, size=1 << 16)
    plan = gen.unit_plan(unit.target, unit.source)
    if not session.makes(unit, plan):
        pytest.skip("this device does not screen log")
    b = session.launch(unit, plan)
    every = pickle.loads(pickle.dumps(session.land(b)))
    if every.made.count <= 1:
        b.release()
        pytest.skip("the device's log left only one row marked: nothing overflows")
    assert not every.made.marked and every.made.count > 1
    np.testing.assert_array_equal(every.made.inputs["x"], make_inputs(unit)["x"])
    _, stats, _ = check_made(every, session.claims(unit), {}, "r")
    assert stats["inputs_tested"] == 1 << 16
    c = session.launch(unit, plan)
    with pytest.raises(RuntimeError):
        b.pending.read_made()   # a later launch may have taken b's buffers
    b.release()
    session.land(c)
    c.release()


@pytest.mark.device
def test_the_tally_kernel_counts_duplicates_and_the_all_ones_pattern(made):
    """Known bad for the distinct counts: planted repeats, the all-ones pattern (the hash
    set's empty marker) twice, and patterns that collide in the hash."""
    import pyopencl as cl
    runner, g, _ = made
    rng = np.random.default_rng(8)
    x = rng.integers(0, 1 << 32, 9000, dtype=np.uint64).astype(np.uint32)
    x[100:200] = x[0:100]                       # 100 repeats
    x[300] = x[301] = np.uint32(0xFFFFFFFF)     # the empty marker, twice
    x[400:420] = np.uint32(0)                   # +0 twenty times
    buf = cl.Buffer(runner.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                    hostbuf=x)
    counts = np.zeros(21, np.uint32)
    cbuf = cl.Buffer(runner.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                     hostbuf=counts)
    g.enqueue_tally(runner.queue, buf, x.size, cbuf)
    cl.enqueue_copy(runner.queue, counts, cbuf)
    got = gen.tally(counts)
    want = class_tally({"x": x}, catalogue.function("sin"), BINARY32)
    assert got == want
    assert got[2] == len(np.unique(x)) < x.size


@pytest.mark.device
def test_the_int_tally_counts_int_classes_and_the_all_ones_value(made):
    """Known bad for an int argument's tally: repeats, -1 (the hash set's empty marker)
    twice, zeros, INT_MIN and INT_MAX: the classes and distinct counts class_tally gives
    for pown's y (its int)."""
    import pyopencl as cl
    runner, g, _ = made
    rng = np.random.default_rng(9)
    n = rng.integers(-(1 << 31), 1 << 31, 5000, dtype=np.int64).astype(np.int32)
    n[100:200] = n[0:100]
    n[300] = n[301] = -1
    n[400:410] = 0
    n[500:503] = np.iinfo(np.int32).min
    n[600:602] = np.iinfo(np.int32).max
    buf = cl.Buffer(runner.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                    hostbuf=n)
    counts = np.zeros(gen.TALLY_WORDS, np.uint32)
    cbuf = cl.Buffer(runner.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                     hostbuf=counts)
    g.enqueue_tally(runner.queue, buf, n.size, cbuf, ints=True)
    cl.enqueue_copy(runner.queue, counts, cbuf)
    by, distinct, _ = gen.tally(counts, ("y",), ("int",))
    pown = catalogue.function("pown")
    x = np.zeros(n.size, np.uint32)
    want_by, want_distinct, _ = class_tally({"x": x, "y": n}, pown, BINARY32)
    assert by == {k: v for k, v in want_by.items() if k.startswith("y:")}
    assert distinct == {k: v for k, v in want_distinct.items() if k.startswith("y:")}
    assert sum(distinct.values()) == len(np.unique(n)) < n.size


@pytest.mark.device
def test_a_reset_frees_the_dropped_context():
    """After an enqueue error the session drops the unit's context (``reset``); nothing of
    fuzzfarm's -- screens' shared scratch, idle landings, the conversion screen's program
    -- may keep the dropped runner alive, or a device whose memory ran out cannot make the
    next context (an H200 answered CL_OUT_OF_HOST_MEMORY).  Units of every route first:
    made and host inputs, a built-in's screen and a conversion's."""
    import gc
    import weakref
    from fuzzfarm.work.session import DeviceSession, prepare_inputs
    info = require_device()
    if not info.has_fp64:
        pytest.skip("the device screen needs cl_khr_fp64")
    session = DeviceSession(info)
    for target in (("sin", "binary32", 1), ("convert_int_sat_rte(float)", "binary32", 1)):
        for serial, on_device in ((3, True), (4, False)):
            unit, inputs = prepare_inputs(make_unit("t", target, serial, 11, 0, 1,
                                                    size=1 << 14), on_device)
            launch = session.launch(unit, inputs)
            session.land(launch)
            launch.release()
    del launch                  # the caller's last launch: its own reference
    old = weakref.ref(session.runner(""))
    session.reset("")
    gc.collect()
    assert old() is None
    assert session.runner("") is not None      # a fresh one is made on demand
