"""Regression triage between two results directories (``fuzzfarm triage``).

``compare(baseline_dir, current_dir)`` reads the findings and stats of two results
directories (each the ``--out`` of one or many runs: last night's and tonight's, or two
driver versions) and returns a ``Triage``; ``write_markdown``, ``write_html`` and
``write_junit`` render it; ``run`` does all of it into one report directory.

Definitions (what the report's words mean)
------------------------------------------

* **Target**: (device model, function, precision, vector width, build options), the
  build options with their whitespace normalized.  Devices are matched by model name
  (the ``device`` column), never by fingerprint or driver version, so two driver versions
  of one device model meet.  When the two sets have no device name in common nothing can
  be compared, and the report says so.
* **Issue**: ``fuzzfarm.store.signatures``' issue id (the signature without the driver version):
  a target plus a rule class.  Severities ``fail`` and ``fault`` are **failures**;
  ``note`` rows are informational, listed apart, and never a new failure.
* **Tested**: a run tested a target when it wrote a stats row for it with
  ``inputs_tested > 0``, or a finding for it (a device fault's stats row counts no
  inputs, its finding does).  A set tested a target when one of its runs did.
* **Input-class coverage**: for an element-wise built-in, each failing finding's
  arguments have IEEE classes (``x:pos_normal``, as ``signatures.rule_class`` and the
  stats' ``inputs_by_class`` name them).  The other set *covers* an issue when it tested
  the target with at least one input of every argument class of at least one of the
  issue's failing findings; where classes are not known (conversions, geometric
  built-ins, device faults, stats without ``inputs_by_class``) covering is testing the
  target at all.  This keeps a sweep of the subnormals from "fixing" ``sinpi(1.0)``.
* **Flaky**: within one set, the issue's target was tested in at least 2 runs and the
  issue fails in some of them but not all.  An issue flaky in either set is reported as
  flaky (never as new, fixed or still failing), with its runs failing / tested per set.
* Otherwise, by failures in each set: **still failing** (both); **new** (current only,
  and the baseline covered it); **fixed** (baseline only, and the current set covered
  it); **untested** (one set only, and the other did not cover it: never "fixed" and
  never "new"; ``untested_in`` says which set lacked it).

JUnit mapping (``write_junit``)
-------------------------------

One ``<testsuite name="fuzzfarm-triage">``; one ``<testcase>`` per issue of either set
(``classname`` = ``device.function.precision``, ``name`` = the rule class, with
``[w<width>]`` and ``[<build options>]`` appended where not 1 / empty, so that
testcases stay unique).  The testcases show the state of the **current** set; the exit
code shows the regression:

* a ``<failure>`` for every issue that fails in the current set: ``type="new"``,
  ``"still-failing"``, ``"flaky"``, or ``"not-in-baseline"`` (untested in the
  baseline), the message carrying the example;
* ``<skipped>`` for an issue that fails in the baseline only and that the current set did
  not cover (untested);
* a passing testcase for a fixed issue, an issue flaky in the baseline only, and a note
  (its text in ``<system-out>``).

Exit code (``Triage.exit_code``): 1 when there is a new failure, else 0.
"""
from __future__ import annotations

import base64
import io
import math
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from fuzzfarm import formats
from fuzzfarm.store import signatures
from fuzzfarm.store import dataset as store
from fuzzfarm.errors import BadInput
from fuzzfarm.report.render import render

__all__ = ["TriageError", "Side", "IssueRow", "UlpRow", "CoverageRow", "Triage", "compare",
           "write_markdown", "write_html", "write_junit", "run", "print_summary",
           "TARGET_FIELDS", "STATUSES"]

#: The fields of a target (see the module docstring).
TARGET_FIELDS = ("device", "function", "precision", "vector_width", "build_options")
#: The issue statuses, in report order.
STATUSES = ("new", "fixed", "still failing", "flaky", "untested", "note")
FAILURE_SEVERITIES = ("fault", "fail")
#: At most this many ULP histograms and (device, function) bars in the HTML report.
MAX_HISTOGRAMS = 36
MAX_BARS = 40


class TriageError(BadInput):
    """Bad input: a directory that does not exist or holds no fuzzfarm results."""


def _norm_options(value) -> str:
    return signatures.normalize_options(value)


# --------------------------------------------------------------------------- results
@dataclass
class Side:
    """One issue in one result set."""
    failures: int = 0               # findings of severity fail or fault
    notes: int = 0                  # findings of severity note
    severity: str | None = None     # the worst: "fault", "fail", "note", None (absent)
    runs_failing: int = 0           # runs with a failure of the issue
    runs_tested: int = 0            # runs that tested the issue's target
    max_ulp: float | None = None    # the largest ulp_error of its findings
    drivers: tuple[str, ...] = ()   # driver versions its findings came from
    example: dict | None = None     # the earliest failure (else note): inputs, outputs, ...

    @property
    def flaky(self) -> bool:
        """Tested in >= 2 runs and failing in some but not all of them."""
        return self.runs_tested >= 2 and 0 < self.runs_failing < self.runs_tested


