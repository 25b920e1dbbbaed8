"""Inputs made on the device (fuzzfarm.device.generate): the generator kernel gives the
numpy sampler's patterns bit for bit, for every class variant, exponent window and NaN
payload; its checksum is the host's; units it does not make are refused by name.

Device tests run on the test device (tests/devices.py; PyPI's PoCL is enough)."""
from __future__ import annotations

import numpy as np
import pytest

from devices import require_device
from edgecases import catalogue
from fuzzfarm.device import generate as gen
from fuzzfarm.formats import BINARY32
from fuzzfarm.work.units import WorkUnit, make_inputs, make_unit
from strategies import FLOAT_CLASSES, NAN_PAYLOADS, Recipe, Stream, expand
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


def test_checksum_sees_one_flipped_bit_and_a_swap():
    x = np.arange(1000, dtype=np.uint32) * np.uint32(2654435761)
    c = gen.checksum(x)
    y = x.copy()
    y[17] ^= np.uint32(1 << 9)
    assert gen.checksum(y) != c
    z = x.copy()
    z[[3, 4]] = z[[4, 3]]
    assert gen.checksum(z) != c


@pytest.mark.parametrize("target", [("sin", "binary64", 1), ("sin", "binary32", 4),
                                    ("atan2", "binary32", 1), ("ldexp", "binary32", 1),
                                    ("convert_int_sat_rte(float)", "binary32", 1),
                                    ("normalize", "binary32", 4)])
def test_units_the_device_does_not_make_are_refused(target):
    unit = make_unit("d", target, 3, 1, 0, 1, size=256)
    with pytest.raises(gen.NotOnDevice):
        gen.unit_plan(unit)


def test_special_value_and_version_1_units_are_refused():
    with pytest.raises(gen.NotOnDevice):
        gen.unit_plan(make_unit("d", ("sin", "binary32", 1), 0, 1, 0, 1))
    unit = make_unit("d", ("sin", "binary32", 1), 3, 1, 0, 1, size=256)
    old = WorkUnit(unit.unit_id, unit.function, unit.seed, unit.per_recipe,
                   tuple({**r, "version": 1} for r in unit.recipes), False, unit.precision,
                   unit.vector_width)
    with pytest.raises(gen.NotOnDevice):
        gen.unit_plan(old)


def test_a_unit_plan_covers_its_rows_once():
    unit = make_unit("d", ("sinpi", "binary32", 1), 5, 2, 0, 1, size=10_000)
    plan = gen.unit_plan(unit)
    assert plan.n == 10_000 == sum(p.n for p in plan.parts)
    assert [p.offset for p in plan.parts] == list(np.cumsum([0] + [p.n for p in plan.parts])[:-1])
    for p in plan.parts:
        assert p.segments[-1, 0] == p.n          # the last segment ends at the part's end


# --------------------------------------------------------------------------- device
@pytest.fixture(scope="module")
def made():
    """(runner, generator, run(plan) -> (patterns, device checksum))."""
    pytest.importorskip("pyopencl")
    import pyopencl as cl

    from fuzzfarm.device.runner import DeviceRunner
    runner = DeviceRunner(require_device())
    g = gen.DeviceGenerator(runner)

    def run(plan):
        buf = cl.Buffer(runner.context, cl.mem_flags.READ_WRITE, size=4 * max(1, plan.n))
        _, ev, total = g.enqueue(runner.queue, plan, buf)
        ev.wait()
        out = np.empty(plan.n, np.uint32)
        cl.enqueue_copy(runner.queue, out, buf)
        buf.release()
        return out, int(total[0])
    return runner, g, run


def _one_lane(recipe: Recipe, n: int):
    """(device plan of ``recipe``'s n values of sin's x, the numpy values)."""
    fn = catalogue.function("sin")
    from strategies import expand_plans
    lane = expand_plans(recipe, fn, n, BINARY32, 1, Stream(recipe.seed))[0][0]
    params = Params(recipe.exponent_window, recipe.nan_payload)
    shuffle = None if lane.shuffle is None else (gen._bits_for(n), *lane.shuffle)
    plan = gen.UnitPlan(n, (gen.PartPlan(0, n, gen.encode(lane, BINARY32, params), shuffle),))
    return plan, realize(lane, BINARY32, params)


@pytest.mark.device
@pytest.mark.parametrize("cls", FLOAT_CLASSES)
def test_every_class_is_made_on_the_device_as_numpy_makes_it(made, cls):
    """One class at a time, small batches (whole small variants taken in order) and large
    ones (keyed bijections, cycle walks, spills into random_bits)."""
    _, _, run = made
    for seed, n in ((1, 1), (2, 37), (3, 5000), (4, 70_000)):
        recipe = Recipe(float_weights={cls: 1.0}, seed=seed)
        plan, want = _one_lane(recipe, n)
        got, total = run(plan)
        np.testing.assert_array_equal(got, want, err_msg=f"{cls} n={n}")
        assert total == gen.checksum(want)


