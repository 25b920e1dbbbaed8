"""The screen-against-checker comparisons the device screen's tests share
(test_device_screen_*): the rows the screen passed that the checker fails
(``passed_failures``, the soundness tests), and the planted-fault comparison -- a `run`
unit whose results have faults planted, judged with the device screen's answer and on the
host, must give the same findings, counts and maximum error, and every planted fault the
checker fails must be a recorded failure (``plant_faults`` plants them)."""
from __future__ import annotations

import numpy as np
import pytest

from edgecases import catalogue
from fuzzfarm.verdict.checker import FINDINGS_PER_RULE, check_batch


def passed_failures(fn, args: dict, y: np.ndarray, passed: np.ndarray, claims) -> np.ndarray:
    """The rows (int64, sorted) among those the screen ``passed`` (bool, per row) where the
    checker fails result ``y`` of built-in ``fn`` at ``args`` ({input name: array}) under
    ``claims``: the checker judges only those rows (a row's verdict is its own)."""
    at = np.flatnonzero(passed)
    if not at.size:
        return at
    res = check_batch(fn, {k: v[at] for k, v in args.items()}, {"ret": y[at]}, claims)
    return at[sorted({f.index for f in res.findings})]


def planted_faults_caught(unit, inputs: dict, before: dict, after: dict, answer, claims,
                          pos) -> int:
    """``unit`` (a drawn WorkUnit) with its ``inputs``, results ``before`` the faults and
    ``after`` them ({output name: array}), the device screen's ``answer`` on ``after``,
    judged under ``claims``; ``pos``: the rows where faults were planted.  Asserts the
    screened verdict is the host's (findings, counts by rule, maximum ULP error) and that
    every planted fault the checker fails -- on a row that was right before, of a rule not
    already at FINDINGS_PER_RULE -- is a recorded failure; returns how many were."""
    from fuzzfarm.work.check import check_result
    fn = catalogue.function(unit.target.name)
    names = [a.name for a in fn.inputs]
    dev = check_result(unit, inputs, after, claims, answer)
    host = check_result(unit, inputs, after, claims)
    assert dev.n == host.n == len(after["ret"])
    assert dev.counts_by_rule(None) == host.counts_by_rule(None), unit.unit_id
    key = lambda f: (f.index, f.rule_id, f.severity)   # noqa: E731
    assert sorted(map(key, dev.findings)) == sorted(map(key, host.findings)), unit.unit_id
    assert dev.max_ulp_error == pytest.approx(host.max_ulp_error, abs=1e-9) or (
        np.isnan(dev.max_ulp_error) and np.isnan(host.max_ulp_error))
    failed = {f.index for f in dev.findings if f.severity == "fail"}
    full = {r for r, c in host.counts_by_rule("fail").items() if c >= FINDINGS_PER_RULE}
    caught = 0
    for p in pos:
        one = {a: inputs[a][p:p + 1] for a in names}
        was, now = (check_batch(fn, one, {k: v[p:p + 1] for k, v in o.items()}, claims)
                    for o in (before, after))
        fails = {f.rule_id for f in now.findings if f.severity == "fail"}
        if was.findings or not fails or fails & full:
            continue
        assert p in failed, (unit.unit_id, [hex(int(np.asarray(inputs[a])[p])) for a in names],
                             hex(int(after["ret"][p])))
        caught += 1
    return caught


def screened_run_unit(session, name: str, precision: str, serial: int, size: int, claims):
    """A drawn `run` unit of built-in ``name`` in ``precision`` (serial ``serial``, seed
    5, ``size`` inputs) launched and landed on DeviceSession ``session``, which must have
    screened it on the device, its verdict under ``claims`` with the screen's answer the
    host's (counts by rule; some inputs passed on the device): (unit, its inputs, its
    outputs copied out)."""
    from fuzzfarm.work.check import check_result
    from fuzzfarm.work.make import make_inputs, make_unit
    unit = make_unit("t", (name, precision, 1), serial, 5, 0, 1, size=size)
    inputs = make_inputs(unit)
    landed = session.land(session.launch(unit, inputs))
    assert landed.answer is not None, (name, precision)
    outs = {k: np.array(v) for k, v in landed.outputs.items()}
    dev = check_result(unit, inputs, outs, claims, landed.answer)
    host = check_result(unit, inputs, outs, claims)
    assert dev.counts_by_rule(None) == host.counts_by_rule(None), (name, serial)
    assert dev.screened > 0, name
    return unit, inputs, outs


def plant_faults(outs: dict, fmt, bound: float, pos) -> None:
    """Plant faults in place at rows ``pos`` of a unit's results ``outs`` ({output name:
    array}, ``ret`` first, patterns of ``fmt``), in turn: ``ret`` bound + 1 ULPs beyond the
    result (below the largest binade), of the other sign, a quiet NaN, and a zero for a
    number (1 for a zero) -- where there is a second output, every other one of those last
    goes to it instead: one more (an int) or one pattern up, or its sign flipped.  An int
    result (ilogb) is made one more or complemented."""
    y = outs["ret"]
    second = [v for k, v in outs.items() if k != "ret"]
    if y.dtype.kind == "i":
        for k, p in enumerate(pos):
            y[p] = y[p] + 1 if k % 2 else ~y[p]
        return
    u = np.dtype(fmt.uint)
    y = y.view(u)
    sign, step = u.type(fmt.sign_mask), u.type(int(bound) + 1)
    top = (fmt.pos_inf >> fmt.frac_bits) - 1 << fmt.frac_bits      # the largest binade
    for k, p in enumerate(pos):
        mag = int(y[p]) & fmt.abs_mask
        if k % 4 == 0 and 0 < mag < top:
            y[p] += step
        elif k % 4 == 1:
            y[p] ^= sign
        elif k % 4 == 2:
            y[p] = u.type(fmt.default_qnan)
        elif not second or k % 8 == 3:
            y[p] = u.type(0) if mag else u.type(fmt.bits_of(1.0))
        else:
            y2 = second[0]
            if y2.dtype.kind == "i":
                y2[p] = y2[p] + 1 if k % 16 == 7 else -y2[p]
            else:
                y2 = y2.view(u)
                y2[p] = y2[p] + u.type(1) if k % 16 == 7 else y2[p] ^ sign


def faults_caught_in_run_units(session, screen, name: str, precision: str, claims,
                               size: int, seed: int) -> int:
    """Two drawn `run` units of built-in ``name`` in ``precision`` (serials 0 and 1, ``size``
    inputs) launched and landed on ``session`` (``screened_run_unit``), 40 faults planted
    in each (``plant_faults``, rows drawn with ``seed``), screened again by ``screen`` (a
    DeviceScreen: ``screen_drawn``) and compared with the host (``planted_faults_caught``):
    the number of planted faults that are recorded failures."""
    from fuzzfarm.formats import format_named
    fmt = format_named(precision)
    names = [a.name for a in catalogue.function(name).inputs]
    rng = np.random.default_rng(seed)
    caught = 0
    for serial in (0, 1):
        unit, inputs, outs = screened_run_unit(session, name, precision, serial, size, claims)
        before = {k: v.copy() for k, v in outs.items()}
        second = [v for k, v in outs.items() if k != "ret"]
        pos = rng.choice(outs["ret"].size, 40, replace=False)
        plant_faults(outs, fmt, screen.bound, pos)
        xs = [np.ascontiguousarray(inputs[a]) for a in names]
        answer = screen.screen_drawn(xs[0], outs["ret"], *xs[1:],
                                     y2bits=second[0] if second else None)
        caught += planted_faults_caught(unit, inputs, before, outs, answer, claims, pos)
    return caught
