"""Explicit conversions judged bit for bit on the device (fuzzfarm.oracle.conversion_screen,
docs/device_screen.md "Conversions"): its integer reference against the host's exact one for
every conversion (binary16 included: the screen reads bit patterns, so a device without
cl_khr_fp16 tests its binary16 reference too), planted faults of every kind giving the host's
verdict, and units through the session giving the host-screened unit's verdict."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from edgecases import conversions as CT
from fuzzfarm import formats
from fuzzfarm.verdict import conversions as C
from fuzzfarm.verdict.claims import Claims
from strategies import conversions as CI
from tests.devices import require_device

pytestmark = pytest.mark.device

#: Every conversion but the int->int ones with a rounding suffix (which has no effect on
#: them: tests/test_conversions.py; the screen ignores its mode argument there).
SCREENED = [c for c in CT.conversions() if not (c.kind == "int_to_int" and c.rounding)]
KINDS = ["float_to_int", "int_to_float", "float_to_float", "int_to_int"]
DENORM = {p: Claims(p) for p in ("binary16", "binary32", "binary64")}
FTZ = {"binary16": Claims("binary16", denormals=False), "binary32": Claims(denormals=False),
       "binary64": Claims("binary64")}


@pytest.fixture(scope="module")
def runner():
    from fuzzfarm.device.runner import DeviceRunner
    return DeviceRunner(require_device())


def _screen(runner, conv, x, y):
    """The device's answer for sources ``x`` and results ``y`` (host arrays)."""
    from fuzzfarm.device import commands
    from fuzzfarm.oracle.conversion_screen import ConversionAnswer, screen_for
    screen, why = screen_for(runner, conv)
    assert screen is not None, why
    answer = ConversionAnswer.empty(x.size)
    xb = commands.buffer(runner, host=x)
    yb = commands.buffer(runner, host=y)
    screen.enqueue(xb, yb, x.size, answer).wait()
    return answer


def _inputs(conv, n=3000, seed=0):
    return np.concatenate([CI.special_inputs(conv),
                           CI.inputs(conv, n, zlib.crc32(conv.id.encode()) + seed)])


def _same(full, scr):
    """The screened verdict is the host's whole-batch verdict."""
    key = lambda f: (f.index, f.rule_id, f.severity, f.inputs, f.outputs,  # noqa: E731
                     f.expected, f.ulp_error, f.reading)
    assert list(map(key, scr.findings)) == list(map(key, full.findings))
    assert scr.n == full.n
    assert scr.screened + scr.exact == full.exact and full.screened == 0
    assert scr.unjudged == full.unjudged and scr.flushed == full.flushed
    assert (scr.max_ulp_error == full.max_ulp_error
            or (np.isnan(scr.max_ulp_error) and np.isnan(full.max_ulp_error)))


def test_int_to_int_decides_values_wraps_and_saturation(runner):
    """Between integer types (C99 6.3.1.3; OpenCL C 3.0 §6.4.3.3): a representable value
    unchanged, an unsigned destination's modulo-2**N wrap, _sat's clamp -- decided; a
    signed destination out of range without _sat is implementation-defined: decided and
    counted unjudged where the result is the two's-complement wrap, left to the host (its
    note) where it is not."""
    x = np.array([5, -1, 300, -129, 2**40, -(2**63)], np.int64)
    for text, y, left, unjudged in (
            ("convert_char(long)", [5, -1, 44, 127, 0, 0], [], 4),     # 2..5 wrap
            ("convert_char(long)", [5, -1, 44, 127, 1, 0], [4], 3),    # 4: not the wrap
            ("convert_char(long)", [6, -1, 44, 127, 0, 0], [0], 4),    # 0: another value
            ("convert_uchar(long)", [5, 255, 44, 127, 0, 0], [], 0),
            ("convert_uchar(long)", [5, 0, 44, 127, 0, 0], [1], 0),    # 1: not -1 mod 256
            ("convert_char_sat(long)", [5, -1, 127, -128, 127, -128], [], 0),
            ("convert_char_sat(long)", [5, -1, 44, -128, 127, -128], [2], 0)):  # wrapped
        conv = CT.parse(text)
        yv = np.array(y, np.int64).astype(conv.dst_dtype)
        answer = _screen(runner, conv, x, yv)
        assert answer.undecided(x.size).tolist() == left, (text, y)
        assert answer.unjudged == unjudged, (text, y)
        full = C.check(conv, x, yv, DENORM)
        assert [f.index for f in full.findings] == left, (text, y)
        _same(full, C.check_screened(conv, x, yv, answer, DENORM))


