"""Placement: every OpenCL device of a Ray cluster is a custom resource of the node that
has it, so that its device actor starts there.

The resource is named ``fuzzfarm_dev_<fingerprint>_<i>`` (the i-th device of that
fingerprint on the node; ``resource_name``) and declared when the node starts
(``fuzzfarm node`` wraps ``ray start --resources``; ``local_resources`` gives the dict; a
driver that starts Ray itself declares its own devices).  The driver finds the devices of
the cluster in its nodes' resources (``cluster_devices``), asks each node to describe its
devices (``describe_node``), and starts each ``cluster.actor.DeviceActor`` on its node,
holding its resource (docs/design.md, decision 7: one device, one actor).
"""
from __future__ import annotations

import ray

__all__ = ["RESOURCE_PREFIX", "resource_name", "parse_resource", "local_resources",
           "cluster_devices", "describe_node"]

#: Prefix of the custom resource of an OpenCL device.
RESOURCE_PREFIX = "fuzzfarm_dev_"


def resource_name(fingerprint: str, i: int) -> str:
    """The Ray custom resource of the ``i``-th device of ``fingerprint`` on a node."""
    return f"{RESOURCE_PREFIX}{fingerprint}_{int(i)}"


def parse_resource(name: str) -> tuple[str, int] | None:
    """(fingerprint, i) of a device resource name, or None for another resource."""
    if not name.startswith(RESOURCE_PREFIX):
        return None
    fp, _, i = name[len(RESOURCE_PREFIX):].rpartition("_")
    return (fp, int(i)) if fp and i.isascii() and i.isdigit() else None


def local_resources(devices, every=None) -> dict[str, float]:
    """{resource name: 1.0} for ``devices`` (DeviceInfo of this machine), numbering each
    device among the devices of its fingerprint in ``every`` (default ``devices``; give
    ``list_devices()`` when ``devices`` is a selection, so that the number is the one
    ``DeviceActor`` finds)."""
    every = list(devices) if every is None else list(every)
    out = {}
    for d in devices:
        same = [e for e in every if e.fingerprint == d.fingerprint]
        i = next((k for k, e in enumerate(same) if e.index == d.index), 0)
        out[resource_name(d.fingerprint, i)] = 1.0
    return out


def cluster_devices() -> list[tuple[str, str, str, int]]:
    """(node id, resource name, fingerprint, i) of every device resource of every live
    node of the connected cluster, in node order."""
    out = []
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        for name in sorted(node.get("Resources", {})):
            parsed = parse_resource(name)
            if parsed:
                out.append((node["NodeID"], name, *parsed))
    return out


@ray.remote(num_cpus=0)
def describe_node() -> list:
    """The DeviceInfo of every OpenCL device of the node it runs on, in its enumeration
    order."""
    from fuzzfarm.device.discovery import list_devices
    return list_devices()
