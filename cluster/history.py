"""``fuzzfarm history`` on builds it runs itself: one Ray actor per build, in parallel.

Each driver build that is not a results directory (``fuzzfarm.orchestrate.builds``) goes
to a ``BuildActor``: on its node it installs the build (pip, into the node's cache,
reused), writes the folder of the build's ICD files, lists the devices the build adds
(``fuzzfarm devices --json`` with and without it) and runs the campaign on them as
``fuzzfarm run --campaign FILE --device FINGERPRINTS`` in a process of its own whose
``OCL_ICD_VENDORS`` names that folder -- the ocl-icd loader reads the variable once, so
every build needs its own process, and that process starts its own local Ray cluster.
An actor on the driver's node stages the results in ``OUT/builds/.<label>-*``, renamed
into ``OUT/builds/<label>`` when the build is done; one on another node sends them back as
an archive, unpacked there; ``fuzzfarm.report.history`` reads them.

A build that fails to install, shows no device, whose campaign is refused, fails or hangs
is a row that says so (``Build.status``/``detail``); the history goes on.  Kernels that
do not build are the campaign's own findings (severity "fault").

``bisect`` runs builds one after another, only one target's campaign on each, and finds
the first build where a failure appears (or disappears).
"""
from __future__ import annotations

import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import ray

from fuzzfarm.orchestrate import builds as specs
from fuzzfarm.report import history as hist
from fuzzfarm.store import dataset as store
from fuzzfarm.target import Target

__all__ = ["BuildOutcome", "BuildActor", "run_builds", "Probe", "Bisection", "bisect",
           "campaign_text", "DEFAULT_CAMPAIGN"]

#: The campaign run on every build when the user gives none.
DEFAULT_CAMPAIGN = Path(__file__).with_name("campaigns") / "history.toml"
#: Seconds a build's campaign may run before it is a hang.
DEFAULT_TIMEOUT = 3600.0


