"""``fuzzfarm findings``: the distinct problems (signatures) of a results directory:
failures apart from notes and device faults, and a last line that counts each kind.

Two forms: ``lines`` (the default) gives one line per signature that fits the terminal's
width (``COLUMNS``; 80 where there is no terminal): count, rule id, function and precision,
the example's input and output as C99 ``%a`` with their bits where they fit; plain text,
no escape codes, for a terminal, a log or ``grep``.  ``print_signatures`` (``--wide``) gives
rich tables with every column: device, driver, governing text and verb, runs, first and
last seen, largest ULP error, expected result."""
from __future__ import annotations

import re

from rich.markup import escape
from rich.table import Table

from fuzzfarm.formats import modernize

__all__ = ["SECTIONS", "summary_line", "print_signatures", "lines"]

SECTIONS = (
    ("fail", "Failures", "the governing text requires the result (shall, must, or a "
                         "statement such as 'returns' or '=')"),
    ("note", "Notes", "recommendations, permissions, implementation-defined results "
                      "(should, may): never failures"),
    ("fault", "Device faults", "a work unit crashed or hung the device"),
)


def summary_line(summary: list[dict]) -> str:
    """'N failures in K signatures; M notes in J signatures; F device faults in L
    signatures' of ``signatures.summarize`` rows (as dicts)."""
    parts = []
    for sev, label in (("fail", "failures"), ("note", "notes"), ("fault", "device faults")):
        rows = [r for r in summary if r["severity"] == sev]
        parts.append(f"{sum(r['count'] for r in rows):,} {label} in {len(rows)} "
                     f"signature{'s' if len(rows) != 1 else ''}")
    return "; ".join(parts)



def print_signatures(console, summary: list[dict], limit: int, results: str) -> None:
    """Print ``summary`` (``signatures.summarize`` rows as dicts) on ``console`` (a
    rich Console): at most ``limit`` signatures (0: all), a table per kind, then the
    ``summary_line`` of all of them."""
    shown = summary if not limit else summary[:limit]
    for sev, title, why in SECTIONS:
        rows = [r for r in shown if r["severity"] == sev]
        if not rows:
            continue
        of = sum(r["severity"] == sev for r in summary)
        t = Table(title=escape(f"{title}: {len(rows)} signature(s)"
                               + (f" of {of}" if len(rows) < of else "") + f" — {why}"),
                  show_lines=True)
        for col in ("signature", "device / driver", "target", "rule class", "governed by",
                    "count", "runs", "first / last seen", "max ULP", "example"):
            t.add_column(col, overflow="fold",
                         justify="right" if col in ("count", "runs", "max ULP") else "left")
        for r in rows:
            target = f"{r['function']} {r['precision']} w{r['vector_width']}" + (
                f" {r['build_options']}" if r["build_options"] else "")
            ulp = "-" if r["max_ulp_error"] is None else f"{r['max_ulp_error']:.3g}"
            governed = f"{r['text']}\n({r['verb']})" if r["text"] else "-"
            t.add_row(*map(escape, (
                r["signature"], f"{r['device']}\n{r['driver_version']}", target,
                r["rule_class"], governed, f"{r['count']:,}", str(r["runs"]),
                f"{r['first_seen']:%Y-%m-%d %H:%M}\n{r['last_seen']:%Y-%m-%d %H:%M}", ulp,
                f"{modernize(r['example_inputs'])} -> {modernize(r['example_outputs'])}\n"
                f"(expected {r['example_expected']})")))
        console.print(t)
    console.print(escape(f"{results}: " + summary_line(summary)), highlight=False)


_PREC = {"binary16": "f16", "binary32": "f32", "binary64": "f64"}
_BITS = re.compile(r" \((0x[0-9a-f]+)\)")
def _count(n: int) -> str:
    """A count in at most 6 characters: 1,234; 16.8k; 881M; 4.3G."""
    if n < 10_000:
        return f"{n:,}"
    for unit, div in (("k", 1e3), ("M", 1e6), ("G", 1e9)):
        if n < div * 1000 or unit == "G":
            v = n / div
            return f"{v:.1f}{unit}" if v < 100 else f"{v:.0f}{unit}"
    return str(n)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def _example(r: dict, room: int) -> str:
    """'x=0x1p+0 (0x3f800000) -> ret=-0x0p+0 (0x80000000)'; where ``room`` is too small,
    the output's bits go, then the input's, then the end of the text."""
    ins, outs = modernize(r["example_inputs"]), modernize(r["example_outputs"])
    for text in (f"{ins} -> {outs}",                         # everything
                 f"{ins} -> {_BITS.sub('', outs)}",           # the input's bits only
                 f"{_BITS.sub('', ins)} -> {_BITS.sub('', outs)}"):
        if len(text) <= room:
            return text
    return _fit(text, room)


def lines(summary: list[dict], limit: int, results: str, width: int = 80) -> list[str]:
    """The report as plain lines of at most ``width`` characters: per kind (failures,
    notes, device faults) a heading, then one line per signature (at most ``limit`` in
    all; 0: every one), then ``summary_line``."""
    shown = summary if not limit else summary[:limit]
    out = []
    for sev, title, why in SECTIONS:
        rows = [r for r in shown if r["severity"] == sev]
        if not rows:
            continue
        of = sum(r["severity"] == sev for r in summary)
        out.append(_fit(f"{title}: {len(rows)}" + (f" of {of}" if len(rows) < of else "")
                        + f" signature(s) — {why}", width))
        rule_w = min(28, max(len(r["rule_class"] or r["rule_id"]) for r in rows))
        for r in rows:
            what = f"{r['function']}/{_PREC.get(r['precision'], r['precision'])}" + (
                f"x{r['vector_width']}" if r["vector_width"] and r["vector_width"] > 1 else "")
            head = (f"{_count(r['count']):>6} {_fit(r['rule_class'] or r['rule_id'], rule_w):<{rule_w}}"
                    f" {_fit(what, 16)} ")
            out.append(head + _example(r, width - len(head)))
    last = f"{results}: " + summary_line(summary)
    if len(last) <= width:
        out.append(last)
    else:                       # one count a line
        out.append(_fit(f"{results}:", width))
        out += [_fit("  " + part, width) for part in summary_line(summary).split("; ")]
    return out
