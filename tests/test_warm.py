"""The warm-up before a campaign's units (fuzzfarm.work.warm): which units warm a target,
which devices get helper processes, and on the test device that the helpers build and
launch every program so that the device's own session then finds them in the driver's
cache, stop at the deadline, and report honestly."""
from __future__ import annotations

import dataclasses
import time

import pytest

from fuzzfarm.target import Target
from fuzzfarm.work import warm
from fuzzfarm.work.unit import Drawn, Special
from tests.devices import require_device


def test_a_target_is_warmed_by_its_special_unit_and_one_drawn_unit_per_grid_kind():
    units = warm.warm_units(Target.parse("sin", "binary32", 4))
    assert [type(u.source) for u in units] == [Special, Drawn, Drawn]
    # element-wise: work items are inputs / width, so each grid kind gets its work items
    assert [u.source.size for u in units[1:]] == [n * 4 for n in warm.WARM_ITEMS]
    assert all(u.unit_id.startswith("warm-") for u in units)
    geo = warm.warm_units(Target.parse("dot", "binary32", 4))
    assert [u.source.size for u in geo[1:]] == list(warm.WARM_ITEMS)   # one item a vector


def test_a_campaign_of_small_units_warms_no_large_grid():
    t = Target.parse("sin", "binary32", 1)
    assert len(warm.warm_units(t, largest=8192)) == 2                  # special, small
    assert len(warm.warm_units(t, largest=1 << 16)) == 3
    wide = Target.parse("sin", "binary32", 4)
    assert len(warm.warm_units(wide, largest=1 << 17)) == 2           # 2**15 work items


def test_small_and_large_grids_straddle_pocl_s_smallgrid_limit():
    small, large = warm.WARM_ITEMS
    assert small < 1 << 16 <= large


def _info(**changes):
    info = require_device()
    return dataclasses.replace(info, **changes)


@pytest.mark.device
def test_helpers_are_for_devices_whose_compiler_keeps_its_programs():
    assert warm.helpers_useful(_info(device_type="CPU", platform_name="Portable Computing "
                                                                       "Language"))
    assert warm.helpers_useful(_info(device_type="CPU", platform_name="Intel(R) OpenCL"))
    assert warm.helpers_useful(_info(device_type="GPU", platform_name="NVIDIA CUDA"))
    assert not warm.helpers_useful(_info(device_type="CPU|GPU|ACCELERATOR",
                                         platform_name="Oclgrind"))
    assert not warm.helpers_useful(_info(device_type="CPU", platform_name="Oclgrind"))


@pytest.mark.device
def test_too_few_targets_start_no_helper():
    info = require_device()
    targets = {"": [Target.parse(n, "binary32", 1) for n in ("sin", "cos", "exp")]}
    report = warm.warm_in_helpers(info, targets, processes=2)
    assert report.helpers == 0 and report.progress.done == 0
    assert report.progress.total == 3 and report.lost == 0     # none was a helper's


@pytest.mark.device
def test_a_deadline_already_past_stops_the_helpers_at_once():
    info = require_device()
    names = ["sin", "cos", "tan", "exp", "exp2", "log", "log2", "sqrt", "cbrt", "atan",
             "asin", "acos", "sinh", "cosh", "tanh", "erf"]
    targets = {"": [Target.parse(n, "binary32", 1) for n in names]}
    t0 = time.perf_counter()
    report = warm.warm_in_helpers(info, targets, processes=2, deadline=time.time() - 1)
    assert report.stopped and report.helpers == 2
    assert report.lost == len(names) - report.progress.done
    assert time.perf_counter() - t0 < 30


@pytest.mark.device
def test_helpers_warm_every_target_and_the_session_then_runs_from_the_cache(tmp_path,
                                                                            monkeypatch):
    """Two helpers warm 16 targets of three kinds; each target counted once, progress
    reported after each; then a session of this process runs a unit of each kind.  The
    finished warm-up leaves a stamp: the same targets again start no helper; others do."""
    import os
    from fuzzfarm.work.make import make_inputs
    from fuzzfarm.work.session import DeviceSession
    # fuzzfarm's cache (the stamps) in a fresh folder; PoCL's kernel cache where it was
    pocl = os.environ.get("POCL_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pocl")
    monkeypatch.setenv("POCL_CACHE_DIR", pocl)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    info = require_device()
    names = ["fabs", "sqrt", "fmin", "fmax", "copysign", "floor", "ceil", "trunc",
             "convert_int_rte(float)", "convert_float(int)", "convert_uint_sat(float)",
             "convert_short(float)", "length", "dot", "rint", "round"]
    targets = {"": [Target.parse(n, "binary32", 1) for n in names]}
    seen = []
    report = warm.warm_in_helpers(info, targets, processes=2, on_progress=lambda p:
                                  seen.append((p.done, p.total)))
    assert report.helpers == 2 and not report.stopped and report.lost == 0
    assert report.progress.done == report.progress.total == len(names)
    assert report.progress.failed == 0
    assert seen == [(k, len(names)) for k in range(1, len(names) + 1)]
    session = DeviceSession(info)
    session.prepare(targets)
    for unit in warm.warm_units(Target.parse("convert_int_rte(float)", "binary32", 1))[:1]:
        launch = session.launch(unit, make_inputs(unit))
        landed = session.land(launch)
        launch.release()
        assert landed.unit == unit
    assert warm.is_warm(info, targets) and warm.stamp_path(info, targets, None).is_file()
    again = warm.warm_in_helpers(info, targets, processes=2)
    assert again.warm and again.helpers == 0 and again.progress.done == len(names)
    other = {"": targets[""][:-1]}
    assert not warm.is_warm(info, other)                 # another target list: not stamped
    assert not list(tmp_path.rglob(".tmp-*"))            # the stamp written whole


