"""The catalogue as plain data (``fuzzfarm catalogue --json``): every built-in in every
precision with its rules and its bounds per profile, every rule with the text that governs
it and that text's modal verb, the general rules and the conversions."""
from __future__ import annotations

from edgecases import bounds, catalogue, conversions
from edgecases.modality import governing

__all__ = ["catalogue_records"]


def _governing(rule_id: str) -> dict:
    """{'text': governing text, 'verb': its modal verb} of a rule (modality.toml)."""
    text, verb = governing(rule_id)
    return {"text": text, "verb": verb}


def catalogue_records(precisions, profile_names) -> dict:
    """The catalogue as plain data: functions x precisions x profiles with their bounds,
    every rule, the general rules and the conversions."""

    fns = []
    for f in catalogue.functions().values():
        for p in f.precisions:
            if p not in precisions:
                continue
            entry = {"function": f.name, "family": f.family, "signature": f.signature,
                     "precision": p, "widths": list(f.widths),
                     "rules": [r.id for r in catalogue.rules_for(f.name)], "bounds": {}}
            for prof, relaxed in profile_names:
                try:
                    b = bounds.bound(f.name, p, prof, relaxed)
                except KeyError:
                    continue
                key = prof + (".relaxed" if relaxed else "")
                entry["bounds"][key] = {"bound": b.describe(f.widths[0] if f.family == "geometric" else 1),
                                        "source": b.source}
            fns.append(entry)
    rules = [{"id": r.id, "function": r.function, "section": r.section,
              "condition": " and ".join(f"{a} {w}" for a, w in r.when) or "always",
              "result": "; ".join(f"{k} = {v.text}" for k, v in r.results.items()),
              "severity": r.severity, "sentence": r.sentence, "reading": r.reading,
              **_governing(r.id)}
             for r in catalogue.rules()]
    general = [{"id": g.id, "section": g.section, "severity": g.severity,
                "sentence": g.sentence, "reading": g.reading, **_governing(g.id)}
               for g in catalogue.general_rules().values()]
    convs = [c.id for c in conversions.conversions()]
    return {"counts": {"functions": len(catalogue.functions()),
                       "function_precision_pairs": len(fns), "rules": len(rules),
                       "general_rules": len(general), "conversions": len(convs)},
            "functions": fns, "rules": rules, "general_rules": general, "conversions": convs}
