"""A real multi-node Ray cluster on one machine, for tests: ``LoopbackCluster``.

A head and worker nodes, each started with ``ray start --block`` as a subprocess in a session
of its own, each with its own custom resources (one OpenCL device resource per node, say).
Tests pin work to a node by its resource, SIGKILL a node and wait for the GCS to notice::

    from ray_cluster import LoopbackCluster       # tests/ is on sys.path under pytest

    nodes = [{"num_cpus": 1, "resources": {f"fuzzfarm_dev_test_{i}": 1}} for i in range(3)]
    with LoopbackCluster(nodes) as cluster:        # start(): 6-21 s for 3 nodes on 2 cores
        ids = cluster.node_ids()                   # Ray node ids, in the order of nodes
        with cluster.driver() as ray:              # ray.init(address=...) .. ray.shutdown()
            ...
            cluster.kill_node(2)                   # SIGKILL: the whole node, its workers too
            cluster.wait_node_dead(2)              # -> s from the kill: 2.1-2.5 s measured
    # stop(): every process of every node gone, temp dir removed

A subprocess driver (``fuzzfarm run`` in a subprocess, say) gets ``cluster.driver_env()``
(``RAY_ADDRESS`` and ``BASE_ENV``) added to its environment.  As a pytest fixture, in a
conftest.py or a test module::

    from ray_cluster import loopback_cluster
    cluster3 = loopback_cluster(nodes, scope="module")     # a fixture named cluster3

Findings with Ray 2.60 on this machine (2 cores, 24 GiB, shared with other people's Ray
tests), which shaped this module; tests/test_ray_cluster.py checks the behaviour:

1. Starting.  ``ray start --head --port P --block ...`` and two ``ray start --address
   127.0.0.1:P --block ...`` on one machine do give three alive nodes in ``ray.nodes()`` of
   a driver ``ray.init(address="127.0.0.1:P")``.  What must be set or differ:

   * ``RAY_AUTH_MODE=disabled`` in the environment of every node (``BASE_ENV``).  Ray 2.60's
     ``ray start --head`` turns token authentication on by itself when ``~/.ray/auth_token``
     exists (any local ``ray.init()`` on the machine writes one; it exists here) while
     ``ray start --address`` does not: the worker nodes then die at once with
     ``AuthenticationError: InvalidAuthToken`` (seen).  Drivers connect either way (a driver
     with no ``RAY_AUTH_MODE``, or in token mode with a bogus token: both checked), but
     ``driver()`` and ``driver_env()`` set it too.
   * ``--temp-dir``: one per NODE (``<cluster dir>/n<i>``, the cluster dir a short
     ``/tmp/ffrc-*``: Unix socket paths are limited to 107 bytes).  With one temp dir shared
     by nodes started at the same time, two raylets pick the same socket name
     (``sockets/plasma_store.1``), one fails with "bind: Address already in use" and its
     ``ray start`` gives up after 30 s ("The current node timed out during startup"): seen
     twice.  Worker nodes still use the head's session name.  Off /tmp/ray, the cluster
     also stays away from the default ``ray start`` of other people.
   * Head-only ports whose defaults clash with other Ray instances of the machine, given
     free ports (bind to port 0): ``--port`` (GCS; default 6379), ``--ray-client-server-port``
     (10001 whenever ray[client] is installed, and accepted only then; 0 is rejected) and ``--dashboard-port`` (8265:
     the dashboard process runs even with ``--include-dashboard false``, in its minimal
     mode, with ``--port-retries=0``).  The GCS port is checked to be listened on by the
     head's own processes (/proc/net/tcp); if the GCS exits (port taken in the meantime) the
     cluster is restarted on fresh ports (tested: ~6 s lost).
   * Per node, ``--dashboard-agent-listen-port`` (52365 by default in ``ray start``) is
     passed as 0: the agent binds a free port.  Node manager, object manager, metrics
     export, metrics agent (dashboard agent gRPC) and runtime-env agent ports all default
     to 0 in Ray 2.60 (each binds a free port and reports it to the GCS): nothing to set.
     Worker ports: every raylet draws from 10002-19999 (shuffled) unless
     ``--min/max-worker-port`` or ``--worker-port-list`` are given; left so.
   * ``--node-ip-address 127.0.0.1`` is REWRITTEN by Ray to the machine's routable address
     (``resolve_ip_for_localhost``; 192.0.2.2 here); the servers listen on all interfaces,
     so ``127.0.0.1:P`` works for drivers and ``ray start --address``.  (The one switch
     that keeps 127.0.0.1, ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, refuses worker nodes.)
     All nodes share one address; a driver on the machine attaches to the head's raylet
     (Ray prefers the head among the nodes of its IP; asserted), so killing a worker node
     never takes the driver down.
   * ``--node-name <cluster tag>-<i>`` (a hidden ``ray start`` flag): how ``node_ids()``
     matches GCS nodes to ``nodes``, whatever their resources.
   * ``--include-log-monitor false`` (a process less per node; worker prints do not reach
     the driver) unless ``log_monitor=True``; ``--disable-usage-stats``.

2. Memory: ``--object-store-memory`` 256 MiB per node (``object_store_mb``; in /dev/shm,
   used lazily).  RSS summed per node (shared pages counted per process): head ~660 MiB
   (ray start, GCS, dashboard, client server, raylet, dashboard and runtime-env agents),
   worker node ~330 MiB (ray start, raylet, two agents), plus ~100 MiB per Ray worker
   process.  Three nodes fit on CI with room to spare.

3. Killing a node.  ``os.killpg(pgid, SIGKILL)`` on a ``ray start --block`` process group
   kills ray start, the raylet, the agents and the log monitor (and the GCS, dashboard,
   client server on the head) but NOT Ray's worker processes (tasks, actors): a worker
   puts itself in a process group of its own, in the same session.  Orphaned, they exit by
   themselves 1.1-2.5 s after their raylet (4 runs; once still there at 1.8 s).
   ``kill_node`` SIGKILLs the process group, then every process of the node's session
   (``start_new_session=True``: the session id is ray start's pid) until none is left.
   The GCS notices only through its health checks of the raylet: with Ray's defaults
   (``health_check_initial_delay_ms=5000, period_ms=3000, timeout_ms=10000,
   failure_threshold=5``: src/ray/common/ray_config_def.h; the four names are in Ray 2.60's
   gcs_server binary) the node is marked dead 13.6 s after the kill (measured twice).  With
   ``FAST_HEALTH_CHECK`` (``RAY_<name>`` env vars of the head's GCS): 2.1-2.5 s over 10
   runs, 1.0-1.9 s with ``failure_threshold=3``.  A killed raylet refuses connections, so
   each check fails at once and detection takes about ``failure_threshold * period_ms``;
   the 2 s ``timeout_ms`` and the threshold of 5 only matter for a live node that stops
   answering: it has to stay silent for ~10 s before it is declared dead, so a node
   starved by a busy machine is not (3 CPU hogs plus others' tests: no false death).
   ``death_info``: UNEXPECTED_TERMINATION, "health check failed due to missing too many
   heartbeats".  A task that needs the dead node's resource is not failed: it stays
   pending as infeasible (``ray.get`` times out).

4. Actors.  An actor pinned with ``NodeAffinitySchedulingStrategy(node_id, soft=False)``,
   ``max_restarts=-1``, on a node that is then killed: its call in flight fails when the
   GCS declares the node dead (~2 s), with ``ActorUnavailableError`` (a ``RayActorError``:
   "Socket closed") or ``ActorUnschedulableError`` (a ``RayError``, NOT a
   ``RayActorError``: "The node specified via NodeAffinitySchedulingStrategy doesn't exist
   any more or is infeasible, and soft=False was specified"), whichever comes first (both
   seen); a call submitted right after the kill fails then too, with the latter; every call
   after that fails at once (< 10 ms) with ``ActorUnschedulableError``.  No
   ``ActorDiedError``: the actor is never declared dead.  An actor SIGKILLed by pid on a
   LIVE node with ``max_restarts>0``: the call in flight raises ``ActorUnavailableError``
   ("Socket closed", 1.4-1.7 s after the kill); the next call blocks until the actor is
   back, or (loaded machine, seen once) fails fast with ``ActorUnavailableError`` "The
   actor is restarting", so retry it; from the kill to the first successful call: 1.35-2.7 s
   (15 runs).

5. Stopping.  SIGTERM to every process of every node's session, ``grace`` seconds (1 s),
   SIGKILL to whatever is left, reap, remove the temp dir; ``stop()`` takes ~1.3 s.
   SIGTERM alone is slow: 4 s after it, ray start, the GCS, raylets and runtime-env agents
   were still there, and a worker's ``ray start`` once took over 15 s.  ``stop()`` first
   shuts down this process's driver if it is connected to this cluster.  Zombies
   (grandchildren reparented to PID 1, reaped by it later) are dead and are not counted.
   If the process that started the cluster dies without ``stop()`` (pytest-timeout's
   SIGKILL, the OOM killer, a cancelled CI job), ``ray start --block`` nodes run on
   forever (seen: clusters of another session were left so); Ray's own fate sharing is
   not enough (ray start's children die with it, but the dashboard and runtime-env agents
   survive their raylet: seen).  So each cluster has a watchdog process (its own session)
   that SIGKILLs its nodes' sessions and removes the temp dir when its stdin reaches EOF:
   when ``stop()`` closes it, or when the owner dies (tested with SIGKILL: nothing left 1 s
   later).  ``atexit`` also stops clusters left running at a normal exit.

6. Startup of head + 2 workers until the GCS has all 3 alive: 5.7-8.2 s on a quiet machine,
   10-17 s with other people's Ray tests running, up to 21 s with 3 CPU hogs on top (15
   runs).  The GCS listens ~2.5 s after the head's ray start; the workers start then, in
   parallel with the rest of the head.  The 3-node test of test_ray_cluster.py: 18-32 s,
   ~40 s under the hogs; the whole file (plus a 1-node fixture test): 40-47 s.

NEVER use ``ray stop`` in tests: it kills every Ray process of the machine, other people's
included.  Everything here acts on the sessions this module started, only.
"""
from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path

