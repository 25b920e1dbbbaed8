"""`fuzzfarm run` end to end on PyPI's PoCL (device + Ray), and its bad-input errors."""
import json
import os
import signal
import subprocess
import sys
import time

import pyarrow.dataset as ds
import pytest
from click.testing import CliRunner

from devices import selector
from fuzzfarm.cli import main
from fuzzfarm.orchestrate.run import UsageError, parse_budget


def test_parse_budget():
    assert parse_budget("90s") == 90
    assert parse_budget("5m") == 300
    assert parse_budget("1h30m") == 5400
    assert parse_budget("45") == 45
    for bad in ("", "5x", "m5", "-3s", "0s", "5m garbage"):
        with pytest.raises(UsageError):
            parse_budget(bad)


@pytest.mark.parametrize("args, words", [
    (["--functions", "sinpi,nosuch"], "nosuch"),
    (["--budget", "5 parsecs"], "--budget"),
    (["--device", "no-such-device-xyz"], "no-such-device-xyz"),
    (["--seed", "-4"], "--seed"),
    (["--frobnicate"], "frobnicate"),
    (["--precisions", "quad"], "quad"),
    (["--widths", "1,5"], "--widths"),
    (["--build-options", "fast please"], "--build-options"),
    (["--functions", "convert_int_sat_rte(quaternion)"], "quaternion"),
    (["--functions", "cross", "--widths", "2"], "--widths"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, words):
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["run", "--out", str(out), "--budget", "5s", *args])
    assert res.exit_code == 2, res.output
    assert words in res.output
    error_lines = [line for line in res.output.splitlines() if line.startswith("Error")]
    assert len(error_lines) == 1
    assert not out.exists() or not any(out.iterdir())


def test_unwritable_out_is_exit_2(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = CliRunner().invoke(main, ["run", "--out", str(blocker / "sub"), "--budget", "5s"])
    assert res.exit_code == 2
    assert "--out" in res.output


def _fuzzfarm(*args, timeout=240, env=None, **kw):
    return subprocess.run([sys.executable, "-m", "fuzzfarm", *args], capture_output=True,
                          text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200", **(env or {})}, **kw)


@pytest.mark.device
@pytest.mark.cluster
def test_run_finds_sinpi_of_one_on_pocl(tmp_path):
    """The acceptance example: sinpi(+1.0f) = -0.0f on PyPI's PoCL 3.0.  Compacted every
    2 s while it runs: the counts survive compaction, and the journal is cut to the
    units in flight (Scheduler.checkpoint), not a line per unit issued."""
    out = tmp_path / "res"
    res = _fuzzfarm("run", "--functions", "sinpi,sin", "--budget", "15s", "--seed", "3",
                    "--out", str(out), "--device", selector(),
                    env={"FUZZFARM_COMPACT_INTERVAL": "2"})
    assert res.returncode == 0, res.stderr[-2000:]
    assert "not compacted" not in res.stderr and "not trimmed" not in res.stderr
    assert "seed 3;" in res.stderr + res.stdout         # printed at the start of the run
    (journal,) = (out / "_campaign").glob("*/journal.jsonl")
    lines = journal.read_text().splitlines()
    assert json.loads(lines[0])["event"] == "streams"          # rewritten while it ran
    table = ds.dataset(out).to_table().to_pylist()
    hits = [r for r in table if r["rule_id"] == "CL.sinpi.positive_integer"
            and r["input_bits"] == [0x3F800000]]
    if not any("PoCL 3.0" in r["platform"] or "3.0" in r["opencl_version"] for r in table):
        pytest.skip("the first PoCL device here is not PyPI's PoCL 3.0")
    assert hits, "sinpi(1.0f) = -0.0f not reported"
    row = hits[0]
    assert row["output_bits"] == [0x80000000]
    assert row["sentence"] == "sinpi( +n) returns +0 for positive integers n."
    assert row["severity"] == "fail" and row["seed"] is not None
    stats = ds.dataset(out / "_stats").to_table().to_pylist()
    assert {s["function"] for s in stats} == {"sinpi", "sin"}
    assert sum(json.loads(x)["event"] == "issue" for x in lines) < len(stats)
    # the stored findings stand for exactly the failures the stats rows count, per rule
    from collections import Counter

    from fuzzfarm.store import dataset as store
    from fuzzfarm.store.samples import counts
    found = store.read_findings(out)
    by_rule = Counter()
    for r, c in zip(found.to_pylist(), counts(found).to_pylist()):
        if r["severity"] == "fail":
            by_rule[r["rule_id"]] += c
    want = Counter()
    for s in stats:
        for rule, k in s["failures_by_rule"] or ():
            want[rule] += k
    assert by_rule == want and sum(want.values()) > 0
    assert all(s["inputs_tested"] > 0 for s in stats)
    assert "CL.sinpi.positive_integer" in res.stdout  # the summary names the rule
    runs = list((out / "_runs").glob("*.json"))
    assert json.loads(runs[0].read_text())["status"] == "completed"
    # --fail-on-findings turns the same result into exit 1
    res = _fuzzfarm("run", "--functions", "sinpi", "--budget", "12s", "--seed", "3",
                    "--out", str(out), "--device", selector(), "--fail-on-findings")
    assert res.returncode == 1


@pytest.mark.device
@pytest.mark.cluster
def test_interrupted_run_leaves_only_complete_files(tmp_path):
    out = tmp_path / "res"
    proc = subprocess.Popen([sys.executable, "-m", "fuzzfarm", "run", "--functions", "sinpi,fract",
                             "--budget", "60s", "--out", str(out), "--device", selector()],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list(out.glob("_stats/*/*.parquet")):
        time.sleep(0.5)
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
    assert proc.returncode in (130, 0)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert not [p for p in files if p.name.startswith(".tmp-")]
    ds.dataset(out).to_table()          # every file complete and readable
    stats = ds.dataset(out / "_stats").to_table()
    assert stats.num_rows > 0
    meta = json.loads(next((out / "_runs").glob("*.json")).read_text())
    assert meta["status"] in ("interrupted", "completed")
    # the units in flight were finished: no target's serials have a gap
    for key, serials in _serials(stats.to_pylist()).items():
        assert serials == list(range(len(serials))), key
    assert stats.num_rows == sum(t["issued"] for t in meta["totals"])


def test_catalogue_lists_everything_as_json():
    res = CliRunner().invoke(main, ["catalogue", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    from edgecases import catalogue
    assert data["counts"]["functions"] == len(catalogue.functions()) >= 117
    assert data["counts"]["rules"] == len(catalogue.rules())
    sinpi = [f for f in data["functions"] if f["function"] == "sinpi" and f["precision"] == "binary32"]
    assert sinpi[0]["bounds"]["full"]["bound"] == "<= 4 ulp"
    assert "CL.sinpi.positive_integer" in sinpi[0]["rules"]
    rule = [r for r in data["rules"] if r["id"] == "CL.sinpi.positive_integer"][0]
    assert rule["result"] == "ret = +0" and "3.8.2" in rule["section"]
    bad = CliRunner().invoke(main, ["catalogue", "--function", "sinq"])
    assert bad.exit_code == 2 and "sinq" in bad.output


def test_verify_rejects_a_missing_results_directory(tmp_path):
    res = CliRunner().invoke(main, ["verify", str(tmp_path / "none")])
    assert res.exit_code == 2 and "not a results directory" in res.output


@pytest.mark.device
@pytest.mark.cluster
def test_vector_widths_precisions_conversions_and_verify_on_pocl(tmp_path):
    """A short run at widths 1 and 4 in binary32 and binary64, with a geometric built-in and
    a conversion; `fuzzfarm verify` re-executes and confirms every failure it reports."""
    out = tmp_path / "out"
    fns = "sinpi,normalize,convert_int_sat_rte(float)"
    res = _fuzzfarm("run", "--functions", fns, "--precisions", "float,double", "--widths", "1,4",
                    "--budget", "30s", "--seed", "3", "--out", str(out), "--device", selector())
    assert res.returncode == 0, res.stderr[-3000:]
    stats = ds.dataset(out / "_stats").to_table().to_pylist()
    seen = {(s["function"], s["precision"], s["vector_width"]) for s in stats}
    assert ("sinpi", "binary32", 4) in seen and ("sinpi", "binary64", 1) in seen
    report = tmp_path / "verify.json"
    res = _fuzzfarm("verify", str(out), "--json", str(report))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    data = json.loads(report.read_text())
    rules = {(v["function"], v["rule"]) for v in data["violations"]}
    assert ("sinpi", "CL.sinpi.positive_integer") in rules   # PyPI's PoCL 3.0 bug
    assert all(v["refuted"] == 0 and v["not_reproduced"] == 0 for v in data["violations"])


# ------------------------------------------------------------- work units (no device)

import hashlib  # noqa: E402
import itertools  # noqa: E402

import numpy as np  # noqa: E402

from edgecases import catalogue  # noqa: E402
from fuzzfarm.formats import BINARY32, BINARY64  # noqa: E402
from fuzzfarm.work import make as units, rows as unit_rows  # noqa: E402
from fuzzfarm.work.unit import Special, unit_from_row  # noqa: E402


def _rebuilt(unit, per_recipe=123):
    """The unit as `fuzzfarm verify` rebuilds it from a stored row: id, function, seed,
    recipe JSON, precision, width (and a run-level per_recipe that new rows do not need)."""
    t = unit.target
    row = {"unit_id": unit.unit_id, "function": t.name, "precision": t.precision,
           "vector_width": t.width, "seed": unit.stored_seed, "recipe": unit.recipe_json}
    return unit_from_row(row, per_recipe=per_recipe)


def _digest(inputs: dict) -> str:
    h = hashlib.sha256()
    for k in sorted(inputs):
        h.update(k.encode())
        h.update(np.ascontiguousarray(inputs[k]).tobytes())
    return h.hexdigest()


def test_split_size():
    assert units.split_size(1) == [1]
    assert units.split_size(1024) == [1024]
    assert units.split_size(3 * units.MIN_PER_RECIPE + 5) == [units.MIN_PER_RECIPE + 2,
                                                            units.MIN_PER_RECIPE + 2,
                                                            units.MIN_PER_RECIPE + 1]
    big = units.split_size(1 << 21)
    assert len(big) == units.MAX_RECIPES and sum(big) == 1 << 21
    for n in (1, 999, 8191, 8192, 50_000, 1 << 20, (1 << 21) + 7, 1 << 23):
        parts = units.split_size(n)
        assert sum(parts) == n and max(parts) - min(parts) <= 1
        assert 1 <= len(parts) <= units.MAX_RECIPES
    # a unit kept on the device (up to 2**26 inputs): one recipe per MAX_PER_RECIPE
    for n in ((1 << 23) + 1024, 1 << 25, 1 << 26):
        parts = units.split_size(n)
        assert sum(parts) == n and max(parts) - min(parts) <= 1
        assert len(parts) == max(units.MAX_RECIPES, -(-n // units.MAX_PER_RECIPE))
        assert max(parts) <= units.MAX_PER_RECIPE + 1


def test_large_unit_is_deterministic_and_rebuilt_from_its_row():
    """A unit of a million inputs regenerates bit for bit from itself and from the row
    columns alone (seed + recipe JSON, which records each recipe's size), whatever the
    run's per_recipe: what `fuzzfarm verify` relies on."""
    target = ("pow", "binary32", 1)
    u = units.make_unit("dev", target, 7, 42, 8192, 4, size=1 << 20)
    assert u == units.make_unit("dev", target, 7, 42, 8192, 4, size=1 << 20)
    assert u.size == 1 << 20 and len(u.recipes) == units.MAX_RECIPES
    assert all(r["n"] == (1 << 20) // units.MAX_RECIPES for r in u.recipes)
    a = units.make_inputs(u)
    assert set(a) == {"x", "y"} and all(len(v) == 1 << 20 and v.dtype == np.uint32
                                        for v in a.values())
    b = units.make_inputs(_rebuilt(u))
    assert _digest(a) == _digest(b)
    other = units.make_inputs(units.make_unit("dev", target, 8, 42, 8192, 4, size=1 << 20))
    assert _digest(other) != _digest(a)
    # recipe i fills rows [i*n, (i+1)*n): the sampler's own expansion of that recipe,
    # continuing the unit's stream (the parts before it taken first)
    from strategies import Recipe, Stream, expand
    n = u.recipes[1]["n"]
    stream = Stream(u.source.seed)
    for r in u.recipes[:2]:
        recipe = Recipe.from_dict({k: v for k, v in r.items() if k != "n"})
        part = expand(recipe, catalogue.function("pow"), n, BINARY32, stream=stream)
    assert np.array_equal(a["y"][n:2 * n], part["y"])


def test_large_unit_regenerates_in_another_process():
    u = units.make_unit("dev", ("ldexp", "binary64", 1), 3, 9, 8192, 4, size=300_000)
    here = _digest(units.make_inputs(u))
    code = ("import json, hashlib, numpy as np\n"
            "from fuzzfarm.work.make import make_inputs\n"
            "from fuzzfarm.work.unit import unit_from_row\n"
            f"u = unit_from_row({{'unit_id': {u.unit_id!r}, 'function': 'ldexp', "
            f"'precision': 'binary64', 'vector_width': 1, 'seed': {u.stored_seed}, "
            f"'recipe': {u.recipe_json!r}}})\n"
            "ins = make_inputs(u)\n"
            "h = hashlib.sha256()\n"
            "for k in sorted(ins):\n"
            "    h.update(k.encode()); h.update(np.ascontiguousarray(ins[k]).tobytes())\n"
            "print(h.hexdigest())\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == here


@pytest.mark.parametrize("target, size", [
    (("convert_int_sat_rte(float)", "binary32", 1), 20_000),
    (("normalize", "binary32", 4), 5_000),
    (("sinpi", "binary64", 1), 70_000),
])
def test_units_of_every_kind_rebuild_from_their_row(target, size):
    u = units.make_unit("dev", target, 2, 5, 8192, 4, size=size)
    a = units.make_inputs(u)
    lanes = target[2] if u.target.kind == "geometric" else 1
    assert all(len(v) == size * lanes for v in a.values())
    assert _digest(a) == _digest(units.make_inputs(_rebuilt(u)))
    s = units.make_unit("dev", target, 0, 5, 8192, 4)           # unit 0: the special pool
    assert isinstance(s.source, Special)
    assert _digest(units.make_inputs(s)) == _digest(units.make_inputs(_rebuilt(s)))


def test_units_of_the_old_layout_still_rebuild():
    """Rows written before units recorded their recipe sizes: every recipe has the run's
    per_recipe inputs (and a conversion unit has no parts)."""
    from strategies import Recipe
    r = Recipe(seed=5).to_dict()
    old = unit_from_row({"unit_id": "u", "function": "sin", "precision": "binary32",
                         "seed": 5, "recipe": json.dumps([r, r])}, per_recipe=1000)
    assert old.size == 2000 and len(units.make_inputs(old)["x"]) == 2000
    conv = unit_from_row({"unit_id": "c", "function": "convert_int_sat_rte(float)",
                          "precision": "binary32", "seed": 5, "recipe": "[]"},
                         per_recipe=1500)
    assert len(units.make_inputs(conv)["x"]) == 1500


@pytest.mark.parametrize("name, fmt", [("sin", BINARY32), ("pow", BINARY64),
                                       ("fma", BINARY32), ("ldexp", BINARY32)])
def test_special_inputs_are_the_cartesian_product(name, fmt):
    """Unit 0 keeps its exact content and order: itertools.product of the landmark pools
    (the last argument varying fastest), now built with numpy."""
    from strategies import special_float_bits, special_int_values
    from strategies._internal import pool
    fn = catalogue.function(name)
    pools = [list(special_float_bits(fmt)) if a.kind != "int" else list(special_int_values())
             for a in fn.inputs]
    if int(np.prod([len(p) for p in pools])) > pool.SPECIAL_POOL_LIMIT:
        keep = int(pool.SPECIAL_POOL_LIMIT ** (1 / len(pools)))
        pools = [pool._core_first(p, fmt, keep) if a.kind != "int" else p[:keep]
                 for p, a in zip(pools, fn.inputs)]
    combos = list(itertools.product(*pools))
    got = pool.special_inputs(fn, fmt)
    for k, a in enumerate(fn.inputs):
        assert got[a.name].tolist() == [int(c[k]) for c in combos]


def test_unit_sizer_grows_to_the_measured_rate_and_caps():
    s = units.UnitSizer(unit_seconds=0.5, min_inputs=1024, max_inputs=1 << 21)
    assert s.next_size("t") == 1024                 # nothing measured: the smallest
    s.observe("t", 1024, 0.001)                     # ~1e6/s: 0.5 s is 512k inputs
    sizes = [s.next_size("t") for _ in range(6)]
    assert sizes[:3] == [8 * 1024, 64 * 1024, 512_000 // 1024 * 1024]   # at most 8x a step
    assert sizes[3:] == [512_000 // 1024 * 1024] * 3                     # then steady
    s.observe("slow", 100, 1.0)                     # 100 inputs/s: the smallest unit
    s.next_size("slow")
    assert s.next_size("slow") == 1024
    for _ in range(20):
        s.observe("fast", 10**8, 1.0)
        last = s.next_size("fast")
    assert last == 1 << 21


def test_unit_sizer_caps_a_target_by_the_bytes_of_its_inputs_and_outputs():
    """UNIT_MAX_BYTES: binary32 sin (4 + 4 bytes an input) reaches 2**23 inputs, binary64
    sin 2**22, binary64 pow (two arguments) 2**21 + 2**20 rounded down; a key that is not
    a target is bound by max_inputs alone."""
    assert units.bytes_per_input(("sin", "binary32", 1)) == 8
    assert units.bytes_per_input(("pow", "binary64", 1)) == 24
    assert units.bytes_per_input(("dot", "binary32", 4)) == 3 * 4 * 4    # vectors of 4
    s = units.UnitSizer(max_inputs=1 << 24, max_bytes=64 << 20)
    for key, cap in ((("p", ("sin", "binary32", 1)), 1 << 23),
                     (("p", ("sin", "binary64", 1)), 1 << 22),
                     (("p", ("pow", "binary64", 1)), (64 << 20) // 24 // 1024 * 1024),
                     ("not a target", 1 << 24)):
        for _ in range(20):
            s.observe(key, 10**9, 1.0)
            last = s.next_size(key)
        assert last == cap, key
        assert last * (units.bytes_per_input(key[-1]) if key[0] == "p" else 0) <= 64 << 20


def test_unit_sizer_lets_resident_units_grow_to_their_pools_device_bound():
    """A key whose units came back resident (made and judged on the device) is bounded by
    its pool's resident_bytes (binary32 sin: 2**26 inputs in 512 MiB), not UNIT_MAX_BYTES;
    its rate is of the slower of device and check; a unit that comes back not resident
    brings the host's bound back; a pool of unknown allocation size keeps the host's."""
    assert units.resident_bytes(0) == units.UNIT_MAX_BYTES
    assert units.resident_bytes(32 << 20) == units.UNIT_MAX_BYTES      # never below it
    assert units.resident_bytes(1 << 30) == units.RESIDENT_MAX_BYTES == 512 << 20
    assert units.resident_bytes(256 << 20) == 256 << 20                # the device's
    s = units.UnitSizer(max_inputs=1 << 26, resident_bytes={"gpu": 512 << 20})
    sin32, sin64 = ("gpu", ("sin", "binary32", 1)), ("gpu", ("sin", "binary64", 1))
    other = ("small", ("sin", "binary32", 1))

    def settle(key, resident, device_seconds=0.0):
        for _ in range(20):
            s.observe(key, 10**9, 1.0, resident, device_seconds)
            last = s.next_size(key)
        return last

    assert settle(sin32, False) == 1 << 23
    assert settle(sin32, True) == 1 << 26
    assert settle(sin64, True) == 1 << 25
    assert settle(other, True) == 1 << 23                 # its pool's bound unknown
    assert settle(sin32, False) == 1 << 23                # a host unit: the host's bound
    # the device's seconds count for a resident unit: 10**9 inputs in 100 s is 10**7/s,
    # 0.5 s of which is about 5*10**6 inputs (the moving average still settling)
    assert abs(settle(sin32, True, device_seconds=100.0) - 5_000_000) < 2048


def _findings_result():
    """A CheckResult with findings of every shape the checker makes."""
    from fuzzfarm.verdict.checker import CheckResult, Finding
    r = CheckResult("pow", 10)
    vals = [(0x3F800000, 0x7F800001), (0xFFC00001, 0x80000000), (0x3F800000, 0x7F800001)]
    for i, (x, y) in enumerate(vals):
        r.findings.append(Finding(i, "pow", "F9.x", "F.9", "text", "fail", "ret", (x, y),
                                  (0x80000000,), "0x00000000 (0.0)", 1.5 if i else None, ""))
    return r


def test_finding_table_is_finding_rows_as_a_table():
    from fuzzfarm.store import dataset as store
    r = _findings_result()
    u = units.make_unit("dev", ("pow", "binary32", 1), 3, 1, 8192, 4, size=2048)
    meta = dict.fromkeys([f.name for f in store.FINDINGS_SCHEMA][2:10], "m")
    rows = unit_rows.finding_rows(r, u, meta, "run")
    table = unit_rows.finding_table(r, u, meta, "run")
    assert table.schema == store.FINDINGS_SCHEMA and table.num_rows == 3
    assert rows[0]["inputs"] == "x=0x1p+0 (0x3f800000), y=sNaN (0x7f800001)"
    assert rows[1]["inputs"] == "x=qNaN (0xffc00001), y=-0x0p+0 (0x80000000)"
    assert rows[1]["input_bits"] == [0xFFC00001, 0x80000000]
    assert rows[0]["outputs"] == "ret=-0x0p+0 (0x80000000)"
    want = pa_rows(rows)
    got = table.to_pylist()
    for a, b in zip(want, got):
        a.pop("time"), b.pop("time")
    assert want == got
    empty = unit_rows.finding_table(type(r)("pow", 5), u, meta, "run")
    assert empty.num_rows == 0 and store.write_findings_table("/nonexistent", "r", "u", empty) is None


def pa_rows(rows):
    import pyarrow as pa

    from fuzzfarm.store import dataset as store
    return pa.Table.from_pylist(rows, schema=store.FINDINGS_SCHEMA).to_pylist()


def _serials(stats) -> dict:
    """Unit serial numbers per (function, precision, width), sorted."""
    out: dict = {}
    for s in stats:
        key = (s["function"], s["precision"], s["vector_width"])
        out.setdefault(key, []).append(int(s["unit_id"].rsplit("-", 1)[1]))
    return {k: sorted(v) for k, v in out.items()}


@pytest.mark.device
@pytest.mark.cluster
def test_no_unit_lost_and_every_row_regenerates(tmp_path):
    """Units made ahead by a UnitMaker actor (the default from 8 CPUs up) and sized by
    the measured rate: every unit the coordinator issued has its stats row, the serials of
    each target run 0..k-1 without a gap, and a row's seed and recipe regenerate exactly
    the inputs it counted."""
    out = tmp_path / "res"
    code = ("from fuzzfarm.orchestrate import run\n"
            "from cluster.driver import run_options\n"
            f"o = run.validate('sin,fract', '15s', 5, {str(out)!r}, {selector()!r}, None)\n"
            "o.makers = 1\n"
            "o.max_unit_inputs = 1 << 17\n"
            "m = run_options(o)\n"
            "print('STATUS', m['status'])\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=240, env={**os.environ, "COLUMNS": "200"})
    assert res.returncode == 0 and "STATUS completed" in res.stdout, res.stderr[-3000:]
    meta = json.loads(next((out / "_runs").glob("*.json")).read_text())
    stats = ds.dataset(out / "_stats").to_table().to_pylist()
    issued = sum(t["issued"] for t in meta["totals"])
    assert len(stats) == issued == sum(t["units"] for t in meta["totals"]) > 4
    for key, serials in _serials(stats).items():
        assert serials == list(range(len(serials))), key
    assert meta["makers"] == 1 and meta["in_flight"] >= 1
    assert max(s["inputs_tested"] for s in stats) > 1024     # grew from min_unit_inputs
    for s in sorted(stats, key=lambda s: -s["inputs_tested"])[:2]:
        u = unit_from_row(s)
        assert len(units.make_inputs(u)["x"]) == s["inputs_tested"]


def test_unit_zero_replays_saved_examples_first_and_rebuilds_from_its_row():
    import json as _json

    from fuzzfarm.work.make import make_inputs, make_unit
    replay = [(0x4AFFFFFE,), (0x3F800000,)]
    unit = make_unit("dev", ("sinpi", "binary32", 1), 0, 3, 64, 1, replay=replay)
    plain = make_inputs(make_unit("dev", ("sinpi", "binary32", 1), 0, 3, 64, 1))
    ins = make_inputs(unit)
    assert list(ins["x"][:2]) == [0x4AFFFFFE, 0x3F800000]
    assert (ins["x"][2:] == plain["x"]).all()
    rec = _json.loads(unit.recipe_json)
    assert rec == {"special": True, "replay": [[0x4AFFFFFE], [0x3F800000]]}
    # an int argument comes back as the int32 it was (two's complement bits)
    pown = make_unit("dev", ("pown", "binary32", 1), 0, 3, 64, 1,
                     replay=[(0x40000000, 0xFFFFFFFF)])
    p = make_inputs(pown)
    assert int(p["x"][0]) == 0x40000000 and int(p["y"][0]) == -1


class _CheckHere:
    """A pipeline executor that checks each landed unit at once in this process and tells
    ``orders`` (the Pipeline's executor interface; tests)."""

    sparse = True

    def __init__(self, out, meta, orders):
        self.out, self.meta, self.orders, self.done, self.in_flight = out, meta, orders, [], 0

    def slot(self):
        return None

    def free(self, slot) -> None:
        pass

    def submit(self, landed, claims, slot=None, handle=None) -> None:
        from fuzzfarm.work.check import check_and_write
        self.done.append(check_and_write(landed, claims, self.meta, "r", self.out))
        self.orders.complete(self.done[-1])

    def reap(self, timeout: float = 0.0, bounded: bool = False) -> list:
        out, self.done = self.done, []
        return out

    def drain(self) -> list:
        return self.reap()


@pytest.mark.device
def test_a_context_the_driver_cannot_make_again_after_a_fault_is_a_fault_not_a_crash(
        tmp_path, monkeypatch):
    """After an enqueue error the session drops the unit's context (it may be unusable)
    and the next unit makes a new one; a driver that then cannot make one (an H200 whose
    memory ran out answered CL_OUT_OF_HOST_MEMORY) gives enqueue-error faults, recorded
    with the units that met them, and the pipeline goes on to the end: no exception
    leaves it, every unit is completed or a fault, and the target is withdrawn after its
    second error."""
    import pyopencl as cl
    from devices import require_device
    from fuzzfarm.device import runner as runner_mod
    from fuzzfarm.orchestrate.pipeline import LocalMaker, LocalOrders, Pipeline
    from fuzzfarm.orchestrate.scheduler import Scheduler, Stream
    from fuzzfarm.work.session import DeviceSession
    info = require_device()
    made = []
    real = runner_mod.DeviceRunner

    class Failing(real):
        def __init__(self, *a, **kw):
            made.append(1)
            if len(made) > 1:       # the context made again after the planted error
                raise cl.RuntimeError(cl._cl._ErrorRecord(
                    "clCreateContext", cl.status_code.OUT_OF_HOST_MEMORY,
                    "Context failed: OUT_OF_HOST_MEMORY"))
            super().__init__(*a, **kw)

    monkeypatch.setattr(runner_mod, "DeviceRunner", Failing)
    bad = "sin.binary32.w1-000002"
    session = DeviceSession(info, plants={"enqueue": [bad]})
    sched = Scheduler([Stream("p", 1, "recipes", ("sin", "binary32", 1), "", 7,
                              max_units=6)], unit_inputs=4096)
    sched.add_device("d", "p")
    orders = LocalOrders(sched, "d")
    executor = _CheckHere(tmp_path, info.columns("binary32"), orders)
    pipeline = Pipeline(session, str(tmp_path), "r", orders, LocalMaker(), executor)
    totals = pipeline.run()
    reasons = [(u.rsplit("-", 1)[-1], why) for u, why, _ in pipeline.faults]
    # the planted error, then unit 1 (on the device meanwhile: landed, but its claims
    # need the context made again), then the target is withdrawn
    assert reasons == [("000002", "enqueue_error"), ("000001", "enqueue_error")]
    assert len(made) == 2 and "OUT_OF_HOST_MEMORY" in str(pipeline.faults[1][2])
    assert totals.faults == 2 and totals.units == 1          # unit 0 checked before
    assert not sched.leases and sched.lease("d") is None     # nothing left hanging
