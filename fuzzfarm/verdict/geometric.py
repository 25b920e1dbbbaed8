"""The geometric built-ins (OpenCL C 3.0 §6.15.5): reference, vector rules and checker.

cross, dot, distance, length, normalize and fast_distance, fast_length, fast_normalize work
on whole vectors (width n = 1..4; cross 3 and 4), so they are judged vector by vector rather
than lane by lane like the element-wise built-ins of fuzzfarm.verdict.checker.  Pure logic
(docs/design.md, decision 9): no pyopencl, no Ray, no I/O.

Data layout (docs/design.md, decision 1, bits, not floats): an input is a flat array of ``fmt``
patterns (``fmt.uint``) of length ``n * width``, vector i being lanes ``[i*width,
(i+1)*width)``; a scalar result (dot, length, distance, fast_*length/distance) is a flat
array of length n, a vector result (cross, normalize, fast_normalize) one of ``n * width``.

The verdict on one vector, in order:

1. The vector rules of ``edgecases/data/geometric.toml`` (``rules()``): *undefined* rules
   (e.g. fast_normalize with a sum of squares above FLT_MAX) leave the vector unjudged;
   *allowances* accept an alternative result (fast_normalize may return p when the sum of
   squares is below FLT_MIN); *prescribed* rules fix the result (normalize of a zero vector
   returns v, a NaN element gives a vector full of NaNs, cross's w lane is 0.0, ...).
2. NaN in, NaN out (F9.G10, or CL.nan.signaling_stays_nan for a signaling operand) for a
   scalar result no rule covers; quiet NaNs stay quiet (CL.nan.quiet_stays_quiet) in every
   result lane; the notes CL.nan.signaling_should_quiet and CL.nan.one_of_operands (general.toml).
3. The reference (exact sums of products and squares, square roots at ``prec`` bits) against
   the bound of edgecases.bounds for the device's precision, profile and relaxed-math flag:
   ULP bounds in the width n (distance, length, normalize, fast_*), absolute tolerances in
   the largest input magnitude ``max`` (cross: max*max*(3*EPS), dot: max*max*(2*(n-1))*EPS),
   every result lane of a vector result.  A failure is confirmed at twice the precision
   (docs/design.md, decision 4) or reported as the note ``unresolved``.

Readings chosen where the texts are silent (each is a row of geometric.toml with its reason):

* dot at n = 1: the table's tolerance is 0; a single product is correctly rounded (OpFMul),
  so dot(x, y) of one element is judged correctly rounded (CL.dot.width1_correctly_rounded).
* dot and cross: the absolute tolerance is widened by the subnormal quantum of each rounding
  (half of 2^(emin-p+1) per operation; the smallest normal per operation without
  CL_FP_DENORM): a correctly rounded tiny product cannot meet the literal tolerance.  Vectors
  whose products may overflow in some evaluation order are not judged (no "without
  overflow" text for dot and cross).
* Infinite inputs: length and distance give +inf (fail otherwise); normalize follows its
  replacement rule; dot and cross are compared with the IEEE evaluation of their formula
  with severity note only; fast_normalize's result is undefined (sum of squares > FLT_MAX);
  fast_length/fast_distance expect +inf with severity note.
* A NaN and an infinity together in length/distance: NaN conforms, +inf is a note (C99
  hypot returns +inf there).

The device's claims decide (docs/design.md, decision 2): without CL_FP_DENORM (``claims.denormals``
False) every subset of the subnormal input lanes may be read as a zero of either sign, and
a result lane that is subnormal before rounding may be flushed (OpenCL SPIR-V Env 3.8.3);
fast_* may also flush elements below sqrt(FLT_MIN) (§6.15.5).  ``claims.rounding`` gives the
modes of a correctly rounded result, ``claims.profile`` and ``claims.relaxed`` pick the bound.
The build options of fuzzfarm.verdict.claims.Claims are honoured as the element-wise checker does:
without CL_FP_INF_NAN or under -cl-finite-math-only (``judges_specials`` False) vectors with an
infinite or NaN element, or whose result is infinite, are not judged; under
-cl-unsafe-math-optimizations (``relaxed``) departures from the edge-case rules become notes
(general rule relaxed.edge_case); under -cl-no-signed-zeros (``signed_zeros`` False) the sign
of a zero is not judged.  Vectors left unjudged are counted in ``CheckResult.unjudged``.
"""
from __future__ import annotations

# The rules, lanes, reference, facts and bounds are in fuzzfarm/verdict/geometric_rules.py; the
# verdict and the inputs here.

import itertools
import math
from dataclasses import dataclass, field, replace

import mpmath
import numpy as np
from mpmath import mpf

from edgecases import catalogue
from fuzzfarm.formats import FloatFormat
from fuzzfarm.verdict.geometric_rules import (  # noqa: F401 (re-exported: geometric's API)
    _CROSS, _LANE_SCOPED, GEOMETRIC, NOT_JUDGED, RESULT_WORDS, VECTOR_RESULTS, WHEN_WORDS,
    GeometricError, VectorRule, _abs, _bound_limits, _check_name_width, _describe_bound,
    _diffs, _facts, _Lim, _lane, _max_abs, _resolve_bound, _row_reference, load_rules,
    reference, rules, rules_for,
)
from fuzzfarm.oracle import Exact, round_to_bits, ulp_error
from fuzzfarm.verdict.findings import CheckResult, Finding