@dataclass
class IssueRow:
    """One issue of either set, with its status (one of ``STATUSES``)."""
    issue: str
    status: str
    device: str
    function: str
    precision: str
    vector_width: int
    build_options: str
    rule_class: str
    rule_id: str
    severity: str                   # worst over both sets
    baseline: Side
    current: Side
    detail: str = ""                # why (flaky counts, what was untested)
    untested_in: str = ""           # "baseline" / "current" for status "untested"
    text: str = ""                  # the text that governs the rule (modality.toml)
    verb: str = ""                  # its modal verb: shall/must/is bind, should/may do not

    @property
    def governed_by(self) -> str:
        """'C99 Annex F (is)', 'OpenCL C 3.0 (should)'; '-' for a device fault."""
        return f"{self.text} ({self.verb})" if self.text else "-"

    @property
    def target(self) -> tuple:
        return (self.device, self.function, self.precision, self.vector_width,
                self.build_options)

    @property
    def example(self) -> dict | None:
        """The current set's example where it has the issue, else the baseline's."""
        return self.current.example or self.baseline.example

    @property
    def fails_in_current(self) -> bool:
        return self.current.failures > 0


@dataclass
class UlpRow:
    """A target whose largest measured ULP error (stats ``max_ulp_error``) grew."""
    device: str
    function: str
    precision: str
    vector_width: int
    build_options: str
    baseline_max: float
    current_max: float
    ulp_failures_baseline: int      # ulp.* failures of the target in each set
    ulp_failures_current: int

    @property
    def ratio(self) -> float:
        return self.current_max / self.baseline_max if self.baseline_max else math.inf


@dataclass
class CoverageRow:
    """A target tested in either set: inputs, units, runs and max ULP error per set."""
    device: str
    function: str
    precision: str
    vector_width: int
    build_options: str
    inputs_baseline: int
    inputs_current: int
    units_baseline: int
    units_current: int
    runs_baseline: int
    runs_current: int
    max_ulp_baseline: float | None
    max_ulp_current: float | None

    @property
    def where(self) -> str:
        """"both", "baseline only", "current only" or "neither" (only units that
        tested no input, e.g. device faults without a finding)."""
        if self.runs_baseline and self.runs_current:
            return "both"
        if self.runs_baseline or self.runs_current:
            return "baseline only" if self.runs_baseline else "current only"
        return "neither"


@dataclass
class Triage:
    """What ``compare`` found.  ``issues`` holds every issue of either set; the
    properties ``new``, ``fixed``, ``still_failing``, ``flaky``, ``untested`` and
    ``notes`` select them by status."""
    baseline: str
    current: str
    issues: list[IssueRow]
    ulp_regressions: list[UlpRow]
    coverage: list[CoverageRow]
    devices_baseline: dict[str, list[str]]     # device model -> driver versions
    devices_current: dict[str, list[str]]
    runs_baseline: list[str]
    runs_current: list[str]
    #: (function, precision) -> {"source": "findings"|"stats", "baseline": array,
    #: "current": array}: ULP errors for the histograms
    ulp_samples: dict = field(default_factory=dict)
    #: (device, function) -> (failures in baseline, failures in current)
    failures_per_device_function: dict = field(default_factory=dict)
    #: baseline model name -> the current model name it was compared with
    paired: dict = field(default_factory=dict)
    #: the current set across implementations (``matrix``): the implementations (every
    #: one that ran a unit, with or without findings) and, per rule id failing or
    #: faulting on one of them, {implementation: (failing inputs, first signature)}
    implementations: list = field(default_factory=list)
    matrix: dict = field(default_factory=dict)

    def _with(self, status):
        return [i for i in self.issues if i.status == status]

    @property
    def new(self) -> list[IssueRow]:
        return self._with("new")

    @property
    def fixed(self) -> list[IssueRow]:
        return self._with("fixed")

    @property
    def still_failing(self) -> list[IssueRow]:
        return self._with("still failing")

    @property
    def flaky(self) -> list[IssueRow]:
        return self._with("flaky")

    @property
    def untested(self) -> list[IssueRow]:
        return self._with("untested")

    @property
    def notes(self) -> list[IssueRow]:
        return self._with("note")

    @property
    def common_devices(self) -> list[str]:
        return sorted(set(self.devices_baseline) & set(self.devices_current))

    @property
    def devices_disjoint(self) -> bool:
        """True when both sets have devices and no device model name in common."""
        return bool(self.devices_baseline and self.devices_current
                    and not self.common_devices)

    @property
    def only_baseline(self) -> list[CoverageRow]:
        return [c for c in self.coverage if c.where == "baseline only"]

    @property
    def only_current(self) -> list[CoverageRow]:
        return [c for c in self.coverage if c.where == "current only"]

    @property
    def counts(self) -> dict[str, int]:
        """Issues per status (every status of ``STATUSES``, zeros included)."""
        c = Counter(i.status for i in self.issues)
        return {s: c.get(s, 0) for s in STATUSES}

    @property
    def exit_code(self) -> int:
        """1 when there is a new failure, else 0."""
        return 1 if self.new else 0


# --------------------------------------------------------------------------- reading
@dataclass
class _Target:
    runs: set = field(default_factory=set)
    inputs: int = 0
    units: int = 0
    max_ulp: float | None = None
    classes: Counter = field(default_factory=Counter)


@dataclass
class _Set:
    findings: pa.Table                       # with signatures' columns
    stats: pa.Table
    targets: dict                            # target -> _Target
    issues: dict                             # issue -> dict
    devices: dict                            # device -> set of driver versions
    runs: list


def _read(path, which: str) -> tuple[pa.Table, pa.Table]:
    """(stats, findings) of a results directory, read once.  Raises TriageError for a
    directory that does not exist or holds no fuzzfarm results, store.StoreError for a
    corrupt one."""
    p = Path(path)
    if not p.is_dir():
        raise TriageError(f"--{which} {str(path)!r} is not a directory")
    if not ((p / "_stats").is_dir() or (p / "_runs").is_dir()):
        raise TriageError(f"--{which} {str(path)!r} holds no fuzzfarm results "
                          f"(no _stats/ or _runs/ in it)")
    stats = store.read_stats(p)
    findings = store.read_findings(p)
    if stats.num_rows == 0 and findings.num_rows == 0:
        raise TriageError(f"--{which} {str(path)!r} holds no fuzzfarm results "
                          f"(no findings or stats Parquet files)")
    return stats, findings


