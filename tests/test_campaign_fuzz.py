"""Campaign files and run options, fuzzed (issue 18, item 8): generated and mutated
campaign TOML and `run` options each give a campaign (a run) or one CampaignError /
UsageError line (exit status 2 at the CLI), never another exception or a traceback."""
from __future__ import annotations

import re

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzfarm.cli import main
from fuzzfarm.errors import BadInput
from fuzzfarm.orchestrate import campaign as campaigns
from fuzzfarm.orchestrate import run as runner

# --------------------------------------------------------------------------- campaigns
_NAMES = st.sampled_from(["nightly", "a.b-c_1", "", "bad name", "x" * 300, "ünïcode"])
_FUNCS = st.sampled_from(["sinpi", "math", "pow", "convert_int_sat_rte(float)", "cross",
                          "nope", "conversions", "", "convert_float_sat(int)", "SIN"])
_PRECS = st.sampled_from(["binary32", "binary16", "double", "quad", "", "fp64"])
_DURATIONS = st.sampled_from(["90s", "5m", "2h", "1h30m", "1d", "0s", "-5m", "soon", "1e9h"])
_SCALARS = st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                     st.booleans(), st.text(max_size=12), st.none())


def _value(strategy):
    """A key's value: the right kind mostly, anything sometimes."""
    return st.one_of(strategy, _SCALARS, st.lists(_SCALARS, max_size=3))


def _job():
    return st.fixed_dictionaries({}, optional={
        "name": _value(_NAMES),
        "source": _value(st.sampled_from(["recipes", "catalogue", "sweep", "other"])),
        "functions": _value(st.lists(_FUNCS, max_size=3)),
        "precisions": _value(st.lists(_PRECS, max_size=2)),
        "widths": _value(st.lists(st.sampled_from([1, 2, 3, 4, 8, 16, 5, 0, -1]), max_size=3)),
        "build_options": _value(st.lists(st.sampled_from(
            ["", "-cl-fast-relaxed-math", "-Dx", "--oops", "-cl-denorms-are-zero"]),
            max_size=2)),
        "inputs": _value(st.integers(-10, 2**40)),
        "units": _value(st.integers(-3, 100)),
        "seed": _value(st.integers(-5, 2**40)),
        "devices": _value(st.lists(st.sampled_from(["pocl", "all", "0", "9:9", ""]),
                                   max_size=2)),
        "chunk_bits": _value(st.integers(0, 40)),
        "extra_key": _SCALARS,
    })


def _campaign():
    return st.fixed_dictionaries({}, optional={
        "name": _value(_NAMES),
        "seed": _value(st.integers(-5, 2**40)),
        "out": _value(st.text(max_size=10)),
        "devices": _value(st.lists(st.sampled_from(["pocl", "all", "0", "", "nvidia"]),
                                   max_size=2)),
        "budget": _value(st.fixed_dictionaries({}, optional={
            "time": _value(_DURATIONS), "inputs": _value(st.integers(-1, 2**50))})),
        "unit": _value(st.fixed_dictionaries({}, optional={
            "inputs": _value(st.integers(-1, 2**25)), "seconds": _value(st.floats(-1, 10)),
            "min_inputs": _value(st.integers(-1, 2**25)),
            "max_inputs": _value(st.integers(-1, 2**25)),
            "timeout": _value(_DURATIONS), "max_restarts": _value(st.integers(-1, 20))})),
        "jobs": st.one_of(st.lists(_job(), max_size=3), _SCALARS),
        "version": _SCALARS,
    })


_VALID = {"name": "night", "seed": 7, "devices": ["all"],
          "budget": {"time": "5m", "inputs": 10_000_000},
          "unit": {"seconds": 0.5, "min_inputs": 1024, "max_inputs": 65536},
          "jobs": [{"functions": ["sinpi", "pow"], "precisions": ["binary32"], "widths": [1, 4]},
                   {"source": "catalogue", "functions": ["math"]},
                   {"source": "sweep", "functions": ["exp"], "units": 2}]}


@st.composite
def _near_valid(draw):
    """A valid campaign with up to two keys (at any depth) replaced or removed."""
    import copy
    doc = copy.deepcopy(_VALID)
    paths = [(k,) for k in doc] + [(k, s) for k in ("budget", "unit") for s in doc[k]] + \
        [("jobs", i, s) for i, j in enumerate(doc["jobs"]) for s in j]
    for _ in range(draw(st.integers(0, 2))):
        path = draw(st.sampled_from(paths))
        parent, ok = doc, True
        for p in path[:-1]:
            if isinstance(parent, dict) and p in parent:
                parent = parent[p]
            elif isinstance(parent, list) and isinstance(p, int) and p < len(parent):
                parent = parent[p]
            else:
                ok = False
                break
        if ok:
            if isinstance(parent, dict) and path[-1] in parent:
                if draw(st.booleans()):
                    del parent[path[-1]]
                else:
                    parent[path[-1]] = draw(_SCALARS | st.lists(_SCALARS, max_size=2)
                                            | _FUNCS.map(lambda f: [f]))
    return doc


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return {float("inf"): "inf", float("-inf"): "-inf"}.get(v, "nan" if v != v else repr(v))
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v if x is not None) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()
                               if x is not None) + "}"
    return '""'


