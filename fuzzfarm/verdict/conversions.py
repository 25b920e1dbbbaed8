"""The verdict on explicit conversions ``convert_<dst>[_sat][_rte|_rtz|_rtp|_rtn](<src>)``:
an exact vectorized reference and ``check``.  The table of valid conversions is
``edgecases.conversions``, their kernels ``fuzzfarm.device.conversion_kernels``, their
inputs ``strategies.conversions``.

Pure logic (docs/design.md, decision 9): no pyopencl, no Ray.

The rules (edgecases/data/conversions.toml, each with id, section and sentence):

* **Rounding** (``CL.convert.rounding``).  "Conversion between floating-point formats and
  explicit conversions must be correctly rounded" (SPIR-V Env, Relative Error as ULPs);
  without a suffix the mode is round to nearest even for conversions to floating-point
  types and round toward zero for conversions to integer types (Rounding Modes for
  Conversions; OpenCL C 3.0 §6.4.3.2).  A float->float or int->float result must be the
  one pattern IEEE 754 gives in the mode (overflow to infinity or to the largest finite
  value as the mode says); a float->int result of an in-range operand the one integer.
* **Out-of-range** float->int without ``_sat`` is implementation-defined (Out-of-Range
  Conversions): such elements are *unjudged* and counted.  An out-of-range operand whose
  rounded value is representable (-0.5 -> uint toward zero) is unjudged too, but a result
  other than the rounded value is a note (``CL.convert.float_out_of_range_rounds_in``).
* **Saturation** (``_sat``, integer destinations only; OpenCL C 3.0 §6.4.3.3): out-of-range
  values clamp to the nearest representable value (``CL.convert.saturate``).  A NaN
  "should be converted to 0" in OpenCL C (a recommendation: ``CL.convert.sat_nan_zero`` is a
  note and the element unjudged); in a kernel built from SPIR-V the SaturatedConversion
  decoration says "NaN is converted to 0" (``SPIRV.convert.sat_nan_zero``, a failure).
  ``check``'s ``front_end`` says which text governs.
* **int->int** follows C99 6.3.1.3: a representable value is unchanged
  (``CL.convert.int_value``), an unsigned destination wraps modulo 2**N
  (``CL.convert.int_modulo``), a signed destination out of range is implementation-defined
  (unjudged; a result other than the two's-complement wrap is a note).  Rounding suffixes
  have no effect on int->int.
* **NaN** of float->float: any NaN, and a quiet NaN stays quiet (``CL.convert.nan``,
  ``CL.convert.nan_quiet``); sign and payload are free (Additional Requirements).
* **Flush to zero** (SPIR-V Env "INF, NaN, and Denormalized Numbers", Edge Case Behavior
  in Flush To Zero Mode): on a device without CL_FP_DENORM for a format, a subnormal
  source of that format may be read as a zero of either sign, and a result that is
  subnormal before rounding may be a zero of either sign.  binary64 never flushes.
* A zero of the other sign than IEEE 754 gives is a note (``CL.convert.zero_sign``), and so
  is a conversion without suffix that rounds toward zero on a device claiming round toward
  zero but not round to nearest for that format (``CL.convert.embedded_default_rtz``).

Values travel as bits (docs/design.md, decision 1): float sources and results are unsigned bit
patterns (uint16/uint32/uint64), integers their own numpy type (int8 ... uint64).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping, NamedTuple

import mpmath
import numpy as np

from edgecases.conversions import INT_TYPES, ROUNDINGS, RULE_IDS, Conversion, int_range, rules
from edgecases.modality import check_front_end
from fuzzfarm import formats
from fuzzfarm.formats import BINARY16, BINARY64, FloatFormat
from fuzzfarm.oracle import ulp_error
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.verdict.findings import FINDINGS_PER_RULE, CheckResult, Finding

__all__ = ["ConversionResult", "reference", "check", "check_screened", "check_rows",
           "MAX_MEASURED"]

# Per-element rule codes (indices into edgecases.conversions.RULE_IDS).
(R_ROUNDING, R_SATURATE, R_SAT_NAN, R_INT_VALUE, R_INT_MODULO, R_NAN, R_NAN_QUIET,
 R_SIGNED_OOR, R_ROUNDS_IN, R_ZERO_SIGN, R_EMBEDDED, R_SAT_NAN_SPIRV) = range(12)

#: The ULP error of at most this many failing float results per batch is measured with
#: mpmath (the others carry ulp_error None): a broken device must not stall the checker.
MAX_MEASURED = 1000


# --------------------------------------------------------------------------- coercion
def _coerce(arr, dtype: np.dtype, what: str) -> np.ndarray:
    """``arr`` as a 1-D array of ``dtype`` (an integer dtype): same-size integer arrays are
    reinterpreted, other integer arrays converted when every value fits the width."""
    a = np.asarray(arr)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1:
        raise ValueError(f"{what} has shape {a.shape}; give a 1-D array")
    if a.dtype == dtype:
        return a
    if a.size == 0:
        return np.zeros(0, dtype)
    if a.dtype.kind not in "iu":
        raise ValueError(f"{what} has dtype {a.dtype}; give {dtype} (floats as bit patterns)")
    if a.dtype.itemsize == dtype.itemsize:
        return a.view(dtype)
    nbits = 8 * dtype.itemsize
    if a.size and (int(a.min()) < -(1 << (nbits - 1)) or int(a.max()) > (1 << nbits) - 1):
        raise ValueError(f"{what} has values outside {nbits} bits; give {dtype}")
    # numpy's integer casts wrap modulo 2**nbits: negative values become their patterns
    return a.astype(np.int64).astype(np.dtype(f"u{dtype.itemsize}")).view(dtype)


# --------------------------------------------------------------------------- exact helpers
_U1 = np.uint64(1)


def _bit_length(m: np.ndarray) -> np.ndarray:
    """Bit lengths (uint64) of a uint64 array (0 for 0)."""
    m = np.asarray(m, np.uint64)
    # float64's exponent gives the length, one too many where the cast rounded m up to a
    # power of two (m >= 2**L - 2**(L-54)); the shift test corrects those.
    n = np.minimum(np.frexp(m.astype(np.float64))[1], 64).astype(np.uint64)
    too_big = (n > 0) & ((m >> (np.maximum(n, _U1) - _U1)) == 0)
    return n - too_big.astype(np.uint64)


def _sign_mag(vals: np.ndarray, type_name: str) -> tuple[np.ndarray, np.ndarray]:
    """(negative, |value| as uint64) of an integer array (exact for int64's minimum)."""
    if INT_TYPES[type_name][1]:
        v = vals.astype(np.int64)
        neg = v < 0
        mag = np.where(neg, (~v).view(np.uint64) + _U1, v.view(np.uint64))
        return neg, mag
    return np.zeros(vals.shape, bool), vals.astype(np.uint64)


def _round_int_to_format(mag: np.ndarray, neg: np.ndarray, fmt: FloatFormat,
                         mode: str) -> np.ndarray:
    """Patterns (fmt.uint) of the integers ``(-1 if neg else 1) * mag`` (uint64 magnitudes)
    correctly rounded to ``fmt`` in ``mode``: exact integer arithmetic, overflow to
    infinity or to the largest finite value as IEEE 754-2008 §7.4 gives for the mode;
    integer 0 gives +0."""
    p = fmt.precision
    length = _bit_length(mag)
    shift = np.maximum(length.astype(np.int64) - p, 0).astype(np.uint64)
    q = mag >> shift
    rem = mag & ((_U1 << shift) - _U1)
    half = _U1 << (np.maximum(shift, _U1) - _U1)
    inexact = rem != 0
    if mode == "rte":
        inc = inexact & ((rem > half) | ((rem == half) & ((q & _U1) == 1)))
    elif mode == "rtz":
        inc = np.zeros(mag.shape, bool)
    elif mode == "rtp":
        inc = inexact & ~neg
    elif mode == "rtn":
        inc = inexact & neg
    else:
        raise ValueError(f"mode={mode!r} is not one of {ROUNDINGS}")
    q = q + inc.astype(np.uint64)
    carry = (q >> np.uint64(p)) != 0
    q = np.where(carry, q >> _U1, q)
    shift = shift + carry.astype(np.uint64)
    lq = _bit_length(q)
    top = shift.astype(np.int64) + lq.astype(np.int64) - 1
    frac = (q << (np.uint64(p) - np.minimum(lq, np.uint64(p)))) - (_U1 << np.uint64(p - 1))
    biased = np.clip(top + fmt.emax, 0, None).astype(np.uint64)
    bits = (biased << np.uint64(fmt.frac_bits)) | (frac & np.uint64(fmt.frac_mask))
    to_inf = _overflows_to_inf(mode, neg)
    over = top > fmt.emax
    bits = np.where(over, np.where(to_inf, np.uint64(fmt.pos_inf), np.uint64(fmt.max_finite)),
                    bits)
    bits = np.where(mag == 0, np.uint64(0), bits)
    bits = bits | np.where(neg & (mag != 0), np.uint64(fmt.sign_mask), np.uint64(0))
    return bits.astype(fmt.uint)


def _overflows_to_inf(mode: str, neg: np.ndarray) -> np.ndarray:
    if mode == "rte":
        return np.ones(neg.shape, bool)
    if mode == "rtz":
        return np.zeros(neg.shape, bool)
    return ~neg if mode == "rtp" else neg.copy()


def _round_f64_to_format(v: np.ndarray, fmt: FloatFormat, mode: str) -> np.ndarray:
    """Patterns (fmt.uint) of the non-NaN float64 values ``v`` (taken as exact) correctly
    rounded to ``fmt`` in ``mode``: numpy's cast rounds to nearest even (IEEE 754 for
    every format, subnormals and overflow included); a directed mode moves that result by
    one step where it lies on the wrong side of ``v``."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        r = v.astype(fmt.float)
    bits = r.view(fmt.uint).copy()
    if mode == "rte":
        return bits
    r64 = r.astype(np.float64)
    neg_r = (bits & fmt.uint(fmt.sign_mask)) != 0
    if mode == "rtz":
        toward0 = np.abs(r64) > np.abs(v)
        away = np.zeros(v.shape, bool)
    elif mode == "rtp":
        wrong = r64 < v
        toward0, away = wrong & neg_r, wrong & ~neg_r
    elif mode == "rtn":
        wrong = r64 > v
        toward0, away = wrong & ~neg_r, wrong & neg_r
    else:
        raise ValueError(f"mode={mode!r} is not one of {ROUNDINGS}")
    one = fmt.uint(1)
    bits = np.where(toward0, bits - one, bits)
    return np.where(away, bits + one, bits).astype(fmt.uint)


_ROUND_F64 = {"rte": np.rint, "rtz": np.trunc, "rtp": np.ceil, "rtn": np.floor}


def _above(x: np.ndarray, hi: int, bits: int) -> np.ndarray:
    """x > hi exactly, for float64 x (NaN-free) and an integer type's maximum ``hi``."""
    if bits < 64:
        return x > float(hi)
    return x >= float(hi + 1)  # no float64 lies in (2**63 - 1, 2**63) or (2**64 - 1, 2**64)


def _claims_for(fmt: FloatFormat, claims) -> Claims | None:
    """The claims that speak for ``fmt``, or None when ``claims`` says nothing about it
    (a single Claims of another precision)."""
    if claims is None:
        return Claims(precision=fmt.name)
    if isinstance(claims, Claims):
        return claims if claims.precision in (fmt.name, fmt.c_type) else None
    if isinstance(claims, Mapping):
        for key in (fmt.name, fmt.c_type):
            if key in claims:
                return claims[key]
        raise KeyError(f"claims has no entry for {fmt.name}; give one Claims per format "
                       f"the conversion involves, keyed 'binary16'/'binary32'/'binary64'")
    raise TypeError(f"claims={claims!r}: give a fuzzfarm.verdict.claims.Claims or a dict of them")


def _flushes(fmt: FloatFormat | None, claims) -> bool:
    """Whether the device may flush subnormals of ``fmt``: never for binary64 (support
    is required), else unless the claims for ``fmt`` have CL_FP_DENORM; a format the
    claims say nothing about may flush (no false verdicts)."""
    if fmt is None or fmt is BINARY64:
        return False
    c = _claims_for(fmt, claims)
    return c is None or not c.denormals


def _may_default_to_rtz(fmt: FloatFormat, claims) -> bool:
    """Whether the device may round toward zero by default in ``fmt`` (SPIR-V Env,
    Rounding Modes): never binary64; binary32 only on an embedded-profile device; binary16
    on any device.  Decided by the claims for ``fmt`` (their rounding lacks 'rte'), or, when
    they say nothing about ``fmt``, by what the profile allows."""
    if fmt is BINARY64:
        return False
    c = _claims_for(fmt, claims)
    if c is not None:
        return "rte" not in c.rounding
    return fmt is BINARY16 or getattr(claims, "profile", "full") == "embedded"


# --------------------------------------------------------------------------- reference
@dataclass
class _Eval:
    """Per-element analysis of one batch: what is expected and under which rule."""

    expected: np.ndarray       # dst dtype
    judged: np.ndarray         # bool: the expectation binds
    rule: np.ndarray           # uint8 rule codes of the judged elements
    alt: np.ndarray            # dst dtype: value a note compares unjudged elements with
    alt_mask: np.ndarray       # bool
    alt_rule: int
    src_sub: np.ndarray        # bool: subnormal float source (a flushable operand)
    tiny: np.ndarray           # bool: float dst, exact value nonzero and below dst's min normal
    nan: np.ndarray            # bool: NaN source
    qnan: np.ndarray           # bool: quiet NaN source


class _Part(NamedTuple):
    """What one kind of conversion decides: the expected values, which are judged, the
    alternative result a rule allows where ``alt_mask`` (under ``alt_rule``), and the
    results too small for the destination's normals (``tiny``, float to float)."""

    expected: np.ndarray
    judged: np.ndarray
    alt: np.ndarray | None = None
    alt_mask: np.ndarray | None = None
    alt_rule: int = R_ROUNDING
    tiny: np.ndarray | None = None


def _float_to_int(conv: Conversion, src, nan, rule, front_end: str) -> _Part:
    n, dt = src.size, conv.dst_dtype
    lo, hi = int_range(conv.dst)
    bits = INT_TYPES[conv.dst][0]
    x = np.where(nan, 0.0, formats.to_float(src, conv.src_format))
    r = _ROUND_F64[conv.mode](x)
    below, above = x < float(lo), _above(x, hi, bits)
    inr = ~(below | above) & ~nan
    expected = np.zeros(n, dt)
    expected[inr] = r[inr].astype(dt)
    if conv.sat:
        expected[below] = lo
        expected[above] = hi
        rule[below | above] = R_SATURATE
        if front_end == "spirv":     # SaturatedConversion: "NaN is converted to 0"
            rule[nan] = R_SAT_NAN_SPIRV
            return _Part(expected, np.ones(n, bool))
        # OpenCL C §6.4.3.3: "NaN should be converted to 0"
        return _Part(expected, ~nan, alt_mask=nan, alt_rule=R_SAT_NAN)
    alt = np.zeros(n, dt)
    with np.errstate(invalid="ignore"):
        alt_mask = (below | above) & np.isfinite(x) & (r >= float(lo)) & ~_above(
            np.where(np.isfinite(r), r, 0.0), hi, bits)
    alt[alt_mask] = r[alt_mask].astype(dt)
    return _Part(expected, inr, alt, alt_mask, R_ROUNDS_IN)


def _int_to_float(conv: Conversion, src, nan, rule, front_end: str) -> _Part:
    D = conv.dst_format
    if INT_TYPES[conv.src][0] <= 32:   # exact in float64: round that (faster)
        expected = _round_f64_to_format(src.astype(np.float64), D, conv.mode)
    else:
        neg, mag = _sign_mag(src, conv.src)
        expected = _round_int_to_format(mag, neg, D, conv.mode)
    return _Part(expected, np.ones(src.size, bool))


def _float_to_float(conv: Conversion, src, nan, rule, front_end: str) -> _Part:
    S, D = conv.src_format, conv.dst_format
    v = np.where(nan, 0.0, formats.to_float(src, S))
    if D.precision >= S.precision:
        expected = v.astype(D.float).view(D.uint)  # widening: exact
    else:
        expected = _round_f64_to_format(v, D, conv.mode)
    sign = np.where(formats.sign_bit(src, S), D.uint(D.sign_mask), D.uint(0))
    expected = np.where(nan, D.uint(D.default_qnan) | sign, expected).astype(D.uint)
    rule[nan] = R_NAN
    return _Part(expected, np.ones(src.size, bool),
                 tiny=(v != 0) & (np.abs(v) < D.value(D.min_normal)))


def _int_to_int(conv: Conversion, src, nan, rule, front_end: str) -> _Part:
    n, dt = src.size, conv.dst_dtype
    lo, hi = int_range(conv.dst)
    slo, shi = int_range(conv.src)
    if INT_TYPES[conv.src][1]:
        v = src.astype(np.int64)
        below = v < np.int64(max(lo, slo))
        above = v > np.int64(min(hi, shi))
    else:
        v = src.astype(np.uint64)
        below = np.zeros(n, bool)
        above = v > np.uint64(min(hi, shi))
    oor = below | above
    wrap = src.astype(dt)  # numpy's integer casts wrap modulo 2**N
    expected = wrap.copy()
    rule[:] = R_INT_VALUE
    if conv.sat:
        expected[below] = lo
        expected[above] = hi
        rule[oor] = R_SATURATE
        return _Part(expected, np.ones(n, bool))
    if not INT_TYPES[conv.dst][1]:
        rule[oor] = R_INT_MODULO
        return _Part(expected, np.ones(n, bool))
    return _Part(expected, ~oor, wrap, oor, R_SIGNED_OOR)


#: How each kind of conversion is evaluated (Conversion.kind).
_EVALUATORS = {"float_to_int": _float_to_int, "int_to_float": _int_to_float,
               "float_to_float": _float_to_float, "int_to_int": _int_to_int}


def _evaluate(conv: Conversion, src: np.ndarray, front_end: str = "opencl-c") -> _Eval:
    n = src.size
    none = np.zeros(n, bool)
    S = conv.src_format
    nan = formats.is_nan(src, S) if S else none
    qnan = formats.is_qnan(src, S) if S else none
    src_sub = formats.is_subnormal(src, S) if (S and S is not BINARY64) else none
    rule = np.full(n, R_ROUNDING, np.uint8)
    p = _EVALUATORS[conv.kind](conv, src, nan, rule, front_end)
    return _Eval(np.asarray(p.expected, conv.dst_dtype), p.judged, rule,
                 np.zeros(n, conv.dst_dtype) if p.alt is None else p.alt,
                 none if p.alt_mask is None else p.alt_mask, p.alt_rule, src_sub,
                 none if p.tiny is None else p.tiny, nan, qnan)


def reference(conv: Conversion, src: np.ndarray,
              front_end: str = "opencl-c") -> tuple[np.ndarray, np.ndarray]:
    """The exact results of ``conv`` on ``src`` (vectorized).

    ``src``: 1-D array of ``conv.src_dtype`` (float sources as bit patterns; a same-size
    integer array is reinterpreted).  Returns ``(expected, judged)``: ``expected`` of
    ``conv.dst_dtype`` (float results as bit patterns) and ``judged`` (bool), False where
    the result is implementation-defined (float->int without ``_sat`` of an out-of-range
    or NaN operand; int->signed-int without ``_sat`` out of range) or only recommended (a
    NaN operand of a ``_sat`` float->int conversion in OpenCL C, ``front_end='opencl-c'``;
    judged, expecting 0, under ``front_end='spirv'``), where ``expected`` is meaningless.
    For a NaN source of a float->float conversion ``expected`` holds a quiet NaN with the
    source's sign; ``check`` accepts any NaN (quiet if the source was).
    The expected values are the ones of a device with subnormals; ``check`` applies the
    flush-to-zero allowances.  Exact for every pair: float64 holds every half/float/double
    value, int->float rounds with integer arithmetic, float->float narrowing corrects
    numpy's round-to-nearest cast in the directed modes.  Raises ValueError for a
    malformed ``src`` or an unknown ``front_end``.
    """
    check_front_end(front_end)
    ev = _evaluate(conv, _coerce(src, conv.src_dtype, "src"), front_end)
    return ev.expected, ev.judged


# --------------------------------------------------------------------------- the verdict
@dataclass
class ConversionResult(CheckResult):
    """A CheckResult with the counts conversions add: ``unjudged`` elements
    (implementation-defined results, never failed) and ``flushed`` (passed only through a
    flush-to-zero allowance).  ``exact`` counts the judged elements."""

    unjudged: int = 0
    flushed: int = 0


def _describe(bits: int, conv: Conversion) -> str:
    D = conv.dst_format
    if D is None:
        return formats.describe_value(np.dtype(conv.dst_dtype).name, bits)
    b = int(bits)
    if (b & D.abs_mask) > D.exp_mask:
        return f"{D.hex(b)} (NaN)"
    v = D.value(b)
    if v == 0:
        return f"{D.hex(b)} ({'-' if b & D.sign_mask else '+'}0)"
    return f"{D.hex(b)} ({v!r})"


def _exact_value(conv: Conversion, s: int):
    """The source value as an exact mpf (non-NaN sources only; call under a working
    precision of at least 64 bits)."""
    if conv.src_format is not None:
        return mpmath.mpf(conv.src_format.value(s))
    return mpmath.mpf(int(s))


def check(conv: Conversion, src: np.ndarray, got: np.ndarray, claims=None,
          front_end: str = "opencl-c", per_rule: int | None = FINDINGS_PER_RULE
          ) -> ConversionResult:
    """Judge one batch of device results of ``conv``.

    ``src``: 1-D ``conv.src_dtype`` array (float bits); ``got``: the device's results, 1-D
    ``conv.dst_dtype`` of the same length (float bits; same-size integer arrays are
    reinterpreted).  ``claims``: a fuzzfarm.verdict.claims.Claims, or a dict of them keyed by
    format name ('binary16', 'binary32', 'binary64') for a conversion between two float
    formats; None means a full-profile device with subnormals and round to nearest.  A
    single Claims speaks for the format of its ``precision``; for another binary16 or
    binary32 format involved nothing is known, so the flush-to-zero allowances apply to it
    (binary64 never flushes) and, where the profile permits (binary16; binary32 on the
    embedded profile), a default-mode result rounded toward zero is a note.  Pass a dict
    for an exact verdict on half<->float and float<->double conversions.  ``front_end``
    is how the kernel entered the driver, which decides the text that governs a saturated
    conversion of a NaN: 'opencl-c' (the default, OpenCL C source) makes a
    result other than 0 the note ``CL.convert.sat_nan_zero`` ("should", OpenCL C 3.0
    §6.4.3.3), 'spirv' the failure ``SPIRV.convert.sat_nan_zero`` (the SaturatedConversion
    decoration: "NaN is converted to 0").

    Returns a ConversionResult (a CheckResult): ``function`` is ``conv.id``; findings
    (fuzzfarm.verdict.findings.Finding, sorted by element) with rule ids of
    edgecases/data/conversions.toml, inputs and outputs as bits (float) or values (int),
    ``ulp_error`` in ULPs of the destination for failing float results (the first
    ``MAX_MEASURED``); ``exact`` counts judged elements, ``unjudged`` the
    implementation-defined ones, ``flushed`` those passed by a flush-to-zero allowance;
    ``max_ulp_error`` is the largest measured (NaN when none was); the first ``per_rule``
    findings of a rule recorded (None: all), the rest counted (``unrecorded``).  Raises
    ValueError for arrays of the wrong shape, length or dtype, KeyError for a claims dict
    lacking a format, or an unknown ``front_end``."""
    check_front_end(front_end)
    src = _coerce(src, conv.src_dtype, "src")
    got = _coerce(got, conv.dst_dtype, "got")
    if src.size != got.size:
        raise ValueError(f"src has {src.size} elements and got {got.size}; give one result "
                         f"per source element")
    n = src.size
    res = ConversionResult(conv.id, n)
    if n == 0:
        return res
    ev = _evaluate(conv, src, front_end)
    S, D = conv.src_format, conv.dst_format
    ok = got == ev.expected
    note = np.zeros(n, bool)
    note_rule = np.zeros(n, np.uint8)
    fail_rule = ev.rule.copy()
    flushed = np.zeros(n, bool)
    if D is not None:
        gnan = formats.is_nan(got, D)
        gzero = formats.is_zero(got, D)
        bad_quiet = ev.qnan & formats.is_snan(got, D)
        ok = np.where(ev.nan, gnan & ~bad_quiet, ok & ~gnan)
        fail_rule[ev.nan & bad_quiet] = R_NAN_QUIET
        if _flushes(S, claims):
            flushed |= ev.src_sub & gzero & ~ok
        if _flushes(D, claims):
            flushed |= ev.tiny & gzero & ~ok
        ok |= flushed
        zs = ~ok & ~ev.nan & gzero & formats.is_zero(ev.expected, D)
        note |= zs
        note_rule[zs] = R_ZERO_SIGN
        if conv.rounding is None and _may_default_to_rtz(D, claims) and (~ok & ~note).any():
            rtz = _evaluate(replace(conv, rounding="rtz"), src).expected
            emb = ~ok & ~note & ~ev.nan & (got == rtz)
            note |= emb
            note_rule[emb] = R_EMBEDDED
    elif _flushes(S, claims):
        flushed = ev.src_sub & (got == 0) & ~ok & ev.judged
        ok |= flushed
    # Unjudged elements: notes where the result is not the one the texts lean to.
    odd = ~ev.judged & ev.alt_mask & (got != ev.alt)
    note |= odd
    note_rule[odd] = ev.alt_rule
    fail = ev.judged & ~ok & ~note
    res.exact = int(ev.judged.sum())
    res.unjudged = int(n - res.exact)
    res.flushed = int((flushed & ev.judged).sum())
    _report(conv, src, got, ev, fail, fail_rule, note & ~fail, note_rule, res, per_rule)
    return res


def check_screened(conv: Conversion, src: np.ndarray, got: np.ndarray, answer,
                   claims=None, front_end: str = "opencl-c") -> ConversionResult:
    """The verdict on a batch the device has judged (``answer``: the
    oracle.conversion_screen.ConversionAnswer of the same ``src`` and ``got``): ``check``
    over the elements the device did not decide, every finding's ``index`` a position in
    the batch; the decided ones count as ``screened`` (judged, the reference bit for bit)
    or ``unjudged`` (implementation-defined, no note applies).  The same verdict as
    ``check`` on the whole batch (docs/device_screen.md, "Conversions"; tests) under
    ``front_end``, whose texts the device's decisions followed (``screen_for`` of the same
    front end).  Arguments and errors as ``check``."""
    src = _coerce(src, conv.src_dtype, "src")
    got = _coerce(got, conv.dst_dtype, "got")
    if src.size != got.size:
        raise ValueError(f"src has {src.size} elements and got {got.size}; give one result "
                         f"per source element")
    todo = answer.undecided(src.size)
    return check_rows(conv, src.size, todo, src[todo], got[todo], answer, claims, front_end)


def check_rows(conv: Conversion, n: int, todo: np.ndarray, src: np.ndarray, got: np.ndarray,
               answer, claims=None, front_end: str = "opencl-c") -> ConversionResult:
    """``check_screened`` given only the rows the device did not decide: their positions
    ``todo`` (int64, sorted, ``answer.undecided(n)``) in a batch of ``n``, their sources
    and results (as ``check`` takes them)."""
    res = check(conv, src, got, claims, front_end)
    for f in res.findings:
        f.index = int(todo[f.index])
    res.n = n
    res.unjudged += answer.unjudged
    res.screened += n - len(todo) - answer.unjudged
    return res


def _other_modes(conv: Conversion, src: np.ndarray, got: np.ndarray, idx: np.ndarray) -> dict:
    """For failing rounding elements: which other rounding modes give the device's result
    (a hint for triage, in the finding's reading)."""
    hints = {}
    if conv.kind == "int_to_int" or idx.size == 0:
        return hints
    sub = src[idx]
    for m in ROUNDINGS:
        if m == conv.mode:
            continue
        e = _evaluate(replace(conv, rounding=m), sub).expected
        for j in np.nonzero(e == got[idx])[0]:
            hints.setdefault(int(idx[j]), []).append(m)
    return hints


def _report(conv, src, got, ev, fail, fail_rule, note, note_rule, res,
            per_rule: int | None = FINDINGS_PER_RULE) -> None:
    table = rules()
    D = conv.dst_format
    measured = 0
    max_err = float("nan")
    findings = []
    rows = np.flatnonzero(fail | note)
    codes = np.where(fail[rows], fail_rule[rows], note_rule[rows])
    # the first ``per_rule`` of each rule recorded, the rest counted (a conversion that
    # is wrong everywhere must not make a Finding per element)
    keep = np.ones(rows.size, bool)
    for code in np.unique(codes).tolist() if per_rule is not None else ():
        at = np.flatnonzero(codes == code)
        if at.size > per_rule:
            keep[at[per_rule:]] = False
            rule = table[RULE_IDS[code]]
            res.add_unrecorded(rule.id, rule.severity, -1, at.size - per_rule)
    rows, codes = rows[keep], codes[keep]
    hints = _other_modes(conv, src, got, rows[fail[rows] & (codes == R_ROUNDING)])
    for i, code in zip(rows.tolist(), codes.tolist()):
        is_fail = bool(fail[i])
        rule = table[RULE_IDS[code]]
        s, g = int(src[i]), int(got[i])
        if code == R_NAN:
            expected = "any NaN"
        elif code == R_NAN_QUIET:
            expected = "a quiet NaN"
        elif code in (R_SIGNED_OOR, R_ROUNDS_IN, R_SAT_NAN):
            expected = _describe(ev.alt[i], conv)
        elif code == R_EMBEDDED:
            expected = _describe(ev.expected[i], conv) + f" ({conv.mode})"
        else:
            expected = _describe(ev.expected[i], conv) + (
                f" ({conv.mode})" if code == R_ROUNDING and conv.kind != "int_to_int" else "")
        reading = rule.reading
        if int(i) in hints:
            reading = (reading + " " if reading else "") + (
                f"The result is the one rounded in mode {', '.join(hints[int(i)])}.")
        err = None
        if (is_fail and D is not None and code == R_ROUNDING and measured < MAX_MEASURED
                and (g & D.abs_mask) <= D.exp_mask and not ev.nan[i]):
            measured += 1
            with mpmath.workprec(128):
                ref = _exact_value(conv, s)
                if mpmath.isfinite(ref):
                    err = ulp_error(g, ref, D, (conv.mode,))
            if err is not None and math.isfinite(err):
                max_err = err if math.isnan(max_err) else max(max_err, err)
        findings.append(Finding(int(i), conv.id, rule.id, rule.section, rule.sentence,
                                rule.severity, "ret", (s,), (g,), expected, err, reading))
    res.findings = findings
    res.max_ulp_error = max_err
