"""Telling a driver change from sampling where two result sets drew different inputs
(``fuzzfarm triage``): each set's worst input of a target whose ULP maximum is larger in
the current set is run again on a build that is attached here, and judged.

A larger maximum over different inputs (``UlpRow.same_inputs`` False) may be the
sampling: the current set happened to draw a worse input.  Replayed on the current
build, the baseline's worst input shows whether the current build is worse *on that
input* (error above the baseline's maximum: a regression on the same input); replayed on
the baseline build (where only it is attached), the current's worst input shows whether
the baseline build did better on it.  Where the two sets are one build (one device
fingerprint) the replay shows both maxima come from the same driver: sampling.  Where no
build of either set is attached the row stays "not comparable".

``replay(triage, runner_for)`` fills ``UlpRow.replay`` and moves the rows it proves to be
regressions on the same input into ``Triage.ulp_regressions``.  The device work is
``measure``: the inputs run as one unit of the target and each judged by the checker.
"""
from __future__ import annotations

from fuzzfarm.report.triage import Triage, UlpRow

__all__ = ["replay", "measure", "attached_runner"]

#: A replayed error counts as larger than a recorded maximum only beyond this (ULPs): the
#: checker's errors are computed in one precision on both sides, so equal inputs and
#: results give equal errors; the margin absorbs the float64 text of the stored maximum.
MARGIN = 1e-9


def measure(runner, row: UlpRow, inputs: list) -> list[float]:
    """The ULP errors (float, NaN where none was measured) of ``inputs`` (raw-bit tuples,
    one value per argument) of ``row``'s target run on ``runner`` (a DeviceRunner built
    with the row's build options).  Raises whatever the device raises (the caller
    reports it)."""
    from fuzzfarm.target import Target
    from fuzzfarm.verdict.claims import Claims
    from fuzzfarm.work.kinds import kind_of
    from fuzzfarm.work.make import make_inputs
    from fuzzfarm.work.session import run_unit
    from fuzzfarm.work.unit import Special, WorkUnit
    target = Target(row.function, row.precision, row.vector_width, row.front_end)
    info = runner.info
    claims = Claims.from_fp_config(info.fp_flags(row.precision), info.profile, row.precision,
                                   runner.device_constants(), row.build_options)
    out = []
    for bits in inputs:
        # the special-value unit with the input put first (as a campaign replays one)
        unit = WorkUnit("triage-replay", target, Special(0, (tuple(bits),)),
                        row.build_options)
        ins = {k: v[:1] for k, v in make_inputs(unit).items()}
        res = kind_of(target).check(target, ins, run_unit(runner, unit, ins), claims)
        out.append(float(res.max_ulp_error))
    return out


def attached_runner(fingerprint: str, build_options: str):
    """A DeviceRunner on the attached device of ``fingerprint``, or None (not attached,
    or pyopencl missing)."""
    try:
        from fuzzfarm.device.discovery import list_devices
        from fuzzfarm.device.runner import DeviceRunner
    except ImportError:
        return None
    info = next((d for d in list_devices() if d.fingerprint == fingerprint), None)
    return None if info is None else DeviceRunner(info, build_options)


def _verdict(row: UlpRow, runner_for, measure) -> tuple[str, bool]:
    """(the replay's words, whether it proves a regression on the same input)."""
    (b_bits, b_fp), (c_bits, c_fp) = row.baseline_worst, row.current_worst
    if b_fp == c_fp:
        runner = runner_for(c_fp, row.build_options)
        if runner is None:
            return "", False
        e_b, e_c = measure(runner, row, [b_bits, c_bits])
        return (f"one build ({c_fp}) made both sets; replayed, its worst inputs give "
                f"{e_b:.4g} and {e_c:.4g} ULPs: sampling, not a change of the driver"), False
    runner = runner_for(c_fp, row.build_options)
    if runner is not None:
        (e,) = measure(runner, row, [b_bits])
        if e > row.baseline_max + MARGIN:
            return (f"the baseline's worst input gives {e:.4g} ULPs on the current build "
                    f"(baseline {row.baseline_max:.4g}): worse on the same input"), True
        return (f"the baseline's worst input gives {e:.4g} ULPs on the current build "
                f"(baseline {row.baseline_max:.4g}): not worse there; the larger maximum "
                f"is another input's"), False
    runner = runner_for(b_fp, row.build_options)
    if runner is not None:
        (e,) = measure(runner, row, [c_bits])
        if e + MARGIN < row.current_max:
            return (f"the current set's worst input gives {e:.4g} ULPs on the baseline "
                    f"build (current {row.current_max:.4g}): worse on the same input"), True
        return (f"the current set's worst input gives {e:.4g} ULPs on the baseline build "
                f"too: the larger maximum is the sampling's"), False
    return "", False


def replay(t: Triage, runner_for=attached_runner, measure=measure) -> Triage:
    """``t`` with its not-comparable ULP rows replayed where a build of either set is
    attached (``runner_for(fingerprint, build_options)``: a DeviceRunner or None; its
    errors measured by ``measure(runner, row, inputs)``): each
    row's ``replay`` says what the replay showed, and those worse on the same input move
    to ``ulp_regressions``.  A device that fails during the replay is said in the row;
    the triage goes on.  Returns ``t`` (changed in place)."""
    keep, proven = [], []
    for row in t.ulp_not_comparable:
        if row.baseline_worst is None or row.current_worst is None or row.vector_width != 1:
            keep.append(row)
            continue
        try:
            row.replay, worse = _verdict(row, runner_for, measure)
        except Exception as exc:    # noqa: BLE001 - a device's fault: said, not raised
            row.replay, worse = f"replay failed on the device: {' '.join(str(exc).split())[:200]}", False
        (proven if worse else keep).append(row)
    t.ulp_not_comparable = keep
    t.ulp_regressions = sorted(t.ulp_regressions + proven,
                               key=lambda r: (-r.ratio, r.device, r.function))
    return t