__all__ = [
    "GEOMETRIC", "VECTOR_RESULTS", "GeometricError", "VectorRule", "NOT_JUDGED",
    "WHEN_WORDS", "RESULT_WORDS", "rules", "rules_for", "load_rules",
    "reference", "check", "special_inputs", "inputs",
]


# --------------------------------------------------------------------------- the verdict
@dataclass
class _Issue:
    rule: object          # VectorRule or catalogue.GeneralRule (id, section, sentence, reading)
    expected: str
    severity: str
    ulp_error: float | None = None
    from_bound: bool = False
    reading: str | None = None   # overrides the rule's reading (relaxed builds)


@dataclass
class _Verdict:
    issues: list = field(default_factory=list)
    max_err: float = float("nan")
    judged: bool = True
    measured: bool = False

    @property
    def fails(self) -> bool:
        return any(x.severity == "fail" for x in self.issues)

    @property
    def clean(self) -> bool:
        """No failure, and no note but a zero of the other sign."""
        return all(x.severity == "note" and x.rule.id == "ieee.zero_sign" for x in self.issues)


class _Ctx:
    def __init__(self, fn, claims, width, prec, bound):
        self.fn, self.name, self.claims, self.width = fn, fn.name, claims, width
        self.fmt = claims.fmt
        self.prec = prec or 2 * self.fmt.precision + 48
        self.flush = not claims.denormals
        self.rounding = tuple(claims.rounding)
        # Build options and INF_NAN (fuzzfarm.verdict.claims.Claims; absent fields: the defaults)
        self.judges_specials = bool(getattr(claims, "judges_specials", True))
        self.relaxed = bool(getattr(claims, "relaxed", False))
        self.signed_zeros = bool(getattr(claims, "signed_zeros", True))
        self.rules = rules_for(fn.name)
        self.bound = bound
        self.bound_rule = catalogue.GeneralRule(
            f"ulp.{fn.name}", getattr(bound, "source", ""),
            f"{fn.name}: {_describe_bound(bound, width)} ({claims.precision}, "
            f"{'relaxed math, ' if self.relaxed else ''}{claims.profile} profile, width {width})")
        self.vector_out = fn.name in VECTOR_RESULTS


def _isnan_bits(bits: int, fmt: FloatFormat) -> bool:
    return (int(bits) & fmt.abs_mask) > fmt.pos_inf


def _is_snan_bits(bits: int, fmt: FloatFormat) -> bool:
    return _isnan_bits(bits, fmt) and not (int(bits) & fmt.quiet_bit)


def _describe_entry(r, fmt: FloatFormat) -> str:
    if r is None:
        return "any NaN"
    if r is NOT_JUDGED:
        return "not judged"
    if isinstance(r, Exact):
        return fmt.hex(r.bits)
    with mpmath.workprec(64):
        return f"{fmt.hex(round_to_bits(r, fmt, 'rte'))} (reference {mpmath.nstr(r, 9)})"


def _lane_verdict(c: _Ctx, r, got: int, lim: _Lim, quantum: mpf):
    """('ok' | 'note' | 'fail' | 'zero_sign', ulp error or None) of one result lane against
    reference entry ``r``: 'note' where the error is beyond the strict limits but within
    the looser ones of a note band (edgecases.bounds Limits.fail_*)."""
    fmt = c.fmt
    if r is NOT_JUDGED:
        return "ok", None
    if r is None:
        return ("ok" if _isnan_bits(got, fmt) else "fail"), None
    if _isnan_bits(got, fmt):
        return "fail", None
    gz = (got & fmt.abs_mask) == 0
    if isinstance(r, Exact):
        w = int(r.bits)
        if w == got:
            return "ok", 0.0
        if (w & fmt.abs_mask) == 0 and gz:
            return "zero_sign", 0.0
        if (w & fmt.abs_mask) == fmt.pos_inf:
            return "fail", None
        rv = mpf(fmt.value(w))
    else:
        rv = r
    if c.flush and gz and abs(rv) < fmt.value(fmt.min_normal):
        return "ok", 0.0  # 3.8.3 results 2 and 4: a subnormal result may be flushed
    err = ulp_error(got, rv, fmt, c.rounding)
    rounded = [round_to_bits(rv, fmt, m) for m in c.rounding]
    if got in rounded and (lim.cr_ok or lim.strict_cr):
        return "ok", err
    if lim.strict_cr:
        if gz and any((w & fmt.abs_mask) == 0 for w in rounded):
            return "zero_sign", err  # the ULP measure does not see the sign of zero
        return "fail", err
    g = fmt.value(got)
    abs_err = _abs(mpmath.fsub(mpf(g), rv, exact=True)) if math.isfinite(g) else mpmath.inf
    if err <= lim.ulps or abs_err <= mpmath.fadd(lim.absolute, quantum, exact=True):
        return "ok", err
    loose = mpmath.fadd(lim.fail_absolute, quantum, exact=True)
    if lim.note and (err <= lim.fail_ulps or abs_err <= loose or lim.fail_ulps == math.inf):
        return "note", err
    return "fail", err


