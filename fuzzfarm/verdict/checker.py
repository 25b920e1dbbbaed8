"""The verdict: device outputs against prescribed results and ULP bounds.

Pure logic (docs/design.md, decision 9): no pyopencl, no Ray, no I/O.  For one batch of one built-in
the checker decides, element by element and output by output:

1. **Prescribed results** (edgecases/data/rules_*.toml).  Every rule whose condition holds
   must be met bit for bit; a prescribed result overrides every ULP or flush-to-zero
   allowance (OpenCL SPIR-V Env 3.8.2).
2. **NaN propagation** (``F9.G10``) for elements no rule covers, and NaN quietness
   (``CL.nan.quiet_stays_quiet``) for every element with only quiet NaN arguments.
3. **The reference**, for the rest: exact operations (fmod, ldexp, frexp, ...) compare bits
   with the exact result; the others compare the ULP error against the bound of the
   device's profile (edgecases/data/ulp_bounds.toml).  A float64 screen (fuzzfarm.oracle.screen)
   passes what it can prove; everything else is measured with mpmath, and a failure is
   confirmed at twice the precision before it is reported (docs/design.md, decision 4).

The device's claims decide (docs/design.md, decision 2): on a device without CL_FP_DENORM a result
that is subnormal before rounding may be flushed to a zero of either sign, and a failing
element passes when it conforms with its subnormal arguments flushed to zero (the four
results of 3.8.3 Edge Case Behavior in Flush To Zero Mode).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from typing import Callable, NamedTuple

import mpmath
import numpy as np

from edgecases import bounds, catalogue
from edgecases.predicates import evaluate
from fuzzfarm import formats
from fuzzfarm.formats import FloatFormat
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.verdict.findings import (FINDINGS_PER_RULE, CheckResult, Finding, class_codes,
                                      first_of_each)
from fuzzfarm.oracle import (EXACT_FUNCTIONS, Congruent, Exact, OneOf, Unspecified, reference,
                             round_to_bits, ulp_error, value_of)
from fuzzfarm.oracle.histogram import histogram as ulp_histogram
from fuzzfarm.verdict.screening import maximum_candidates_left, screen_pending

__all__ = ["check_batch"]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


#: check_batch judges a long batch in blocks of this many elements (measured fastest on a
#: 2-core EPYC: 2^18 keeps the temporaries in cache; 2^20 is 2.3x slower).  The
#: FINDINGS_PER_RULE cap applies to the whole batch.
BLOCK = 1 << 18


class _Ctx:
    """Per-batch state shared by the stages."""

    def __init__(self, fn, inputs, outputs, claims, prec, flush_results, width=1):
        self.fn, self.claims, self.fmt = fn, claims, claims.fmt
        self.width = width
        self.args = {a.name: np.asarray(inputs[a.name]) for a in fn.inputs}
        self.outs = {o.name: np.asarray(outputs[o.name]) for o in fn.outputs}
        self.kinds = {a.name: a.kind for a in fn.inputs}
        self.n = len(next(iter(self.args.values())))
        self.prec = prec or 2 * self.fmt.precision + 48
        self.flush = flush_results
        self.result = CheckResult(fn.name, self.n)
        self.handled = {o.name: np.zeros(self.n, bool) for o in fn.outputs}
        nan = np.zeros(self.n, bool)
        special = np.zeros(self.n, bool)
        for a in fn.inputs:
            if a.kind == "float":
                v = self.args[a.name]
                nan |= formats.is_nan(v, self.fmt)
                special |= (v.astype(self.fmt.uint) & self.fmt.uint(self.fmt.abs_mask)) >= \
                    self.fmt.uint(self.fmt.pos_inf)
        self.any_nan = nan
        self.any_special = special
        self.recorded: Counter = Counter()
        self.cap = FINDINGS_PER_RULE        # findings recorded per rule and output
        self.measured_errors: list = []    # (element, ULPs) measured beyond the screen
        # (element, ULPs) of failures with a subnormal argument on a flushing device: kept
        # out of the maximum until the 3.8.3 rescue says whether they conform (_settle)
        self.deferred: list = []
        self.binned = None                 # elements whose screened error is binned
        self.max_so_far = float("nan")     # the batch's largest measured error (blocks)
        self._subnormal_arg = None
        self.unjudged = self._undefined()

    def _undefined(self) -> np.ndarray:
        """Elements whose result the spec leaves undefined: the function's ``undefined``
        conditions (functions.toml), and infinite or NaN arguments where the device or
        the build puts them outside the contract."""
        mask = np.zeros(self.n, bool)
        others = {k: (v, self.kinds[k]) for k, v in self.args.items()}
        for conj in self.fn.undefined:
            m = np.ones(self.n, bool)
            for arg, word in conj:
                m &= evaluate(word, self.args[arg], self.kinds[arg], self.fmt, others)
            mask |= m
        if not self.claims.judges_specials:
            mask |= self.any_special
        return mask

    def row(self, i):
        return {k: v[i] for k, v in self.args.items()}

    def add_many(self, idx: np.ndarray, rule, output: str, expected) -> None:
        """Findings of ``rule`` for the elements ``idx`` (int array), ``expected(i)`` giving
        each one's expected-result text.  At most FINDINGS_PER_RULE of one rule and output
        are recorded per batch; the rest are counted in ``result.unrecorded``.  On a
        flushing device an element with a subnormal argument is always recorded (the 3.8.3
        rescue re-judges recorded failures only)."""
        idx = np.asarray(idx)
        if idx.size == 0:
            return
        key = (rule.id, output)
        room = max(0, self.cap - self.recorded[key])
        keep = np.arange(idx.size) < room
        if idx.size > room:
            if self.flush:
                keep |= self.subnormal_arg[idx]
            # the first of each input class is recorded too: every class counted has an
            # example (store: one sample per rule and input class)
            codes = self.codes(idx)
            keep[first_of_each(codes)] = True
            self.result.count_unrecorded(rule.id, rule.severity, codes[~keep])
        for i in idx[keep]:
            self.add(i, rule, output, expected(i))

    def codes(self, idx: np.ndarray) -> np.ndarray:
        """The input class codes (findings.class_codes) of the elements ``idx``."""
        return class_codes(self.fn, self.fmt, {k: v[idx] for k, v in self.args.items()})

    @property
    def subnormal_arg(self) -> np.ndarray:
        if self._subnormal_arg is None:
            m = np.zeros(self.n, bool)
            for a in self.fn.inputs:
                if a.kind == "float":
                    m |= formats.is_subnormal(self.args[a.name], self.fmt)
            self._subnormal_arg = m
        return self._subnormal_arg

    def add(self, i, rule, output, expected, ulp=None, severity=None, reading=None):
        self.recorded[(rule.id, output)] += 1
        self.result.findings.append(Finding(
            int(i), self.fn.name, rule.id, rule.section, rule.sentence,
            severity or rule.severity, output,
            tuple(int(self.args[a.name][i]) for a in self.fn.inputs),
            tuple(int(self.outs[o.name][i]) for o in self.fn.outputs),
            expected, ulp, reading if reading is not None else rule.reading))


def _flushable(got: int, fmt: FloatFormat) -> bool:
    return (int(got) & fmt.abs_mask) == 0


def _is_nan1(bits: int, fmt: FloatFormat) -> bool:
    return (int(bits) & fmt.abs_mask) > fmt.pos_inf


def _relaxed_note():
    return catalogue.general_rule("relaxed.edge_case")


def _excused(c: _Ctx, spec, got: int, row: dict) -> bool:
    """A prescribed-result departure the build options allow: under
    -cl-finite-math-only an infinite or NaN result, under -cl-no-signed-zeros a zero of
    the other sign."""
    fmt = c.fmt
    if spec.kind == "int":
        return False
    one = {k: np.asarray([v]) for k, v in row.items()}
    if not c.claims.judges_specials:
        if spec.kind == "nan":
            return True
        bits = spec.expected_bits(one, fmt, c.claims.consts)
        if bits is not None and (int(bits[0]) & fmt.abs_mask) >= fmt.pos_inf:
            return True
    if not c.claims.signed_zeros and (int(got) & fmt.abs_mask) == 0:
        flipped = np.asarray([int(got) ^ fmt.sign_mask], fmt.uint)
        return bool(spec.matches(flipped, one, fmt, c.claims.consts)[0])
    return False


def _apply_rules(c: _Ctx) -> None:
    others = {k: (v, c.kinds[k]) for k, v in c.args.items()}
    for rule in catalogue.rules_for(c.fn.name):
        mask = ~c.unjudged
        for arg, word in rule.when:
            mask &= evaluate(word, c.args[arg], c.kinds[arg], c.fmt, others)
        if not mask.any():
            continue
        idx = np.nonzero(mask)[0]
        sub = {k: v[idx] for k, v in c.args.items()}
        for out, spec in rule.results.items():
            got = c.outs[out][idx]
            ok = spec.matches(got, sub, c.fmt, c.claims.consts)
            if c.flush and out in rule.ftz_results:
                # 3.8.3: the alternatives a flushing device may choose instead (nextafter).
                ok |= rule.ftz_results[out].matches(got, sub, c.fmt, c.claims.consts)
            c.handled[out][idx] = True
            bad = idx[~ok]
            if bad.size and (not c.claims.judges_specials or not c.claims.signed_zeros):
                bad = np.asarray([j for j in bad
                                  if not _excused(c, spec, c.outs[out][j], c.row(j))], int)
            if not bad.size:
                continue
            if c.claims.relaxed and rule.severity == "fail":
                note = _relaxed_note()
                for j in bad:
                    c.add(j, rule, out, spec.describe(c.row(j), c.fmt, c.claims.consts),
                          severity="note", reading=f"{note.reading} (rule {rule.id})")
            else:
                c.add_many(bad, rule, out,
                           lambda j: spec.describe(c.row(j), c.fmt, c.claims.consts))


def _payload(bits: int, fmt: FloatFormat) -> int:
    """A NaN's payload: the significand bits below the quiet bit."""
    return int(bits) & (fmt.quiet_bit - 1)


