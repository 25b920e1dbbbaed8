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

__all__ = ["Finding", "CheckResult"]


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
    #: the element (index into the batch) whose error is ``max_ulp_error``; -1 if unknown
    max_ulp_element: int = -1
    #: the screened errors by input band and error bin (oracle.histogram: int64
    #: (NBANDS, NBINS)), or None where none was screened
    ulp_hist: object = None

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
