"""The OpenCL layer (fuzzfarm.device.runner) and `fuzzfarm devices`, on real devices.

Device tier (docs/design.md, decision 13): skipped where pyopencl or an OpenCL device is missing.
The tests run once per device chosen by the environment variable FUZZFARM_TEST_DEVICES
(a ``--device`` selector, e.g. 'all' or 'nvidia'; default: the one device of
tests/devices.py, PyPI's PoCL where it is installed).  PyPI's pocl-binary-distribution is
enough.  A cold PoCL kernel cache costs a few seconds here
(PoCL generates each kernel's code at its first launch); a warm one well under a second.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re

import numpy as np
import pytest

pytestmark = pytest.mark.device

pytest.importorskip("pyopencl", reason="pyopencl is not installed")

from click.testing import CliRunner  # noqa: E402

from devices import one_device  # noqa: E402
from edgecases.catalogue import Arg, Function, function, functions  # noqa: E402
from fuzzfarm.cli import main  # noqa: E402
from fuzzfarm.device.discovery import (  # noqa: E402
    DeviceInfo, DeviceSelectionError, list_devices, select_devices,
)
from fuzzfarm.device.runner import DeviceRunner, KernelBuildError  # noqa: E402
from fuzzfarm.formats import BINARY32, BINARY64  # noqa: E402

DEVICES = list_devices()
if not DEVICES:
    pytest.skip("no OpenCL device found (`pip install pocl-binary-distribution` gives a CPU "
                "one)", allow_module_level=True)
TEST_DEVICES = (select_devices(os.environ["FUZZFARM_TEST_DEVICES"])
                if os.environ.get("FUZZFARM_TEST_DEVICES") else [one_device()])
FUNCTIONS = [f for f in functions().values() if 1 in f.widths and "binary32" in f.precisions]
FUNCTIONS64 = [f for f in FUNCTIONS if "binary64" in f.precisions]

INT_MIN, INT_MAX = -(2**31), 2**31 - 1

#: binary32 specials: ±0, ±true_min, largest subnormal, ±min_normal, 1, -1.5, 4, ±max,
#: ±inf, quiet NaN with payload 1, signaling NaN 0x7f800001, negative sNaN, default qNaN.
F32_SPECIALS = np.array([
    0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x80800000,
    0x3f800000, 0xbfc00000, 0x40800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000,
    0x7fc00001, 0x7f800001, 0xff800001, 0x7fc00000,
], dtype=np.uint32)
INT_SPECIALS = np.array([0, 1, -1, 2, -3, 127, -150, INT_MIN, INT_MAX], dtype=np.int32)

F64_SPECIALS = np.array([
    0x0, 0x8000000000000000, 0x1, 0x000fffffffffffff, 0x0010000000000000,
    0x3ff0000000000000, 0xbff8000000000000, 0x7fefffffffffffff, 0x7ff0000000000000,
    0xfff0000000000000, 0x7ff8000000000001, 0x7ff0000000000001,
], dtype=np.uint64)


def special_inputs(fn: Function, floats: np.ndarray) -> dict[str, np.ndarray]:
    """Every combination of the specials over ``fn``'s arguments."""
    pools = [floats if a.kind != "int" else INT_SPECIALS for a in fn.inputs]
    if len(pools) == 3:     # fma, clamp, ...: every third value keeps it small
        pools = [p[::3] for p in pools]
    combos = list(itertools.product(*pools))
    return {a.name: np.array([c[i] for c in combos], dtype=pools[i].dtype)
            for i, a in enumerate(fn.inputs)}


@pytest.fixture(scope="module", params=TEST_DEVICES, ids=lambda d: f"{d.index}-{d.fingerprint}")
def info(request) -> DeviceInfo:
    return request.param


@pytest.fixture(scope="module")
def runner(info) -> DeviceRunner:
    r = DeviceRunner(info)
    r.prepare(FUNCTIONS, BINARY32)      # one build for the whole catalogue
    return r


def bits(x: float) -> int:
    return BINARY32.bits_of(x)


def one(fn_name: str, runner: DeviceRunner, **args) -> dict[str, int]:
    """Run one element; float args given as bit patterns (int), int args as ints."""
    fn = function(fn_name)
    inputs = {a.name: np.array([args[a.name]], dtype=np.uint32 if a.kind == "float" else np.int32)
              for a in fn.inputs}
    return {k: int(v[0]) for k, v in runner.run(fn, inputs).items()}