def _device_names(stats: pa.Table, findings: pa.Table) -> set[str]:
    """The device model names of a results directory's stats and findings."""
    return set(stats.column("device").to_pylist()) | \
        set(findings.column("device").to_pylist())


def _load(stats: pa.Table, findings: pa.Table, rename: dict | None = None) -> _Set:
    """One result set from its ``_read`` tables; ``rename``: device model names to
    compare under another name (``compare``'s pairs)."""
    if rename:                  # paired devices take the other set's model name
        def renamed(t):
            k = t.schema.get_field_index("device")
            names = [rename.get(d, d) for d in t.column("device").to_pylist()]
            return t.set_column(k, "device", pa.array(names, pa.string()))
        stats, findings = renamed(stats), renamed(findings)
    findings = signatures.with_signatures(findings)
    devices: dict = defaultdict(set)
    targets: dict = defaultdict(_Target)
    runs = set()
    cols = ["run_id", "device", "driver_version", *TARGET_FIELDS[1:], "inputs_tested",
            "max_ulp_error", "inputs_by_class"]
    for r in stats.select(cols).to_pylist():
        key = (r["device"], r["function"], r["precision"], int(r["vector_width"] or 0),
               _norm_options(r["build_options"]))
        t = targets[key]
        t.units += 1
        n = r["inputs_tested"] or 0
        t.inputs += n
        if n > 0:
            t.runs.add(r["run_id"])
        m = r["max_ulp_error"]
        if m is not None and not math.isnan(m):
            t.max_ulp = m if t.max_ulp is None else max(t.max_ulp, m)
        for k, v in r["inputs_by_class"] or ():
            t.classes[k] += v or 0
        devices[r["device"]].add(r["driver_version"] or "")
        runs.add(r["run_id"])
    issues = _issues(findings, targets, devices, runs)
    return _Set(findings, stats, dict(targets), issues, dict(devices), sorted(runs))


def _issues(findings: pa.Table, targets, devices, runs) -> dict:
    """Per issue: identity, counts, runs failing, max ULP, example rows, failure rows."""
    cols = {c: findings[c].to_pylist() for c in (
        "issue", "severity", "run_id", "ulp_error", "device", "driver_version",
        "function", "precision", "vector_width", "build_options")}
    # times as integers (ms since the epoch): cheaper than datetime objects
    cols["time"] = findings["time"].cast(pa.int64()).to_pylist()
    out: dict = {}
    for k in range(findings.num_rows):
        iss = cols["issue"][k]
        d = out.get(iss)
        if d is None:
            key = (cols["device"][k], cols["function"][k], cols["precision"][k],
                   int(cols["vector_width"][k] or 0), _norm_options(cols["build_options"][k]))
            d = out[iss] = {"target": key, "failures": 0, "notes": 0, "severities": set(),
                            "runs": set(), "max_ulp": None, "drivers": set(),
                            "first_fail": None, "first_note": None, "rows": []}
        sev = cols["severity"][k]
        d["severities"].add(sev)
        d["drivers"].add(cols["driver_version"][k] or "")
        devices[cols["device"][k]].add(cols["driver_version"][k] or "")
        run = cols["run_id"][k]
        targets[d["target"]].runs.add(run)
        runs.add(run)
        u = cols["ulp_error"][k]
        if u is not None and not math.isnan(u):
            d["max_ulp"] = u if d["max_ulp"] is None else max(d["max_ulp"], u)
        t = cols["time"][k]
        order = (t is None, t or 0, k)
        if sev in FAILURE_SEVERITIES:
            d["failures"] += 1
            d["runs"].add(run)
            d["rows"].append(k)
            if d["first_fail"] is None or order < d["first_fail"]:
                d["first_fail"] = order
        else:
            d["notes"] += 1
            if d["first_note"] is None or order < d["first_note"]:
                d["first_note"] = order
    # the examples, fetched in one take
    picks = {iss: (d["first_fail"] or d["first_note"])[2] for iss, d in out.items()}
    if picks:
        ex = findings.take(pa.array(list(picks.values()), pa.int64())).select(
            ["run_id", "unit_id", "element", "inputs", "outputs", "expected", "rule_id",
             "rule_class", "sentence", "severity", "ulp_error", "driver_version", "text",
             "verb"]).to_pylist()
        for iss, row in zip(picks, ex):
            out[iss]["example"] = row
    return out


def _class_combos(findings: pa.Table, rows: list[int], function: str,
                  precision: str) -> set[tuple[str, ...]] | None:
    """The distinct tuples of argument classes (``x:pos_normal``) of the findings at
    ``rows``, or None where they are not known (not an element-wise built-in, no input
    bits)."""
    kinds = signatures.input_kinds(function)
    if kinds is None or not rows:
        return None
    try:
        fmt = formats.format_named(precision)
    except KeyError:
        return None
    bits = [b for b in findings["input_bits"].take(pa.array(rows, pa.int64())).to_pylist()
            if b is not None and len(b) == len(kinds)]
    if not bits:
        return None
    arr = np.array(bits, dtype=np.uint64).reshape(len(bits), len(kinds))
    codes = np.empty(arr.shape, dtype=np.int8)
    for j, (_, kind) in enumerate(kinds):
        if kind == "int":
            v = (arr[:, j] & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)
            codes[:, j] = formats.classify_int(v)
        else:
            codes[:, j] = formats.classify(arr[:, j], fmt)
    combos = set()
    for row in np.unique(codes, axis=0):
        combos.add(tuple(
            f"{name}:{(formats.INT_CLASSES if kind == 'int' else formats.INPUT_CLASSES)[c]}"
            for (name, kind), c in zip(kinds, row)))
    return combos


