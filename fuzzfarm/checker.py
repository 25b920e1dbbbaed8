"""The verdict: device outputs against prescribed results and ULP bounds.

Pure logic (STYLE.md point 1): no pyopencl, no Ray, no I/O.  For one batch of one built-in
the checker decides, element by element and output by output:

1. **Prescribed results** (edgecases/data/rules_*.toml).  Every rule whose condition holds
   must be met bit for bit; a prescribed result overrides every ULP or flush-to-zero
   allowance (OpenCL SPIR-V Env 3.8.2).
2. **NaN propagation** (``F9.G10``) for elements no rule covers, and NaN quietness
   (``CL.nan.quiet_stays_quiet``) for every element with only quiet NaN arguments.
3. **The reference**, for the rest: exact operations (fmod, ldexp, frexp, ...) compare bits
   with the exact result; the others compare the ULP error against the bound of the
   device's profile (edgecases/data/ulp_bounds.toml).  A float64 screen (fuzzfarm.screen)
   passes what it can prove; everything else is measured with mpmath, and a failure is
   confirmed at twice the precision before it is reported (DESIGN.md decision 4).

The device's claims decide (DESIGN.md decision 2): on a device without CL_FP_DENORM a result
that is subnormal before rounding may be flushed to a zero of either sign, and a failing
element passes when it conforms with its subnormal arguments flushed to zero (the four
results of 3.8.3 Edge Case Behavior in Flush To Zero Mode).
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from edgecases import catalogue
from edgecases.predicates import evaluate
from fuzzfarm import formats
from fuzzfarm.formats import FloatFormat, format_named
from fuzzfarm.oracle import (EXACT_FUNCTIONS, Exact, reference, round_to_bits, ulp_error,
                             value_of)
from fuzzfarm.screen import SCREENS, screen_pass

__all__ = ["Claims", "Finding", "CheckResult", "check_batch"]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True)
class Claims:
    """What the device claims for the precision under test; it decides what is allowed.

    ``profile`` 'full' or 'embedded' picks the ULP table; ``denormals`` is CL_FP_DENORM
    (False: the flush-to-zero allowances apply); ``rounding`` the modes a correctly rounded
    result may use (('rte',) normally; ('rtz',) for a round-toward-zero-only embedded
    device); ``constants`` the device's FP_ILOGB0 and FP_ILOGBNAN.
    """

    precision: str = "binary32"
    profile: str = "full"
    denormals: bool = True
    rounding: tuple = ("rte",)
    constants: tuple = (("FP_ILOGB0", INT32_MIN), ("FP_ILOGBNAN", INT32_MAX))

    @property
    def fmt(self) -> FloatFormat:
        return format_named(self.precision)

    @property
    def consts(self) -> dict:
        return dict(self.constants)

    @classmethod
    def from_fp_config(cls, flags, profile: str = "FULL_PROFILE", precision: str = "binary32",
                       constants: dict | None = None) -> "Claims":
        """Claims from decoded CL_DEVICE_*_FP_CONFIG flag names (e.g. ('DENORM',
        'INF_NAN', 'ROUND_TO_NEAREST')) and the CL_DEVICE_PROFILE string."""
        flags = set(flags)
        # Round to nearest is the default mode of a device that has it; a device with
        # round toward zero only (embedded profile) rounds "correctly" toward zero.
        modes = ("rtz",) if "ROUND_TO_ZERO" in flags and "ROUND_TO_NEAREST" not in flags \
            else ("rte",)
        c = (("FP_ILOGB0", INT32_MIN), ("FP_ILOGBNAN", INT32_MAX))
        if constants:
            c = tuple(sorted(constants.items()))
        return cls(precision, "embedded" if "EMBEDDED" in profile.upper() else "full",
                   "DENORM" in flags, modes, c)


@dataclass
class Finding:
    """One element that breaks a rule: everything needed to report and reproduce it
    (STYLE.md point 7).  ``inputs`` and ``outputs`` are bit patterns (float) or int values;
    ``ulp_error`` in ULPs where a bound was measured, else None."""

    index: int
    function: str
    rule_id: str
    section: str
    sentence: str
    severity: str
    output: str
    inputs: tuple
    outputs: tuple
    expected: str
    ulp_error: float | None = None
    reading: str = ""


@dataclass
class CheckResult:
    """The verdict on one batch: findings, and the counts the stats rows need."""

    function: str
    n: int
    findings: list = field(default_factory=list)
    max_ulp_error: float = float("nan")
    screened: int = 0
    exact: int = 0

    @property
    def failures(self) -> list:
        return [f for f in self.findings if f.severity == "fail"]

    def counts_by_rule(self, severity: str | None = "fail") -> dict:
        return dict(Counter(f.rule_id for f in self.findings
                            if severity is None or f.severity == severity))


class _Ctx:
    """Per-batch state shared by the three stages."""

    def __init__(self, fn, inputs, outputs, claims, prec, flush_results):
        self.fn, self.claims, self.fmt = fn, claims, claims.fmt
        self.args = {a.name: np.asarray(inputs[a.name]) for a in fn.inputs}
        self.outs = {o.name: np.asarray(outputs[o.name]) for o in fn.outputs}
        self.kinds = {a.name: a.kind for a in fn.inputs}
        self.n = len(next(iter(self.args.values())))
        self.prec = prec or 2 * self.fmt.precision + 48
        self.flush = flush_results
        self.result = CheckResult(fn.name, self.n)
        self.handled = {o.name: np.zeros(self.n, bool) for o in fn.outputs}
        nan = np.zeros(self.n, bool)
        for a in fn.inputs:
            if a.kind == "float":
                nan |= formats.is_nan(self.args[a.name], self.fmt)
        self.any_nan = nan

    def row(self, i):
        return {k: v[i] for k, v in self.args.items()}

    def add(self, i, rule, output, expected, ulp=None, severity=None, reading=None):
        self.result.findings.append(Finding(
            int(i), self.fn.name, rule.id, rule.section, rule.sentence,
            severity or rule.severity, output,
            tuple(int(self.args[a.name][i]) for a in self.fn.inputs),
            tuple(int(self.outs[o.name][i]) for o in self.fn.outputs),
            expected, ulp, reading if reading is not None else rule.reading))


def _flushable(got: int, fmt: FloatFormat) -> bool:
    return (int(got) & fmt.abs_mask) == 0


def _apply_rules(c: _Ctx) -> None:
    for rule in catalogue.rules_for(c.fn.name):
        mask = np.ones(c.n, bool)
        for arg, word in rule.when:
            mask &= evaluate(word, c.args[arg], c.kinds[arg], c.fmt)
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
            for j in idx[~ok]:
                c.add(j, rule, out, spec.describe(c.row(j), c.fmt, c.claims.consts))


def _apply_nan_rules(c: _Ctx) -> None:
    g10 = catalogue.general_rule("F9.G10")
    quiet = catalogue.general_rule("CL.nan.quiet_stays_quiet")
    fmt = c.fmt
    for o in c.fn.outputs:
        pending = c.any_nan & ~c.handled[o.name]
        if o.kind == "float":
            bad = pending & ~formats.is_nan(c.outs[o.name], fmt)
            for j in np.nonzero(bad)[0]:
                c.add(j, g10, o.name, "any NaN")
        c.handled[o.name] |= pending  # an int result of a NaN is unspecified unless ruled
    # Quiet NaNs in, a signaling NaN out: only where every NaN argument was quiet.
    all_quiet = c.any_nan.copy()
    for a in c.fn.inputs:
        if a.kind == "float":
            all_quiet &= ~formats.is_snan(c.args[a.name], fmt)
    for o in c.fn.outputs:
        if o.kind == "float":
            for j in np.nonzero(all_quiet & formats.is_snan(c.outs[o.name], fmt))[0]:
                c.add(j, quiet, o.name, "a quiet NaN")


def _bound_rule(c: _Ctx, bound) -> catalogue.GeneralRule:
    return catalogue.GeneralRule(
        f"ulp.{c.fn.name}", bound.source,
        f"{c.fn.name}: {bound.describe()} ({c.claims.precision}, {bound.profile} profile)")


def _judge_exact(c: _Ctx, i: int, out, want: Exact, got: int, bound, rule) -> None:
    """Compare one output with its exact reference pattern (or int value)."""
    fmt = c.fmt
    if out.kind == "int":
        if int(got) != int(want.bits):
            c.add(i, rule, out.name, f"{int(want.bits)}")
        return
    w, g = int(want.bits), int(got)
    if w == g:
        return
    if c.flush and (w & fmt.abs_mask) < fmt.min_normal and _flushable(g, fmt):
        return
    if (w & fmt.abs_mask) == 0 and (g & fmt.abs_mask) == 0:
        c.add(i, catalogue.general_rule("ieee.zero_sign"), out.name, fmt.hex(w))
        return
    err = None
    if not formats.is_nan(np.asarray([g], fmt.uint), fmt)[0] and (w & fmt.abs_mask) < fmt.pos_inf:
        err = ulp_error(g, value_of(w, fmt), fmt, c.claims.rounding)
        if not bound.correctly_rounded and bound.ulps is not None and err <= bound.ulps:
            return
    c.add(i, rule, out.name, fmt.hex(w), err)


def _measure(c: _Ctx, i: int, r, got: int, bound) -> tuple[bool, float | None]:
    """(conforms, ulp error) of one float output against a real reference ``r``."""
    fmt = c.fmt
    if formats.is_nan(np.asarray([got], fmt.uint), fmt)[0]:
        return False, None
    if c.flush and abs(r) < fmt.value(fmt.min_normal) and _flushable(got, fmt):
        return True, 0.0
    if bound.correctly_rounded:
        ok = any(round_to_bits(r, fmt, m) == int(got) for m in c.claims.rounding)
        return ok, ulp_error(int(got), r, fmt, c.claims.rounding)
    err = ulp_error(int(got), r, fmt, c.claims.rounding)
    return err <= bound.ulps, err


def _apply_reference(c: _Ctx) -> None:
    fn, fmt = c.fn, c.fmt
    bound = catalogue.bound(fn.name, c.claims.precision, c.claims.profile)
    if bound.implementation_defined:
        return
    rule = _bound_rule(c, bound)
    pending = np.zeros(c.n, bool)
    for o in fn.outputs:
        pending |= ~c.handled[o.name]
    pending &= ~c.any_nan
    idx = np.nonzero(pending)[0]
    if idx.size == 0:
        return
    names = [a.name for a in fn.inputs]
    kinds = tuple(a.kind for a in fn.inputs)
    max_err = c.result.max_ulp_error
    if fn.name in EXACT_FUNCTIONS:
        for i in idx:
            args = tuple(int(c.args[n][i]) for n in names)
            refs = [reference(fn.name, args, kinds, fmt, c.prec, m) for m in c.claims.rounding]
            for k, o in enumerate(fn.outputs):
                if c.handled[o.name][i]:
                    continue
                got = int(c.outs[o.name][i])
                if any(int(r[k].bits) == got for r in refs):
                    continue
                _judge_exact(c, i, o, refs[0][k], got, bound, rule)
        c.result.exact += int(idx.size)
        return
    out = fn.outputs[0]
    got_all = c.outs[out.name]
    todo = idx
    # The screen proves "within N ulp"; it cannot prove a correctly rounded result in a
    # directed mode, nor judge the flush-to-zero alternatives: those go exact.
    if fn.name in SCREENS and not c.flush and not bound.correctly_rounded:
        finite = np.ones(idx.size, bool)
        args64 = []
        for a in fn.inputs:
            v = c.args[a.name][idx]
            if a.kind == "float":
                f = formats.to_float(v, fmt)
                finite &= np.isfinite(f)
                args64.append(f)
            else:
                args64.append(v.astype(np.int64))
        passed, err = screen_pass(fn.name, args64, got_all[idx], bound.ulps, fmt)
        passed &= finite
        if passed.any():
            m = float(np.max(err[passed]))
            max_err = m if math.isnan(max_err) else max(max_err, m)
        c.result.screened += int(passed.sum())
        todo = idx[~passed]
    domain = catalogue.general_rule("C99.7.12.1.domain")
    for i in todo:
        args = tuple(int(c.args[n][i]) for n in names)
        got = int(got_all[i])
        r = reference(fn.name, args, kinds, fmt, c.prec)[0]
        c.result.exact += 1
        if r is None:
            if not formats.is_nan(np.asarray([got], fmt.uint), fmt)[0]:
                c.add(i, domain, out.name, "any NaN")
            continue
        if isinstance(r, Exact):
            _judge_exact(c, i, out, r, got, bound, rule)
            continue
        ok, err = _measure(c, i, r, got, bound)
        if not ok:  # confirm at twice the precision (DESIGN.md decision 4)
            r2 = reference(fn.name, args, kinds, fmt, 2 * c.prec)[0]
            ok2, err2 = (True, None) if not hasattr(r2, "man_exp") else _measure(c, i, r2, got, bound)
            if ok2:
                c.add(i, catalogue.general_rule("unresolved"), out.name, _describe_real(r, fmt), err)
            else:
                c.add(i, rule, out.name, _describe_real(r2, fmt), err2)
        if err is not None and math.isfinite(err):
            max_err = err if math.isnan(max_err) else max(max_err, err)
    c.result.max_ulp_error = max_err


def _describe_real(r, fmt: FloatFormat) -> str:
    return f"{fmt.hex(round_to_bits(r, fmt, 'rte'))} (reference {float(r):.9g})"


def _ftz_variants(c: _Ctx, i: int):
    """Argument rows with each subnormal float argument replaced by +0 or -0."""
    options = []
    for a in c.fn.inputs:
        v = int(c.args[a.name][i])
        if a.kind == "float" and formats.is_subnormal(np.asarray([v], c.fmt.uint), c.fmt)[0]:
            options.append((0, c.fmt.sign_mask))
        else:
            options.append((v,))
    return [dict(zip(c.fn.arg_names, combo)) for combo in itertools.product(*options)][:16]


def _rescue_ftz(c: _Ctx) -> None:
    """3.8.3 results 3 and 4: a failing element conforms if it does with its subnormal
    arguments flushed (to a zero of either sign)."""
    failing = sorted({f.index for f in c.result.findings if f.severity == "fail"})
    if not failing:
        return
    rescued: dict[int, bool] = {}
    for i in failing:
        variants = [v for v in _ftz_variants(c, i)
                    if any(v[k] != int(c.args[k][i]) for k in v)]
        for v in variants:
            inputs = {k: np.asarray([val], c.args[k].dtype) for k, val in v.items()}
            outputs = {k: c.outs[k][i:i + 1] for k in c.outs}
            sub = check_batch(c.fn, inputs, outputs, c.claims, c.prec, _rescue=False)
            if not sub.failures:
                rescued[i] = True
                break
    if not rescued:
        return
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


def check_batch(fn, inputs: dict, outputs: dict, claims: Claims = Claims(),
                prec: int | None = None, _rescue: bool = True) -> CheckResult:
    """Judge one batch of device results for built-in ``fn`` (a catalogue.Function).

    ``inputs`` maps each input name to an array of length n: ``fmt`` patterns (fmt.uint)
    for float arguments, int32 for int ones; ``outputs`` maps each output name (``ret``,
    then pointer outputs) to an array of length n, patterns or int32 likewise.  ``prec`` is
    the mpmath working precision in bits (default 2p + 48).  Returns a CheckResult whose
    findings are sorted by element index.  Raises KeyError if the catalogue lacks a ULP
    bound for ``fn`` in the claimed precision and profile.
    """
    c = _Ctx(fn, inputs, outputs, claims, prec, flush_results=not claims.denormals)
    if c.n == 0:
        return c.result
    _apply_rules(c)
    _apply_nan_rules(c)
    _apply_reference(c)
    if _rescue and not claims.denormals:
        _rescue_ftz(c)
    c.result.findings.sort(key=lambda f: (f.index, f.rule_id))
    return c.result
