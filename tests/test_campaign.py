"""Campaign files (fuzzfarm.orchestrate.campaign): the examples load, defaults, round trips, and every
bad file is one CampaignError line naming the key and the line at fault.  No device, no Ray."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzfarm.orchestrate import campaign
from fuzzfarm.orchestrate.campaign import SCHEMA, Campaign, CampaignError, from_options, load, loads
from fuzzfarm.orchestrate.run import UsageError, targets_for

CAMPAIGNS = Path(__file__).resolve().parent.parent / "cluster" / "campaigns"

MINIMAL = """\
[budget]
time = "10m"

[[jobs]]
functions = ["sinpi"]
"""


# --------------------------------------------------------------------------- known good

@pytest.mark.parametrize("name", ["example.toml", "nightly.toml"])
def test_example_files_load_and_round_trip(name):
    camp = load(CAMPAIGNS / name)
    assert camp.path == str(CAMPAIGNS / name)
    assert camp.text == (CAMPAIGNS / name).read_text()
    assert camp.jobs and all(j.targets for j in camp.jobs)
    assert [j.number for j in camp.jobs] == list(range(1, len(camp.jobs) + 1))
    for job in camp.jobs:
        assert camp.text.splitlines()[job.line - 1].strip() == "[[jobs]]"
    back = Campaign.from_dict(json.loads(json.dumps(camp.to_dict())))
    assert back == camp
    assert back.to_dict() == camp.to_dict()


def test_example_documents_every_key():
    """example.toml is the user's reference: every key of the schema appears in it (set,
    or commented out where it excludes another), with a comment."""
    text = (CAMPAIGNS / "example.toml").read_text()
    for table, keys in SCHEMA.items():
        for key in keys:
            if table == "" and key in ("budget", "unit", "jobs"):
                pat = rf"^\[+{key}\]+"
            else:
                pat = rf"^#?\s*{key}\s*=.*#"
            assert re.search(pat, text, re.M), (table, key)


def test_nightly_is_what_a_night_runs():
    camp = load(CAMPAIGNS / "nightly.toml")
    assert camp.time_budget == 6 * 3600
    by = {j.source: j for j in camp.jobs}
    assert set(by) == {"catalogue", "recipes", "sweep", "drift"}
    assert by["drift"].seed == 29 and by["drift"].finite   # the same inputs every night
    from edgecases import catalogue
    assert {t[0] for t in by["catalogue"].targets} == set(catalogue.functions())
    assert {t[1] for t in by["catalogue"].targets} == {"binary32", "binary64"}
    assert len(by["recipes"].build_options) == 2 and not by["recipes"].finite
    assert by["sweep"].targets == tuple((f, "binary32", 1, "opencl-c")
                                        for f in ("sinpi", "cospi", "tanpi"))
    assert not camp.finite


def test_minimal_file_and_defaults():
    camp = loads(MINIMAL, "somewhere/my-night.toml")
    assert camp.name == "my-night"
    assert 0 <= camp.seed < 2**24
    assert camp.devices == ("all",)
    assert camp.out is None and camp.input_budget is None and camp.time_budget == 600
    assert (camp.unit_inputs, camp.unit_seconds, camp.unit_min_inputs, camp.unit_max_inputs,
            camp.unit_timeout, camp.max_restarts) == (None, 0.5, 1024, 1 << 26, 300.0, 8)
    (job,) = camp.jobs
    assert (job.number, job.name, job.source, job.build_options, job.inputs, job.units,
            job.devices, job.chunk_bits, job.line) == (1, "job1", "recipes", ("",), None,
                                                       None, (), 22, 4)
    assert job.targets == (("sinpi", "binary32", 1, "opencl-c"),)
    assert not job.finite and not camp.finite
    assert loads(MINIMAL).name == "campaign"


def test_job_seeds_are_derived_stably():
    text = "seed = 5\n" + MINIMAL + '\n[[jobs]]\nfunctions = ["cospi"]\n'
    a, b = loads(text), loads(text)
    assert [j.seed for j in a.jobs] == [j.seed for j in b.jobs]
    assert a.jobs[0].seed != a.jobs[1].seed
    other = loads(text.replace("seed = 5", "seed = 6"))
    assert [j.seed for j in other.jobs] != [j.seed for j in a.jobs]
    # the same in a fresh interpreter (no hash(), no per-process state)
    code = ("from fuzzfarm.orchestrate.campaign import loads; import sys; "
            "print([j.seed for j in loads(sys.stdin.read()).jobs])")
    out = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == str([j.seed for j in a.jobs])
    assert loads(text.replace('["cospi"]', '["cospi"]\nseed = 0')).jobs[1].seed == 0


def test_resolution_and_finite_jobs():
    text = """\
