"""A real 3-node Ray cluster on this machine (tests/ray_cluster.py): pin work to each node by
its device resource, SIGKILL a worker node and see Ray notice, stop with nothing left."""
import os
import subprocess
import sys
import time

import pytest

from ray_cluster import LoopbackCluster, loopback_cluster

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(240)]

NODES = [{"num_cpus": 1, "resources": {f"fuzzfarm_dev_test_{i}": 1}} for i in range(3)]

#: Seconds from SIGKILL to the GCS marking the node dead: measured 2.1-2.5 s on 2 busy
#: cores with FAST_HEALTH_CHECK (Ray's defaults: 13.6 s); the rest is margin.
DEATH_S = 10.0
#: Seconds from SIGKILL of a restartable actor's process to its next call succeeding:
#: measured 1.35-2.7 s.
RESTART_S = 20.0


def test_loopback_cluster_pin_kill_and_stop():
    import ray
    from ray.exceptions import ActorUnavailableError, ActorUnschedulableError, RayActorError
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    cluster = LoopbackCluster(NODES)
    try:
        cluster.start(timeout=150)
        ids = cluster.node_ids()
        assert len(set(ids)) == 3
        temp_dir = cluster.temp_dir

        with cluster.driver():
            assert {n["NodeID"] for n in ray.nodes() if n["Alive"]} >= set(ids)
            # The driver attaches to the head's raylet: killing a worker node spares it.
            assert ray.get_runtime_context().get_node_id() == ids[0]

            @ray.remote(num_cpus=0)
            def node_of_task():
                return ray.get_runtime_context().get_node_id()

            # A task pinned to each node by that node's device resource runs there.
            refs = [node_of_task.options(resources={f"fuzzfarm_dev_test_{i}": 1}).remote()
                    for i in range(3)]
            assert ray.get(refs, timeout=60) == ids

            @ray.remote(num_cpus=0)
            class Pinned:
                def where(self):
                    return ray.get_runtime_context().get_node_id(), os.getpid()

                def sleep(self, s):
                    time.sleep(s)

            def pinned(i, max_restarts):
                return Pinned.options(
                    max_restarts=max_restarts, max_task_retries=0,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(ids[i], soft=False),
                ).remote()

            # An actor SIGKILLed on a live node restarts: the call in flight fails with
            # RayActorError (ActorUnavailableError, seen), a call made while it restarts
            # blocks until it is back or fails with ActorUnavailableError ("The actor is
            # restarting", seen on a loaded machine); once back, calls succeed.
            a1 = pinned(1, max_restarts=2)
            a2 = pinned(2, max_restarts=-1)
            (n1, pid1), (n2, _) = ray.get([a1.where.remote(), a2.where.remote()], timeout=60)
            assert (n1, n2) == (ids[1], ids[2])
            in_flight = a1.sleep.remote(60)
            time.sleep(0.5)
            t0 = time.monotonic()
            os.kill(pid1, 9)
            with pytest.raises(RayActorError):
                ray.get(in_flight, timeout=60)
            while True:         # a call made while it restarts may fail fast, too
                try:
                    n1_again, pid1_again = ray.get(a1.where.remote(), timeout=RESTART_S)
                    break
                except ActorUnavailableError:
                    assert time.monotonic() - t0 < RESTART_S
                    time.sleep(0.1)
            restart_s = time.monotonic() - t0
            assert n1_again == ids[1] and pid1_again != pid1
            print(f"actor restart: {restart_s:.2f} s")

            # SIGKILL worker node 2 (the whole node, its actor's process included).
            in_flight = a2.sleep.remote(60)
            time.sleep(0.5)
            cluster.kill_node(2)
            assert cluster.processes(2) == []
            dead_s = cluster.wait_node_dead(2, timeout=DEATH_S + 30)
            print(f"startup {cluster.startup_s:.2f} s, node death seen after {dead_s:.2f} s")
            assert dead_s < DEATH_S
            assert "health check" in cluster.node_info(2).death_info.reason_message
            alive = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
            assert ids[2] not in alive and {ids[0], ids[1]} <= alive

            # The actor hard-pinned there (max_restarts=-1): the call in flight fails with
            # ActorUnavailableError or, once the node is dead, ActorUnschedulableError (a
            # RayError, not a RayActorError); every later call fails at once with the latter.
            with pytest.raises((ActorUnavailableError, ActorUnschedulableError)):
                ray.get(in_flight, timeout=30)
            t0 = time.monotonic()
            with pytest.raises(ActorUnschedulableError):
                ray.get(a2.where.remote(), timeout=30)
            assert time.monotonic() - t0 < 5

            # The rest of the cluster still works.
            ref = node_of_task.options(resources={"fuzzfarm_dev_test_1": 1}).remote()
            assert ray.get(ref, timeout=60) == ids[1]
    finally:
        cluster.stop()

    assert cluster.leftovers() == []
    assert not os.path.exists(temp_dir)
    assert not ray.is_initialized()
    cluster.stop()                                  # idempotent


head_only = loopback_cluster([{"num_cpus": 1, "resources": {"fuzzfarm_dev_test_0": 1}}])


def test_fixture_and_subprocess_driver(head_only):
    # A subprocess driver finds the cluster through driver_env() alone.
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(head_only.driver_env())
    code = ("import ray; ray.init(log_to_driver=False); "
            "f = ray.remote(lambda: ray.get_runtime_context().get_node_id()); "
            "print(ray.get(f.options(resources={'fuzzfarm_dev_test_0': 1}).remote()))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == head_only.node_ids()[0]
