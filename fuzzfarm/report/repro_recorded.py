"""A reproducer exported from a stored finding alone (issue 18, item 7): the nightly
machine that triages is often not the one with the GPU.  ``export_recorded`` writes the
same files as ``fuzzfarm repro`` (kernel.cl, repro.py, repro.c, README.md, repro.json),
built from the finding's row: its kernel, its recorded input and results, the recorded
device's identity; the README and the terminal say it is **not re-verified**, and the
input is the original (not minimized: that needs the device)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from fuzzfarm.report.repro_case import Outcome, acceptance, target_for

__all__ = ["RecordedDevice", "export_recorded"]

class RecordedDevice:
    """What a reproducer needs of a DeviceInfo, from a finding row (device, platform,
    driver, OpenCL version, profile, fp config, fingerprint)."""

    def __init__(self, row: dict):
        self.name = row.get("device") or ""
        self.platform_name = row.get("platform") or ""
        self.platform_version = row.get("opencl_version") or ""
        self.vendor = ""
        self.driver_version = row.get("driver_version") or ""
        self.version = row.get("opencl_version") or ""
        self.fingerprint = row.get("device_fingerprint") or ""
        self.profile = row.get("profile") or ""
        self.label = f"{self.name} ({self.platform_name} {self.driver_version})".strip()
        self._flags = tuple((row.get("fp_config") or "").split())

    def fp_flags(self, precision: str) -> tuple:
        return self._flags


def export_recorded(results, row: dict, out, log=None):
    """Write a reproducer of finding ``row`` (a dict of the findings' columns) to ``out``
    without running anything; returns the ReproReport (``runs`` 0: not re-verified).
    ``log(text)`` hears why.  Raises ReproError for an unwritable ``out`` or a row whose
    input or results do not fit its target."""
    from fuzzfarm.report.repro import ReproError, ReproReport, _attached, _original_context, export
    from fuzzfarm.report.verify import row_arrays, row_claims, run_constants
    from fuzzfarm.store import dataset as store

    try:
        store.check_writable(out)
    except store.StoreError as exc:
        raise ReproError(str(exc)) from None
    (log or (lambda text: None))(
        f"the finding's device {row['device']} ({row['platform']}, driver "
        f"{row['driver_version']}) [{row['device_fingerprint']}] is not attached here "
        f"(attached: {_attached()}); exporting the recorded finding, not re-verified")

    w = int(row["vector_width"])
    base = target_for(row)
    context = _original_context(row, results, w) if w > 1 and not base.geometric else None
    case = target_for(row, context=context)
    try:
        cand = case.from_u64(row["input_bits"])
        outputs = {k: tuple(int(v) for v in a) for k, a in row_arrays(row)[1].items()}
    except (ValueError, KeyError) as exc:
        raise ReproError(f"the stored finding does not fit {row['function']}: {exc}") from None
    finding = SimpleNamespace(rule_id=row["rule_id"], severity=row["severity"],
                              section=row.get("section") or "", sentence=row.get("sentence") or "",
                              reading=row.get("reading") or "", output=row["output"] or "ret",
                              expected=row.get("expected") or "", ulp_error=row.get("ulp_error"))
    claims = row_claims(row, row.get("build_options") or "",
                        run_constants(results).get(row["device_fingerprint"]))
    values = outputs.get(finding.output, ())
    outcome = Outcome(cand, finding, values, outputs,
                      acceptance(case, claims, finding, cand, values, outputs),
                      finding.expected, True)
    report = ReproReport(row, RecordedDevice(row), case, cand, cand, outcome, None, [],
                         Path(out), 0,
                         ["not re-verified: the finding's device is not attached here; "
                          "exported from the stored finding (recorded input and results)"])
    report.files = export(report)
    return report
