"""The geometric built-ins' rules as data and the facts they are judged on (part of
fuzzfarm.verdict.geometric, which re-exports the public names): geometric.toml's rules, lanes of a
vector, the mpmath reference of a vector, the facts of one vector (NaN, infinity, zero,
overflow), the bound's limits.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources

import mpmath
import numpy as np
from mpmath import mpf

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from edgecases import bounds, catalogue
from fuzzfarm.errors import BadInput
from fuzzfarm.formats import FloatFormat
from fuzzfarm.oracle import Exact, Unspecified

__all__ = ["GEOMETRIC", "VECTOR_RESULTS", "GeometricError", "VectorRule", "NOT_JUDGED",
           "WHEN_WORDS", "RESULT_WORDS", "rules", "rules_for", "load_rules", "reference"]

#: The geometric built-ins of functions.toml.
GEOMETRIC = ("cross", "dot", "distance", "length", "normalize",
             "fast_distance", "fast_length", "fast_normalize")
#: Those whose result is a vector of the argument's width (the others return a scalar).
VECTOR_RESULTS = ("cross", "normalize", "fast_normalize")


class GeometricError(BadInput):
    """An invalid argument to this module (a caller's bug, not a device's), or malformed
    geometric.toml data."""


#: The reference of a lane or scalar the texts leave undefined (e.g. fast_normalize with
#: an infinite element): measured nowhere, never a finding.  The oracle's one marker.
NOT_JUDGED = Unspecified


# --------------------------------------------------------------------------- the rules

#: Vector condition words of geometric.toml ``when`` (see ``_Facts.holds``).
WHEN_WORDS = {
    "always": "every vector",
    "width1": "vector width 1",
    "width4": "vector width 4",
    "any_nan": "an element is a NaN (cross: of p0.xyz or p1.xyz)",
    "all_zero": "every element of p is a zero",
    "inf_no_nan": "an element is infinite and none is a NaN (distance: and no lane has "
                  "infinities of the same sign)",
    "inf_and_nan": "an element is infinite and another is a NaN",
    "same_inf_lane": "distance: no NaN, and p0[i], p1[i] are infinities of the same sign",
    "products_overflow": "dot/cross: all finite, and a sum of product magnitudes may overflow",
    "sum_gt_max": "all finite, sum of squares >= max_finite * (1 - 2^(4-p))",
    "sum_lt_min": "all finite, sum of squares < min_normal * (1 + 2^(4-p)) (zero included)",
    "sum_underflows": "all finite, 0 < sum of squares < min_normal * (1 + 2^(4-p))",
    "sum_out_of_range": "all finite, sum of squares > max_finite, or a nonzero square (so "
                        "also the sum) < min_normal",
}

#: Result words per rule kind.
RESULT_WORDS = {
    "prescribed": {"nan", "all_nan", "nan_lanes_nan", "lane_nan", "input", "zeros", "+inf",
                   "ieee", "w_zero", "w_plus_zero"},
    "undefined": set(),
    "allowance": {"input"},
    "reference": {"bound", "correctly_rounded", "plus_subnormal_quantum"},
    "ftz": {"flush_subnormal_lanes", "flush_small_lanes"},
}
_NOTE_RESULTS = {"+inf"}
_LANE_SCOPED = {"w_zero", "w_plus_zero"}  # judge lane 3 only; the rest goes on
_RULE_KEYS = {"id", "functions", "kind", "when", "result", "note_result", "severity",
              "section", "source", "sentence", "reading"}


@dataclass(frozen=True)
class VectorRule:
    """One rule of geometric.toml: ``kind`` (prescribed/undefined/allowance/reference/ftz),
    ``when`` (a WHEN_WORDS word), ``result`` (a RESULT_WORDS word of the kind),
    ``note_result`` (a result reported only as a note), ``severity`` ('fail'/'note'),
    provenance (``section``, ``sentence``, ``source``: 'seed' or the non-seed text) and the
    ``reading`` where the texts are read rather than quoted."""

    id: str
    functions: tuple
    kind: str
    when: str
    result: str
    severity: str
    section: str
    sentence: str
    source: str
    reading: str = ""
    note_result: str = ""


def load_rules(text: str, src: str = "geometric.toml") -> tuple[VectorRule, ...]:
    """Parse and validate geometric rules from TOML ``text``.  Raises GeometricError naming
    the file, the rule id and the problem (unknown key, function, kind or word; a note rule
    without a reading; a duplicate id)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GeometricError(f"edgecases/data/{src}: {exc}") from None
    out, seen = [], set()
    for row in data.get("rule", []):
        rid = row.get("id", "?")
        where = f"edgecases/data/{src}: rule {rid}"
        extra = set(row) - _RULE_KEYS
        if extra:
            raise GeometricError(f"{where}: unknown key(s) {sorted(extra)}")
        for key in ("id", "kind", "when", "section", "sentence", "source"):
            if not isinstance(row.get(key), str) or not row[key]:
                raise GeometricError(f"{where}: '{key}' is missing")
        if rid in seen:
            raise GeometricError(f"{where}: id is not unique")
        seen.add(rid)
        fns = row.get("functions")
        if not isinstance(fns, list) or not fns or set(fns) - set(GEOMETRIC):
            raise GeometricError(f"{where}: functions={fns!r}; use some of {GEOMETRIC}")
        kind = row["kind"]
        if kind not in RESULT_WORDS:
            raise GeometricError(f"{where}: kind={kind!r}; use one of {sorted(RESULT_WORDS)}")
        if row["when"] not in WHEN_WORDS:
            raise GeometricError(f"{where}: when={row['when']!r}; use one of {sorted(WHEN_WORDS)}")
        result = row.get("result", "")
        if RESULT_WORDS[kind] and result not in RESULT_WORDS[kind]:
            raise GeometricError(f"{where}: result={result!r} for a {kind} rule; use one of "
                                 f"{sorted(RESULT_WORDS[kind])}")
        if not RESULT_WORDS[kind] and result:
            raise GeometricError(f"{where}: an {kind} rule takes no result")
        note_result = row.get("note_result", "")
        if note_result and (kind != "prescribed" or note_result not in _NOTE_RESULTS):
            raise GeometricError(f"{where}: note_result={note_result!r}; only a prescribed "
                                 f"rule may have one, one of {sorted(_NOTE_RESULTS)}")
        severity = row.get("severity", "")
        if kind in ("prescribed", "reference"):
            if severity not in catalogue.SEVERITIES:
                raise GeometricError(f"{where}: severity={severity!r}; choose one of "
                                     f"{catalogue.SEVERITIES}")
        elif severity:
            raise GeometricError(f"{where}: an {kind} rule has no severity")
        reading = row.get("reading", "").strip()
        if (severity == "note" or kind in ("undefined", "allowance", "ftz")) and not reading:
            raise GeometricError(f"{where}: a {severity or kind} rule needs a 'reading' saying why")
        out.append(VectorRule(rid, tuple(fns), kind, row["when"], result, severity,
                              row["section"], " ".join(row["sentence"].split()), row["source"],
                              reading, note_result))
    return tuple(out)


