"""A driver's history across an ordered list of builds (``fuzzfarm history``).

``history(builds)`` reads the results directory of every build (``Build``: one driver
release, in the order the user gives, oldest first) and returns a ``History``: for every
issue (``fuzzfarm.store.signatures``' issue id: a target and a rule class, the driver
version left out, so that one bug meets itself across releases) its state in each build,
and for every target its ULP maximum in each build.  ``write_markdown`` and
``write_json`` render it.  Builds made here from results directories already made
(``--results LABEL=DIR``); a build that could not be run is a ``Build`` with a status
and no results, and its column says why.

Definitions (what the report's words mean)
------------------------------------------

* **State** of an issue in a build: ``fail`` (a failure or fault of the issue in the
  build's results), ``pass`` (the build tested the issue's target with inputs of the
  classes a failing build failed on -- triage's *covers* -- and did not fail), ``untested``
  (the build did not run, or did not test the target on those classes: a build without
  cl_khr_fp16 tests no binary16 and says nothing about a binary16 issue), ``note`` (only
  notes of the issue).
* **Introduced in**: the first build that fails after a tested build that passed; where
  the first tested build already fails, "failing since" that build.  **Fixed in**: the
  first build that passes after the last failing one.  Untested builds are skipped, never
  read as a pass.
* **Status** over the builds: ``still failing`` (the last tested build fails), ``fixed``
  (it passes, after failures), ``intermittent`` (failing, passing and failing again: more
  than one change into fail), ``notes only``.
* **ULP maximum** of a target per build: the largest error its runs measured.  Builds
  that ran one fixed-seed campaign checked the same inputs, so a change is the driver's;
  ``same_inputs`` says whether, for every target two builds both tested, their units
  recorded the same seeds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

from fuzzfarm.errors import BadInput
from fuzzfarm.report import triage
from fuzzfarm.report.triage_report import Section
from fuzzfarm.store import dataset as store

__all__ = ["HistoryError", "Build", "IssueHistory", "History", "history", "write_markdown",
           "write_json", "write_html", "build_times", "write", "summary", "STATES", "MAX_PLOTTED"]

#: The states of an issue in one build.
STATES = ("fail", "pass", "untested", "note")


class HistoryError(BadInput):
    """A bad list of builds: no builds, a repeated label, a results directory that does
    not exist or holds no fuzzfarm results."""


@dataclass(frozen=True)
class Build:
    """One driver build of a history: ``label`` (its version, as the user names it),
    ``results`` (its results directory, or None where it did not run), ``status`` ("ran",
    or why it did not: "install failed", "no device", "campaign refused", "campaign
    failed", "hung") with ``detail`` (the error line), ``source`` (how it was obtained:
    "pip intel-opencl-rt==2024.0.0 ...", "driver PATH", "results DIR"), and for a build
    this run made: ``install_s`` (seconds pip took; 0.0 when ``reused`` from the cache)
    and ``run_s`` (seconds of its campaign)."""
    label: str
    results: Path | None = None
    status: str = "ran"
    detail: str = ""
    source: str = ""
    install_s: float | None = None
    reused: bool | None = None
    run_s: float | None = None

    @property
    def ran(self) -> bool:
        return self.status == "ran" and self.results is not None


@dataclass
class IssueHistory:
    """One issue across the builds: its target and rule class, ``states`` (one of STATES
    per build, in build order), ``failures`` (counted failing inputs per build, 0 where
    none), and the derived ``introduced``, ``fixed`` (build labels or None), ``since_first``
    (failing in the first tested build) and ``status``."""
    issue: str
    device: str
    function: str
    precision: str
    vector_width: int
    build_options: str
    rule_class: str
    states: tuple
    failures: tuple
    introduced: str | None = None
    since_first: bool = False
    fixed: str | None = None
    status: str = ""
    front_end: str = "opencl-c"


@dataclass
class History:
    """The result of ``history``: the builds in order, every issue's history (failing
    in some build, or noted), every target's ULP maximum per build (None: untested or no
    error measured), the driver strings each build's devices reported, whether the
    builds checked the same inputs, and the maxima of the worst inputs replayed."""
    builds: list
    issues: list
    ulp_max: dict                            # target tuple -> [float | None per build]
    drivers: dict                            # label -> sorted driver versions
    same_inputs: bool
    #: target -> [float | None per build]: the ULP maximum of each target whose maximum
    #: changed, over every build's worst inputs replayed on each build (``replayed``)
    replayed: dict = field(default_factory=dict)
    #: the replay's run of each build (a Build per build, in order; [] when none ran)
    replay_builds: list = field(default_factory=list)
    #: {label: device model as that build named it}, where builds of one device model
    #: named differently are read as one, under the newest build's name (``_one_model``)
    renamed: dict = field(default_factory=dict)
    #: target -> [the input-bit tuples of its largest error, per build] (triage's
    #: _Target.worst; () where the build did not measure it)
    worst: dict = field(default_factory=dict)

    def with_status(self, status: str) -> list:
        return [i for i in self.issues if i.status == status]


def _derive(states, labels) -> tuple:
    """(introduced, since_first, fixed, status) of one issue's states over the builds."""
    tested = [(lab, s) for lab, s in zip(labels, states) if s in ("fail", "pass")]
    since_first = bool(tested) and tested[0][1] == "fail"
    introduced, fixed, into_fail, prev = None, None, 0, None
    for lab, s in tested:
        if s == "fail" and prev != "fail":
            into_fail += 1
            if prev == "pass":
                introduced = lab
        if s == "pass" and prev == "fail":
            fixed = lab
        prev = s
    if into_fail == 0:
        return None, False, None, "notes only"
    if into_fail > 1:
        status = "intermittent"
    else:
        status = "still failing" if tested[-1][1] == "fail" else "fixed"
    if tested[-1][1] == "fail":                  # failing in the last tested build
        fixed = None
    if since_first:
        introduced = tested[0][0]
    return introduced, since_first, fixed, status


