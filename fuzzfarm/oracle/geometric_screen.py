"""The device screen of the geometric built-ins -- length, distance, normalize (and, in
binary32, their fast_ forms) within their ULP bounds, dot and cross within their absolute
tolerances, in binary16, binary32 and binary64 (``GEOMETRIC_SCREENED``, ``screened``;
OpenCL C 3.0 §6.15.5; the argument: docs/device_screen.md, "Geometric built-ins").

One work-item per vector (``geometric_screen.cl``, built for the precision) passes the
result where every lane (and every difference of lanes, for distance) is a normal number of
magnitude on the precision's ground (``GROUND``: binary32 [2**-60, 2**61), binary16 [2**-7, 2**4), binary64 [2**-400,
2**400)) -- where no rule of edgecases/data/geometric.toml holds and the bound alone judges
-- and the result (every lane of a vector result's) is provably within the bound for the
vector width (the element-wise screen's inequality and margin: its references --
sqrt(sum of squares), p_k / sqrt(sum of squares), sums of exact products -- are within
2**-49 of f in binary64 arithmetic for binary16 and binary32 results, within 2**-99 in
double-double for binary64 results; dot's and cross's tolerances in max**2); the answer is
one float32 per vector, its (largest lane's) error in ULPs, or -1 where the host judges it.
The host's geometric checker judges every other vector and the passed one of the largest
error (``verdict.geometric.check_screened``): the device never decides a failure.  Pure
but for ``GeometricScreen``, which builds and enqueues the kernel.
"""
from __future__ import annotations

from importlib import resources

import numpy as np

from edgecases import bounds, catalogue
from edgecases.expressions import Expr

__all__ = ["GEOMETRIC_SCREENED", "GROUND", "screened", "geometric_bound",
           "geometric_screen_source", "GeometricScreen"]

#: The geometric built-ins the device screen judges (ULP bounds in the width n, or dot's and
#: cross's absolute tolerances; a vector result: normalize, fast_normalize, cross); of two
#: arguments: distance, fast_distance, dot, cross.
GEOMETRIC_SCREENED = frozenset({"length", "distance", "fast_length", "fast_distance",
                                "normalize", "fast_normalize", "dot", "cross"})
_TWO = frozenset({"distance", "fast_distance"})
#: The ground of each precision: the screen judges a vector only where every lane (and
#: every difference of distance's) is a normal number of magnitude in [2**lo, 2**hi).
GROUND = {"binary16": (-7, 4), "binary32": (-60, 61), "binary64": (-400, 400)}
#: dot's and cross's tolerances as the kernel applies them (EPS: the precision's machine
#: epsilon, FLT_EPSILON = 2**-23 for binary32)
_TOLERANCES = {"dot": "max * max * (2 * (n - 1)) * EPS", "cross": "max * max * (3 * EPS)"}


def screened(name: str, precision: str) -> bool:
    """Whether the device screen judges geometric built-in ``name`` in ``precision``: every
    precision the catalogue lists it in (the fast_ forms: binary32 only).  Pure."""
    return (name in GEOMETRIC_SCREENED and precision in GROUND
            and precision in catalogue.function(name).precisions)


def geometric_bound(name: str, precision: str, width: int, claims) -> float | None:
    """The ULP bound the screen applies to geometric built-in ``name`` at vector width
    ``width`` under ``claims`` (verdict.claims.Claims): the table's bound for width n
    (edgecases.bounds; binary32 length 3 + 0.5 (0.5 n + 0.5 (n - 1)) ULPs, OpenCL SPIR-V
    Env Table 1) -- for dot and cross 0.5 (dot's width-1 correctly rounded test), where
    the table's tolerance is the kernel's (max * max * (2 (n - 1)) * EPS, max * max * 3 *
    EPS) --, or None where the screen must not be used (another built-in or precision, a
    rounding mode other than round to nearest, a relaxed or finite-math build, a bound of
    several pieces or of another kind).  Pure."""
    if not screened(name, precision):
        return None
    if (tuple(claims.rounding) != ("rte",) or claims.relaxed or claims.finite_math
            or claims.precision != precision or not claims.judges_specials):
        return None
    b = bounds.bound(name, precision, claims.profile, claims.relaxed)
    if b.pieces[1:] or b.pieces[0].when or b.pieces[0].severity != "fail":
        return None
    if name in _TOLERANCES:         # the kernel's own tolerance: the table's, or none
        amount = b.pieces[0].value.amount
        return 0.5 if (b.pieces[0].value.kind == "absolute" and isinstance(amount, Expr)
                       and amount.text == _TOLERANCES[name]) else None
    if b.pieces[0].value.kind != "ulps":
        return None
    amount = b.pieces[0].value.amount
    if isinstance(amount, Expr):
        if not amount.names <= {"n"}:
            return None
        amount = amount({"n": width})
    ulps = float(amount)
    return ulps if ulps >= 0.5 else None


