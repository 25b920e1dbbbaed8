#!/usr/bin/env python3
"""Benchmark: `fuzzfarm run -f sin -p binary32 --budget N` on one device, through the Python
API (fuzzfarm.orchestrate.run.validate + execute, as the CLI does), and print its figures.

    python3 benchmarks/bench_run.py [--device SEL] [--budget 60s] [--out DIR] ...

Figures (no assertions):
  * checked inputs per second: inputs in the run's stats rows / wall time of the working
    phase (from the coordinator's start to the last unit written), and also over the
    whole process (start-up, kernel builds and shutdown included); per device; per host
    core;
  * where the time went: the device actor's own accounting (waiting for generated units,
    for the device, for a free check slot), the check tasks' seconds (checking alone and
    with rows and Parquet writing), device seconds, unit sizes, screened/exact counts;
  * peak resident memory of the driver (this process), and the largest and summed RSS of
    the Ray processes it started (sampled twice a second);
  * the machine (CPU model, cores, memory) and the device (name, platform, driver);
  * the device's busy fraction (its seconds over the working phase; devices of one
    fingerprint, two GPUs of one model and driver, are one entry, busy per device) and,
    for a run of several families (the whole catalogue: ``-f "" -p binary32,binary64``), inputs/s,
    checker rate and exact-path share by family and precision (``per_family``).

``--out DIR`` writes ``bench_run.json`` and ``bench_run.txt`` there (and, with
``--profile``, the device actor's cProfile as ``actor-<fingerprint>.prof/.txt``).  The
run's Parquet results go to ``--results`` (default: a temporary folder, removed
afterwards unless ``--keep-results``).

On a GPU machine (pyopencl and Ray installed there): ``python3
benchmarks/bench_run.py --device NVIDIA --budget 60s --out $OUT/r``; the whole catalogue
(issue 28's figure): ``python3 benchmarks/bench_run.py --device NVIDIA -f "" -p
binary32,binary64 --budget 120s --out $OUT/cat``.
"""
from __future__ import annotations

import time

T_PROCESS = time.time()          # before the heavy imports: "including start-up"

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
from collections import Counter  # noqa: E402
from datetime import datetime, timezone  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


# ------------------------------------------------------------------ machine and memory

def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _mem_total_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def _versions() -> dict:
    out = {"python": platform.python_version()}
    for mod in ("numpy", "pyopencl", "ray", "pyarrow", "hypothesis"):
        try:
            m = __import__(mod)
            v = getattr(m, "__version__", None) or getattr(m, "VERSION_TEXT", None)
            out[mod] = str(v)
        except Exception:       # noqa: BLE001  (a missing module is just not listed)
            pass
    return out