@dataclass(frozen=True)
class BuildOutcome:
    """What a ``BuildActor`` did with one build: ``status`` ("ran", "install failed",
    "no device", "campaign refused", "campaign failed", "hung"), ``detail`` (one line),
    the install's ``install_s`` (seconds; 0.0 when ``reused``), the campaign's ``run_s``,
    the ``devices`` run on (fingerprints), and its results: ``staged`` (a folder of the
    driver's ``OUT/builds``, where the actor ran on the driver's node) or, from another
    node, ``archive`` (the results directory as a gzipped tar); both None unless it ran."""
    label: str
    status: str
    detail: str = ""
    install_s: float | None = None
    reused: bool | None = None
    run_s: float | None = None
    devices: tuple = ()
    staged: str | None = None
    archive: bytes | None = None


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _list_devices(env: dict) -> tuple[list | None, str]:
    """(``fuzzfarm devices --json`` in ``env``, "") or (None, why it failed: the driver
    crashed, hung or printed an error while the devices were listed)."""
    try:
        p = subprocess.run([sys.executable, "-m", "fuzzfarm", "devices", "--json"], env=env,
                           capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None, "listing the devices hung (600 s)"
    except OSError as exc:
        return None, str(exc)
    if p.returncode < 0:
        return None, f"listing the devices died of signal {-p.returncode}"
    try:
        return (json.loads(p.stdout), "") if p.returncode == 0 else \
            (None, f"exit {p.returncode}: {_last_line(p.stderr)}")
    except json.JSONDecodeError:
        return None, "`fuzzfarm devices --json` printed no JSON"


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the actor that started it dies (Ray kills
    actors with SIGKILL when the history is interrupted; the child's own Ray processes
    share its fate the same way)."""
    import ctypes
    import signal
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):     # not Linux/glibc: no fate sharing
        pass


def _campaign(text: str, timeout: float, env: dict, fingerprints: tuple, run_dir: Path):
    """Run the campaign ``text`` on ``fingerprints`` into ``run_dir``: (status, detail).
    Past ``timeout`` seconds its whole process group is killed ("hung")."""
    import signal
    cfile = run_dir.parent / "campaign.toml"
    cfile.write_text(text)
    cmd = [sys.executable, "-m", "fuzzfarm", "run", "--campaign", str(cfile), "--device",
           ",".join(fingerprints), "--out", str(run_dir), "--quiet"]
    try:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True, preexec_fn=_die_with_parent)
    except OSError as exc:
        return "campaign failed", str(exc)
    try:
        stdout, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return "hung", f"the campaign ran past {timeout:.0f} s and was killed"
    said = _last_line(stderr) or _last_line(stdout)
    if p.returncode in (0, 3) and not (run_dir / "_runs").is_dir():
        return "campaign failed", f"exit {p.returncode} without results: {said}"
    if p.returncode == 0:
        return "ran", ""
    if p.returncode == 3:
        return "ran", f"incomplete: a device was lost; {said}"
    if p.returncode < 0:
        return "campaign failed", f"the campaign's process died of signal {-p.returncode}"
    word = "campaign refused" if p.returncode == 2 else "campaign failed"
    return word, f"exit {p.returncode}: {said}"


@ray.remote(max_restarts=0, max_task_retries=0)
class BuildActor:
    """Installs and runs builds on its node (see the module docstring), one at a time."""

    def __init__(self, cache: str | None = None):
        self.cache = Path(cache) if cache else None
        self.every = None                  # the devices every build sees (listed once)

    def build(self, spec: specs.BuildSpec, text: str, selector: str | None,
              timeout: float, work: str, driver_node: str,
              replay: tuple = ()) -> BuildOutcome:
        label, install_s, reused, prefix = spec.label, None, None, None
        try:
            if spec.kind == "pip":
                inst = specs.install(spec, self.cache)
                install_s, reused, prefix = inst.seconds, inst.reused, inst.prefix
            folder = specs.driver_folder(spec, prefix)
        except (specs.InstallFailed, OSError) as exc:
            return BuildOutcome(label, "install failed", str(exc), install_s, reused)
        env = specs.environment(folder)
        if self.every is None:
            self.every, why = _list_devices(specs.environment(None))
            if self.every is None:
                return BuildOutcome(label, "no device", f"without any build: {why}",
                                    install_s, reused)
        listing, why = _list_devices(env)
        if listing is None:
            return BuildOutcome(label, "no device", why, install_s, reused)
        sel = selector or (spec.runtime.devices if spec.runtime else "all")
        fps, why = specs.build_devices(listing, self.every, sel)
        if not fps:
            return BuildOutcome(label, "no device", why, install_s, reused)
        here = ray.get_runtime_context().get_node_id() == driver_node
        staging = Path(tempfile.mkdtemp(prefix=f".{_folder_name(label)}-", dir=work)
                       if here else tempfile.mkdtemp(prefix="fuzzfarm-build-"))
        if replay:      # put first in each target's special-value unit (coordinator._replays)
            from fuzzfarm.report.repro_shrink import db_dir, save_inputs
            for fn, prec, bits in replay:
                save_inputs(db_dir(staging / "results"), fn, prec, "replay", 1, bits)
        t0 = time.monotonic()
        # a replay's maxima, as every campaign's, are exact within two margins of the
        # screen that measured them (--screen auto: the device screens', the tightest
        # where the device has them; docs/device_screen.md, "Exact maxima")
        status, detail = _campaign(text, timeout, env, fps, staging / "results")
        run_s = time.monotonic() - t0
        staged = archive = None
        if status == "ran" and here:
            staged = str(staging)
        elif status == "ran":
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w:gz") as tar:
                tar.add(staging / "results", arcname=".")
            archive = buf.getvalue()
        if staged is None:
            shutil.rmtree(staging, ignore_errors=True)
        return BuildOutcome(label, status, detail, install_s, reused, run_s, fps, staged,
                            archive)


def _folder_name(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", label)


def _place(o: BuildOutcome, out: Path) -> Path:
    """The outcome's results moved into ``out/builds/<label>``, replacing an older run's:
    renamed from where the actor staged them, or unpacked from its archive beside the
    destination and renamed."""
    dest = out / "builds" / _folder_name(o.label)
    if o.staged is not None:
        staging, src = Path(o.staged), Path(o.staged) / "results"
    else:
        staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
        src = staging / "results"
        with tarfile.open(fileobj=io.BytesIO(o.archive), mode="r:gz") as tar:
            tar.extractall(src, filter="data")
    if dest.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{dest.name}-old-", dir=dest.parent))
        os.rename(dest, old / "results")
        shutil.rmtree(old, ignore_errors=True)
    os.rename(src, dest)
    shutil.rmtree(staging, ignore_errors=True)
    return dest


def _as_build(spec: specs.BuildSpec, o: BuildOutcome, out: Path) -> hist.Build:
    results = _place(o, out) if (o.staged or o.archive) is not None else None
    return hist.Build(spec.label, results, o.status if results or o.status != "ran"
                      else "campaign failed", o.detail, source=spec.source,
                      install_s=o.install_s, reused=o.reused, run_s=o.run_s)


def _start_ray(address: str | None) -> None:
    """Ray: the cluster at ``address``, else a new local one of this machine's cores."""
    if ray.is_initialized():
        return
    kw = dict(logging_level="ERROR", log_to_driver=False, configure_logging=True)
    if address:
        ray.init(address=address, **kw)
    else:
        ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False, **kw)


