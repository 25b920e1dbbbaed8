"""Regression triage between two results directories (``fuzzfarm triage``).

``compare(baseline_dir, current_dir)`` reads the findings and stats of two results
directories (each the ``--out`` of one or many runs: last night's and tonight's, or two
driver versions) and returns a ``Triage``; ``write_markdown``, ``write_html`` and
``write_junit`` render it; ``run`` does all of it into one report directory.

Definitions (what the report's words mean)
------------------------------------------

* **Target**: (device model, function, precision, vector width, build options, front
  end), the build options with their whitespace normalized, the front end 'opencl-c'
  where a row has none (rows written before kernels could be SPIR-V).  Devices are
  matched by model name (the ``device`` column), never by fingerprint or driver version,
  so two driver versions of one device model meet.  When the two sets have no device
  name in common nothing can be compared, and the report says so.
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

JUnit mapping (``triage_report.write_junit``)
---------------------------------------------

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

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from fuzzfarm import formats
from fuzzfarm.store import signatures
from fuzzfarm.store import dataset as store
from fuzzfarm.errors import BadInput

__all__ = ["TriageError", "Side", "IssueRow", "UlpRow", "CoverageRow", "Triage", "compare",
           "TARGET_FIELDS", "target_key", "STATUSES", "ResultSet", "read_set", "load_set",
           "class_combos",
           "covers"]

#: The fields of a target (see the module docstring): an issue key less its rule class,
#: as an accuracy id hashes them.
TARGET_FIELDS = signatures.ACCURACY_FIELDS
#: The issue statuses, in report order.
STATUSES = ("new", "fixed", "still failing", "flaky", "untested", "note")
FAILURE_SEVERITIES = ("fault", "fail")
#: At most this many ULP histograms and (device, function) bars in the HTML report.
MAX_HISTOGRAMS = 12
MAX_BARS = 40


class TriageError(BadInput):
    """Bad input: a directory that does not exist or holds no fuzzfarm results."""


def _norm_options(value) -> str:
    return signatures.normalize_options(value)


def target_key(device, function, precision, vector_width, build_options,
               front_end) -> tuple:
    """A target as triage keys it (TARGET_FIELDS): the width an int, the build options
    normalized, a missing front end 'opencl-c'."""
    return (device, function, precision, int(vector_width or 0), _norm_options(build_options),
            front_end or "opencl-c")


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
    front_end: str = "opencl-c"     # how the kernel entered the driver (target.FRONT_ENDS,
                                    # or a constants door: target.CONSTANTS_DOORS)

    @property
    def governed_by(self) -> str:
        """'C99 Annex F (is)', 'OpenCL C 3.0 (should)'; '-' for a device fault."""
        return f"{self.text} ({self.verb})" if self.text else "-"

    @property
    def target(self) -> tuple:
        return (self.device, self.function, self.precision, self.vector_width,
                self.build_options, self.front_end)

    @property
    def example(self) -> dict | None:
        """The current set's example where it has the issue, else the baseline's."""
        return self.current.example or self.baseline.example

    @property
    def fails_in_current(self) -> bool:
        return self.current.failures > 0


@dataclass
class UlpRow:
    """A target whose largest measured ULP error (stats ``max_ulp_error``) is larger in the
    current set: a regression where ``same_inputs``, else not comparable."""
    device: str
    function: str
    precision: str
    vector_width: int
    build_options: str
    front_end: str
    baseline_max: float
    current_max: float
    ulp_failures_baseline: int      # ulp.* failures of the target in each set
    ulp_failures_current: int
    #: the maxima are over the units both sets ran on the same inputs (equal seed and
    #: recipe: ``same_input_maxima``): only then is a larger maximum the driver's (else
    #: the whole sets' maxima: "different inputs, not comparable")
    same_inputs: bool = True
    #: each set's input of its largest error (raw bits per argument) and the fingerprint
    #: of the device that measured it: what ``triage_replay`` runs again
    baseline_worst: tuple | None = None
    current_worst: tuple | None = None
    #: what replaying the two worst inputs on an attached build showed ("" not replayed)
    replay: str = ""

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
    front_end: str
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
    ulp_regressions: list[UlpRow]          # larger on the same inputs
    coverage: list[CoverageRow]
    devices_baseline: dict[str, list[str]]     # device model -> driver versions
    devices_current: dict[str, list[str]]
    runs_baseline: list[str]
    runs_current: list[str]
    #: (function, precision) -> {"source": "findings"|"stats", "baseline": array,
    #: "current": array}: ULP errors for the histograms
    ulp_samples: dict = field(default_factory=dict)
    #: (function, precision) -> {"baseline": counts, "current": counts}: the screened ULP
    #: errors of every checked input, summed from the stats rows' ``ulp_histogram``
    #: (int64 (NBINS,) over the bins of oracle.histogram; zeros where a set has none)
    ulp_histograms: dict = field(default_factory=dict)
    #: (device, function) -> (failures in baseline, failures in current)
    failures_per_device_function: dict = field(default_factory=dict)
    #: baseline model name -> the current model name it was compared with
    paired: dict = field(default_factory=dict)
    #: the current set across implementations (``matrix``): the implementations (every
    #: one that ran a unit, with or without findings) and, per rule id failing or
    #: faulting on one of them, {implementation: (failing inputs, first signature)}
    implementations: list = field(default_factory=list)
    matrix: dict = field(default_factory=dict)
    #: larger maxima over different inputs (no unit in common): not regressions
    ulp_not_comparable: list = field(default_factory=list)

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
    #: the units' seeds: a unit's inputs follow from its target, seed and serial alone
    #: (work.make.unit_seed), so equal seeds mean the same inputs
    seeds: set = field(default_factory=set)
    #: ((input bits, device fingerprint), ...) of every unit whose error is the largest
    #: (stats ``max_ulp_inputs``), in reading order; () where none recorded its input
    worst: tuple = ()
    #: per unit's inputs -- (seed, recipe): the stats columns that rebuild them
    #: (work.unit.unit_from_row) -- the largest error measured on them and its input
    #: ((input bits, device fingerprint) or None): what two sets can compare on the same
    #: inputs where only some of their units are common (``same_input_maxima``)
    by_inputs: dict = field(default_factory=dict)


@dataclass
class ResultSet:
    """One results directory as triage and history read it: per target (TARGET_FIELDS)
    the runs that tested it, inputs and ULP maximum; per issue its failures, notes, runs
    and example rows; the devices and their driver versions; the run ids."""
    findings: pa.Table                       # with signatures' columns
    stats: pa.Table
    targets: dict                            # target -> _Target
    issues: dict                             # issue -> dict
    devices: dict                            # device -> set of driver versions
    runs: list


def read_set(path, which: str) -> tuple[pa.Table, pa.Table]:
    """(stats, findings) of a results directory, read once (``which``: its name in an
    error, e.g. "baseline").  Raises TriageError for a
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