def _matches_input(c: _Ctx, got, rows, orig_rows) -> bool:
    """got == p bit for bit; a lane flushed in this variant may be a zero of either sign,
    and the original (unflushed) p also matches."""
    fmt = c.fmt
    if tuple(got) == tuple(orig_rows[0]):
        return True
    for g, v, o in zip(got, rows[0], orig_rows[0]):
        if g == v:
            continue
        zeros = (v & fmt.abs_mask) == 0 and (g & fmt.abs_mask) == 0
        if zeros and (v != o or not c.signed_zeros):  # flushed lane, or -cl-no-signed-zeros
            continue
        return False
    return True


def _prescribed(c: _Ctx, rule: VectorRule, rows, got, refs_fn, orig_rows) -> list:
    """Issues of one matching prescribed rule."""
    fmt = c.fmt
    res = rule.result
    bad = []
    if res == "nan":
        if _isnan_bits(got[0], fmt):
            return []
        if rule.note_result == "+inf" and got[0] == fmt.pos_inf:
            return [_Issue(rule, "any NaN (+inf read as a note)", "note")]
        return [_Issue(rule, "any NaN", rule.severity)]
    if res == "+inf":
        return [] if got[0] == fmt.pos_inf else [_Issue(rule, fmt.hex(fmt.pos_inf), rule.severity)]
    if res == "all_nan":
        if all(_isnan_bits(g, fmt) for g in got):
            return []
        return [_Issue(rule, "every lane a NaN", rule.severity)]
    if res == "nan_lanes_nan":
        lanes = [k for k, b in enumerate(rows[0]) if _isnan_bits(b, fmt)]
        if all(_isnan_bits(got[k], fmt) for k in lanes):
            return []
        return [_Issue(rule, f"a NaN in lane(s) {lanes}", rule.severity)]
    if res == "lane_nan":
        lanes = [k for k, (i, j) in enumerate(_CROSS)
                 if any(_isnan_bits(r[m], fmt) for r in rows for m in (i, j))]
        if all(_isnan_bits(got[k], fmt) for k in lanes):
            return []
        return [_Issue(rule, f"a NaN in lane(s) {lanes}", rule.severity)]
    if res == "zeros":
        if all((g & fmt.abs_mask) == 0 for g in got):
            return []
        return [_Issue(rule, "every lane a zero", rule.severity)]
    if res == "input":
        if _matches_input(c, got, rows, orig_rows):
            return []
        if rule.severity == "note" and any((g & fmt.abs_mask) != 0 for g in got):
            return []  # a note on the zeros' signs only; a non-zero lane is another rule's
        return [_Issue(rule, "(" + ", ".join(fmt.hex(b) for b in rows[0]) + ")", rule.severity)]
    if res == "w_zero":
        if (got[3] & fmt.abs_mask) == 0:
            return []
        return [_Issue(rule, "lane 3 (w) a zero", rule.severity)]
    if res == "w_plus_zero":
        if got[3] == fmt.sign_mask and c.signed_zeros:
            return [_Issue(rule, "lane 3 (w) +0", rule.severity)]
        return []
    if res == "ieee":
        refs = refs_fn()
        dec = [[_lane(int(b), fmt) for b in r] for r in rows]
        big = mpf(fmt.value(fmt.max_finite)) * (1 - mpmath.ldexp(1, 4 - fmt.precision))

        def overflows(x, y):  # a finite product that may round to an infinity
            return x[0] == y[0] == "fin" and _abs(mpmath.fmul(x[1], y[1], exact=True)) > big

        a, b = dec
        if c.name == "cross":
            lanes = [k for k, (i, j) in enumerate(_CROSS)
                     if any(r[m][0] == "inf" for r in dec for m in (i, j))
                     and not (overflows(a[i], b[j]) or overflows(a[j], b[i]))]
        else:
            lanes = [] if any(overflows(x, y) for x, y in zip(a, b)) else [0]
        for k in lanes:
            r = refs[k]
            ok = _isnan_bits(got[k], fmt) if r is None else int(r.bits) == got[k]
            if not ok:
                bad.append(k)
        if not bad:
            return []
        exp = ", ".join(f"lane {k}: {_describe_entry(refs[k], fmt)}" for k in bad)
        return [_Issue(rule, exp, rule.severity)]
    raise GeometricError(f"result={res!r} is not a prescribed result word")  # pragma: no cover


def _nonfinite(bits: int, fmt: FloatFormat) -> bool:
    return (int(bits) & fmt.abs_mask) >= fmt.pos_inf


def _rounds_to_inf(r, c: _Ctx) -> bool:
    if isinstance(r, Exact):
        return _nonfinite(r.bits, c.fmt)
    if r is None or r is NOT_JUDGED:
        return False
    return any(_nonfinite(round_to_bits(r, c.fmt, m), c.fmt) for m in c.rounding)