def _covers(other: _Set, target, combos) -> tuple[bool, str]:
    """(does ``other`` cover an issue of ``target`` failing on ``combos``, why not)."""
    t = other.targets.get(target)
    if t is None or not t.runs:
        return False, "did not test this target"
    if not combos or not any(t.classes.values()):
        return True, ""
    for combo in combos:
        if all(t.classes.get(c, 0) > 0 for c in combo):
            return True, ""
    shown = "; ".join(",".join(c) for c in sorted(combos)[:3])
    more = f" (+{len(combos) - 3} more)" if len(combos) > 3 else ""
    return False, (f"tested this target ({t.inputs:,} inputs) but no inputs of the classes "
                   f"it failed on: {shown}{more}")


def _side(s: _Set, iss: str) -> Side:
    d = s.issues.get(iss)
    if d is None:
        return Side()
    sev = ("fault" if "fault" in d["severities"] else "fail" if "fail" in d["severities"]
           else "note")
    t = s.targets.get(d["target"])
    return Side(failures=d["failures"], notes=d["notes"], severity=sev,
                runs_failing=len(d["runs"]), runs_tested=len(t.runs) if t else 0,
                max_ulp=d["max_ulp"], drivers=tuple(sorted(d["drivers"])),
                example=d.get("example"))


def _runs_side(s: _Set, target) -> int:
    t = s.targets.get(target)
    return len(t.runs) if t else 0


def compare(baseline_dir, current_dir, pairs: dict | None = None) -> Triage:
    """Compare two results directories; returns a ``Triage`` (every issue of either set
    with its status, the ULP regressions, the coverage per target, the devices and runs
    of each set, and the data of the plots).  Pure except for reading the Parquet files.

    Devices meet by model name.  ``pairs`` ({baseline model: current model}) makes two
    differently named models one (two driver builds that name the same CPU differently,
    e.g. PoCL 3.0's "pthread-<cpu>" and 3.1's "pthread-skylake-avx512-<cpu>"); without
    it, a baseline and a current set of exactly one model each, named differently, are
    paired (``Triage.paired`` says so).  Raises TriageError for a directory that does not
    exist or holds no fuzzfarm results, or a pair naming a model its set lacks;
    store.StoreError for a corrupt directory."""
    raw_b = _read(baseline_dir, "baseline")
    raw_c = _read(current_dir, "current")
    names_b, names_c = _device_names(*raw_b), _device_names(*raw_c)
    if pairs:
        for b, c in pairs.items():
            if b not in names_b or c not in names_c:
                raise TriageError(f"--pair {b}={c}: the baseline's devices are "
                                  f"{sorted(names_b)}, the current's {sorted(names_c)}")
    elif len(names_b) == 1 and len(names_c) == 1 and names_b != names_c:
        pairs = {next(iter(names_b)): next(iter(names_c))}
    base = _load(*raw_b, pairs)
    cur = _load(*raw_c)
    issues = []
    for iss in sorted(set(base.issues) | set(cur.issues)):
        d = cur.issues.get(iss) or base.issues[iss]
        ex = d["example"]
        target = d["target"]
        b, c = _side(base, iss), _side(cur, iss)
        # the target's runs, whether or not this set has the issue
        b.runs_tested, c.runs_tested = _runs_side(base, target), _runs_side(cur, target)
        sevs = {b.severity, c.severity} - {None}
        severity = next(s for s in ("fault", "fail", "note") if s in sevs)
        row = IssueRow(issue=iss, status="", device=target[0], function=target[1],
                       precision=target[2], vector_width=target[3], build_options=target[4],
                       rule_class=ex["rule_class"], rule_id=ex["rule_id"], severity=severity,
                       baseline=b, current=c, text=ex["text"] or "", verb=ex["verb"] or "")
        if not b.failures and not c.failures:
            row.status = "note"
        elif b.flaky or c.flaky:
            row.status = "flaky"
            row.detail = "; ".join(
                f"flaky in {name}: fails in {s.runs_failing} of {s.runs_tested} runs"
                for name, s in (("baseline", b), ("current", c)) if s.flaky)
        elif b.failures and c.failures:
            row.status = "still failing"
        else:
            has, other, other_name = (cur, base, "baseline") if c.failures else \
                (base, cur, "current")
            combos = _class_combos(has.findings, has.issues[iss]["rows"], target[1],
                                   target[2])
            ok, why = _covers(other, target, combos)
            if ok:
                row.status = "new" if c.failures else "fixed"
            else:
                row.status, row.untested_in = "untested", other_name
                row.detail = f"{other_name} {why}"
        issues.append(row)
    order = {s: k for k, s in enumerate(STATUSES)}
    issues.sort(key=lambda i: (order[i.status], i.device, i.function, i.precision,
                               i.vector_width, i.build_options, i.rule_class))

    # per target: coverage and ULP maxima
    ulp_fails = {name: Counter() for name in ("baseline", "current")}
    for i in issues:
        if i.rule_id.startswith("ulp."):
            ulp_fails["baseline"][i.target] += i.baseline.failures
            ulp_fails["current"][i.target] += i.current.failures
    coverage, regressions = [], []
    for key in sorted(set(base.targets) | set(cur.targets), key=lambda k: tuple(map(str, k))):
        tb, tc = base.targets.get(key, _Target()), cur.targets.get(key, _Target())
        coverage.append(CoverageRow(*key, inputs_baseline=tb.inputs, inputs_current=tc.inputs,
                                    units_baseline=tb.units, units_current=tc.units,
                                    runs_baseline=len(tb.runs), runs_current=len(tc.runs),
                                    max_ulp_baseline=tb.max_ulp, max_ulp_current=tc.max_ulp))
        if tb.max_ulp is not None and tc.max_ulp is not None and tc.max_ulp > tb.max_ulp:
            regressions.append(UlpRow(*key, baseline_max=tb.max_ulp, current_max=tc.max_ulp,
                                      ulp_failures_baseline=ulp_fails["baseline"][key],
                                      ulp_failures_current=ulp_fails["current"][key]))
    regressions.sort(key=lambda r: (-r.ratio, r.device, r.function))

    per_df: dict = {}
    for i in issues:
        k = (i.device, i.function)
        b0, c0 = per_df.get(k, (0, 0))
        per_df[k] = (b0 + i.baseline.failures, c0 + i.current.failures)
    per_df = {k: v for k, v in per_df.items() if v != (0, 0)}

    impls, matrix = implementation_matrix(cur.stats, cur.findings)
    return Triage(
        implementations=impls, matrix=matrix,
        baseline=str(baseline_dir), current=str(current_dir), issues=issues,
        ulp_regressions=regressions, coverage=coverage,
        paired=dict(pairs or {}),
        devices_baseline={d: sorted(v) for d, v in sorted(base.devices.items())},
        devices_current={d: sorted(v) for d, v in sorted(cur.devices.items())},
        runs_baseline=base.runs, runs_current=cur.runs,
        ulp_samples=_ulp_samples(base, cur),
        failures_per_device_function=per_df)