def history(builds: list[Build]) -> History:
    """The history of every issue over ``builds`` (oldest first).  Pure except for
    reading each build's results.  Raises HistoryError for no builds, a repeated label or
    a results directory without fuzzfarm results; store.StoreError for a corrupt one."""
    if not builds:
        raise HistoryError("history: no builds given")
    labels = [b.label for b in builds]
    if len(set(labels)) != len(labels):
        twice = sorted({x for x in labels if labels.count(x) > 1})
        raise HistoryError(f"history: build label {twice[0]!r} given twice")
    raw = []
    for b in builds:
        try:
            raw.append(triage.read_set(b.results, f"results {b.label}") if b.ran else None)
        except triage.TriageError as e:
            raise HistoryError(str(e)) from None
    renamed, newest = _one_model(builds, raw)
    sets = [triage.load_set(*r, {renamed[b.label]: newest} if b.label in renamed else None)
            if r else None for b, r in zip(builds, raw)]
    issues = sorted({iss for s in sets if s for iss in s.issues})
    rows = [_issue_history(iss, sets, labels) for iss in issues]
    order = {"still failing": 0, "intermittent": 1, "fixed": 2, "notes only": 3}
    rows.sort(key=lambda r: (order[r.status], r.device, r.function, r.precision,
                             r.vector_width, r.build_options, r.front_end, r.rule_class))
    targets = sorted({t for s in sets if s for t in s.targets}, key=str)
    ulp = {t: [_ulp(s, t) for s in sets] for t in targets}
    ulp = {t: v for t, v in ulp.items() if any(x is not None for x in v)}
    worst = {t: [tuple(bits for bits, _ in s.targets[t].worst) if s and t in s.targets
                 else () for s in sets] for t in ulp}
    ran = [s for s in sets if s]            # triage's _Target.seeds: equal seeds, same inputs
    same = bool(ran) and all(a.targets[t].seeds == b.targets[t].seeds for a in ran
                             for b in ran for t in a.targets.keys() & b.targets.keys())
    drivers = {b.label: sorted({v for vs in s.devices.values() for v in vs}) if s else []
               for b, s in zip(builds, sets)}
    return History(builds=list(builds), issues=rows, ulp_max=ulp, drivers=drivers,
                   same_inputs=same, renamed=renamed, worst=worst)


