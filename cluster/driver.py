"""The driver of a campaign: devices of the cluster, actors, faults, status, resume.

``run_campaign`` runs a ``fuzzfarm.orchestrate.campaign.Campaign`` (``fuzzfarm run`` builds a one-job
campaign from its options, ``fuzzfarm run --campaign FILE`` loads one) on a Ray cluster:
the one at ``address``, or a local one it starts with this machine's devices as resources.

1. It writes the campaign (``DIR/_campaign/<run_id>/campaign.toml`` and ``.json``) before
   any unit, so ``fuzzfarm run --resume DIR`` can continue it after any crash.
2. It finds every device of the cluster (``cluster.placement.cluster_devices``), has each node
   describe its own, keeps those the campaign's ``devices`` selectors name, and starts one
   ``DeviceActor`` per device on its node (restarted by Ray up to ``unit.max_restarts``
   times) and the ``Coordinator`` on its own node.
3. While the actors pull units it shows live progress, writes ``status.json`` every
   ``status_interval`` seconds, kills an actor whose unit outlives ``unit.timeout`` on the
   device, and handles a dead actor: its units go back to its pool (a crash or hang
   strikes the units on the device; a lost node strikes nothing), a unit struck twice is
   written as a device-fault finding, and a restarted actor rebuilds its kernels and
   pulls again.
4. It ends when every pool is finished, or when the only pools left have no live device
   ("incomplete": resume later), or on Ctrl-C ("interrupted": the units in flight finish
   and are written; a second Ctrl-C abandons them).
"""
from __future__ import annotations

import os
import signal
import socket
import time

__all__ = ["run_campaign", "CampaignRun", "DEFAULT_STATUS_INTERVAL"]

DEFAULT_STATUS_INTERVAL = 2.0
#: Seconds between compactions of the results directory during a campaign (store.compact:
#: a background thread of the driver merges finished units' files; the environment's
#: FUZZFARM_COMPACT_INTERVAL overrides it, for benchmarks), and the fewest files a
#: directory must have for it; at the end of a session every directory is compacted.
COMPACT_INTERVAL = float(os.environ.get("FUZZFARM_COMPACT_INTERVAL", "600"))
COMPACT_MIN_FILES = 256
#: A background compaction starts when this share of a time budget is left (``_tick``).
LATE_COMPACT_SHARE = 0.1

from cluster.display import (Console, Live, LineLive, PlainConsole, PlainLive,
                             progress_fields, progress_table)


def _is_actor_error(exc: BaseException) -> bool:
    """An error that says the actor died or cannot run: RayActorError (ActorDiedError,
    ActorUnavailableError) or ActorUnschedulableError (a RayError, raised when an actor
    pinned to a node is called after the node died)."""
    import ray.exceptions as rx
    return isinstance(exc, (rx.RayActorError, getattr(rx, "ActorUnschedulableError", ())))