def run_builds(builds: list, text: str, out, parallel: int = 1, address: str | None = None,
               selector: str | None = None, timeout: float = DEFAULT_TIMEOUT,
               log=print, cache: str | None = None, replay: tuple = (),
               actors: list | None = None) -> list:
    """Run the campaign ``text`` (TOML) on every build of ``builds`` (BuildSpecs) that is
    not a results directory, at most ``parallel`` at a time (one BuildActor each, spread
    over the cluster at ``address`` or a local one), and return a ``history.Build`` per
    spec, in order.  ``selector`` narrows each build's devices (default: the runtime's, or
    all the build adds); ``replay``: (function, precision, input bits) put first in each
    target's special-value unit; ``actors``: a list the caller keeps, to run later calls on
    the same BuildActors (filled here where empty).  Never raises for a build's behaviour:
    its row says it (an actor that died is replaced).  On KeyboardInterrupt the builds not finished are rows with
    status "interrupted", their staged results removed; the finished ones are kept."""
    out = Path(out)
    work = out / "builds"
    done: dict = {b.label: hist.Build(b.label, b.path, source=b.source)
                  for b in builds if b.kind == "results"}
    todo = [b for b in builds if b.kind != "results"]
    if not todo:
        return [done[b.label] for b in builds]
    work.mkdir(parents=True, exist_ok=True)
    _start_ray(address)
    driver_node = ray.get_runtime_context().get_node_id()

    def actor():
        return BuildActor.options(num_cpus=1, scheduling_strategy="SPREAD").remote(cache)
    pending, queue = {}, list(todo)
    free = actors if actors is not None else []
    if not free:
        free.extend(actor() for _ in range(max(1, min(parallel, len(todo)))))
    try:
        while queue or pending:
            while queue and free:
                b, a = queue.pop(0), free.pop(0)
                log(f"{b.label}: {b.source}")
                pending[a.build.remote(b, text, selector, timeout, str(work), driver_node,
                                       replay)] = (b, a)
            ready, _ = ray.wait(list(pending), num_returns=1)
            b, a = pending.pop(ready[0])
            try:
                o = ray.get(ready[0])
                free.append(a)
            except ray.exceptions.RayError as exc:
                o = BuildOutcome(b.label, "campaign failed", _last_line(str(exc)))
                free.append(actor())
            done[b.label] = _as_build(b, o, out)
            log(_line(done[b.label]))
    except KeyboardInterrupt:
        for a in [*free, *(a for _, a in pending.values())]:
            ray.kill(a)            # their campaigns die with them (_die_with_parent)
        for b in builds:
            done.setdefault(b.label, hist.Build(b.label, None, "interrupted", source=b.source))
        log("interrupted: the builds that finished are kept")
    finally:
        for left in work.glob(".*"):       # staged by builds that did not finish
            shutil.rmtree(left, ignore_errors=True)
    return [done[b.label] for b in builds]