__all__ = ["FAST_HEALTH_CHECK", "BASE_ENV", "LoopbackCluster", "loopback_cluster",
           "session_processes"]

#: GCS health-check settings (``RAY_<name>`` env vars, read by the GCS of the head).
FAST_HEALTH_CHECK = {
    "RAY_health_check_initial_delay_ms": "1000",
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_timeout_ms": "2000",
    "RAY_health_check_failure_threshold": "5",
}

#: Environment every node and every driver needs.
BASE_ENV = {
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
}

_RAY = str(Path(sys.executable).with_name("ray"))
_counter = itertools.count()

#: The watchdog of a cluster: reads the session ids of its nodes on stdin; at EOF (stop(), or
#: the process that started the cluster died, however: SIGKILL by pytest-timeout, the OOM
#: killer, a CI cancel) it SIGKILLs every process of those sessions and removes the temp
#: dirs it was given.  Without it a dead
#: owner leaves ``ray start --block`` nodes running forever (seen); Ray's own fate sharing
#: is not enough: ray start's children die with it, but the raylet's dashboard and
#: runtime-env agents survive it (seen).  It runs in a session of its own, away from
#: signals sent to its owner's process group.
_WATCHDOG = """
import os, shutil, signal, sys, time
lines = [line.strip() for line in sys.stdin]
sids = {int(line) for line in lines if line.isdigit()}
def members():
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[3]) in sids and fields[0] != "Z" and int(d) != os.getpid():
                yield int(d)
        except (OSError, ValueError, IndexError):
            pass
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    left = list(members())
    if not left:
        break
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.1)
for line in lines:
    if line.startswith("rm /tmp/"):
        shutil.rmtree(line[3:], ignore_errors=True)
"""

