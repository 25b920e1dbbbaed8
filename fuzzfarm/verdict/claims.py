"""What the device and the build claim: the other half of every verdict (docs/design.md,
decision 2).  ``Claims`` holds, for the precision under test, the device's CL_DEVICE_*_FP_CONFIG
flags (denormals, rounding modes, correctly rounded divide and sqrt), its profile, its
FP_ILOGB0/FP_ILOGBNAN and the effects of the build options (``build_option_effects``).
"""
from __future__ import annotations

from dataclasses import dataclass

from fuzzfarm.formats import FloatFormat, format_named

__all__ = ["Claims", "BUILD_OPTION_EFFECTS", "build_option_effects"]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


#: Build options that change what is allowed (OpenCL 3.0 API §5.8.6.4, "Math Intrinsics
#: Options" and "Optimization Options").  -cl-fast-relaxed-math sets -cl-finite-math-only and
#: -cl-unsafe-math-optimizations; the latter includes -cl-no-signed-zeros and -cl-mad-enable.
BUILD_OPTION_EFFECTS = {
    "-cl-fast-relaxed-math": ("relaxed", "finite_math", "no_signed_zeros"),
    "-cl-unsafe-math-optimizations": ("relaxed", "no_signed_zeros"),
    "-cl-finite-math-only": ("finite_math",),
    "-cl-no-signed-zeros": ("no_signed_zeros",),
    "-cl-denorms-are-zero": ("denorms_are_zero",),
}


def build_option_effects(build_options: str) -> frozenset:
    """The effects (``relaxed``, ``finite_math``, ``no_signed_zeros``,
    ``denorms_are_zero``) of a build-options string; options without an effect on the
    verdict (-cl-mad-enable, -cl-opt-disable, -D...) contribute nothing."""
    out = set()
    for tok in (build_options or "").split():
        out.update(BUILD_OPTION_EFFECTS.get(tok, ()))
    return frozenset(out)


@dataclass(frozen=True)
class Claims:
    """What the device and the build claim for the precision under test; it decides what
    is allowed (docs/design.md, decision 2).

    ``profile`` 'full' or 'embedded' picks the ULP table; ``denormals`` is CL_FP_DENORM
    without -cl-denorms-are-zero (False: the flush-to-zero allowances apply); ``rounding``
    the modes a correctly rounded result may use (('rte',) normally; ('rtz',) for a
    round-toward-zero-only embedded device); ``constants`` the device's FP_ILOGB0 and
    FP_ILOGBNAN; ``inf_nan`` is CL_FP_INF_NAN (False: results for infinite or NaN
    arguments and results are not judged); ``relaxed`` a -cl-unsafe-math-optimizations
    build (the relaxed ULP table; edge-case behaviour may be violated: prescribed-result
    departures become notes); ``finite_math`` (-cl-finite-math-only: arguments and results
    are assumed not NaN or ±inf, so such elements are not judged); ``signed_zeros`` (False
    under -cl-no-signed-zeros: the sign of a zero result is not significant).
    """

    precision: str = "binary32"
    profile: str = "full"
    denormals: bool = True
    rounding: tuple = ("rte",)
    constants: tuple = (("FP_ILOGB0", INT32_MIN), ("FP_ILOGBNAN", INT32_MAX))
    inf_nan: bool = True
    relaxed: bool = False
    finite_math: bool = False
    signed_zeros: bool = True

    @property
    def fmt(self) -> FloatFormat:
        return format_named(self.precision)

    @property
    def consts(self) -> dict:
        """FP_ILOGB0, FP_ILOGBNAN and the rounding modes (rounded constants such as pi/2
        may be rounded in any claimed mode)."""
        return {**dict(self.constants), "rounding": tuple(self.rounding)}

    @property
    def judges_specials(self) -> bool:
        """False where infinities and NaNs are outside the contract (no CL_FP_INF_NAN, or
        -cl-finite-math-only)."""
        return self.inf_nan and not self.finite_math

    @classmethod
    def from_fp_config(cls, flags, profile: str = "FULL_PROFILE", precision: str = "binary32",
                       constants: dict | None = None, build_options: str = "") -> "Claims":
        """Claims from decoded CL_DEVICE_*_FP_CONFIG flag names (e.g. ('DENORM',
        'INF_NAN', 'ROUND_TO_NEAREST')), the CL_DEVICE_PROFILE string and the build
        options (see BUILD_OPTION_EFFECTS).  binary64 always has round to nearest and
        denormals in the full profile (SPIR-V Env "Rounding Modes"), but the device's
        flags are what is read."""
        flags = set(flags)
        effects = build_option_effects(build_options)
        # Round to nearest is the default mode of a device that has it; a device with
        # round toward zero only (embedded profile) rounds "correctly" toward zero.
        modes = ("rtz",) if "ROUND_TO_ZERO" in flags and "ROUND_TO_NEAREST" not in flags \
            else ("rte",)
        c = (("FP_ILOGB0", INT32_MIN), ("FP_ILOGBNAN", INT32_MAX))
        if constants:
            c = tuple(sorted(constants.items()))
        return cls(precision, "embedded" if "EMBEDDED" in profile.upper() else "full",
                   "DENORM" in flags and "denorms_are_zero" not in effects, modes, c,
                   inf_nan="INF_NAN" in flags, relaxed="relaxed" in effects,
                   finite_math="finite_math" in effects,
                   signed_zeros="no_signed_zeros" not in effects)

    @classmethod
    def for_device(cls, info, precision: str, constants: dict | None = None,
                   build_options: str = "") -> "Claims":
        """The claims of device ``info`` (a fuzzfarm.device.discovery.DeviceInfo) in ``precision``:
        its fp config flags and profile (``from_fp_config``), its FP_ILOGB0/FP_ILOGBNAN
        ``constants`` and the build options."""
        return cls.from_fp_config(info.fp_flags(precision), info.profile, precision,
                                  constants, build_options)

    @classmethod
    def by_precision(cls, info, constants: dict | None = None,
                     build_options: str = "") -> dict:
        """{precision: Claims} for every format device ``info`` supports (what a
        conversion, which may touch two formats, is judged with)."""
        return {p: cls.for_device(info, p, constants, build_options)
                for p in ("binary16", "binary32", "binary64") if info.fp_flags(p)}