def _line(b: hist.Build) -> str:
    times = []
    if b.install_s is not None:
        times.append("install reused" if b.reused else f"install {b.install_s:.1f} s")
    if b.run_s is not None:
        times.append(f"campaign {b.run_s:.1f} s")
    return f"{b.label}: {b.status}{': ' + b.detail if b.detail else ''}" + (
        f" ({', '.join(times)})" if times else "")


def campaign_text(path: str | None, front_end: str | None = None) -> str:
    """The text of the campaign file ``path`` (default DEFAULT_CAMPAIGN), checked by
    loading it; with ``front_end`` ('opencl-c' or 'spirv') every job that is not a sweep
    runs through that front end alone (``front_ends = [front_end]``), so one history
    compares one front end across builds.  Raises
    fuzzfarm.orchestrate.campaign.CampaignError (a campaign that does not load, or a
    front end that is not one)."""
    import tomllib

    import tomli_w

    from fuzzfarm.orchestrate import campaign as campaigns
    c = campaigns.load(path or DEFAULT_CAMPAIGN)
    if front_end is None:
        return c.text
    data = tomllib.loads(c.text)
    for job in data.get("jobs", []):
        if job.get("source", "recipes") != "sweep":
            job["front_ends"] = [front_end]
    return campaigns.loads(tomli_w.dumps(data)).text


# --------------------------------------------------------------------------- bisect
@dataclass(frozen=True)
class Probe:
    """One build a bisection ran: its ``label``, ``state`` ("fail", "pass", "untested")
    and ``build`` (the history.Build row: status, times)."""
    label: str
    state: str
    build: hist.Build
    max_ulp: float | None = None        # an accuracy bisection's: the target's maximum
    worst: tuple = ()                   # and the input bits that attain it


@dataclass(frozen=True)
class Bisection:
    """A bisection's answer over ``labels`` (oldest first): the ``target`` and
    ``rule_class`` looked for, ``probes`` in the order run, ``first`` (the first build in
    the state the newest build has, after one in the other state; None when no tested
    build differs), ``last_other`` (the build before it that was run in the other state,
    None when ``first`` is the first build), ``newest_state``, ``bound`` (ceil(log2 N) + 1
    builds) and ``max_ulp_above``: for an accuracy bisection the threshold in ULPs ("fail"
    is a maximum above it), else None."""
    labels: tuple
    target: tuple
    rule_class: str
    probes: tuple
    first: str | None
    last_other: str | None
    newest_state: str
    bound: int
    max_ulp_above: float | None = None


def bisect_order(n: int, state_of) -> tuple:
    """The first index of ``range(n)`` whose state equals index n-1's, found by binary
    search assuming the states change once: ``state_of(i)`` runs build i ("fail", "pass"
    or "untested": an untested build is skipped).  Returns (first index or None, the index
    before it that was found in the other state or None, the newest state).  Runs at most
    ceil(log2 n) + 1 builds when none is untested.  Pure: ``state_of`` does the work."""
    newest = state_of(n - 1)
    if newest == "untested":
        return None, None, newest
    cand = list(range(n - 1))          # positions still to learn; lo/hi index into cand
    lo, hi = -1, len(cand)             # cand[hi] (or n-1) is known newest; cand[lo] other
    other = None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        st = state_of(cand[mid])
        if st == "untested":
            del cand[mid]
            hi -= 1
            continue
        if st == newest:
            hi = mid
        else:
            lo, other = mid, cand[mid]
    first = cand[hi] if hi < len(cand) else n - 1
    return first, other, newest