def _apply_nan_rules(c: _Ctx) -> None:
    if c.fn.is_native or not c.any_nan.any():
        return
    g10 = catalogue.general_rule("F9.G10")
    quiet = catalogue.general_rule("CL.nan.quiet_stays_quiet")
    general = catalogue.general_rules()
    fmt = c.fmt
    judged = c.any_nan & ~c.unjudged
    floats = [a.name for a in c.fn.inputs if a.kind == "float"]
    any_snan = np.zeros(c.n, bool)
    for a in floats:
        any_snan |= formats.is_snan(c.args[a], fmt)
    snan_rule = general.get("CL.nan.signaling_stays_nan", g10)
    for o in c.fn.outputs:
        pending = judged & ~c.handled[o.name]
        if o.kind == "float":
            bad = pending & ~formats.is_nan(c.outs[o.name], fmt)
            c.add_many(np.nonzero(bad & any_snan)[0], snan_rule, o.name, lambda j: "any NaN")
            c.add_many(np.nonzero(bad & ~any_snan)[0], g10, o.name, lambda j: "any NaN")
        c.handled[o.name] |= c.any_nan  # an int result of a NaN is unspecified unless ruled
    # Quiet NaNs in, a signaling NaN out: only where every NaN argument was quiet.
    all_quiet = judged.copy()
    for a in floats:
        all_quiet &= ~formats.is_snan(c.args[a], fmt)
    some_snan = judged & ~all_quiet
    for o in c.fn.outputs:
        if o.kind != "float":
            continue
        out_snan = formats.is_snan(c.outs[o.name], fmt)
        c.add_many(np.nonzero(all_quiet & out_snan)[0], quiet, o.name, lambda j: "a quiet NaN")
        should = general.get("CL.nan.signaling_should_quiet")
        # IEEE 754-2008 §5.5.1/§6.2: fabs and copysign return a signaling NaN unchanged.
        if should is not None and not c.fn.quiet_computational:
            c.add_many(np.nonzero(some_snan & out_snan)[0], should, o.name,
                       lambda j: "a quiet NaN (should)")
    # More than one NaN operand: the result should be one of them (payload compared).
    one_of = general.get("CL.nan.one_of_operands")
    if one_of is None or len(floats) < 2:
        return
    nan_count = sum(formats.is_nan(c.args[a], fmt).astype(int) for a in floats)
    o = c.fn.outputs[0]
    if o.kind != "float":
        return
    multi = judged & (nan_count >= 2) & formats.is_nan(c.outs[o.name], fmt)
    idx = np.nonzero(multi)[0]
    if not idx.size:
        return
    mask = c.fmt.uint(fmt.quiet_bit - 1)
    got = c.outs[o.name][idx].astype(fmt.uint) & mask
    match = np.zeros(idx.size, bool)
    for a in floats:
        v = c.args[a][idx].astype(fmt.uint)
        match |= formats.is_nan(v, fmt) & ((v & mask) == got)

    def expected(j):
        ops = {_payload(c.args[a][j], fmt) for a in floats if _is_nan1(c.args[a][j], fmt)}
        return "the payload of one of the NaN operands: " + " or ".join(
            hex(p) for p in sorted(ops))
    c.add_many(idx[~match], one_of, o.name, expected)


