"""Campaigns: what ``fuzzfarm run --campaign FILE`` runs, as a TOML file (schema version 1).

A campaign names the devices, the budget, how work units are sized and one or more jobs,
each a set of targets (built-in or conversion x precision x vector width) fuzzed from one
source of inputs.  ``cluster/campaigns/example.toml`` shows every key with a comment;
``cluster/campaigns/nightly.toml`` is a realistic night.  The whole schema::

    name = "nightly"              # optional; default: the file's stem.  [A-Za-z0-9_.-]+
    seed = 12345                  # optional int >= 0; default random (printed and stored)
    out = "results"               # optional results directory; --out overrides it
    devices = ["pocl", "nvidia"]  # optional device selectors, each as --device ('all',
                                  # indices '0,2', 'P:D', a fingerprint prefix, a name);
                                  # default ["all"]; matched against the cluster's devices
                                  # when the campaign starts, not here

    [budget]                      # the whole campaign; both optional
    time = "8h"                   # wall time: 90s, 5m, 2h, 1h30m, 1d, or seconds
    inputs = 10_000_000_000       # stop issuing units once this many inputs are issued

    [unit]                        # one work unit; all optional
    inputs = 65536                # fixed unit size (inputs), 1 .. 2**24; absent: adaptive
    seconds = 0.5                 # adaptive sizing: a unit takes about this long to check
    min_inputs = 1024             # adaptive bounds, 1 <= min_inputs <= max_inputs <= 2**24
    max_inputs = 8388608          #   (defaults 1024 and 2**23; at most 64 MiB of a
                                  #   unit's inputs and outputs: work.make.UNIT_MAX_BYTES)
    timeout = "5m"                # a unit on a device longer than this is a hang
    max_restarts = 8              # restarts of a device's actor before it is given up

    [[jobs]]                      # at least one
    name = "math-float"           # optional; default "job<N>"; unique; [A-Za-z0-9_.-]+
    source = "recipes"            # "recipes" (hypothesis-drawn recipes; the default),
                                  # "catalogue" (each target's special-value unit only) or
                                  # "sweep" (every input of the space, fuzzfarm.orchestrate.sweep)
                                  # or "drift" (each built-in's fixed sample of 2^20 inputs
                                  # even by binade, binary16 unary whole: fuzzfarm.work.drift)
    functions = ["sinpi", "math"] # REQUIRED: built-ins, groups, conversions as --functions
    precisions = ["binary32"]     # default ["binary32"]; as --precisions
    widths = [1]                  # default [1]; as --widths
    front_ends = ["opencl-c"]     # default ["opencl-c"]; "spirv": kernels as SPIR-V
                                  # modules (devices whose CL_DEVICE_IL_VERSION names it)
    compare = "front_ends"        # optional: every input through both front ends, the
                                  # results compared bit for bit (no front_ends then);
                                  # "constants": a catalogue job's special values also
                                  # compiled as constants of its one front end
                                  # (literals, OpConstants: docs/constants.md)
    build_options = ["", "-cl-fast-relaxed-math"]  # default [""]: each set is a pass
    inputs = 10_000_000           # recipes only: inputs per (target, build options)
    units = 4                     # recipes: units per (target, build options), not with
                                  # inputs (neither: until the budget ends); sweep: only
                                  # the first `units` chunks of each space
    seed = 7                      # optional; default derived from the campaign seed and
                                  # the job number (stable)
    devices = ["nvidia"]          # optional: this job only on devices matching these
    chunk_bits = 22               # sweep only: 2**chunk_bits inputs per unit, 16 .. 26

Rules beyond the types: a sweep job's functions must each be sweepable in each of its
precisions (``sweep.space_for``: one float argument, or two in binary16), its widths
``[1]``, no ``inputs`` (``units``: its first chunks only); a catalogue job takes no
``inputs``/``units``; a drift job no ``inputs``/``units``, widths ``[1]`` and built-ins
only (``work.drift.drifts``); a front-ends compare job no ``front_ends`` and no
geometric built-in; a constants compare job one front end, ``source = "catalogue"``,
widths ``[1]`` and element-wise built-ins only; a job must resolve to at least one target
(``run.targets_for``); and without ``budget.time`` and ``budget.inputs`` every job must be
finite (catalogue, sweep, drift, or recipes with ``inputs`` or ``units``).

Everything is checked on load.  Every error is a ``CampaignError``: one line naming the
file, the line and the key (jobs counted from 1, as a person reads the file), e.g.::

    campaign.toml:12: jobs[1].precisions: unknown precision 'quad'; use binary16, binary32, binary64 (or half, float, double)

The line of a key is found by ``toml_lines.locate``, a small scanner of the text
(tomllib gives no positions): an array's element at its key's line, an absent key at its
table's line.
This module imports neither pyopencl nor Ray.
"""
from __future__ import annotations

