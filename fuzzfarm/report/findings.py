"""``fuzzfarm findings``: the distinct problems (signatures) of a results directory as a
terminal report: failures apart from notes and device faults, one table each, and a last
line that counts each kind."""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table

__all__ = ["SECTIONS", "summary_line", "print_signatures"]

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
                f"{r['example_inputs']} -> {r['example_outputs']}\n"
                f"(expected {r['example_expected']})")))
        console.print(t)
    console.print(escape(f"{results}: " + summary_line(summary)), highlight=False)