def _bound_rule(c: _Ctx, bound) -> catalogue.GeneralRule:
    mode = "relaxed math, " if c.claims.relaxed else ""
    return catalogue.GeneralRule(
        f"ulp.{c.fn.name}", bound.source,
        f"{c.fn.name}: {bound.describe(c.width)} ({c.claims.precision}, {mode}"
        f"{bound.profile} profile)")


class _Limit:
    """The limits of one element (edgecases.bounds.Limits, one row): ``ulps`` and
    ``absolute`` (conforming if either holds); where ``note``, exceeding them is a note and a
    failure only beyond ``fail_ulps`` / ``fail_absolute`` (the looser reading)."""

    __slots__ = ("ulps", "absolute", "note", "reading", "fail_ulps", "fail_absolute")

    def __init__(self, ulps, absolute=0.0, note=False, reading="", fail_ulps=None,
                 fail_absolute=None):
        self.ulps, self.absolute, self.note, self.reading = ulps, absolute, note, reading
        self.fail_ulps = ulps if fail_ulps is None else fail_ulps
        self.fail_absolute = absolute if fail_absolute is None else fail_absolute


def _report(c: _Ctx, i, rule, out, expected, err, lim: _Limit, abs_err=None) -> None:
    if lim.note:
        if err is None and abs_err is None:
            # a NaN result: a failure only where the looser reading still bounds the error
            beyond = math.isfinite(lim.fail_ulps)
        else:
            beyond = (err is None or not err <= lim.fail_ulps) and \
                (abs_err is None or not abs_err <= lim.fail_absolute)
        if not beyond:
            c.add(i, rule, out, expected, err, severity="note", reading=lim.reading)
            return
    c.add(i, rule, out, expected, err)


