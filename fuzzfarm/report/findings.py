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

__all__ = ["SECTIONS", "summary_line", "print_signatures", "lines", "short_ids", "distinct_fit"]

SECTIONS = (
    ("fail", "Failures", "the governing text requires the result (shall, must, or a "
                         "statement such as 'returns' or '=')"),
    ("note", "Notes", "recommendations, permissions, implementation-defined results "
                      "(should, may): never failures"),
    ("fault", "Device faults", "a work unit crashed or hung the device"),
)


def summary_line(summary: list[dict]) -> str:
    """'N failing inputs in K signatures; M inputs with notes in J signatures; F device
    faults in L signatures' of ``signatures.summarize`` rows (as dicts): inputs counted
    (every failing input, not only the stored examples: store.samples)."""
    parts = []
    for sev, label in (("fail", "failing inputs"), ("note", "inputs with notes"),
                       ("fault", "device faults")):
        rows = [r for r in summary if r["severity"] == sev]
        parts.append(f"{sum(r['count'] for r in rows):,} {label} in {len(rows)} "
                     f"signature{'s' if len(rows) != 1 else ''}")
    return "; ".join(parts)



def print_signatures(console, summary: list[dict], limit: int, results: str) -> None:
    """Print ``summary`` (``signatures.summarize`` rows as dicts) on ``console`` (a
    rich Console): a table per kind of at most ``limit`` signatures (0: all; the title
    says how many more), ids never broken over lines, then the ``summary_line`` of all."""
    for sev, title, why in SECTIONS:
        every = [r for r in summary if r["severity"] == sev]
        rows = every if not limit else every[:limit]
        if not rows:
            continue
        more = (f" ({len(every) - len(rows)} more not listed: --limit 0 lists them all)"
                if len(rows) < len(every) else "")
        t = Table(title=escape(f"{title}: {len(every)} signature(s) — {why}{more}"),
                  show_lines=True)
        for col in ("signature", "device / driver", "target", "rule class", "governed by",
                    "failing inputs", "runs", "first / last seen", "max ULP", "example"):
            t.add_column(col, overflow="fold", no_wrap=col == "signature",
                         min_width=13 if col == "signature" else None,
                         justify="right" if col in ("failing inputs", "runs", "max ULP")
                         else "left")
        for r in rows:
            target = f"{r['function']} {r['precision']} w{r['vector_width']}" + (
                f" {r['build_options']}" if r["build_options"] else "") + (
                " [spirv]" if r.get("front_end") == "spirv" else "")
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


def short_ids(ids, least: int = 7) -> dict:
    """{signature id: its shortest prefix of at least ``least`` characters ("s" and 6 hex
    digits) that no other id of ``ids`` starts with}: what `fuzzfarm repro` takes."""
    ids = sorted(set(ids))
    out = {}
    for k, sid in enumerate(ids):
        n = least
        for other in (ids[k - 1] if k else "", ids[k + 1] if k + 1 < len(ids) else ""):
            common = next((i for i, (a, b) in enumerate(zip(sid, other)) if a != b),
                          min(len(sid), len(other)))
            n = max(n, common + 1)
        out[sid] = sid[:n]
    return out


def distinct_fit(names, width: int) -> tuple[int, dict]:
    """(w, {name: shown}) with every name cut in its middle to at most w characters (w >
    ``width`` only where cutting at ``width`` would make two different names look alike:
    the width grows until they differ, up to the longest name)."""
    names = sorted(set(names))
    longest = max(map(len, names), default=0)
    w = min(width, longest)
    while w < longest and len({_cut(n, w) for n in names}) < len(names):
        w += 1
    return w, {n: _cut(n, w) for n in names}


def _cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, its middle elided: rule classes and
    conversions differ at both ends (ulp.ldexp[x:pos_sub…,k:int_neg])."""
    if len(text) <= width:
        return text
    tail = (width - 1) // 2
    return text[:width - 1 - tail] + "…" + (text[-tail:] if tail else "")


def lines(summary: list[dict], limit: int, results: str, width: int = 80) -> list[str]:
    """The report as plain lines of at most ``width`` characters: per kind (failures,
    notes, device faults) a heading -- with how many signatures are left out, if any,
    and how to list them -- then one line per signature (at most ``limit`` a kind; 0:
    every one): its id's shortest unique prefix (`fuzzfarm repro` takes it), the failing
    inputs counted, rule class, target and an example; rule classes and targets are cut
    only as far as they stay distinct; then ``summary_line``."""
    ids = short_ids(r["signature"] for r in summary)
    id_w = max(map(len, ids.values()), default=7)
    out = []
    for sev, title, why in SECTIONS:
        every = [r for r in summary if r["severity"] == sev]
        rows = every if not limit else every[:limit]
        if not rows:
            continue
        left = len(every) - len(rows)
        out.append(_fit(f"{title}: {len(every)} signature(s) — {why}", width))
        if left:
            out.append(_fit(f"  ({left} more not listed: --limit 0 lists them all)", width))
        rule_w, rule = distinct_fit((r["rule_class"] or r["rule_id"] for r in rows), 26)
        what = {id(r): f"{r['function']}/{_PREC.get(r['precision'], r['precision'])}" + (
            f"x{r['vector_width']}" if r["vector_width"] and r["vector_width"] > 1 else "") + (
            "/spirv" if r.get("front_end") == "spirv" else "")
            for r in rows}
        what_w, short = distinct_fit(what.values(), 16)
        out.append(_fit(f"{'id':<{id_w}} {'inputs':>6} {'rule class':<{rule_w}} "
                        f"{'target':<{what_w}} example (of the inputs counted)", width))
        for r in rows:
            head = (f"{ids[r['signature']]:<{id_w}} {_count(r['count']):>6} "
                    f"{rule[r['rule_class'] or r['rule_id']]:<{rule_w}} "
                    f"{short[what[id(r)]]:<{what_w}} ")
            out.append(_fit(head + _example(r, width - len(head)), width))
    last = f"{results}: " + summary_line(summary)
    if len(last) <= width:
        out.append(last)
    else:                       # one count a line
        out.append(_fit(f"{results}:", width))
        out += [_fit("  " + part, width) for part in summary_line(summary).split("; ")]
    return out