def _toml(doc: dict) -> str:
    """TOML text of ``doc`` (top-level scalars first, then tables and arrays of tables);
    ``None`` values are left out, as TOML has no null."""
    lines, tables = [], []
    for k, v in doc.items():
        if v is None:
            continue
        if k == "jobs" and isinstance(v, list) and all(isinstance(j, dict) for j in v) and v:
            tables += [("[[jobs]]", j) for j in v]
        elif isinstance(v, dict):
            tables.append((f"[{k}]", v))
        else:
            lines.append(f"{k} = {_toml_value(v)}")
    for head, body in tables:
        lines.append(head)
        lines += [f"{k} = {_toml_value(x)}" for k, x in body.items() if x is not None]
    return "\n".join(lines) + "\n"


@st.composite
def _mutated(draw):
    """A generated or nearly valid campaign, then a few random edits of its text."""
    text = _toml(draw(_campaign() | _near_valid()))
    for _ in range(draw(st.integers(0, 3))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        op = draw(st.sampled_from(["delete", "insert", "duplicate_line", "truncate"]))
        if op == "delete":
            text = text[:i] + text[i + 1:]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(list("[]{}=\",.#\n\\x0 '"))) + text[i:]
        elif op == "duplicate_line":
            lines = text.splitlines(keepends=True)
            j = i % len(lines)
            text = "".join(lines[:j + 1] + [lines[j]] + lines[j + 1:])
        else:
            text = text[:i]
    return text


def _loads_or_one_line_error(text: str):
    try:
        return campaigns.loads(text, "fuzzed.toml")
    except campaigns.CampaignError as exc:
        msg = str(exc)
        assert isinstance(exc, BadInput)
        assert msg.startswith("fuzzed.toml") and "\n" not in msg.strip(), msg
        return None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_campaign() | _near_valid())
def test_generated_campaigns_load_or_fail_in_one_line(doc):
    _loads_or_one_line_error(_toml(doc))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_mutated_campaign_text_loads_or_fails_in_one_line(text):
    _loads_or_one_line_error(text)


def test_the_fuzzer_reaches_both_outcomes():
    """Known-good and known-bad campaigns through the same path."""
    good = _toml({"name": "ok", "budget": {"time": "5m"},
                  "jobs": [{"functions": ["sinpi"], "precisions": ["binary32"]}]})
    assert _loads_or_one_line_error(good) is not None
    assert _loads_or_one_line_error(good.replace("sinpi", "nope")) is None
    assert _loads_or_one_line_error(good + "[[jobs]\n") is None


# --------------------------------------------------------------------------- run options
_OPTS = st.fixed_dictionaries({
    "functions": st.one_of(st.none(), _FUNCS, st.text(max_size=20)),
    "budget": st.one_of(_DURATIONS, st.text(max_size=8)),
    "seed": st.one_of(st.none(), st.integers(-10, 2**40)),
    "precisions": st.one_of(_PRECS, st.text(max_size=10), st.just("binary32,binary64")),
    # "²" is a digit to str.isdigit, not to int() (found by this test, 2026-11-27)
    "widths": st.one_of(st.sampled_from(["1", "1,4", "16", "5", "", "x", "0", "²"]),
                        st.text(max_size=5)),
    "build_options": st.one_of(st.just(""), st.sampled_from(["-cl-fast-relaxed-math", "-O9",
                                                             "--x", "-Dfoo=1"])),
    "device": st.one_of(st.none(), st.sampled_from(["all", "pocl", "0", "99", "nope", "",
                                                     "0:0", ",", "zzzzzzzzzzzzzz", "²"])),
})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(_OPTS)
def test_run_options_validate_or_fail_in_one_line(tmp_path, o):
    try:
        runner.validate(o["functions"], o["budget"], o["seed"], str(tmp_path / "out"),
                        o["device"], None, o["build_options"], o["precisions"], o["widths"])
    except BadInput as exc:
        assert "\n" not in str(exc).strip(), str(exc)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["--budget", "-b", "--precisions", "-p", "--widths", "-w",
                                 "--functions", "-f", "--nope", "x", "", "-", "--campaign",
                                 "/nonexistent.toml", "--resume", "--seed", "-1", "zz",
                                 "--log-format", "xml", "--out"]), min_size=1, max_size=5))
def test_bad_command_lines_exit_2_with_one_line(tmp_path, args):
    """Each list is made invalid (an unknown budget word at the end), so no run starts."""
    res = CliRunner().invoke(main, ["run", *args, "--budget", "sometime"])
    assert res.exit_code == 2, res.output
    out = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(out) == 1 and out[0].startswith("Error:"), res.output
    assert "Traceback" not in res.output and not re.search(r"^\s+File \"", res.output, re.M)