@lru_cache(maxsize=None)
def rules() -> tuple[VectorRule, ...]:
    """Every rule of edgecases/data/geometric.toml, in file order (validated; see
    ``load_rules``)."""
    text = resources.files("edgecases").joinpath("data", "geometric.toml").read_text("utf-8")
    return load_rules(text)


@lru_cache(maxsize=None)
def rules_for(name: str) -> tuple[VectorRule, ...]:
    """The rules of geometric built-in ``name`` in file order.  Raises GeometricError for a
    name that is not geometric."""
    if name not in GEOMETRIC:
        raise GeometricError(f"function={name!r} is not a geometric built-in; "
                             f"use one of {GEOMETRIC}")
    return tuple(r for r in rules() if name in r.functions)


# --------------------------------------------------------------------------- lanes
# A decoded lane: (kind, value, negative) with kind 'nan', 'inf', 'fin' (value an exact mpf)
# or, for a difference of two infinities of the same sign, 'invalid'.
_NAN = ("nan", None, False)


def _lane(bits: int, fmt: FloatFormat):
    mag = bits & fmt.abs_mask
    neg = bool(bits & fmt.sign_mask)
    if mag > fmt.pos_inf:
        return _NAN
    if mag == fmt.pos_inf:
        return ("inf", None, neg)
    return ("fin", mpf(fmt.value(bits)), neg)


def _is_zero_lane(x) -> bool:
    return x[0] == "fin" and x[1] == 0