@pytest.mark.parametrize("kind", KINDS)
def test_the_device_decides_every_correct_result(runner, kind):
    """The host's exact results (bit for bit; NaN sources: the quiet NaN of the source's
    sign; implementation-defined elements: the reference's meaningless 0) are decided on the
    device for every element of every conversion but those the host has a note on (an
    out-of-range operand that rounds into range, a _sat NaN, given other than 0): landmarks
    (ranges' ends, ties, overflow thresholds, subnormal boundaries, NaN payloads) and seeded
    draws; and the screened verdict is the host's."""
    for conv in (c for c in SCREENED if c.kind == kind):
        x = _inputs(conv)
        expected, judged = C.reference(conv, x)
        answer = _screen(runner, conv, x, expected)
        left = answer.undecided(x.size)
        full = C.check(conv, x, expected, DENORM)
        assert all(f.severity == "note" for f in full.findings), conv.id
        assert left.tolist() == [f.index for f in full.findings], (
            conv.id, [hex(int(v)) for v in x[left[:4]]])
        assert answer.unjudged == int((~judged).sum()) - left.size, conv.id
        for claims in (DENORM, FTZ):
            _same(C.check(conv, x, expected, claims),
                  C.check_screened(conv, x, expected, answer, claims))


def test_every_binary16_source_converts_as_the_host_says(runner):
    """All 65,536 binary16 patterns through every conversion from half (the device's
    reference needs no cl_khr_fp16: it reads patterns)."""
    x = np.arange(1 << 16, dtype=np.uint16)
    for conv in (c for c in SCREENED if c.src == "half"):
        expected, judged = C.reference(conv, x)
        answer = _screen(runner, conv, x, expected)
        full = C.check(conv, x, expected, DENORM)
        assert answer.undecided(x.size).tolist() == [f.index for f in full.findings], conv.id
        _same(full, C.check_screened(conv, x, expected, answer, DENORM))


def _plant(conv, x, y, rng):
    """Faults among ``y`` (the host's results, modified in place) of every kind the issue
    names: one pattern off (1 ULP beyond an exact result), a zero of the wrong sign, a NaN
    where a number is prescribed, a wrong saturation, the result of another rounding mode,
    an unquieted NaN (a quiet source's NaN made signaling).  Returns {kind: positions}."""
    n = x.size
    u = y.view(np.dtype(f"u{y.dtype.itemsize}"))
    D = conv.dst_format
    picks = rng.permutation(n)
    out = {}

    def take(kinds_mask, k=12):
        cand = picks[kinds_mask[picks]]
        return cand[:k]

    one = np.array(1, u.dtype)
    anywhere = np.ones(n, bool)
    p = take(anywhere)
    u[p[:6]] += one
    u[p[6:]] -= one
    out["one_off"] = p
    if D is not None:
        zero = formats.is_zero(y, D)
        p = take(zero)
        u[p] ^= np.array(D.sign_mask, u.dtype)
        out["zero_sign"] = p
        number = ~formats.is_nan(y, D)
        p = take(number & ~zero)
        u[p] = np.array(D.default_qnan, u.dtype)
        out["nan_for_number"] = p
        if conv.src_format is not None:
            q = formats.is_qnan(x, conv.src_format)
            p = take(q)
            u[p] = np.array(D.exp_mask | 1, u.dtype)       # a signaling NaN
            out["unquieted"] = p
    if conv.sat:
        lo, hi = CT.int_range(conv.dst)
        v = C.reference(conv, x)[0]
        at_end = (v == lo) | (v == hi)
        p = take(at_end)
        y[p] = np.where(v[p] == lo, v[p] + 1, v[p] - 1)
        out["saturation"] = p
    if conv.kind != "int_to_int":
        for m in CT.ROUNDINGS:
            if m != conv.mode:
                other = C.reference(CT.Conversion(conv.dst, conv.src, conv.sat, m), x)[0]
                p = take(other != C.reference(conv, x)[0], 6)
                y[p] = other[p]
                out[f"rounded_{m}"] = p
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_planted_faults_get_the_host_verdict(runner, kind):
    """Faults of every kind planted among the host's results: the screened verdict is the
    host's over the whole batch (findings, counts, flushes, maximum ULP error), under a
    device with and without subnormals; no failure or note is decided on the device; and
    every kind of fault is a failure somewhere."""
    rng = np.random.default_rng(28)
    caught = {}
    for conv in (c for c in SCREENED if c.kind == kind):
        x = _inputs(conv, seed=1)
        y = C.reference(conv, x)[0].copy()
        planted = _plant(conv, x, y, rng)
        answer = _screen(runner, conv, x, y)
        left = set(answer.undecided(x.size).tolist())
        for claims in (DENORM, FTZ):
            full = C.check(conv, x, y, claims)
            _same(full, C.check_screened(conv, x, y, answer, claims))
            flagged = {f.index for f in full.findings}
            assert flagged <= left, conv.id
            fails = {f.index for f in full.findings if f.severity == "fail"}
            for what, pos in planted.items():
                caught[what] = caught.get(what, 0) + len(fails & set(pos.tolist()))
    expected = {"one_off"}
    if kind != "int_to_int":
        expected |= {"rounded_rtz", "rounded_rtp"}
    if kind in ("float_to_int", "float_to_float"):
        expected |= {"rounded_rtn"}
    if kind in ("float_to_int", "int_to_int"):
        expected |= {"saturation"}
    else:
        expected |= {"nan_for_number"}
    if kind == "float_to_float":
        expected |= {"unquieted", "zero_sign"}
    missed = {w for w in expected if not caught.get(w)}
    assert not missed, caught