@pytest.mark.device
def test_the_driver_cache_a_stamp_needs_is_the_driver_s_own(tmp_path, monkeypatch):
    nvidia = _info(device_type="GPU", platform_name="NVIDIA CUDA")
    monkeypatch.setenv("CUDA_CACHE_PATH", str(tmp_path / "nv"))
    assert not warm._driver_cache_present(nvidia)                   # no CUDA cache yet
    (tmp_path / "nv").mkdir()
    assert warm._driver_cache_present(nvidia)
    monkeypatch.setenv("CUDA_CACHE_DISABLE", "1")                   # a cache never kept
    assert not warm._driver_cache_present(nvidia)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    intel = _info(device_type="CPU", platform_name="Intel(R) OpenCL")
    assert not warm._driver_cache_present(intel)                    # pyopencl's cache
    (tmp_path / "xdg" / "pyopencl").mkdir(parents=True)
    assert warm._driver_cache_present(intel)


def _gpu_targets():
    names = ["sin", "cos", "exp", "log", "fmin", "fmax", "sqrt", "cbrt", "dot", "length"]
    conversions = ["convert_int_rte(float)", "convert_float(int)"]
    return {"": [Target.parse(n, p, w) for n in names for p in ("binary32", "binary64")
                 for w in (1, 4)] + [Target.parse(c, "binary32", 1) for c in conversions]}


@pytest.mark.device
def test_gpu_helpers_are_dealt_whole_kernel_programs_each_built_once():
    from fuzzfarm.work.session import capabilities_of, kernel_programs
    info = _info(device_type="GPU", platform_name="NVIDIA CUDA")
    targets = _gpu_targets()
    whole = kernel_programs(targets, capabilities_of(info))[""]
    shares = warm._kernel_shares(info, targets, 3)
    dealt = [kernel_programs(share, capabilities_of(info))[""] for share in shares]
    assert all(dealt)                                   # every helper builds something
    # each program of the whole run is built by exactly one helper, with the same list
    # of targets (so the same program text)
    seen = [(key, ts) for d in dealt for key, ts in d.items()]
    assert sorted(k for k, _ in seen) == sorted(whole)
    assert all(whole[key] == ts for key, ts in seen)


@pytest.mark.device
def test_a_gpu_helper_builds_its_kernels_and_each_target_s_screen(monkeypatch):
    """The helper's build-only path, run in this process on the test device: the kernel
    programs it was dealt, then its share's screens one target at a time, a result per
    target."""
    import queue

    from fuzzfarm.work.session import DeviceSession
    info = require_device()
    targets = {"": [t for t in _gpu_targets()[""] if t.precision == "binary32"]}
    kernels = warm._kernel_shares(info, targets, 2)[0]
    share = {"": targets[""][1::2]}
    calls = {"kernels": [], "screens": []}
    prepare_kernels, prepare_screens = DeviceSession.prepare_kernels, \
        DeviceSession.prepare_screens

    def spy_kernels(self, by_options):
        calls["kernels"].append(by_options)
        return prepare_kernels(self, by_options)

    def spy_screens(self, bo, ts, threads=None, on_built=None):
        calls["screens"].append((bo, list(ts), threads))
        return prepare_screens(self, bo, ts, threads, on_built)
    monkeypatch.setattr(DeviceSession, "prepare_kernels", spy_kernels)
    monkeypatch.setattr(DeviceSession, "prepare_screens", spy_screens)
    results = queue.Queue()
    warm._helper(info, "auto", "auto", {}, targets, share, results, None, kernels)
    assert calls["kernels"] == [kernels]               # not every target's programs
    assert calls["screens"] == [("", [t], 1) for t in share[""]]
    assert [results.get_nowait() for _ in share[""]] == [True] * len(share[""])
    assert results.empty()