# -- enumeration and identity -------------------------------------------------------------

def test_list_devices_finds_pypi_pocl():
    pytest.importorskip("pocl_binary_distribution")
    assert any("pocl" in d.platform_version.lower() for d in DEVICES), [d.label for d in DEVICES]


def test_enumeration_order():
    assert [d.index for d in DEVICES] == list(range(len(DEVICES)))
    pairs = [(d.platform_index, d.device_index) for d in DEVICES]
    assert pairs == sorted(pairs) and len(set(pairs)) == len(pairs)


def test_device_info_fields(info):
    assert info.profile in ("FULL_PROFILE", "EMBEDDED_PROFILE")
    assert info.single_fp_config > 0
    assert "ROUND_TO_NEAREST" in info.fp_flags("binary32") or info.is_embedded
    assert (info.double_fp_config is not None) == info.has_fp64
    assert info.fp_flags("binary64") == () if not info.has_fp64 else info.fp_flags("binary64")
    if not info.has_fp16:
        assert info.half_fp_config is None and info.fp_flags("binary16") == ()
    assert info.device_type and info.name and info.label.startswith(info.name.split()[0])
    with pytest.raises(ValueError, match="precision='binary128'"):
        info.fp_flags("binary128")


def test_fingerprint_is_stable_and_tracks_the_driver(info):
    assert re.fullmatch(r"[0-9a-f]{12}", info.fingerprint)
    again = [d for d in list_devices() if d.index == info.index][0]
    assert again.fingerprint == info.fingerprint and again == info
    assert dataclasses.replace(info, driver_version=info.driver_version + ".1").fingerprint \
        != info.fingerprint
    # the position is not identity: the same stack elsewhere has the same fingerprint
    assert dataclasses.replace(info, index=7, platform_index=3).fingerprint == info.fingerprint


def test_to_dict_is_json(info):
    d = json.loads(json.dumps(info.to_dict()))
    assert d["fingerprint"] == info.fingerprint and d["label"] == info.label
    assert d["fp_flags"]["binary32"] == list(info.fp_flags("binary32"))
    assert d["has_fp64"] == info.has_fp64


# -- selection -----------------------------------------------------------------------------

def test_select_all():
    assert select_devices(None) == DEVICES
    assert select_devices("all") == DEVICES
    assert select_devices(" ALL ") == DEVICES


def test_select_by_index_pair_fingerprint_and_name(info):
    assert select_devices(str(info.index)) == [info]
    assert select_devices(f"{info.platform_index}:{info.device_index}") == [info]
    assert select_devices(info.fingerprint) == [info]
    assert select_devices(info.fingerprint[:6].upper()) == [info]
    assert info in select_devices(info.name.upper())
    assert info in select_devices(info.device_type.lower())
    # duplicates removed, order of first mention kept
    assert select_devices(f"{info.index}, {info.fingerprint},{info.index}") == [info]


def test_select_pocl_by_name():
    pytest.importorskip("pocl_binary_distribution")
    chosen = select_devices("pocl")
    assert chosen and all("pocl" in d.platform_version.lower() for d in chosen)


def test_a_fingerprint_of_digits_only_is_not_an_index(info):
    """A fingerprint is 12 hex digits, ~0.4 % of them decimal digits only: such a one
    (or a prefix of 6 or more of its digits) selects its device, not device number N."""
    digits = next(d for d in (dataclasses.replace(info, driver_version=f"v{k}", index=k % 3)
                              for k in range(100_000)) if d.fingerprint.isdigit())
    other = dataclasses.replace(info, index=5, driver_version="other")
    assert select_devices(digits.fingerprint, devices=[other, digits]) == [digits]
    assert select_devices(digits.fingerprint[:6], devices=[other, digits]) == [digits]
    assert select_devices("5", devices=[other, digits]) == [other]


def test_select_keeps_the_order_named(info):
    a = dataclasses.replace(info, index=0, device_index=0, name="Alpha GPU", device_type="GPU")
    b = dataclasses.replace(info, index=1, device_index=1, name="Beta CPU", device_type="CPU")
    assert select_devices("1,0", devices=[a, b]) == [b, a]
    assert select_devices("beta,alpha,1", devices=[a, b]) == [b, a]
    assert select_devices("gpu", devices=[a, b]) == [a]
    assert select_devices(f"{info.platform_index}:1", devices=[a, b]) == [b]