def device_names(stats: pa.Table, findings: pa.Table) -> set[str]:
    """The device model names of a results directory's stats and findings."""
    return set(stats.column("device").to_pylist()) | \
        set(findings.column("device").to_pylist())


def load_set(stats: pa.Table, findings: pa.Table, rename: dict | None = None) -> ResultSet:
    """One result set from its ``read_set`` tables; ``rename``: device model names to
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
            "max_ulp_error", "inputs_by_class", "seed", "max_ulp_inputs", "device_fingerprint",
            "recipe"]
    for r in stats.select(cols).to_pylist():
        key = target_key(*(r[f] for f in TARGET_FIELDS))
        t = targets[key]
        t.units += 1
        t.seeds.add(r["seed"])
        n = r["inputs_tested"] or 0
        t.inputs += n
        if n > 0:
            t.runs.add(r["run_id"])
        m = r["max_ulp_error"]
        if m is not None and not math.isnan(m):
            at = ((tuple(int(b) for b in r["max_ulp_inputs"]), r["device_fingerprint"]),) \
                if r["max_ulp_inputs"] else ()
            if t.max_ulp is None or m > t.max_ulp:
                t.worst = at
            elif m == t.max_ulp:
                t.worst += at
            t.max_ulp = m if t.max_ulp is None else max(t.max_ulp, m)
            key = (r["seed"], r["recipe"])
            if key not in t.by_inputs or m > t.by_inputs[key][0]:
                t.by_inputs[key] = (m, at[0] if at else None)
        for k, v in r["inputs_by_class"] or ():
            t.classes[k] += v or 0
        devices[r["device"]].add(r["driver_version"] or "")
        runs.add(r["run_id"])
    issues = _issues(findings, targets, devices, runs)
    return ResultSet(findings, stats, dict(targets), issues, dict(devices), sorted(runs))


def _issues(findings: pa.Table, targets, devices, runs) -> dict:
    """Per issue: identity, counts, runs failing, max ULP, example rows, failure rows."""
    cols = {c: findings[c].to_pylist() for c in (
        "issue", "severity", "run_id", "ulp_error", "driver_version", *TARGET_FIELDS)}
    # times as integers (ms since the epoch): cheaper than datetime objects
    cols["time"] = findings["time"].cast(pa.int64()).to_pylist()
    from fuzzfarm.store.samples import counts
    cols["count"] = counts(findings).to_pylist()    # findings each row stands for
    out: dict = {}
    for k in range(findings.num_rows):
        iss = cols["issue"][k]
        d = out.get(iss)
        if d is None:
            key = target_key(*(cols[f][k] for f in TARGET_FIELDS))
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
            d["failures"] += cols["count"][k]
            d["runs"].add(run)
            d["rows"].append(k)
            if d["first_fail"] is None or order < d["first_fail"]:
                d["first_fail"] = order
        else:
            d["notes"] += cols["count"][k]
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


def class_combos(findings: pa.Table, rows: list[int], function: str,
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


def covers(other: ResultSet, target, combos) -> tuple[bool, str]:
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


def _side(s: ResultSet, iss: str) -> Side:
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


def _runs_side(s: ResultSet, target) -> int:
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
    raw_b = read_set(baseline_dir, "baseline")
    raw_c = read_set(current_dir, "current")
    pairs = _pairs(device_names(*raw_b), device_names(*raw_c), pairs)
    base = load_set(*raw_b, pairs)
    cur = load_set(*raw_c)
    issues = [_issue_row(base, cur, iss) for iss in sorted(set(base.issues) | set(cur.issues))]
    order = {s: k for k, s in enumerate(STATUSES)}
    issues.sort(key=lambda i: (order[i.status], i.device, i.function, i.precision,
                               i.vector_width, i.build_options, i.rule_class))
    coverage, regressions = _per_target(issues, base, cur)
    impls, matrix = implementation_matrix(cur.stats, cur.findings)
    return Triage(
        implementations=impls, matrix=matrix,
        baseline=str(baseline_dir), current=str(current_dir), issues=issues,
        ulp_regressions=[r for r in regressions if r.same_inputs],
        ulp_not_comparable=[r for r in regressions if not r.same_inputs], coverage=coverage,
        paired=dict(pairs or {}),
        devices_baseline={d: sorted(v) for d, v in sorted(base.devices.items())},
        devices_current={d: sorted(v) for d, v in sorted(cur.devices.items())},
        runs_baseline=base.runs, runs_current=cur.runs,
        ulp_samples=_ulp_samples(base, cur),
        ulp_histograms=_ulp_histograms(base, cur),
        failures_per_device_function=_per_device_function(issues))


def _pairs(names_b: set, names_c: set, pairs: dict | None) -> dict | None:
    """The device models paired across the sets: ``pairs`` as given (checked), or one
    baseline and one current model named differently, or None."""
    if pairs:
        for b, c in pairs.items():
            if b not in names_b or c not in names_c:
                raise TriageError(f"--pair {b}={c}: the baseline's devices are "
                                  f"{sorted(names_b)}, the current's {sorted(names_c)}")
        return pairs
    if len(names_b) == 1 and len(names_c) == 1 and names_b != names_c:
        return {next(iter(names_b)): next(iter(names_c))}
    return None


def _issue_row(base: ResultSet, cur: ResultSet, iss) -> IssueRow:
    """One issue of either set, with its status: note, flaky, still failing, new,
    fixed, or untested (where the other set did not test the inputs it fails on)."""
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
                   front_end=target[5], rule_class=ex["rule_class"], rule_id=ex["rule_id"],
                   severity=severity,
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
        combos = class_combos(has.findings, has.issues[iss]["rows"], target[1], target[2])
        ok, why = covers(other, target, combos)
        if ok:
            row.status = "new" if c.failures else "fixed"
        else:
            row.status, row.untested_in = "untested", other_name
            row.detail = f"{other_name} {why}"
    return row


def _per_target(issues: list, base: ResultSet, cur: ResultSet) -> tuple[list, list]:
    """(coverage rows, ULP-maximum regressions, largest ratio first) per target."""
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
        same = same_input_maxima(tb, tc)
        if same is not None:            # the units both ran: their maxima on those inputs
            (bm, bw), (cm, cw) = same
            if cm > bm:
                regressions.append(UlpRow(*key, baseline_max=bm, current_max=cm,
                                          ulp_failures_baseline=ulp_fails["baseline"][key],
                                          ulp_failures_current=ulp_fails["current"][key],
                                          same_inputs=True, baseline_worst=bw,
                                          current_worst=cw))
        elif tb.max_ulp is not None and tc.max_ulp is not None and tc.max_ulp > tb.max_ulp:
            regressions.append(UlpRow(*key, baseline_max=tb.max_ulp, current_max=tc.max_ulp,
                                      ulp_failures_baseline=ulp_fails["baseline"][key],
                                      ulp_failures_current=ulp_fails["current"][key],
                                      same_inputs=False,
                                      baseline_worst=tb.worst[0] if tb.worst else None,
                                      current_worst=tc.worst[0] if tc.worst else None))
    regressions.sort(key=lambda r: (-r.ratio, r.device, r.function))
    return coverage, regressions


def same_input_maxima(tb: "_Target", tc: "_Target"):
    """((baseline maximum, its input), (current maximum, its input)) over the units of a
    target both sets ran on the same inputs (equal seed and recipe: ``_Target.by_inputs``),
    or None where they share no such unit with a measured error.  Only these maxima say
    whether the driver's accuracy changed: another unit's inputs are other inputs."""
    common = tb.by_inputs.keys() & tc.by_inputs.keys()
    if not common:
        return None
    return tuple(max((t.by_inputs[k] for k in common), key=lambda v: v[0]) for t in (tb, tc))


def _per_device_function(issues: list) -> dict:
    """{(device, function): (baseline failures, current failures)}, zero pairs left out."""
    per_df: dict = {}
    for i in issues:
        k = (i.device, i.function)
        b0, c0 = per_df.get(k, (0, 0))
        per_df[k] = (b0 + i.baseline.failures, c0 + i.current.failures)
    return {k: v for k, v in per_df.items() if v != (0, 0)}


def _implementation(platform, device, driver) -> str:
    return f"{platform or '?'}: {device or '?'} ({driver or '?'})"


def implementation_matrix(stats: pa.Table, findings: pa.Table) -> tuple[list, dict]:
    """Rule x implementation of one result set.  Implementations: 'platform: device
    (driver)' of every stats row and finding (so one that found nothing is there too),
    sorted.  Returns (implementations, {rule id: {implementation: (failing inputs counted
    -- every one, not the stored examples: store.samples -- and the signature of its first
    finding)}}) over failures and device faults (``findings`` with signatures' columns)."""
    impls = set()
    for t in (stats, findings):
        if t.num_rows:
            cols = t.select(["platform", "device", "driver_version"]).to_pydict()
            impls |= {_implementation(*r) for r in zip(cols["platform"], cols["device"],
                                                       cols["driver_version"])}
    matrix: dict = {}
    if findings.num_rows:
        from fuzzfarm.store.samples import counts
        cols = findings.select(["platform", "device", "driver_version", "rule_id",
                                "severity", "signature"]).to_pydict()
        cols["count"] = counts(findings).to_pylist()     # a stored row stands for count inputs
        for p, d, v, rule, sev, sig, k in zip(*cols.values()):
            if sev not in FAILURE_SEVERITIES:
                continue
            cell = matrix.setdefault(rule, {})
            impl = _implementation(p, d, v)
            n, first = cell.get(impl, (0, sig))
            cell[impl] = (n + int(k), first)
    return sorted(impls), dict(sorted(matrix.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def _ulp_histograms(base: ResultSet, cur: ResultSet) -> dict:
    """(function, precision) -> {"baseline", "current"}: the stats rows' error
    histograms summed over units (int64 (NROWS, NBINS): oracle.histogram's input
    classes by error bins)."""
    from fuzzfarm.oracle.histogram import NBINS, NROWS, from_cells

    out: dict = {}
    for side, s in (("baseline", base), ("current", cur)):
        if "ulp_histogram" not in s.stats.column_names:
            continue
        for r in s.stats.select(["function", "precision", "ulp_histogram"]).to_pylist():
            if r["ulp_histogram"]:
                d = out.setdefault((r["function"], r["precision"]),
                                   {"baseline": np.zeros((NROWS, NBINS), np.int64),
                                    "current": np.zeros((NROWS, NBINS), np.int64)})
                d[side] += from_cells(r["ulp_histogram"])
    return dict(sorted(out.items(), key=lambda kv: tuple(map(str, kv[0]))))


def _ulp_samples(base: ResultSet, cur: ResultSet) -> dict:
    """(function, precision) -> the ULP errors of each set: the findings' ``ulp_error``
    where either set has some for it, else each unit's ``max_ulp_error``."""
    def from_findings(s: ResultSet) -> dict:
        f = s.findings
        fn, pr = f["function"].to_pylist(), f["precision"].to_pylist()
        ulp = f["ulp_error"].to_numpy(zero_copy_only=False)
        out = defaultdict(list)
        for k in np.flatnonzero(np.isfinite(ulp.astype(np.float64))):
            out[(fn[k], pr[k])].append(float(ulp[k]))
        return out

    def from_stats(s: ResultSet) -> dict:
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
