#!/usr/bin/env python3
"""The findings of one results directory through each front end, side by side
(docs/spirv.md): for a campaign that ran its targets as OpenCL C and as SPIR-V on the
same inputs (``benchmarks/campaigns/front_ends.toml``).

    python3 benchmarks/front_ends_side_by_side.py RESULTS [--json FILE]

Prints, per front end, the targets that ran (stats rows), the inputs checked and the
targets with a device fault (a kernel that did not build ...); then every failure class
-- (function, precision, width, build options, rule class), the signature less its
device, driver and front end -- with its count through each front end, the classes seen
through one front end only first.  No assertions.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def side_by_side(results: Path) -> dict:
    import pyarrow.dataset as ds

    from fuzzfarm.store import dataset as store
    from fuzzfarm.store import signatures
    from fuzzfarm.store.samples import counts
    stats = ds.dataset(results / "_stats", format="parquet", schema=store.STATS_SCHEMA) \
        .to_table(columns=["function", "precision", "vector_width", "front_end",
                           "inputs_tested"]).to_pylist()
    per: dict = defaultdict(lambda: {"targets": set(), "inputs": 0, "faults": set()})
    for s in stats:
        fe = s["front_end"] or "opencl-c"
        per[fe]["targets"].add((s["function"], s["precision"], s["vector_width"]))
        per[fe]["inputs"] += s["inputs_tested"]
    findings = signatures.with_signatures(store.read_findings(results))
    weights = counts(findings).to_pylist()
    classes: dict = defaultdict(lambda: defaultdict(int))
    for r, n in zip(findings.to_pylist(), weights):
        fe = r["front_end"] or "opencl-c"
        if r["severity"] == "fault":
            per[fe]["faults"].add((r["function"], r["precision"], r["vector_width"],
                                   r["rule_id"], (r["fault_detail"] or "")[:200]))
        elif r["severity"] == "fail":
            key = (r["function"], r["precision"], r["vector_width"], r["build_options"] or "",
                   r["rule_class"])
            classes[key][fe] += int(n or 1)
    rows = [{"function": k[0], "precision": k[1], "width": k[2], "build_options": k[3],
             "rule_class": k[4], "opencl-c": v.get("opencl-c", 0), "spirv": v.get("spirv", 0)}
            for k, v in classes.items()]
    rows.sort(key=lambda r: (bool(r["opencl-c"]) and bool(r["spirv"]), r["function"],
                             r["precision"], r["width"], r["rule_class"]))
    return {"front_ends": {fe: {"targets": len(d["targets"]), "inputs": d["inputs"],
                                "faults": sorted(map(list, d["faults"]))}
                           for fe, d in sorted(per.items())},
            "failure_classes": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rep = side_by_side(args.results)
    for fe, d in rep["front_ends"].items():
        print(f"{fe}: {d['targets']} targets ran, {d['inputs']:,} inputs, "
              f"{len(d['faults'])} faults")
        for f in d["faults"][:20]:
            print(f"    fault {f[0]} {f[1]} w{f[2]} {f[3]}: {f[4][:120]}")
    print("failure classes (function precision width [options] rule class: "
          "OpenCL C / SPIR-V inputs):")
    for r in rep["failure_classes"]:
        only = "" if r["opencl-c"] and r["spirv"] else "  <- one front end only"
        print(f"  {r['function']} {r['precision']} w{r['width']} "
              f"{('[' + r['build_options'] + '] ') if r['build_options'] else ''}"
              f"{r['rule_class']}: {r['opencl-c']:,} / {r['spirv']:,}{only}")
    if args.json:
        args.json.write_text(json.dumps(rep, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