def _mul(x, y):
    """IEEE product of two decoded lanes, finite products exact."""
    if x[0] in ("nan", "invalid") or y[0] in ("nan", "invalid"):
        return _NAN
    neg = x[2] != y[2]
    if x[0] == "inf" or y[0] == "inf":
        if _is_zero_lane(x) or _is_zero_lane(y):
            return _NAN
        return ("inf", None, neg)
    return ("fin", mpmath.fmul(x[1], y[1], exact=True), neg)


def _add(x, y):
    """IEEE sum of two decoded lanes (RTE signed-zero rules), finite sums exact."""
    if x[0] in ("nan", "invalid") or y[0] in ("nan", "invalid"):
        return _NAN
    if x[0] == "inf" and y[0] == "inf":
        return ("inf", None, x[2]) if x[2] == y[2] else _NAN
    if x[0] == "inf":
        return x
    if y[0] == "inf":
        return y
    v = mpmath.fadd(x[1], y[1], exact=True)
    if v == 0:
        return ("fin", v, x[1] == 0 and y[1] == 0 and x[2] and y[2])
    return ("fin", v, v < 0)


def _neg(x):
    if x[0] == "fin":  # exact: mpf's unary minus would round to the context precision
        return ("fin", mpmath.fneg(x[1], exact=True), not x[2])
    return (x[0], x[1], not x[2])


def _abs(v: mpf) -> mpf:
    return mpmath.fneg(v, exact=True) if v < 0 else v


def _exact_sum(values) -> mpf:
    s = mpf(0)
    for v in values:
        s = mpmath.fadd(s, v, exact=True)
    return s


def _entry(x, fmt: FloatFormat):
    """A decoded lane as a reference entry: None (NaN), Exact (inf, signed zero) or mpf."""
    if x[0] in ("nan", "invalid"):
        return None
    sign = fmt.sign_mask if x[2] else 0
    if x[0] == "inf":
        return Exact(fmt.pos_inf | sign)
    if x[1] == 0:
        return Exact(sign)
    return x[1]


def _diffs(a, b, flush=frozenset()):
    """Decoded lanes of p0 - p1 (IEEE specials, finite differences exact); lanes in
    ``flush`` are read as +0 (fast_distance's flushable small differences)."""
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x[0] == "nan" or y[0] == "nan":
            out.append(_NAN)
        elif x[0] == "inf" and y[0] == "inf" and x[2] == y[2]:
            out.append(("invalid", None, False))
        elif i in flush:
            out.append(("fin", mpf(0), False))
        else:
            out.append(_add(x, _neg(y)))
    return out


def _sum_squares(lanes):
    s = mpf(0)
    for x in lanes:
        s = mpmath.fadd(s, mpmath.fmul(x[1], x[1], exact=True), exact=True)
    return s


def _min_square(lanes):
    sq = [mpmath.fmul(x[1], x[1], exact=True) for x in lanes if x[1] != 0]
    return min(sq) if sq else None


_CROSS = ((1, 2), (2, 0), (0, 1))  # lane k = p0[a]*p1[b] - p0[b]*p1[a]


# --------------------------------------------------------------------------- reference
def _length_ref(lanes, fmt: FloatFormat, prec: int):
    if any(x[0] in ("nan", "invalid") for x in lanes):
        return None
    if any(x[0] == "inf" for x in lanes):
        return Exact(fmt.pos_inf)
    s = _sum_squares(lanes)
    if s == 0:
        return Exact(0)
    with mpmath.workprec(prec):
        return mpmath.sqrt(s)


def _normalize_ref(lanes, bits, fmt: FloatFormat, prec: int, fast: bool):
    n = len(lanes)
    if any(x[0] == "nan" for x in lanes):
        return (None,) * n
    if any(x[0] == "inf" for x in lanes):
        if fast:  # sum of squares +inf > FLT_MAX: undefined (§6.15.5 fast_normalize 1)
            return (NOT_JUDGED,) * n
        # 3.8.2: v[i] = isinf(v[i]) ? copysign(1.0, v[i]) : 0.0 * v[i]
        lanes = [("fin", mpf(-1 if x[2] else 1), x[2]) if x[0] == "inf"
                 else ("fin", mpf(0), x[2]) for x in lanes]
        bits = [fmt.sign_mask if x[2] else 0 for x in lanes]  # only zeros are read below
    s = _sum_squares(lanes)
    if s == 0:  # "returns v" (normalize); "if (all(p == 0.0f)) result = p" (fast_normalize)
        return tuple(Exact(int(b)) for b in bits)
    out = []
    with mpmath.workprec(prec):
        root = mpmath.sqrt(s)
        for x in lanes:
            out.append(Exact(fmt.sign_mask if x[2] else 0) if x[1] == 0 else x[1] / root)
    return tuple(out)