def _abs_error(got: int, r, fmt: FloatFormat):
    if (int(got) & fmt.abs_mask) >= fmt.pos_inf:
        return None
    return float(abs(mpmath.mpf(fmt.value(int(got))) - r))


def _judge_exact(c: _Ctx, i: int, out, want, got: int, lim: _Limit, rule,
                 correctly_rounded: bool) -> None:
    """Compare one output with its exact reference pattern (or int value)."""
    fmt = c.fmt
    if isinstance(want, OneOf):
        if want.matches(int(got), fmt):
            return
        if c.flush and c.fn.unfused:
            # A flushing device may also flush mad's intermediate product (3.8.3), a
            # third result the oracle does not enumerate: reported as a note, never failed.
            lim = _Limit(lim.ulps, lim.absolute, True, "mad on a flush-to-zero device: the "
                         "unfused product may have been flushed to zero before the add",
                         float("inf"), float("inf"))
        if len(want.choices) > 1:
            # report against the nearest choice, naming all of them
            w0 = want.choices[0]
            err = None
            if not _is_nan1(got, fmt) and (int(w0.bits) & fmt.abs_mask) < fmt.pos_inf:
                err = ulp_error(int(got), value_of(int(w0.bits), fmt), fmt, c.claims.rounding)
            _report(c, i, rule, out.name, want.describe(fmt), err, lim)
            return
        want = want.choices[0]
    if isinstance(want, Congruent):
        if not want.matches(int(got)):
            c.add(i, rule, out.name, want.describe())
        return
    if out.kind != "float":
        if int(got) != int(want.bits):
            c.add(i, rule, out.name, f"{int(want.bits)}")
        return
    w, g = int(want.bits), int(got)
    if w == g:
        return
    if c.flush and (w & fmt.abs_mask) < fmt.min_normal and _flushable(g, fmt):
        return
    if (w & fmt.abs_mask) == 0 and (g & fmt.abs_mask) == 0:
        if c.claims.signed_zeros:
            c.add(i, catalogue.general_rule("ieee.zero_sign"), out.name, fmt.hex(w))
        return
    if not c.claims.judges_specials and ((w & fmt.abs_mask) >= fmt.pos_inf
                                         or (g & fmt.abs_mask) >= fmt.pos_inf):
        return
    err = None
    if not _is_nan1(g, fmt) and (w & fmt.abs_mask) < fmt.pos_inf:
        err = ulp_error(g, value_of(w, fmt), fmt, c.claims.rounding)
        if not correctly_rounded and err <= lim.ulps:
            return
    a_err = None
    if not _is_nan1(g, fmt) and (w & fmt.abs_mask) < fmt.pos_inf:
        a_err = _abs_error(g, value_of(w, fmt), fmt)
        if lim.absolute and a_err is not None and a_err <= lim.absolute:
            return
    _report(c, i, rule, out.name, fmt.hex(w), err, lim, a_err)