import difflib
import hashlib
import os
import re
import sys
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Callable, NamedTuple

from fuzzfarm.errors import BadInput

if sys.version_info >= (3, 11):
    import tomllib
else:                                   # pragma: no cover - pyproject depends on tomli there
    import tomli as tomllib

from fuzzfarm.orchestrate import run
from fuzzfarm.orchestrate.toml_lines import line_of, locate
from fuzzfarm.target import Target, constants_door

__all__ = ["CampaignError", "Job", "Campaign", "load", "loads", "from_options",
           "of_run_options", "SCHEMA",
           "SOURCES", "VERSION"]

#: The schema version this module reads and ``Campaign.to_dict`` writes.
VERSION = 1
#: Where a job's inputs come from.
SOURCES = ("recipes", "catalogue", "sweep", "drift")
#: What a job may compare its results with (``Job.compare``).
COMPARES = ("front_ends", "constants")
#: Sizes of a work unit, in inputs: a fixed size is at most 2**24 inputs; adaptive sizes
#: at most 2**26 (the default largest: a unit kept on the device, work.make.UnitSizer;
#: units whose inputs or results come to the host stay within work.make.UNIT_MAX_BYTES).
MAX_FIXED_UNIT_INPUTS = 1 << 24
MAX_UNIT_INPUTS = 1 << 26
#: The range of a sweep job's ``chunk_bits``.
CHUNK_BITS = (16, 26)
#: Build options the checker knows how to read start with one of these (run.validate's).
BUILD_OPTION_PREFIXES = run.BUILD_OPTION_PREFIXES

_NAME = re.compile(r"[A-Za-z0-9_.-]+")


class CampaignError(BadInput):
    """A campaign that cannot run: one line ``path:line: key: message``.

    ``path``: the file name as given; ``line``: 1-based line of ``key`` in the file (None
    where unknown, e.g. a campaign built from options); ``key``: dotted key such as
    ``jobs[2].functions`` (jobs 1-based; None for an error of the file as a whole, e.g.
    TOML syntax); ``message``: the problem and the fix."""

    def __init__(self, path: str, line: int | None, key: str | None, message: str):
        self.path, self.line, self.key = str(path), line, key
        self.message = " ".join(str(message).split())       # one line, always
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {key}: {self.message}" if key else
                         f"{where}: {self.message}")


# --------------------------------------------------------------------------- the schema

class _Bad(Exception):
    """A value's problem, raised by a checker; turned into a CampaignError at its key."""


class _Key(NamedTuple):
    check: Callable[[Any], Any]     # TOML value -> normalized value; raises _Bad
    default: Any                    # value when absent (after no check); _REQUIRED; _COMPUTED


_REQUIRED = object()
_COMPUTED = object()                # derived from other values (file stem, seeds, job<N>)


def _kind(v) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return f"an integer ({v})"
    if isinstance(v, float):
        return f"a float ({v!r})"
    if isinstance(v, str):
        return f"a string ({v!r})"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    return f"a {type(v).__name__}"