def _nan_rules(c: _Ctx, v: "_Verdict", orig_rows, got, scalar_nan_required: bool) -> None:
    """F9.G10 (or CL.nan.signaling_stays_nan) for a scalar result, quiet NaNs staying quiet,
    signaling NaNs that should be quieted (note), one of the NaN operands (note)."""
    fmt = c.fmt
    general = catalogue.general_rules()
    nan_in = [b for row in orig_rows for b in row if _isnan_bits(b, fmt)]
    if not nan_in:
        return
    any_snan = any(_is_snan_bits(b, fmt) for b in nan_in)
    if scalar_nan_required and not _isnan_bits(got[0], fmt):
        rule = general.get("CL.nan.signaling_stays_nan") if any_snan else None
        v.issues.append(_Issue(rule or general["F9.G10"], "any NaN", "fail"))
    out_snan = any(_is_snan_bits(g, fmt) for g in got)
    if out_snan and not any_snan:
        v.issues.append(_Issue(general["CL.nan.quiet_stays_quiet"], "a quiet NaN", "fail"))
    elif out_snan and "CL.nan.signaling_should_quiet" in general:
        v.issues.append(_Issue(general["CL.nan.signaling_should_quiet"],
                               "a quiet NaN (should)", "note"))
    one_of = general.get("CL.nan.one_of_operands")
    if one_of is not None and scalar_nan_required and len(nan_in) >= 2 \
            and _isnan_bits(got[0], fmt):
        payloads = {b & (fmt.quiet_bit - 1) for b in nan_in}
        if got[0] & (fmt.quiet_bit - 1) not in payloads:
            v.issues.append(_Issue(one_of, "the payload of one of the NaN operands: "
                                   + " or ".join(hex(p) for p in sorted(payloads)), "note"))


def _relax(c: _Ctx, v: "_Verdict", edge: bool) -> None:
    """-cl-unsafe-math-optimizations: "may violate edge case behavior": a failing prescribed
    rule of geometric.toml or one from the edge-case section (3.8.2: normalize's infinities,
    "without overflow"), or a bound failure on an edge-case vector (NaN, infinite or all-zero
    elements), becomes a note with the reading of general rule relaxed.edge_case."""
    if not c.relaxed:
        return
    note = catalogue.general_rules().get("relaxed.edge_case")
    if note is None:
        return
    for x in v.issues:
        edge_rule = isinstance(x.rule, VectorRule) and (x.rule.kind == "prescribed"
                                                         or "3.8.2" in x.rule.section)
        if x.severity == "fail" and (edge_rule or (x.from_bound and edge)):
            x.severity = "note"
            x.reading = f"{note.reading} (rule {x.rule.id})"


def _judge(c: _Ctx, rows, got, lim: _Lim, prec: int, orig_rows=None,
           diff_flush=frozenset()) -> _Verdict:
    """The verdict on one vector (rows: one tuple of lane patterns per input; got: the
    result lane patterns)."""
    fmt = c.fmt
    orig_rows = orig_rows or rows
    v = _Verdict()
    if not c.judges_specials and any(_nonfinite(b, fmt) for r in orig_rows for b in r):
        v.judged = False  # no CL_FP_INF_NAN, or -cl-finite-math-only
        return v
    facts = _facts(c.name, rows, fmt, c.width, diff_flush)
    edge = facts.any_nan or facts.any_inf or facts.all_zero or facts.same_inf
    matching = [r for r in c.rules if r.kind != "ftz" and facts.holds(r.when, fmt)]
    if any(r.kind == "undefined" for r in matching):
        v.judged = False
        # The undefined lanes leave cross's w lane bound: "The w component of float4 result
        # returned will be 0.0" whatever the operands (CL.cross.w_zero).
        for r in matching:
            if r.kind == "prescribed" and r.result in _LANE_SCOPED:
                v.issues += _prescribed(c, r, rows, got, None, orig_rows)
        return v
    for r in matching:
        if r.kind == "allowance" and _matches_input(c, got, rows, orig_rows):
            return v
    cache = {}

    def refs_fn():
        if "r" not in cache:
            cache["r"] = _row_reference(c.name, rows, fmt, c.width, prec, diff_flush)
        return cache["r"]

    handled = False
    for r in matching:
        if r.kind == "prescribed":
            v.issues += _prescribed(c, r, rows, got, refs_fn, orig_rows)
            handled |= r.result not in _LANE_SCOPED
    _nan_rules(c, v, orig_rows, got, facts.any_nan and not handled and not c.vector_out)
    if handled or facts.any_nan:
        _relax(c, v, edge)
        return v
    return _judge_bound(c, v, matching, refs_fn(), got, lim, facts.max_abs, edge)


