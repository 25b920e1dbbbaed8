"""``fuzzfarm status``: a campaign's status file (written by its driver every few seconds)
as a table of its devices."""
from __future__ import annotations

from rich.table import Table

__all__ = ["status_table"]


def status_table(st: dict, results: str, stale: bool, age: float) -> Table:
    """The table of status ``st`` (store.read_status): title with the state, elapsed work,
    budget and unit counts; one row per device actor.  ``stale``: the driver stopped
    updating it ``age`` seconds ago (it says how to resume)."""
    state = st.get("state", "?")
    if stale:
        state += f" (driver not responding: last update {age:.0f}s ago; `fuzzfarm run " \
                 f"--resume {results}` continues)"
    units = st.get("units", {})
    budget = st.get("time_budget")
    t = Table(title=f"campaign {st.get('campaign')} [{st.get('run_id')}]: {state}; "
                    f"{st.get('elapsed_work', 0):.0f}s"
                    + (f" of {budget:.0f}s" if budget else "")
                    + f"; units done {units.get('done', 0)}, retried {units.get('retried', 0)}, "
                      f"device faults {units.get('faults', 0)}")
    for col in ("device", "node", "state", "units", "inputs", "inputs/s", "failures", "notes",
                "faults"):
        t.add_column(col, justify="left" if col in ("device", "node", "state") else "right")
    for key, d in sorted(st.get("devices", {}).items()):
        dstate = d.get("given_up") or ("up" if d.get("alive") else "down")
        t.add_row(f"{d.get('label', '?')} [{key}]", str(d.get("node", ""))[:8], dstate,
                  str(d.get("units", 0)), f"{d.get('inputs', 0):,}",
                  f"{d.get('inputs_per_second', 0):,.0f}", str(d.get("failures", 0)),
                  str(d.get("notes", 0)), str(d.get("faults", 0)))
    return t
