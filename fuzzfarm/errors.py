"""One error hierarchy for the whole project; the CLI maps it to exit statuses in one place
(``fuzzfarm.cli``: one line ``Error: ...``, then ``exit_status``).

    FuzzfarmError
    ├── BadInput (ValueError, exit 2)        an unknown function, device, option; a malformed
    │                                        campaign; an argument outside an API's domain
    ├── CorruptResults (ValueError, exit 2)  a results directory that cannot be read
    ├── SpecDataError (ValueError, exit 1)   edgecases/data is malformed: a bug of fuzzfarm
    ├── DeviceFault (RuntimeError, exit 1)   the device said no (a kernel that does not build)
    └── NotReproducible (RuntimeError, exit 1)  a finding that no longer reproduces

Each module keeps its own class for what it raises (CampaignError, StoreError, ...), a
subclass of one of these; ``except ValueError`` keeps working where it did.  At the base of
the layers: imports nothing of the project.
"""
from __future__ import annotations

__all__ = ["FuzzfarmError", "BadInput", "CorruptResults", "SpecDataError", "DeviceFault",
           "NotReproducible"]


class FuzzfarmError(Exception):
    """Any error fuzzfarm raises on purpose; ``exit_status`` is what the CLI exits with."""

    exit_status = 1


class BadInput(FuzzfarmError, ValueError):
    """Input the user (or a caller) must fix: named in one line."""

    exit_status = 2


class CorruptResults(FuzzfarmError, ValueError):
    """A results directory, journal or status file that cannot be read."""

    exit_status = 2


class SpecDataError(FuzzfarmError, ValueError):
    """The specification data (edgecases/data) are malformed: a bug of fuzzfarm, not of a
    device or of the user's input."""

    exit_status = 1


class DeviceFault(FuzzfarmError, RuntimeError):
    """The device or its driver refused or failed (recorded as a finding where it happens
    inside a run)."""

    exit_status = 1


class NotReproducible(FuzzfarmError, RuntimeError):
    """A stored finding that the device no longer reproduces."""

    exit_status = 1