#: Clusters with processes: stopped at exit if their owner forgot.
_live: "weakref.WeakSet[LoopbackCluster]" = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for cluster in list(_live):
        with contextlib.suppress(Exception):
            cluster.stop()


def _has_ray_client() -> bool:
    """Whether ray[client] is installed: only then does the head start a client server
    (and only then does `ray start` accept ``--ray-client-server-port``)."""
    from ray._private.utils import get_ray_client_dependency_error
    return get_ray_client_dependency_error() is None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def session_processes(sid: int, include_zombies: bool = False) -> list[tuple[int, str, str]]:
    """(pid, state, command line) of every process whose session id is ``sid`` (/proc)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[3]) != sid:           # state ppid pgrp session
                continue
            if fields[0] == "Z" and not include_zombies:
                continue
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            out.append((int(d), fields[0], cmd or stat[stat.index("("):stat.rindex(")") + 1]))
        except (OSError, ValueError, IndexError):
            continue
    return out


def _listens(pids, port: int) -> bool:
    """Whether one of ``pids`` has a TCP socket listening on ``port`` (/proc/net/tcp*)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            for line in itertools.islice(f, 1, None):
                cols = line.split()
                if cols[3] == "0A" and int(cols[1].rpartition(":")[2], 16) == port:
                    inodes.add(f"socket:[{cols[9]}]")
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                        return True
    return False


