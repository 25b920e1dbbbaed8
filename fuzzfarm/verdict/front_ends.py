"""Front ends compared: the same inputs through two front ends (OpenCL C source and a
SPIR-V module) on one device, every input whose results differ bit for bit reported.

A unit of a compare job (a campaign job's ``compare_front_ends``) runs its inputs through
its own front end and, on the same device and the same inputs, through the other one.
Where the two results of an input are the same bits, one verdict serves both: the unit's
own, on every input.  Where they differ, each result is judged under its own front end's
rules; an input where one of them breaks a rule has that failure (its row names the front
end whose result it is), and an input where neither does gets a note ``front_ends.disagree``
(edgecases/data/general.toml) with both results: no specification requires the two front
ends to agree, but a driver whose two compilers of one built-in answer differently has two
implementations of it, and its owners want to know.

A constants comparison (``compare = "constants"``, docs/constants.md) is the same logic
with the run time's results as the unit's own and the compiler's constant folder's as the
other's (the door ``opencl-c-constants`` or ``spirv-constants``), its note
``constants.disagree``.

Pure logic on arrays; the unit's kind judges (``judge``), so built-ins and conversions are
compared alike.  Geometric built-ins are not compared (an element is a vector, and their
results are not lane for lane).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Callable

import numpy as np

from edgecases.catalogue import GeneralRule
from fuzzfarm import formats
from fuzzfarm.verdict.findings import FINDINGS_PER_RULE, CheckResult, Finding

__all__ = ["DISAGREE", "CONSTANTS_DISAGREE", "differing", "compare"]

#: The general rule of a disagreement that breaks no rule (edgecases/data/general.toml).
DISAGREE = "front_ends.disagree"
#: ... and of one between a result computed at run time and the same call on constants
#: (the compiler's constant folder: docs/constants.md).
CONSTANTS_DISAGREE = "constants.disagree"


def differing(outputs: dict, other: dict) -> np.ndarray:
    """The positions (int64, sorted) where ``outputs`` and ``other`` ({output name: array
    (n,)} of raw bits or integers, the same names and lengths) differ bit for bit in any
    output; a NaN of another payload or sign differs.  Raises ValueError for outputs of
    other names or lengths."""
    if set(outputs) != set(other):
        raise ValueError(f"outputs {sorted(outputs)} and {sorted(other)} differ in names")
    mask = None
    for name, a in outputs.items():
        a, b = np.asarray(a), np.asarray(other[name])
        if a.shape != b.shape or a.dtype.itemsize != b.dtype.itemsize:
            raise ValueError(f"output {name!r}: {a.shape} {a.dtype} against "
                             f"{b.shape} {b.dtype}")
        view = f"u{a.dtype.itemsize}"
        diff = a.view(view) != b.view(view)
        mask = diff if mask is None else mask | diff
    return np.flatnonzero(mask) if mask is not None else np.zeros(0, np.int64)


def _fails(result: CheckResult) -> set:
    return {f.index for f in result.findings if f.severity == "fail"}


def _describe(outputs_of: list, bits: tuple, fmt) -> str:
    """``ret=0x1p+0 (0x3f800000)``: each output as the findings' outputs text writes it."""
    return ", ".join(f"{a.name}={formats.describe_value(a.kind, int(b), fmt)}"
                     for a, b in zip(outputs_of, bits))


def compare(judge: Callable[[str, dict, dict], CheckResult], own: str, other: str,
            inputs: dict, outputs: dict, other_outputs: dict,
            rule: GeneralRule, input_names: list, outputs_of: list, fmt) -> CheckResult:
    """The verdict of a compare unit.

    ``judge(front_end, inputs, outputs)``: the unit's kind's verdict on a batch
    ({name: array (k,)}) as that front end's result; ``own``/``other``: the unit's front
    end and the one compared with ('opencl-c', 'spirv'); ``inputs``, ``outputs``,
    ``other_outputs``: {name: array (n,)} of raw bits (the same inputs through both);
    ``rule``: the general rule ``front_ends.disagree`` (edgecases.catalogue.general_rule);
    ``input_names``: the argument names in order (a finding's ``inputs`` tuple);
    ``outputs_of``: the outputs as catalogue.Arg (name and kind) in order, and ``fmt`` the
    format of the float ones (FloatFormat), which the note's ``expected`` is written in.

    Returns the own front end's verdict on every input, with, at the inputs whose
    results differ, the other front end's failures (``Finding.front_end`` = ``other``)
    and a ``front_ends.disagree`` note (severity note; ``expected`` the other result)
    where neither result breaks a rule.  The differing inputs are judged in pieces of
    FINDINGS_PER_RULE, so that every failure among them is known by position; of the
    other front end's failures and of the notes, at most FINDINGS_PER_RULE per rule are
    recorded and the rest counted (``CheckResult.unrecorded``).  Raises ValueError for
    outputs that do not match (``differing``)."""
    result = judge(own, inputs, outputs)
    pos = differing(outputs, other_outputs)
    output_names = [a.name for a in outputs_of]
    recorded: Counter = Counter()
    added: list = []

    def keep(f: Finding) -> None:
        key = (f.rule_id, f.severity)
        if recorded[key] < FINDINGS_PER_RULE:
            recorded[key] += 1
            added.append(f)
        else:
            result.unrecorded[key] += 1

    for start in range(0, pos.size, FINDINGS_PER_RULE):
        piece = pos[start:start + FINDINGS_PER_RULE]
        sub_in = {k: np.asarray(v)[piece] for k, v in inputs.items()}
        sub_own = {k: np.asarray(v)[piece] for k, v in outputs.items()}
        sub_other = {k: np.asarray(v)[piece] for k, v in other_outputs.items()}
        mine = judge(own, sub_in, sub_own)
        theirs = judge(other, sub_in, sub_other)
        for f in theirs.findings:
            if f.severity == "fail":
                keep(replace(f, index=int(piece[f.index]), front_end=other))
        # a piece of at most FINDINGS_PER_RULE inputs has every finding recorded
        broken = _fails(mine) | _fails(theirs)
        for j in range(piece.size):
            if j in broken:
                continue
            i = int(piece[j])
            ins = tuple(int(sub_in[a][j]) for a in input_names)
            got = tuple(int(sub_own[o][j]) for o in output_names)
            alt = tuple(int(sub_other[o][j]) for o in output_names)
            keep(Finding(i, result.function, rule.id, rule.section, rule.sentence,
                         rule.severity, output_names[0], ins, got,
                         f"{other}: {_describe(outputs_of, alt, fmt)}", None, rule.reading))
    result.findings = sorted(result.findings + added, key=lambda f: f.index)
    return result
