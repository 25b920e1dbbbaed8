"""Throughput of the two tiers of the oracle (issue 4): the vectorized screen
(fuzzfarm.oracle.screen) and the exact mpmath path (oracle.reference + ulp_error), single process,
in checked results per second per core.  Figures only, no assertions.

Inputs are random bit patterns of the format (NaNs left out: the checker judges them by
rule), the device results the correctly rounded float64 (long double for binary64) value
moved by a random -1/0/+1 ULP (a few of those are real failures where the bound is tight,
e.g. 1 + 2**-10 for a binary16 sin just below 1), the bound the catalogue's full-profile
bound.  "screen/s" times ``screen()`` on float64 arguments (the caller's bits-to-float64
conversion is not included); "reference/s" the float64 (long double) reference alone, on
the whole array at once.  "decided" is the share of elements the screen passed or failed;
the rest would go to the exact path (for random patterns: specials, overflow and
underflow, exact zeros such as sinpi of the integers).

    python benchmarks/bench_screen.py [--n 4194304] [--exact 3000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from edgecases import bounds
from fuzzfarm import formats
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64
from fuzzfarm.oracle import reference, ulp_error
from fuzzfarm.oracle.screen import BLOCK, LONGDOUBLE_OK, SCREENS, screen

CASES = [("sin", BINARY32), ("exp", BINARY32), ("log", BINARY32), ("sinpi", BINARY32),
         ("tanpi", BINARY32), ("sin", BINARY16), ("sin", BINARY64),
         ("erf", BINARY32), ("tgamma", BINARY32)]     # references by CPython's math.*


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def random_inputs(fmt, n: int, rng) -> np.ndarray:
    """n random non-NaN patterns of fmt (all 2**16 patterns in random order for binary16)."""
    if fmt is BINARY16:
        bits = rng.permutation(np.arange(1 << 16, dtype=np.uint16))
        bits = np.resize(bits, n)
    else:
        raw = rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + \
            rng.integers(0, 2, n, dtype=np.uint64)
        bits = raw.astype(fmt.uint)
    return bits[~formats.is_nan(bits, fmt)]


def device_results(name, x, fmt, rng) -> np.ndarray:
    """RN of the float64 (binary16/32) or long double (binary64) value, +-1 ULP at random."""
    with np.errstate(all="ignore"):
        if fmt is BINARY64:
            from fuzzfarm.oracle import screen as sc
            r = sc._TABLE[name].ref((x.astype(np.longdouble),), None, sc._CLD).astype(np.float64)
        else:
            r = SCREENS[name](x)
    with np.errstate(all="ignore"):
        bits = r.astype(fmt.float).view(fmt.uint)
    step = rng.integers(-1, 2, bits.size).astype(np.int64)
    finite = (bits & fmt.uint(fmt.abs_mask)) < fmt.uint(fmt.max_finite)
    nonzero = (bits & fmt.uint(fmt.abs_mask)) > 0
    move = finite & nonzero
    out = bits.astype(np.int64)
    out[move] += step[move]
    return out.astype(fmt.uint)


def best_time(f, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_screen(name, fmt, n, repeat, rng):
    bits = random_inputs(fmt, n if fmt is not BINARY64 else n // 8, rng)
    x = formats.to_float(bits, fmt)
    got = device_results(name, x, fmt, rng)
    bound = bounds.bound(name, fmt.name).ulps
    s = screen(name, [x], got, bound, fmt)
    t = best_time(lambda: screen(name, [x], got, bound, fmt), repeat)
    return x.size, x.size / t, float((s.passed | s.failed).mean()), float(s.failed.mean())


def bench_reference_alone(name, fmt, n, repeat, rng):
    bits = random_inputs(fmt, n if fmt is not BINARY64 else n // 8, rng)
    x = formats.to_float(bits, fmt)
    if fmt is BINARY64:
        from fuzzfarm.oracle import screen as sc
        xl = x.astype(np.longdouble)
        f = lambda: sc._TABLE[name].ref((xl,), None, sc._CLD)   # noqa: E731
    else:
        f = lambda: SCREENS[name](x)                              # noqa: E731
    with np.errstate(all="ignore"):
        t = best_time(f, repeat)
    return x.size / t


def bench_exact(name, fmt, n, rng):
    """oracle.reference + ulp_error per element, as the checker's exact path does."""
    bits = random_inputs(fmt, n, rng)
    x = formats.to_float(bits, fmt)
    got = device_results(name, x, fmt, rng)
    prec = 2 * fmt.precision + 48
    t0 = time.perf_counter()
    done = 0
    for b, g in zip(bits.tolist(), got.tolist()):
        r = reference(name, (b,), ("float",), fmt, prec)[0]
        if hasattr(r, "man_exp") and (g & fmt.abs_mask) <= fmt.max_finite:
            ulp_error(g, r, fmt)
        done += 1
    return done / (time.perf_counter() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 22, help="elements per screen case")
    ap.add_argument("--exact", type=int, default=3000, help="elements per exact case")
    ap.add_argument("--repeat", type=int, default=5, help="timing repetitions (best kept)")
    a = ap.parse_args(argv)
    rng = np.random.default_rng(20261122)
    print(f"date      {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"machine   {cpu_model()}, {os.cpu_count()} logical CPUs, {platform.machine()}")
    print(f"software  Python {platform.python_version()}, numpy {np.__version__}, "
          f"long double 64-bit significand: {LONGDOUBLE_OK}")
    print(f"screen    block {BLOCK} elements; single process, one thread")
    print()
    print("screen (checked results per second, one core)")
    print(f"{'function':10s} {'format':9s} {'elements':>9s} {'screen/s':>12s} "
          f"{'reference/s':>12s} {'decided':>8s} {'failed':>7s}")
    for name, fmt in CASES:
        n, rate, decided, failed = bench_screen(name, fmt, a.n, a.repeat, rng)
        ref_rate = bench_reference_alone(name, fmt, a.n, a.repeat, rng)
        print(f"{name:10s} {fmt.name:9s} {n:9d} {rate / 1e6:10.2f} M {ref_rate / 1e6:10.2f} M "
              f"{decided:8.4f} {failed:7.4f}")
    print()
    print("exact path (mpmath at 2p+48 bits: oracle.reference + ulp_error)")
    print(f"{'function':10s} {'format':9s} {'elements':>9s} {'checked/s':>12s}")
    for name, fmt in CASES:
        rate = bench_exact(name, fmt, a.exact, rng)
        print(f"{name:10s} {fmt.name:9s} {a.exact:9d} {rate / 1e3:10.2f} k")


if __name__ == "__main__":
    main()