def _dot_ref(a, b, fmt: FloatFormat):
    acc = None
    for x, y in zip(a, b):
        p = _mul(x, y)
        acc = p if acc is None else _add(acc, p)
    return _entry(acc, fmt)


def _cross_ref(a, b, fmt: FloatFormat, width: int):
    out = []
    for i, j in _CROSS:
        out.append(_entry(_add(_mul(a[i], b[j]), _neg(_mul(a[j], b[i]))), fmt))
    if width == 4:
        out.append(Exact(0))  # "The w component of float4 result returned will be 0.0."
    return tuple(out)


def _row_reference(name: str, rows, fmt: FloatFormat, width: int, prec: int,
                   diff_flush=frozenset()):
    """Reference of one vector: rows = one tuple of lane patterns per input.  Returns a
    tuple of entries (one for a scalar result)."""
    dec = [[_lane(int(b), fmt) for b in r] for r in rows]
    base = name[5:] if name.startswith("fast_") else name
    if base == "dot":
        return (_dot_ref(dec[0], dec[1], fmt),)
    if base == "cross":
        return _cross_ref(dec[0], dec[1], fmt, width)
    if base == "length":
        return (_length_ref(dec[0], fmt, prec),)
    if base == "distance":
        return (_length_ref(_diffs(dec[0], dec[1], diff_flush), fmt, prec),)
    if base == "normalize":
        return _normalize_ref(dec[0], rows[0], fmt, prec, name == "fast_normalize")
    raise GeometricError(f"function={name!r} is not a geometric built-in; "
                         f"use one of {GEOMETRIC}")


def _check_name_width(name: str, width: int) -> None:
    if name not in GEOMETRIC:
        raise GeometricError(f"function={name!r} is not a geometric built-in; "
                             f"use one of {GEOMETRIC}")
    widths = catalogue.function(name).widths
    if width not in widths:
        raise GeometricError(f"width={width} is not a width of {name}; use one of {list(widths)}")


def reference(name: str, args: dict, fmt: FloatFormat, width: int, prec: int) -> list:
    """The exact reference of built-in ``name`` for n vectors (OpenCL C 3.0 §6.15.5).

    ``args`` maps each input name (p, or p0 and p1) to ``fmt.uint`` patterns of shape
    (n, width); ``prec`` is the mpmath working precision in bits of the square roots (sums
    of products and squares are exact).  Returns a list of n entries: for dot, length,
    distance and fast_* scalars one entry, for cross, normalize and fast_normalize a tuple
    of ``width`` entries.  An entry is an mpf (a finite nonzero real, exact or correct to
    ``prec`` bits; it may lie beyond the format's range), ``Exact(bits)`` (an infinity, a
    signed zero, the lanes of normalize's zero vector), None (no real value: a NaN is
    expected, e.g. a NaN element) or NOT_JUDGED (fast_normalize with an infinite element).
    Infinite elements follow the IEEE evaluation of the defining formula (normalize: the
    3.8.2 replacement first).  Raises GeometricError for an unknown name, a width the
    built-in lacks, or arrays of another shape.
    """
    _check_name_width(name, width)
    fn = catalogue.function(name)
    mats = []
    for a in fn.inputs:
        m = np.asarray(args[a.name])
        if m.ndim != 2 or m.shape[1] != width:
            raise GeometricError(f"args[{a.name!r}] has shape {m.shape}; "
                                 f"pass (n, {width}) patterns")
        mats.append(m.astype(fmt.uint, copy=False))
    n = mats[0].shape[0]
    out = []
    for i in range(n):
        rows = tuple(tuple(int(v) for v in m[i]) for m in mats)
        r = _row_reference(name, rows, fmt, width, prec)
        out.append(r if name in VECTOR_RESULTS else r[0])
    return out