def bisect(builds: list, target: tuple, rule_class: str, text: str, out,
           address: str | None = None, selector: str | None = None,
           timeout: float = DEFAULT_TIMEOUT, log=print, cache: str | None = None,
           max_ulp_above: float | None = None) -> Bisection:
    """Find where a failure of ``target`` (function, precision, vector width, build
    options) of ``rule_class`` (a prefix; "" for any failure) appears or disappears over
    ``builds`` (BuildSpecs, oldest first) -- or, with ``max_ulp_above`` (ULPs), where the
    target's largest ULP error on the campaign's inputs comes above it or back
    (``probe_accuracy``; maxima exact within two margins of the screen that measured them)
    -- running only that target's jobs of the campaign ``text`` on each build probed
    (``bisect_order``), one at a time, into ``out/bisect/builds/<label>`` (apart from a
    whole history's ``out/builds``).  Never raises for a build's behaviour."""
    one = restrict(text, target) if text else ""
    probes: list = []

    pool: list = []         # one BuildActor for every probe: it lists the devices every
                            # build sees once, not once a probe

    def state_of(i: int) -> str:
        b = run_builds([builds[i]], one, Path(out) / "bisect", 1, address, selector, timeout,
                       log, cache, actors=pool)[0]
        if max_ulp_above is None:
            probe = Probe(b.label, probe_state(b, target, rule_class), b)
        else:
            state, top, worst = probe_accuracy(b, target, max_ulp_above)
            probe = Probe(b.label, state, b, top, worst)
        probes.append(probe)
        log(f"{b.label}: {probe.state}"
            + (f" (max {probe.max_ulp:.4g} ULP)" if probe.max_ulp is not None else ""))
        return probe.state

    first, other, newest = bisect_order(len(builds), state_of)
    return Bisection(tuple(b.label for b in builds), target, rule_class, tuple(probes),
                     builds[first].label if first is not None else None,
                     builds[other].label if other is not None else None, newest,
                     math.ceil(math.log2(len(builds))) + 1 if len(builds) > 1 else 1,
                     max_ulp_above)


def restrict(text: str, target: tuple) -> str:
    """The campaign ``text`` with every job limited to ``target`` (function, precision,
    vector width, build options), each job keeping the seed it had, so the target's
    units are the ones the whole campaign ran; a drift job is left out for a target it
    does not sample (work.drift.drifts: a conversion).  Raises CampaignError (via load)."""
    import tomllib

    import tomli_w

    from fuzzfarm.orchestrate import campaign as campaigns
    from fuzzfarm.work.drift import drifts
    c = campaigns.loads(text)
    data = tomllib.loads(text)
    fn, prec, width, opts = target
    jobs = []
    for job, loaded in zip(data.get("jobs", []), c.jobs):
        if loaded.source == "drift" and not drifts(Target(fn, prec, int(width))):
            continue
        job.update(functions=[fn], precisions=[prec], widths=[int(width)],
                   build_options=[opts], seed=loaded.seed)
        jobs.append(job)
    data["jobs"] = jobs
    data["name"] = f"{c.name}-bisect"
    return tomli_w.dumps(data)


def replay_campaign(text: str, worst: dict) -> str:
    """The campaign that replays ``worst`` (history.worst_inputs: {target: input tuples}):
    the special-value units (catalogue) of those targets' functions in their precisions,
    one job per build options -- one job, so that a build without cl_khr_fp16 still runs
    the rest (a job none of whose targets a device supports is refused) -- with ``text``'s
    seed and unit size; the inputs themselves are put first in each unit from the results'
    example database (``BuildActor.build``'s ``replay``)."""
    import tomli_w

    from fuzzfarm.orchestrate import campaign as campaigns
    c = campaigns.loads(text)
    groups: dict = {}
    for fn, prec, _w, opts, _front_end in worst:
        fns, precs = groups.setdefault(opts, (set(), set()))
        fns.add(fn)
        precs.add(prec)
    # the front ends the campaign's targets went through (history --front-end: one)
    front_ends = sorted({Target.of(t).front_end for j in c.jobs for t in j.targets})
    data = {"name": f"{c.name}-replay", "seed": c.seed,
            "jobs": [{"name": f"replay{k}", "source": "catalogue", "functions": sorted(fns),
                      "precisions": sorted(precs), "build_options": [opts],
                      "front_ends": front_ends}
                     for k, (opts, (fns, precs)) in enumerate(sorted(groups.items()))]}
    if c.unit_inputs:
        data["unit"] = {"inputs": c.unit_inputs}
    return tomli_w.dumps(data)