def _judge_bound(c: _Ctx, v: _Verdict, matching, refs, got, lim: _Lim, max_abs,
                 edge: bool) -> _Verdict:
    """The verdict of the bound on one vector with no prescribed result: each lane's
    error against its reference (``refs``), scaled by the inputs' largest magnitude,
    plus the subnormal quantum a rule adds."""
    fmt = c.fmt
    if not c.judges_specials and (any(_rounds_to_inf(r, c) for r in refs)
                                  or any(_nonfinite(g, fmt) for g in got)):
        v.judged = False  # -cl-finite-math-only: results assumed finite
        return v
    rule = next((r for r in matching if r.kind == "reference" and r.result == "bound"), None)
    lim = lim.scaled(max_abs)
    quantum = mpf(0)
    for r in matching:
        if r.kind == "reference" and r.result == "correctly_rounded":
            lim.strict_cr = True
            rule = rule or r
        if r.kind == "reference" and r.result == "plus_subnormal_quantum":
            k = 3 if c.name == "cross" else 2 * c.width - 1
            q = mpf(fmt.value(fmt.min_normal)) if c.flush else \
                mpmath.ldexp(fmt.value(fmt.true_min), -1)
            quantum = mpmath.fmul(k, q, exact=True)
    lanes = range(3) if c.name == "cross" else range(len(refs))
    bad, noted, zero_sign, worst = [], [], [], None
    for k in lanes:
        status, err = _lane_verdict(c, refs[k], got[k], lim, quantum)
        if err is not None and math.isfinite(err):
            v.measured = True
            v.max_err = err if math.isnan(v.max_err) else max(v.max_err, err)
        if status in ("fail", "note"):
            (bad if status == "fail" else noted).append(k)
            if err is not None:
                worst = err if worst is None else max(worst, err)
        elif status == "zero_sign":
            zero_sign.append(k)
    if not lim.judged:
        v.judged = False
        return v
    if bad or noted:
        exp = ", ".join(_describe_entry(refs[k], fmt) for k in lanes)
        exp = f"({exp})" if c.vector_out else exp
        v.issues.append(_Issue(rule or c.bound_rule, exp, "fail" if bad else "note", worst,
                               from_bound=True, reading=lim.reading or None))
    if zero_sign and c.signed_zeros:
        zs = catalogue.general_rule("ieee.zero_sign")
        exp = ", ".join(f"lane {k}: {_describe_entry(refs[k], fmt)}" for k in zero_sign)
        v.issues.append(_Issue(zs, exp if c.vector_out else _describe_entry(refs[0], fmt), "note"))
    _relax(c, v, edge)
    return v


def _confirmed(c: _Ctx, rows, got, lim: _Lim) -> _Verdict:
    """The verdict at ``c.prec``; a bound failure is re-judged at twice the precision and
    becomes the note ``unresolved`` if the two disagree (docs/design.md, decision 4)."""
    v = _judge(c, rows, got, lim, c.prec)
    if not any(x.from_bound and x.severity == "fail" for x in v.issues):
        return v
    v2 = _judge(c, rows, got, lim, 2 * c.prec)
    if any(x.from_bound and x.severity == "fail" for x in v2.issues):
        v2.max_err = v.max_err
        return v2
    unresolved = catalogue.general_rule("unresolved")
    v.issues = [(_Issue(unresolved, x.expected, "note", x.ulp_error)
                 if x.from_bound and x.severity == "fail" else x) for x in v.issues]
    return v


def _ftz_positions(c: _Ctx, rows):
    """Flushable positions: ('in', input, lane) for subnormal operands (3.8.3) and, for
    fast_*, elements (fast_distance: differences) below sqrt(min_normal) (§6.15.5)."""
    fmt = c.fmt
    results = {r.result for r in c.rules if r.kind == "ftz"}
    pos = []
    if "flush_small_lanes" in results:
        small = mpf(fmt.value(fmt.min_normal))
        if c.name == "fast_distance":
            d = _diffs(*[[_lane(int(b), fmt) for b in r] for r in rows])
            pos += [("diff", 0, k) for k, x in enumerate(d)
                    if x[0] == "fin" and x[1] != 0 and x[1] ** 2 < small]
        else:
            for k, b in enumerate(rows[0]):
                x = _lane(int(b), fmt)
                if x[0] == "fin" and x[1] != 0 and x[1] ** 2 < small:
                    pos.append(("in", 0, k))
    if "flush_subnormal_lanes" in results:
        diff_lanes = {k for kind, _, k in pos if kind == "diff"}
        for i, r in enumerate(rows):
            for k, b in enumerate(r):
                mag = int(b) & fmt.abs_mask
                # fast_distance: a lane whose difference may be flushed needs no more
                if 0 < mag < fmt.min_normal and ("in", i, k) not in pos and k not in diff_lanes:
                    pos.append(("in", i, k))
    return pos


#: Up to this many flushable positions every subset is tried (255 variants: every subset
#: of the 8 lanes of two 4-vectors); beyond it all, each single one and all but one.
_MAX_SUBSET_POSITIONS = 8


def _rescue(c: _Ctx, rows, got, lim: _Lim) -> "_Verdict | None":
    """The verdict with some subset of the flushable lanes flushed (3.8.3 results 3 and 4;
    §6.15.5 fast_normalize 3) that has no failure: a clean one (no note but a zero's sign)
    if any, else the first without a failure; None if every subset fails."""
    pos = _ftz_positions(c, rows)
    if not pos:
        return None
    if len(pos) <= _MAX_SUBSET_POSITIONS:
        subsets = [s for k in range(len(pos), 0, -1) for s in itertools.combinations(pos, k)]
    else:
        subsets = [tuple(pos)] + list(itertools.combinations(pos, len(pos) - 1)) \
            + [(p,) for p in pos]
    best = None
    for subset in subsets:
        new = [list(r) for r in rows]
        flush_d = set()
        for kind, i, k in subset:
            if kind == "diff":
                flush_d.add(k)
            else:
                new[i][k] = int(rows[i][k]) & c.fmt.sign_mask
        v = _judge(c, tuple(tuple(r) for r in new), got, lim, c.prec, rows, frozenset(flush_d))
        if v.clean:
            return v
        if best is None and not v.fails:
            best = v
    return best