def _rss_kib(pid: int, shared: bool = False):
    """(VmRSS in KiB, command name) of a process, (0, '') when it is gone; with ``shared``
    also RssShmem (KiB: shared memory pages, e.g. Ray's object store, in that RSS)."""
    rss, name, shmem = 0, "", 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("RssShmem:"):
                shmem = int(line.split()[1])
            elif line.startswith("Name:"):
                name = line.split(None, 1)[1].strip()
    except (OSError, ValueError, IndexError):
        rss, name, shmem = 0, "", 0
    return (rss, name, shmem) if shared else (rss, name)


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _cpu_seconds(pid: int) -> tuple[float, str]:
    """(user + system CPU seconds, process title) of a process; (0.0, '') when it is gone.
    The title is the first word of its command line (Ray names its workers by role:
    ``ray::DeviceActor.work``, ``ray::Coordinator``, ``ray::check_and_write``,
    ``ray::IDLE``; its services by program: ``raylet``, ``gcs_server``)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except (OSError, ValueError, IndexError):
        return 0.0, ""
    ticks = os.sysconf("SC_CLK_TCK")
    title = cmd.split()[0] if cmd.strip() else ""
    return (int(fields[11]) + int(fields[12])) / ticks, os.path.basename(title)


class MemorySampler(threading.Thread):
    """Samples the RSS of this process and of every process it started (Ray's GCS,
    raylet, workers) twice a second; keeps the peaks.  Also the CPU seconds of each
    process, summed by title (``cpu_by_title``), and the busiest single process's share
    of one core over its life (``busiest``): a process near 100% of one core while the
    others wait is a shared bottleneck."""

    def __init__(self, period: float = 0.5):
        super().__init__(daemon=True)
        self.period = period
        self.stop_event = threading.Event()
        self.peak_total_kib = 0
        self.peak_child_kib = 0
        self.peak_child_name = ""
        self.peak_child_shmem_kib = 0       # of the largest's peak: shared pages
        self.samples = 0
        self.cpu: dict[int, tuple[float, str, float, float]] = {}   # pid -> cpu s, title,
        #                                                              first and last seen

    def run(self):
        me = os.getpid()
        while not self.stop_event.is_set():
            total = _rss_kib(me)[0]
            now = time.time()
            kids = _descendants(me)
            for pid in [me] + kids:
                secs, title = _cpu_seconds(pid)
                if title:
                    first = self.cpu.get(pid, (0.0, "", now, now))[2]
                    self.cpu[pid] = (secs, title, first, now)
            for pid in kids:
                rss, name, shmem = _rss_kib(pid, shared=True)
                total += rss
                if rss > self.peak_child_kib:
                    self.peak_child_kib, self.peak_child_name = rss, name
                    self.peak_child_shmem_kib = shmem
            self.peak_total_kib = max(self.peak_total_kib, total)
            self.samples += 1
            self.stop_event.wait(self.period)

    def stop(self):
        self.stop_event.set()
        self.join(timeout=5)

    def cpu_by_title(self) -> dict[str, float]:
        """CPU seconds (user + system) of the sampled processes, summed by title, largest
        first."""
        out: dict[str, float] = {}
        for secs, title, _, _ in self.cpu.values():
            out[title] = out.get(title, 0.0) + secs
        return dict(sorted(((k, round(v, 2)) for k, v in out.items()), key=lambda kv: -kv[1]))

    def busiest(self, k: int = 6) -> list[dict]:
        """The ``k`` processes of the largest CPU share of one core over the time they were
        seen (CPU seconds / seconds seen)."""
        rows = [{"pid": pid, "title": title, "cpu_s": round(secs, 2),
                 "seen_s": round(last - first, 1),
                 "core_share": round(secs / max(last - first, 1.0), 3)}
                for pid, (secs, title, first, last) in self.cpu.items()]
        return sorted(rows, key=lambda r: -r["core_share"])[:k]


def _driver_peak_kib() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# ------------------------------------------------------------------ the benchmark

def _args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="0",
                   help="device selector as in `fuzzfarm run --device` (default: 0, the first)")
    p.add_argument("--budget", default="60s", help="run budget (default 60s)")
    p.add_argument("--functions", "-f", default="sin")
    p.add_argument("--precisions", "-p", default="binary32")
    p.add_argument("--widths", "-w", default="1")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=None, help="folder for bench_run.json/.txt (and profiles)")
    p.add_argument("--results", default=None,
                   help="folder for the run's Parquet results (default: a temporary one)")
    p.add_argument("--keep-results", action="store_true",
                   help="keep the temporary results folder")
    p.add_argument("--unit-seconds", type=float, default=None,
                   help="target check time of one unit (RunOptions.unit_seconds)")
    p.add_argument("--max-unit-inputs", type=int, default=None)
    p.add_argument("--min-unit-inputs", type=int, default=None)
    p.add_argument("--in-flight", type=int, default=None,
                   help="check tasks pending per device (default: the CPUs)")
    p.add_argument("--makers", type=int, default=None,
                   help="unit-generating actors per device (default: CPUs/4 from 8 CPUs up)")
    p.add_argument("--screen", choices=("auto", "host"), default="auto",
                   help="auto: binary32 and binary64 built-ins with a device reference "
                        "screened on the device; host: every result on the host")
    p.add_argument("--inputs", choices=("auto", "host"), default="auto",
                   help="auto: binary32 and binary64 one-input built-ins make their inputs "
                        "on the device (fuzzfarm.device.generate); host: inputs made on the "
                        "host")
    p.add_argument("--profile", action="store_true",
                   help="cProfile the device actor's loop (written to --out)")
    p.add_argument("--profile-checks", action="store_true",
                   help="cProfile every check task (statistics merged into "
                        "checks.txt in --out)")
    p.add_argument("--quiet", action="store_true", help="no live progress table")
    return p.parse_args(argv)


def main(argv=None) -> int:
    a = _args(argv)
    from fuzzfarm.orchestrate import run as runner
    from fuzzfarm.store import dataset as store

    results = a.results or tempfile.mkdtemp(prefix="bench_run-")
    out = Path(a.out) if a.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    try:
        opts = runner.validate(a.functions, a.budget, a.seed, results, a.device, None, "",
                               a.precisions, a.widths)
    except runner.UsageError as exc:
        print(f"bench_run: {exc}", file=sys.stderr)
        return 2
    for name, attr in (("unit_seconds", "unit_seconds"), ("max_unit_inputs", "max_unit_inputs"),
                       ("min_unit_inputs", "min_unit_inputs"), ("in_flight", "in_flight"),
                       ("makers", "makers")):
        v = getattr(a, name)
        if v is not None:
            setattr(opts, attr, v)
    opts.screen = a.screen
    opts.inputs = a.inputs
    if a.profile:
        opts.profile_dir = str(out or Path(results))
    checks_dir = None
    if a.profile_checks:
        from cluster.actor import PROFILE_ENV
        checks_dir = Path(tempfile.mkdtemp(prefix="bench_checks-"))
        os.environ[PROFILE_ENV] = str(checks_dir)
    sampler = MemorySampler()
    sampler.start()
    try:
        from rich.console import Console
        console = Console(stderr=True, quiet=a.quiet)
    except ImportError:         # fuzzfarm.orchestrate.run prints plain progress lines then
        console = _Silent() if a.quiet else None
    t_exec = time.time()
    from cluster.driver import run_options
    meta = run_options(opts, console)
    t_end = time.time()
    sampler.stop()

    stats = store.read_stats(results, meta["run_id"]).to_pylist()
    report = _report(a, opts, meta, stats, t_exec, t_end, sampler)
    text = _format(report)
    print(text)
    if out:
        (out / "bench_run.json").write_text(json.dumps(report, indent=2, default=str))
        (out / "bench_run.txt").write_text(text + "\n")
    if checks_dir is not None:
        _merge_profiles(checks_dir, (out or Path(results)) / "checks.txt")
    if not a.results and not a.keep_results:
        shutil.rmtree(results, ignore_errors=True)
    return 0


def _merge_profiles(folder: Path, path: Path) -> None:
    """The check tasks' cProfile statistics (one file per checking process) merged,
    the 50 largest by cumulative and by own time, into ``path``."""
    import io
    import pstats
    files = sorted(str(f) for f in folder.glob("check-*.prof"))
    if not files:
        return
    text = io.StringIO()
    stats = pstats.Stats(*files, stream=text)
    stats.sort_stats("cumulative").print_stats(50)
    stats.sort_stats("tottime").print_stats(50)
    path.write_text(text.getvalue())
    shutil.rmtree(folder, ignore_errors=True)


class _Silent:
    def print(self, *_, **__):
        pass


def _report(a, opts, meta, stats, t_exec, t_end, sampler) -> dict:
    cores = os.cpu_count() or 1
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = cores
    inputs = sum(s["inputs_tested"] for s in stats)
    # distinct within each unit (stats' distinct_inputs; units are drawn independently,
    # so a pattern two units both drew counts twice)
    distinct = sum(s.get("distinct_inputs") or 0 for s in stats)
    work_start = meta.get("work_started", meta["started"])
    work_end = meta.get("finished", t_end)
    last_row = max((s["time"].timestamp() for s in stats), default=work_end)
    work_s = max(1e-9, min(work_end, last_row + 0.5) - work_start)
    whole_s = max(1e-9, t_end - T_PROCESS)
    per_device = {}
    # devices of one fingerprint (two GPUs of one model and driver) are told apart by no
    # stats column: one entry for them together, its busy fraction per device
    same = Counter(d.fingerprint for d in opts.devices)
    for d in opts.devices:
        if d.fingerprint in per_device:
            continue
        mine = [s for s in stats if s["device_fingerprint"] == d.fingerprint]
        n = sum(s["inputs_tested"] for s in mine)
        per_device[d.fingerprint] = {
            "label": d.label, "name": d.name, "platform": d.platform_name,
            "platform_version": d.platform_version, "driver_version": d.driver_version,
            "opencl_version": d.version, "opencl_c_version": d.opencl_c_version,
            "device_type": d.device_type, "devices": same[d.fingerprint],
            "units": len(mine), "inputs": n,
            "inputs_per_s": n / work_s,
            # a device fault's row has no device or check time
            "device_seconds": sum(s["device_seconds"] or 0.0 for s in mine),
            "check_seconds": sum(s["check_seconds"] or 0.0 for s in mine),
        }
        per_device[d.fingerprint]["device_busy_fraction"] = (
            per_device[d.fingerprint]["device_seconds"] / (work_s * same[d.fingerprint]))
    totals = meta.get("totals") or []
    check_s = sum(s["check_seconds"] or 0.0 for s in stats)
    task_s = sum(float(t.get("task_seconds", 0.0)) for t in totals)
    device_s = sum(s["device_seconds"] or 0.0 for s in stats)
    sizes = sorted(s["inputs_tested"] for s in stats)
    actor = [t.get("actor_seconds", {}) for t in totals]
    report = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": f"fuzzfarm run -f {a.functions} -p {a.precisions} -w {a.widths} "
                   f"--budget {a.budget} --device {a.device} --seed {a.seed}",
        "run_id": meta["run_id"], "status": meta.get("status"),
        "machine": {"cpu": _cpu_model(), "cores": cores, "usable_cores": usable,
                    "memory_gib": _mem_total_gib(), "os": platform.platform(),
                    "versions": _versions()},
        "settings": {"in_flight": meta.get("in_flight"), "cpus_in_ray": meta.get("cpus"),
                     **(meta.get("unit_sizing") or {})},
        "inputs": inputs, "distinct_inputs": distinct, "units": len(stats),
        "screen": a.screen,
        "inputs_made": {"option": a.inputs, "units_made_on_device":
                        sum(int(t.get("made_on_device", 0)) for t in totals)},
        "seconds": {"process": whole_s, "working_phase": work_s,
                    "startup": work_start - T_PROCESS,
                    "ray_and_kernels": work_start - meta["started"],
                    "after_deadline": max(0.0, work_end - (work_start + opts.budget)),
                    "shutdown_and_summary": t_end - work_end},
        "inputs_per_s": {"working_phase": inputs / work_s,
                         "distinct_working_phase": distinct / work_s,
                         "including_startup": inputs / whole_s,
                         "per_host_core_working_phase": inputs / work_s / usable},
        "per_device": per_device,
        "per_family": _per_family(stats, work_s),
        "time_spent": {
            "check_seconds": check_s, "check_task_seconds": task_s, "device_seconds": device_s,
            "check_rate_per_task_second": inputs / check_s if check_s else None,
            "check_cpu_share": task_s / (work_s * usable) if task_s else None,
            "actor_seconds": actor,
        },
        "unit_inputs": {"min": sizes[0] if sizes else 0, "median": sizes[len(sizes) // 2]
                        if sizes else 0, "max": sizes[-1] if sizes else 0},
        "verdicts": {"screened": sum(s["screened"] or 0 for s in stats),
                     "exact": sum(s["exact"] or 0 for s in stats),
                     "unjudged": sum(s["unjudged"] or 0 for s in stats),
                     "failures": sum(s["failures"] for s in stats),
                     "notes": sum(s["notes"] for s in stats),
                     # units recorded as a device fault instead of a verdict
                     "device_fault_units": sum(s["device_seconds"] is None for s in stats)},
        "memory_mib": {"driver_peak_rss": _driver_peak_kib() / 1024,
                       "largest_ray_process_peak_rss": sampler.peak_child_kib / 1024,
                       "largest_ray_process": sampler.peak_child_name,
                       "largest_ray_process_shared_at_peak":
                           sampler.peak_child_shmem_kib / 1024,
                       "all_processes_peak_rss_sum": sampler.peak_total_kib / 1024,
                       "samples": sampler.samples},
        "cpu_seconds_by_process": sampler.cpu_by_title(),
        "busiest_processes": sampler.busiest(),
    }
    report["bottleneck"] = _bottleneck(report)
    return report


def _bottleneck(r: dict) -> str:
    """A one-line reading of the actor's accounting: what the device actor waited for."""
    acts = [x for x in r["time_spent"]["actor_seconds"] if x]
    if not acts:
        return "unknown (no actor accounting)"
    keys = ("generate", "device_wait", "check_slot_wait", "submit", "hand_off", "coordinator")
    tot = {k: sum(x.get(k, 0.0) for x in acts) for k in keys}
    whole = sum(x.get("total", 0.0) for x in acts) or 1e-9
    top = max(tot, key=tot.get)
    what = {"generate": "unit generation (hypothesis draw + sampler; makers or the actor "
                        "itself)",
            "device_wait": "the device (kernel and copies)",
            "check_slot_wait": "checking: every check slot busy (the checker, its rows and "
                               "Parquet writing)",
            "submit": "filling the device's staging buffers",
            "hand_off": "handing outputs to Ray (object store copy, task submission)",
            "coordinator": "the coordinator"}[top]
    share = ", ".join(f"{k} {100 * v / whole:.0f}%" for k, v in
                      sorted(tot.items(), key=lambda kv: -kv[1]))
    return f"{what} (device actor time: {share})"


