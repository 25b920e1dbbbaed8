"""The triage report (``fuzzfarm triage``): a ``fuzzfarm.report.triage.Triage`` written as
Markdown (``report.md``), self-contained HTML with ULP histograms (``report.html``) and
JUnit XML for CI (``junit.xml``), all from the jinja2 templates in ``templates/``, and a
short rich summary for the terminal (``print_summary``).  ``run`` compares and writes all
three."""
from __future__ import annotations

import base64
import io
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fuzzfarm.report.render import render
from fuzzfarm.report.triage import (
    MAX_BARS, MAX_HISTOGRAMS, IssueRow, Side, Triage, compare,
)
from fuzzfarm.store import dataset as store

__all__ = ["Section", "write_markdown", "write_html", "write_junit", "trust_line", "run",
           "print_summary"]


# --------------------------------------------------------------------------- rendering
@dataclass
class Section:
    """One section of a Markdown (templates/sections.md.j2) or HTML report: a heading of
    ``level``, an optional paragraph, a table (or ``empty`` where it has no rows)."""
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
                  "front end", "rule class", "governed by", "severity", "failing inputs baseline",
                  "failing inputs current",
                  "runs failing/tested baseline", "runs failing/tested current",
                  "max ULP baseline", "max ULP current", "example", "detail"]


def _issue_cells(i: IssueRow) -> list[str]:
    def runs(s: Side) -> str:
        return f"{s.runs_failing}/{s.runs_tested}"
    return [i.issue, i.device, i.function, i.precision, str(i.vector_width),
            _opts(i.build_options), i.front_end, i.rule_class, i.governed_by, i.severity,
            str(i.baseline.failures),
            str(i.current.failures), runs(i.baseline), runs(i.current),
            _fmt_ulp(i.baseline.max_ulp), _fmt_ulp(i.current.max_ulp), _example(i), i.detail]


def _target_cells(r) -> list[str]:
    return [r.device, r.function, r.precision, str(r.vector_width), _opts(r.build_options),
            r.front_end]


_TARGET_COLUMNS = ["device", "function", "precision", "width", "build options", "front end"]


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


def _sections(t: Triage) -> list[Section]:
    c = t.counts
    summary = Section(
        "Summary", ["", "count"],
        [["new failures", str(c["new"])], ["fixed", str(c["fixed"])],
         ["still failing", str(c["still failing"])], ["flaky", str(c["flaky"])],
         ["untested (no comparison)", str(c["untested"])], ["notes (informational)",
                                                             str(c["note"])],
         ["ULP maximum regressions (same inputs)", str(len(t.ulp_regressions))],
         ["ULP maximum higher on different inputs (not comparable)",
          str(len(t.ulp_not_comparable))],
         ["targets tested only in the baseline", str(len(t.only_baseline))],
         ["targets tested only in the current set", str(len(t.only_current))]],
        text=(f"Baseline: `{t.baseline}` ({len(t.runs_baseline)} runs); current: "
              f"`{t.current}` ({len(t.runs_current)} runs). " + trust_line(t) + ". "
              + _device_text(t)
              + f" Exit status: {t.exit_code}."))
    return [summary, *_issue_sections(t), *_coverage_sections(t)]