def test_units_through_the_session_get_the_host_verdict(runner):
    """Conversion units launched through the session are judged on the device (the
    answer rides with the landed unit) and get the host-screened unit's verdict; with
    faults planted in the landed results, still the host's."""
    from fuzzfarm.work.check import check_result
    from fuzzfarm.work.make import make_inputs, make_unit
    from fuzzfarm.work.session import DeviceSession
    from fuzzfarm.oracle.conversion_screen import ConversionAnswer
    info = runner.info
    session = DeviceSession(info)
    rng = np.random.default_rng(5)
    for text in ("convert_int_sat_rte(float)", "convert_uchar(float)",
                 "convert_half_rtp(float)" if info.has_fp16 else "convert_float_rtn(double)",
                 "convert_float(ulong)", "convert_short_sat_rtn(double)"):
        if "double" in text and not info.has_fp64:
            continue
        conv = CT.parse(text)
        unit = make_unit("t", (conv.id, conv.precision, 1), 1, 7, 0, 1, size=1 << 13)
        inputs = make_inputs(unit)
        claims = session.claims(unit)
        landed = session.land(session.launch(unit, inputs))
        assert isinstance(landed.answer, ConversionAnswer), text
        y = np.array(landed.outputs["ret"])
        dev = check_result(unit, inputs, {"ret": y}, claims, landed.answer)
        host = check_result(unit, inputs, {"ret": y}, claims)
        _same(host, dev)
        assert dev.screened > 0
        _plant(conv, inputs["x"], y, rng)
        answer = _screen(runner, conv, inputs["x"], y)
        _same(check_result(unit, inputs, {"ret": y}, claims),
              check_result(unit, inputs, {"ret": y}, claims, answer))


# --------------------------------------------------------------------------- made on the device
def test_inputs_made_on_the_device_are_the_hosts(runner):
    """Every conversion's counter-based sources made on the device (parts of several
    sizes, the landmarks first where a part holds twice them) are the host's, bit for
    bit."""
    from fuzzfarm.device import commands
    from fuzzfarm.device.conversion_generate import ConversionGenerator, ConversionPlan
    gen = ConversionGenerator(runner)
    for conv in SCREENED:
        pool = CI.special_inputs(conv).size
        parts = ((11, 2 * pool + 777), (12, 2 * pool - 1), (13, 1))
        n = sum(k for _, k in parts)
        buf = commands.buffer(runner, n * conv.src_dtype.itemsize)
        gen.enqueue(runner.queue, ConversionPlan(conv, n, parts), buf).wait()
        dev = np.empty(n, conv.src_dtype)
        commands.copy(runner, dev, buf, blocking=True)
        host = np.concatenate([CI.counter_inputs(conv, k, seed) for seed, k in parts])
        assert np.array_equal(dev, host), conv.id


_MADE = ("convert_int_sat_rte(float)", "convert_uchar(float)", "convert_float(ulong)",
         "convert_short_sat_rtn(double)", "convert_float_rtn(double)", "convert_long(float)")