class CampaignRun:
    """One session of a campaign (new or resumed); ``run()`` does it.  Options as
    ``run_campaign``'s."""

    def __init__(self, campaign, out: str, address: str | None = None,
                 run_id: str | None = None, dashboard: bool = False, console=None,
                 num_cpus: int | None = None, makers: int | None = None,
                 in_flight: int | None = None, profile_dir: str | None = None,
                 screen: str = "auto", inputs: str = "auto",
                 status_interval: float = DEFAULT_STATUS_INTERVAL,
                 per_recipe: int = 8192, recipes_per_unit: int = 4,
                 started: float | None = None):
        from fuzzfarm.store import dataset as store
        self.c, self.out, self.address = campaign, str(out), address
        self.resumed = run_id is not None
        self.run_id = run_id or (campaign.name + "-" + store.new_run_id())
        self.dir = store.campaign_dir(out, self.run_id)
        self.dashboard, self.num_cpus = dashboard, num_cpus
        self.makers_opt, self.in_flight_opt, self.profile_dir = makers, in_flight, profile_dir
        self.screen, self.inputs = screen, inputs
        self.status_interval = status_interval
        self.per_recipe, self.recipes_per_unit = per_recipe, recipes_per_unit
        self.console = console or (Console(stderr=True) if Console is not None
                                   else PlainConsole())
        self.devices: dict = {}       # key -> {"node", "resource", "fp", "i", "info"}
        self.actors: dict = {}
        self.restarts: dict = {}
        self.dead: dict = {}          # key -> why it was given up
        self.hang_killed: set = set()
        self.faults: list = []
        self.dashboard_url = None
        self.elapsed_before = 0.0
        self.started = started        # the caller's start (``time.time()``), if earlier
        self.t_begin = time.time()    # when the time budget started (``run``)
        self.state = "starting"
        self.saved = False            # the campaign is written (bad input writes nothing)
        self.coord = None             # the Coordinator actor, once started
        self._compactor = None        # the background compaction's thread
        self.interrupted = False

    # ------------------------------------------------------------------ set-up
    def _lost_own_cluster(self, exc: BaseException) -> bool:
        """Whether ``exc`` says the driver's own Ray node died (its coordinator, pinned
        there, is dead or unreachable), not a fault of this code."""
        import ray.exceptions as rx
        if not (_is_actor_error(exc) or isinstance(exc, rx.RaySystemError)):
            return False
        coord = self.coord
        if coord is None:
            return True
        try:
            import ray
            ray.get(coord.snapshot.remote(), timeout=5)
        except Exception:       # noqa: BLE001 - any failure to answer: it is gone
            return True
        return False

    def _save_campaign(self) -> None:
        from fuzzfarm.store import dataset as store
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.c.text:
            tmp = self.dir / ".campaign.toml.tmp"
            tmp.write_text(self.c.text)
            os.replace(tmp, self.dir / "campaign.toml")
        store.write_json(self.dir / "campaign.json", self.c.to_dict())
        self.saved = True

    def _start_ray(self) -> None:
        import ray

        from cluster.placement import local_resources
        kw = dict(logging_level="ERROR", log_to_driver=False, configure_logging=True)
        if self.address:
            ctx = ray.init(address=self.address, **kw)
        else:
            from fuzzfarm.device.discovery import list_devices
            # "local": a new cluster of this machine even where `ray start` runs one
            # Ray's GCS keeps the events of the last 100,000 tasks by default: with a check
            # task per unit its memory grew ~350 MB an hour in the 1 h soak before reaching
            # that cap (RESULTS.md); 10,000 is enough for the dashboard's task view
            ctx = ray.init(address="local", num_cpus=self.num_cpus or os.cpu_count(),
                           resources=local_resources(list_devices()),
                           include_dashboard=self.dashboard,
                           _system_config={"task_events_max_num_task_in_gcs": 10_000}, **kw)
        if self.dashboard:
            self.dashboard_url = getattr(ctx, "dashboard_url", None) or None

    def _discover(self) -> None:
        """Every device of the cluster the campaign's selectors name (self.devices)."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from dataclasses import replace

        from cluster.placement import cluster_devices, describe_node
        from fuzzfarm.device.discovery import DeviceSelectionError, select_devices
        found = cluster_devices()
        nodes = sorted({n for n, *_ in found})
        described = ray.get([describe_node.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote()
            for n in nodes])
        infos, places = [], []
        for node, descs in zip(nodes, described):
            # in the node's own enumeration order, so that an index selector means what
            # `fuzzfarm devices` shows (on one machine)
            resources = {(fp, i): res for n, res, fp, i in found if n == node}
            seen: dict = {}
            for d in descs:
                fp = d.fingerprint
                i = seen[fp] = seen.get(fp, -1) + 1
                if (fp, i) in resources:
                    infos.append(replace(d, index=len(infos)))
                    places.append((node, resources[(fp, i)], fp, i))
        try:
            chosen = select_devices(",".join(self.c.devices), infos)
        except DeviceSelectionError as exc:
            raise self.c.error("devices", str(exc).replace("--device ", "selector "))
        if not chosen:
            raise self.c.error("devices", "no OpenCL device in the cluster (start nodes with "
                               "`fuzzfarm node`, or install pocl-binary-distribution)")
        for info in chosen:
            node, res, fp, i = places[info.index]
            key = f"{node[:8]}/{fp}/{i}"
            self.devices[key] = {"node": node, "resource": res, "fp": fp, "i": i,
                                 "info": info}

    def _pools(self) -> dict:
        """{fingerprint: {"precisions", "jobs", "max_alloc"}} for the chosen devices
        ("precisions": ``capabilities_of``, the precisions and 'spirv'; the
        least CL_DEVICE_MAX_MEM_ALLOC_SIZE of the fingerprint's devices); raises a
        CampaignError for a job no chosen device can run."""
        from fuzzfarm.device.discovery import DeviceSelectionError, select_devices
        from fuzzfarm.target import Target
        from fuzzfarm.work.session import capabilities_of
        infos = [d["info"] for d in self.devices.values()]
        pools: dict = {}
        for info in infos:
            precs = list(capabilities_of(info))
            pool = pools.setdefault(info.fingerprint, {"precisions": precs, "jobs": [],
                                                       "max_alloc": info.max_alloc_bytes})
            pool["max_alloc"] = min(pool["max_alloc"], info.max_alloc_bytes)
        for job in self.c.jobs:
            if job.devices:
                try:
                    mine = {d.fingerprint for d in select_devices(",".join(job.devices), infos)}
                except DeviceSelectionError as exc:
                    raise self.c.error(f"jobs[{job.number}].devices",
                                       str(exc).replace("--device ", "selector "))
            else:
                mine = set(pools)
            runnable = False
            spirv = any(Target.of(t).front_end == "spirv" for t in job.targets)
            for fp in mine:
                have = set(pools[fp]["precisions"])
                if any(Target.of(t).requirements <= have for t in job.targets):
                    pools[fp]["jobs"].append(job.number)
                    runnable = True
                if spirv and "spirv" not in have:
                    info = next(i for i in infos if i.fingerprint == fp)
                    self.console.print(f"{info.label} [{fp}] takes no SPIR-V "
                                       f"(CL_DEVICE_IL_VERSION names none): job "
                                       f"{job.name}'s SPIR-V targets run elsewhere or not")
            if not runnable:
                raise self.c.error(f"jobs[{job.number}].precisions",
                                   "no selected device supports these precisions "
                                   "(binary16 needs cl_khr_fp16, binary64 cl_khr_fp64)"
                                   + (" and SPIR-V (CL_DEVICE_IL_VERSION)" if spirv else ""))
        return pools

    def _actor(self, key: str):
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from cluster.actor import DeviceActor
        d = self.devices[key]
        return DeviceActor.options(
            resources={d["resource"]: 1}, max_restarts=self.c.max_restarts,
            max_task_retries=0, max_concurrency=1,
            scheduling_strategy=NodeAffinitySchedulingStrategy(d["node"], soft=False),
        ).remote(d["fp"], d["i"], self.makers, self.plants, self.screen, self.inputs)

    def _targets_by_options(self, key: str) -> dict:
        """{build options: [Target, ...]} of the jobs device ``key``'s pool runs (range
        jobs build their own kernels at their first unit)."""
        from fuzzfarm.target import FRONT_ENDS, Target
        fp = self.devices[key]["fp"]
        out: dict = {}
        for job in self.c.jobs:
            if job.number in self.pools[fp]["jobs"] and job.source != "sweep":
                targets = list(map(Target.of, job.targets))
                # a front-ends compare job's units run their inputs through the other front
                # end too (the constants door's programs are each unit's own: built there)
                if job.against in FRONT_ENDS:
                    targets += [t._replace(front_end=job.against) for t in targets]
                for bo in job.build_options:
                    have = out.setdefault(bo, [])
                    have += [t for t in targets if t not in have]
        return out

    def _prepare(self, key: str):
        """Have device ``key``'s actor build its programs (calls on an actor run in order,
        so a ``_work`` submitted after it waits for it), stopping its warm-up when the
        budget ends (``deadline``)."""
        return self.actors[key].prepare.remote(self._targets_by_options(key), self.deadline,
                                               self.c.unit_inputs or self.c.unit_max_inputs)

    @property
    def deadline(self) -> float | None:
        """When the time budget ends (a ``time.time()``): the budget counts from the
        command's start (``started``; else the session's), Ray's start and the program
        builds included, less what earlier sessions of a resumed campaign spent (None:
        no time budget)."""
        if self.c.time_budget is None:
            return None
        return self.t_begin + max(0.0, self.c.time_budget - self.elapsed_before)

    def _wait_built(self, refs: list) -> None:
        """Wait for the actors' ``prepare`` calls, saying how far the builds are: a line
        'building D/T' (targets whose programs are built, of all) every few seconds, or a
        status line on a terminal."""
        import ray
        from fuzzfarm.orchestrate.progress import LineLog
        pending, last = list(refs), 0.0
        self.state = "building"
        status = None
        if Console is not None and isinstance(self.console, Console):
            status = self.console.status("building programs")
            status.start()
        try:
            while pending:
                _, pending = ray.wait(pending, num_returns=len(pending), timeout=0.5)
                now = time.time()
                if not pending or now - last < (2.0 if status is not None else 5.0):
                    continue
                last = now
                got = ray.get([a.build_progress.remote() for a in self.actors.values()])
                done, total = sum(g["done"] for g in got), sum(g["total"] for g in got)
                if not total:             # no actor has started building yet
                    continue
                text = f"building {done}/{total}"
                if status is not None:
                    status.update(f"{text} targets' programs ({now - self.t_begin:.0f}s)")
                elif isinstance(self.console, LineLog):
                    if not self.console.quiet:
                        self.console.event("building", campaign=self.c.name, built=done,
                                           targets=total, elapsed_s=round(now - self.t_begin))
                else:
                    self.console.print(f"{text} targets' programs")
        finally:
            if status is not None:
                status.stop()
        ray.get(refs)                 # an actor's error is raised here

    def _work(self, key: str):
        """Device ``key``'s actor pulling units until its pool is finished."""
        return self.actors[key].work.remote(self.coord, key, self.run_id, self.out,
                                            self.in_flight, None, self.profile_dir)

    # ------------------------------------------------------------------ faults
    def _node_alive(self, node: str) -> bool:
        import ray
        return any(n["NodeID"] == node and n.get("Alive") for n in ray.nodes())

    def _why_dead(self, key: str, exc: BaseException, patience: float = 60.0) -> str:
        """"hang" (we killed it), "node" (its node is gone) or "crash" (its process died
        on a live node): decided by the cluster, not by the error's text.  Until the
        cluster declares the node dead (its health checks take seconds) or the actor
        answers again (restarted by Ray on its node, so the node lives), it waits, at
        most ``patience`` seconds; an actor that neither comes back nor loses its node
        in that time is treated as lost with its node."""
        import ray
        from ray.exceptions import ActorDiedError, ActorUnschedulableError, GetTimeoutError
        if key in self.hang_killed:
            self.hang_killed.discard(key)
            return "hang"
        node = self.devices[key]["node"]
        deadline = time.time() + patience
        while time.time() < deadline:
            if not self._node_alive(node):
                return "node"
            try:
                ray.get(self.actors[key].pid.remote(), timeout=2.0)
                return "crash"
            except GetTimeoutError:
                continue
            except Exception as again:       # noqa: BLE001 - dead for good, or not yet up
                if not _is_actor_error(again):
                    raise
                if isinstance(again, ActorUnschedulableError):
                    return "node"           # pinned to a node that is gone
                if isinstance(again, ActorDiedError) and self._node_alive(node):
                    return "crash"          # no restart left, on a live node
                time.sleep(0.5)
        return "node"

    def _record_faults(self, tickets: list, key: str, reason: str) -> None:
        """Record each of ``tickets`` (units that crashed or hung device ``key`` twice) as
        a device fault of ``reason``, its inputs saved beside (work.rows.write_fault)."""
        import ray

        from fuzzfarm.work.make import draw, make_inputs
        from fuzzfarm.work.rows import write_fault
        info = self.devices[key]["info"]
        for ticket in tickets:
            unit = draw(ticket.unit)
            write_fault(self.out, self.run_id, unit, info.columns(unit.target.precision),
                        reason, inputs=make_inputs(unit))
            ray.get(self.coord.fault_done.remote(unit.unit_id))
            self.faults.append({"unit_id": unit.unit_id, "reason": reason, "device": key})
            self.console.print(f"[red]device fault[/]: {unit.unit_id} "
                               f"({reason} twice) on {info.label}; inputs saved")

    def _reap_lost_nodes(self, work: dict) -> None:
        """Devices whose node the cluster has declared dead while their ``work`` call is
        still pending (a restarting actor pinned to a dead node never comes back, and its
        calls never return): their units go back to their pools."""
        import ray
        alive = {n["NodeID"] for n in ray.nodes() if n.get("Alive")}
        for ref, key in list(work.items()):
            if self.devices[key]["node"] not in alive:
                del work[ref]
                ray.kill(self.actors[key], no_restart=True)
                ray.get(self.coord.lost.remote(key, "node"))
                self.dead[key] = "node lost"
                self.console.print(f"[yellow]{self.devices[key]['info'].label} [{key}]: "
                                   f"node lost; its units go to the other devices of its "
                                   f"pool[/]")

    def _on_death(self, key: str, exc: BaseException, work: dict) -> None:
        import ray
        reason = self._why_dead(key, exc)
        faults = ray.get(self.coord.lost.remote(key, reason))
        self._record_faults(faults, key, reason)
        self.restarts[key] = self.restarts.get(key, 0) + 1
        label = self.devices[key]["info"].label
        if reason == "node" or self.restarts[key] > self.c.max_restarts:
            ray.kill(self.actors[key], no_restart=True)
            self.dead[key] = "node lost" if reason == "node" else \
                f"given up after {self.c.max_restarts} restarts"
            self.console.print(f"[yellow]{label} [{key}]: {self.dead[key]}; its units go "
                               f"to the other devices of its pool[/]")
            return
        self.console.print(f"[yellow]{label} [{key}]: actor {reason}; restarting, its "
                           f"units are retried[/]")
        ray.get(self.coord.revive.remote(key))
        self._prepare(key)          # a restarted actor has built nothing
        work[self._work(key)] = key

    # ------------------------------------------------------------------ status
    def _compact_in_background(self) -> None:
        """Start a compaction of the results directory in a thread unless one runs."""
        import threading
        t = self._compactor
        if t is not None and t.is_alive():
            return
        self._compactor = threading.Thread(target=_compact_results,
                                           args=(self, COMPACT_MIN_FILES), daemon=True)
        self._compactor.start()

    def _compact(self, min_files: int) -> None:
        """Wait for a background compaction, then compact (at the end of the session)."""
        t = self._compactor
        if t is not None:
            t.join()
        _compact_results(self, min_files)

    def status(self, snap: dict, session_started: float) -> dict:
        """The status file's content (see ``fuzzfarm status``)."""
        elapsed = time.time() - session_started
        devices = {}
        for key, d in snap["devices"].items():
            info = self.devices[key]["info"]
            devices[key] = {**d, "label": info.label, "node": self.devices[key]["node"],
                            "inputs_per_second": d["inputs"] / max(elapsed, 1e-9),
                            "given_up": self.dead.get(key)}
        return {"run_id": self.run_id, "campaign": self.c.name, "state": self.state,
                "updated": time.time(), "session_started": session_started,
                "elapsed_work": self.elapsed_before + time.time() - self.t_begin,
                "time_budget": self.c.time_budget, "input_budget": self.c.input_budget,
                "driver": {"host": socket.gethostname(), "pid": os.getpid()},
                "dashboard": self.dashboard_url, "status_interval": self.status_interval,
                "devices": devices, "pools": snap["pools"],
                "units": {k: snap[k] for k in ("done", "issued", "completed", "retried",
                                               "faults")},
                "issued_inputs": snap["issued_inputs"], "faults": self.faults,
                "out": os.path.abspath(self.out)}

    # ------------------------------------------------------------------ the run
    def run(self) -> dict:
        """Run the session (module docstring); returns its metadata (``run_campaign``)."""
        from fuzzfarm.device.runner import planted_faults
        from fuzzfarm.store import dataset as store

        self.plants = planted_faults()
        # one writer per results directory; what a killed writer left goes first
        self.lock = store.ResultsLock(self.out, f"campaign {self.run_id}")
        if self.lock.acquire():
            self.console.print(f"removed {self.lock.removed} unfinished temporary file(s) "
                               f"a stopped writer left in {self.out}")
        # the time budget counts from the caller's start (the command's), else from here:
        # Ray's start, the device actors' and their program builds are the user's wait as
        # much as the units are
        self.t_begin = time.time() if self.started is None else self.started
        try:
            prior = store.read_status(self.out, self.run_id) if self.resumed else None
            self.elapsed_before = float((prior or {}).get("elapsed_work") or 0.0)
            self._start_ray()
        except BaseException:
            self.lock.release()
            raise
        self.interrupted = False
        old = signal.getsignal(signal.SIGINT)
        meta = {"run_id": self.run_id, "campaign": self.c.to_dict(), "resumed": self.resumed,
                "started": time.time(), "status": "running"}
        try:
            self._set_up(meta)
            totals = self._watch(meta["work_started"])
            self._end(meta, totals)
        except KeyboardInterrupt:
            self.state = "interrupted"
            meta.update(status="abandoned", finished=time.time())
            self.interrupted = True
        except Exception as exc:
            if not self._lost_own_cluster(exc):
                self.state = "failed"
                meta.update(status="failed", finished=time.time())
                raise
            # the node this driver runs on (its coordinator) is gone: what is written is
            # kept, and a resume goes on from it
            self.state = "incomplete"
            why = " ".join(str(exc).split())[:160]
            meta.update(status="incomplete", finished=time.time(), lost=why)
            self.console.print(f"[yellow]incomplete: this run's own Ray node was lost "
                               f"({type(exc).__name__}); finished units are kept; "
                               f"`fuzzfarm run --resume {self.out}` continues[/]")
        except BaseException:
            self.state = "failed"
            meta.update(status="failed", finished=time.time())
            raise
        finally:
            signal.signal(signal.SIGINT, old)
            self._close(meta)
        meta["interrupted"] = self.interrupted
        return meta

    def _set_up(self, meta: dict) -> None:
        """Devices, pools, the campaign saved, actors started and their kernels built,
        the coordinator started (``meta`` gets what was chosen)."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from cluster.actor import warm_checker
        from cluster.coordinator import Coordinator
        from fuzzfarm.store import dataset as store
        self._discover()
        self.pools = self._pools()
        self._save_campaign()        # bad input has written nothing
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.in_flight = self.in_flight_opt or cpus
        # makers idle once they are `makers + 1` units ahead, so they take cores only
        # where generation is what the device waits for (bench_run on the H100, sin:
        # 4 makers 33 M/s, 8: 62 M/s, 12: 95 M/s, RESULTS.md)
        self.makers = self.makers_opt if self.makers_opt is not None else \
            (max(2, 3 * cpus // (4 * max(1, len(self.devices)))) if cpus >= 8 else 0)
        for key in self.devices:
            self.actors[key] = self._actor(key)
        meta.update(cpus=cpus, in_flight=self.in_flight, makers=self.makers,
                    devices={k: d["info"].to_dict() for k, d in self.devices.items()},
                    pools=self.pools)
        self.console.print(
            f"[bold]campaign {self.run_id}[/]{' (resumed)' if self.resumed else ''}: "
            f"{len(self.c.jobs)} job(s) on {len(self.devices)} device(s) in "
            f"{len(self.pools)} pool(s); seed {self.c.seed}; out {self.out}")
        if self.dashboard_url:
            self.console.print(f"Ray dashboard: http://{self.dashboard_url}")
        for _ in range(min(self.in_flight * len(self.actors), cpus)):
            warm_checker.remote()
        t0 = time.perf_counter()
        built = [self._prepare(key) for key in self.actors]
        self._wait_built(built)
        # the device constants, which also waits for every actor to be up
        meta["device_constants"] = dict(zip(self.actors, ray.get(
            [a.constants.remote() for a in self.actors.values()])))
        meta["builds"] = dict(zip(self.actors, ray.get(built)))
        self.console.print(f"devices ready in {time.perf_counter() - t0:.1f}s (programs "
                           f"built for {sum(b['done'] for b in meta['builds'].values())} "
                           f"targets)")
        deadline = self.deadline
        started = time.time()
        remaining = None if deadline is None else max(0.0, deadline - started)
        here = ray.get_runtime_context().get_node_id()
        self.coord = Coordinator.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(
            self.c.to_dict(), self.pools, {k: d["fp"] for k, d in self.devices.items()},
            self.out, self.run_id, None if remaining is None else started + remaining,
            self.resumed, self.per_recipe, self.recipes_per_unit)
        meta.update(work_started=started, unit_sizing={
            "unit_inputs": self.c.unit_inputs, "unit_seconds": self.c.unit_seconds,
            "min_unit_inputs": self.c.unit_min_inputs,
            "max_unit_inputs": self.c.unit_max_inputs, "makers": self.makers})
        store.write_run(self.out, self.run_id, meta)
        self.state = "running"

    def _live(self):
        """The live display for this console: lines (a LineLog), rich's Live, or plain
        progress lines."""
        from fuzzfarm.orchestrate.progress import LineLog
        if isinstance(self.console, LineLog):
            return LineLive
        if Live is not None and Console is not None and isinstance(self.console, Console):
            return Live
        return PlainLive

    def _watch(self, started: float) -> list:
        """Wait for the actors' work, watching for dead and hung actors, lost nodes,
        Ctrl-C, status and compaction times; returns the actors' totals."""
        def on_sigint(signum, frame):
            raise KeyboardInterrupt

        signal.signal(signal.SIGINT, on_sigint)
        work = {self._work(k): k for k in self.actors}
        totals: list = []
        live_cls = self._live()
        self._last = {"status": 0.0, "nodes": 0.0, "compact": time.time()}
        with live_cls(console=self.console, refresh_per_second=2, transient=False) as live:
            while work:
                try:
                    self._tick(work, totals, live, live_cls is LineLive, started)
                except KeyboardInterrupt:
                    if self.interrupted:
                        raise
                    self.interrupted = True
                    self.console.print("[yellow]interrupted: finishing the units in "
                                       "flight (Ctrl-C again to abandon them)[/]")
                    self.coord.stop.remote()
        self.console.print()
        return totals

    def _tick(self, work: dict, totals: list, live, lines: bool, started: float) -> None:
        """One look at the campaign (half a second at most): finished and dead actors,
        overdue units, lost nodes, the live display, the status file, compaction."""
        import ray

        from fuzzfarm.store import dataset as store
        done, _ = ray.wait(list(work), timeout=0.5)
        for ref in done:
            key = work.pop(ref)
            try:
                totals.append(ray.get(ref))
            except Exception as exc:     # noqa: BLE001 - sorted below
                if not _is_actor_error(exc):
                    raise
                self._on_death(key, exc, work)
        for key in ray.get(self.coord.overdue.remote(self.c.unit_timeout)):
            if key not in self.hang_killed and key not in self.dead:
                self.hang_killed.add(key)
                self.console.print(f"[yellow]{self.devices[key]['info'].label} [{key}]: a "
                                   f"unit outlived unit.timeout ({self.c.unit_timeout:g}s) "
                                   f"on the device; killing the actor[/]")
                ray.kill(self.actors[key], no_restart=False)
        now = time.time()
        if now - self._last["nodes"] >= 2.0:
            self._reap_lost_nodes(work)
            self._last["nodes"] = now
        snap = ray.get(self.coord.snapshot.remote())
        deadline = self.deadline
        if deadline is not None and now >= deadline and not self._last.get("budget"):
            self._last["budget"] = now          # said once: the end phase begins
            self.console.print(f"time budget reached after {now - self.t_begin:.0f}s: no new "
                               f"units; those in flight finish, then the summary")
        live.update(progress_fields(snap, self, started) if lines else
                    progress_table(snap, self, started))
        if now - self._last["status"] >= self.status_interval:
            store.write_json(self.dir / "status.json", self.status(snap, started))
            self._last["status"] = now
        # and once near the end of a time budget, so that the closing compaction, which
        # the user waits for, merges only the units written after it
        late = deadline is not None and not self._last.get("late") and \
            now >= deadline - LATE_COMPACT_SHARE * (deadline - self.t_begin)
        if late or now - self._last["compact"] >= COMPACT_INTERVAL:
            self._last["late"] = self._last.get("late") or late
            self._compact_in_background()
            self._last["compact"] = now

    def _end(self, meta: dict, totals: list) -> None:
        """The session's end state (completed, incomplete, interrupted), its status file
        and its metadata's totals and device faults."""
        import ray

        from fuzzfarm.store import dataset as store
        snap = ray.get(self.coord.snapshot.remote())
        stranded = ray.get(self.coord.stranded.remote())
        finished = ray.get(self.coord.finished.remote())
        if self.interrupted:
            self.state = "interrupted"
        elif stranded or not finished:
            self.state = "incomplete"
            self.console.print(f"[yellow]incomplete: no live device left for pool(s) "
                               f"{', '.join(stranded) or '?'}; `fuzzfarm run --resume "
                               f"{self.out}` continues[/]")
        else:
            self.state = "completed"
        store.write_json(self.dir / "status.json", self.status(snap, meta["work_started"]))
        # every device fault: crashes and hangs (recorded here), build failures and
        # enqueue errors (recorded by the devices)
        faults = [{"unit_id": uid, "reason": reason}
                  for uid, reason in ray.get(self.coord.faults.remote())]
        first = snap.get("first_failure_at")
        meta.update(status=self.state, finished=time.time(), totals=totals, faults=faults,
                    given_up=self.dead, first_failure_s=None if first is None else
                    round(first - self.t_begin, 1))

    def _close(self, meta: dict) -> None:
        """Whatever happened: the status file's state and the metadata written, Ray shut
        down, the temporary files of lost writers removed, the results compacted, the lock
        released."""
        import ray

        from fuzzfarm.store import dataset as store
        if self.saved:
            try:
                status = store.read_status(self.out, self.run_id) or {}
                if status.get("state") != self.state:
                    store.write_json(self.dir / "status.json",
                                     {**status, "run_id": self.run_id,
                                      "campaign": self.c.name, "state": self.state,
                                      "updated": time.time()})
            except store.StoreError:
                pass
            store.write_run(self.out, self.run_id, meta)
        ray.shutdown()
        try:
            # a writer killed mid-write during the run (a lost actor or node) left its
            # temporary file; no writer of this campaign is left (and the lock keeps
            # others out): none stays in a finished results directory
            removed = store.remove_orphans(self.out)
            if removed:
                self.console.print(f"removed {removed} unfinished temporary file(s) of "
                                   f"writers this campaign lost")
            self._compact(min_files=2)
        finally:
            self.lock.release()