def _gcs_client(address: str):
    from ray._raylet import GcsClient
    return GcsClient(address=address)


class LoopbackCluster:
    """A head and worker nodes started with ``ray start --block`` on 127.0.0.1.

    ``nodes[0]`` is the head; each dict: ``{"num_cpus": int, "resources": {name: float}}``
    (optional ``"num_gpus"``, ``"object_store_mb"``).  ``env``: extra environment of every
    node (after ``BASE_ENV`` and ``health_check``).  ``health_check``: the GCS health-check
    env vars (``FAST_HEALTH_CHECK`` by default; ``{}`` for Ray's defaults).
    """

    def __init__(self, nodes: list[dict], env: dict | None = None, object_store_mb=256,
                 health_check: dict | None = None, log_monitor: bool = False,
                 grace: float = 1.0, keep_temp: bool = False):
        if not nodes:
            raise ValueError("a cluster needs at least a head node")
        self.nodes = [dict(n) for n in nodes]
        self.object_store_mb = object_store_mb
        self.log_monitor = log_monitor
        self.grace = grace
        self.keep_temp = keep_temp or bool(os.environ.get("LOOPBACK_CLUSTER_KEEP"))
        self.env = dict(os.environ)
        self.env.update(BASE_ENV)
        self.env.update(FAST_HEALTH_CHECK if health_check is None else health_check)
        self.env.update(env or {})
        self.env.pop("RAY_ADDRESS", None)
        self.tag = f"lc{os.getpid()}x{next(_counter)}"
        self.address: str | None = None
        self.port: int | None = None
        self.temp_dir: str | None = None
        self.procs: list[subprocess.Popen | None] = [None] * len(nodes)
        self.killed_at: dict[int, float] = {}
        self.startup_s: float | None = None
        self._logs: list = []
        self._gcs = None
        self._node_ids: list[str] | None = None
        self._sids: set[int] = set()
        self._watchdog: subprocess.Popen | None = None

    # ------------------------------------------------------------------ start

    def _args(self, i: int) -> list[str]:
        n = self.nodes[i]
        mb = n.get("object_store_mb", self.object_store_mb)
        args = [_RAY, "start", "--block", "--node-ip-address", "127.0.0.1",
                "--node-name", f"{self.tag}-{i}",
                "--num-cpus", str(n.get("num_cpus", 1)),
                "--resources", json.dumps(n.get("resources", {})),
                "--object-store-memory", str(int(mb) * 1024 * 1024),
                "--temp-dir", os.path.join(self.temp_dir, f"n{i}"),
                "--dashboard-agent-listen-port", "0",
                "--disable-usage-stats"]
        if "num_gpus" in n:
            args += ["--num-gpus", str(n["num_gpus"])]
        if not self.log_monitor:
            args += ["--include-log-monitor", "false"]
        if i == 0:
            args += ["--head", "--port", str(self.port), "--include-dashboard", "false",
                     "--dashboard-port", str(_free_port())]
            if _has_ray_client():   # its server's port (10001) clashes; without ray[client]
                args += ["--ray-client-server-port", str(_free_port())]   # none is started
        else:
            args += ["--address", self.address]
        return args

    def _spawn(self, i: int) -> None:
        log = open(os.path.join(self.temp_dir, f"ray_start_{i}.log"), "ab")
        self._logs.append(log)
        if self._watchdog is None:
            self._watchdog = subprocess.Popen(
                [sys.executable, "-c", _WATCHDOG], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, text=True)
        self.procs[i] = subprocess.Popen(
            self._args(i), env=self.env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
        if i == 0 and not self.keep_temp:
            self._watchdog.stdin.write(f"rm {self.temp_dir}\n")
        self._watchdog.stdin.write(f"{self.procs[i].pid}\n")
        self._watchdog.stdin.flush()
        _live.add(self)

    def log(self, i: int, tail: int | None = 4000) -> str:
        """The end of node i's ``ray start`` output (all of it: ``tail=None``)."""
        try:
            text = Path(self.temp_dir, f"ray_start_{i}.log").read_text(errors="replace")
            return text if tail is None else text[-tail:]
        except (OSError, TypeError):
            return ""

    def _check_started(self) -> None:
        for i, p in enumerate(self.procs):
            if p is not None and p.poll() is not None and i not in self.killed_at:
                error = _HeadFailed if i == 0 else RuntimeError
                raise error(f"ray start of node {i} exited with {p.returncode}:\n"
                            f"{self.log(i)}")

    def start(self, timeout=120) -> "LoopbackCluster":
        """Start every node and wait until the GCS has them all alive.  A no-op on a started
        cluster (``with LoopbackCluster(...) as c: c.start()`` starts it once)."""
        if self.procs[0] is not None:
            return self
        t0 = time.monotonic()
        for attempt in range(3):
            try:
                self._start_once(t0 + timeout)
                break
            except _HeadFailed:         # its port taken in the meantime, say: new ports
                if attempt == 2 or time.monotonic() > t0 + timeout:
                    self.stop()
                    raise
                self.stop(grace=0)
            except BaseException:
                self.stop()
                raise
        self.startup_s = time.monotonic() - t0
        return self

    def _start_once(self, deadline: float) -> None:
        self.temp_dir = tempfile.mkdtemp(prefix="ffrc-", dir="/tmp")
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.killed_at = {}
        self._node_ids = None
        self._spawn(0)
        while True:                     # the GCS listens ~2.5 s after ray start
            self._check_started()
            head = self.processes(0, include_zombies=True)
            if any(st == "Z" and "gcs_server" in cmd for _, st, cmd in head):
                raise _HeadFailed(f"the GCS exited at once (port {self.port} taken?):\n"
                                  f"{self.log(0)}")
            if _listens([pid for pid, st, _ in head if st != "Z"], self.port):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"the GCS did not listen in time:\n{self.log(0)}")
            time.sleep(0.1)
        for i in range(1, len(self.nodes)):
            self._spawn(i)
        while True:
            self._check_started()
            with contextlib.suppress(Exception):
                if all(s == "ALIVE" for s in self._states().values()):
                    return
            if time.monotonic() > deadline:
                logs = "\n".join(f"--- node {i}:\n{self.log(i, 1500)}"
                                 for i in range(len(self.nodes)))
                raise TimeoutError(f"not all nodes alive in time: {self._states()}\n{logs}")
            time.sleep(0.2)

    # ------------------------------------------------------------- inspection

    def _infos(self) -> dict[int, object]:
        """index -> the newest GcsNodeInfo of node index (matched by --node-name)."""
        if self._gcs is None:
            self._gcs = _gcs_client(self.address)
        out = {}
        for info in self._gcs.get_all_node_info(timeout=10).values():
            prefix, _, idx = info.node_name.rpartition("-")
            if prefix == self.tag and idx.isdigit():
                i = int(idx)
                if i not in out or info.start_time_ms > out[i].start_time_ms:
                    out[i] = info
        return out

    def _states(self) -> dict[int, str]:
        infos = self._infos()
        return {i: ("ALIVE" if infos[i].state == 0 else "DEAD") if i in infos else "MISSING"
                for i in range(len(self.nodes))}

    def node_ids(self) -> list[str]:
        """Ray node ids (hex) in the order of ``nodes``."""
        if self._node_ids is None:
            infos = self._infos()
            self._node_ids = [infos[i].node_id.hex() for i in range(len(self.nodes))]
        return list(self._node_ids)

    def node_info(self, i: int):
        """Node i's GcsNodeInfo (state, death_info, ports...)."""
        return self._infos()[i]

    def processes(self, i: int, include_zombies: bool = False):
        """(pid, state, cmdline) of every process of node i (its session)."""
        p = self.procs[i]
        return [] if p is None else session_processes(p.pid, include_zombies)

    def driver_env(self) -> dict[str, str]:
        """Environment to add for a subprocess driver (``ray.init()`` finds the cluster)."""
        return {**BASE_ENV, "RAY_ADDRESS": self.address}

    @contextlib.contextmanager
    def driver(self, **init_kwargs):
        """``ray.init(address=...)`` in this process for the block, ``ray.shutdown()`` after."""
        import ray
        saved = {k: os.environ.get(k) for k in BASE_ENV}
        os.environ.update(BASE_ENV)
        init_kwargs.setdefault("log_to_driver", False)
        init_kwargs.setdefault("logging_level", "ERROR")
        try:
            ray.init(address=self.address, **init_kwargs)
            yield ray
        finally:
            ray.shutdown()
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    # ------------------------------------------------------------------ kill

    def kill_node(self, i: int, whole_session: bool = True) -> None:
        """SIGKILL node i: its ``ray start`` process group (ray start, raylet, agents; the
        GCS too for the head), then (``whole_session``) every other process of its session:
        Ray's worker processes, which sit in process groups of their own."""
        p = self.procs[i]
        if p is None:
            raise ValueError(f"node {i} was not started")
        self.killed_at[i] = time.monotonic()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(5)
        if whole_session:                       # until none is left (SIGKILL is async)
            deadline = time.monotonic() + 10
            while (left := session_processes(p.pid)) and time.monotonic() < deadline:
                for pid, _, _ in left:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(0.02)

    def wait_node_dead(self, i: int, timeout=60) -> float:
        """Wait until the GCS says node i is dead; seconds from ``kill_node(i)`` (or from
        now, if it was not killed by us) to the first poll that saw it dead."""
        t0 = self.killed_at.get(i, time.monotonic())
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(Exception):
                if self._states()[i] == "DEAD":
                    return time.monotonic() - t0
            if time.monotonic() > deadline:
                raise TimeoutError(f"node {i} not dead after {timeout} s")
            time.sleep(0.05)

    # ------------------------------------------------------------------ stop

    def _disconnect_driver(self) -> None:
        ray = sys.modules.get("ray")
        if ray is None or not ray.is_initialized() or self.port is None:
            return
        with contextlib.suppress(Exception):
            node = ray._private.worker._global_node
            if node is not None and node.gcs_address.rpartition(":")[2] == str(self.port):
                ray.shutdown()

    def _kill_all(self, grace: float) -> None:
        started = [p for p in self.procs if p is not None]
        if grace > 0:
            for p in reversed(started):          # workers first, the head last
                for pid, _, _ in session_processes(p.pid):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and any(session_processes(p.pid)
                                                      for p in started):
                for p in started:
                    p.poll()
                time.sleep(0.1)
        for _ in range(50):
            left = [pid for p in started for pid, _, _ in session_processes(p.pid)]
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            for p in started:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(0.2)
            if not left:
                break
            time.sleep(0.1)
        self.procs = [None] * len(self.nodes)
        self._gcs = None

    def leftovers(self) -> list[tuple[int, str, str]]:
        """Live processes of this cluster's sessions (after ``stop()``: should be [])."""
        return [x for sid in self._sids for x in session_processes(sid)]

    def stop(self, grace: float | None = None) -> None:
        """Kill everything this cluster started and remove its temp dir; idempotent.
        SIGTERM, ``grace`` seconds (``self.grace`` by default), SIGKILL."""
        self._sids |= {p.pid for p in self.procs if p}
        self._disconnect_driver()
        self._kill_all(self.grace if grace is None else grace)
        if self._watchdog is not None:           # EOF: it checks, finds nothing, exits
            with contextlib.suppress(OSError):
                self._watchdog.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._watchdog.wait(10)
            self._watchdog = None
        _live.discard(self)
        for log in self._logs:
            log.close()
        self._logs = []
        if self.temp_dir and not self.keep_temp:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None

    def __enter__(self) -> "LoopbackCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __del__(self):
        with contextlib.suppress(Exception):
            if any(self.procs):
                self.stop()


class _HeadFailed(RuntimeError):
    """ray start --head died during startup (a port taken in the meantime, say)."""


def loopback_cluster(nodes: list[dict], scope: str = "module", name: str | None = None,
                     **kwargs):
    """A pytest fixture that yields a started ``LoopbackCluster(nodes, **kwargs)`` and
    stops it afterwards.  Assign it to a name in a conftest.py or a test module::

        cluster3 = loopback_cluster([{"num_cpus": 1, "resources": {"dev_0": 1}}, ...])

        def test_x(cluster3):
            with cluster3.driver() as ray: ...

    It also sets ``BASE_ENV`` in ``os.environ`` while the cluster runs, so that a plain
    ``ray.init(address=cluster.address)`` works."""
    import pytest

    @pytest.fixture(scope=scope, name=name)
    def _cluster():
        saved = {k: os.environ.get(k) for k in BASE_ENV}
        os.environ.update(BASE_ENV)
        try:
            with LoopbackCluster(nodes, **kwargs) as cluster:
                yield cluster
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    return _cluster