def _faulty_program(every: int):
    """A Conversion._program whose kernel gets every ``every``-th work item's result (from
    1) one pattern off: a planted fault of the driver's conversion."""
    import re
    from fuzzfarm.work.conversion_kind import Conversion
    real = Conversion._program

    def program(self, target):
        src, kname, dtype = real(self, target)
        src = re.sub(r"out_ret\[i\] = (.*);",
                     rf"out_ret[i] = (i % {every} == 1) ? ((\1) ^ 1) : (\1);", src)
        # vectors: the whole vector of work item i (every element one pattern off)
        vec = f"{CT.c_buffer_type(target.conversion.dst)}{target.width}"
        src = re.sub(r"vstore(\d+)\((.*), i, out_ret\);",
                     rf"vstore\1((i % {every} == 1) ? ((\2) ^ ({vec})(1)) : (\2), i, "
                     r"out_ret);", src)
        return src, kname, dtype
    return program


@pytest.mark.parametrize("every,size", [(97, 1 << 14), (3, 1 << 16)])
def test_made_units_get_the_host_verdict(runner, monkeypatch, every, size):
    """Units whose sources the device makes (counter-based recipes) and judges, with a
    fault planted in the driver's kernel, get the verdict of the same kernel's results
    judged on the host over host-made inputs: findings, counts, maximum.  Few faults: only
    the undecided rows and the sample come back (gathered); many (one in three, beyond
    the eighth of a unit a gathering holds): every row read back, same verdict."""
    from fuzzfarm.device.conversion_generate import ConversionPlan
    from fuzzfarm.work.check import check_landed, check_result
    from fuzzfarm.work.conversion_kind import Conversion
    from fuzzfarm.work.kinds import kind_of
    from fuzzfarm.work.make import make_inputs, make_unit
    from fuzzfarm.work.session import DeviceSession, prepare_inputs
    monkeypatch.setattr(Conversion, "_program", _faulty_program(every))
    info = runner.info
    session = DeviceSession(info)
    failures = 0
    for text in _MADE:
        conv = CT.parse(text)
        if conv.precision == "binary64" and not info.has_fp64:
            continue
        unit = make_unit("t", (conv.id, conv.precision, 1), 2, 11, 0, 1, size=size)
        unit, plan = prepare_inputs(unit, True)
        assert isinstance(plan, ConversionPlan) and session.makes(unit, plan)
        claims = session.claims(unit)
        launch = session.launch(unit, plan)
        landed = session.land(launch)
        assert landed.made.marked == (every == 97), text
        checked = check_landed(landed, claims, {}, "r")
        launch.release()
        made = checked.result
        inputs = make_inputs(unit)
        target = unit.target
        outs = kind_of(target).run(session.runner(""), target, inputs)
        host = check_result(unit, inputs, outs, claims)
        _same(host, made)
        assert checked.stats["distinct_inputs"] is None     # not counted on the device
        failures += sum(f.severity == "fail" for f in made.findings)
    assert failures > 0