def replay_worst(h: hist.History, builds: list, text: str, out, parallel: int,
                 address, selector, timeout, log, actors: list | None = None) -> hist.History:
    """``h`` with every build's worst inputs of the targets whose maximum changed replayed
    on every build that ran here (into ``out/replay/builds``): history.with_replayed.
    Results directories given as builds have no driver here: not replayed."""
    worst = hist.worst_inputs(h)
    mine = [s for s, b in zip(builds, h.builds) if b.ran and s.kind != "results"]
    if not worst or len(mine) < 2:
        return h
    items = tuple((t[0], t[1], bits) for t, tuples in worst.items() for bits in tuples)
    log(f"replaying {len(items)} worst inputs of {len(worst)} targets on {len(mine)} builds")
    again = {b.label: b for b in run_builds(mine, replay_campaign(text, worst),
                                           Path(out) / "replay", parallel, address,
                                           selector, timeout, log, replay=items,
                                           actors=actors)}
    return hist.with_replayed(h, [again.get(b.label, hist.Build(b.label, None, "not replayed"))
                                  for b in h.builds])


def _rows_of(table, target: tuple) -> list:
    """The row numbers of ``table`` (findings or stats) of ``target`` (function,
    precision, vector width, build options)."""
    d = table.select(["function", "precision", "vector_width", "build_options"]).to_pylist()
    return [k for k, r in enumerate(d) if tuple(r.values()) == tuple(target)]


def probe_state(b: hist.Build, target: tuple, rule_class: str) -> str:
    """"fail" when build ``b``'s results hold a failure or fault of ``target`` (function,
    precision, vector width, build options) whose rule class
    (fuzzfarm.store.signatures.rule_class) starts with ``rule_class``, "pass" when they
    tested the target without one, "untested" otherwise (the build did not run, or did not
    test the target).  Raises store.StoreError for corrupt results."""
    from fuzzfarm.store import signatures
    if not b.ran or not _rows_of(store.read_stats(b.results), target):
        return "untested"
    found = store.read_findings(b.results)
    mine = _rows_of(found, target)
    if mine:
        found = signatures.with_signatures(found.take(mine))
        for sev, rc in zip(found.column("severity").to_pylist(),
                           found.column("rule_class").to_pylist()):
            if sev in ("fail", "fault") and str(rc).startswith(rule_class):
                return "fail"
    return "pass"


def probe_accuracy(b: hist.Build, target: tuple, above: float):
    """(state, maximum, worst input bits) of ``target`` (function, precision, vector width,
    build options) in build ``b``'s results: the largest ``max_ulp_error`` of its stats
    rows (ULPs) and the ``max_ulp_inputs`` of a row attaining it; state "fail" where the
    maximum is above ``above``, "pass" where the target was tested at or below it (or
    with no error measured), "untested" where the build did not run or test it.  Raises
    store.StoreError for corrupt results."""
    if not b.ran:
        return "untested", None, ()
    stats = store.read_stats(b.results)
    mine = _rows_of(stats, target)
    if not mine:
        return "untested", None, ()
    rows = stats.take(mine).select(["max_ulp_error", "max_ulp_inputs"]).to_pylist()
    measured = [r for r in rows if r["max_ulp_error"] is not None
                and not math.isnan(r["max_ulp_error"])]
    if not measured:
        return "pass", None, ()
    top = max(measured, key=lambda r: r["max_ulp_error"])
    return ("fail" if top["max_ulp_error"] > above else "pass", top["max_ulp_error"],
            tuple(top["max_ulp_inputs"] or ()))


