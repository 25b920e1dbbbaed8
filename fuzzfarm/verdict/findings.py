"""What a check decides: ``Finding`` (one element that breaks a rule) and ``CheckResult``
(the verdict on one batch), shared by every checker (fuzzfarm.verdict.checker for the
element-wise built-ins, fuzzfarm.verdict.geometric, fuzzfarm.verdict.conversions) and read by the store,
reports and orchestration.  Plain data, no numerics beyond folding ULP maxima.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

__all__ = ["Finding", "CheckResult", "class_codes", "class_key", "first_of_each",
           "FINDINGS_PER_RULE"]


def class_codes(fn, fmt, args: dict) -> np.ndarray:
    """The input class of each element as one int64 code: argument j's IEEE class
    (formats.INPUT_CLASSES, or INT_CLASSES for an int argument) in hex digit j.  ``fn``: a
    catalogue Function; ``args``: {argument name: array (n,)} of raw bits (float
    arguments as ``fmt`` patterns, int arguments as int32 or their uint64 two's complement).
    ``class_key`` spells a code out."""
    from fuzzfarm import formats
    n = len(next(iter(args.values()))) if args else 0
    code = np.zeros(n, np.int64)
    for j, a in enumerate(fn.inputs):
        bits = np.asarray(args[a.name])
        if a.kind == "int":
            v = (bits.astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)
            c = formats.classify_int(v)
        else:
            c = formats.classify(bits if bits.dtype == fmt.uint else
                                 bits.astype(np.uint64).astype(fmt.uint), fmt)
        code |= c.astype(np.int64) << np.int64(4 * j)
    return code


def first_of_each(codes: np.ndarray) -> np.ndarray:
    """Positions (int64, sorted) of the first occurrence of each distinct value of
    ``codes`` (``class_codes``: a few distinct values among up to millions; one
    comparison pass per value instead of a sort)."""
    codes = np.asarray(codes, np.int64)
    if codes.size == 0:
        return np.zeros(0, np.int64)
    if codes.min() >= 0 and codes.max() < 1 << 16:
        present = np.flatnonzero(np.bincount(codes))
        if present.size <= 64:
            return np.sort(np.array([int(np.argmax(codes == v)) for v in present], np.int64))
    return np.sort(np.unique(codes, return_index=True)[1])


def class_key(fn, code: int) -> str:
    """The input class a ``class_codes`` code stands for, as stored and as signatures
    write it: ``x:pos_normal`` or ``x:neg_zero,y:int_pos`` (one entry per argument)."""
    from fuzzfarm import formats
    parts = []
    for j, a in enumerate(fn.inputs):
        c = (int(code) >> (4 * j)) & 15
        names = formats.INT_CLASSES if a.kind == "int" else formats.INPUT_CLASSES
        parts.append(f"{a.name}:{names[c]}")
    return ",".join(parts)


@dataclass
class Finding:
    """One element that breaks a rule: everything needed to report and reproduce it
    (docs/design.md, decision 12).  ``inputs`` and ``outputs`` are bit patterns (float) or int values;
    ``ulp_error`` in ULPs where a bound was measured, else None; ``front_end`` the front
    end whose result it is where that is not the unit's (a compare unit's other front
    end: verdict.front_ends), else None."""

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
    front_end: str | None = None


#: At most this many findings of one rule (and output) are recorded per batch judged (a
#: run's unit, a sweep's chunk: verdict.checker.check_batch, verdict.conversions.check);
#: the rest are counted (CheckResult.unrecorded), so a systematic failure cannot flood
#: the results or the checking processes.
FINDINGS_PER_RULE = 1000


@dataclass
class CheckResult:
    """The verdict on one batch: findings, and the counts the stats rows need.

    ``n`` elements (vectors for a geometric built-in); ``screened`` passed by the float64
    screen, ``exact`` judged by the exact path, ``unjudged`` left alone because the spec
    leaves their result undefined or implementation-defined (undefined domains, build
    options, unbounded relaxed pieces).  ``max_ulp_error`` in ULPs (NaN when none measured).
    """

    function: str
    n: int
    findings: list = field(default_factory=list)
    max_ulp_error: float = float("nan")
    screened: int = 0
    exact: int = 0
    unjudged: int = 0
    #: findings counted but not recorded as rows: (rule_id, severity) -> count, beyond
    #: checker.FINDINGS_PER_RULE of one rule and output in one batch (a systematic failure of a
    #: sweep would otherwise make billions of rows).
    unrecorded: Counter = field(default_factory=Counter)
    #: the same findings by input class: (rule_id, severity, class code) -> count
    #: (``class_codes``; filled where the checker counted them, see ``count_unrecorded``)
    unrecorded_by_class: Counter = field(default_factory=Counter)
    #: the element (index into the batch) whose error is ``max_ulp_error``; -1 if unknown
    max_ulp_element: int = -1
    #: the screened errors by input band and error bin (oracle.histogram: int64
    #: (NROWS, NBINS)), or None where none was screened
    ulp_hist: object = None

    def count_unrecorded(self, rule_id: str, severity: str, codes: np.ndarray) -> None:
        """Count findings of ``rule_id`` at ``severity`` without recording them: one per
        element of ``codes`` (their ``class_codes``), in ``unrecorded`` and, by input
        class, in ``unrecorded_by_class``."""
        codes = np.asarray(codes, np.int64)
        if codes.size == 0:
            return
        if codes.min() >= 0 and codes.max() < 1 << 16:     # a few classes: no sort
            k = np.bincount(codes)
            u = np.flatnonzero(k)
            k = k[u]
        else:
            u, k = np.unique(codes, return_counts=True)
        for c, m in zip(u.tolist(), k.tolist()):
            self.add_unrecorded(rule_id, severity, c, m)

    def add_unrecorded(self, rule_id: str, severity: str, code: int, k: int) -> None:
        """Count ``k`` unrecorded findings of ``rule_id`` at ``severity`` whose input
        class is ``code`` (``class_codes``)."""
        self.unrecorded[(rule_id, severity)] += int(k)
        self.unrecorded_by_class[(rule_id, severity, int(code))] += int(k)

    def add_histogram(self, hist) -> None:
        """Fold a histogram (oracle.histogram layout) into ``ulp_hist``."""
        if hist is not None:
            self.ulp_hist = hist.copy() if self.ulp_hist is None else self.ulp_hist + hist

    @property
    def failures(self) -> list:
        """The recorded failures (Finding objects; see ``unrecorded`` for the rest)."""
        return [f for f in self.findings if f.severity == "fail"]

    def counts_by_rule(self, severity: str | None = "fail") -> dict:
        """rule id -> number of findings of ``severity`` (None: any), recorded or not."""
        c = Counter(f.rule_id for f in self.findings
                    if severity is None or f.severity == severity)
        for (rule_id, sev), k in self.unrecorded.items():
            if severity is None or sev == severity:
                c[rule_id] += k
        return dict(c)

    def merge(self, part: "CheckResult", offset: int) -> None:
        """Fold ``part``, the verdict on the elements ``offset ..`` of this batch, into
        this one (findings re-indexed; counts and maxima combined)."""
        self.findings.extend(replace(f, index=f.index + offset) for f in part.findings)
        self.screened += part.screened
        self.exact += part.exact
        self.unjudged += part.unjudged
        self.unrecorded.update(part.unrecorded)
        self.unrecorded_by_class.update(part.unrecorded_by_class)
        self.add_histogram(part.ulp_hist)
        m = part.max_ulp_error
        if not math.isnan(m) and (math.isnan(self.max_ulp_error) or m > self.max_ulp_error):
            self.max_ulp_error = m
            self.max_ulp_element = -1 if part.max_ulp_element < 0 else \
                part.max_ulp_element + offset

    def note_error(self, err, index=None) -> None:
        """Fold measured ULP error(s) into ``max_ulp_error``; ``index`` (same shape as
        ``err``) the elements they belong to, kept in ``max_ulp_element`` for the maximum."""
        err = np.atleast_1d(np.asarray(err, dtype=np.float64))
        ok = np.isfinite(err)
        if not ok.any():
            return
        k = int(np.argmax(np.where(ok, err, -np.inf)))
        m = float(err[k])
        if math.isnan(self.max_ulp_error) or m > self.max_ulp_error:
            self.max_ulp_error = m
            self.max_ulp_element = -1 if index is None else int(np.atleast_1d(index)[k])
