"""How a long run reports while it runs: rich live tables on a terminal, one concise line
per event for cron, CI and log files (issue 18, item 6).

``resolve(fmt, stream)`` picks the form: ``"rich"`` when the output is a terminal (live
table or bar, ETA), else ``"text"``; ``--log-format text|json`` forces one, ``--quiet``
keeps only warnings and the end.  A ``LineLog`` writes the line forms:

* text: ``2026-11-25T12:20:01Z progress units=34 inputs=1234567 failures=12 notes=3
  faults=0 rate=4.5M/s elapsed=12s`` (``key=value``, no escape codes, one line each);
* json: the same as one JSON object per line (``{"time": ..., "event": "progress", ...}``).

Messages written for a terminal with rich markup (``[yellow]...[/]``) lose the markup.
"""
from __future__ import annotations

import json
import re
import sys
import time
from datetime import datetime, timezone

__all__ = ["FORMATS", "resolve", "LineLog", "sweep_with_progress", "sweep_end", "strip_markup"]

#: The --log-format choices.
FORMATS = ("auto", "rich", "text", "json")

#: rich's style tags as fuzzfarm writes them ([yellow]...[/], [bold red]...[/bold red]);
#: a bracketed fingerprint such as [042d3307469e] is text, not markup.
_STYLES = "bold|dim|italic|underline|red|green|yellow|blue|magenta|cyan|white"
_MARKUP = re.compile(rf"\[/?(?:(?:{_STYLES})(?: (?:{_STYLES}))*)?\]")


def strip_markup(text: str) -> str:
    """``text`` without rich's style tags."""
    return _MARKUP.sub("", str(text))


