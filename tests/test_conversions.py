"""Explicit conversions (fuzzfarm.verdict.conversions): the table, parse, kernel sources, the exact
reference against a slow Fraction oracle for every (src, dst, sat, mode), every rule with a
known-good and a known-bad result, the flush-to-zero allowances, and the input generator.
No device needed."""
from __future__ import annotations

import math
import re
from fractions import Fraction

import functools

import numpy as np
import pytest

from strategies import conversions as CI
from edgecases import conversions as CT
from edgecases.modality import FRONT_ENDS
from fuzzfarm.device import conversion_kernels as CK
from fuzzfarm.verdict import conversions as C
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64, classify, is_nan, to_float

H, F, D = BINARY16, BINARY32, BINARY64
ALL = CT.conversions()
# Claims of a device without CL_FP_DENORM for half and float (double always has subnormals)
FTZ = {"binary16": Claims("binary16", denormals=False), "binary32": Claims(denormals=False),
       "binary64": Claims("binary64")}
DENORM = {p: Claims(p) for p in ("binary16", "binary32", "binary64")}
INT_MAX, INT_MIN = 2**31 - 1, -(2**31)


def f16(x: float) -> int:
    return H.bits_of(x)


def f32(x: float) -> int:
    return F.bits_of(x)


def f64(x: float) -> int:
    return D.bits_of(x)


def run(text: str, src, got, claims=None, front_end="opencl-c"):
    """check() on one element."""
    conv = CT.parse(text)
    s = np.asarray([src], dtype=np.int64 if src < 0 else np.uint64)
    g = np.asarray([got], dtype=np.int64 if got < 0 else np.uint64)
    return C.check(conv, s, g, claims, front_end)


def fails(res) -> set:
    return {f.rule_id for f in res.findings if f.severity == "fail"}


def notes(res) -> set:
    return {f.rule_id for f in res.findings if f.severity == "note"}


# --------------------------------------------------------------------------- slow oracle
# An independent exact reference: Fractions and Python ints, no numpy rounding and nothing
# of fuzzfarm.verdict.conversions.  Returns (expected, judged); expected "nan" for any NaN.
_FMT = {"half": (16, 11, 15), "float": (32, 24, 127), "double": (64, 53, 1023)}
_NPF = {16: (np.float16, np.uint16), 32: (np.float32, np.uint32), 64: (np.float64, np.uint64)}


def _decode(bits: int, t: str):
    w, p, emax = _FMT[t]
    neg = bool(bits >> (w - 1))
    e = (bits >> (p - 1)) & ((1 << (w - p)) - 1)
    f = bits & ((1 << (p - 1)) - 1)
    if e == (1 << (w - p)) - 1:
        return ("nan",) if f else ("inf", neg)
    if e == 0:
        v = Fraction(f, 1 << (emax - 1 + p - 1))
    else:
        v = Fraction(f + (1 << (p - 1))) * Fraction(2) ** (e - emax - (p - 1))
    return ("num", -v if neg else v, neg)


