"""Every rule's modal verb, checked against its sentence (issue 14).

A "should" or "may" judged as a failure, or a "shall" judged as a note, fails here unless
the rule's row in edgecases/data/modality.toml carries a departure saying why.
"""
from __future__ import annotations

import pytest

from edgecases import catalogue, modality
from edgecases.modality import Modality, audit, verbs_in
from edgecases import conversions
from fuzzfarm.verdict import geometric


def all_rules() -> list[tuple[str, str, str]]:
    """(id, sentence, severity) of every rule in edgecases/data.  A geometric exclusion,
    allowance or flush-to-zero rule has no severity: it never reports, so it counts as a
    note (it can never make a failure)."""
    out = [(r.id, r.sentence, r.severity) for r in catalogue.rules()]
    out += [(r.id, r.sentence, r.severity) for r in catalogue.general_rules().values()]
    out += [(r.id, r.sentence, r.severity) for r in conversions.rules().values()]
    out += [(r.id, r.sentence, r.severity or "note") for r in geometric.rules()]
    return out


RULES = all_rules()


def test_every_rule_has_one_row_and_every_row_a_rule():
    ids = [r[0] for r in RULES]
    assert len(ids) == len(set(ids)), "a rule id appears in two files"
    table = modality.table()
    missing = sorted(set(ids) - set(table))
    stale = sorted(k for k in set(table) - set(ids) if not k.endswith(".*"))
    assert not missing, f"rules without a row in modality.toml: {missing}"
    assert not stale, f"rows of modality.toml for no rule: {stale}"


@pytest.mark.parametrize("rid,sentence,severity", RULES, ids=[r[0] for r in RULES])
def test_the_severity_is_the_one_the_verb_of_the_sentence_implies(rid, sentence, severity):
    assert audit(sentence, severity, modality.table().get(rid)) == []


def test_pattern_rows_name_their_sentence_and_verb():
    for key, row in modality.table().items():
        if key.endswith(".*"):
            assert audit(row.sentence, row.severity, row) == []
    assert modality.modality("ulp.sinpi").id == "ulp.*"
    assert modality.modality("device.crash") is None


def test_no_recommendation_is_a_failure_and_every_departure_is_lenient():
    """The worst bug is a failure the spec allows: no rule whose governing words are
    should/may/undefined/implementation-defined may fail, departure or not."""
    table = modality.table()
    for rid, _sentence, severity in RULES:
        row = table[rid]
        if not row.binding:
            assert severity == "note", f"{rid}: verb {row.verb!r} judged {severity!r}"
        if row.departure:
            assert severity == "note" and row.binding, rid


def test_saturated_nan_is_governed_by_the_front_end():
    cl, spirv = (modality.modality(i) for i in
                 ("CL.convert.sat_nan_zero", "SPIRV.convert.sat_nan_zero"))
    assert (cl.text, cl.verb, cl.severity) == ("OpenCL C 3.0", "should", "note")
    assert (spirv.text, spirv.verb, spirv.severity) == ("SPIR-V", "is", "fail")
    assert modality.front_end_of_text(cl.text) == "opencl-c"
    assert modality.front_end_of_text(spirv.text) == "spirv"
    assert modality.front_end_of_text("C99 Annex F") is None


# ------------------------------------------------------------------ the audit catches bad rows
SHOULD = ("A signaling NaN shall be converted to a NaN, and should be converted to a "
          "non-signaling NaN.")


@pytest.mark.parametrize("sentence,severity,row,complaint", [
    # a recommendation judged as a failure
    (SHOULD, "fail", Modality("x", "OpenCL SPIR-V Env", "should",
                              "and should be converted to a non-signaling NaN"), "contradicts"),
    # a requirement judged as a note, with no departure
    ("acos(1) returns +0.", "note", Modality("x", "C99 Annex F", "is"), "contradicts"),
    ("A non-signaling NaN shall be converted to a non-signaling NaN.", "note",
     Modality("x", "OpenCL SPIR-V Env", "shall"), "contradicts"),
    # a permission judged as a failure
    ("the implementation may return back p.", "fail", Modality("x", "OpenCL C 3.0", "may"),
     "contradicts"),
    # two forces in one clause: the row must narrow it
    (SHOULD, "fail", Modality("x", "OpenCL SPIR-V Env", "shall"), "narrow the clause"),
    # the verb named is not the one written
    ("acos(1) returns +0.", "fail", Modality("x", "C99 Annex F", "shall"), "says ['is']"),
    # a clause that is not in the sentence
    ("acos(1) returns +0.", "fail", Modality("x", "C99 Annex F", "is", "acos(1) returns -0"),
     "is not in the sentence"),
    # a stale departure
    ("acos(1) returns +0.", "fail", Modality("x", "C99 Annex F", "is", "", "because"),
     "remove it"),
    (SHOULD, "fail", None, "no row"),
])
def test_the_audit_flags_a_contradiction(sentence, severity, row, complaint):
    problems = audit(sentence, severity, row)
    assert problems and any(complaint in p for p in problems), problems


@pytest.mark.parametrize("sentence,severity,row", [
    (SHOULD, "fail", Modality("x", "OpenCL SPIR-V Env", "shall",
                              "A signaling NaN shall be converted to a NaN")),
    (SHOULD, "note", Modality("x", "OpenCL SPIR-V Env", "should",
                              "and should be converted to a non-signaling NaN")),
    ("acos(1) returns +0.", "fail", Modality("x", "C99 Annex F", "is")),
    ("asinpi( ±0 ) = ±0.", "fail", Modality("x", "OpenCL SPIR-V Env", "is")),
    ("acos(1) returns +0.", "note", Modality("x", "C99 Annex F", "is", "", "the texts differ")),
])
def test_the_audit_passes_a_consistent_row(sentence, severity, row):
    assert audit(sentence, severity, row) == []


@pytest.mark.parametrize("clause,verbs", [
    ("returns +0", {"is"}), ("= ±0", {"is"}), ("shall be converted to a NaN", {"shall"}),
    ("(NaN should be converted to 0)", {"should"}), ("may be flushed to zero", {"may"}),
    ("the values are undefined", {"undefined"}), ("is implementation-defined",
                                                  {"implementation-defined"}),
    ("stores an unspecified value", {"unspecified"}),
    ("shall clamp ... (NaN should be converted to 0)", {"shall", "should"}),
    ("Compute dot product.", {"is"}), ("no verb here", set()),
])
def test_verbs_in_reads_the_words_of_each_force(clause, verbs):
    assert verbs_in(clause) == verbs


def test_a_malformed_table_is_one_line_naming_the_row():
    with pytest.raises(modality.ModalityError, match="x.y: verb='ought'"):
        modality._parse({"rule": {"x.y": {"text": "C99", "verb": "ought"}}}, "t.toml")
    with pytest.raises(modality.ModalityError, match="text='C11'"):
        modality._parse({"rule": {"x.y": {"text": "C11", "verb": "is"}}}, "t.toml")
    with pytest.raises(modality.ModalityError, match="needs the governing 'sentence'"):
        modality._parse({"rule": {"x.*": {"text": "C99", "verb": "is"}}}, "t.toml")
    with pytest.raises(modality.ModalityError, match=r"unknown key\(s\) \['force'\]"):
        modality._parse({"rule": {"x.y": {"text": "C99", "verb": "is", "force": 1}}}, "t.toml")