def _per_family(stats: list, work_s: float) -> dict:
    """Inputs, units, targets and seconds by (catalogue family or 'conversion', precision),
    largest first: where a whole-catalogue run's inputs and check time went.  inputs_per_s
    is the family's inputs over the whole working phase (its share of the run's rate)."""
    from edgecases import catalogue
    fns = catalogue.functions()
    out: dict = {}
    for s in stats:
        fam = fns[s["function"]].family if s["function"] in fns else "conversion"
        d = out.setdefault(f"{fam} {s['precision']}", {
            "targets": set(), "units": 0, "inputs": 0, "check_seconds": 0.0,
            "device_seconds": 0.0, "screened": 0, "exact": 0})
        d["targets"].add((s["function"], s["vector_width"]))
        d["units"] += 1
        d["inputs"] += s["inputs_tested"]
        d["check_seconds"] += s["check_seconds"] or 0.0
        d["device_seconds"] += s["device_seconds"] or 0.0
        d["screened"] += s["screened"] or 0
        d["exact"] += s["exact"] or 0
    for d in out.values():
        d["targets"] = len(d["targets"])
        d["inputs_per_s"] = d["inputs"] / work_s
        d["check_rate_per_task_second"] = (d["inputs"] / d["check_seconds"]
                                           if d["check_seconds"] else None)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["inputs"]))