def _measure(c: _Ctx, r, got: int, lim: _Limit, correctly_rounded: bool):
    """(conforms, ulp error, absolute error) of one float output against a real ``r``."""
    fmt = c.fmt
    if _is_nan1(got, fmt):
        return False, None, None
    m = value_of(fmt.min_normal, fmt)
    # half_* are "permitted to have up to 8192 ulps of error" with "a minimum of 10 bits of
    # accuracy" (OpenCL 2.1 Env §8.5.1): a subnormal result flushed to zero is not judged.
    if (c.flush or c.fn.family == "half") and -m < r < m and _flushable(got, fmt):
        return True, 0.0, 0.0
    err = ulp_error(int(got), r, fmt, c.claims.rounding)
    a_err = _abs_error(got, r, fmt)
    if any(round_to_bits(r, fmt, m) == int(got) for m in c.claims.rounding):
        return True, err, a_err                  # correctly rounded always conforms
    ok = False if correctly_rounded else err <= lim.ulps
    if not ok and lim.absolute and a_err is not None:
        ok = a_err <= lim.absolute
    if not ok and not c.claims.judges_specials and (int(got) & fmt.abs_mask) >= fmt.pos_inf:
        ok = True     # an overflowing result under -cl-finite-math-only is not judged
    return ok, err, a_err


def _limits(c: _Ctx, bound, idx):
    """The bound's per-element Limits (edgecases.bounds) for the elements ``idx``, or None
    for a correctly rounded bound (0.5 ulp everywhere, judged everywhere)."""
    if bound.correctly_rounded:
        return None
    return bound.limits({k: v[idx] for k, v in c.args.items()}, c.kinds, c.fmt, c.width)


_CORRECTLY_ROUNDED = _Limit(0.5)


def _limit_at(lim, k: int, bound) -> _Limit:
    """Row ``k`` of Limits ``lim`` as a _Limit (built only for elements judged exactly)."""
    if lim is None:
        return _CORRECTLY_ROUNDED
    fu = None if lim.fail_ulps is None else float(lim.fail_ulps[k])
    fa = None if lim.fail_absolute is None else float(lim.fail_absolute[k])
    reading = bound.reading or ""
    rd = reading if lim.reading is None else (str(lim.reading[k]) or reading)
    return _Limit(float(lim.ulps[k]), float(lim.absolute[k]), bool(lim.note[k]), rd, fu, fa)


def _judge_output(c: _Ctx, i, k, o, r, r_again, got, lim, bound, rule, domain) -> None:
    """Judge output ``o`` (index ``k``) of element ``i`` against reference ``r``."""
    fmt = c.fmt
    if r is Unspecified:
        return
    if r is None:
        if o.kind == "float" and not _is_nan1(got, fmt) and c.claims.judges_specials:
            c.add(i, domain, o.name, "any NaN")
        return
    if isinstance(r, (Exact, OneOf, Congruent)):
        _judge_exact(c, i, o, r, got, lim, rule, bound.correctly_rounded)
        return
    ok, err, _ = _measure(c, r, got, lim, bound.correctly_rounded)
    failed = False
    if not ok:  # confirm at twice the precision (docs/design.md, decision 4)
        r2 = r_again()[k]
        ok2, err2, a2 = (True, None, None) if not isinstance(r2, mpmath.mpf) else \
            _measure(c, r2, got, lim, bound.correctly_rounded)
        if ok2:
            c.add(i, catalogue.general_rule("unresolved"), o.name, _describe_real(r, fmt), err)
        else:
            _report(c, i, rule, o.name, _describe_real(r2, fmt), err2, lim, a2)
            failed = True
    if err is None:
        return
    if failed and c.flush and c.subnormal_arg[i]:
        c.deferred.append((int(i), float(err)))
    else:
        _note(c, i, err)


def _note(c: _Ctx, i, err) -> None:
    """Element ``i``'s measured error (ULPs) into the maximum and the histogram."""
    c.result.note_error(err, i)
    c.measured_errors.append((int(i), float(err)))


def _settle(c: _Ctx, rescued: dict) -> None:
    """The deferred errors into the maximum: an element the 3.8.3 rescue excused counts
    with its error against the flushed arguments' result (``rescued``: {element: ULPs,
    NaN where none was measured, e.g. a prescribed infinity}), never its error against
    the unflushed reference (rsqrt of a subnormal flushed to +0 gives +inf: 10^170 ULPs
    from the reference, and no accuracy figure); any other with its own."""
    for i, err in c.deferred:
        err = rescued.get(i, err)
        if np.isfinite(err):
            _note(c, i, err)
    c.deferred = []