def _one_model(builds, raw) -> tuple[dict, str]:
    """({label: the device model the build named}, the newest build's model name) where
    every build that ran tested one device model and they name it differently (a driver
    release that renamed the CPU, e.g. PoCL 3.0's "pthread-<cpu>" and 3.1's
    "pthread-skylake-avx512-<cpu>"): those builds are read as one device, under the newest
    build's name; ({}, "") otherwise."""
    names = {b.label: triage.device_names(*r) for b, r in zip(builds, raw) if r}
    if not names or any(len(n) != 1 for n in names.values()):
        return {}, ""
    one = {lab: next(iter(n)) for lab, n in names.items()}
    if len(set(one.values())) < 2:
        return {}, ""
    newest = list(one.values())[-1]
    return {lab: m for lab, m in one.items() if m != newest}, newest


def changed_targets(h: History) -> list:
    """The targets whose ULP maximum differs between the builds that measured one."""
    return [t for t, vs in h.ulp_max.items() if _differ(vs)]


def _differ(vs) -> bool:
    return len({round(v, 6) for v in vs if v is not None and not math.isnan(v)}) > 1


def confirmed(h: History, target) -> bool | None:
    """Whether ``target``'s changed maximum (``changed_targets``) changed on the same
    inputs: every build's worst inputs replayed on each (``History.replayed``, each
    maximum exact within two margins of its screen) give different maxima -- the driver's
    change; False where they give one maximum (the campaign's maxima differed by which
    input its screen ranked first, not by the driver); None where not replayed."""
    if target not in h.replayed:
        return None
    return _differ(h.replayed[target])


def shown_changes(h: History) -> list:
    """The changed targets (``changed_targets``) the reports show: those whose change the
    same-input replay confirmed or that were not replayed (``confirmed`` not False)."""
    return [t for t in changed_targets(h) if confirmed(h, t) is not False]


def _through(front_end: str) -> str:
    """' [spirv]' after a target's name where its kernel was a SPIR-V module, else ''."""
    return "" if front_end == "opencl-c" else f" [{front_end}]"


def worst_inputs(h: History) -> dict:
    """{(function, precision, vector width, build options, front end): sorted input-bit
    tuples} of the targets whose maximum changed (``changed_targets``; vector width 1):
    every build's input of its largest error (``History.worst``: the stats' ``max_ulp_inputs``
    of its units at the build's maximum), to replay on every build."""
    out: dict = {}
    for t in changed_targets(h):
        if t[3] == 1:
            for inputs in h.worst.get(t, ()):
                out.setdefault(t[1:], set()).update(inputs)
    return {k: sorted(v) for k, v in out.items()}


def with_replayed(h: History, replay_builds: list) -> History:
    """``h`` with ``replayed``: the ULP maxima per build of the changed targets measured by
    ``replay_builds`` (the same builds, in order, each run on every build's worst inputs)."""
    r = history(replay_builds)
    changed = set(changed_targets(h))
    return replace(h, replayed={t: vs for t, vs in r.ulp_max.items() if t in changed},
                   replay_builds=list(replay_builds))


def _ulp(s, target):
    if s is None:
        return None
    t = s.targets.get(target)
    return None if t is None or not t.runs else t.max_ulp