def check(fn, inputs: dict, outputs: dict, claims, width: int, prec: int | None = None,
          *, bound=None) -> CheckResult:
    """Judge one batch of device results of geometric built-in ``fn`` (a catalogue.Function
    or its name) at vector width ``width``.

    ``inputs`` maps each input name to a flat ``fmt.uint`` array of length n*width (vector i
    = lanes [i*width, (i+1)*width)); ``outputs['ret']`` is a flat array of length n (scalar
    result) or n*width (cross, normalize, fast_normalize).  ``claims`` is a
    fuzzfarm.verdict.claims.Claims (precision, profile, denormals, rounding; ``relaxed`` if it has
    one).  ``prec`` is the mpmath precision in bits of the square roots (default 2p + 48).
    ``bound`` overrides the edgecases bound (a Bound with ``limits``), for tests.

    Returns a CheckResult with n = number of vectors; each Finding has ``index`` = vector
    index, ``inputs`` = the lane patterns of all inputs flattened (p0 lanes, then p1
    lanes), ``outputs`` = the result lane patterns, ``output`` = 'ret', ``ulp_error`` the
    largest failing lane's error in ULPs where measured.  ``max_ulp_error`` is over every
    measured lane; ``exact`` counts the vectors judged against the mpmath reference.

    Raises GeometricError for a function that is not geometric, a width or precision it
    lacks, or arrays of the wrong length; KeyError if the bound table lacks the function.
    """
    if isinstance(fn, str):
        fn = catalogue.function(fn)
    _check_name_width(fn.name, width)
    if claims.precision not in fn.precisions:
        raise GeometricError(f"claims.precision={claims.precision!r}: {fn.name} exists in "
                             f"{list(fn.precisions)} only")
    fmt = claims.fmt
    mats = []
    n = None
    for a in fn.inputs:
        arr = np.asarray(inputs[a.name]).astype(fmt.uint, copy=False).ravel()
        if arr.size % width:
            raise GeometricError(f"inputs[{a.name!r}] has {arr.size} lanes, not a multiple of "
                                 f"width={width}")
        m = arr.reshape(-1, width)
        if n is not None and m.shape[0] != n:
            raise GeometricError(f"inputs[{a.name!r}] has {m.shape[0]} vectors, the others {n}")
        n = m.shape[0]
        mats.append(m)
    ret_width = width if fn.name in VECTOR_RESULTS else 1
    out = np.asarray(outputs["ret"]).astype(fmt.uint, copy=False).ravel()
    if out.size != n * ret_width:
        raise GeometricError(f"outputs['ret'] has {out.size} lanes; expected {n * ret_width} "
                             f"({n} vectors x {ret_width})")
    out = out.reshape(n, ret_width)
    if bound is None:
        bound = _resolve_bound(fn.name, claims)
    c = _Ctx(fn, claims, width, prec, bound)
    result = CheckResult(fn.name, n)
    if n == 0:
        return result
    rows_all = [tuple(tuple(int(v) for v in m[i]) for m in mats) for i in range(n)]
    max_abs = [_max_abs(fn.name, rows, fmt) for rows in rows_all]
    lims = _bound_limits(bound, fn, mats, fmt, width, max_abs)
    for i in range(n):
        rows = rows_all[i]
        got = tuple(int(g) for g in out[i])
        v = _confirmed(c, rows, got, lims[i])
        if not v.judged:
            result.unjudged += 1
        if v.measured:
            result.exact += 1
            if not math.isnan(v.max_err):
                m = result.max_ulp_error
                result.max_ulp_error = v.max_err if math.isnan(m) else max(m, v.max_err)
        if not v.clean and c.flush:
            rescued = _rescue(c, rows, got, lims[i])
            if rescued is not None and (rescued.clean or v.fails):
                v = rescued
        flat = tuple(b for r in rows for b in r)
        for x in v.issues:
            result.findings.append(Finding(
                i, fn.name, x.rule.id, x.rule.section, x.rule.sentence, x.severity, "ret",
                flat, got, x.expected, x.ulp_error,
                x.rule.reading if x.reading is None else x.reading))
    result.findings.sort(key=lambda f: (f.index, f.rule_id))
    return result


def check_screened(fn, inputs: dict, outputs: dict, answer: np.ndarray, claims,
                   width: int) -> CheckResult:
    """The verdict on vectors the device screen judged (oracle.geometric_screen's
    GEOMETRIC_SCREENED, every precision): ``answer`` float32 (n,), a passed vector's
    error in ULPs or -1 where the host judges it.  ``check`` judges every vector not
    passed and the passed one of the largest error, whose error it measures exactly (the
    unit's maximum); the others count as screened.  The result covers all n vectors, each
    Finding's index a vector index of the unit.  Raises as ``check``."""
    if isinstance(fn, str):
        fn = catalogue.function(fn)
    err = np.asarray(answer, np.float32)
    n = int(err.size)
    passed = err >= 0
    cands = np.flatnonzero(~passed)
    if passed.any():
        cands = np.union1d(cands, [int(np.argmax(np.where(passed, err, -1.0)))])
    lanes = (cands[:, None] * width + np.arange(width)).ravel()
    sub_in = {a.name: np.asarray(inputs[a.name]).ravel()[lanes] for a in fn.inputs}
    out = np.asarray(outputs["ret"]).ravel()
    sub_out = {"ret": out[lanes] if fn.name in VECTOR_RESULTS else out[cands]}
    result = check(fn, sub_in, sub_out, claims, width)
    result.findings = [replace(f, index=int(cands[f.index])) for f in result.findings]
    result.n = n
    result.screened += n - int(cands.size)
    return result