@pytest.mark.parametrize("selector", ["foo", "99", "7:7", "0,nosuchdevice", "abcdef123456"])
def test_unknown_term_names_the_term_and_the_devices(selector):
    bad = selector.split(",")[-1]
    with pytest.raises(DeviceSelectionError) as exc:
        select_devices(selector)
    msg = str(exc.value)
    assert "\n" not in msg
    assert f"--device {bad!r} matches no OpenCL device; available: 0 " in msg
    assert DEVICES[0].fingerprint in msg


def test_empty_term_and_empty_list():
    with pytest.raises(DeviceSelectionError, match="empty term"):
        select_devices("0,,1")
    with pytest.raises(DeviceSelectionError, match="none found"):
        select_devices("0", devices=[])
    assert select_devices(None, devices=[]) == []


# -- running -------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", FUNCTIONS, ids=[f.name for f in FUNCTIONS])
def test_every_function_runs_on_specials(runner, fn):
    inputs = special_inputs(fn, F32_SPECIALS)
    n = len(next(iter(inputs.values())))
    out = runner.run(fn, inputs)
    assert list(out) == [o.name for o in fn.outputs]
    for o in fn.outputs:
        assert out[o.name].dtype == (np.int32 if o.kind == "int" else np.uint32)
        assert out[o.name].shape == (n,)


def test_bits_travel_unchanged(runner):
    """A reinterpreting identity kernel returns every pattern, sNaNs and payloads included:
    the host<->device path converts nothing."""
    ident = Function("as_float", "gentype as_float(gentype x)", (Arg("x", "float"),),
                     (Arg("ret", "float", True),))
    rng = np.random.default_rng(1)
    x = np.concatenate([F32_SPECIALS, rng.integers(0, 2**32, 1000, dtype=np.uint32)])
    assert np.array_equal(runner.run(ident, {"x": x})["ret"], x)


def test_known_values(runner):
    assert one("sqrt", runner, x=bits(4.0))["ret"] == 0x40000000
    assert one("frexp", runner, x=bits(8.0)) == {"ret": bits(0.5), "exp": 4}
    assert one("modf", runner, x=bits(-2.5)) == {"ret": bits(-0.5), "iptr": bits(-2.0)}
    assert one("ldexp", runner, x=bits(1.0), k=INT_MIN)["ret"] == 0
    assert one("pown", runner, x=bits(2.0), y=-1)["ret"] == bits(0.5)
    assert one("copysign", runner, x=bits(1.0), y=0x80000000)["ret"] == bits(-1.0)
    # copysign may quiet a signaling NaN, but must return a NaN with the sign of y
    r = one("copysign", runner, x=0x7f800001, y=bits(1.0))["ret"]
    assert (r & 0x7fffffff) > 0x7f800000 and r >> 31 == 0


def test_any_length(runner):
    rng = np.random.default_rng(2)
    for name in ("sin", "frexp", "ldexp", "ilogb"):
        fn = function(name)
        for n in (1, 10, 63, 64, 65, 1001):
            inputs = {a.name: (rng.integers(0, 2**32, n, dtype=np.uint32) if a.kind == "float"
                               else rng.integers(-300, 300, n, dtype=np.int32))
                      for a in fn.inputs}
            out = runner.run(fn, inputs)
            assert [len(v) for v in out.values()] == [n] * len(fn.outputs)
            # the same elements give the same results, whatever the batch around them
            head = runner.run(fn, {k: v[:1] for k, v in inputs.items()})
            assert all(head[k][0] == out[k][0] for k in out)


def test_staging_slots_are_reused_within_their_budget(info, monkeypatch):
    """Launches of several buffer layouts, again and again, make each layout's slot once
    and reuse it; the idle slots kept never exceed the byte budget (one slot at least)."""
    from fuzzfarm.device import runner as device_module
    made = []
    real = device_module.Slot.__init__

    def counting(self, *a, **k):
        made.append(1)
        real(self, *a, **k)
    monkeypatch.setattr(device_module.Slot, "__init__", counting)
    r = DeviceRunner(info)
    rng = np.random.default_rng(3)
    x32 = rng.integers(0, 2**32, 5000, dtype=np.uint32)
    fns = [(function("frexp"), BINARY32), (function("sin"), BINARY32),
           (function("ilogb"), BINARY32)]
    for rounds in range(4):
        for fn, fmt in fns:
            r.submit(fn, {"x": x32}, fmt).wait()
        if rounds == 0:
            first = len(made)
    assert len(made) == first <= len(fns)
    r.max_idle_bytes = 1
    for fn, fmt in fns:
        r.submit(fn, {"x": x32}, fmt).wait()
    assert len(r._idle) == 1