name = "n.1"
devices = ["pocl", "0:1"]

[[jobs]]
name = "a"
source = "catalogue"
functions = ["sinpi", "convert_int_sat_rte(float)"]
precisions = ["float", "double", "binary32"]
widths = [1, 4]
build_options = ["", "  -cl-denorms-are-zero  ", "-cl-denorms-are-zero"]
devices = ["pocl"]

[[jobs]]
source = "recipes"
functions = ["math"]
units = 3

[[jobs]]
source = "sweep"
functions = ["sin", "pow"]
precisions = ["half"]
chunk_bits = 16
"""
    camp = loads(text)
    a, b, c = camp.jobs
    assert camp.finite and camp.time_budget is None
    assert a.targets == tuple(targets_for(["sinpi", "convert_int_sat_rte(float)"],
                                          ["binary32", "binary64"], [1, 4]))
    assert a.build_options == ("", "-cl-denorms-are-zero") and a.devices == ("pocl",)
    assert b.name == "job2" and b.units == 3 and b.finite
    assert c.targets == (("sin", "binary16", 1, "opencl-c"), ("pow", "binary16", 1, "opencl-c")) \
        and c.chunk_bits == 16
    assert camp.line_of("devices") == 2
    assert camp.line_of("jobs[2]") == 13 and camp.line_of("jobs[2].units") == 16
    assert camp.line_of("jobs[3].devices") == 18        # absent: its table's line
    assert camp.line_of("nothing.here") is None
    err = camp.error("jobs[1].devices", "'pocl' matches no device of the cluster")
    assert isinstance(err, CampaignError) and err.line == 11
    assert str(err) == "<campaign>:11: jobs[1].devices: 'pocl' matches no device of the cluster"


def test_locator_tricky_text():
    """Quoted and dotted keys, table headers inside multi-line strings, comments in arrays,
    inline tables and CRLF line ends do not confuse the key locator."""
    text = """\
out = '''
[[jobs]]
functions = "not a key"
'''
budget.time = "1h"   # a dotted key
"unit" = { seconds = 0.25 }

[[jobs]]
"functions" = [ # the list
  "sinpi", # one
  "cospi",
]
build_options = ["-cl-fast-relaxed-math"]