def _release_memory() -> None:
    """Hand the memory a compaction freed back to the system: pyarrow's pool keeps freed
    pages for reuse, and glibc's per-thread arenas keep what the reading threads freed, so
    a days-long driver's RSS would otherwise ratchet up at each compaction (issue 18)."""
    import ctypes

    import pyarrow as pa
    try:
        pa.default_memory_pool().release_unused()
    except (AttributeError, NotImplementedError):
        pass
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):     # not glibc
        pass


def _compact_results(run: "CampaignRun", min_files: int) -> None:
    """store.compact of the campaign's results directory; a failure is one line, never
    the end of the campaign (the per-unit files stay readable as they are)."""
    from fuzzfarm.store import dataset as store
    try:
        store.compact(run.out, min_files=min_files)
    except (OSError, store.StoreError, ValueError) as exc:
        run.console.print(f"[yellow]results not compacted: {exc}[/]")
    _release_memory()
    import ray
    coord = run.coord
    # the journal: the units in flight, not every one issued (while the campaign's Ray
    # runs: the last compaction comes after ray.shutdown, and must not start Ray again)
    if coord is not None and ray.is_initialized():
        try:
            ray.get(coord.trim_journal.remote())
        except (ray.exceptions.RayError, store.StoreError) as exc:
            run.console.print(f"[yellow]journal not trimmed: {exc}[/]")