def _exact_histogram(c: _Ctx) -> None:
    """The errors measured outside the screen's passes -- on the exact path, and the
    screen-proven failures counted beyond the exact probe -- into the result's histogram
    (the screen's passed inputs are in it already), by the first float argument."""
    first = next((a.name for a in c.fn.inputs if a.kind == "float"), None)
    if not c.measured_errors or first is None:
        return
    idx, err = (np.array(v) for v in zip(*c.measured_errors))
    ok = np.isfinite(err)
    if c.binned is not None:            # re-measured exactly: binned by the screen already
        ok &= ~c.binned[idx]
    c.result.add_histogram(ulp_histogram(err[ok], c.args[first][idx[ok]], c.fmt,
                                         name=c.fn.name))


class _Judging(NamedTuple):
    """What the reference path judges a batch's pending elements by: the bound and its
    rule, the domain rule, the pending indices ``idx``, the argument names and kinds, and
    ``limit(p)``: the limit of the element at position ``p`` of ``idx``."""

    bound: object
    rule: object
    domain: object
    idx: np.ndarray
    names: list
    kinds: tuple
    limit: Callable


def _apply_reference(c: _Ctx) -> None:
    fn = c.fn
    bound = bounds.bound(fn.name, c.claims.precision, c.claims.profile, c.claims.relaxed)
    if bound.implementation_defined and not fn.is_native:
        c.result.unjudged += int((~c.unjudged).sum())
        return
    rule = _bound_rule(c, bound)
    pending = np.zeros(c.n, bool)
    for o in fn.outputs:
        pending |= ~c.handled[o.name]
    pending &= ~c.any_nan & ~c.unjudged
    idx = np.arange(c.n) if pending.all() else np.nonzero(pending)[0]
    c.result.unjudged += int(c.unjudged.sum())
    if idx.size == 0:
        return
    if fn.is_native:
        _measure_native(c, idx)
        return
    # A plain bound (one number everywhere) needs no per-element limits: the fast path.
    plain = bound.plain_ulps
    lim = None if plain is not None else _limits(c, bound, idx)
    plain_limit = _Limit(plain) if plain is not None else None
    # positions (into idx and lim) of the elements the bound judges
    pos = np.arange(idx.size) if lim is None else np.nonzero(lim.judged)[0]
    c.result.unjudged += int(idx.size - pos.size)
    j = _Judging(bound, rule, catalogue.general_rule("C99.7.12.1.domain"), idx,
                 [a.name for a in fn.inputs], tuple(a.kind for a in fn.inputs),
                 (lambda p: plain_limit) if plain_limit is not None else
                 (lambda p: _limit_at(lim, p, bound)))
    if fn.name in EXACT_FUNCTIONS:
        _judge_exact_function(c, j, pos)
        return
    exact_pos, counted, maxima = screen_pending(c, bound, plain, lim, idx, pos, rule)
    _judge_positions(c, j, exact_pos)
    if counted is not None:
        _judge_screened_failures(c, j, *counted)
    if maxima is not None:
        _measure_maximum(c, j, *maxima)


def _measure_maximum(c: _Ctx, j: _Judging, positions, estimates, margin: float) -> None:
    """Measure exactly, largest estimate first, the passed inputs that may hold the batch's
    largest error (``screen_pending``'s maxima, in any order) until the next cannot
    raise the largest measured (``screening.maximum_candidates_left``): the batch's
    ``max_ulp_error`` and ``max_ulp_element`` are then the true maximum and its input,
    within two margins of the screen (ties), whatever a doubled estimate ranked first."""
    estimates = np.array(estimates, np.float64)         # a copy: measured ones -> -inf
    first = True
    while estimates.size:
        k = int(np.argmax(estimates))
        measured = float(np.fmax(c.result.max_ulp_error, c.max_so_far))
        if estimates[k] == -np.inf or not maximum_candidates_left(
                float(estimates[k]), margin, measured, first):
            return              # the largest estimate left cannot: none of the others
        _judge_positions(c, j, [positions[k]])
        c.result.screened -= 1
        estimates[k], first = -np.inf, False


def _judge_exact_function(c: _Ctx, j: _Judging, pos) -> None:
    """An exactly rounded built-in (EXACT_FUNCTIONS): each element against the exact
    result in every rounding mode the device claims."""
    fn = c.fn
    for p in pos:
        i = j.idx[p]
        args = tuple(int(c.args[n][i]) for n in j.names)
        refs = [reference(fn.name, args, j.kinds, c.fmt, c.prec, m) for m in c.claims.rounding]
        for k, o in enumerate(fn.outputs):
            if c.handled[o.name][i]:
                continue
            got = int(c.outs[o.name][i])
            if any(isinstance(r[k], Exact) and int(r[k].bits) == got for r in refs):
                continue
            _judge_output(c, i, k, o, refs[0][k], lambda: refs[0], got, j.limit(p),
                          j.bound, j.rule, j.domain)
    c.result.exact += int(pos.size)


