"""What a reproducer runs and how it judges (fuzzfarm repro, part 1 of 3).

``Case``: the kernel buffers (``work.kinds.Buffer``) and the one work-item a candidate input is run
as; ``target_for`` a finding row's target; ``acceptance`` what results are allowed (the
alternatives repro_judge.acceptable checks); ``Reproducer`` runs candidates on a device
and judges them; ``device_call`` the launch.  Used by fuzzfarm.report.repro_shrink and
fuzzfarm.report.repro.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from edgecases import bounds
from fuzzfarm.formats import FloatFormat, flushed_variants, is_subnormal
from fuzzfarm.target import CONSTANTS_DOORS, Target, door_front_end
from fuzzfarm.report.repro_judge import acceptable
from fuzzfarm.work.kinds import Buffer, kind_of
from fuzzfarm.work.unit import Special, WorkUnit

__all__ = ["Buffer", "Case", "Outcome", "Reproducer", "target_for", "claims_for",
           "acceptance", "device_call", "MAX_EVALUATIONS"]

#: At most this many predicate evaluations (device launches) per minimization: beyond
#: it new candidates count as passing, so hypothesis's shrinker stops.
MAX_EVALUATIONS = 5000

_U64 = (1 << 64) - 1

# --------------------------------------------------------------------------- targets
@dataclass(frozen=True)
class Case:
    """What one candidate input is run as.

    ``width``: the vector width of the kernel; ``lane``: the lane of the work-item whose
    result is judged (element-wise built-ins and conversions); ``context``: per argument,
    the values of the work-item's other lanes (None: all-zero bits) at width > 1.  A
    candidate is a tuple of buffer values (float bit patterns as unsigned ints, int
    arguments as signed ints): one per argument, or for a geometric built-in ``width``
    per argument, argument by argument (as a finding's ``input_bits``).  ``literal``: the
    candidate is given to the compiler as constants (a finding of ``front_end``'s
    constants door, docs/constants.md): the kernel is made for each candidate, one
    work-item computes it, and it has no input buffers."""

    function: str
    precision: str
    width: int = 1
    build_options: str = ""
    rule_class: str = ""
    severity: str = "fail"
    output: str = "ret"
    lane: int = 0
    context: tuple | None = None
    front_end: str = "opencl-c"
    literal: bool = False

    @property
    def target(self) -> Target:
        """What is under test: (function, precision, width, front end)."""
        return Target(self.function, self.precision, self.width, self.front_end)

    @property
    def fn(self):
        return self.target.fn

    @property
    def geometric(self) -> bool:
        return self.target.kind == "geometric"

    @property
    def fmt(self) -> FloatFormat:
        return self.target.fmt

    def inputs(self) -> list[Buffer]:
        """The input buffers (a conversion's source in its type)."""
        return kind_of(self.target).buffers(self.target)[0]

    def outputs(self) -> list[Buffer]:
        """The output buffers, ``ret`` first (a geometric sgentype result is scalar)."""
        return kind_of(self.target).buffers(self.target)[1]

    def output_slot(self, name: str | None = None) -> Buffer:
        name = name or self.output
        for s in self.outputs():
            if s.name == name:
                return s
        raise KeyError(f"{self.function} has no output {name!r}")

    @property
    def arity(self) -> int:
        """Values in one candidate."""
        return len(self.inputs()) * (self.width if self.geometric else 1)

    @property
    def lanes(self) -> int:
        """Lanes (buffer elements per input) one candidate takes."""
        return self.width

    def unit(self) -> WorkUnit:
        """A unit of the target (no inputs of its own: the reproducer gives them)."""
        return WorkUnit("repro", self.target, Special(0), self.build_options)

    def arrays(self, cands: Sequence[tuple]) -> dict:
        """The input arrays of a batch of candidates (``lanes`` elements each)."""
        slots = self.inputs()
        out = {}
        for i, s in enumerate(slots):
            if self.geometric:
                vals = [v for c in cands for v in c[i * self.width:(i + 1) * self.width]]
            elif self.width == 1:
                vals = [c[i] for c in cands]
            else:
                base = list(self.context[i]) if self.context is not None else [0] * self.width
                vals = []
                for c in cands:
                    lanes = list(base)
                    lanes[self.lane] = c[i]
                    vals.extend(lanes)
            out[s.name] = np.array(vals, dtype=s.dtype)
        return out

    def element(self, k: int) -> int:
        """Index (in the checker's result) of candidate ``k``'s judged element."""
        return k if self.geometric else k * self.width + self.lane

    def judged(self, outputs: dict, k: int, name: str | None = None) -> tuple:
        """The judged output values of candidate ``k``: one value, or a geometric
        vector result's ``width`` lanes."""
        slot = self.output_slot(name)
        arr = outputs[slot.name]
        if self.geometric:
            m = 1 if slot.scalar else self.width
            return tuple(int(v) for v in arr[k * m:(k + 1) * m])
        return (int(arr[self.element(k)]),)

    def work_item(self, outputs: dict, k: int) -> dict:
        """Every output of candidate ``k``'s work-item: {name: tuple of values}."""
        res = {}
        for s in self.outputs():
            m = 1 if s.scalar else self.width
            res[s.name] = tuple(int(v) for v in outputs[s.name][k * m:(k + 1) * m])
        return res

    def kernel(self, cand: tuple | None = None) -> tuple[str, str]:
        """(kernel name, program text): the OpenCL C source or SPIR-V module (assembly
        text) fuzzfarm runs; for a ``literal`` case, the one of candidate ``cand`` (its
        values as constants).  Raises ValueError for a literal case without ``cand``."""
        if not self.literal:
            return kind_of(self.target).kernel(self.target)
        if cand is None:
            raise ValueError("a literal case's kernel holds its candidate: give cand")
        from fuzzfarm.device import spirv
        from fuzzfarm.device.kernels import literal_kernel_name, literal_source
        write = spirv.literal_module if self.front_end == "spirv" else literal_source
        return literal_kernel_name(self.fn), write(self.fn, self.fmt, [tuple(cand)])

    def describe(self, cand: tuple) -> str:
        """``x=0x1p+0 (0x3f800000), y=2``; geometric vectors as tuples."""
        slots = self.inputs()
        parts = []
        for i, s in enumerate(slots):
            if self.geometric:
                vals = cand[i * self.width:(i + 1) * self.width]
                parts.append(f"{s.name}=(" + ", ".join(s.describe(v) for v in vals) + ")")
            else:
                parts.append(f"{s.name}={s.describe(cand[i])}")
        return ", ".join(parts)

    def u64(self, cand: tuple) -> list[int]:
        """The candidate as raw bits (unsigned 64-bit, two's complement), as a finding's
        ``input_bits``."""
        return [int(v) & _U64 for v in cand]

    def from_u64(self, bits: Sequence[int]) -> tuple:
        """A candidate from raw bits (a finding's ``input_bits``)."""
        slots = self.inputs()
        per = self.width if self.geometric else 1
        if len(bits) != len(slots) * per:
            raise ValueError(f"{len(bits)} input values for {self.function}; expected "
                             f"{len(slots) * per}")
        out = []
        for k, b in enumerate(bits):
            s = slots[k // per]
            u = np.array([int(b) & _U64], dtype=np.uint64).astype(f"u{s.dtype.itemsize}")
            out.append(int(u.view(s.dtype)[0]))
        return tuple(out)


def claims_for(info, target: Target, build_options: str, constants: dict | None):
    """The Claims a run gives the checker of ``target`` for ``info`` (a DeviceInfo): per
    precision the device's fp config flags, its profile, FP_ILOGB0/FP_ILOGBNAN and the
    build options, chosen by the target's kind (a conversion gets a dict of them by
    format)."""
    from fuzzfarm.verdict.claims import Claims
    return kind_of(target).claims(Claims.by_precision(info, constants, build_options), target)


def target_for(row: dict, width: int | None = None, lane: int | None = None,
               context: tuple | None = None) -> Case:
    """The Case of a finding row (its vector width, or ``width``)."""
    w = int(row["vector_width"]) if width is None else int(width)
    fe = row.get("front_end") or "opencl-c"
    literal = fe in CONSTANTS_DOORS
    fe = door_front_end(fe) if literal else fe
    t = Case(row["function"], row["precision"], w, row.get("build_options") or "",
             row["rule_class"], row["severity"], row["output"] or "ret", 0, context, fe,
             literal)
    if t.geometric:
        return t
    el = int(row["element"])
    return Case(t.function, t.precision, w, t.build_options, t.rule_class, t.severity,
                t.output, (el % w) if lane is None else lane, context, fe, literal)


# --------------------------------------------------------------------------- judging
@dataclass
class Outcome:
    """One candidate run and judged: ``finding`` the checker's Finding of the target's
    rule class (None when there is none), ``values`` the judged output values,
    ``outputs`` every output of its work-item, ``accept`` the acceptance alternatives
    (``acceptable``) and ``expected`` the checker's text; ``holds``: the finding is there
    and the values are not acceptable."""

    candidate: tuple
    finding: object | None
    values: tuple = ()
    outputs: dict = field(default_factory=dict)
    accept: list = field(default_factory=list)
    expected: str = ""
    holds: bool = False


def _hexes(text: str) -> list[int]:
    return [int(h, 16) for h in re.findall(r"0x[0-9a-fA-F]+", text)]


_PIECE = re.compile(r"^(?P<num>0x[0-9a-fA-F]+|[+-]?\d+)(?:\s*\(.*\))?$")


def _parse_expected(text: str, slot: Buffer) -> list | None:
    """The acceptance alternatives a checker's expected-result text states, or None when
    it is not one of the forms understood (exact bits, an int, any/quiet NaN, a zero of
    either sign, NaN payloads, alternatives joined by " or ")."""
    t = (text or "").strip()
    bits = slot.bits
    if t.startswith("the payload of one of the NaN operands:") and bits:
        return [{"kind": "payload", "value": p} for p in _hexes(t.split(":", 1)[1])] or None
    alts = []
    for piece in re.split(r"\s+or\s+", t):
        piece = piece.strip()
        if piece == "any NaN" and bits:
            alts.append({"kind": "nan"})
        elif piece.startswith("a quiet NaN") and bits:
            alts.append({"kind": "qnan"})
        elif piece in ("+0", "-0") and bits:
            alts.append({"kind": "bits", "value": 0 if piece == "+0" else 1 << (bits - 1)})
        else:
            m = _PIECE.match(piece)
            if not m:
                return None
            num = m.group("num")
            if num.lower().startswith("0x"):
                if not bits:
                    return None
                alts.append({"kind": "bits", "value": int(num, 16)})
            else:
                if bits:
                    return None
                alts.append({"kind": "int", "value": int(num)})
    return alts or None


def _ulp_limit(target: Case, claims, cand: tuple, severity: str) -> tuple[float, float] | None:
    """(ULPs, absolute) the bound allows the target's element, or None (unknown)."""
    fn = target.fn
    try:
        bound = bounds.bound(fn.name, claims.precision, claims.profile, claims.relaxed)
    except (KeyError, AttributeError):
        return None
    if bound.correctly_rounded:
        return 0.5, 0.0
    plain = bound.plain_ulps
    if plain is not None:
        return float(plain), 0.0
    slots = target.inputs()
    args = {s.name: np.array([cand[i]], dtype=s.dtype) for i, s in enumerate(slots)}
    kinds = {s.name: s.kind for s in slots}
    try:
        lim = bound.limits(args, kinds, target.fmt, target.width)
    except Exception:       # an exotic piece: state no bound
        return None
    if lim.judged is not None and not bool(np.asarray(lim.judged)[0]):
        return None
    ulps = lim.ulps if severity != "fail" or lim.fail_ulps is None else lim.fail_ulps
    absolute = lim.absolute if severity != "fail" or lim.fail_absolute is None \
        else lim.fail_absolute
    u = float(np.asarray(ulps)[0])
    a = float(np.asarray(absolute)[0]) if absolute is not None else 0.0
    if not np.isfinite(u) or not np.isfinite(a):
        return None
    return u, a


def acceptance(target: Case, claims, finding, cand: tuple, values: tuple,
               outputs: dict | None = None) -> list:
    """The acceptance alternatives (``acceptable``) of one finding of the target: the
    prescribed result of its rule (exact bits, any NaN, a quiet NaN, a zero, an int, NaN
    payloads), for a ULP bound the correctly rounded reference with the bound in ULPs
    (and its absolute bound), or, where none can be stated, "differs from the values
    returned now".  Where the device flushes (``claims`` without denormals; OpenCL
    3.8.3), also a zero of either sign for a subnormal reference, and, given the
    work-item's ``outputs`` ({name: values}), the alternatives of the candidate with its
    subnormal arguments flushed to a zero of either sign (``_flushed``)."""
    slot = target.output_slot(finding.output)
    text = finding.expected or ""
    alts = None
    builtin = target.target.kind != "conversion"        # conversions: as they were
    flush = builtin and (_flushes(claims) or target.fn.family == "half")
    if finding.rule_id.startswith("ulp.") and slot.bits and not target.geometric:
        refs = _hexes(text)
        lim = _ulp_limit(target, claims, cand, finding.severity)
        if refs and lim is not None:
            alts = [{"kind": "ulp", "value": r, "ulps": lim[0], "abs": lim[1]} for r in refs]
            if flush and is_subnormal(np.asarray(refs, slot.fmt.uint), slot.fmt).any():
                alts.append({"kind": "zero"})       # a subnormal result may be flushed
            if "any NaN" in text:
                alts.append({"kind": "nan"})
    elif target.geometric:
        if text.strip() == "every lane a NaN" and slot.bits:
            alts = [{"kind": "nan"}]
        elif len(values) == 1 and not finding.rule_id.startswith("ulp."):
            alts = _parse_expected(text, slot)
    else:
        alts = _parse_expected(text, slot)
    if not alts:
        alts = [{"kind": "differs", "values": list(values)}]
    if builtin and outputs is not None and _flushes(claims):
        alts += [a for a in _flushed(target, claims, finding, cand, outputs)
                 if a not in alts]
    return alts


def _flushes(claims) -> bool:
    """Whether ``claims`` (a Claims; a conversion's dict of them never) let the device
    flush subnormals (no CL_FP_DENORM, or -cl-denorms-are-zero)."""
    from fuzzfarm.verdict.claims import Claims
    return isinstance(claims, Claims) and not claims.denormals


def _flushed(target: Case, claims, finding, cand: tuple, outputs: dict) -> list:
    """OpenCL 3.8.3 (results 3 and 4): a flushing device may compute as if each subnormal
    float argument were a zero of either sign; the acceptance alternatives of every such
    variant of ``cand`` (at most 16, as the checker's rescue tries them), from the
    checker's finding for the same output on the work-item's ``outputs``.  Variants whose
    alternatives cannot be stated ("differs") add none."""
    from fuzzfarm.work.check import check_result
    slots = target.inputs()
    per = target.width if target.geometric else 1
    fmts = [slots[k // per].fmt if slots[k // per].kind == "float" else None
            for k in range(len(cand))]
    variants = flushed_variants(cand, fmts)
    if any(len(outputs.get(o.name, ())) != (1 if o.scalar else target.width)
           for o in target.outputs()):
        return []                   # not the whole work-item's outputs: nothing to judge
    outs = {o.name: np.array(outputs[o.name], dtype=o.dtype) for o in target.outputs()}
    alts: list = []
    for v in variants:
        inputs = target.arrays([v])
        found = [f for f in check_result(target.unit(), inputs, outs, claims).findings
                 if f.output == finding.output and f.severity == "fail"
                 and f.index == target.element(0)]
        if found:
            alts += [a for a in acceptance(target, claims, found[0], v,
                                           target.judged(outs, 0, finding.output))
                     if a["kind"] != "differs"]
    return alts


class Reproducer:
    """Runs candidates of one Case through ``call`` and judges them.

    ``call(inputs) -> outputs``: input arrays by argument name (buffer dtypes: float bit
    patterns as unsigned ints, int arguments as int32...) to output arrays by output name;
    a DeviceRunner's (``device_call``) or any stand-in.  ``claims``: the checker's Claims
    (a dict of them by format for a conversion).  Verdicts are cached per candidate;
    ``launches`` counts the calls of ``call``."""

    def __init__(self, target: Case, call: Callable[[dict], dict], claims):
        self.target, self.call, self.claims = target, call, claims
        self.cache: dict = {}
        self.launches = 0
        self.evaluations = 0

    def _claims_one(self):
        c = self.claims
        if isinstance(c, dict):
            return c.get(self.target.precision) or next(iter(c.values()))
        return c

    def evaluate(self, cands: Sequence[tuple], fresh: bool = False) -> list[Outcome]:
        """Run ``cands`` in one launch (or take their cached verdicts) and judge them."""
        cands = [tuple(int(v) for v in c) for c in cands]
        todo = [c for c in dict.fromkeys(cands) if fresh or c not in self.cache]
        if todo:
            from fuzzfarm.work.check import check_result
            t = self.target
            inputs = t.arrays(todo)
            outputs = self.call(inputs)
            self.launches += 1
            result = check_result(t.unit(), inputs, outputs, self.claims)
            by_el: dict = {}
            for f in result.findings:
                by_el.setdefault(f.index, []).append(f)
            from fuzzfarm.store.signatures import rule_class
            for k, c in enumerate(todo):
                mine = [f for f in by_el.get(t.element(k), ())
                        if f.severity == t.severity and rule_class(
                            f.rule_id, t.function, t.precision,
                            [int(v) & _U64 for v in f.inputs]) == t.rule_class]
                mine.sort(key=lambda f: f.output != t.output)
                work = t.work_item(outputs, k)
                if not mine:
                    self.cache[c] = Outcome(c, None, outputs=work)
                    continue
                f = mine[0]
                values = t.judged(outputs, k, f.output)
                alts = acceptance(t, self._claims_one(), f, c, values, work)
                bits = t.output_slot(f.output).bits
                self.cache[c] = Outcome(c, f, values, work, alts, f.expected,
                                        not acceptable(values, alts, bits))
        return [self.cache[c] for c in cands]

    def holds(self, cand: tuple) -> bool:
        """The predicate of the minimization: ``cand`` fails the target's rule class."""
        cand = tuple(int(v) for v in cand)
        if cand not in self.cache:
            if self.evaluations >= MAX_EVALUATIONS:
                return False
            self.evaluations += 1
        return self.evaluate([cand])[0].holds


def device_call(runner, target: Case) -> Callable[[dict], dict]:
    """``call`` for a Reproducer: run the target's kernel on a DeviceRunner (a literal
    case: its candidates compiled as constants, DeviceRunner.run_literals)."""
    if target.literal:
        return lambda inputs: runner.run_literals(target.fn, inputs, target.fmt,
                                                  target.front_end).wait()
    from fuzzfarm.work.session import run_unit
    unit = target.unit()
    return lambda inputs: run_unit(runner, unit, inputs)