def _issue_history(iss: str, sets: list, labels: list) -> IssueHistory:
    """One issue's row: its state in each build (triage's coverage decides pass)."""
    have = [(s, s.issues[iss]) for s in sets if s and iss in s.issues]
    target = have[0][1]["target"]
    failing = next(((s, d) for s, d in have if d["failures"]), None)
    combos = triage.class_combos(failing[0].findings, failing[1]["rows"], target[1],
                                 target[2]) if failing else None
    states, counts = [], []
    for s in sets:
        d = s.issues.get(iss) if s else None
        if d is not None and d["failures"]:
            states.append("fail")
            counts.append(int(d["failures"]))
            continue
        counts.append(0)
        if s is None or not triage.covers(s, target, combos)[0]:
            states.append("untested")
        else:
            states.append("note" if d is not None and not failing else "pass")
    example = have[0][1].get("example") or {}
    introduced, since_first, fixed, status = _derive(states, labels)
    return IssueHistory(issue=iss, device=target[0], function=target[1],
                        precision=target[2], vector_width=target[3],
                        build_options=target[4], front_end=target[5],
                        rule_class=str(example.get("rule_class") or ""),
                        states=tuple(states), failures=tuple(counts),
                        introduced=introduced, since_first=since_first, fixed=fixed,
                        status=status)


# ------------------------------------------------------------------------- reports
def to_json(h: History) -> dict:
    """``history.json``'s content: ``builds`` in order (label, results, status, detail,
    driver strings, source, install and campaign seconds); per issue its target, rule class, ``states`` and ``failures`` (lists
    in the builds' order), introduced/fixed/status and the failing builds' labels; per
    target ``by_build``, its ULP maximum per build (a list in the builds' order, null:
    untested or none measured), ``changed``, ``confirmed_on_same_inputs`` (``confirmed``;
    null: unchanged or not replayed), and ``replayed_by_build`` for a target whose maximum
    changed: the maxima over every build's worst inputs replayed on each (null: not
    replayed)."""
    labels = [b.label for b in h.builds]

    def clean(vs):
        return [None if v is None or math.isnan(v) else v for v in vs]
    return {
        "builds": [{"label": b.label, "results": str(b.results) if b.results else None,
                    "status": b.status, "detail": b.detail, "drivers": h.drivers[b.label],
                    "device_as_named": h.renamed.get(b.label),
                    "source": b.source, "install_seconds": b.install_s,
                    "install_reused": b.reused, "campaign_seconds": b.run_s}
                   for b in h.builds],
        "same_inputs": h.same_inputs,
        "issues": [{"issue": i.issue, "device": i.device, "function": i.function,
                    "precision": i.precision, "vector_width": i.vector_width,
                    "build_options": i.build_options, "front_end": i.front_end,
                    "rule_class": i.rule_class,
                    "status": i.status, "introduced_in": i.introduced,
                    "failing_since_first": i.since_first, "fixed_in": i.fixed,
                    "states": list(i.states), "failures": list(i.failures),
                    "failing_builds": [lab for lab, s in zip(labels, i.states)
                                       if s == "fail"]}
                   for i in h.issues],
        "ulp_max": [{"id": target_accuracy_id(t), "device": t[0], "function": t[1],
                     "precision": t[2],
                     "vector_width": t[3], "build_options": t[4], "front_end": t[5],
                     "by_build": clean(vs), "changed": _differ(vs),
                     "confirmed_on_same_inputs": confirmed(h, t) if _differ(vs) else None,
                     "replayed_by_build": clean(h.replayed[t]) if t in h.replayed else None}
                    for t, vs in h.ulp_max.items()],
    }


def target_accuracy_id(target: tuple) -> str:
    """The accuracy id (store.signatures.accuracy_id) of a ``History.ulp_max`` target
    (device, function, precision, vector width, build options, front end): what
    ``--bisect`` takes, with ``--max-ulp-above``, for that target's ULP maximum."""
    from fuzzfarm.store.signatures import accuracy_id
    return accuracy_id(dict(zip(triage.TARGET_FIELDS, target)))


def write_json(h: History, path) -> Path:
    """Write ``history.json`` (``to_json``) atomically; returns its path."""
    return store.write_json(Path(path), to_json(h))


_MARK = {"fail": "FAIL", "pass": "pass", "untested": "--", "note": "note"}