#: The sections of issues by status: (title, what the status means).
_BLURBS = {
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


def _issue_sections(t: Triage) -> list[Section]:
    """The sections of issues (by status, across implementations, notes)."""
    secs = []
    for status, (title, text) in _BLURBS.items():
        rows = [i for i in t.issues if i.status == status]
        secs.append(Section(f"{title} ({len(rows)})", _ISSUE_COLUMNS,
                             [_issue_cells(i) for i in rows], css=status.replace(" ", "-"),
                             text=text))
    if t.implementations:
        secs.append(Section(
            f"Across implementations ({len(t.matrix)} rules x {len(t.implementations)} "
            f"implementations)", ["rule", *t.implementations],
            [[rule, *(f"{cells[i][0]:,} ({cells[i][1]})" if i in cells else "-"
                      for i in t.implementations)] for rule, cells in t.matrix.items()],
            text=f"The current set: failing inputs per rule and implementation (failures "
                 f"and device faults; '-': none), with the signature of each cell's first "
                 f"finding. Reproduce a cell with `fuzzfarm repro SIGNATURE {t.current} "
                 f"--out DIR`. Every implementation that ran a unit has a column."))
    notes = t.notes
    secs.append(Section(
        f"Notes ({len(notes)})",
        ["issue", *_TARGET_COLUMNS, "rule class", "governed by", "inputs with notes baseline",
         "inputs with notes current", "example"],
        [[i.issue, *_target_cells(i), i.rule_class, i.governed_by, str(i.baseline.notes),
          str(i.current.notes), _example(i)] for i in notes], css="note",
        text="Informational: what the governing text recommends or permits (should, may, "
             "implementation-defined), or where the texts are ambiguous; never failures."))
    return secs


def _coverage_sections(t: Triage) -> list[Section]:
    """The sections of ULP maxima and coverage."""
    secs = [Section(
        f"ULP maximum regressions ({len(t.ulp_regressions)})",
        [*_TARGET_COLUMNS, "max ULP baseline", "max ULP current", "ratio",
         "ulp.* failures baseline", "ulp.* failures current", "how known"],
        [[*_target_cells(r), _fmt_ulp(r.baseline_max), _fmt_ulp(r.current_max),
          f"{r.ratio:.3g}", str(r.ulp_failures_baseline), str(r.ulp_failures_current),
          r.replay or "the same inputs (the units both sets ran)"]
         for r in t.ulp_regressions], css="regression",
        text="Targets whose largest measured ULP error (per-unit `max_ulp_error`) is larger "
             "in the current set on the same inputs -- the maxima over the units both sets "
             "ran (equal seed and recipe), or a replay showed it: the driver's doing; the "
             "bound is not in the stats, so the ulp.* failure counts say whether it was "
             "exceeded."),
        Section(
        f"ULP maximum higher on different inputs, not comparable "
        f"({len(t.ulp_not_comparable)})",
        [*_TARGET_COLUMNS, "max ULP baseline", "max ULP current", "ratio", "replayed"],
        [[*_target_cells(r), _fmt_ulp(r.baseline_max), _fmt_ulp(r.current_max),
          f"{r.ratio:.3g}", r.replay or "no build of either set attached here"]
         for r in t.ulp_not_comparable],
        text="The two sets share no unit of these targets (their units' seeds or recipes "
             "differ: two runs with random seeds or budgets): a larger maximum here may be "
             "the sampling, not the driver. Where a build of either set is attached, each "
             "set's worst input was run again on it (a target found worse on the same input "
             "is listed as a regression above). Run one fixed-seed campaign on both builds "
             "(`fuzzfarm history`) to compare them all.")]
    cov_cols = [*_TARGET_COLUMNS, "inputs", "units", "runs"]
    secs.append(Section(
        f"Tested only in the baseline ({len(t.only_baseline)})", cov_cols,
        [[*_target_cells(r), f"{r.inputs_baseline:,}", str(r.units_baseline),
          str(r.runs_baseline)] for r in t.only_baseline], css="untested",
        text="Coverage differences: nothing about these targets is claimed fixed."))
    secs.append(Section(
        f"Tested only in the current set ({len(t.only_current)})", cov_cols,
        [[*_target_cells(r), f"{r.inputs_current:,}", str(r.units_current),
          str(r.runs_current)] for r in t.only_current], css="untested"))
    secs.append(Section(
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
    """Write the report as Markdown to ``path`` (fuzzfarm/report/templates/sections.md.j2)
    atomically;
    returns the path."""
    return store.write_text(Path(path), render("sections.md.j2", heading="fuzzfarm triage",
                                               sections=_sections(t)))


#: The report's style sheet: fuzzfarm/report/templates/triage.css.


def png_base64(fig) -> str:
    """A matplotlib figure as base64 PNG text (80 dpi), for an inline <img>."""
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
             if len(np.unique(np.concatenate([kv[1]["baseline"], kv[1]["current"]])))
             >= MIN_DISTINCT]
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
        _label(ax, f"{fn} {prec}: {what}", "ULP error", "count")
        out.append((f"ULP errors of {fn} {prec}", png_base64(fig)))
    return out


#: A histogram of fewer distinct ULP errors (2-4 bars) tells nothing a table does not.
MIN_DISTINCT = 5


def _label(ax, title: str, xlabel: str, ylabel: str, legend: int = 7) -> None:
    """The report's plot style: small title, labels, ticks, and the legend below the
    axes (never over the data)."""
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=legend, loc="upper center", bbox_to_anchor=(0.5, -0.3),
              frameon=False)


def _error_histograms(t: Triage) -> list[tuple[str, str]]:
    """(alt text, base64 PNG) per (function, precision) with screened-error histograms
    (Triage.ulp_histograms), at most MAX_HISTOGRAMS: the share of checked inputs per
    log-spaced ULP bin, baseline and current, with the median and 99th percentile, and
    the current set's subnormal, near-zero and near-pole inputs (oracle.histogram's
    classes) dashed where it has any; the alt text names those classes."""
    from matplotlib.figure import Figure

    from fuzzfarm.oracle.histogram import (NBANDS, NROWS, ROW_NAMES, bin_edges,
                                           percentile_bounds)
    e = bin_edges()
    edges = np.concatenate([[e[0] / 2], e, [e[-1] * 2]])     # bins 0 and the top drawn

    def stairs(ax, h, label, **kw):
        n = int(h.sum())
        if n:
            p50, p99 = percentile_bounds(h)
            ax.stairs(h / n, edges, label=f"{label} ({n:,}; p50 <= {p50:.3g}, "
                                          f"p99 <= {p99:.3g})", **kw)
        return n
    out = []
    shown = [kv for kv in t.ulp_histograms.items()
             if int(np.count_nonzero(kv[1]["baseline"].sum(axis=0)
                                     + kv[1]["current"].sum(axis=0))) >= MIN_DISTINCT]
    for (fn, prec), d in shown[:MAX_HISTOGRAMS]:
        fig = Figure(figsize=(4.4, 2.7))
        ax = fig.add_subplot()
        for side, color in (("baseline", "#1f77b4"), ("current", "#d62728")):
            stairs(ax, d[side].sum(axis=0), side, color=color)
        classes = [ROW_NAMES[r] for r in range(NBANDS, NROWS)
                   if stairs(ax, d["current"][r], f"current, {ROW_NAMES[r]}",
                             linestyle="--", linewidth=0.8)]
        ax.set_xscale("log")
        _label(ax, f"{fn} {prec}: ULP error of every screened input",
               "ULP error (leftmost bin: below 2^-12, exact included)", "share of inputs",
               legend=6)
        also = f" (and of its inputs {', '.join(classes)})" if classes else ""
        out.append((f"ULP error distribution of {fn} {prec}{also}", png_base64(fig)))
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
    return png_base64(fig)


def write_html(t: Triage, path) -> Path:
    """Write the report as ONE self-contained HTML file (inline CSS, plots as inline
    base64 PNG, no external URL, no script) to ``path`` (fuzzfarm/report/templates/
    triage.html.j2); returns the path."""
    c = t.counts
    plots = {"plots_error": "", "bars": None, "hists": [],
             "measured": sum(1 for d in t.ulp_samples.values()
                             if d["baseline"].size or d["current"].size)}
    try:
        plots.update(hists=_error_histograms(t) + _histograms(t), bars=_bars(t))
    except ImportError as exc:                    # matplotlib is a dependency; be kind
        plots["plots_error"] = str(exc)
    page = render("triage.html.j2", sections=_sections(t), disjoint=t.devices_disjoint,
                  min_values=MIN_DISTINCT,
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
    if i.front_end != "opencl-c":
        name += f" [{i.front_end}]"
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
                f"inputs with notes: baseline {i.baseline.notes}, current {i.current.notes}"
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


def run(baseline, current, out_dir="triage-report", pairs: dict | None = None,
        runner_for=None) -> Triage:
    """Compare ``baseline`` with ``current`` (``pairs``: see ``compare``), replay the worst
    inputs of ULP maxima over different inputs on an attached build
    (``triage_replay.replay``; ``runner_for``: its device lookup, default the attached
    devices) and write ``report.md``, ``report.html`` and ``junit.xml`` into ``out_dir``
    (created).  Returns the ``Triage``.  Raises TriageError / store.StoreError for bad
    input (nothing is written then)."""
    from fuzzfarm.report import triage_replay
    t = compare(baseline, current, pairs)
    if t.ulp_not_comparable:
        triage_replay.replay(t, runner_for or triage_replay.attached_runner)
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
            ("ULP max regressions (same inputs)", len(t.ulp_regressions), ""),
            ("ULP max higher, different inputs", len(t.ulp_not_comparable), "dim"),
            ("targets only in baseline", len(t.only_baseline), ""),
            ("targets only in current", len(t.only_current), "")):
        table.add_row(label, str(n), style=style or None)
    console.print(table)
    console.print(escape(trust_line(t)), highlight=False)
    for i in t.new[:10]:
        console.print("[red]new[/] " + escape(
            f"{i.issue} {i.device} {i.function} {i.precision} w{i.vector_width} "
            f"{i.front_end} {i.rule_class}: {_example(i, 160)}"), highlight=False)
    if len(t.new) > 10:
        console.print(f"... and {len(t.new) - 10} more new failures")
    if t.devices_disjoint:
        console.print("[yellow]the two sets have no device model in common: nothing was "
                      "compared[/]")
    if out_dir is not None:
        console.print(escape(f"report: {Path(out_dir) / 'report.md'}, "
                             f"{Path(out_dir) / 'report.html'}, {Path(out_dir) / 'junit.xml'}"),
                      highlight=False)