# ----------------------------------------------------------------------- the command
_TARGET = re.compile(r"^(?P<fn>[A-Za-z_][A-Za-z0-9_]*(?:\([a-z0-9]+\))?)"   # convert_x(float)
                     r"/(?P<prec>binary16|binary32|binary64)(?:/(?P<rule>.+))?$")


def bisect_target(what: str, out, accuracy: bool = False) -> tuple:
    """(target, rule class) of a ``--bisect`` value: ``FUNCTION/PRECISION[/RULE_CLASS]``
    (vector width 1, no build options; a rule class prefix such as ``CL.ulp``), or an id
    of ``out/history.json`` (an earlier ``fuzzfarm history -o OUT``): an issue's, or with
    ``accuracy`` (``--max-ulp-above``) a ULP maximum's (its ``ulp_max`` row's ``id``; rule
    class ""). Raises HistoryError naming what is wrong."""
    m = _TARGET.match(what.strip())
    if m:
        return (m["fn"], m["prec"], 1, ""), m["rule"] or ""
    path, what = Path(out) / "history.json", what.strip()
    try:
        doc = json.loads(path.read_text())
        rows = doc["ulp_max" if accuracy else "issues"]
    except (OSError, ValueError, KeyError, TypeError):
        raise hist.HistoryError(f"--bisect {what!r}: not FUNCTION/PRECISION[/RULE_CLASS], and "
                                f"no history.json in {str(out)!r} to look the id up in") from None
    for i in rows:
        if i.get("id" if accuracy else "issue") == what:
            return ((i["function"], i["precision"], int(i["vector_width"]),
                     i["build_options"]), "" if accuracy else i["rule_class"])
    if not accuracy and any(r.get("id") == what for r in doc.get("ulp_max", [])):
        raise hist.HistoryError(f"--bisect {what!r} is a ULP maximum's id: give the "
                                f"threshold with --max-ulp-above X")
    raise hist.HistoryError(f"--bisect {what!r}: no such {'ULP maximum' if accuracy else 'issue'}"
                            f" in {str(path)!r}")


def _bisect_sections(b: Bisection) -> list:
    from fuzzfarm.report.triage_report import Section
    fn, prec, width, opts = b.target
    what = f"{fn} {prec} w{width}{' [' + opts + ']' if opts else ''} " + (
        "ULP maximum" if b.max_ulp_above is not None else b.rule_class or "any failure")
    words = {"fail": "fails", "pass": "passes"} if b.max_ulp_above is None else \
        {"fail": f"is above {b.max_ulp_above:g} ULP",
         "pass": f"is at most {b.max_ulp_above:g} ULP"}
    word = words.get(b.newest_state, "is untested")
    if b.first is None:
        answer = f"The newest build {b.labels[-1]} {word}: nothing to bisect."
    elif b.last_other is None:
        answer = (f"{what}: the newest build {word}, and so does every build probed back to "
                  f"the first, {b.first}: no change in this range.")
    else:
        answer = (f"{what}: {word} from {b.first} on; {b.last_other} does not "
                  f"({'introduced' if b.newest_state == 'fail' else 'fixed'} in {b.first}).")
    runs = (f"{len(b.probes)} of {len(b.labels)} builds run (bound ceil(log2 N) + 1 = "
            f"{b.bound}{'; untested builds were skipped' if len(b.probes) > b.bound else ''}).")
    rows = [(p.label, p.state, f"{p.build.status}{': ' + p.build.detail if p.build.detail else ''}",
             hist.build_times(p.build)) for p in b.probes]
    head = ["build", "state", "status", "install, campaign"]
    if b.max_ulp_above is not None:     # which inputs decided: each probe's worst
        head += ["max ULP", "at input (bits)"]
        rows = [(*r, "-" if p.max_ulp is None else f"{p.max_ulp:.6g}",
                 ", ".join(f"0x{v:x}" for v in p.worst) or "-")
                for r, p in zip(rows, b.probes)]
    return [Section("Answer", [], [], text=f"{answer} {runs}", empty=""),
            Section("Builds run, in order", head, rows, empty="none"),
            Section("Builds in the range", ["build", "run"],
                    [(lab, "yes" if lab in {p.label for p in b.probes} else "no")
                     for lab in b.labels], empty="none")]