def _implementation(platform, device, driver) -> str:
    return f"{platform or '?'}: {device or '?'} ({driver or '?'})"


def implementation_matrix(stats: pa.Table, findings: pa.Table) -> tuple[list, dict]:
    """Rule x implementation of one result set.  Implementations: 'platform: device
    (driver)' of every stats row and finding (so one that found nothing is there too),
    sorted.  Returns (implementations, {rule id: {implementation: (failing inputs,
    signature of its first finding)}}) over failures and device faults (``findings``
    with signatures' columns)."""
    impls = set()
    for t in (stats, findings):
        if t.num_rows:
            cols = t.select(["platform", "device", "driver_version"]).to_pydict()
            impls |= {_implementation(*r) for r in zip(cols["platform"], cols["device"],
                                                       cols["driver_version"])}
    matrix: dict = {}
    if findings.num_rows:
        cols = findings.select(["platform", "device", "driver_version", "rule_id",
                                "severity", "signature"]).to_pydict()
        for p, d, v, rule, sev, sig in zip(*cols.values()):
            if sev not in FAILURE_SEVERITIES:
                continue
            cell = matrix.setdefault(rule, {})
            impl = _implementation(p, d, v)
            n, first = cell.get(impl, (0, sig))
            cell[impl] = (n + 1, first)
    return sorted(impls), dict(sorted(matrix.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def _ulp_samples(base: _Set, cur: _Set) -> dict:
    """(function, precision) -> the ULP errors of each set: the findings' ``ulp_error``
    where either set has some for it, else each unit's ``max_ulp_error``."""
    def from_findings(s: _Set) -> dict:
        f = s.findings
        fn, pr = f["function"].to_pylist(), f["precision"].to_pylist()
        ulp = f["ulp_error"].to_numpy(zero_copy_only=False)
        out = defaultdict(list)
        for k in np.flatnonzero(np.isfinite(ulp.astype(np.float64))):
            out[(fn[k], pr[k])].append(float(ulp[k]))
        return out

    def from_stats(s: _Set) -> dict:
        st = s.stats.select(["function", "precision", "max_ulp_error"])
        out = defaultdict(list)
        for r in st.to_pylist():
            m = r["max_ulp_error"]
            if m is not None and math.isfinite(m):
                out[(r["function"], r["precision"])].append(float(m))
        return out

    fb, fc = from_findings(base), from_findings(cur)
    sb, sc = from_stats(base), from_stats(cur)
    samples = {}
    for key in sorted(set(fb) | set(fc) | set(sb) | set(sc), key=lambda k: tuple(map(str, k))):
        if fb.get(key) or fc.get(key):
            src, b, c = "findings", fb.get(key, []), fc.get(key, [])
        else:
            src, b, c = "stats", sb.get(key, []), sc.get(key, [])
        samples[key] = {"source": src, "baseline": np.asarray(b, dtype=np.float64),
                        "current": np.asarray(c, dtype=np.float64)}
    return samples


# --------------------------------------------------------------------------- rendering
@dataclass
class _Section:
    title: str
    columns: list[str]
    rows: list[list[str]]
    css: str = ""                    # row class in the HTML (new, fixed, flaky, ...)
    text: str = ""                   # a paragraph before the table
    empty: str = "None."
    level: int = 2


def _fmt_ulp(v) -> str:
    if v is None:
        return ""
    return f"{v:.4g}"


def _opts(o: str) -> str:
    return o if o else "(none)"


def _example(row: IssueRow, limit: int = 240) -> str:
    e = row.example
    if not e:
        return ""
    text = (f"{e['inputs']} -> {e['outputs'] or 'no result'} "
            f"(expected {e['expected']})")
    return text if len(text) <= limit else text[:limit - 3] + "..."


_ISSUE_COLUMNS = ["issue", "device", "function", "precision", "width", "build options",
                  "rule class", "governed by", "severity", "fails baseline", "fails current",
                  "runs failing/tested baseline", "runs failing/tested current",
                  "max ULP baseline", "max ULP current", "example", "detail"]


def _issue_cells(i: IssueRow) -> list[str]:
    def runs(s: Side) -> str:
        return f"{s.runs_failing}/{s.runs_tested}"
    return [i.issue, i.device, i.function, i.precision, str(i.vector_width),
            _opts(i.build_options), i.rule_class, i.governed_by, i.severity,
            str(i.baseline.failures),
            str(i.current.failures), runs(i.baseline), runs(i.current),
            _fmt_ulp(i.baseline.max_ulp), _fmt_ulp(i.current.max_ulp), _example(i), i.detail]


def _target_cells(r) -> list[str]:
    return [r.device, r.function, r.precision, str(r.vector_width), _opts(r.build_options)]


_TARGET_COLUMNS = ["device", "function", "precision", "width", "build options"]


def _device_text(t: Triage) -> str:
    def names(d: dict) -> str:
        return ", ".join(f"{k} (driver {'/'.join(v) or '?'})" for k, v in d.items()) or "none"
    text = (f"Devices (matched by model name): baseline: {names(t.devices_baseline)}; "
            f"current: {names(t.devices_current)}.")
    if t.paired:
        text += " Paired: " + "; ".join(
            f"baseline {b!r} compared as current {c!r}" for b, c in t.paired.items()) + (
            " (one device model each)." if len(t.paired) == 1 else ".")
    if t.devices_disjoint:
        text += (" WARNING: the two sets have no device model in common, so nothing can be "
                 "compared: every failure is untested in the other set.")
    else:
        only_b = sorted(set(t.devices_baseline) - set(t.devices_current))
        only_c = sorted(set(t.devices_current) - set(t.devices_baseline))
        if only_b:
            text += f" Only in the baseline: {', '.join(only_b)}."
        if only_c:
            text += f" Only in the current set: {', '.join(only_c)}."
    return text


def trust_line(t: Triage) -> str:
    """'N failures (issues whose governing text says shall, must or states the result:
    F in the current set) and M notes (should, may, implementation-defined)'."""
    fails = [i for i in t.issues if i.status != "note"]
    return (f"{len(fails)} failure issue(s) (the governing text requires the result: "
            f"shall, must, or a statement such as 'returns'; "
            f"{sum(i.fails_in_current for i in fails)} failing in the current set) and "
            f"{len(t.notes)} note(s) (should, may, implementation-defined: never failures)")


def _sections(t: Triage) -> list[_Section]:
    c = t.counts
    summary = _Section(
        "Summary", ["", "count"],
        [["new failures", str(c["new"])], ["fixed", str(c["fixed"])],
         ["still failing", str(c["still failing"])], ["flaky", str(c["flaky"])],
         ["untested (no comparison)", str(c["untested"])], ["notes (informational)",
                                                             str(c["note"])],
         ["ULP maximum regressions", str(len(t.ulp_regressions))],
         ["targets tested only in the baseline", str(len(t.only_baseline))],
         ["targets tested only in the current set", str(len(t.only_current))]],
        text=(f"Baseline: `{t.baseline}` ({len(t.runs_baseline)} runs); current: "
              f"`{t.current}` ({len(t.runs_current)} runs). " + trust_line(t) + ". "
              + _device_text(t)
              + f" Exit status: {t.exit_code}."))
    secs = [summary]
    blurbs = {
        "new": ("New failures", "Failing in the current set, not in the baseline, which "
                "tested (covered) the target."),
        "fixed": ("Fixed", "Failing in the baseline, not in the current set, which tested "
                  "the target with inputs of the classes it failed on."),
        "still failing": ("Still failing", "Failing in both sets."),
        "flaky": ("Flaky", "Failing in some but not all runs (of at least 2) that tested "
                  "the target, in either set."),
        "untested": ("Untested", "Failing in one set only; the other did not test the "
                     "target (or not with inputs of the classes it failed on): neither "
                     "fixed nor new."),
    }
    for status, (title, text) in blurbs.items():
        rows = [i for i in t.issues if i.status == status]
        secs.append(_Section(f"{title} ({len(rows)})", _ISSUE_COLUMNS,
                             [_issue_cells(i) for i in rows], css=status.replace(" ", "-"),
                             text=text))
    if t.implementations:
        secs.append(_Section(
            f"Across implementations ({len(t.matrix)} rules x {len(t.implementations)} "
            f"implementations)", ["rule", *t.implementations],
            [[rule, *(f"{cells[i][0]:,} ({cells[i][1]})" if i in cells else "-"
                      for i in t.implementations)] for rule, cells in t.matrix.items()],
            text=f"The current set: failing inputs per rule and implementation (failures "
                 f"and device faults; '-': none), with the signature of each cell's first "
                 f"finding. Reproduce a cell with `fuzzfarm repro SIGNATURE {t.current} "
                 f"--out DIR`. Every implementation that ran a unit has a column."))
    notes = t.notes
    secs.append(_Section(
        f"Notes ({len(notes)})",
        ["issue", *_TARGET_COLUMNS, "rule class", "governed by", "notes baseline",
         "notes current", "example"],
        [[i.issue, *_target_cells(i), i.rule_class, i.governed_by, str(i.baseline.notes),
          str(i.current.notes), _example(i)] for i in notes], css="note",
        text="Informational: what the governing text recommends or permits (should, may, "
             "implementation-defined), or where the texts are ambiguous; never failures."))
    secs.append(_Section(
        f"ULP maximum regressions ({len(t.ulp_regressions)})",
        [*_TARGET_COLUMNS, "max ULP baseline", "max ULP current", "ratio",
         "ulp.* failures baseline", "ulp.* failures current"],
        [[*_target_cells(r), _fmt_ulp(r.baseline_max), _fmt_ulp(r.current_max),
          f"{r.ratio:.3g}", str(r.ulp_failures_baseline), str(r.ulp_failures_current)]
         for r in t.ulp_regressions], css="regression",
        text="Targets whose largest measured ULP error (per-unit `max_ulp_error`) is larger "
             "in the current set; the bound is not in the stats, so the ulp.* failure "
             "counts say whether it was exceeded."))
    cov_cols = [*_TARGET_COLUMNS, "inputs", "units", "runs"]
    secs.append(_Section(
        f"Tested only in the baseline ({len(t.only_baseline)})", cov_cols,
        [[*_target_cells(r), f"{r.inputs_baseline:,}", str(r.units_baseline),
          str(r.runs_baseline)] for r in t.only_baseline], css="untested",
        text="Coverage differences: nothing about these targets is claimed fixed."))
    secs.append(_Section(
        f"Tested only in the current set ({len(t.only_current)})", cov_cols,
        [[*_target_cells(r), f"{r.inputs_current:,}", str(r.units_current),
          str(r.runs_current)] for r in t.only_current], css="untested"))
    secs.append(_Section(
        f"Inputs tested per target ({len(t.coverage)})",
        [*_TARGET_COLUMNS, "inputs baseline", "inputs current", "units baseline",
         "units current", "runs baseline", "runs current", "max ULP baseline",
         "max ULP current"],
        [[*_target_cells(r), f"{r.inputs_baseline:,}", f"{r.inputs_current:,}",
          str(r.units_baseline), str(r.units_current), str(r.runs_baseline),
          str(r.runs_current), _fmt_ulp(r.max_ulp_baseline), _fmt_ulp(r.max_ulp_current)]
         for r in t.coverage]))
    return secs


def write_markdown(t: Triage, path) -> Path:
    """Write the report as Markdown to ``path`` (fuzzfarm/report/templates/triage.md.j2);
    returns the path."""
    p = Path(path)
    p.write_text(render("triage.md.j2", sections=_sections(t)), encoding="utf-8")
    return p


#: The report's style sheet: fuzzfarm/report/templates/triage.css.


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _histograms(t: Triage) -> list[tuple[str, str]]:
    """(alt text, base64 PNG) per (function, precision), at most MAX_HISTOGRAMS: those
    with a ULP regression first, then by the largest error."""
    from matplotlib.figure import Figure

    regressed = {(r.function, r.precision) for r in t.ulp_regressions}

    def peak(item):
        (key, d) = item
        vals = np.concatenate([d["baseline"], d["current"]])
        return (key not in regressed, -(vals.max() if vals.size else 0.0), str(key))

    items = [kv for kv in t.ulp_samples.items()
             if kv[1]["baseline"].size or kv[1]["current"].size]
    out = []
    for (fn, prec), d in sorted(items, key=peak)[:MAX_HISTOGRAMS]:
        b, c = d["baseline"], d["current"]
        vals = np.concatenate([b, c])
        pos = vals[vals > 0]
        fig = Figure(figsize=(4.4, 2.7))
        ax = fig.add_subplot()
        lo, hi = float(vals.min()), float(vals.max())
        if pos.size and pos.max() / pos.min() > 50:
            bins = np.geomspace(pos.min(), pos.max() * 1.0001, 31)
            ax.set_xscale("log")
            b, c = np.clip(b, pos.min(), None), np.clip(c, pos.min(), None)
        else:
            if hi <= lo:
                lo, hi = lo - 0.5, hi + 0.5
            bins = np.linspace(lo, hi, 31)
        if b.size:
            ax.hist(b, bins=bins, alpha=0.5, color="#1f77b4", label=f"baseline ({b.size})")
        if c.size:
            ax.hist(c, bins=bins, alpha=0.5, color="#d62728", label=f"current ({c.size})")
        what = "findings' ulp_error" if d["source"] == "findings" else "per-unit max_ulp_error"
        ax.set_title(f"{fn} {prec}: {what}", fontsize=9)
        ax.set_xlabel("ULP error", fontsize=8)
        ax.set_ylabel("count", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7)
        out.append((f"ULP errors of {fn} {prec}", _png(fig)))
    return out


def _bars(t: Triage) -> str | None:
    """A horizontal bar chart of failures per (device, function), baseline vs current
    (the MAX_BARS largest), as base64 PNG; None when neither set has a failure."""
    from matplotlib.figure import Figure

    items = sorted(t.failures_per_device_function.items(),
                   key=lambda kv: (-max(kv[1]), kv[0]))[:MAX_BARS]
    if not items:
        return None
    labels = [f"{d} / {f}" for (d, f), _ in items][::-1]
    b = np.array([v[0] for _, v in items][::-1], dtype=float)
    c = np.array([v[1] for _, v in items][::-1], dtype=float)
    y = np.arange(len(items))
    fig = Figure(figsize=(8, 1.2 + 0.32 * len(items)))
    ax = fig.add_subplot()
    ax.barh(y + 0.2, b, height=0.4, color="#1f77b4", label="baseline")
    ax.barh(y - 0.2, c, height=0.4, color="#d62728", label="current")
    ax.set_yticks(y, labels, fontsize=7)
    pos = np.concatenate([b, c])
    pos = pos[pos > 0]
    if pos.size and pos.max() / pos.min() > 100:
        ax.set_xscale("log")
    ax.set_xlabel("failures (fail + fault findings)", fontsize=8)
    ax.set_title("Failures per device and function", fontsize=9)
    ax.legend(fontsize=7)
    return _png(fig)


def write_html(t: Triage, path) -> Path:
    """Write the report as ONE self-contained HTML file (inline CSS, plots as inline
    base64 PNG, no external URL, no script) to ``path`` (fuzzfarm/report/templates/
    triage.html.j2); returns the path."""
    c = t.counts
    plots = {"plots_error": "", "bars": None, "hists": [],
             "measured": sum(1 for d in t.ulp_samples.values()
                             if d["baseline"].size or d["current"].size)}
    try:
        plots.update(hists=_histograms(t), bars=_bars(t))
    except ImportError as exc:                    # matplotlib is a dependency; be kind
        plots["plots_error"] = str(exc)
    page = render("triage.html.j2", sections=_sections(t), disjoint=t.devices_disjoint,
                  badges=[(s, c[s]) for s in ("new", "fixed", "still failing", "flaky",
                                              "untested")], **plots)
    p = Path(path)
    p.write_text(page, encoding="utf-8")
    return p


def _junit_name(i: IssueRow) -> str:
    name = i.rule_class
    if i.vector_width != 1:
        name += f" [w{i.vector_width}]"
    if i.build_options:
        name += f" [{i.build_options}]"
    return name


def write_junit(t: Triage, path) -> Path:
    """Write JUnit XML (one testsuite "fuzzfarm-triage", one testcase per issue; the
    mapping is in the module docstring) to ``path``; returns the path."""
    root = ET.Element("testsuites", name="fuzzfarm-triage")
    suite = ET.SubElement(root, "testsuite", name="fuzzfarm-triage")
    n_fail = n_skip = 0
    for i in t.issues:
        case = ET.SubElement(suite, "testcase", classname=f"{i.device}.{i.function}."
                             f"{i.precision}", name=_junit_name(i), time="0")
        body = (f"issue {i.issue} ({i.status}); rule {i.rule_id}; "
                f"failures baseline {i.baseline.failures}, current {i.current.failures}; "
                f"notes baseline {i.baseline.notes}, current {i.current.notes}"
                + (f"; {i.detail}" if i.detail else ""))
        if i.fails_in_current:
            kind = {"new": "new", "still failing": "still-failing", "flaky": "flaky",
                    "untested": "not-in-baseline"}[i.status]
            f = ET.SubElement(case, "failure", type=kind,
                              message=f"{kind}: {_example(i, 1000)}")
            sentence = (i.example or {}).get("sentence") or ""
            f.text = body + (f"\n{sentence}" if sentence else "")
            n_fail += 1
        elif i.status == "untested":
            ET.SubElement(case, "skipped", message=i.detail)
            n_skip += 1
        ET.SubElement(case, "system-out").text = body
    for el in (root, suite):
        el.set("tests", str(len(t.issues)))
        el.set("failures", str(n_fail))
        el.set("errors", "0")
    suite.set("skipped", str(n_skip))
    ET.indent(root)
    p = Path(path)
    ET.ElementTree(root).write(p, encoding="utf-8", xml_declaration=True)
    return p


def run(baseline, current, out_dir="triage-report", pairs: dict | None = None) -> Triage:
    """Compare ``baseline`` with ``current`` (``pairs``: see ``compare``) and write
    ``report.md``, ``report.html`` and ``junit.xml`` into ``out_dir`` (created).  Returns
    the ``Triage``.  Raises TriageError / store.StoreError for bad input (nothing is
    written then)."""
    t = compare(baseline, current, pairs)
    out = store.check_writable(out_dir)
    write_markdown(t, out / "report.md")
    write_html(t, out / "report.html")
    write_junit(t, out / "junit.xml")
    return t


def print_summary(t: Triage, out_dir=None, console=None) -> None:
    """Print a short summary table (rich) of ``t``, the new failures and where the
    report is."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    c = t.counts
    table = Table(title=escape(f"triage: {t.baseline} -> {t.current}"))
    table.add_column("")
    table.add_column("count", justify="right")
    for label, n, style in (
            ("new failures", c["new"], "bold red" if c["new"] else ""),
            ("fixed", c["fixed"], "green"), ("still failing", c["still failing"], ""),
            ("flaky", c["flaky"], "yellow"), ("untested", c["untested"], "dim"),
            ("notes", c["note"], "dim"),
            ("ULP max regressions", len(t.ulp_regressions), ""),
            ("targets only in baseline", len(t.only_baseline), ""),
            ("targets only in current", len(t.only_current), "")):
        table.add_row(label, str(n), style=style or None)
    console.print(table)
    console.print(escape(trust_line(t)), highlight=False)
    for i in t.new[:10]:
        console.print("[red]new[/] " + escape(
            f"{i.issue} {i.device} {i.function} {i.precision} w{i.vector_width} "
            f"{i.rule_class}: {_example(i, 160)}"), highlight=False)
    if len(t.new) > 10:
        console.print(f"... and {len(t.new) - 10} more new failures")
    if t.devices_disjoint:
        console.print("[yellow]the two sets have no device model in common: nothing was "
                      "compared[/]")
    if out_dir is not None:
        console.print(escape(f"report: {Path(out_dir) / 'report.md'}, "
                             f"{Path(out_dir) / 'report.html'}, {Path(out_dir) / 'junit.xml'}"),
                      highlight=False)