@pytest.mark.parametrize("pinned", [True, False], ids=["pinned", "pageable"])
def test_submitted_runs_overlap_and_match_run(info, pinned):
    """Several launches in flight at once (double buffering and more), waited in any
    order, give what ``run`` gives; staging slots are reused, not piled up; ``wait`` is
    idempotent and ``device_seconds`` is measured."""
    from fuzzfarm.device import runner as device_module
    r = DeviceRunner(info, pinned=pinned)
    rng = np.random.default_rng(7)
    fr, dot = function("frexp"), function("dot")
    batches = [rng.integers(0, 2**32, n, dtype=np.uint32) for n in (5000, 1, 70_000, 4097, 5000)]
    want = [r.run(fr, {"x": x}) for x in batches]
    for rounds in range(3):
        pending = [r.submit(fr, {"x": x}) for x in batches]
        for k in (2, 0, 4, 1, 3):
            got = pending[k].wait()
            assert got.keys() == want[k].keys()
            assert all(np.array_equal(got[o], want[k][o]) for o in got)
            assert pending[k].wait() is got
            assert pending[k].device_seconds >= 0
        assert len(r._idle) <= device_module.MAX_IDLE_SLOTS
    # a scalar (sgentype) output of a vector built-in, and the source-kernel path
    p = r.submit(dot, {"p0": batches[0][:12], "p1": batches[0][12:24]}, BINARY32, 4)
    assert p.wait()["ret"].shape == (3,)
    x = batches[2]
    src = ("__kernel void plus1(__global const uint *a, __global uint *b)"
           " { size_t i = get_global_id(0); b[i] = a[i] + 1u; }")
    (out,) = r.submit_source(src, "plus1", [x], [np.uint32]).wait()
    assert np.array_equal(out, x + np.uint32(1))


def test_wait_without_copy_gives_staging_views(info):
    r = DeviceRunner(info)
    x = np.arange(1000, dtype=np.uint32)
    p = r.submit(function("fabs"), {"x": x})
    view = p.wait(copy=False)["ret"]
    assert np.array_equal(view, x & np.uint32(0x7FFFFFFF)) and not view.flags.owndata


#: Exact built-ins whose vector overloads must agree with the scalar ones bit for bit on
#: non-NaN inputs; they exercise every kind of argument and output.  (Not sin & co.: on
#: PoCL 3.0-rc2 vector sin/cos/tan differ wildly from scalar for tiny inputs, and vector
#: ldexp flushes some subnormal results; width 16 crashes PoCL's compiler for most
#: built-ins, killing the process, so it is not tried here.)
VECTOR_PLUMBING = ("frexp", "modf", "pown", "ilogb", "copysign")


@pytest.mark.parametrize("width", [2, 3, 4, 8])
def test_vector_widths_agree_with_scalar(runner, width):
    rng = np.random.default_rng(width)
    n = 1001                                   # not a multiple of any width
    for name in VECTOR_PLUMBING:
        fn = function(name)
        inputs = {}
        for a in fn.inputs:
            if a.kind == "float":
                x = rng.integers(0, 2**32, n, dtype=np.uint32)
                inputs[a.name] = np.where((x & 0x7fffffff) > 0x7f800000, x & 0xff800000, x)
            else:
                inputs[a.name] = rng.integers(-40, 40, n, dtype=np.int32)
        scalar = runner.run(fn, inputs)
        vector = runner.run(fn, inputs, width=width)
        for o in fn.outputs:
            assert vector[o.name].dtype == scalar[o.name].dtype
            assert np.array_equal(vector[o.name], scalar[o.name]), (name, width, o.name)


def test_device_constants(runner):
    c = runner.device_constants()
    assert c["FP_ILOGB0"] in (INT_MIN, -INT_MAX)
    assert c["FP_ILOGBNAN"] in (INT_MAX, INT_MIN)
    assert runner.device_constants() == c