def write_bisection(b: Bisection, out) -> list:
    """bisect.md and bisect.json in ``out``; returns their paths."""
    from fuzzfarm.report.render import render
    out = Path(out)
    doc = {"target": {"function": b.target[0], "precision": b.target[1],
                      "vector_width": b.target[2], "build_options": b.target[3]},
           "rule_class": b.rule_class, "max_ulp_above": b.max_ulp_above,
           "builds": list(b.labels),
           "newest_state": b.newest_state, "first": b.first, "last_other": b.last_other,
           "bound": b.bound,
           "probes": [{"label": p.label, "state": p.state, "status": p.build.status,
                       "detail": p.build.detail, "install_seconds": p.build.install_s,
                       "campaign_seconds": p.build.run_s, "max_ulp": p.max_ulp,
                       "worst_inputs": list(p.worst)} for p in b.probes]}
    md = render("sections.md.j2", heading="fuzzfarm history --bisect",
                sections=_bisect_sections(b))
    return [store.write_text(out / "bisect.md", md), store.write_json(out / "bisect.json", doc)]


def main(texts, out, campaign: str | None = None, selector: str | None = None,
         parallel: int | None = None, address: str | None = None,
         timeout: float = DEFAULT_TIMEOUT, bisect_what: str | None = None,
         replay: bool = True, log=print, front_end: str | None = None,
         max_ulp_above: float | None = None) -> tuple[list[str], int]:
    """``fuzzfarm history``: the builds ``texts`` names (fuzzfarm.orchestrate.builds.parse),
    run (or bisected) and reported into ``out`` -- with ``replay``, every build's worst
    inputs replayed on the others (``replay_worst``); ``front_end``: the one front end every
    job's kernels go through (``campaign_text``); ``max_ulp_above``: bisect the target's
    ULP maximum against this threshold (``bisect``); returns the lines to print and the exit
    status (0, or 130 when interrupted: the report then covers the builds that finished).
    Raises BadInput (BuildError, HistoryError, CampaignError) for bad input, before any
    build runs."""
    builds = specs.parse(texts)
    if not builds:
        raise hist.HistoryError("history: no builds given")
    text = campaign_text(campaign, front_end) if any(b.kind != "results" for b in builds) \
        else ""
    target = bisect_target(bisect_what, out, max_ulp_above is not None) if bisect_what \
        else None
    if max_ulp_above is not None and (target is None or target[1]):
        raise hist.HistoryError("--max-ulp-above bisects a target's ULP maximum: give it "
                                "with --bisect FUNCTION/PRECISION (no rule class)")
    started = ray.is_initialized()
    try:
        if target:
            b = bisect(builds, *target, text, out, address, selector, timeout, log,
                       max_ulp_above=max_ulp_above)
            paths = write_bisection(b, out)
            return [_bisect_sections(b)[0].text, *map(str, paths)], 0
        if parallel is None:
            parallel = len(builds) if address else max(1, (os.cpu_count() or 1) // 8)
        t0 = time.monotonic()
        pool: list = []     # the campaigns' BuildActors run the replay too
        done = run_builds(builds, text, out, parallel, address, selector, timeout, log,
                          actors=pool)
        h = hist.history(done)
        if replay and not any(b.status == "interrupted" for b in done):
            h = replay_worst(h, builds, text, out, parallel, address, selector, timeout, log,
                             pool)
        paths = hist.write(h, out)
        code = 130 if any(b.status == "interrupted" for b in [*done, *h.replay_builds]) else 0
        return [f"{hist.summary(h)} in {time.monotonic() - t0:.1f} s", *map(str, paths)], code
    finally:
        if not started and ray.is_initialized():
            ray.shutdown()