def _format(r: dict) -> str:
    m, s, ips = r["machine"], r["seconds"], r["inputs_per_s"]
    lines = [
        f"bench_run {r['date']}  {r['command']}",
        f"machine: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), "
        f"{(m['memory_gib'] or 0):.0f} GiB; {m['os']}",
        "versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()),
    ]
    for fp, d in r["per_device"].items():
        lines.append(f"device [{fp}]: {d['name']} | {d['platform']} ({d['platform_version']}) "
                     f"| driver {d['driver_version']} | {d['opencl_version']} | {d['device_type']}")
    lines += [
        f"settings: {r['settings']}",
        f"run {r['run_id']}: {r['status']}; {r['units']} units, {r['inputs']:,} inputs checked",
        f"time: process {s['process']:.1f} s = start-up {s['startup']:.1f} s (Ray, actors, "
        f"kernels {s['ray_and_kernels']:.1f} s) + working phase {s['working_phase']:.1f} s "
        f"(of which after the deadline {s['after_deadline']:.1f} s) + shutdown/summary "
        f"{s['shutdown_and_summary']:.1f} s",
        f"distinct inputs (within units): {r['distinct_inputs']:,} "
        f"({100 * r['distinct_inputs'] / max(1, r['inputs']):.2f}%); screen: {r['screen']}, inputs made: {r['inputs_made']}",
        f"DISTINCT CHECKED INPUTS/S: working phase {ips['distinct_working_phase']:,.0f}",
        f"CHECKED INPUTS/S: working phase {ips['working_phase']:,.0f}; including start-up "
        f"{ips['including_startup']:,.0f}; per host core (working phase) "
        f"{ips['per_host_core_working_phase']:,.0f}",
    ]
    for fp, d in r["per_device"].items():
        many = f" x {d['devices']} devices" if d.get("devices", 1) > 1 else ""
        lines.append(f"  per device [{fp}] {d['label']}{many}: {d['inputs_per_s']:,.0f} "
                     f"inputs/s ({d['units']} units; device {d['device_seconds']:.1f} s, busy "
                     f"{100 * d['device_busy_fraction']:.0f}% of the working phase; check "
                     f"{d['check_seconds']:.1f} s)")
    if len(r["per_family"]) > 1:
        lines.append("by family and precision (inputs/s over the working phase; checker "
                     "inputs per task-second; share judged on the exact path):")
        for k, d in r["per_family"].items():
            rate = d["check_rate_per_task_second"]
            lines.append(f"  {k:22s} {d['targets']:4d} targets {d['units']:6d} units "
                         f"{d['inputs_per_s']:14,.0f}/s  checker "
                         f"{(rate or 0):13,.0f}/s  exact {100 * d['exact'] / max(1, d['inputs']):5.1f}%")
    t = r["time_spent"]
    rate = t["check_rate_per_task_second"]
    lines += [
        f"checking: {t['check_seconds']:.1f} s in the checker, {t['check_task_seconds']:.1f} s "
        f"in check tasks (with rows and Parquet); checker rate {rate or 0:,.0f} inputs per "
        f"task-second; check tasks used {100 * (t['check_cpu_share'] or 0):.0f}% of the "
        f"host cores over the working phase",
        f"device: {t['device_seconds']:.2f} s of device time",
        f"device actor: {t['actor_seconds']}",
        f"unit sizes (inputs): min {r['unit_inputs']['min']:,}, median "
        f"{r['unit_inputs']['median']:,}, max {r['unit_inputs']['max']:,}",
        f"verdicts: {r['verdicts']}",
        f"memory: driver peak RSS {r['memory_mib']['driver_peak_rss']:.0f} MiB; largest Ray "
        f"process {r['memory_mib']['largest_ray_process_peak_rss']:.0f} MiB "
        f"({r['memory_mib']['largest_ray_process']}; "
        f"{r['memory_mib'].get('largest_ray_process_shared_at_peak', 0):.0f} MiB of it shared "
        f"memory, i.e. Ray's object store); all processes together (peak of "
        f"sampled sums) {r['memory_mib']['all_processes_peak_rss_sum']:.0f} MiB",
        f"bottleneck: {r['bottleneck']}",
        f"CPU seconds by process: {r['cpu_seconds_by_process']}",
        "busiest processes (share of one core): " + "; ".join(
            f"{p['title']} {p['core_share']:.2f}" for p in r["busiest_processes"]),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