def test_binary64(info):
    if not info.has_fp64:
        with pytest.raises(ValueError, match="cl_khr_fp64"):
            DeviceRunner(info).run(function("sqrt"), {"x": np.zeros(1, np.uint64)}, BINARY64)
        return
    r = DeviceRunner(info)
    r.prepare(FUNCTIONS64, BINARY64)
    for fn in FUNCTIONS64:
        out = r.run(fn, special_inputs(fn, F64_SPECIALS), BINARY64)
        for o in fn.outputs:
            assert out[o.name].dtype == (np.int32 if o.kind == "int" else np.uint64)
    x = np.array([BINARY64.bits_of(4.0), BINARY64.bits_of(8.0)], dtype=np.uint64)
    assert r.run(function("sqrt"), {"x": x}, BINARY64)["ret"][0] == BINARY64.bits_of(2.0)
    fr = r.run(function("frexp"), {"x": x}, BINARY64)
    assert fr["ret"][1] == BINARY64.bits_of(0.5) and fr["exp"][1] == 4


def test_source_is_what_runs(runner):
    src = runner.source(function("frexp"))
    assert "frexp(x_v, &exp_v)" in src and "__kernel void k_frexp(" in src


def test_input_errors(runner):
    sin, atan2, pown = function("sin"), function("atan2"), function("pown")
    u = np.zeros(3, np.uint32)
    with pytest.raises(ValueError, match=r"dtype=float32.*view\(np.uint32\)"):
        runner.run(sin, {"x": np.zeros(3, np.float32)})
    with pytest.raises(ValueError, match=r"inputs\['y'\].dtype=uint32.*int32"):
        runner.run(pown, {"x": u, "y": u})
    with pytest.raises(ValueError, match=r"give exactly \['y', 'x'\]"):
        runner.run(atan2, {"y": u})
    with pytest.raises(ValueError, match="different lengths"):
        runner.run(atan2, {"y": u, "x": u[:2]})
    with pytest.raises(ValueError, match="empty"):
        runner.run(sin, {"x": u[:0]})
    with pytest.raises(ValueError, match="1-D"):
        runner.run(sin, {"x": u.reshape(3, 1)})


def test_build_errors_leave_no_file_behind(info, tmp_path, monkeypatch):
    """pyopencl saves a failed program's source to a temporary .cl file; the runner
    deletes it (the fault finding keeps the source)."""
    import tempfile

    import pyopencl.characterize
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # the path pyopencl takes for drivers without their own build cache (Oclgrind,
    # Intel's CPU runtime), which saves the source on failure
    monkeypatch.setattr(pyopencl.characterize, "has_src_build_cache", lambda dev: False)
    bad = Function("no_such_builtin", "gentype no_such_builtin(gentype x)",
                   (Arg("x", "float"),), (Arg("ret", "float", True),))
    for _ in range(3):
        with pytest.raises(KernelBuildError):
            DeviceRunner(info).prepare([bad])
    assert list(tmp_path.iterdir()) == []


def test_build_errors_carry_log_and_options(info):
    r = DeviceRunner(info, build_options="-cl-no-such-option")
    with pytest.raises(KernelBuildError, match="-cl-no-such-option") as exc:
        r.run(function("sin"), {"x": np.zeros(1, np.uint32)})
    assert exc.value.options == "-cl-no-such-option"
    assert "k_sin" in exc.value.source

    bad = Function("no_such_builtin", "gentype no_such_builtin(gentype x)",
                   (Arg("x", "float"),), (Arg("ret", "float", True),))
    r = DeviceRunner(info)
    with pytest.raises(KernelBuildError, match="k_no_such_builtin") as exc:
        r.prepare([function("sin"), bad, function("cos")])
    assert "no_such_builtin" in exc.value.log
    assert set(exc.value.failed) == {"no_such_builtin"} and exc.value.kernels
    assert exc.value.code == -11 and exc.value.code_name == "CL_BUILD_PROGRAM_FAILURE"
    d = exc.value.failed["no_such_builtin"].detail()
    assert d["error_code"] == -11 and "no_such_builtin" in d["build_log"] + d["kernel_source"]
    # the good kernels of the failed program were still built and cached
    assert r.run(function("cos"), {"x": np.zeros(1, np.uint32)})["ret"][0] == bits(1.0)


