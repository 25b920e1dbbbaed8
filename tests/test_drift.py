"""Drift jobs (campaign ``source = "drift"``, fuzzfarm.work.drift): per built-in a fixed
sample of 2^20 inputs even by binade over the finite range, the same units on every run of
the same seed; binary16 built-ins of one argument swept whole."""
from __future__ import annotations

import numpy as np
import pytest

from fuzzfarm.orchestrate import campaign
from fuzzfarm.orchestrate.scheduler import Scheduler, Ticket, Wait, streams_for
from fuzzfarm.target import Target
from fuzzfarm.work import drift
from fuzzfarm.work.make import draw, make_inputs
from fuzzfarm.work.unit import Drawn, IndexRange


def _units(text: str, capabilities=("binary16", "binary32", "binary64")) -> list:
    s = Scheduler(streams_for(campaign.loads(text), "p", list(capabilities)))
    s.add_device("d", "p")
    out = []
    while (t := s.lease("d")) is not None and not isinstance(t, Wait):
        out.append(t)
    return out


JOB = '[[jobs]]\nsource = "drift"\nfunctions = ["sin", "ldexp"]\nprecisions = ["binary16", "binary32"]\n'


def test_a_drift_job_is_a_fixed_sample_per_built_in():
    tickets = _units("seed = 3\n" + JOB)
    by_target: dict = {}
    for t in tickets:
        by_target.setdefault(t.unit.target, []).append(t.unit)
    sin16 = Target("sin", "binary16")
    (whole,) = by_target.pop(sin16)
    assert isinstance(whole.source, IndexRange) and whole.source.count == 1 << 16
    for target, units in by_target.items():
        assert len(units) == drift.DRIFT_UNITS, target
        assert sum(u.size for u in units) == drift.DRIFT_INPUTS
        for u in units:
            assert isinstance(u.source, Drawn) and u.source.recipes is not None
            assert draw(u) is u                     # never drawn again
    # the same seed: the same units, recipes included; another seed: others
    again = _units("seed = 3\n" + JOB)
    assert [t.unit.source for t in again] == [t.unit.source for t in tickets]
    assert [t.unit.source.recipes for t in again if isinstance(t.unit.source, Drawn)] == \
        [t.unit.source.recipes for t in tickets if isinstance(t.unit.source, Drawn)]
    other = _units("seed = 4\n" + JOB)
    assert [t.unit.source for t in other] != [t.unit.source for t in tickets]
    # a resumed campaign's journal keeps the fixed recipes
    for t in tickets:
        back = Ticket.from_json(t.to_json())
        assert back == t and getattr(back.unit.source, "recipes", None) == \
            getattr(t.unit.source, "recipes", None)


def test_its_inputs_are_even_by_binade_and_the_same_every_time():
    t = Target("exp", "binary32")
    u = drift.drift_unit("u", t, 0, 11)
    x = make_inputs(u)["x"]
    assert np.array_equal(x, make_inputs(drift.drift_unit("u", t, 0, 11))["x"])
    assert len(x) == drift.DRIFT_UNIT_INPUTS
    field = (x >> 23) & 0xFF
    counts = np.bincount(field, minlength=256)
    assert (counts[1:255] > 0).all()                # every normal binade
    assert counts[0] > 0 and counts[255] == 0       # subnormals; no inf or NaN
    mean = counts[1:255].mean()
    assert counts[1:255].min() > mean / 2 and np.median(counts[1:255]) < 1.5 * mean
    assert 0.4 < (x >> 31).mean() < 0.6              # both signs


@pytest.mark.parametrize("text, key, words", [
    ('source = "drift"\nfunctions = ["sin"]\nunits = 2', "units", "sample is fixed"),
    ('source = "drift"\nfunctions = ["sin"]\nwidths = [4]', "widths", "widths must be [1]"),
    ('source = "drift"\nfunctions = ["sin", "convert_int(float)"]', "functions",
     "no conversion"),
    ('source = "drift"\nfunctions = ["dot"]', "functions", "no conversion or geometric"),
])
def test_a_malformed_drift_job_is_one_line_at_its_key(text, key, words):
    with pytest.raises(campaign.CampaignError) as exc:
        campaign.loads("[[jobs]]\n" + text + "\n", "c.toml")
    assert exc.value.key == f"jobs[1].{key}" and words in exc.value.message


@pytest.mark.device
@pytest.mark.cluster
def test_a_drift_job_runs_on_the_default_device(tmp_path):
    import subprocess
    import sys

    from devices import require_device, selector
    from fuzzfarm.store import dataset as store
    info = require_device()
    camp = tmp_path / "c.toml"
    camp.write_text('seed = 5\n[[jobs]]\nsource = "drift"\nfunctions = ["cbrt"]\n')
    out = tmp_path / "res"
    run = subprocess.run([sys.executable, "-m", "fuzzfarm", "run", "--campaign", str(camp),
                          "-d", selector(info), "-o", str(out), "--log-format", "text"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode in (0, 1), run.stderr[-2000:]
    stats = store.read_stats(out).to_pylist()
    assert len(stats) == drift.DRIFT_UNITS
    assert sum(r["inputs_tested"] for r in stats) == drift.DRIFT_INPUTS
    assert all(r["max_ulp_error"] is not None for r in stats)