def geometric_screen_source(name: str, precision: str = "binary32") -> str:
    """The OpenCL C source of ``fuzzfarm_geometric_screen`` for built-in ``name`` in
    ``precision`` (any vector width: the width and the pass constant are its arguments).
    Raises KeyError for a built-in or precision it does not screen."""
    from fuzzfarm.oracle.screen_source import REL, _hexf
    from fuzzfarm.formats import format_named
    if not screened(name, precision):
        raise KeyError(f"no geometric device screen for {name} in {precision}")
    fmt = format_named(precision)
    lo, hi = GROUND[precision]
    bias = fmt.emax                          # the exponent bias
    defines = [*(["#define DISTANCE 1"] if name in _TWO else []),
               *(["#define NORMALIZE 1"] if name in ("normalize", "fast_normalize") else []),
               *(["#define DOT 1"] if name == "dot" else []),
               *(["#define CROSS 1"] if name == "cross" else []),
               *([f"#define {precision.upper()} 1"] if precision != "binary32" else []),
               f"#define LANE_E_LO {bias + lo}u", f"#define LANE_E_HI {bias + hi - 1}u",
               f"#define GROUND_LO {_hexf(2.0 ** lo)}", f"#define GROUND_HI {_hexf(2.0 ** hi)}",
               f"#define REL_LO {_hexf(1 - 4 * REL)}",
               f"#define R_LO {_hexf(1 - 2.0 ** -50)}"]
    files = resources.files("fuzzfarm.oracle")
    return "\n".join(defines + [files.joinpath(f).read_text()
                                for f in ("binary64_ops.cl", "geometric_screen.cl")])


def pass_constant(bound: float, precision: str = "binary32", name: str = "") -> float:
    """The kernel's ``c_pass`` at ``bound`` ULPs in ``precision``: the bound less the
    element-wise screen's margin (REL, the rounding of |y - r|; binary64: rel64(name)),
    times the precision's ULP at 1 (2**-23, 2**-10, 2**-52)."""
    from fuzzfarm.formats import format_named
    from fuzzfarm.oracle.screen_source import _margin
    return (bound - _margin(bound, precision, name)) * 2.0 ** -format_named(precision).frac_bits


def tie(bound: float, precision: str = "binary32", name: str = "") -> float:
    """The kernel's ``tie`` at ``bound`` ULPs in ``precision``: two of the element-wise
    screen's margins (ULPs), the most a passed vector's error estimate may exceed its
    error by where f's binade is uncertain (the element-wise screen's TIE)."""
    from fuzzfarm.oracle.screen_source import _margin
    return 2 * _margin(bound, precision, name)


class GeometricScreen:
    """The screen kernel of geometric built-in ``name`` built on ``runner`` (a
    device.runner.DeviceRunner), for units judged under ``claims`` (their precision's
    kernel; each width's bound: ``geometric_bound``).  Raises KernelBuildError where the
    device does not build it (a finding)."""

    def __init__(self, runner, name: str, claims):
        from fuzzfarm.device import commands
        self.runner, self.name, self.claims = runner, name, claims
        self.precision = claims.precision
        source = geometric_screen_source(name, self.precision)
        what = f"device screen of {name} in {self.precision}"
        program = runner.build(source, what, options="")
        self._kernel = commands.kernels(runner, program, ["fuzzfarm_geometric_screen"],
                                        f"the {what}", source)["fuzzfarm_geometric_screen"]

    def bound(self, width: int) -> float:
        """The ULP bound at vector width ``width`` (``geometric_bound``)."""
        return geometric_bound(self.name, self.precision, width, self.claims)

    def enqueue(self, p0buf, p1buf, ybuf, nvec: int, width: int, err: np.ndarray):
        """Enqueue the screen of ``nvec`` vectors of ``width`` lanes on device buffers
        (``p1buf``: any buffer for a built-in of one argument) and the copy of its answer
        into ``err`` (float32 (nvec,), host memory, written when the returned event
        completes)."""
        from fuzzfarm.device.commands import buffer, copy, launch
        ebuf = buffer(self.runner, max(4, err.nbytes))
        bound = self.bound(width)
        c_pass = pass_constant(bound, self.precision, self.name)
        self._kernel.set_args(p0buf, p1buf, ybuf, ebuf, np.uint32(nvec), np.uint32(width),
                              np.float64(c_pass), np.float64(tie(bound, self.precision,
                                                                 self.name)))
        ev = launch(self.runner, self._kernel, max(1, nvec))
        return copy(self.runner, err, ebuf, wait_for=[ev])

    def screen_pairs(self, p0: np.ndarray, y: np.ndarray, width: int,
                     p1: np.ndarray | None = None) -> np.ndarray:
        """The answer (float32 (n,): the error in ULPs where passed, else -1) on arbitrary
        vectors ``p0`` (and ``p1``; the precision's patterns -- uint16, uint32, uint64 --,
        n * ``width`` lanes) and results ``y`` (n, or n * ``width`` for normalize and cross),
        for tests."""
        from fuzzfarm.device.commands import buffer
        from fuzzfarm.formats import format_named
        dtype = np.dtype(f"uint{format_named(self.precision).bits}")
        n = int(np.asarray(p0).size) // int(width)
        err = np.empty(n, np.float32)
        if n == 0:
            return err

        def put(a):
            return buffer(self.runner, host=np.ascontiguousarray(a, dtype), read_only=True)
        a = put(p0)
        self.enqueue(a, a if p1 is None else put(p1), put(y), n, width, err).wait()
        return err