def run_options(opts, console=None) -> dict:
    """Run the campaign a ``fuzzfarm run`` without ``--campaign`` describes
    (``fuzzfarm.orchestrate.run.RunOptions``, through ``fuzzfarm.orchestrate.campaign.of_run_options``); returns
    the run's metadata as ``run_campaign`` does."""
    from fuzzfarm.orchestrate.campaign import of_run_options
    return run_campaign(of_run_options(opts), opts.out, address=opts.address, console=console,
                        num_cpus=opts.num_cpus, makers=opts.makers, in_flight=opts.in_flight,
                        profile_dir=opts.profile_dir, per_recipe=opts.per_recipe,
                        recipes_per_unit=opts.recipes_per_unit, screen=opts.screen,
                        inputs=opts.inputs)


def run_campaign(campaign, out: str, **options) -> dict:
    """Run (or with ``run_id`` resume) ``campaign`` (a fuzzfarm.orchestrate.campaign.Campaign) into the
    results directory ``out``; returns the session's metadata (``run_id``, ``status``:
    completed | incomplete | interrupted | abandoned, ``totals`` per device actor,
    ``faults``).  Options: ``address`` (a running cluster; default: start a local one
    with this machine's devices), ``run_id`` (resume that campaign), ``dashboard``,
    ``console`` (a rich Console), ``num_cpus``, ``makers``, ``in_flight``,
    ``profile_dir``, ``status_interval`` (seconds), ``per_recipe``, ``recipes_per_unit``,
    ``screen`` ('auto': binary32 units of a built-in with a device reference are screened
    on the device, oracle.device_screen; 'host': every result judged on the host),
    ``inputs`` ('auto': drawn units of binary32 one-input built-ins make their inputs on
    the device, fuzzfarm.device.generate; 'host': every unit's inputs from the host),
    ``started`` (a ``time.time()``: when the caller started, the time budget's start;
    default: this call's).
    Raises fuzzfarm.orchestrate.campaign.CampaignError for selectors that match no device.  A kernel
    that does not build, an OpenCL error, a crashed or hung unit is a device fault: a
    finding (severity "fault"), listed in ``faults``; the campaign goes on."""
    return CampaignRun(campaign, out, **options).run()
