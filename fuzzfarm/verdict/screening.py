"""The checker's host screen: which of a batch's pending elements the float64 screen
(``fuzzfarm.oracle.screen``) decides, so that only the rest take the exact path (mpmath).

``screen_pending`` runs the screen over the positions the bound judges and returns the
positions left for the exact path, and the screen-proven failures beyond the recording cap
(counted once an exact probe of them confirms the screen).  The screen proves "within N
ulp" for a constant N.  It is not used for absolute bounds or pieces with varying N; a
correctly rounded bound is screened only in round to nearest.  Its proven failures are
used only where no allowance could rescue them: not on a flushing device, not for half_*
(whose subnormal results may flush), not under -cl-finite-math-only, and only for a plain
bound (no note band).  ``c`` is the checker's per-batch context (``checker._Ctx``).
"""
from __future__ import annotations

import numpy as np

from fuzzfarm import formats
from fuzzfarm.oracle import screen as screen_mod
from fuzzfarm.oracle.histogram import histogram as ulp_histogram

__all__ = ["screen_pending", "maximum_candidates_left", "PROBE"]

#: Screen-proven failures judged exactly in a block once the recording cap is reached.
PROBE = 8


def _screen_ulps(c, bound, plain, lim, pos) -> float | None:
    """The constant bound in ULPs the screen may prove for the positions ``pos``, or
    None where it must not be used (module docstring)."""
    fn = c.fn
    screens = fn.outputs_as or (fn.name,)
    if (len(screens) != len(fn.outputs) or not pos.size
            or not all(screen_mod.has_screen(s, c.fmt) for s in screens)):
        return None
    if plain is not None:
        ulps = plain
    elif (bound.ulps is not None and np.all(lim.ulps[pos] == bound.ulps)
          and not np.any(lim.absolute[pos])):
        ulps = bound.ulps
    else:
        return None
    if ulps <= 0.5 and tuple(c.claims.rounding) != ("rte",):
        return None
    return ulps


def _run_screens(c, ulps, todo):
    """(the screen's verdict per output, finite: the elements whose arguments are finite
    or None where all are) at ``todo`` (indices, or None for every element)."""
    fn, fmt = c.fn, c.fmt
    whole = todo is None
    args64 = []
    for a in fn.inputs:
        v = c.args[a.name] if whole else c.args[a.name][todo]
        args64.append(formats.to_float(v, fmt) if a.kind == "float" else v.astype(np.int64))
    # infinite (or NaN) arguments no rule settled are left to the exact path
    special = c.any_special if whole else c.any_special[todo]
    finite = ~special if special.any() else None
    verdicts = []
    for name, o in zip(fn.outputs_as or (fn.name,), fn.outputs):
        got = c.outs[o.name]
        verdicts.append(screen_mod.screen(name, args64, got if whole else got[todo], ulps,
                                          fmt))
    return verdicts, finite


def _passed(c, verdicts, finite, todo) -> np.ndarray:
    """The elements every output's screen passed (bool, at ``todo``), their errors
    binned (oracle.histogram) and marked in ``c.binned``."""
    fn, fmt = c.fn, c.fmt
    whole = todo is None
    passed = verdicts[0].passed.copy()
    for v in verdicts[1:]:
        passed &= v.passed
    if finite is not None:
        passed &= finite
    if tuple(c.claims.rounding) != ("rte",):
        # the screen passes an infinite result for a reference beyond the round-to-nearest
        # overflow threshold; in a directed mode that can be wrong: exact path
        for o in fn.outputs:
            got = c.outs[o.name] if whole else c.outs[o.name][todo]
            passed &= (got.astype(fmt.uint) & fmt.uint(fmt.abs_mask)) < fmt.uint(fmt.pos_inf)
    c.result.screened += int(passed.sum())
    if passed.any():            # their errors, by input band (oracle.histogram)
        first = next(a.name for a in fn.inputs if a.kind == "float")
        xb = c.args[first] if whole else c.args[first][todo]
        c.result.add_histogram(ulp_histogram(_errors(verdicts), xb, fmt, where=passed,
                                             name=fn.name))
        if c.binned is None:
            c.binned = np.zeros(c.n, bool)
        c.binned[np.nonzero(passed)[0] if whole else todo[passed]] = True
    return passed