def _judge_positions(c: _Ctx, j: _Judging, positions) -> None:
    """The exact path (mpmath) for the elements at ``positions`` of ``j.idx``."""
    fn = c.fn
    for p in positions:
        i = j.idx[p]
        args = tuple(int(c.args[n][i]) for n in j.names)
        refs = reference(fn.name, args, j.kinds, c.fmt, c.prec)
        again = _Once(lambda: reference(fn.name, args, j.kinds, c.fmt, 2 * c.prec))
        c.result.exact += 1
        lim_p = j.limit(p)
        for k, o in enumerate(fn.outputs):
            if c.handled[o.name][i]:
                continue
            _judge_output(c, i, k, o, refs[k], again, int(c.outs[o.name][i]), lim_p,
                          j.bound, j.rule, j.domain)


def _judge_screened_failures(c: _Ctx, j: _Judging, probe, rest, rest_err) -> None:
    """Screen-proven failures beyond those recorded: the probe was judged exactly; if
    every one of it failed, the rest are counted, not recorded (the first of each input
    class among them judged, an example of every class counted), else judged."""
    fn, idx, rule = c.fn, j.idx, j.rule
    probe_set = set(int(i) for i in idx[probe])
    confirmed = sum(1 for f in c.result.findings if f.rule_id == rule.id
                    and f.severity == "fail" and f.index in probe_set)
    if confirmed != probe.size:
        _judge_positions(c, j, rest)
        return
    codes, probe_codes = c.codes(idx[rest]), c.codes(idx[probe])
    first = np.zeros(rest.size, bool)
    first[first_of_each(codes)] = True
    first &= ~np.isin(codes, probe_codes)
    _judge_positions(c, j, rest[first])
    rest, rest_err, codes = rest[~first], rest_err[~first], codes[~first]
    c.result.count_unrecorded(rule.id, "fail", codes)
    c.result.screened += int(rest.size)
    c.result.note_error(rest_err, idx[rest])
    c.measured_errors.extend(zip(idx[rest].tolist(), np.asarray(rest_err).tolist()))
    # probe findings beyond the cap are counted, not recorded
    over = c.recorded[(rule.id, fn.outputs[0].name)] - c.cap
    if over > 0:
        # (the last ones, keeping the first of each input class)
        keep_first = set(idx[probe][first_of_each(probe_codes)].tolist())
        drop = set([i for i in sorted(probe_set) if i not in keep_first][-over:])
        c.result.findings = [f for f in c.result.findings if not (
            f.rule_id == rule.id and f.severity == "fail" and f.index in drop)]
        c.result.count_unrecorded(rule.id, "fail",
                                  c.codes(np.array(sorted(drop), np.int64)))
        c.recorded[(rule.id, fn.outputs[0].name)] -= len(drop)


class _Once:
    """A lazily computed value (the confirming reference at twice the precision)."""

    def __init__(self, f):
        self.f, self.done, self.value = f, False, None

    def __call__(self):
        if not self.done:
            self.value, self.done = self.f(), True
        return self.value


#: native_* accuracy is implementation-defined: measured on at most this many elements of
#: a batch (exact path), never failed.
NATIVE_SAMPLE = 256


def _measure_native(c: _Ctx, idx) -> None:
    fn, fmt = c.fn, c.fmt
    base = fn.reference_name
    names = [a.name for a in fn.inputs]
    kinds = tuple(a.kind for a in fn.inputs)
    sample = idx[np.linspace(0, idx.size - 1, min(idx.size, NATIVE_SAMPLE)).astype(int)]
    sample = np.unique(sample)
    c.result.unjudged += int(idx.size)
    for i in sample:
        args = tuple(int(c.args[n][i]) for n in names)
        r = reference(base, args, kinds, fmt, c.prec)[0]
        got = int(c.outs[fn.outputs[0].name][i])
        if isinstance(r, mpmath.mpf) and not _is_nan1(got, fmt):
            c.result.note_error(ulp_error(got, r, fmt, c.claims.rounding), i)
        elif isinstance(r, Exact) and not _is_nan1(got, fmt) and \
                (int(r.bits) & fmt.abs_mask) < fmt.pos_inf:
            c.result.note_error(ulp_error(got, value_of(int(r.bits), fmt), fmt,
                                          c.claims.rounding), i)


