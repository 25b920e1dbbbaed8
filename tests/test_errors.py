"""One error hierarchy (fuzzfarm.errors) and the one place the CLI maps it to exit
statuses (issue 16)."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from fuzzfarm import errors
from fuzzfarm.cli import main


def _classes():
    from edgecases.catalogue import CatalogueError
    from edgecases.modality import ModalityError
    from edgecases.predicates import InvalidCondition
    from edgecases.results import InvalidResult
    from fuzzfarm.orchestrate.campaign import CampaignError
    from fuzzfarm.device.discovery import DeviceSelectionError
    from fuzzfarm.device.runner import KernelBuildError
    from fuzzfarm.verdict.geometric import GeometricError
    from fuzzfarm.report.repro import NotReproducible, ReproError
    from fuzzfarm.orchestrate.run import UsageError
    from fuzzfarm.store.dataset import StoreError
    from fuzzfarm.orchestrate.sweep import SweepError
    from fuzzfarm.report.triage import TriageError
    from strategies import InvalidArgument
    return {
        errors.BadInput: [CampaignError, DeviceSelectionError, GeometricError, ReproError,
                          UsageError, SweepError, TriageError, InvalidArgument],
        errors.CorruptResults: [StoreError],
        errors.SpecDataError: [CatalogueError, ModalityError, InvalidCondition, InvalidResult],
        errors.DeviceFault: [KernelBuildError],
        errors.NotReproducible: [NotReproducible],
    }


def test_every_error_class_has_one_base():
    for base, classes in _classes().items():
        for cls in classes:
            assert issubclass(cls, base) and issubclass(cls, errors.FuzzfarmError), cls
    # the old bases still hold for callers that catch them
    assert issubclass(errors.BadInput, ValueError)
    assert issubclass(errors.DeviceFault, RuntimeError)


@pytest.mark.parametrize("exc, status", [
    (errors.BadInput("--device 'x' matches no OpenCL device"), 2),
    (errors.CorruptResults("results directory 'r' is corrupt:\n  truncated"), 2),
    (errors.SpecDataError("functions.toml: sin: bad"), 1),
    (errors.DeviceFault("building k_dot failed"), 1),
    (errors.NotReproducible("passes now"), 1),
])
def test_the_cli_maps_the_hierarchy_to_one_line_and_an_exit_status(exc, status):
    @click.command("boom")
    def boom():
        raise exc
    main.add_command(boom)
    try:
        res = CliRunner().invoke(main, ["boom"])
    finally:
        main.commands.pop("boom")
    assert res.exit_code == status
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in res.output