[[ jobs ]]
functions = ["sin"]
name = "x"
"""
    for t in (text, text.replace("\n", "\r\n")):
        camp = loads(t)
        assert camp.unit_seconds == 0.25 and camp.time_budget == 3600
        assert [camp.line_of(k) for k in ("out", "budget", "budget.time", "unit",
                                          "unit.seconds", "jobs", "jobs[1]",
                                          "jobs[1].functions", "jobs[1].build_options",
                                          "jobs[2]", "jobs[2].name")] == \
            [1, 5, 5, 6, 6, 8, 8, 9, 13, 15, 17]


def test_from_options():
    camp = from_options("sinpi,math", "float,binary64", "1,2", "-cl-denorms-are-zero",
                        None, 90.0, 42)
    (job,) = camp.jobs
    assert job.source == "recipes" and job.seed == 42 and not job.finite
    assert job.targets == tuple(targets_for(
        list(dict.fromkeys(["sinpi"] + [t[0] for t in job.targets])),
        ["binary32", "binary64"], [1, 2]))
    assert job.build_options == ("-cl-denorms-are-zero",)
    assert (camp.devices, camp.time_budget, camp.seed, camp.path, camp.text) == \
        (("all",), 90.0, 42, "<options>", "")
    assert from_options(None, "binary32", "1", "", "pocl", 5, 1).devices == ("pocl",)
    assert Campaign.from_dict(json.loads(json.dumps(camp.to_dict()))) == camp
    assert camp.line_of("devices") is None
    assert str(camp.error("devices", "no")) == "<options>: devices: no"


@pytest.mark.parametrize("args, option", [
    (("sinpi,nosuch", "binary32", "1", ""), "--functions"),
    (("sinpi", "quad", "1", ""), "--precisions"),
    (("sinpi", "binary32", "1,5", ""), "--widths"),
    (("sinpi", "binary32", "1", "fast please"), "--build-options"),
    (("cross", "binary32", "2", ""), "--widths"),
])
def test_from_options_errors_name_the_option(args, option):
    with pytest.raises(UsageError, match=re.escape(option)):
        from_options(*args, None, 60.0, 1)


# --------------------------------------------------------------------------- known bad

JOB = '[[jobs]]\nfunctions = ["sinpi"]\n'

BAD = [
    # (id, toml text, key, line, words in the message)
    ("syntax", 'seed = 1\n[budget]\ntime = \n', None, 3, "not valid TOML"),
    ("syntax-eof", 'seed = 1\ndevices = ["a",\n', None, 3, "not valid TOML"),
    ("unknown-top", 'budgt = "1h"\n' + JOB, "budgt", 1,
     "unknown key 'budgt'; known: name, seed, out, devices, budget, unit, jobs"),
    ("unknown-unit", '[budget]\ntime = "1h"\n[unit]\nseconds = 1\nsizee = 4\n' + JOB,
     "unit.sizee", 5, "unknown key 'sizee'"),
    ("unknown-job-key", '[budget]\ntime = "1h"\n' + JOB + 'fnctions = ["x"]\n',
     "jobs[1].fnctions", 5, "did you mean 'functions'?"),
    ("type-seed", 'seed = "7"\n' + JOB, "seed", 1, "must be an integer"),
    ("type-functions", '[budget]\ntime = "1h"\n[[jobs]]\nfunctions = "sinpi"\n',
     "jobs[1].functions", 4, "must be a list of strings"),
    ("type-float-int", '[budget]\ntime = "1h"\n[unit]\ninputs = 1.5\n' + JOB,
     "unit.inputs", 4, "must be an integer"),
    ("type-budget-table", 'budget = 5\n' + JOB, "budget", 1, "must be a table"),
    ("type-jobs", 'jobs = "all"\n', "jobs", 1, "array of tables"),
    ("no-jobs", '[budget]\ntime = "1h"\n', "jobs", None, "required key 'jobs' is missing"),
    ("unknown-function", '[budget]\ntime = "1h"\n[[jobs]]\nfunctions = ["sinpi", "nosuch"]\n',
     "jobs[1].functions", 4, "unknown function 'nosuch'"),
    ("bad-conversion", '[budget]\ntime = "1h"\n[[jobs]]\n'
     'functions = ["convert_int_sat_rte(quaternion)"]\n', "jobs[1].functions", 4, "quaternion"),
    ("unknown-precision", '[budget]\ntime = "1h"\n[[jobs]]\nfunctions = ["sinpi"]\n'
     'precisions = ["quad"]\n', "jobs[1].precisions", 5,
     "unknown precision 'quad'; use binary16, binary32, binary64 (or half, float, double)"),
    ("bad-width", '[budget]\ntime = "1h"\n\n\n' + JOB + 'widths = [1, 5]\n',
     "jobs[1].widths", 7, "'5' is not an OpenCL vector width"),
    ("width-type", '[budget]\ntime = "1h"\n' + JOB + 'widths = ["4"]\n',
     "jobs[1].widths", 5, "must be a list of integers"),
    ("bad-duration", '[budget]\ntime = "5 parsecs"\n' + JOB, "budget.time", 2,
     "'5 parsecs' is not a duration"),
    ("zero-duration", '[unit]\ntimeout = "0s"\n' + JOB, "unit.timeout", 2, "positive"),
    ("dotted-duration", 'budget.time = "soon"\n' + JOB, "budget.time", 1, "not a duration"),
    ("inline-duration", 'budget = { time = "soon" }\n' + JOB, "budget.time", 1,
     "not a duration"),
    ("negative-seed", 'seed = -1\n' + JOB, "seed", 1, "-1 is out of range; use >= 0"),
    ("negative-job-seed", '[budget]\ninputs = 5\n' + JOB + 'seed = -3\n', "jobs[1].seed", 5,
     "out of range"),
    ("missing-functions", '[budget]\ntime = "1h"\n\n[[jobs]]\nname = "x"\n',
     "jobs[1].functions", 4, "required key 'functions' is missing"),
    ("duplicate-names", '[budget]\ntime = "1h"\n' + JOB + 'name = "a"\n' + JOB + 'name = "a"\n',
     "jobs[2].name", 8, "duplicate job name 'a' (jobs[1] has it)"),
    ("duplicate-default-name", '[budget]\ntime = "1h"\n' + JOB + 'name = "job2"\n' + JOB,
     "jobs[2].name", 6, "duplicate job name 'job2'"),
    ("bad-name", 'name = "my night"\n' + JOB, "name", 1, "is not a name"),
    ("sweep-pow", '[[jobs]]\nsource = "sweep"\nfunctions = ["sinpi",\n  "pow"]\n',
     "jobs[1].functions", 3, "not sweepable: pow in binary32 has 2^64 inputs"),
    ("sweep-conversion", '[[jobs]]\nsource = "sweep"\nfunctions = ["convert_float(int)"]\n',
     "jobs[1].functions", 3, "is a conversion"),
    ("sweep-group", '[[jobs]]\nsource = "sweep"\nfunctions = ["math"]\n',
     "jobs[1].functions", 3, "not sweepable:"),
    ("sweep-no-overload", '[[jobs]]\nsource = "sweep"\nfunctions = ["half_sin"]\n'
     'precisions = ["binary16"]\n', "jobs[1].functions", 3, "no binary16 overload"),
    ("sweep-widths", '[[jobs]]\nsource = "sweep"\nfunctions = ["sinpi"]\nwidths = [4]\n',
     "jobs[1].widths", 4, "widths must be [1]"),
    ("sweep-inputs", '[[jobs]]\nsource = "sweep"\nfunctions = ["sinpi"]\ninputs = 4\n',
     "jobs[1].inputs", 4, "only recipes jobs take inputs"),
    ("catalogue-units", '[[jobs]]\nsource = "catalogue"\nfunctions = ["sinpi"]\nunits = 4\n',
     "jobs[1].units", 4, "only recipes and sweep jobs take units"),
    ("recipes-chunk-bits", '[budget]\ntime = "1h"\n' + JOB + 'chunk_bits = 20\n',
     "jobs[1].chunk_bits", 5, "only sweep jobs take chunk_bits"),
    ("unknown-source", '[[jobs]]\nsource = "magic"\nfunctions = ["sinpi"]\n',
     "jobs[1].source", 2, "unknown source 'magic'; use recipes, catalogue, sweep or drift"),
    ("inputs-and-units", JOB + 'inputs = 10\nunits = 2\n', "jobs[1].units", 4,
     "give inputs or units, not both"),
    ("unbounded", 'seed = 1\n\n' + JOB + '\n[[jobs]]\nsource = "catalogue"\n'
     'functions = ["sinpi"]\n', "budget", 3,
     "an unbounded recipes job needs budget.time or budget.inputs"),
    ("unbounded-empty-budget", '[budget]\n\n' + '[[jobs]]\nunits = 1\nfunctions = ["cospi"]\n'
     + JOB, "budget", 1, "jobs[2] 'job2' has neither inputs nor units"),
    ("chunk-bits-range", '[[jobs]]\nsource = "sweep"\nfunctions = ["sinpi"]\n'
     'chunk_bits = 30\n', "jobs[1].chunk_bits", 4, "30 is out of range; use 16 .. 26"),
    ("empty-devices", 'devices = []\n' + JOB, "devices", 1, "must not be empty"),
    ("empty-job-devices", '[budget]\ntime = "1h"\n' + JOB + 'devices = []\n',
     "jobs[1].devices", 5, "must not be empty"),
    ("blank-device", 'devices = ["pocl", " "]\n' + JOB, "devices", 1, "non-empty strings"),
    ("multiline-bad-element", '[budget]\ntime = "1h"\n[[jobs]]\nfunctions = [\n  "sinpi",\n'
     '  "cospi",  # fine\n  "nosuch",\n]\nprecisions = ["binary32"]\n', "jobs[1].functions", 4,
     "unknown function 'nosuch'"),
    ("bad-build-options", '[budget]\ntime = "1h"\n' + JOB
     + 'build_options = ["", "fast please"]\n', "jobs[1].build_options", 5,
     "'fast' is not an OpenCL build option"),
    ("no-target", '[budget]\ntime = "1h"\n' + JOB.replace("sinpi", "half_sin")
     + 'precisions = ["binary64"]\n', "jobs[1].functions", 4, "none of the functions exists"),
    ("min-above-max", '[unit]\nmin_inputs = 4096\nmax_inputs = 2048\n' + JOB,
     "unit.min_inputs", 2, "min_inputs 4096 > max_inputs 2048"),
    ("unit-too-big", '[unit]\nmax_inputs = 134217728\n' + JOB, "unit.max_inputs", 2,
     "out of range; use 1 .. 67108864"),
    ("fixed-unit-too-big", '[unit]\ninputs = 33554432\n' + JOB, "unit.inputs", 2,
     "out of range; use 1 .. 16777216"),
    ("unit-seconds", '[unit]\nseconds = 0\n' + JOB, "unit.seconds", 2, "positive"),
    ("boolean-restarts", '[unit]\nmax_restarts = true\n' + JOB, "unit.max_restarts", 2,
     "must be an integer, not a boolean"),
    ("job-in-string-not-counted", "out = '''\n[[jobs]]\n'''\n[budget]\ntime = 5\n" + JOB
     + 'precisions = ["quad"]\n', "jobs[1].precisions", 8, "unknown precision 'quad'"),
]


@pytest.mark.parametrize("text, key, line, words", [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_campaign_is_one_line_at_its_key(text, key, line, words):
    with pytest.raises(CampaignError) as info:
        loads(text, "campaign.toml")
    exc = info.value
    assert (exc.key, exc.line) == (key, line), str(exc)
    assert words in exc.message
    assert isinstance(exc, ValueError) and exc.path == "campaign.toml"
    s = str(exc)
    assert "\n" not in s
    where = "campaign.toml" if line is None else f"campaign.toml:{line}"
    assert s == (f"{where}: {key}: {exc.message}" if key else f"{where}: {exc.message}")


def test_message_reads_as_documented():
    text = "\n" * 10 + '[[jobs]]\nprecisions = ["quad"]\nfunctions = ["sinpi"]\n'
    with pytest.raises(CampaignError) as info:
        loads(text, "campaign.toml")
    assert str(info.value) == ("campaign.toml:12: jobs[1].precisions: unknown precision "
                               "'quad'; use binary16, binary32, binary64 (or half, float, "
                               "double)")


def test_load_errors(tmp_path):
    with pytest.raises(CampaignError) as info:
        load(tmp_path / "absent.toml")
    assert info.value.line is None and "cannot read" in str(info.value)
    assert str(info.value).startswith(str(tmp_path / "absent.toml") + ": ")
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'seed = 1\nname = "caf\xe9"\n')
    with pytest.raises(CampaignError) as info:
        load(bad)
    assert info.value.line == 2 and "UTF-8" in str(info.value)
    good = tmp_path / "ok.toml"
    good.write_text(MINIMAL)
    assert load(str(good)).name == "ok"


def test_from_dict_rejects_another_version():
    d = loads(MINIMAL).to_dict()
    d["version"] = 99
    with pytest.raises(ValueError, match="version"):
        Campaign.from_dict(d)


def test_module_is_pure():
    """Loading a campaign (sweeps included) imports neither pyopencl nor Ray."""
    code = ("import sys; from fuzzfarm.orchestrate.campaign import load; "
            f"load({str(CAMPAIGNS / 'nightly.toml')!r}); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyopencl', 'ray')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_schema_is_the_one_table():
    assert set(SCHEMA) == {"", "budget", "unit", "jobs"}
    assert campaign.SOURCES == ("recipes", "catalogue", "sweep", "drift")


def test_job_seeds_do_not_depend_on_where_the_code_lives():
    """A job's default seed is a stable function of the campaign seed and the job number
    (the string salt is part of the format: moving the module must not change it, or
    a resumed or repeated campaign would draw other inputs)."""
    import hashlib

    from fuzzfarm.orchestrate.campaign import _job_seed
    for seed, number in ((14, 1), (14, 2), (0, 1), (2**31, 7)):
        digest = hashlib.sha256(f"fuzzfarm.campaign:{seed}:{number}".encode()).digest()
        assert _job_seed(seed, number) == int.from_bytes(digest[:4], "big") >> 1
