"""Test-session settings shared by every test file.

Under pytest-xdist (``-n auto --dist loadgroup``, the README's test command) the tests
that use an OpenCL device or start a Ray cluster all go to one worker, in one group, one
after another as without xdist: they share the machine's cores with their own device
and Ray workers, and two of them at once would measure each other's load (budgets,
watchdogs).  The host-only tests -- the checker, the rules, the oracle -- are dealt out
to the other workers and run beside them.
"""
from __future__ import annotations

import pytest

#: The xdist group of every test marked ``device`` or ``cluster``.
DEVICE_GROUP = "device-and-cluster"


@pytest.hookimpl(tryfirst=True)     # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("device") or item.get_closest_marker("cluster"):
            item.add_marker(pytest.mark.xdist_group(DEVICE_GROUP))