def test_a_runner_keeps_its_programs_but_never_a_failure(info, monkeypatch):
    from fuzzfarm.device import runner as runner_module
    r = DeviceRunner(info)
    text = "__kernel void k_one(__global float *x) { x[0] = 1.0f; }"
    first = r.build(text, "one")
    assert r.build(text, "one") is first                          # the same text: kept
    assert r.build(text, "one", options="-cl-fast-relaxed-math") is not first
    r.planted_build = ("k_one",)            # a planted failure is another program
    bad = "__kernel void k_two(__global float *x) { x[0] = k_one(); }"
    for _ in range(2):                      # built, and raised, each time
        with pytest.raises(KernelBuildError):
            r.build(bad, "two")
    r.planted_build = ()
    assert r.build(text, "one") is first
    monkeypatch.setattr(runner_module, "PROGRAMS_KEPT", 2)
    r.build(text + " ", "one'")
    r.build(text + "  ", "one''")           # the oldest, `first`, is let go
    assert r.build(text, "one") is not first


def test_runner_refuses_a_changed_device(info):
    ghost = dataclasses.replace(info, driver_version="0.0-ghost")
    with pytest.raises(DeviceSelectionError, match="no longer there"):
        DeviceRunner(ghost)


# -- command line --------------------------------------------------------------------------

def test_cli_devices_json():
    result = CliRunner().invoke(main, ["devices", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [d["fingerprint"] for d in data] == [d.fingerprint for d in DEVICES]
    assert all(re.fullmatch(r"[0-9a-f]{12}", d["fingerprint"]) for d in data)


@pytest.mark.parametrize("columns", ["80", "200"])
def test_cli_devices_table(columns, monkeypatch):
    monkeypatch.setenv("COLUMNS", columns)
    result = CliRunner().invoke(main, ["devices"])
    assert result.exit_code == 0, result.output
    for d in DEVICES:
        assert d.fingerprint in result.output


def test_cli_bad_option():
    result = CliRunner().invoke(main, ["devices", "--no-such-option"])
    assert result.exit_code == 2 and "No such option" in result.output


def test_cli_devices_with_no_device(monkeypatch):
    import fuzzfarm.device.discovery
    monkeypatch.setattr(fuzzfarm.device.discovery, "list_devices", lambda: [])
    result = CliRunner().invoke(main, ["devices", "--json"])
    assert result.exit_code == 0 and json.loads(result.output) == []
    result = CliRunner().invoke(main, ["devices"])
    assert result.exit_code == 0 and "No OpenCL device found" in result.output


def test_cli_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and "fuzzfarm, version" in result.output


def test_the_bundled_pocl_is_recognised_where_the_wheel_ships_it():
    """pyopencl's wheel ships libpocl: each of its devices is found by fingerprint, in a
    child process that sees that library alone (a broken child must not pass as 'no
    bundled PoCL here', which would skip every test that needs it)."""
    from fuzzfarm.device import discovery
    libs = discovery.bundled_pocl_libraries()
    if not libs:
        pytest.skip("this pyopencl ships no libpocl")
    found = discovery._bundled_pocl_fingerprints()
    assert found and set(found.values()) <= set(libs)
    pocl = [d for d in list_devices() if "portable computing language" in d.platform_name.lower()]
    bundled = [d for d in pocl if discovery.bundled_pocl_library(d)]
    assert bundled, [d.label for d in pocl]
    others = [d for d in list_devices() if d not in pocl]     # Oclgrind, Intel: never PoCL
    assert not any(discovery.bundled_pocl_library(d) for d in others)


def test_the_idle_staging_budget_grows_with_the_device_memory():
    """A runner keeps an eighth of its device's global memory of idle staging slots, at
    least MAX_IDLE_BYTES and at most IDLE_BYTES_CAP (a 141-GB GPU: the cap; a 24-GiB CPU
    device: the floor)."""
    from fuzzfarm.device import runner as device_module
    lim = device_module.idle_bytes_limit
    assert lim(0) == lim(24 << 30) == device_module.MAX_IDLE_BYTES
    assert lim(64 << 30) == 8 << 30
    assert lim(141 * 10 ** 9) == device_module.IDLE_BYTES_CAP
