"""Test-session settings shared by every test file.

Under pytest-xdist (``-n auto --dist loadgroup``, the README's test command) the tests
that use an OpenCL device or start a Ray cluster all go to one worker, in one group, one
after another as without xdist: they share the machine's cores with their own device
and Ray workers, and two of them at once would measure each other's load (budgets,
watchdogs).  The host-only tests -- the checker, the rules, the oracle -- are dealt out
to the other workers and run beside them.
"""
from __future__ import annotations

import os

import pytest

#: The xdist group of every test marked ``device`` or ``cluster``.
DEVICE_GROUP = "device-and-cluster"


@pytest.hookimpl(tryfirst=True)     # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("device") or item.get_closest_marker("cluster"):
            item.add_marker(pytest.mark.xdist_group(DEVICE_GROUP))


@pytest.fixture(autouse=True, scope="session")
def _servers_of_the_tests_only(tmp_path_factory):
    """``fuzzfarm sweep`` asks a resident server first (orchestrate.resident, found in
    ``$XDG_RUNTIME_DIR/fuzzfarm``): the tests, and the processes they start, see only the
    servers they start themselves, never one their user left running."""
    old = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(tmp_path_factory.mktemp("runtime"))
    yield
    if old is None:
        os.environ.pop("XDG_RUNTIME_DIR", None)
    else:
        os.environ["XDG_RUNTIME_DIR"] = old