def _integer(lo: int | None = None, hi: int | None = None):
    def check(v):
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Bad(f"must be an integer, not {_kind(v)}")
        if lo is not None and v < lo or hi is not None and v > hi:
            rng = (f"{lo} .. {hi}" if hi is not None else f">= {lo}") if lo is not None \
                else f"<= {hi}"
            raise _Bad(f"{v} is out of range; use {rng}")
        return v
    return check


def _positive_number(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _Bad(f"must be a number, not {_kind(v)}")
    if not v > 0 or v == float("inf"):
        raise _Bad(f"{v!r} must be a positive finite number")
    return float(v)


def _string(v):
    if not isinstance(v, str):
        raise _Bad(f"must be a string, not {_kind(v)}")
    if not v.strip():
        raise _Bad("must not be empty")
    return v


def _name(v):
    v = _string(v)
    if not _NAME.fullmatch(v):
        raise _Bad(f"{v!r} is not a name; use letters, digits, '_', '.' and '-'")
    return v


def _choice(noun, options):
    def check(v):
        v = _string(v)
        if v not in options:
            raise _Bad(f"unknown {noun} {v!r}; use {', '.join(options[:-1])} or {options[-1]}")
        return v
    return check


def _duration(v):
    """A duration in seconds: parse_budget's syntax ('90s', '5m', '1h30m', '1d') or a
    positive number of seconds."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return _positive_number(v)
    if not isinstance(v, str):
        raise _Bad(f"must be a duration such as \"5m\", not {_kind(v)}")
    try:
        return run.parse_budget(v)
    except run.UsageError as exc:
        if "positive" in str(exc):
            raise _Bad(f"{v!r} must be a positive duration") from None
        raise _Bad(f"{v!r} is not a duration; write e.g. 90s, 5m, 2h, 1h30m or 1d") from None


def _strings(v):
    """A non-empty array of non-empty strings."""
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise _Bad(f"must be a list of strings, not {_kind(v)}" if not isinstance(v, list)
                   else "must be a list of strings")
    if not v:
        raise _Bad("must not be empty")
    if not all(s.strip() for s in v):
        raise _Bad("must be a list of non-empty strings")
    return tuple(dict.fromkeys(s.strip() for s in v))


def _integers(v):
    if not isinstance(v, list) or not all(isinstance(i, int) and not isinstance(i, bool)
                                          for i in v):
        raise _Bad("must be a list of integers")
    if not v:
        raise _Bad("must not be empty")
    return tuple(dict.fromkeys(v))


def _selectors(v):
    try:
        return _strings(v)
    except _Bad as exc:
        if str(exc) == "must not be empty":
            raise _Bad("must not be empty; leave the key out for every device") from None
        raise


def _build_options(v):
    """Each string is one build-option set ('' = none), checked as run.validate checks
    --build-options; whitespace is normalized."""
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise _Bad("must be a list of strings ('' means no build options)")
    if not v:
        raise _Bad("must not be empty; use [\"\"] for no build options")
    for s in v:
        bad = [t for t in s.split() if not t.startswith(BUILD_OPTION_PREFIXES)]
        if bad:
            raise _Bad(f"{bad[0]!r} is not an OpenCL build option "
                       f"(e.g. -cl-fast-relaxed-math, -cl-denorms-are-zero)")
    return tuple(dict.fromkeys(" ".join(s.split()) for s in v))


def _table(v):
    if not isinstance(v, dict):
        raise _Bad(f"must be a table, not {_kind(v)}")
    return v


def _tables(v):
    if not isinstance(v, list) or not all(isinstance(t, dict) for t in v):
        raise _Bad("must be an array of tables: write each job as a [[jobs]] table")
    if not v:
        raise _Bad("needs at least one job ([[jobs]])")
    return v


#: Every key of every table: (checker, default).  "" is the top level; "jobs" each job.
SCHEMA: dict[str, dict[str, _Key]] = {
    "": {
        "name": _Key(_name, _COMPUTED),                 # the file's stem
        "seed": _Key(_integer(0), _COMPUTED),           # random
        "out": _Key(_string, None),
        "devices": _Key(_selectors, ("all",)),
        "budget": _Key(_table, {}),
        "unit": _Key(_table, {}),
        "jobs": _Key(_tables, _REQUIRED),
    },
    "budget": {
        "time": _Key(_duration, None),
        "inputs": _Key(_integer(1), None),
    },
    "unit": {
        "inputs": _Key(_integer(1, MAX_FIXED_UNIT_INPUTS), None),
        "seconds": _Key(_positive_number, 0.5),
        "min_inputs": _Key(_integer(1, MAX_FIXED_UNIT_INPUTS), 1024),
        "max_inputs": _Key(_integer(1, MAX_UNIT_INPUTS), MAX_UNIT_INPUTS),
        "timeout": _Key(_duration, 300.0),
        "max_restarts": _Key(_integer(0), 8),
    },
    "jobs": {
        "name": _Key(_name, _COMPUTED),                 # job<N>
        "source": _Key(_choice("source", SOURCES), "recipes"),
        "functions": _Key(_strings, _REQUIRED),
        "precisions": _Key(_strings, ("binary32",)),
        "widths": _Key(_integers, (1,)),
        "front_ends": _Key(_strings, ("opencl-c",)),
        "compare": _Key(_choice("comparison", COMPARES), None),
        "build_options": _Key(_build_options, ("",)),
        "inputs": _Key(_integer(1), None),
        "units": _Key(_integer(1), None),
        "seed": _Key(_integer(0), _COMPUTED),           # from the campaign seed
        "devices": _Key(_selectors, ()),
        "chunk_bits": _Key(_integer(*CHUNK_BITS), 22),
    },
}


#: What to write for a required key that is missing.
_HINTS = {"functions": 'built-ins, groups or conversions as --functions takes them, '
                       'e.g. ["sinpi", "math"]',
          "jobs": "add at least one [[jobs]] table"}


# --------------------------------------------------------------------------- the objects

@dataclass(frozen=True)
class Job:
    """One job of a campaign: ``targets`` fuzzed from ``source`` once per build-option set.

    ``targets``: ((built-in or conversion id, precision, vector width), ...) as
    run.targets_for; ``build_options``: one string per pass ('' = none); ``inputs`` /
    ``units``: recipes only, per (target, build options), None = until the budget ends;
    ``devices``: selectors narrowing the campaign's devices (() = all of them);
    ``chunk_bits``: log2 of the inputs per sweep unit; ``line``: line of its [[jobs]]
    header (0 when unknown); ``compare``: 'front_ends' (its SPIR-V targets' inputs run
    through OpenCL C too, compared bit for bit: verdict.front_ends), 'constants' (its
    targets' special values also compiled as constants of their one front end,
    docs/constants.md) or None."""

    number: int
    name: str
    source: str
    targets: tuple
    build_options: tuple
    inputs: int | None
    units: int | None
    seed: int
    devices: tuple
    chunk_bits: int
    line: int
    compare: str | None = None

    @property
    def against(self) -> str | None:
        """What the job's units are compared with (``WorkUnit.against``): OpenCL C for a
        front-ends comparison (its targets are SPIR-V's), its front end's constants door
        (target.constants_door; a constants job has one front end) for a constants
        comparison, else None."""
        if self.compare == "constants":
            return constants_door(Target.of(self.targets[0]).front_end)
        return "opencl-c" if self.compare == "front_ends" else None

    @property
    def finite(self) -> bool:
        """Whether the job ends by itself (catalogue, sweep, recipes with inputs/units)."""
        return self.source != "recipes" or self.inputs is not None or self.units is not None

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d.update(targets=[list(t) for t in self.targets],
                 build_options=list(self.build_options), devices=list(self.devices))
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Job":
        d = {f.name: d[f.name] for f in fields(cls) if f.name in d}   # older: no compare
        d.update(targets=tuple(tuple(t) for t in d["targets"]),
                 build_options=tuple(d["build_options"]), devices=tuple(d["devices"]))
        return cls(**d)


@dataclass(frozen=True)
class Campaign:
    """A validated campaign (see the module docstring for the meaning of each value).

    Durations are seconds (float); ``time_budget``/``input_budget`` None = unbounded;
    ``text`` is the TOML source ('' when built from options) and ``path`` the file name
    used in messages ('<options>' when built from options)."""

    name: str
    seed: int
    devices: tuple
    jobs: tuple
    time_budget: float | None
    input_budget: int | None
    unit_inputs: int | None
    unit_seconds: float
    unit_min_inputs: int
    unit_max_inputs: int
    unit_timeout: float
    max_restarts: int
    out: str | None
    text: str
    path: str

    @property
    def finite(self) -> bool:
        """Whether every job ends by itself (then no budget is needed)."""
        return all(j.finite for j in self.jobs)

    def line_of(self, key: str) -> int | None:
        """The 1-based line of dotted ``key`` ('devices', 'jobs[2].devices', 'unit.timeout')
        in ``text``; an absent key gives its table's line; None when nothing matches."""
        return line_of(locate(self.text), key) if self.text else None

    def error(self, key: str, message: str) -> CampaignError:
        """A CampaignError at ``key`` for checks made after loading (e.g. a device selector
        that matches no device of the cluster).  Returned, not raised."""
        return CampaignError(self.path, self.line_of(key), key, message)

    def to_dict(self) -> dict:
        """JSON-able (lists for tuples), with ``version`` and the ``text``."""
        d = {"version": VERSION}
        d.update({f.name: getattr(self, f.name) for f in fields(self)})
        d.update(devices=list(self.devices), jobs=[j.to_dict() for j in self.jobs])
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Campaign":
        """The inverse of to_dict.  Raises ValueError for another schema version."""
        if d.get("version", VERSION) != VERSION:
            raise ValueError(f"campaign schema version {d.get('version')!r}; this fuzzfarm "
                             f"reads version {VERSION}")
        d = {f.name: d[f.name] for f in fields(cls)}
        d.update(devices=tuple(d["devices"]),
                 jobs=tuple(Job.from_dict(j) for j in d["jobs"]))
        return cls(**d)


# --------------------------------------------------------------------------- loading

def load(path) -> Campaign:
    """Read and validate the campaign file ``path``.  Raises CampaignError (also for a
    missing or unreadable file, or one that is not UTF-8)."""
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CampaignError(name, None, None, f"cannot read the campaign file: "
                                              f"{exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise CampaignError(name, line, None, "not UTF-8 text (a TOML file is UTF-8)") from None
    return loads(text, name)


def loads(text: str, path: str = "<campaign>") -> Campaign:
    """Validate campaign TOML ``text``; ``path`` names it in messages and gives the default
    name (its stem).  Raises CampaignError at the first problem."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(exc, text, path) from None
    return _Loader(text, str(path)).campaign(doc)


def _syntax_error(exc, text: str, path: str) -> CampaignError:
    msg = str(exc)
    line = getattr(exc, "lineno", None)
    m = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", msg)
    if m:
        line = line or int(m.group(1))
        msg = f"{msg[:m.start()]} (column {m.group(2)})"
    elif msg.endswith("(at end of document)"):
        line = line or text.count("\n") + 1
        msg = msg[:-len("(at end of document)")].rstrip() + " at the end of the file"
    return CampaignError(path, line, None, f"not valid TOML: {msg}")


class _Loader:
    """Validates one parsed document, raising CampaignError at the key at fault."""

    def __init__(self, text: str, path: str):
        self.text, self.path = text, path
        self._locs = None

    def fail(self, key: str | None, message: str):
        if self._locs is None:
            self._locs = locate(self.text)
        raise CampaignError(self.path, line_of(self._locs, key) if key else None, key,
                            message)

    def table(self, doc: dict, schema: str, prefix: str) -> dict:
        """The values of table ``doc`` checked against SCHEMA[schema], defaults filled in
        (_COMPUTED left for the caller); ``prefix`` is its dotted key ('' at the top)."""
        known = SCHEMA[schema]
        key = (lambda k: f"{prefix}.{k}" if prefix else k)
        for k in doc:
            if k not in known:
                hint = difflib.get_close_matches(k, known, n=1)
                self.fail(key(k), f"unknown key {k!r}; known: {', '.join(known)}"
                                  + (f"; did you mean {hint[0]!r}?" if hint else ""))
        out = {}
        for k, spec in known.items():
            if k in doc:
                try:
                    out[k] = spec.check(doc[k])
                except _Bad as exc:
                    self.fail(key(k), str(exc))
            elif spec.default is _REQUIRED:
                self.fail(key(k), f"the required key {k!r} is missing"
                                  + (f": {_HINTS[k]}" if k in _HINTS else ""))
            else:
                out[k] = spec.default
        return out

    def campaign(self, doc: dict) -> Campaign:
        top = self.table(doc, "", "")
        budget = self.table(top["budget"], "budget", "budget")
        unit = self.table(top["unit"], "unit", "unit")
        if unit["min_inputs"] > unit["max_inputs"]:
            which = "unit.min_inputs" if "min_inputs" in top["unit"] else "unit.max_inputs"
            self.fail(which, f"min_inputs {unit['min_inputs']} > max_inputs "
                             f"{unit['max_inputs']}; need 1 <= min_inputs <= max_inputs "
                             f"<= {MAX_UNIT_INPUTS}")
        name = top["name"]
        if name is _COMPUTED:
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(self.path).stem).strip("_") \
                or "campaign"
        seed = top["seed"]
        if seed is _COMPUTED:
            seed = int.from_bytes(os.urandom(3), "big")
        jobs, names = [], {}
        for number, raw in enumerate(top["jobs"], 1):
            job = self.job(raw, number, seed)
            if job.name in names:
                self.fail(f"jobs[{number}].name", f"duplicate job name {job.name!r} "
                          f"(jobs[{names[job.name]}] has it); give each job its own name")
            names[job.name] = number
            jobs.append(job)
        camp = Campaign(
            name=name, seed=seed, devices=top["devices"], jobs=tuple(jobs),
            time_budget=budget["time"], input_budget=budget["inputs"],
            unit_inputs=unit["inputs"], unit_seconds=unit["seconds"],
            unit_min_inputs=unit["min_inputs"], unit_max_inputs=unit["max_inputs"],
            unit_timeout=unit["timeout"], max_restarts=unit["max_restarts"],
            out=top["out"], text=self.text, path=self.path)
        if camp.time_budget is None and camp.input_budget is None and not camp.finite:
            job = next(j for j in jobs if not j.finite)
            key = "budget" if "budget" in doc else f"jobs[{job.number}]"
            # the key is always "budget"; its line is the job's where there is no [budget]
            line = line_of(locate(self.text), key)
            raise CampaignError(self.path, line, "budget",
                                f"an unbounded recipes job needs budget.time or "
                                f"budget.inputs (jobs[{job.number}] {job.name!r} has neither "
                                f"inputs nor units)")
        return camp

    def job(self, raw: dict, number: int, campaign_seed: int) -> Job:
        key = f"jobs[{number}]"
        v = self.table(raw, "jobs", key)
        source = v["source"]

        def given(k):
            return k in raw

        names = self.resolve(f"{key}.functions", run._names, ",".join(v["functions"]))
        precisions = tuple(dict.fromkeys(
            self.resolve(f"{key}.precisions", run._precision, p) for p in v["precisions"]))
        widths = tuple(self.resolve(f"{key}.widths", run._width, str(w)) for w in v["widths"])
        front_ends = tuple(dict.fromkeys(self.resolve(f"{key}.front_ends", run._front_end, f)
                                         for f in v["front_ends"]))
        if v["compare"] == "front_ends":    # SPIR-V targets, each compared with OpenCL C
            if given("front_ends") or source == "sweep":
                self.fail(f"{key}.compare", "a job comparing front ends runs both: it takes "
                                            "no front_ends and is no sweep")
            front_ends = ("spirv",)
        elif v["compare"] == "constants":   # each input also as a constant, one front end
            if len(front_ends) != 1:
                self.fail(f"{key}.front_ends", "compare = \"constants\" compiles one front "
                                               "end's constants a job: front_ends must be "
                                               "[\"opencl-c\"] or [\"spirv\"]")
            if source != "catalogue":
                self.fail(f"{key}.source", "compare = \"constants\" compiles the catalogue's "
                                           "special values: source must be \"catalogue\"")
            if widths != (1,):
                self.fail(f"{key}.widths", "compare = \"constants\" compiles scalar calls: "
                                           "widths must be [1]")
        if source != "recipes":
            for k in ("inputs", "units"):
                if given(k) and not (source == "sweep" and k == "units"):
                    why = {"catalogue": "a catalogue job runs each target's special-value "
                                        "unit once", "sweep": "a sweep covers every input",
                           "drift": "a drift job's sample is fixed"}[source]
                    takers = "recipes jobs" if k == "inputs" else "recipes and sweep jobs"
                    self.fail(f"{key}.{k}", f"only {takers} take {k}: {why}")
        elif given("inputs") and given("units"):
            self.fail(f"{key}.units", "give inputs or units, not both")
        if source != "sweep" and given("chunk_bits"):
            self.fail(f"{key}.chunk_bits", "only sweep jobs take chunk_bits")
        if source in ("sweep", "drift") and widths != (1,):
            self.fail(f"{key}.widths", f"a {source} job covers scalar inputs: widths must be "
                                       f"[1]")
        if source == "sweep":
            from fuzzfarm.orchestrate.sweep import SweepError, space_for
            for n in names:
                for p in precisions:
                    try:
                        space_for(n, p)
                    except SweepError as exc:
                        self.fail(f"{key}.functions",
                                  "not sweepable: " + re.sub(r"^sweep:\s*", "", str(exc)))
        targets = tuple(run.targets_for(names, precisions, widths, front_ends))
        if not targets:
            self.fail(f"{key}.functions",
                      f"none of the functions exists in precisions {', '.join(precisions)} "
                      f"at widths {', '.join(map(str, widths))}")
        if source == "drift":
            from fuzzfarm.work.drift import drifts   # numpy and the kinds: only here
            if not all(map(drifts, targets)):
                self.fail(f"{key}.functions", "a drift job follows built-ins' ULP maxima: "
                                              "no conversion or geometric built-in")
        if v["compare"] == "front_ends" and any(t.kind == "geometric" for t in targets):
            self.fail(f"{key}.functions", "geometric built-ins are not compared across "
                                          "front ends (their results are not lane for lane)")
        if v["compare"] == "constants" and any(t.kind != "elementwise" for t in targets):
            self.fail(f"{key}.functions", "compare = \"constants\" compiles calls of "
                                          "element-wise built-ins: no conversion or "
                                          "geometric built-in")
        seed = v["seed"] if v["seed"] is not _COMPUTED else _job_seed(campaign_seed, number)
        return Job(number=number, name=f"job{number}" if v["name"] is _COMPUTED else v["name"],
                   source=source, targets=targets, build_options=v["build_options"],
                   inputs=v["inputs"], units=v["units"], seed=seed, devices=v["devices"],
                   chunk_bits=v["chunk_bits"], compare=v["compare"],
                   line=line_of(locate(self.text), key) or 0)

    def resolve(self, key: str, parse, arg):
        """``parse(arg, what=key)`` (a run.py parser) with its UsageError at ``key``."""
        try:
            return parse(arg, what=key)
        except run.UsageError as exc:
            msg = str(exc)
            self.fail(key, msg[len(key):].lstrip(": ") if msg.startswith(key) else msg)


def _job_seed(campaign_seed: int, number: int) -> int:
    """Job ``number``'s default seed: stable across processes and Python versions."""
    digest = hashlib.sha256(f"fuzzfarm.campaign:{campaign_seed}:{number}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1          # 0 .. 2**31 - 1


def from_options(functions: str | None, precisions: str, widths: str, build_options: str,
                 devices: str | None, budget_seconds: float, seed: int,
                 unit_seconds=0.5, min_unit_inputs=1024,
                 max_unit_inputs=MAX_UNIT_INPUTS, front_ends: str = "opencl-c") -> Campaign:
    """What ``fuzzfarm run`` without --campaign means: one recipes job (seed ``seed``) over
    the targets of --functions x --precisions x --widths with one build-option set, for
    ``budget_seconds`` on the devices ``[devices or "all"]``.  Raises run.UsageError naming
    the --option at fault (device selectors are checked later, against the devices)."""
    names = run._names(functions)
    precs = run._parse_list(precisions, "precisions", run._precision)
    wids = run._parse_list(widths, "widths", run._width)
    fes = run._parse_list(front_ends, "front-end", run._front_end)
    if not budget_seconds > 0:
        raise run.UsageError(f"--budget {budget_seconds!r} must be positive")
    if seed < 0:
        raise run.UsageError(f"--seed {seed} must be >= 0")
    try:
        opts = _build_options([build_options or ""])
    except _Bad as exc:
        raise run.UsageError(f"--build-options: {exc}") from None
    targets = tuple(run.targets_for(names, precs, wids, fes))
    if not targets:
        raise run.UsageError(f"--functions/--precisions/--widths: none of the functions "
                             f"exists in precisions {','.join(precs)} at widths "
                             f"{','.join(map(str, wids))}")
    job = Job(number=1, name="job1", source="recipes", targets=targets, build_options=opts,
              inputs=None, units=None, seed=seed, devices=(), chunk_bits=22, line=0)
    return Campaign(name="run", seed=seed, devices=(devices or "all",), jobs=(job,),
                    time_budget=float(budget_seconds), input_budget=None, unit_inputs=None,
                    unit_seconds=float(unit_seconds), unit_min_inputs=int(min_unit_inputs),
                    unit_max_inputs=int(max_unit_inputs), unit_timeout=300.0,
                    max_restarts=8, out=None, text="", path="<options>")


def of_run_options(opts):
    """The one-job campaign (``from_options``) that ``opts`` (fuzzfarm.orchestrate.run.RunOptions, a
    ``fuzzfarm run`` without --campaign) describe: its targets on the chosen devices for
    the budget.  On this machine the devices are named by platform and device index
    (``P:D``: two identical GPUs have one fingerprint, and ``--device 0`` must not run on
    both); on a cluster (``opts.address``) by fingerprint."""
    if opts.address:
        chosen = dict.fromkeys(d.fingerprint for d in opts.devices)
    else:
        chosen = dict.fromkeys(f"{d.platform_index}:{d.device_index}" for d in opts.devices)
    c = from_options(",".join(opts.functions), ",".join(opts.precisions),
                     ",".join(map(str, opts.widths)), opts.build_options,
                     ",".join(chosen) or None,
                     opts.budget, opts.seed, opts.unit_seconds or 0.5,
                     opts.min_unit_inputs, opts.max_unit_inputs, ",".join(opts.front_ends))
    if not opts.unit_seconds:       # fixed-size units
        c = replace(c, unit_inputs=opts.per_recipe * opts.recipes_per_unit)
    return c