def resolve(fmt: str, stream=None) -> str:
    """'rich', 'text' or 'json' for a --log-format value: ``auto`` is rich on a terminal
    (``stream``, default stdout), text elsewhere.  Raises ValueError for an unknown
    format."""
    if fmt not in FORMATS:
        raise ValueError(f"log format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt != "auto":
        return fmt
    stream = stream or sys.stdout
    try:
        return "rich" if stream.isatty() else "text"
    except (AttributeError, ValueError):
        return "text"


def _now() -> str:
    """UTC now as 2026-11-25T12:20:01Z."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _value(v) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.0f}"
    return str(v).replace(" ", "_") if not isinstance(v, str) or " " not in v else repr(v)


class LineLog:
    """One line per event on ``stream`` (default stderr), ``fmt`` 'text' or 'json';
    messages (warnings such as a device fault, written for a terminal) go to ``messages``
    (default stderr), in the same line form.  ``quiet``: progress events are dropped;
    messages and the end are kept.  ``every``: the least seconds between two progress
    lines."""

    def __init__(self, fmt: str = "text", stream=None, quiet: bool = False,
                 every: float = 5.0, messages=None):
        if fmt not in ("text", "json"):
            raise ValueError(f"fmt={fmt!r}; a LineLog writes 'text' or 'json'")
        self.fmt, self.stream, self.quiet, self.every = fmt, stream, quiet, every
        self.messages = messages
        self._last = float("-inf")      # the first progress event is written

    def _out(self):
        return self.stream or sys.stderr

    def event(self, kind: str, **fields) -> None:
        """Write one ``kind`` event with ``fields`` (numbers, strings)."""
        now = _now()
        if self.fmt == "json":
            line = json.dumps({"time": now, "event": kind, **fields}, default=str)
        else:
            line = " ".join([now, kind] + [f"{k}={_value(v)}" for k, v in fields.items()])
        print(line, file=self._out(), flush=True)

    def progress(self, force: bool = False, **fields) -> None:
        """A progress event, at most one per ``every`` seconds (``force``: now)."""
        if self.quiet:
            return
        if not force and time.monotonic() - self._last < self.every:
            return
        self._last = time.monotonic()
        self.event("progress", **fields)

    def message(self, text: str = "") -> None:
        """A message written for a terminal, markup removed, on ``messages``; blank ones
        are dropped."""
        text = strip_markup(text).strip()
        if not text:
            return
        now = _now()
        line = (json.dumps({"time": now, "event": "message", "text": text})
                if self.fmt == "json" else f"{now} {text}")
        print(line, file=self.messages or sys.stderr, flush=True)

    # the part of a rich Console the driver uses
    def print(self, *parts, **_) -> None:
        self.message(" ".join(str(p) for p in parts if isinstance(p, str)))


def sweep_with_progress(sw, space, info, out, chunk_bits, build_options, limit, workers,
                        function, lock, log=None, screen: str = "auto",
                        front_end: str = "opencl-c", resident=None) -> dict:
    """``fuzzfarm sweep`` while it holds the results directory's ``lock``: a rich bar with
    rate, failures and ETA on a terminal, or with ``log`` (a LineLog) one line per event.
    ``sw`` is fuzzfarm.orchestrate.sweep; ``resident``: the server it runs in (its
    checking processes: ``workers`` None takes theirs).  Returns the sweep's metadata."""
    import time
    from pathlib import Path

    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    workers = workers or (resident.pool.workers if resident else None)
    opts = sw.SweepOptions(space, info, Path(out), 1 << chunk_bits, build_options=build_options,
                           limit=limit, screen=screen, front_end=front_end, resident=resident,
                           **({"workers": workers} if workers else {}))
    _, _, todo = sw.resume_state(opts)
    console = log or Console(stderr=True)
    if lock.removed:
        console.print(f"removed {lock.removed} unfinished temporary file(s) a stopped "
                      f"writer left in {out}")
    if log is not None:                 # one line per event: no bar
        log.event("sweep", function=function, precision=space.fmt.name,
                  inputs=space.size, device=info.label,
                  chunks_left=len({r.start // opts.chunk for _, r in todo}),
                  workers=opts.workers)
        t0, base, fails = time.perf_counter(), [], [0]

        def line_progress(done, total, report):
            if not base:
                base.append(done - report.inputs)
            fails[0] += report.failures
            el = max(time.perf_counter() - t0, 1e-9)
            rate = (done - base[0]) / el
            log.progress(done=done, total=total, failures=fails[0],
                         rate_per_s=round(rate), elapsed_s=round(el),
                         eta_s=round((total - done) / rate) if rate else "-",
                         force=done >= total)
        return sw.sweep(opts, line_progress, locked=True)
    chunks = len({r.start // opts.chunk for _, r in todo})
    if chunks < -(-space.size // opts.chunk):
        console.print(f"resuming: {chunks} chunks left")
    console.print(f"[bold]sweep[/] {function} {space.fmt.name}: 2^{space.bits} inputs on "
                  f"{info.label}, chunks of 2^{chunk_bits}, {opts.workers} checking processes")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[rate]}"), TextColumn("failures {task.fields[fails]}"),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=console) as bar:
        task = bar.add_task("inputs", total=space.size, rate="", fails=0)
        t0 = time.perf_counter()
        base: list = []         # inputs already done when this invocation started

        def progress(done, total, report):
            if not base:
                base.append(done - report.inputs)
            rate = (done - base[0]) / max(time.perf_counter() - t0, 1e-9)
            fails = bar.tasks[0].fields["fails"] + report.failures
            bar.update(task, completed=done, rate=f"{rate / 1e6:,.1f} M/s", fails=fails)
        meta = sw.sweep(opts, progress, locked=True)
    return meta


def sweep_end(meta: dict, space, out, log=None) -> None:
    """The end of ``fuzzfarm sweep``: with ``log`` (a LineLog) an ``end`` event (and a
    ``device_fault`` one per fault: the sweep's, the device screen's), else totals,
    failures by rule and the faults on the terminal.  ``meta``: the sweep's metadata;
    ``space``: its Space; ``out``: results."""
    faults = [f for f in (meta.get("device_fault"), meta.get("screen_fault")) if f]
    if log is not None:
        log.event("end", run_id=meta["run_id"], status=meta["status"],
                  inputs=meta["inputs"], failures=meta["failures"], notes=meta["notes"],
                  max_ulp=meta.get("max_ulp_error"), seconds=round(meta["wall_seconds_last"], 1),
                  failures_by_rule=",".join(f"{k}:{v}" for k, v in
                                            sorted(meta["failures_by_rule"].items())) or "-")
        for fault in faults:
            log.event("device_fault", rule_id=fault["rule_id"], unit=fault["unit_id"],
                      error=fault["error"])
        return
    from rich.console import Console
    report = Console()
    m = meta.get("max_ulp_error")
    where = f" at {', '.join(meta['max_ulp_inputs'])}" if meta.get("max_ulp_inputs") else ""
    report.print(f"sweep {meta['run_id']}: {meta['status']}; {meta['inputs']:,} of "
                 f"{space.size:,} inputs checked ({meta['screened']:,} screened, "
                 f"{meta['exact']:,} exact, {meta['unjudged']:,} unjudged); "
                 f"max ULP error {'-' if m is None else f'{m:.6g}'}{where}; "
                 f"{meta['failures']:,} failures, {meta['notes']:,} notes; "
                 f"{meta['wall_seconds_last']:.1f} s")
    for rule, k in sorted(meta["failures_by_rule"].items(), key=lambda kv: -kv[1]):
        report.print(f"  {rule}: {k:,}")
    for fault in faults:
        report.print(f"device fault {fault['rule_id']} in {fault['unit_id']}: "
                     f"{fault['error']} (recorded in {out}; `fuzzfarm findings {out} "
                     f"--severity fault`)", markup=False, highlight=False)
