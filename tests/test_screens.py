"""The catalogue's "device verdict" column (fuzzfarm.work.screens): what each target's
default device verdict is, and that it agrees with the device screens' own tests."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from edgecases import catalogue
from fuzzfarm.cli import main
from fuzzfarm.target import Target
from fuzzfarm.work.screens import DEVICE_VERDICTS, device_verdict


@pytest.mark.parametrize("name,precision,want", [
    ("sin", "binary32", "reference"), ("sin", "binary64", "reference"),
    ("pow", "binary16", "reference"), ("fabs", "binary32", "bit for bit"),
    ("fmod", "binary64", "bit for bit"), ("lgamma", "binary32", "rules"),
    ("nan", "binary64", "rules"), ("mix", "binary32", "reference"),
    ("mix", "binary64", "rules"), ("native_sin", "binary32", "measured"),
    ("length", "binary64", "reference"), ("convert_int_sat_rte(float)", "binary32",
                                          "bit for bit"),
])
def test_device_verdict_of_known_targets(name, precision, want):
    width = catalogue.function(name).widths[0] if name in catalogue.functions() else 1
    assert device_verdict(Target.parse(name, precision, width)) == want


def test_every_built_in_in_every_precision_has_a_device_verdict():
    for name in catalogue.functions():
        fn = catalogue.function(name)
        for p in fn.precisions:
            v = device_verdict(Target.parse(name, p, fn.widths[0]))
            assert v in DEVICE_VERDICTS and v != "host", (name, p, v)


def test_catalogue_lists_the_device_verdict():
    res = CliRunner().invoke(main, ["catalogue", "--json", "-f", "lgamma"])
    assert res.exit_code == 0, res.output
    got = {f["precision"]: f["device_verdict"] for f in json.loads(res.output)["functions"]}
    assert got == {"binary16": "rules", "binary32": "rules", "binary64": "rules"}
    table = CliRunner().invoke(main, ["catalogue", "-f", "sin", "-p", "binary32"],
                               env={"COLUMNS": "200"})
    assert "device verdict" in table.output and "reference" in table.output