def _slow_to_float(x: Fraction, t: str, mode: str, neg_zero: bool) -> int:
    w, p, emax = _FMT[t]
    sign = 1 << (w - 1)
    if x == 0:
        return sign if neg_zero else 0
    neg, a = x < 0, abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    q = max(e, 1 - emax) - (p - 1)
    s = a / Fraction(2) ** q
    n = {"rtz": math.floor(s), "rte": round(s),
         "rtp": math.floor(s) if neg else math.ceil(s),
         "rtn": math.ceil(s) if neg else math.floor(s)}[mode]
    inf_pat = ((1 << (w - p)) - 1) << (p - 1)
    if n * Fraction(2) ** q > (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax:
        to_inf = mode == "rte" or (mode == "rtp" and not neg) or (mode == "rtn" and neg)
        return (sign if neg else 0) | (inf_pat if to_inf else inf_pat - 1)
    if n == 0:
        return sign if neg else 0
    v = float(n * Fraction(2) ** q)
    ft, ut = _NPF[w]
    return int(np.array(-v if neg else v, ft).view(ut))


def slow(conv, s: int, front_end: str = "opencl-c"):
    d = _decode(s, conv.src) if conv.src in _FMT else ("num", Fraction(s), False)
    if conv.dst in CT.INT_TYPES:
        lo, hi = CT.int_range(conv.dst)
        if d[0] == "nan":
            # OpenCL C: "NaN should be converted to 0" (not judged); SPIR-V: "is converted"
            return (0, True) if conv.sat and front_end == "spirv" else (None, False)
        if d[0] == "inf":
            return ((lo if d[1] else hi), True) if conv.sat else (None, False)
        x = d[1]
        if lo <= x <= hi:
            mode = conv.mode if conv.src in _FMT else "rtz"
            return {"rtz": math.trunc, "rtp": math.ceil, "rtn": math.floor,
                    "rte": round}[mode](x), True
        if conv.sat:
            return (lo if x < lo else hi), True
        if conv.src in _FMT or CT.INT_TYPES[conv.dst][1]:
            return None, False
        return int(x) % (1 << CT.INT_TYPES[conv.dst][0]), True
    w, p, _ = _FMT[conv.dst]
    if d[0] == "nan":
        return "nan", True
    if d[0] == "inf":
        return ((1 << (w - 1)) if d[1] else 0) | (((1 << (w - p)) - 1) << (p - 1)), True
    return _slow_to_float(d[1], conv.dst, conv.mode, conv.src in _FMT and d[2]), True


CROSS = [c for c in ALL if not (c.kind == "int_to_int" and c.rounding)]


@pytest.mark.parametrize("front_end", FRONT_ENDS)
@pytest.mark.parametrize("kind", ["float_to_int", "int_to_float", "float_to_float", "int_to_int"])
def test_reference_matches_a_slow_exact_oracle(kind, front_end):
    """Every (src, dst, sat, mode): landmarks plus random inputs, against Fractions."""
    if front_end != "opencl-c" and kind != "float_to_int":
        pytest.skip("the front end changes float->int _sat of a NaN only")
    for conv in (c for c in CROSS if c.kind == kind):
        pool = CI.special_inputs(conv)
        x = np.concatenate([pool[:: max(1, pool.size // 100)], CI.inputs(conv, 120, 11)])
        exp, judged = C.reference(conv, x, front_end)
        assert exp.dtype == conv.dst_dtype and judged.dtype == bool
        for k in range(x.size):
            want, jw = slow(conv, int(x[k]), front_end)
            where = f"{conv.id} src={int(x[k]):#x}"
            assert bool(judged[k]) == jw, where
            if not jw:
                continue
            if want == "nan":
                fmt = conv.dst_format
                assert (int(exp[k]) & fmt.abs_mask) > fmt.exp_mask, where
            else:
                assert int(exp[k]) == want, f"{where}: {int(exp[k]):#x} != {want:#x}"


def test_int_to_int_ignores_the_rounding_suffix():
    for c in (c for c in ALL if c.kind == "int_to_int" and c.rounding):
        x = CI.inputs(c, 300, 2)
        base = CT.Conversion(c.dst, c.src, c.sat, None)
        e1, j1 = C.reference(c, x)
        e2, j2 = C.reference(base, x)
        assert np.array_equal(e1, e2) and np.array_equal(j1, j2), c.id


# --------------------------------------------------------------------------- no false verdicts
@pytest.mark.parametrize("claims", [DENORM, FTZ], ids=["denorm", "ftz"])
def test_the_reference_passes_and_every_perturbation_fails(claims):
    """The reference's own results never fail; a result one bit (or one unit) off fails on
    every judged element where no allowance applies (no missed violation)."""
    for conv in ALL:
        x = CI.inputs(conv, 200, 5)
        exp, judged = C.reference(conv, x)
        res = C.check(conv, x, exp, claims)
        assert not res.failures, (conv.id, res.failures[:1])
        assert res.exact == int(judged.sum()) and res.unjudged == x.size - res.exact
        if claims is FTZ:
            continue
        if conv.dst_format is not None:
            bad = exp ^ conv.dst_dtype.type(1)
            nan = np.zeros(x.size, bool)
            if conv.src_format is not None:
                nan = is_nan(x, conv.src_format)
            want = judged & ~nan
        else:
            bad = exp + conv.dst_dtype.type(1)
            want = judged
        res = C.check(conv, x, bad, claims)
        got = sorted(f.index for f in res.failures)
        assert got == list(np.nonzero(want)[0]), conv.id


# --------------------------------------------------------------------------- rules
# (conversion, source, a result the rules accept, a result they reject, the rule it breaks)
CASES = [
    # rounding in each mode, ties included (float -> int)
    ("convert_int_rte(float)", f32(2.5), 2, 3, "CL.convert.rounding"),
    ("convert_int_rte(float)", f32(3.5), 4, 3, "CL.convert.rounding"),
    ("convert_int_rte(float)", f32(-2.5), -2, -3, "CL.convert.rounding"),
    ("convert_int_rtz(float)", f32(2.5), 2, 3, "CL.convert.rounding"),
    ("convert_int_rtz(float)", f32(-2.5), -2, -3, "CL.convert.rounding"),
    ("convert_int_rtp(float)", f32(2.5), 3, 2, "CL.convert.rounding"),
    ("convert_int_rtp(float)", f32(-2.5), -2, -3, "CL.convert.rounding"),
    ("convert_int_rtn(float)", f32(2.5), 2, 3, "CL.convert.rounding"),
    ("convert_int_rtn(float)", f32(-2.5), -3, -2, "CL.convert.rounding"),
    ("convert_int(float)", f32(-2.75), -2, -3, "CL.convert.rounding"),          # default rtz
    ("convert_long_rte(double)", f64(2.0**52 + 0.5), 2**52, 2**52 + 1, "CL.convert.rounding"),
    ("convert_uint_rtp(half)", f16(1.25), 2, 1, "CL.convert.rounding"),
    ("convert_uchar_rtn(float)", f32(0.5), 0, 1, "CL.convert.rounding"),
    # int -> float: 2**24+1 and 2**53+1
    ("convert_float(int)", 2**24 + 1, f32(2.0**24), f32(2.0**24 + 2), "CL.convert.rounding"),
    ("convert_float(int)", 2**24 + 3, f32(2.0**24 + 4), f32(2.0**24 + 2), "CL.convert.rounding"),
    ("convert_float_rtz(int)", 2**24 + 1, f32(2.0**24), f32(2.0**24 + 2), "CL.convert.rounding"),
    ("convert_float_rtp(int)", 2**24 + 1, f32(2.0**24 + 2), f32(2.0**24), "CL.convert.rounding"),
    ("convert_float_rtn(int)", -(2**24 + 1), f32(-(2.0**24 + 2)), f32(-(2.0**24)),
     "CL.convert.rounding"),
    ("convert_double(long)", 2**53 + 1, f64(2.0**53), f64(2.0**53 + 2), "CL.convert.rounding"),
    ("convert_double_rtp(long)", 2**53 + 1, f64(2.0**53 + 2), f64(2.0**53),
     "CL.convert.rounding"),
    ("convert_double_rtn(ulong)", 2**64 - 1, f64(2.0**64 - 2048), f64(2.0**64),
     "CL.convert.rounding"),
    ("convert_float(ulong)", 2**64 - 1, f32(2.0**64), f32(2.0**64 - 2**40),
     "CL.convert.rounding"),
    ("convert_half(int)", 65520, H.pos_inf, H.max_finite, "CL.convert.rounding"),
    ("convert_half_rtz(int)", 70000, H.max_finite, H.pos_inf, "CL.convert.rounding"),
    # float -> float narrowing: overflow to inf or to the largest finite value, ties
    ("convert_float(double)", D.max_finite, F.pos_inf, F.max_finite, "CL.convert.rounding"),
    ("convert_float_rtz(double)", D.max_finite, F.max_finite, F.pos_inf, "CL.convert.rounding"),
    ("convert_float_rtn(double)", D.max_finite, F.max_finite, F.pos_inf, "CL.convert.rounding"),
    ("convert_float_rtp(double)", D.sign_mask | D.max_finite, F.sign_mask | F.max_finite,
     F.sign_mask | F.pos_inf, "CL.convert.rounding"),
    ("convert_float_rtn(double)", D.sign_mask | D.max_finite, F.sign_mask | F.pos_inf,
     F.sign_mask | F.max_finite, "CL.convert.rounding"),
    ("convert_float(double)", f64(1 + 2.0**-24), f32(1.0), f32(1 + 2.0**-23),
     "CL.convert.rounding"),
    ("convert_float(double)", f64(1 + 3 * 2.0**-24), f32(1 + 2.0**-22), f32(1 + 2.0**-23),
     "CL.convert.rounding"),
    ("convert_float_rtp(double)", f64(1 + 2.0**-40), f32(1 + 2.0**-23), f32(1.0),
     "CL.convert.rounding"),
    ("convert_half(float)", f32(65520.0), H.pos_inf, H.max_finite, "CL.convert.rounding"),
    ("convert_half_rtz(float)", f32(65520.0), H.max_finite, H.pos_inf, "CL.convert.rounding"),
    ("convert_half(double)", f64(2.0**-25), 0, 1, "CL.convert.rounding"),          # tie to 0
    ("convert_float(double)", f64(3 * 2.0**-150), 2, 1, "CL.convert.rounding"),  # tie to even
    ("convert_float_rtp(double)", f64(2.0**-1074), 1, 0, "CL.convert.rounding"),
    ("convert_float(double)", D.pos_inf, F.pos_inf, F.max_finite, "CL.convert.rounding"),
    ("convert_double(float)", f32(float(np.float32(0.1))), f64(float(np.float32(0.1))), f64(0.1),
     "CL.convert.rounding"),
    # saturation at both ends
    ("convert_int_sat(float)", f32(3e9), INT_MAX, INT_MIN, "CL.convert.saturate"),
    ("convert_int_sat(float)", f32(-3e9), INT_MIN, INT_MAX, "CL.convert.saturate"),
    ("convert_int_sat(float)", F.pos_inf, INT_MAX, INT_MIN, "CL.convert.saturate"),
    ("convert_int_sat(float)", F.sign_mask | F.pos_inf, INT_MIN, 0, "CL.convert.saturate"),
    ("convert_uchar_sat(float)", f32(300.0), 255, 44, "CL.convert.saturate"),
    ("convert_uchar_sat(float)", f32(-1.0), 0, 255, "CL.convert.saturate"),
    ("convert_uchar_sat_rte(float)", f32(255.5), 255, 0, "CL.convert.saturate"),
    ("convert_long_sat(double)", f64(2.0**63), 2**63 - 1, -(2**63), "CL.convert.saturate"),
    ("convert_ulong_sat(float)", f32(2.0**64), 2**64 - 1, 0, "CL.convert.saturate"),
    ("convert_char_sat(int)", 300, 127, 44, "CL.convert.saturate"),
    ("convert_uint_sat(int)", -1, 0, 2**32 - 1, "CL.convert.saturate"),
    ("convert_int_sat(ulong)", 2**63, INT_MAX, -1, "CL.convert.saturate"),
    ("convert_int_sat(float)", f32(-2.5), -2, -3, "CL.convert.rounding"),         # in range
    # saturated NaN -> 0, where SPIR-V's SaturatedConversion governs ("NaN is converted to 0")
    ("convert_int_sat(float)", F.default_qnan, 0, INT_MIN, "SPIRV.convert.sat_nan_zero"),
    ("convert_uchar_sat_rtp(half)", H.exp_mask | 1, 0, 255, "SPIRV.convert.sat_nan_zero"),
    ("convert_ulong_sat(double)", D.sign_mask | D.default_qnan, 0, 2**63,
     "SPIRV.convert.sat_nan_zero"),
    # int -> int (C99 6.3.1.3)
    ("convert_uchar(int)", 300, 44, 255, "CL.convert.int_modulo"),
    ("convert_uint(int)", -1, 2**32 - 1, 0, "CL.convert.int_modulo"),
    ("convert_ushort(long)", -65537, 65535, 0, "CL.convert.int_modulo"),
    ("convert_ulong(char)", -1, 2**64 - 1, 255, "CL.convert.int_modulo"),
    ("convert_int(short)", -5, -5, 5, "CL.convert.int_value"),
    ("convert_char_rtp(long)", -128, -128, 127, "CL.convert.int_value"),
    # NaNs of float -> float: any NaN, quiet stays quiet
    ("convert_float(double)", D.default_qnan, F.default_qnan, F.pos_inf, "CL.convert.nan"),
    ("convert_float(double)", D.default_qnan | 5, F.default_qnan | 1, F.exp_mask | 1,
     "CL.convert.nan_quiet"),
    ("convert_float(double)", D.exp_mask | 1, F.default_qnan, F.pos_inf, "CL.convert.nan"),
    ("convert_double(half)", H.sign_mask | H.default_qnan, D.default_qnan, 0, "CL.convert.nan"),
    ("convert_half_rtz(float)", F.abs_mask, H.abs_mask, H.exp_mask | 1,
     "CL.convert.nan_quiet"),
]


@pytest.mark.parametrize("text,src,good,bad,rule", CASES,
                         ids=[f"{c[0]}-{c[4].split('.')[-1]}-{i}" for i, c in enumerate(CASES)])
def test_rule_passes_the_right_result_and_flags_a_wrong_one(text, src, good, bad, rule):
    lang = "spirv" if rule.startswith("SPIRV.") else "opencl-c"
    run = functools.partial(globals()["run"], front_end=lang)
    ok = run(text, src, good)
    assert not ok.findings, ok.findings
    assert ok.exact == 1 and ok.unjudged == 0
    res = run(text, src, bad)
    assert fails(res) == {rule}
    f = res.findings[0]
    assert f.function == CT.parse(text).id and f.output == "ret"
    assert f.inputs == (src if src >= 0 or CT.parse(text).src_format is None else src,)
    assert f.outputs[0] in (bad, bad % (1 << (8 * CT.parse(text).dst_dtype.itemsize)))
    assert f.section and f.sentence
    # the same rule still flags the result on a flushing device, unless the wrong result
    # is a zero that the flush-to-zero allowance admits (a tiny source or exact value)
    conv = CT.parse(text)
    ftz = run(text, src, bad, FTZ)
    sf, df = conv.src_format, conv.dst_format
    if (df and sf and not (bad & df.abs_mask) and (src & sf.abs_mask) < sf.pos_inf
            and abs(sf.value(src)) < df.value(df.min_normal)):
        assert not ftz.failures and ftz.flushed == 1
    else:
        assert fails(ftz) == {rule}


@pytest.mark.parametrize("text,src", [
    ("convert_int_sat(float)", F.default_qnan), ("convert_uchar_sat_rtp(half)", H.exp_mask | 1),
    ("convert_ulong_sat(double)", D.sign_mask | D.default_qnan),
    ("convert_short_sat_rtn(float)", F.abs_mask)])
@pytest.mark.parametrize("got", [0, 1, 255])
def test_a_saturated_nan_in_opencl_c_is_only_recommended_to_be_zero(text, src, got):
    """OpenCL C 3.0 §6.4.3.3: "(NaN should be converted to 0)": any integer conforms, the
    element is unjudged, and a result other than 0 is the note CL.convert.sat_nan_zero."""
    res = run(text, src, got)
    assert not res.failures
    assert res.exact == 0 and res.unjudged == 1
    assert notes(res) == (set() if got == 0 else {"CL.convert.sat_nan_zero"})
    if got:
        (f,) = res.findings
        assert f.expected == "0" and "should" in f.sentence and "should" in f.reading
    # the same result under the SPIR-V decoration's text is judged
    assert fails(run(text, src, got, front_end="spirv")) == (
        set() if got == 0 else {"SPIRV.convert.sat_nan_zero"})


def test_an_unknown_front_end_is_refused():
    with pytest.raises(ValueError, match="front_end=.glsl."):
        run("convert_int_sat(float)", 0, 0, front_end="glsl")


def test_a_signaling_nan_may_stay_signaling():
    """"A signaling NaN shall be converted to a NaN, and should be converted to a
    non-signaling NaN": should, not shall."""
    assert not run("convert_float(double)", D.exp_mask | 1, F.exp_mask | 1).findings
    assert not run("convert_double(float)", F.exp_mask | 7, D.default_qnan | 9).findings


def test_rounding_failures_measure_ulps_and_name_the_mode_used():
    res = run("convert_float(int)", 2**24 + 3, f32(2.0**24 + 2))  # rtz/rtn result
    (f,) = res.findings
    assert f.ulp_error == pytest.approx(0.5)
    assert "rtz" in f.reading and "rtn" in f.reading
    assert f.expected.startswith("0x4b800002") and "(rte)" in f.expected
    assert res.max_ulp_error == pytest.approx(0.5)
    res = run("convert_float_rtz(double)", D.max_finite, F.pos_inf)
    assert res.failures[0].ulp_error > 0.5 and "rte" in res.failures[0].reading
    assert run("convert_int(float)", f32(2.5), 3).failures[0].ulp_error is None


def test_a_conversion_wrong_everywhere_records_the_first_of_each_rule_and_counts_all():
    """FINDINGS_PER_RULE recorded per rule, the rest counted: every wrong element is in
    ``counts_by_rule`` and in the stored sample's counts, the ULPs measured as before."""
    from fuzzfarm.store.samples import sample_findings
    from fuzzfarm.verdict.findings import FINDINGS_PER_RULE
    conv = CT.parse("convert_float(int)")
    n = 3 * FINDINGS_PER_RULE
    src = np.arange(2**24 + 1, 2**24 + 1 + 2 * n, 2, dtype=np.int32)   # odd: ties or not
    want, _ = C.reference(conv, src)
    got = (want.astype(np.uint32) + np.uint32(1)).view(np.uint32)        # 1 ULP high: wrong
    zeros = np.zeros(n, np.int32)
    bad_zero = np.full(n, F.sign_mask, np.uint32)                        # -0 for 0: a note
    res = C.check(conv, np.concatenate([src, zeros]), np.concatenate([got, bad_zero]))
    assert res.counts_by_rule("fail") == {"CL.convert.rounding": n}
    assert res.counts_by_rule("note") == {"CL.convert.zero_sign": n}
    by_rule = {}
    for f in res.findings:
        by_rule[f.rule_id] = by_rule.get(f.rule_id, 0) + 1
    assert by_rule == {"CL.convert.rounding": FINDINGS_PER_RULE,
                       "CL.convert.zero_sign": FINDINGS_PER_RULE}
    assert [f.index for f in res.failures] == list(range(FINDINGS_PER_RULE))
    assert res.max_ulp_error == pytest.approx(1.0, abs=0.5)
    kept, count, _ = sample_findings(res, conv, F, seed=1)
    assert sum(count) == 2 * n
    # a batch with fewer wrong elements than the cap records every one, and per_rule=None
    # every one of any batch
    small = C.check(conv, src[:10], got[:10])
    assert len(small.findings) == 10 and not small.unrecorded
    every = C.check(conv, src, got, per_rule=None)
    assert len(every.findings) == n and not every.unrecorded


# --------------------------------------------------------------------------- unjudged
@pytest.mark.parametrize("got", [0, 1, INT_MAX, INT_MIN, -12345])
def test_out_of_range_unsaturated_float_to_int_accepts_anything(got):
    for src in (f32(3e9), f32(-3e9), F.pos_inf, F.sign_mask | F.pos_inf, F.default_qnan,
                F.exp_mask | 1):
        res = run("convert_int(float)", src, got)
        assert not res.findings and res.unjudged == 1 and res.exact == 0
    res = run("convert_long_rte(double)", f64(2.0**63), got)
    assert not res.findings and res.unjudged == 1


def test_out_of_range_operand_that_rounds_into_range_is_a_note():
    # -0.5 -> uint toward zero is 0: the operand is out of range (SPIR-V) but C99 defines 0
    assert not run("convert_uint(float)", f32(-0.5), 0).findings
    res = run("convert_uint(float)", f32(-0.5), 2**32 - 1)
    assert notes(res) == {"CL.convert.float_out_of_range_rounds_in"} and not res.failures
    assert res.unjudged == 1
    assert not run("convert_int(double)", f64(2147483647.5), INT_MAX).findings
    res = run("convert_int(double)", f64(2147483647.5), INT_MIN)
    assert notes(res) == {"CL.convert.float_out_of_range_rounds_in"} and not res.failures
    # rte rounds 2147483647.5 up, out of range: nothing to compare with
    assert not run("convert_int_rte(double)", f64(2147483647.5), INT_MIN).findings


def test_signed_int_out_of_range_is_implementation_defined():
    res = run("convert_char(int)", 300, 44)  # the two's-complement wrap
    assert not res.findings and res.unjudged == 1
    res = run("convert_char(int)", 300, 127)
    assert notes(res) == {"CL.convert.int_signed_out_of_range"} and not res.failures
    res = run("convert_long(ulong)", 2**64 - 1, 5)
    assert notes(res) == {"CL.convert.int_signed_out_of_range"} and not res.failures


def test_notes_are_never_failures():
    assert {r.id for r in CT.rules().values() if r.severity == "note"} == {
        "CL.convert.int_signed_out_of_range", "CL.convert.float_out_of_range_rounds_in",
        "CL.convert.zero_sign", "CL.convert.embedded_default_rtz", "CL.convert.sat_nan_zero"}
    for r in CT.rules().values():
        assert r.section and r.sentence
        if r.severity == "note":
            assert r.reading


# --------------------------------------------------------------------------- zeros
def test_zero_of_the_other_sign_is_a_note():
    assert not run("convert_float(double)", D.sign_mask, F.sign_mask).findings
    res = run("convert_float(double)", D.sign_mask, 0)
    assert notes(res) == {"CL.convert.zero_sign"} and not res.failures
    res = run("convert_float(int)", 0, F.sign_mask)
    assert notes(res) == {"CL.convert.zero_sign"} and not res.failures
    res = run("convert_float_rtz(double)", D.sign_mask | f64(2.0**-200), 0)
    assert notes(res) == {"CL.convert.zero_sign"} and not res.failures
    # but a zero where the result is not zero is a failure
    assert fails(run("convert_float_rtn(double)", D.sign_mask | f64(2.0**-200), F.sign_mask)) \
        == {"CL.convert.rounding"}


# --------------------------------------------------------------------------- flush to zero
def test_subnormal_float_source_of_a_widening():
    src = 1  # binary32 true_min = 2**-149
    want = f64(2.0**-149)
    assert not run("convert_double(float)", src, want).findings
    assert fails(run("convert_double(float)", src, 0)) == {"CL.convert.rounding"}
    for got in (0, D.sign_mask, want):
        res = run("convert_double(float)", src, got, FTZ)
        assert not res.failures
    res = run("convert_double(float)", src, 0, FTZ)
    assert res.flushed == 1
    assert fails(run("convert_double(float)", src, f64(1.0), FTZ)) == {"CL.convert.rounding"}


def test_subnormal_result_of_a_narrowing():
    src = f64(2.0**-140)  # a binary32 subnormal, exactly
    assert not run("convert_float(double)", src, 1 << 9).findings
    assert fails(run("convert_float(double)", src, 0)) == {"CL.convert.rounding"}
    assert not run("convert_float(double)", src, 0, FTZ).findings
    assert not run("convert_float(double)", src, F.sign_mask, FTZ).findings
    assert fails(run("convert_float(double)", src, 1 << 8, FTZ)) == {"CL.convert.rounding"}
    # subnormal before rounding, rounds up to FLT_MIN: may flush too
    src = f64(2.0**-126 - 2.0**-160)
    assert not run("convert_float(double)", src, F.min_normal).findings
    assert fails(run("convert_float(double)", src, 0)) == {"CL.convert.rounding"}
    assert not run("convert_float(double)", src, 0, FTZ).findings
    # a normal result may not flush
    assert fails(run("convert_float(double)", f64(2.0**-126), 0, FTZ)) == {"CL.convert.rounding"}


def test_binary64_never_flushes():
    assert fails(run("convert_double(double)", 1, 0, FTZ)) == {"CL.convert.rounding"}
    assert fails(run("convert_long_rtp(double)", 1, 0, FTZ)) == {"CL.convert.rounding"}
    assert fails(run("convert_double(long)", 1, 0, FTZ)) == {"CL.convert.rounding"}


def test_subnormal_source_of_float_to_int():
    assert not run("convert_int_rtp(float)", 1, 1).findings
    assert fails(run("convert_int_rtp(float)", 1, 0)) == {"CL.convert.rounding"}
    assert not run("convert_int_rtp(float)", 1, 0, FTZ).findings
    assert not run("convert_int_sat_rtn(float)", F.sign_mask | 1, 0, FTZ).findings
    assert fails(run("convert_int_sat_rtn(float)", F.sign_mask | 1, 0)) == {"CL.convert.rounding"}
    assert fails(run("convert_int_rtp(float)", 1, 2, FTZ)) == {"CL.convert.rounding"}


def test_claims_per_format():
    """half -> float: the half source may flush only if half flushes; the float result of
    a half subnormal is normal, so float's flushing does not matter."""
    half_ftz = {"binary16": Claims("binary16", denormals=False), "binary32": Claims()}
    float_ftz = {"binary16": Claims("binary16"), "binary32": Claims(denormals=False)}
    assert not run("convert_float(half)", 1, 0, half_ftz).findings
    assert fails(run("convert_float(half)", 1, 0, float_ftz)) == {"CL.convert.rounding"}
    # float -> half, result subnormal in half: the destination's claims decide
    src = f32(2.0**-20)
    assert not run("convert_half(float)", src, 0, half_ftz).findings
    assert fails(run("convert_half(float)", src, 0, float_ftz)) == {"CL.convert.rounding"}
    with pytest.raises(KeyError, match="binary16"):
        run("convert_float(half)", 1, 0, {"binary32": Claims()})


def test_a_format_the_claims_do_not_name_gets_the_allowances():
    """A single Claims speaks for its own precision; for the other non-double format the
    allowances apply (no false verdicts): flushing, and for half a default rounding toward
    zero (a note)."""
    float_only = Claims()  # binary32, with subnormals
    assert not run("convert_float(half)", 1, 0, float_only).findings
    assert not run("convert_half(float)", f32(2.0**-20), 0, float_only).findings
    res = run("convert_half(int)", 65520, H.max_finite, float_only)
    assert notes(res) == {"CL.convert.embedded_default_rtz"} and not res.failures
    assert fails(run("convert_half_rte(int)", 65520, H.max_finite, float_only)) == {
        "CL.convert.rounding"}
    # float <-> double with double's claims: float may flush, but its default is rte
    double_only = Claims("binary64")
    assert not run("convert_double(float)", 1, 0, double_only).findings
    assert not run("convert_float(double)", f64(2.0**-140), 0, double_only).findings
    assert fails(run("convert_float(double)", f64(1 + 2.0**-24 + 2.0**-30), f32(1.0),
                     double_only)) == {"CL.convert.rounding"}
    assert notes(run("convert_float(double)", f64(1 + 2.0**-24 + 2.0**-30), f32(1.0),
                     Claims("binary64", profile="embedded"))) == {"CL.convert.embedded_default_rtz"}


# --------------------------------------------------------------------------- embedded rtz
def test_default_rounding_toward_zero_on_an_rtz_only_device_is_a_note():
    rtz_dev = Claims(profile="embedded", rounding=("rtz",))
    src = 2**24 + 3
    assert not run("convert_float(int)", src, f32(2.0**24 + 4), rtz_dev).findings
    res = run("convert_float(int)", src, f32(2.0**24 + 2), rtz_dev)
    assert notes(res) == {"CL.convert.embedded_default_rtz"} and not res.failures
    assert fails(run("convert_float(int)", src, f32(2.0**24 + 6), rtz_dev)) == {
        "CL.convert.rounding"}
    # an explicit _rte binds every device; a full-profile device has no such allowance
    assert fails(run("convert_float_rte(int)", src, f32(2.0**24 + 2), rtz_dev)) == {
        "CL.convert.rounding"}
    assert fails(run("convert_float(int)", src, f32(2.0**24 + 2))) == {"CL.convert.rounding"}


# --------------------------------------------------------------------------- the table
def test_the_table():
    assert len(ALL) == 1045
    assert len({c.id for c in ALL}) == len(ALL)
    assert len({CK.kernel_name(c) for c in ALL}) == len(ALL)
    assert not [c for c in ALL if c.sat and c.dst in CT.FLOAT_TYPES]
    assert {c.kind for c in ALL} == {"float_to_int", "int_to_float", "float_to_float",
                                     "int_to_int"}
    some = CT.conversions(["int", "float"])
    assert {(c.src, c.dst) for c in some} == {("int", "int"), ("int", "float"),
                                              ("float", "int"), ("float", "float")}
    assert len(some) == 2 * 10 + 2 * 5
    with pytest.raises(ValueError, match="quad"):
        CT.conversions(["int", "quad"])


def test_conversion_properties():
    c = CT.parse("convert_int_sat_rte(float)")
    assert (c.dst, c.src, c.sat, c.rounding) == ("int", "float", True, "rte")
    assert c.name == "convert_int_sat_rte" and c.id == "convert_int_sat_rte(float)"
    assert c.mode == "rte" and c.precision == "binary32"
    assert c.src_dtype == np.uint32 and c.dst_dtype == np.int32
    assert CT.parse("convert_int(float)").mode == "rtz"
    assert CT.parse("convert_float(int)").mode == "rte"
    assert CT.parse("convert_short(long)").mode == "rtz"
    assert CT.parse("convert_short(long)").precision is None
    h = CT.parse("convert_half_rtn(double)")
    assert h.precision == "binary64" and h.src_dtype == np.uint64 and h.dst_dtype == np.uint16
    assert CT.parse("convert_ulong(uchar)").src_dtype == np.uint8
    assert CT.parse("convert_char(half)").dst_dtype == np.int8
    for c in ALL:
        assert CT.parse(c.id) == c
        assert CT.parse(f"  {c.name} ( {c.src} ) ") == c


@pytest.mark.parametrize("text,message", [
    ("convert_int", "no source type"),
    ("convert_int(float", "no source type"),
    ("cvt_int(float)", "does not start with 'convert_'"),
    ("convert_quad(float)", "destination type 'quad' is unknown"),
    ("convert_int(quad)", "source type 'quad' is unknown"),
    ("convert_int4(float4)", "vector type"),
    ("convert_float_sat(int)", "_sat is only valid for integer destinations"),
    ("convert_int_rte_sat(float)", "rounding suffix '_rte' must come once, last"),
    ("convert_int_rte_rtz(float)", "rounding suffix '_rte' must come once, last"),
    ("convert_int_sat_sat(float)", "'_sat' must come once"),
    ("convert_int_rtq(float)", "modifier '_rtq' is unknown"),
])
def test_parse_errors(text, message):
    with pytest.raises(ValueError, match=re.escape(message)) as e:
        CT.parse(text)
    assert "\n" not in str(e.value)


def test_conversion_validation():
    with pytest.raises(ValueError, match="_sat is only valid"):
        CT.Conversion("float", "int", sat=True)
    with pytest.raises(ValueError, match="rounding='rtq'"):
        CT.Conversion("int", "float", rounding="rtq")
    with pytest.raises(ValueError, match="dst='quad'"):
        CT.Conversion("quad", "float")


# --------------------------------------------------------------------------- kernels
def test_scalar_kernel_source():
    c = CT.parse("convert_int_sat_rte(float)")
    src = CK.kernel_source(c)
    assert CK.kernel_name(c) == "k_convert_int_sat_rte_from_float"
    assert "#pragma" not in src
    body = src[src.index("__kernel"):]
    assert body == (
        "__kernel void k_convert_int_sat_rte_from_float(\n"
        "    __global const uint *restrict in_x,\n"
        "    __global int *restrict out_ret)\n"
        "{\n"
        "    const size_t i = get_global_id(0);\n"
        "    const float x_v = as_float(in_x[i]);\n"
        "    const int ret_v = convert_int_sat_rte(x_v);\n"
        "    out_ret[i] = ret_v;\n"
        "}\n")


def test_vector_half_kernel_source():
    src = CK.kernel_source(CT.parse("convert_half_rtp(ulong)"), 4)
    assert "#pragma OPENCL EXTENSION cl_khr_fp16 : enable" in src
    assert "cl_khr_fp64" not in src
    assert "__global const ulong *restrict in_x" in src
    assert "__global ushort *restrict out_ret" in src
    assert "const ulong4 x_v = vload4(i, in_x);" in src
    assert "const half4 ret_v = convert_half4_rtp(x_v);" in src
    assert "vstore4(as_ushort4(ret_v), i, out_ret);" in src


def test_double_and_mixed_pragmas():
    src = CK.kernel_source(CT.parse("convert_float_rtz(double)"))
    assert "#pragma OPENCL EXTENSION cl_khr_fp64 : enable" in src and "cl_khr_fp16" not in src
    assert "const double x_v = as_double(in_x[i]);" in src
    assert "out_ret[i] = as_uint(ret_v);" in src
    both = CK.kernel_source(CT.parse("convert_double(half)"), 3)
    assert "cl_khr_fp16" in both and "cl_khr_fp64" in both
    assert "as_half3(vload3(i, in_x))" in both and "convert_double3(x_v)" in both
    assert "vstore3(as_ulong3(ret_v), i, out_ret);" in both
    ints = CK.kernel_source(CT.parse("convert_uchar_sat_rtn(short)"), 16)
    assert "#pragma" not in ints and "as_" not in ints
    assert "const short16 x_v = vload16(i, in_x);" in ints
    assert "convert_uchar16_sat_rtn(x_v)" in ints and "vstore16(ret_v, i, out_ret);" in ints
    assert CT.extensions(CT.parse("convert_double(half)")) == ("cl_khr_fp16", "cl_khr_fp64")
    assert CT.extensions(CT.parse("convert_int(uint)")) == ()


def test_program_source():
    convs = [CT.parse("convert_int(float)"), CT.parse("convert_double(long)"),
             CT.parse("convert_half(int)")]
    src = CK.program_source(convs, 2)
    assert src.count("#pragma OPENCL EXTENSION") == 2
    for c in convs:
        assert f"__kernel void {CK.kernel_name(c)}(" in src
        assert CK.kernel_source(c, 2).split("\n", 1)[1].lstrip("#").count("__kernel") == 1
    assert src.count("{") == src.count("}") == 3
    with pytest.raises(ValueError, match="empty"):
        CK.program_source([])
    with pytest.raises(ValueError, match="more than once"):
        CK.program_source(convs + convs[:1])
    with pytest.raises(ValueError, match="width=5"):
        CK.kernel_source(convs[0], 5)


# --------------------------------------------------------------------------- inputs
#: The two generators of a conversion unit's inputs: version-1 recipes (numpy's generator,
#: shuffled) and counter-based ones (an integer function of (key, row), made on the device
#: too: tests/test_conversion_screen.py compares the two makers).
GENERATORS = {"v1": CI.inputs, "counter": CI.counter_inputs}


@pytest.mark.parametrize("gen", GENERATORS)
def test_inputs_are_deterministic_and_typed(gen):
    inputs = GENERATORS[gen]
    c = CT.parse("convert_int_rte(float)")
    a, b = inputs(c, 5000, 3), inputs(c, 5000, 3)
    assert a.dtype == np.uint32 and a.size == 5000 and np.array_equal(a, b)
    assert not np.array_equal(a, inputs(c, 5000, 4))
    assert not np.array_equal(a, inputs(CT.parse("convert_int_rtz(float)"), 5000, 3))
    assert inputs(c, 0, 1).size == 0
    for conv in (CT.parse("convert_char(double)"), CT.parse("convert_half(long)"),
                 CT.parse("convert_float(half)")):
        x = inputs(conv, 999, 1)
        assert x.dtype == conv.src_dtype and x.size == 999
    with pytest.raises(ValueError, match="n=-1"):
        inputs(c, -1, 0)


def test_counter_inputs_at_any_rows_are_the_whole_parts():
    """A counter-based part's input at any row is the one the whole part has there (the
    check makes only the rows it reads), the landmarks first where the part holds twice
    them; a row outside the part is refused."""
    for text in ("convert_int_sat_rte(float)", "convert_half_rtz(double)",
                 "convert_float(long)", "convert_uchar(half)", "convert_int(long)"):
        c = CT.parse(text)
        pool = CI.special_inputs(c)
        for n in (2 * pool.size, 2 * pool.size - 1, 5000):
            whole = CI.counter_inputs(c, n, 9)
            rows = np.array([0, 1, n // 3, n - 1, 7, 7])
            assert np.array_equal(CI.counter_inputs_at(c, 9, n, rows), whole[rows])
            head = whole[:pool.size]
            assert np.array_equal(head, pool) == (n >= 2 * pool.size), (text, n)
        with pytest.raises(ValueError, match="rows"):
            CI.counter_inputs_at(c, 9, 10, [10])


def _values(conv, x):
    return to_float(x, conv.src_format)


@pytest.mark.parametrize("gen", GENERATORS)
def test_float_to_int_inputs_reach_every_class_and_boundary(gen):
    c = CT.parse("convert_int_rte(float)")
    x = GENERATORS[gen](c, 4000, 1)
    assert set(np.unique(classify(x, F))) == set(range(10))  # zeros ... qnan, snan
    v = _values(c, x)
    fin = np.isfinite(v)
    assert (v[fin] > INT_MAX).any() and (v[fin] < INT_MIN).any()
    inr = fin & (v >= INT_MIN) & (v <= INT_MAX)
    assert inr.sum() > 1000
    assert (np.abs(v[inr] - np.floor(v[inr]) - 0.5) == 0).sum() > 50   # ties
    pool = set(int(b) for b in CI.special_inputs(c))
    for want in (f32(2.0**31), f32(2.0**31 - 128), f32(-(2.0**31)), f32(2.0**24),
                 f32(2.0**24 + 2), f32(2.5), f32(-0.5), F.exp_mask | 1, F.default_qnan,
                 F.pos_inf, 1, F.min_normal - 1):
        assert want in pool, hex(want)
    # double sources get the exact ends and the halves just beyond them
    pool = set(int(b) for b in CI.special_inputs(CT.parse("convert_uint(double)")))
    for want in (f64(2.0**32 - 1), f64(2.0**32 - 0.5), f64(2.0**32), f64(-0.5), f64(-1.0),
                 f64(2.0**53 + 2), f64(2.0**53 - 1)):
        assert want in pool, hex(want)


@pytest.mark.parametrize("gen", GENERATORS)
def test_int_to_float_inputs_have_the_ties(gen):
    c = CT.parse("convert_float(long)")
    pool = set(int(v) for v in CI.special_inputs(c))
    for want in (2**24 + 1, 2**24 - 1, -(2**24 + 1), 2**53 + 1, 2**53 - 1, 2**63 - 1,
                 -(2**63), 2**31, -(2**31) - 1, 0, 1, -1):
        assert want in pool, want
    x = GENERATORS[gen](c, 4000, 2).astype(object)
    big = [int(v) for v in x if abs(int(v)) > 2**25]
    ties = [v for v in big if (abs(v) >> (abs(v).bit_length() - 25)) & 1
            and abs(v) % (1 << (abs(v).bit_length() - 25)) == 0]
    assert len(ties) > 50
    assert len({abs(int(v)).bit_length() for v in x}) > 50   # magnitudes of every size
    h = set(int(v) for v in CI.special_inputs(CT.parse("convert_half_rtz(uint)")))
    assert {65504, 65519, 65520, 65521, 65536, 2049, 2047} <= h
    d = set(int(v) for v in CI.special_inputs(CT.parse("convert_double(ulong)")))
    assert {2**53 + 1, 2**64 - 1, 2**63, 2**54 + 2} <= d


@pytest.mark.parametrize("gen", GENERATORS)
def test_float_to_float_inputs_have_the_destination_boundaries(gen):
    c = CT.parse("convert_half(double)")
    pool = set(int(b) for b in CI.special_inputs(c))
    for want in (f64(65504.0), f64(65520.0), f64(2.0**-24), f64(2.0**-25), f64(2.0**-14),
                 f64(1 + 2.0**-11), D.exp_mask | 1, D.sign_mask | 1, f64(2.0**11 + 1)):
        assert want in pool, hex(want)
    x = GENERATORS[gen](c, 4000, 3)
    frac = x.astype(np.uint64) & np.uint64((1 << 42) - 1)   # the bits half cannot hold
    assert (frac == np.uint64(1 << 41)).sum() > 100                      # exact ties
    v = np.abs(_values(c, x))
    assert ((v > 0) & (v < 2.0**-14)).sum() > 50 and ((v > 65504) & np.isfinite(v)).any()


@pytest.mark.parametrize("gen", GENERATORS)
def test_int_to_int_inputs_cover_every_type_boundary(gen):
    c = CT.parse("convert_char_sat(long)")
    pool = set(int(v) for v in CI.special_inputs(c))
    for t in CT.INT_TYPES:
        lo, hi = CT.int_range(t)
        for v in (lo - 1, lo, hi, hi + 1):
            if -(2**63) <= v < 2**63:
                assert v in pool, (t, v)
    x = GENERATORS[gen](c, 2000, 1)
    assert ((x < -128) | (x > 127)).sum() > 500 and ((x >= -128) & (x <= 127)).sum() > 150


def test_special_inputs_have_no_duplicates():
    for c in ALL[::7]:
        p = CI.special_inputs(c)
        assert p.dtype == c.src_dtype and np.unique(p).size == p.size >= 10


# --------------------------------------------------------------------------- arrays
def test_array_errors_and_coercion():
    c = CT.parse("convert_int(float)")
    with pytest.raises(ValueError, match="elements"):
        C.check(c, np.zeros(3, np.uint32), np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="bit patterns"):
        C.check(c, np.zeros(3, np.float32), np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="1-D"):
        C.reference(c, np.zeros((2, 2), np.uint32))
    # signed views of the bits and Python lists are accepted
    e1, _ = C.reference(c, np.asarray([f32(-2.5)], np.uint32))
    e2, _ = C.reference(c, np.asarray([f32(-2.5)], np.uint32).view(np.int32))
    e3, _ = C.reference(c, [f32(-2.5)])
    assert e1[0] == e2[0] == e3[0] == -2
    assert C.check(c, [], []).n == 0


# --------------------------------------------------------------------------- building
def test_conversion_kernels_are_prepared_together():
    """Conversions are built up front in programs of one (extension pragmas, width) and at
    most CONVERSIONS_PER_PROGRAM kernels, on every platform, each kernel cached under the
    very source a unit's launch asks for (kinds.Conversion.kernel)."""
    from types import SimpleNamespace

    from fuzzfarm.target import Target
    from fuzzfarm.work.conversion_kind import CONVERSIONS_PER_PROGRAM
    from fuzzfarm.work.kinds import kind_of

    class Recorder:
        def __init__(self, platform):
            self.info = SimpleNamespace(platform_name=platform)
            self.calls = []

        def prepare_sources(self, program, kernels, what):
            self.calls.append((program, kernels))
            return len(kernels)

    texts = ["convert_int_rte(float)", "convert_uchar_sat(float)", "convert_float(double)",
             "convert_double(long)", "convert_half(float)"]
    targets = [Target.of((t, CT.parse(t).precision, 1)) for t in texts]
    targets.append(Target.of(("convert_int_rte(float)", "binary32", 4)))
    kind = kind_of(targets[0])
    for platform in ("Portable Computing Language", "NVIDIA CUDA"):
        rec = Recorder(platform)
        kind.prepare_own(rec, targets)
        assert len(rec.calls) == 4      # (none, w1), (fp64, w1), (fp16, w1), (none, w4)
        cached = {}
        for program, kernels in rec.calls:
            for name, alone in kernels.items():
                assert f"__kernel void {name}(" in program
                cached[alone] = name
        for t in targets:
            name, source = kind.kernel(t)
            assert cached[source] == name
    # a group larger than a program holds is cut into programs of at most that many
    many = [Target.of((str(c), c.precision, 1)) for c in CT.conversions()
            if c.src == "float" and not CT.extensions(c)]
    assert len(many) > CONVERSIONS_PER_PROGRAM
    rec = Recorder("NVIDIA CUDA")
    kind.prepare_own(rec, many)
    sizes = [len(kernels) for _, kernels in rec.calls]
    assert sum(sizes) == len(many) and max(sizes) <= CONVERSIONS_PER_PROGRAM