# --------------------------------------------------------------------------- facts
@dataclass
class _Facts:
    """What the vector condition words need to know about one vector."""

    width: int
    any_nan: bool = False
    any_inf: bool = False
    same_inf: bool = False
    all_zero: bool = False
    s: mpf | None = None            # exact sum of squares (or squared differences)
    min_sq: mpf | None = None       # smallest nonzero square of those
    products_overflow: bool = False
    max_abs: mpf = mpf(0)           # largest finite input magnitude (dot, cross)

    def holds(self, word: str, fmt: FloatFormat) -> bool:
        finite = not (self.any_nan or self.any_inf or self.same_inf)
        margin = mpmath.ldexp(1, 4 - fmt.precision)
        big = mpf(fmt.value(fmt.max_finite))
        small = mpf(fmt.value(fmt.min_normal))
        if word == "always":
            return True
        if word == "width1":
            return self.width == 1
        if word == "width4":
            return self.width == 4
        if word == "any_nan":
            return self.any_nan
        if word == "all_zero":
            return self.all_zero
        if word == "inf_no_nan":
            return self.any_inf and not self.any_nan and not self.same_inf
        if word == "inf_and_nan":
            return self.any_inf and self.any_nan
        if word == "same_inf_lane":
            return self.same_inf and not self.any_nan
        if word == "products_overflow":
            return finite and self.products_overflow
        if self.s is None or not finite:
            return False
        if word == "sum_gt_max":
            return self.s >= big * (1 - margin)
        if word == "sum_lt_min":
            return self.s < small * (1 + margin)
        if word == "sum_underflows":
            return 0 < self.s < small * (1 + margin)
        if word == "sum_out_of_range":
            return self.s > big or (self.min_sq is not None and self.min_sq < small)
        raise GeometricError(f"when={word!r} is not a condition word; "
                             f"use one of {sorted(WHEN_WORDS)}")


def _max_abs(name: str, rows, fmt: FloatFormat) -> mpf:
    """The largest finite input magnitude of a vector (cross: of p0.xyz and p1.xyz), exact;
    the ``max`` of the absolute tolerances."""
    used = 3 if name == "cross" else None
    mags = [int(b) & fmt.abs_mask for r in rows for b in r[:used]]
    finite = [m for m in mags if m < fmt.pos_inf]
    return mpf(fmt.value(max(finite))) if finite else mpf(0)


def _facts(name: str, rows, fmt: FloatFormat, width: int, diff_flush=frozenset()) -> _Facts:
    dec = [[_lane(int(b), fmt) for b in r] for r in rows]
    f = _Facts(width)
    base = name[5:] if name.startswith("fast_") else name
    big = mpf(fmt.value(fmt.max_finite)) * (1 - mpmath.ldexp(1, 4 - fmt.precision))
    if base == "cross":
        lanes = [x for r in dec for x in r[:3]]
    else:
        lanes = [x for r in dec for x in r]
    f.any_nan = any(x[0] == "nan" for x in lanes)
    f.any_inf = any(x[0] == "inf" for x in lanes)
    f.all_zero = all(_is_zero_lane(x) for x in lanes)
    fin = [x for x in lanes if x[0] == "fin"]
    f.max_abs = max((_abs(x[1]) for x in fin), default=mpf(0))
    if base == "distance":
        d = _diffs(dec[0], dec[1], diff_flush)
        f.same_inf = any(x[0] == "invalid" for x in d)
        if all(x[0] == "fin" for x in d):
            f.s, f.min_sq = _sum_squares(d), _min_square(d)
    elif base in ("length", "normalize"):
        if all(x[0] == "fin" for x in lanes):
            f.s, f.min_sq = _sum_squares(lanes), _min_square(lanes)
    elif not (f.any_nan or f.any_inf):
        a, b = dec
        if base == "dot":
            # At width 1 the product is the result: its rounding to inf is correct rounding.
            tot = _exact_sum(_abs(mpmath.fmul(x[1], y[1], exact=True)) for x, y in zip(a, b))
            f.products_overflow = width > 1 and tot > big
        else:
            f.products_overflow = any(
                _exact_sum((_abs(mpmath.fmul(a[i][1], b[j][1], exact=True)),
                            _abs(mpmath.fmul(a[j][1], b[i][1], exact=True)))) > big
                for i, j in _CROSS)
    return f