def _errors(verdicts) -> np.ndarray:
    return verdicts[0].err if len(verdicts) == 1 else np.fmax.reduce([v.err for v in verdicts])


def screen_pending(c, bound, plain, lim, idx, pos, rule):
    """Run the screen over the judged positions ``pos`` (of ``idx``, the pending
    elements).  Returns (positions for the exact path, counted, maxima) where ``counted``
    is None or (probe positions, rest positions, rest's estimated errors): screen-proven
    failures beyond the recording cap, counted once the probe's exact verdicts confirm
    them; ``maxima`` is None or (positions, their estimated errors in ULPs, the screen's
    margin in ULPs): the passed inputs whose estimates do not rule them out as the
    batch's largest error (``checker``'s ``_measure_maximum`` measures those it must).
    An estimate d / u_lo is never below the error by more than the margin, and up to
    twice it where f lies just above a power of two (u_lo is then half f's ULP:
    oracle.screen), so the largest estimate need not be the largest error."""
    fn = c.fn
    ulps = _screen_ulps(c, bound, plain, lim, pos)
    if ulps is None:
        return pos, None, None
    todo = None if pos.size == c.n else idx[pos]     # every element: no gather needed
    verdicts, finite = _run_screens(c, ulps, todo)
    passed = _passed(c, verdicts, finite, todo)
    exact = ~passed
    counted = None
    use_failed = (plain is not None and tuple(c.claims.rounding) == ("rte",) and not c.flush
                  and fn.family != "half" and c.claims.judges_specials
                  and len(verdicts) == 1)
    sc = verdicts[0]
    failed = sc.failed if finite is None else sc.failed & finite
    # judge exactly (and record) what the cap has room for, at least PROBE to confirm
    # the screen's verdicts; count the rest
    room = max(PROBE, c.cap - c.recorded[(rule.id, fn.outputs[0].name)])
    if use_failed and failed.sum() > room:
        f_pos = np.nonzero(failed)[0]
        probe, rest = f_pos[:room], f_pos[room:]
        exact[rest] = False
        counted = (pos[probe], pos[rest], sc.err[rest])
    # The passed inputs that may hold the batch's largest error, for the checker's
    # ``_measure_maximum``: an input whose estimate falls two margins below the largest
    # error measured in the batch so far cannot raise it.
    maxima = None
    if passed.any():
        est = _errors(verdicts)
        ranked = np.where(passed & np.isfinite(est), est, -np.inf)
        margin = max(screen_mod.margin_ulps(s, c.fmt, ulps)
                     for s in (fn.outputs_as or (fn.name,)))
        keep = np.isfinite(ranked) & ~(ranked + 2 * margin < c.max_so_far)
        maxima = (pos[keep], ranked[keep], margin)
    return pos[exact], counted, maxima


def maximum_candidates_left(estimate: float, margin: float, measured: float,
                            first: bool) -> bool:
    """Whether the passed input of the largest estimated error ``estimate`` (ULPs) not yet
    measured (``screen_pending``'s maxima) must be measured to know the batch's largest
    error, ``measured`` the largest measured so far (NaN: none) and ``margin`` the
    screen's (ULPs): the ``first`` unless two margins below it; a later one only where
    its estimate exceeds it by more than two margins -- an estimate twice its error (f
    just above a power of two) outranked it, and this input's error may be the larger.
    Estimates within two margins of the measured maximum are ties that cannot raise it
    by more than that."""
    if measured != measured:                # nothing measured yet
        return True
    if first:
        return not estimate + 2 * margin < measured
    return estimate - 2 * margin > measured
