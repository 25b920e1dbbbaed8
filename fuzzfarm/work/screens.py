"""How a target's results are judged on a device with cl_khr_fp64 under the full profile's
default claims (round to nearest, denormals, no relaxed or finite-math build): the
``fuzzfarm catalogue`` column "device verdict".  ``DeviceSession.screen`` makes the choice
for each unit, under the device's real claims; this is the same choice, said in words for
the default ones (docs/device_screen.md).

* ``reference``: a device reference and the ULP (or, for mix and smoothstep in binary32,
  absolute) bound; the host judges what the screen cannot decide;
* ``bit for bit``: the exact built-ins and every conversion (integer arithmetic);
* ``rules``: built-ins whose bound is implementation-defined, judged only by their
  prescribed results (lgamma, lgamma_r, nan; mix and smoothstep beyond binary32);
* ``measured``: the native_ built-ins, whose error is measured and never judged;
* ``host``: everything on the host.
"""
from __future__ import annotations

from fuzzfarm.target import Target
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.work.kinds import kind_of

__all__ = ["device_verdict", "DEVICE_VERDICTS", "LEGEND"]

#: Every answer of ``device_verdict``.
DEVICE_VERDICTS = ("reference", "bit for bit", "rules", "measured", "host")

#: The answers in words, for a legend under the column.
LEGEND = ("on a device with cl_khr_fp64, full profile, round to nearest, no relaxed build: "
          "reference = a device reference and the bound, bit for bit = exact results, rules "
          "= prescribed results only, measured = error measured, never judged, host = on "
          "the host; the host judges what the device cannot decide; every conversion is "
          "judged bit for bit on any device")


def device_verdict(target) -> str:
    """One of DEVICE_VERDICTS for ``target`` (a Target or its spec) under the default
    claims of its precision (module docstring)."""
    from edgecases import catalogue
    from fuzzfarm.oracle import device_references as refs
    from fuzzfarm.oracle.geometric_screen import screened
    t = Target.of(target)
    kind = kind_of(t)
    if kind.name == "conversion":
        return "bit for bit"
    if not kind.device_screened(t):
        return "host"
    if kind.name == "geometric":
        return "reference" if screened(t.name, t.precision) else "host"
    bound = refs.plain_bound(t.name, t.precision, Claims(precision=t.precision))
    if bound is None:
        return "host"
    if catalogue.function(t.name).family == "native":
        return "measured"
    ref = refs.reference_name(t.name)
    if ref in refs.RULES_ONLY and not (ref in refs.ABSOLUTE and t.precision == "binary32"):
        return "rules"
    return "bit for bit" if ref in refs.BIT_EXACT else "reference"
