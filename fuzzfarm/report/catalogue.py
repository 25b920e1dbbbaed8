"""``fuzzfarm catalogue``: what is checked, as data (``catalogue_data``, the ``--json``
form) and as tables (``print_catalogue``)."""
from __future__ import annotations

__all__ = ["PROFILES", "catalogue_data", "print_catalogue"]

#: The (profile, relaxed) pairs whose bounds the catalogue lists.
PROFILES = [("full", False), ("embedded", False), ("full", True), ("embedded", True)]


def catalogue_data(precisions: list[str], only: str | None = None) -> dict:
    """edgecases.export.catalogue_records of ``precisions`` (format names) with each
    function's ``device_verdict`` (work.screens.device_verdict, at its first width);
    ``only``: that built-in's functions and rules alone (a name the catalogue knows)."""
    from edgecases import catalogue
    from edgecases.export import catalogue_records
    from fuzzfarm.target import Target
    from fuzzfarm.work import screens

    data = catalogue_records(precisions, PROFILES)
    for f in data["functions"]:
        width = catalogue.function(f["function"]).widths[0]
        f["device_verdict"] = screens.device_verdict(Target.parse(f["function"], f["precision"],
                                                                  width))
    if only:
        data["functions"] = [f for f in data["functions"] if f["function"] == only]
        ids = {x.id for x in catalogue.rules_for(only)}
        data["rules"] = [r for r in data["rules"] if r["id"] in ids]
    return data


def print_catalogue(data: dict, whole: bool = True, console=None) -> None:
    """``data`` (``catalogue_data``'s) as rich tables on ``console`` (default: stdout):
    bounds and device verdicts, prescribed results, and (``whole``) the general rules and
    the counts."""
    from rich.console import Console
    from rich.table import Table
    from fuzzfarm.work import screens

    console = console or Console()
    t = Table(title="Functions x precisions: ULP bounds per profile", show_lines=False)
    for col in ("function", "family", "precision", "full", "embedded", "relaxed (full)", "rules",
                "device verdict"):
        t.add_column(col, overflow="fold")
    for f in data["functions"]:
        b = f["bounds"]
        t.add_row(f["function"], f["family"], f["precision"],
                  b.get("full", {}).get("bound", "-"), b.get("embedded", {}).get("bound", "-"),
                  b.get("full.relaxed", {}).get("bound", "-"), str(len(f["rules"])),
                  f["device_verdict"])
    console.print(t)
    console.print(f"device verdict: {screens.LEGEND}")
    r = Table(title="Prescribed results (rules)", show_lines=False)
    for col in ("id", "condition", "result", "severity", "section"):
        r.add_column(col, overflow="fold")
    for rule in data["rules"]:
        r.add_row(rule["id"], rule["condition"], rule["result"], rule["severity"], rule["section"])
    console.print(r)
    if whole:
        g = Table(title="General rules")
        for col in ("id", "severity", "section", "sentence"):
            g.add_column(col, overflow="fold")
        for rule in data["general_rules"]:
            g.add_row(rule["id"], rule["severity"], rule["section"], rule["sentence"])
        console.print(g)
    c = data["counts"]
    console.print(f"{c['functions']} built-ins ({c['function_precision_pairs']} built-in x "
                  f"precision pairs), {c['rules']} rules, {c['general_rules']} general rules, "
                  f"{c['conversions']} conversions")