def test_a_source_the_device_made_wrong_is_a_device_fault(runner):
    """Known bad: a gathered source changed (as a device whose integer arithmetic is wrong
    would make it), or a gathered row missing: InputsDisagree naming the conversion's
    kernels, before any verdict."""
    from dataclasses import replace
    from fuzzfarm.work.check import InputsDisagree, check_landed
    from fuzzfarm.work.make import make_unit
    from fuzzfarm.work.session import DeviceSession, prepare_inputs
    session = DeviceSession(runner.info)
    conv = CT.parse("convert_int_sat_rte(float)")
    unit = make_unit("t", (conv.id, conv.precision, 1), 3, 11, 0, 1, size=1 << 14)
    unit, plan = prepare_inputs(unit, True)
    claims = session.claims(unit)
    launch = session.launch(unit, plan)
    landed = session.land(launch)
    good = check_landed(landed, claims, {}, "r")                      # known good
    m = landed.made
    # the rows in any order the device gathered them (NVIDIA's atomics: not input order)
    # give the same verdict: the check sorts them
    perm = np.random.default_rng(5).permutation(m.count)
    shuffled = replace(m, inputs={"x": m.inputs["x"][perm]}, outputs={"ret": m.outputs["ret"][perm]},
                       pos=m.pos[perm])
    again = check_landed(replace(landed, made=shuffled), claims, {}, "r")
    assert again.findings.drop_columns(["time"]).equals(good.findings.drop_columns(["time"]))
    assert again.result.counts_by_rule(None) == good.result.counts_by_rule(None)
    assert m.marked and m.count >= (1 << 14) // 1024                 # the sample at least
    x = m.inputs["x"].copy()
    x[m.count // 2] ^= 1
    with pytest.raises(InputsDisagree) as err:
        check_landed(replace(landed, made=replace(m, inputs={"x": x})), claims, {}, "r")
    detail = err.value.detail()
    assert detail["kernel_name"] == "fuzzfarm_convert_make"
    assert f"row {int(m.pos[m.count // 2])}:" in detail["error"]
    short = replace(m, inputs={"x": m.inputs["x"][1:]}, outputs={"ret": m.outputs["ret"][1:]}, pos=m.pos[1:],
                    count=m.count - 1)
    with pytest.raises(InputsDisagree) as err:
        check_landed(replace(landed, made=short), claims, {}, "r")
    assert err.value.detail()["kernel_name"] == "fuzzfarm_convert_gather"
    launch.release()


def test_older_conversion_units_are_made_on_the_host():
    """A unit recorded before counter-based recipes (no "v") keeps its inputs: the host
    makes them, with version 1's generator."""
    from fuzzfarm.work.kinds import kind_of
    from fuzzfarm.work.make import make_inputs, make_unit
    from fuzzfarm.work.unit import Drawn
    conv = CT.parse("convert_int_rte(float)")
    unit = make_unit("t", (conv.id, conv.precision, 1), 1, 5, 0, 1, size=3000)
    old = [{k: v for k, v in r.items() if k != "v"} for r in unit.source.recipes]
    drawn = Drawn(unit.source.seed, unit.source.sizes, tuple(old))
    assert kind_of(unit.target).device_plan(unit.target, drawn) is None
    from dataclasses import replace
    x = make_inputs(replace(unit, source=drawn))["x"]
    assert np.array_equal(x, CI.inputs(conv, 3000, old[0]["seed"]))
    assert not np.array_equal(x, make_inputs(unit)["x"])


def test_a_landing_reused_by_a_larger_unit_holds_its_whole_answer(runner):
    """Known bad (found on the H100's catalogue run): a landing first used by a small unit
    kept the small unit's answer for the next, larger one, whose check then found the
    gathered rows disagreeing with the answer.  Units of growing sizes through one
    session are each judged, nothing disagreeing."""
    from fuzzfarm.work.check import check_landed
    from fuzzfarm.work.make import make_unit
    from fuzzfarm.work.session import DeviceSession, prepare_inputs
    session = DeviceSession(runner.info)
    conv = CT.parse("convert_double_rte(int)" if runner.info.has_fp64
                    else "convert_float_rte(int)")
    for serial, size in enumerate((1000, 1 << 15, 40_000), start=1):
        unit = make_unit("t", (conv.id, conv.precision, 1), serial, 3, 0, 1, size=size)
        unit, plan = prepare_inputs(unit, True)
        launch = session.launch(unit, plan)
        landed = session.land(launch)
        res = check_landed(landed, session.claims(unit), {}, "r").result
        launch.release()
        assert res.n == size and res.screened + res.exact + res.unjudged == size


def test_kernels_prepared_together_serve_each_conversion_alone(runner):
    """runner.prepare_sources: one program of several conversion kernels, each then found
    by the source a launch gives (no build at launch), with the results of the kernel
    built alone; a program that does not build caches nothing (each builds alone later)."""
    from fuzzfarm.device import conversion_kernels as ck
    from fuzzfarm.device.runner import DeviceRunner
    r = DeviceRunner(runner.info)
    convs = [CT.parse(t) for t in ("convert_int_rte(float)", "convert_uchar_sat(float)",
                                   "convert_float_rtz(uint)")]
    alone = {ck.kernel_name(c): ck.kernel_source(c) for c in convs}
    assert r.prepare_sources(ck.program_source(convs), alone, "three") == 3
    built = []
    real = r.build
    r.build = lambda *a, **k: (built.append(a[1]), real(*a, **k))[1]
    for c in convs:
        x = _inputs(c, 500)
        (y,) = r.run_source(alone[ck.kernel_name(c)], ck.kernel_name(c), [x], [c.dst_dtype])
        (y1,) = runner.run_source(alone[ck.kernel_name(c)], ck.kernel_name(c), [x],
                                  [c.dst_dtype])
        assert np.array_equal(y, y1)
    assert built == []
    broken = ck.program_source(convs[:1]) + "\n#error planted\n"
    other = CT.parse("convert_short_rtn(float)")
    assert r.prepare_sources(broken, {ck.kernel_name(other): ck.kernel_source(other)},
                             "broken") == 0
    r.run_source(ck.kernel_source(other), ck.kernel_name(other), [_inputs(other, 10)],
                 [other.dst_dtype])
    assert len(built) == 2          # the broken program, then the kernel alone


@pytest.mark.parametrize("width", [3, 4])
def test_vector_widths_are_judged_element_by_element(runner, width):
    """Conversions of vectors (vloadn/vstoren over the same flat buffers): units made on
    the device and units of host-made inputs, judged on the device, get the host-screened
    verdict, a fault planted in the kernel included."""
    from fuzzfarm.work.check import check_landed, check_result
    from fuzzfarm.work.conversion_kind import Conversion
    from fuzzfarm.work.kinds import kind_of
    from fuzzfarm.work.make import make_inputs, make_unit
    from fuzzfarm.work.session import DeviceSession, prepare_inputs
    import pytest as _pytest
    mp = _pytest.MonkeyPatch()
    mp.setattr(Conversion, "_program", _faulty_program(61))
    try:
        session = DeviceSession(runner.info)
        conv = CT.parse("convert_short_sat_rte(float)")
        unit = make_unit("t", (conv.id, conv.precision, width), 1, 4, 0, 1, size=3 * 4096)
        claims = session.claims(unit)
        inputs = make_inputs(unit)
        outs = kind_of(unit.target).run(session.runner(""), unit.target, inputs)
        host = check_result(unit, inputs, outs, claims)
        assert any(f.severity == "fail" for f in host.findings)
        unit, plan = prepare_inputs(unit, True)
        launch = session.launch(unit, plan)
        made = check_landed(session.land(launch), claims, {}, "r").result
        launch.release()
        _same(host, made)
        launch = session.launch(unit, inputs)
        landed = session.land(launch)
        _same(host, check_result(unit, inputs, {"ret": np.array(landed.outputs["ret"])},
                                 claims, landed.answer))
    finally:
        mp.undo()


def test_a_spirv_unit_s_saturated_nan_is_judged_on_the_device_as_spirv_says(runner):
    """The screen of a SPIR-V kernel's results: a NaN converted to 0 under
    SaturatedConversion is a judged pass (screened, not unjudged), any other result is
    left to the host, which fails it (SPIRV.convert.sat_nan_zero); the screened verdict
    is the host's whole-batch verdict under the same front end, and the OpenCL C screen
    of the same results counts the zeros unjudged and the others a note."""
    conv = CT.parse("convert_uint_sat(float)")
    x = _inputs(conv, seed=3)
    y = C.reference(conv, x, "spirv")[0].copy()
    nan = np.flatnonzero(((x & 0x7F800000) == 0x7F800000) & ((x & 0x007FFFFF) != 0))
    assert nan.size >= 4
    y[nan[::2]] = 7                                  # half the NaNs not converted to 0
    verdicts = {}
    from fuzzfarm.device import commands
    from fuzzfarm.oracle.conversion_screen import ConversionAnswer, screen_for
    for fe in ("opencl-c", "spirv"):
        screen, why = screen_for(runner, conv, fe)
        assert screen is not None, why
        answer = ConversionAnswer.empty(x.size)
        screen.enqueue(commands.buffer(runner, host=x), commands.buffer(runner, host=y),
                       x.size, answer).wait()
        full = C.check(conv, x, y, DENORM, fe)
        scr = C.check_screened(conv, x, y, answer, DENORM, fe)
        _same(full, scr)
        verdicts[fe] = scr
    spirv, opencl = verdicts["spirv"], verdicts["opencl-c"]
    bad = set(nan[::2].tolist())
    assert {f.index for f in spirv.findings} <= bad           # nothing else fails
    assert spirv.counts_by_rule("fail") == {"SPIRV.convert.sat_nan_zero": len(bad)}
    assert opencl.counts_by_rule("fail") == {}
    assert opencl.counts_by_rule("note") == {"CL.convert.sat_nan_zero": len(bad)}
    assert opencl.unjudged - spirv.unjudged == nan.size      # NaN -> 0 judged in SPIR-V