def _describe_real(r, fmt: FloatFormat) -> str:
    return f"{fmt.hex(round_to_bits(r, fmt, 'rte'))} (reference {float(r):.9g})"


def _ftz_variants(c: _Ctx, i: int):
    """Argument rows with each subnormal float argument replaced by +0 or -0
    (formats.flushed_variants)."""
    values = [int(c.args[a.name][i]) for a in c.fn.inputs]
    fmts = [c.fmt if a.kind == "float" else None for a in c.fn.inputs]
    return [dict(zip(c.fn.arg_names, combo))
            for combo in formats.flushed_variants(values, fmts)]


def _rescue_ftz(c: _Ctx) -> dict:
    """3.8.3 results 3 and 4: a failing element conforms if it does with its subnormal
    arguments flushed (to a zero of either sign).  Returns {rescued element: its error in
    ULPs against the flushed arguments' result (NaN where none was measured)}."""
    failing = sorted({f.index for f in c.result.findings if f.severity == "fail"})
    if not failing:
        return {}
    rescued: dict[int, float] = {}
    for i in failing:
        for v in _ftz_variants(c, i):
            inputs = {k: np.asarray([val], c.args[k].dtype) for k, val in v.items()}
            outputs = {k: c.outs[k][i:i + 1] for k in c.outs}
            sub = check_batch(c.fn, inputs, outputs, c.claims, c.prec, c.width, _rescue=False)
            if not sub.failures:
                rescued[i] = sub.max_ulp_error
                break
    if not rescued:
        return rescued
    note = catalogue.general_rule("ftz.prescribed_override")
    prescribed = {r.id for r in catalogue.rules_for(c.fn.name)}
    kept = []
    for f in c.result.findings:
        if f.index in rescued and f.severity == "fail":
            if f.rule_id in prescribed:
                kept.append(replace(f, severity="note", rule_id=note.id, section=note.section,
                                    sentence=note.sentence, reading=note.reading + f" (rule {f.rule_id})"))
            continue
        kept.append(f)
    c.result.findings = kept
    return rescued


def check_batch(fn, inputs: dict, outputs: dict, claims: Claims = Claims(),
                prec: int | None = None, width: int = 1, _rescue: bool = True,
                _shared: dict | None = None) -> CheckResult:
    """Judge one batch of device results for built-in ``fn`` (a catalogue.Function).

    ``inputs`` maps each input name to an array of length n: ``fmt`` patterns (fmt.uint)
    for float and ugentype arguments, int32 for int ones; ``outputs`` maps each output name
    (``ret``, then pointer outputs) to an array of length n, patterns or int32 likewise.
    ``width`` is the vector width the kernel ran at: element-wise built-ins are judged lane
    by lane (every lane is an element); a geometric built-in's lanes are grouped into
    vectors of ``width`` (see fuzzfarm.verdict.geometric.check), and width-dependent bounds use it.
    ``prec`` is the mpmath working precision in bits (default 2p + 48).  Returns a
    CheckResult whose findings are sorted by element index.  Raises KeyError if the
    catalogue lacks a ULP bound for ``fn`` in the claimed precision and profile.
    """
    if not fn.is_elementwise:
        from fuzzfarm.verdict import geometric
        return geometric.check(fn, inputs, outputs, claims, width, prec)
    n = len(next(iter(inputs.values())))
    block = max(1, BLOCK // width) * width
    if n > block:       # cache-sized blocks: the screen's temporaries stay in L2
        total = CheckResult(fn.name, n)
        # shared by the blocks: the recording cap, and the largest error measured so far
        shared = {"recorded": Counter(), "max": float("nan")}
        for off in range(0, n, block):
            part = check_batch(fn, {k: v[off:off + block] for k, v in inputs.items()},
                               {k: v[off:off + block] for k, v in outputs.items()},
                               claims, prec, width, _rescue, shared)
            total.merge(part, off)
            shared["max"] = total.max_ulp_error
        return total
    c = _Ctx(fn, inputs, outputs, claims, prec, flush_results=not claims.denormals,
             width=width)
    if _shared is not None:
        c.recorded = _shared["recorded"]
        c.max_so_far = _shared["max"]
    if c.n == 0:
        return c.result
    _apply_rules(c)
    _apply_nan_rules(c)
    _apply_reference(c)
    _settle(c, _rescue_ftz(c) if _rescue and not claims.denormals else {})
    _exact_histogram(c)
    c.result.findings.sort(key=lambda f: (f.index, f.rule_id))
    return c.result