# --------------------------------------------------------------------------- inputs
def _landmarks(fmt: FloatFormat) -> dict:
    """Named landmark patterns of ``fmt``."""
    sqrt_max = round_to_bits(mpmath.sqrt(mpf(fmt.value(fmt.max_finite))), fmt, "rtz")
    sqrt_min = round_to_bits(mpmath.sqrt(mpf(fmt.value(fmt.min_normal))), fmt, "rtz")
    return {
        "one": fmt.bits_of(1.0), "two": fmt.bits_of(2.0), "three": fmt.bits_of(3.0),
        "four": fmt.bits_of(4.0), "half": fmt.bits_of(0.5), "inf": fmt.pos_inf,
        "qnan": fmt.default_qnan, "snan": fmt.pos_inf | 1, "max": fmt.max_finite,
        "min": fmt.min_normal, "tmin": fmt.true_min, "sub_max": fmt.min_normal - 1,
        "sqrt_max": sqrt_max, "sqrt_min": sqrt_min, "big": sqrt_max + (8 << (fmt.frac_bits - 3)),
    }


def _landmark_vectors(fmt: FloatFormat, width: int) -> list:
    L = _landmarks(fmt)
    s = fmt.sign_mask
    w = width

    def vec(*lanes):
        lanes = list(lanes)[:w]
        return tuple(lanes + [0] * (w - len(lanes)))

    vs = [
        vec(), tuple([s] * w), vec(s, 0, s, 0), vec(L["one"]), vec(0, s | L["one"]),
        tuple([L["one"]] * w), vec(L["one"], s | L["two"], L["three"], s | L["four"]),
        vec(L["three"], L["four"]), vec(L["half"], L["half"], L["half"], L["half"]),
        vec(L["inf"]), vec(s | L["inf"], L["one"]), vec(L["one"], L["inf"], s | L["inf"]),
        vec(L["qnan"], L["one"]), vec(L["snan"]), vec(L["one"], s | L["snan"]),
        vec(L["inf"], L["qnan"]),
        vec(L["qnan"] | 0x5, L["snan"] | s),
        tuple([L["max"]] * w), vec(L["max"], L["one"]), tuple([L["big"]] * w),
        tuple([L["sqrt_max"]] * w), tuple([L["min"]] * w), vec(L["min"], L["tmin"]),
        tuple([L["tmin"]] * w), vec(L["sub_max"], s | L["tmin"], 0, L["tmin"]),
        tuple([L["sqrt_min"]] * w), vec(L["sqrt_min"] - 1, s | L["sqrt_min"]),
        vec(L["one"], L["tmin"]), vec(L["max"], L["tmin"], s | L["min"]),
    ]
    out, seen = [], set()
    for v in vs:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def _flat(vectors, fmt: FloatFormat) -> np.ndarray:
    return np.asarray([b for v in vectors for b in v], dtype=np.uint64).astype(fmt.uint)


def special_inputs(fn, fmt: FloatFormat, width: int) -> dict[str, np.ndarray]:
    """Landmark vectors of ``fmt`` for geometric built-in ``fn`` (a Function or name): zero
    vectors with each sign mix, ordinary small integers, one infinity, infinities of both
    signs, quiet and signaling NaN lanes (with payloads) and a NaN with an infinity, huge
    lanes (sum of squares overflows: max_finite, just above sqrt(max_finite)), tiny lanes
    (sum of squares underflows: min_normal, sqrt(min_normal)), subnormal lanes, and mixes
    of extremes.  One-input built-ins get the list; two-input ones every ordered pair of it.
    Returns flat ``fmt.uint`` arrays of length n*width per input (deterministic).  Raises
    GeometricError for a non-geometric function or a width it lacks."""
    name = fn if isinstance(fn, str) else fn.name
    _check_name_width(name, width)
    f = catalogue.function(name)
    vs = _landmark_vectors(fmt, width)
    if len(f.inputs) == 1:
        return {f.inputs[0].name: _flat(vs, fmt)}
    pairs = list(itertools.product(vs, vs))
    return {f.inputs[0].name: _flat([p for p, _ in pairs], fmt),
            f.inputs[1].name: _flat([q for _, q in pairs], fmt)}


#: Vector classes of ``inputs`` with their weights.
CLASSES = {
    "ordinary": 6, "wide": 3, "zeros": 1, "single_lane": 1, "one_inf": 1, "nan_lane": 1,
    "huge": 2, "tiny": 2, "subnormal": 2, "near_sqrt_min": 1, "near_sqrt_max": 1,
}


def _random_lanes(rng, fmt: FloatFormat, shape, lo: int, hi: int) -> np.ndarray:
    """Patterns with unbiased exponents uniform in [lo, hi] (clipped to the normal range),
    random signs and significands."""
    e = rng.integers(max(lo, fmt.emin), min(hi, fmt.emax) + 1, size=shape)
    frac = rng.integers(0, 1 << fmt.frac_bits, size=shape, dtype=np.uint64)
    sign = rng.integers(0, 2, size=shape).astype(np.uint64) << np.uint64(fmt.bits - 1)
    biased = (e + fmt.emax).astype(np.uint64) << np.uint64(fmt.frac_bits)
    return (sign | biased | frac).astype(np.uint64)