# --------------------------------------------------------------------------- bounds
@dataclass
class _Lim:
    """The limits of one vector (edgecases.bounds.Limits, one element of it).

    ``ulps``: largest ULP error allowed (inf: no ULP limit); ``absolute``: largest absolute
    error (exact mpf; 0: none); ``fail_ulps`` / ``fail_absolute``: where ``note`` is set,
    the looser limits beyond which it is a failure (inf: never); ``coef`` / ``fail_coef``:
    the absolute tolerances per max^2 (cross and dot, recomputed for a flushed variant) or
    None; ``cr_ok``: a correctly rounded result (in a claimed mode) always conforms;
    ``strict_cr``: only a correctly rounded result conforms (dot at width 1);
    ``judged``: False = measured only; ``reading`` the bound's reading for this element."""

    ulps: float
    absolute: mpf
    fail_ulps: float
    fail_absolute: mpf
    judged: bool
    note: bool
    cr_ok: bool = False
    strict_cr: bool = False
    coef: mpf | None = None
    fail_coef: mpf | None = None
    reading: str = ""

    def scaled(self, max_abs: mpf) -> "_Lim":
        """A copy with the absolute tolerances of largest input magnitude ``max_abs``."""
        out = replace(self)
        sq = mpmath.fmul(max_abs, max_abs, exact=True)
        if self.coef is not None:
            out.absolute = mpmath.fmul(self.coef, sq, exact=True)
        if self.fail_coef is not None:
            out.fail_absolute = mpmath.fmul(self.fail_coef, sq, exact=True)
        return out


def _resolve_bound(name: str, claims):
    relaxed = bool(getattr(claims, "relaxed", False))
    try:
        return bounds.bound(name, claims.precision, claims.profile, relaxed=relaxed)
    except TypeError:  # a bounds.bound without the relaxed flag
        return bounds.bound(name, claims.precision, claims.profile)


def _arr(lim, name: str, default, n: int) -> np.ndarray:
    v = getattr(lim, name, None)
    return np.broadcast_to(np.asarray(default if v is None else v), (n,))


def _bound_limits(bound, fn, mats, fmt: FloatFormat, width: int, max_abs: list) -> list:
    """Per-vector _Lim from ``bound`` (an edgecases.bounds.Bound).  The absolute tolerances
    of cross and dot are max * max * const (Table 1): they are evaluated at max = 1 and
    max = 2, and where the second is exactly 4 times the first, scaled by the exact max^2
    (mpf), so that binary64's large and small max neither overflow nor underflow float64."""
    n = len(max_abs)
    args = {a.name: m[:, 0] for a, m in zip(fn.inputs, mats)}
    kinds = {a.name: a.kind for a in fn.inputs}
    scale = None
    if fn.name in ("cross", "dot"):
        one = bound.limits(args, kinds, fmt, width=width, max_abs=np.ones(n))
        two = bound.limits(args, kinds, fmt, width=width, max_abs=np.full(n, 2.0))
        homogeneous = all(
            np.array_equal(np.asarray(_arr(two, k, 0.0, n), np.float64),
                           4 * np.asarray(_arr(one, k, 0.0, n), np.float64))
            for k in ("absolute", "fail_absolute"))
        if homogeneous:
            lim, scale = one, True
        else:
            direct = np.array([float(m) for m in max_abs], np.float64)
            lim = bound.limits(args, kinds, fmt, width=width, max_abs=direct)
    else:
        lim = bound.limits(args, kinds, fmt, width=width)
    ulps = _arr(lim, "ulps", math.inf, n)
    absolute = _arr(lim, "absolute", 0.0, n)
    fail_u = _arr(lim, "fail_ulps", ulps, n)       # no looser limits: the strict ones
    fail_a = _arr(lim, "fail_absolute", absolute, n)
    cr = _arr(lim, "correctly_rounded", False, n)
    reading = _arr(lim, "reading", "", n)
    judged, note = _arr(lim, "judged", True, n), _arr(lim, "note", False, n)
    out = []
    for i in range(n):
        a, fa = mpf(float(absolute[i])), mpf(float(fail_a[i]))
        coef = fcoef = None
        if scale:
            coef = a if mpmath.isfinite(a) else None
            fcoef = fa if mpmath.isfinite(fa) else None
        lim_i = _Lim(float(ulps[i]), a, float(fail_u[i]), fa, bool(judged[i]), bool(note[i]),
                     bool(cr[i]), False, coef, fcoef, str(reading[i] or ""))
        out.append(lim_i.scaled(max_abs[i]) if scale else lim_i)
    return out


def _describe_bound(bound, width: int) -> str:
    try:
        return bound.describe(width)
    except TypeError:
        return bound.describe()
