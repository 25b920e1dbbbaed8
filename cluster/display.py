"""A campaign's live display: a rich table on a terminal, one line per event for a
LineLog (cron, CI, ``> log``), plain progress lines on a bare image without rich.  What
``cluster.driver.CampaignRun`` shows while its devices work; nothing here changes the
campaign."""
from __future__ import annotations

import time

try:
    from rich.console import Console
    from rich.live import Live
    from rich.table import Table
except ImportError:             # a bare image (the GPU machine): plain progress lines
    Console = Live = Table = None

__all__ = ["Console", "Live", "PlainConsole", "PlainLive", "LineLive", "progress_fields",
           "progress_table"]


class PlainConsole:
    """What the driver needs of a rich Console, as plain lines on stderr."""

    def print(self, *parts, **_):
        import sys

        from fuzzfarm.orchestrate.progress import strip_markup
        text = " ".join(strip_markup(p) for p in parts)
        print(text, file=sys.stderr, flush=True)


class PlainLive:
    """What the driver needs of rich's Live: the progress line every 5 seconds."""

    def __init__(self, console=None, **_):
        self.console, self.last = console or PlainConsole(), 0.0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, renderable):
        if time.time() - self.last >= 5:
            self.last = time.time()
            self.console.print(renderable)


class LineLive:
    """The live display of a LineLog: a progress line every few seconds, and one at the
    end."""

    def __init__(self, console=None, **_):
        self.log, self.fields = console, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.fields is not None:
            self.log.progress(force=True, **self.fields)
        return False

    def update(self, fields: dict):
        self.fields = fields
        self.log.progress(**fields)


def progress_fields(snap: dict, run, started: float) -> dict:
    """The campaign's progress as plain fields (a LineLog line): elapsed seconds, units
    done, inputs checked, failures, notes, device faults, inputs per second, devices up."""
    elapsed = max(time.time() - started, 1e-9)
    devs = snap["devices"].values()
    inputs = sum(d["inputs"] for d in devs)
    fields = {"campaign": run.c.name, "elapsed_s": round(elapsed),
              "units": snap["done"], "inputs": inputs,
              "failures": sum(d["failures"] for d in devs),
              "notes": sum(d["notes"] for d in devs), "faults": snap["faults"],
              "rate_per_s": round(inputs / elapsed),
              "devices_up": sum(1 for k, d in snap["devices"].items()
                                if d["alive"] and k not in run.dead)}
    if run.c.time_budget is not None:
        fields["budget_s"] = round(max(0.0, run.c.time_budget - run.elapsed_before))
    if snap.get("first_failure_at") is not None:     # seconds from the budget's start
        fields["first_failure_s"] = round(snap["first_failure_at"] - run.t_begin, 1)
    return fields


def progress_table(snap: dict, run, started: float):
    elapsed = max(time.time() - started, 1e-9)
    budget = "" if run.c.time_budget is None else \
        f" of {max(0.0, run.c.time_budget - run.elapsed_before):.0f}s"
    first = "" if snap.get("first_failure_at") is None else \
        f", first failure at {snap['first_failure_at'] - run.t_begin:.0f}s"
    title = (f"campaign {run.c.name} — {elapsed:.0f}s{budget}; units done {snap['done']}, "
             f"retried {snap['retried']}, device faults {snap['faults']}{first}")
    rows = []
    for key, d in sorted(snap["devices"].items()):
        label = run.devices[key]["info"].label
        state = "lost" if key in run.dead else ("up" if d["alive"] else "down")
        rows.append((f"{label} [{key}]", state, str(d["units"]), f"{d['inputs']:,}",
                     f"{d['inputs'] / elapsed:,.0f}", str(d["failures"]), str(d["notes"]),
                     str(d["faults"])))
    cols = ("device", "state", "units", "inputs", "inputs/s", "failures", "notes", "faults")
    if Table is None:
        return title + ": " + "; ".join(f"{r[0]} {r[1]}: {r[2]} units, {r[3]} inputs, "
                                        f"{r[4]}/s, {r[5]} failures" for r in rows)
    t = Table(title=title, expand=False)
    for col in cols:
        t.add_column(col, justify="left" if col in ("device", "state") else "right")
    for r in rows:
        t.add_row(*r)
    return t
