"""The check of one landed unit: its verdict and the rows it writes.

``Landed`` is what a device run hands on (``fuzzfarm.work.session.DeviceSession.land``):
the unit, the device's outputs or the rows of them the verdict may read, the device
screen's answer where the device screened them, and the inputs the device made where it
made them.  ``check_landed`` gives the verdict on it, whichever way the unit was run,
with one function per way:

* inputs made on the host (drawn or special): the checker over every result
  (``fuzzfarm.verdict.checker.check_batch`` through the unit's kind), or, screened on the
  device, over the screen's candidates (``fuzzfarm.verdict.screened``);
* a range of the input space (a sweep's chunk): the same, its inputs made again here from
  their numbers (``strategies.Space``), its class counts from the numbering alone;
* inputs made on the device (``fuzzfarm.device.generate``): the verdict on the inputs the
  device made, some of them made again here and compared (``check_made``), a device
  fault (``InputsDisagree``) where they differ;
* a compare unit's (``WorkUnit.against``): its results and its other front end's on the
  same inputs, compared bit for bit (``check_compared``: fuzzfarm.verdict.front_ends).

``check_and_write`` writes the rows (findings, then the stats row that makes the unit
done) and reports the unit's counts.  No Ray and no pyopencl here: an executor
(``fuzzfarm.orchestrate.pipeline``) runs it in a checking process.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from fuzzfarm.target import CONSTANTS_DOORS
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.verdict.findings import CheckResult
from fuzzfarm.work.kinds import InputsDisagree, MadeRows, kind_of
from fuzzfarm.work.rows import finding_table, stats_row
from fuzzfarm.work.unit import IndexRange, WorkUnit

__all__ = ["Landed", "MadeRows", "Checked", "UnitReport", "InputsDisagree", "check_landed",
           "check_compared",
           "check_and_write", "check_result", "check_unit", "check_made", "verified_rows",
           "VERIFIED_ROWS"]


@dataclass
class Landed:
    """What the check of one unit needs from its run, as plain arrays: ``inputs`` (made
    on the host; None for a range, whose inputs are made again from their numbers, and
    for inputs made on the device), ``outputs`` ({name: array}, or a
    verdict.screened.SparseOutputs of the positions the verdict may read; None where
    ``made`` holds them), ``answer`` (the device screen's
    oracle.screen_answer.ScreenChunk, None where the host screens), ``made`` (a
    MadeRows), the device's seconds on the unit, and ``other``: a compare unit's outputs
    through its other front end ({name: array}, as ``outputs``), else None."""

    unit: WorkUnit
    device_seconds: float
    outputs: object = None
    inputs: dict | None = None
    answer: object = None
    made: MadeRows | None = None
    other: dict | None = None


class Checked(NamedTuple):
    """A checked unit: its findings (a pyarrow Table of store.FINDINGS_SCHEMA), its stats
    row (a dict of store.STATS_SCHEMA) and the verdict."""

    findings: object
    stats: dict
    result: CheckResult


@dataclass
class UnitReport:
    """What a checked and written unit reports to whoever runs the pipeline: its counts
    (inputs checked, failures, notes, device faults), the largest ULP error and the input
    bits that attain it, and where the time went (seconds: checking, the whole task,
    writing, the device).  ``tables``: the tables written ({file key: table},
    store.compact's ``known``), where the caller keeps them; ``fault``: the reason of a
    device fault recorded instead of a verdict; ``resident``: the unit's inputs were made
    and its results judged on the device, so the host held only the rows it judged (the
    scheduler may size the target's next units by the device's memory: work.make.UnitSizer)."""

    unit_id: str
    target: tuple
    inputs: int = 0
    failures: int = 0
    notes: int = 0
    max_ulp_error: float | None = None
    max_ulp_inputs: list | None = None
    check_seconds: float = 0.0
    task_seconds: float = 0.0
    write_seconds: float = 0.0
    device_seconds: float = 0.0
    fault: str | None = None
    tables: dict = field(default_factory=dict)
    resident: bool = False


def check_result(unit: WorkUnit, inputs: dict, outputs: dict, claims,
                 answer=None) -> CheckResult:
    """The verdict on one unit's outputs (built-in, geometric or conversion; ``claims``:
    what its kind judges under, ``Kind.claims``); with ``answer`` (the device screen's, as
    the kind's ``submit_screened`` gave it) only what the device did not decide is judged
    here (``Kind.check_screened``), every index still a position in the unit."""
    target = unit.target
    if answer is None:
        return kind_of(target).check(target, inputs, outputs, claims)
    return kind_of(target).check_screened(target, inputs, outputs, answer, claims)


def check_unit(unit: WorkUnit, inputs: dict, outputs: dict, claims, device_meta: dict,
               run_id: str, device_seconds: float, answer=None) -> Checked:
    """Check one unit whose inputs the host made (``check_result``) and build its rows."""
    return check_landed(Landed(unit, device_seconds, outputs, inputs, answer), claims,
                        device_meta, run_id)


def _check_range(landed: Landed, claims, device_meta: dict, run_id: str) -> Checked:
    """A range of the input space: its inputs made from their numbers where the verdict
    reads them (all of them, or the device screen's candidates), its classes counted from
    the numbering."""
    from fuzzfarm.verdict.checker import check_batch
    from fuzzfarm.verdict.screened import judge_screened
    t0 = time.perf_counter()
    unit = landed.unit
    start, count = unit.source.start, unit.source.count
    space = kind_of(unit.target).space(unit.target)
    if landed.answer is None:
        inputs = space.inputs(start, count)
        result = check_batch(space.fn, inputs, landed.outputs, claims)
    else:
        result, inputs, _ = judge_screened(space.fn, lambda pos: space.inputs_at(start, pos),
                                           count, landed.outputs, landed.answer, claims)
    dt = time.perf_counter() - t0
    return Checked(finding_table(result, unit, device_meta, run_id),
                   stats_row(result, unit, inputs, device_meta, run_id,
                             landed.device_seconds, dt,
                             by_class=space.class_counts(start, count)), result)


#: How many of the rows a made unit's verdict reads are made again on the host and
#: compared with the device's (``check_made``), besides every finding's row.
VERIFIED_ROWS = 1 << 14


def verified_rows(unit: WorkUnit, read: np.ndarray, findings) -> np.ndarray:
    """The rows (int64, sorted) of a made unit whose inputs ``check_made`` makes again on
    the host: every row in ``findings`` (positions: its findings' and its largest
    error's) and VERIFIED_ROWS of the rows ``read`` (all where fewer), drawn with a
    generator seeded by the unit's seed."""
    from fuzzfarm.verdict.screened import union
    if len(read) > VERIFIED_ROWS:
        rng = np.random.default_rng([int(unit.stored_seed), 0x5EED])
        read = read[rng.choice(len(read), VERIFIED_ROWS, replace=False)]
    read = np.asarray(read, np.int64)
    n = int(max(read.max(initial=-1), max(findings, default=-1))) + 1
    return union(n, read, list(findings))


def check_made(landed: Landed, claims, device_meta: dict, run_id: str) -> Checked:
    """The verdict on a unit whose inputs the device made and screened (``landed.made``).
    The verdict is on the inputs the device made and the results it computed from them,
    as the screen's own verdicts are (its kind's ``judge_made``); the host makes again the
    inputs of every finding and of a sample of the rows it read (``verified_rows``) from
    the recipe (the kind's ``made_inputs_at``): they must be the device's, every
    argument.  The class
    tallies are the device's.  Raises InputsDisagree where they differ, or where the rows
    the device gathered are not those its screen's answer marks (a device fault: no
    verdict)."""
    t0 = time.perf_counter()
    unit, made, answer = landed.unit, landed.made, landed.answer
    kind = kind_of(unit.target)
    result, inputs_at, read = kind.judge_made(unit.target, made, answer, claims)
    rows = verified_rows(unit, read, [f.index for f in result.findings] +
                         ([result.max_ulp_element] if result.max_ulp_element >= 0 else []))
    host = kind.made_inputs_at(unit.target, unit.source, rows)
    dev = inputs_at(rows)
    for name, want in host.items():
        if not np.array_equal(want, dev[name]):
            bad = np.flatnonzero(want != dev[name])
            h, d = want[bad], np.asarray(dev[name])[bad]     # an int's shown as its pattern
            raise InputsDisagree(rows[bad], h.view(f"u{h.dtype.itemsize}"),
                                 d.view(f"u{d.dtype.itemsize}"),
                                 kernels=kind.made_kernels(), argument=name)
    dt = time.perf_counter() - t0
    return Checked(finding_table(result, unit, device_meta, run_id),
                   stats_row(result, unit, None, device_meta, run_id, landed.device_seconds,
                             dt, tally=kind.made_tally(unit.target, made), inputs_at=inputs_at),
                   result)


def check_compared(landed: Landed, claims, device_meta: dict, run_id: str) -> Checked:
    """The verdict on a compare unit (``landed.other`` its other front end's outputs on
    the same host-made inputs, or the constants door's): its own front end's verdict on
    every input and, where the two results differ bit for bit, the other's failures or a
    ``front_ends.disagree`` (``constants.disagree``) note (verdict.front_ends.compare),
    both judged by the unit's kind under ``claims``."""
    from edgecases.catalogue import general_rule
    from fuzzfarm.verdict import front_ends
    t0 = time.perf_counter()
    unit = landed.unit
    kind = kind_of(unit.target)
    targets = {unit.target.front_end: unit.target, unit.against: unit.other_target}

    def judge(front_end: str, inputs: dict, outputs: dict) -> CheckResult:
        return kind.check(targets[front_end], inputs, outputs, claims)

    disagree = front_ends.CONSTANTS_DISAGREE if unit.against in CONSTANTS_DOORS else \
        front_ends.DISAGREE
    result = front_ends.compare(judge, unit.target.front_end, unit.against, landed.inputs,
                                landed.outputs, landed.other, general_rule(disagree),
                                [a.name for a in unit.target.inputs],
                                list(unit.target.outputs), unit.target.output_format)
    dt = time.perf_counter() - t0
    return Checked(finding_table(result, unit, device_meta, run_id),
                   stats_row(result, unit, landed.inputs, device_meta, run_id,
                             landed.device_seconds, dt), result)


def check_landed(landed: Landed, claims, device_meta: dict, run_id: str) -> Checked:
    """The verdict on ``landed`` and its rows (module docstring), under ``claims`` (what
    the unit's kind judges under: Kind.claims).  Raises InputsDisagree for inputs the
    device made wrong."""
    unit = landed.unit
    if landed.made is not None:
        return check_made(landed, claims, device_meta, run_id)
    if isinstance(unit.source, IndexRange):
        return _check_range(landed, claims, device_meta, run_id)
    if landed.other is not None:
        return check_compared(landed, claims, device_meta, run_id)
    t0 = time.perf_counter()
    result = check_result(unit, landed.inputs, landed.outputs, claims, landed.answer)
    dt = time.perf_counter() - t0
    return Checked(finding_table(result, unit, device_meta, run_id),
                   stats_row(result, unit, landed.inputs, device_meta, run_id,
                             landed.device_seconds, dt), result)


def check_and_write(landed: Landed, claims: Claims | dict, device_meta: dict, run_id: str,
                    out, keep: dict | None = None) -> UnitReport:
    """Check ``landed`` (``check_landed``) and write its findings and then its stats row
    (each atomically: the stats row makes the unit done); a unit whose device-made inputs
    disagree with the host's is written as an ``integer_arithmetic`` device fault
    instead.  ``keep``: a dict that gets the tables written (store.compact's ``known``).
    Returns the unit's report."""
    from fuzzfarm.store import dataset as store
    from fuzzfarm.work.rows import write_fault
    t0 = time.perf_counter()
    unit = landed.unit
    report = UnitReport(unit.unit_id, tuple(unit.target),
                        device_seconds=float(landed.device_seconds),
                        resident=landed.inputs is None and landed.answer is not None)
    try:
        checked = check_landed(landed, claims, device_meta, run_id)
    except InputsDisagree as exc:
        write_fault(out, run_id, unit, device_meta, "integer_arithmetic", exc.detail())
        report.fault = "integer_arithmetic"
        report.task_seconds = time.perf_counter() - t0
        return report
    t1 = time.perf_counter()
    store.write_findings_table(out, run_id, unit.unit_id, checked.findings, keep=keep)
    store.write_stats(out, run_id, unit.unit_id, checked.stats, keep=keep)
    t2 = time.perf_counter()
    s = checked.stats
    report.inputs, report.failures, report.notes = checked.result.n, s["failures"], s["notes"]
    report.max_ulp_error, report.max_ulp_inputs = s["max_ulp_error"], s.get("max_ulp_inputs")
    report.check_seconds = float(s["check_seconds"])
    report.write_seconds, report.task_seconds = t2 - t1, t2 - t0
    if keep is not None:
        report.tables = keep
    return report