def _draw(rng, fmt: FloatFormat, cls: str, width: int) -> np.ndarray:
    """One vector (uint64 patterns) of class ``cls``."""
    half_e = fmt.emax // 2
    if cls == "ordinary":
        return _random_lanes(rng, fmt, width, -8, 8)
    if cls == "wide":
        return _random_lanes(rng, fmt, width, fmt.emin, fmt.emax)
    if cls == "zeros":
        return rng.integers(0, 2, size=width).astype(np.uint64) << np.uint64(fmt.bits - 1)
    if cls == "single_lane":
        v = np.zeros(width, np.uint64)
        v[rng.integers(width)] = _random_lanes(rng, fmt, 1, fmt.emin, fmt.emax)[0]
        return v
    if cls == "huge":
        return _random_lanes(rng, fmt, width, half_e - 2, fmt.emax)
    if cls == "tiny":
        return _random_lanes(rng, fmt, width, fmt.emin, -half_e + 2)
    if cls == "near_sqrt_min":
        return _random_lanes(rng, fmt, width, -half_e - 1, -half_e + 1)
    if cls == "near_sqrt_max":
        return _random_lanes(rng, fmt, width, half_e - 1, half_e + 1)
    v = _random_lanes(rng, fmt, width, -8, 8)
    k = rng.integers(width)
    if cls == "subnormal":
        n_sub = rng.integers(1, width + 1)
        idx = rng.permutation(width)[:n_sub]
        sub = rng.integers(1, fmt.min_normal, size=n_sub, dtype=np.uint64)
        sign = rng.integers(0, 2, size=n_sub).astype(np.uint64) << np.uint64(fmt.bits - 1)
        v = _random_lanes(rng, fmt, width, fmt.emin, fmt.emin + 4) if rng.random() < 0.5 else v
        v[idx] = sub | sign
        return v
    if cls == "one_inf":
        v[k] = fmt.pos_inf | (fmt.sign_mask if rng.random() < 0.5 else 0)
        return v
    if cls == "nan_lane":
        payload = int(rng.integers(1, fmt.quiet_bit))
        quiet = fmt.quiet_bit if rng.random() < 0.5 else 0
        v[k] = fmt.exp_mask | quiet | payload | (fmt.sign_mask if rng.random() < 0.5 else 0)
        return v
    raise GeometricError(f"class={cls!r} is unknown; use one of {sorted(CLASSES)}")


def _partner(rng, fmt: FloatFormat, name: str, p0: np.ndarray, width: int) -> np.ndarray:
    """A second vector for dot/cross/distance: independent, or built to cancel (p0 with a
    few ulps of noise for distance; a permutation with a sign flip for dot and cross)."""
    r = rng.random()
    if r < 0.6:
        cls = rng.choice(list(CLASSES), p=np.array(list(CLASSES.values())) / sum(CLASSES.values()))
        return _draw(rng, fmt, str(cls), width)
    finite = (p0 & np.uint64(fmt.exp_mask)) != np.uint64(fmt.exp_mask)
    if name.endswith("distance"):
        noise = rng.integers(-4, 5, size=width)
        q = p0.astype(np.int64) + np.where(finite & ((p0 & np.uint64(fmt.abs_mask)) > 8), noise, 0)
        return q.astype(np.uint64)
    q = p0[rng.permutation(width)].copy()
    q[rng.integers(width)] ^= np.uint64(fmt.sign_mask)
    return q


def inputs(fn, fmt: FloatFormat, width: int, n: int, seed: int) -> dict[str, np.ndarray]:
    """``n`` random vectors per input of geometric built-in ``fn`` (Function or name),
    biased to the classes of ``CLASSES``: ordinary values, wide exponent spreads, signed
    zero mixes, a single nonzero lane, one infinity, one NaN lane (quiet or signaling, random
    payload and sign), huge lanes (sum of squares overflows), tiny lanes (underflows),
    subnormal lanes, lanes near sqrt(min_normal) and sqrt(max_finite); two-input built-ins
    also get partners built to cancel.  Deterministic in ``seed``.  Returns flat
    ``fmt.uint`` arrays of length n*width.  Raises GeometricError for a non-geometric
    function, a width it lacks or n < 0."""
    name = fn if isinstance(fn, str) else fn.name
    _check_name_width(name, width)
    if n < 0:
        raise GeometricError(f"n={n} must be >= 0")
    f = catalogue.function(name)
    rng = np.random.default_rng(seed)
    names = list(CLASSES)
    weights = np.array([CLASSES[k] for k in names], float)
    weights /= weights.sum()
    first, second = [], []
    for _ in range(n):
        cls = str(rng.choice(names, p=weights))
        p0 = _draw(rng, fmt, cls, width)
        first.append(p0)
        if len(f.inputs) == 2:
            second.append(_partner(rng, fmt, name, p0, width))
    out = {f.inputs[0].name: _flat(first, fmt)}
    if len(f.inputs) == 2:
        out[f.inputs[1].name] = _flat(second, fmt)
    return out