def build_times(b: Build) -> str:
    """"12.3 s, 180.0 s" (install, campaign); "cached" for a reused install; "-" unknown."""
    inst = ("cached" if b.reused else "-" if b.install_s is None else f"{b.install_s:.1f} s")
    return f"{inst}, {'-' if b.run_s is None else f'{b.run_s:.1f} s'}"


def ulp_cells(vs) -> list[str]:
    """ULP maxima as table cells: 4 significant digits, or as many (up to 10) as tell
    apart the values that differ (0.5 and 0.5000006 are not both "0.5"); "--" for none."""
    have = {v for v in vs if v is not None and not math.isnan(v)}
    for digits in (4, 7, 10):
        if len({f"{v:.{digits}g}" for v in have}) == len(have):
            break
    return ["--" if v is None or math.isnan(v) else f"{v:.{digits}g}" for v in vs]


def _sections(h: History) -> list:
    """The report's sections: the builds, still failing, intermittent, fixed (each issue
    with introduced/fixed and its state per build), the ULP maxima that changed."""
    labels = [b.label for b in h.builds]
    builds = [(b.label, f"{b.status}: {b.detail}" if b.detail else b.status,
               ", ".join(h.drivers[b.label]) or "-", b.source or "-", build_times(b))
              for b in h.builds]
    inputs = ("every build's units have the same seeds (one fixed-seed campaign)"
              if h.same_inputs else
              "the builds' units recorded different seeds: their ULP maxima are over "
              "different inputs, not comparable")
    if h.renamed:
        inputs += ("; one device model, named differently by "
                   + ", ".join(f"{lab} ({m!r})" for lab, m in h.renamed.items())
                   + ", read as one under the newest build's name")
    out = [Section("Builds", ["build", "status", "drivers", "source", "install, campaign"],
                   builds, text=f"Inputs: {inputs}.",
                   empty="none")]
    for status in ("still failing", "intermittent", "fixed"):
        rows = []
        for i in h.with_status(status):
            intro = (f"at or before {i.introduced}" if i.since_first else i.introduced) or "-"
            cells = [f"{_MARK[s]} {n:,}" if s == "fail" else _MARK[s]
                     for s, n in zip(i.states, i.failures)]
            rows.append((f"{i.function} {i.precision} w{i.vector_width}{_through(i.front_end)}"
                         f" {i.rule_class} ({i.device})", intro, i.fixed or "-", *cells))
        out.append(Section(f"{status.capitalize()} ({len(rows)})",
                           ["issue", "introduced in", "fixed in", *labels], rows, empty="none"))
    def row(t, vs):
        return (f"{t[1]} {t[2]} w{t[3]}{_through(t[5])} ({t[0]})", *ulp_cells(vs))
    changed = changed_targets(h)
    shown = [(target_accuracy_id(t), *row(t, h.ulp_max[t])) for t in shown_changes(h)]
    out.append(Section(
        f"ULP maximum per target, where it changed ({len(shown)})",
        ["id", "target", *labels], shown, empty="none",
        text="Where every build's worst inputs were replayed on each, only the maxima "
             "that changed on those same inputs. An id bisects its target's maximum: "
             "`--bisect ID --max-ulp-above X`."
        + "".join(f" Not confirmed on the same inputs, not shown: {row(t, ())[0]}."
                  for t in changed if confirmed(h, t) is False)))
    if h.replayed:
        out.append(Section(
            "ULP maximum on the same inputs: every build's worst inputs replayed on each",
            ["target", *labels], [row(t, vs) for t, vs in h.replayed.items()],
            text="A target differs here only where one build's result on one input is "
                 "worse than another's: a change of the driver, not of the sampling."
                 + "".join(f" Not replayed on {b.label}: {b.status}"
                           f"{': ' + b.detail if b.detail else ''}."
                           for b in h.replay_builds if not b.ran)))
    return out


def markdown(h: History) -> str:
    """The Markdown report (templates/sections.md.j2 over ``_sections``)."""
    from fuzzfarm.report.render import render
    return render("sections.md.j2", heading="fuzzfarm history", sections=_sections(h))