@pytest.mark.device
@pytest.mark.parametrize("payload", NAN_PAYLOADS)
def test_exponent_windows_and_nan_payloads(made, payload):
    _, _, run = made
    for seed, window in ((5, None), (6, (-3, 4)), (7, (100, 127)), (8, (-126, -120))):
        recipe = Recipe(float_weights={"normal": 2.0, "qnan": 1.0, "snan": 1.0, "integer": 1.0},
                        exponent_window=window, nan_payload=payload, seed=seed)
        plan, want = _one_lane(recipe, 20_000)
        got, total = run(plan)
        np.testing.assert_array_equal(got, want)
        assert total == gen.checksum(want)


@pytest.mark.device
@pytest.mark.parametrize("name", ["sin", "sinpi", "exp", "fract", "tanpi"])
def test_drawn_units_match_make_inputs_with_their_parts(made, name):
    """Whole units: several recipes sharing one Stream (no member taken twice across
    parts), as fuzzfarm run draws them."""
    _, _, run = made
    for serial in (1, 2, 3):
        unit = make_unit("d", (name, "binary32", 1), serial, 9, 0, 1, size=(1 << 15) + serial)
        plan = gen.unit_plan(unit)
        want = make_inputs(unit)["x"]
        got, total = run(plan)
        np.testing.assert_array_equal(got, want)
        assert total == gen.checksum(want)
        # the refactored numpy path is still expand's
        fn = catalogue.function(name)
        r0 = Recipe.from_dict({k: v for k, v in unit.recipes[0].items() if k != "n"})
        np.testing.assert_array_equal(
            want[:unit.recipes[0]["n"]],
            expand(r0, fn, unit.recipes[0]["n"], BINARY32, stream=Stream(unit.seed))["x"])


# --------------------------------------------------------------------------- the run path
def test_remake_inputs_names_a_checksum_the_device_got_wrong():
    from fuzzfarm.work.units import fault_rows, remake_inputs
    unit = make_unit("d", ("sin", "binary32", 1), 4, 3, 0, 1, size=3000)
    right = np.array([gen.checksum(make_inputs(unit)["x"])], np.uint32)
    inputs, detail = remake_inputs(unit, right)
    assert detail is None
    np.testing.assert_array_equal(inputs["x"], make_inputs(unit)["x"])
    _, detail = remake_inputs(unit, right ^ np.uint32(4))
    assert f"{int(right[0]) ^ 4:#010x}" in detail["error"]
    assert f"{int(right[0]):#010x}" in detail["error"]
    finding, stats = fault_rows(unit, {}, "r", "", "integer_arithmetic", detail)
    assert finding["rule_id"] == "device.integer_arithmetic"
    assert finding["severity"] == "fault" and stats["inputs_tested"] == 0


@pytest.mark.device
@pytest.mark.parametrize("name, screened", [("sin", True), ("sinpi", True), ("exp", False),
                                            ("fract", False)])
def test_a_unit_made_on_the_device_gets_the_verdicts_of_one_made_on_the_host(made, name,
                                                                              screened):
    """The same unit submitted both ways (fuzzfarm.work.units.submit_unit): identical
    outputs, device screen answers and verdicts; the device's checksum is the host's."""
    from fuzzfarm.oracle import device_screen as ds
    from fuzzfarm.verdict.claims import Claims
    from fuzzfarm.work.units import check_result, remake_inputs, submit_unit
    runner, g, _ = made
    unit = make_unit("d", (name, "binary32", 1), 2, 21, 0, 1, size=(1 << 17) + 5)
    claims = Claims.by_precision(runner.info, runner.device_constants(), "")["binary32"]
    screen = None
    if screened:
        if not runner.info.has_fp64:
            pytest.skip("the device screen needs cl_khr_fp64")
        screen, why = ds.screen_for(runner, name, "binary32", claims, 1 << 18)
        assert screen is not None, why
    host = make_inputs(unit)
    a = submit_unit(runner, unit, host, screen)
    out_a = a.wait()
    b = submit_unit(runner, unit, None, screen, (g, gen.unit_plan(unit)))
    out_b = b.wait()
    for k in out_a:
        np.testing.assert_array_equal(out_a[k], out_b[k])
    inputs, fault = remake_inputs(unit, b.made_sum)
    assert fault is None
    if screened:
        for f in a.answer._fields:
            np.testing.assert_array_equal(getattr(a.answer, f), getattr(b.answer, f))
    ra = check_result(unit, host, out_a, claims, getattr(a, "answer", None))
    rb = check_result(unit, inputs, out_b, claims, b.answer)
    assert (ra.n, ra.screened, ra.exact) == (rb.n, rb.screened, rb.exact)
    assert ra.counts_by_rule("fail") == rb.counts_by_rule("fail")
    assert ra.max_ulp_error == rb.max_ulp_error or (np.isnan(ra.max_ulp_error)
                                                    and np.isnan(rb.max_ulp_error))