def write_markdown(h: History, path) -> Path:
    """Write the Markdown report (``markdown``) atomically; returns its path."""
    return store.write_text(Path(path), markdown(h))


#: Targets drawn in the ULP plot: those whose maximum changed most across builds.
MAX_PLOTTED = 12


def _by_change(h: History) -> list:
    """(target, maxima) of the targets whose ULP maximum changed (``shown_changes``), the
    largest change (log2 of the ratio) first; the replayed maxima (same inputs) where
    there are."""
    out = []
    for t in shown_changes(h):
        vs = h.replayed.get(t, h.ulp_max[t])
        have = [v for v in vs if v is not None and not math.isnan(v)] or [0.0]
        out.append((math.log2((max(have) + 2.0 ** -20) / (min(have) + 2.0 ** -20)), t, vs))
    out.sort(key=lambda x: -x[0])
    return [(t, vs) for _, t, vs in out]


def _plot(h: History) -> str | None:
    """The base64 PNG of the ULP maxima of the MAX_PLOTTED most changed targets per build
    (a log axis; symmetric-log where a maximum is 0, so it stays visible), legend beside
    the axes; None when none changed."""
    changed = _by_change(h)[:MAX_PLOTTED]
    if not changed:
        return None
    import matplotlib

    from fuzzfarm.report.triage_report import png_base64
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [b.label for b in h.builds]
    fig, ax = plt.subplots(figsize=(max(8.0, 1.1 * len(labels) + 4), 4.8))
    lowest = math.inf
    for t, vs in changed:
        xs = [k for k, v in enumerate(vs) if v is not None and not math.isnan(v)]
        ax.plot(xs, [vs[k] for k in xs], marker="o",
                label=f"{t[1]} {t[2]} w{t[3]}{_through(t[5])}")
        lowest = min([lowest, *(vs[k] for k in xs)])
    if lowest > 0:                      # every maximum above 0: a log axis
        ax.set_yscale("log")
        ax.set_ylabel("ULP maximum (log)")
    else:                               # a 0 among them: symmetric log keeps it visible
        ax.set_yscale("symlog", linthresh=0.5)
        ax.set_ylabel("ULP maximum (symlog)")
    ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
    ax.set_title("ULP maximum per build (targets that changed)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    png = png_base64(fig)
    plt.close(fig)
    return png


def write_html(h: History, path) -> Path:
    """Write ``history.html`` for ``h`` atomically to ``path``; returns the path."""
    labels = [b.label for b in h.builds]
    timelines = {s: h.with_status(s) for s in ("still failing", "intermittent", "fixed")}
    from fuzzfarm.report.render import render
    page = render("history.html.j2", labels=labels, builds=h.builds, drivers=h.drivers,
                  times={b.label: build_times(b) for b in h.builds}, timelines=timelines,
                  plot=_plot(h), plotted=min(MAX_PLOTTED, len(shown_changes(h))),
                  changed=len(shown_changes(h)), replayed=bool(h.replayed),
                  sections=[x for x in _sections(h) if x.title.startswith("ULP maximum")],
                  same_inputs=h.same_inputs, notes=len(h.with_status("notes only")))
    return store.write_text(Path(path), page)


def write(h: History, out) -> list[Path]:
    """Write the report into the folder ``out``: history.md, history.html, history.json
    (each atomically); returns their paths."""
    out = Path(out)
    return [write_markdown(h, out / "history.md"), write_html(h, out / "history.html"),
            write_json(h, out / "history.json")]


def summary(h: History) -> str:
    """One line: builds, issues, still failing / intermittent / fixed."""
    counts = ", ".join(f"{len(h.with_status(s))} {s}"
                       for s in ("still failing", "intermittent", "fixed"))
    ran = sum(b.ran for b in h.builds)
    return f"{len(h.builds)} builds ({ran} ran), {len(h.issues)} issues: {counts}"
