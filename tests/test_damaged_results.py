"""Damaged results (issue 18, item 3): a truncated or foreign Parquet file, a torn journal
and a full disk during a write each give one line naming the file; `fuzzfarm check`
lists the damage and `--quarantine` moves it aside, after which the rest reads."""
from __future__ import annotations

import errno
import json

import pytest
from click.testing import CliRunner

from fuzzfarm.cli import main
from fuzzfarm.store import dataset as store


def _finding(unit: str) -> dict:
    return {"run_id": "r1", "unit_id": unit, "function": "sinpi", "rule_id": "CL.x",
            "severity": "fail", "precision": "binary32", "vector_width": 1}


def _results(tmp_path):
    out = tmp_path / "res"
    for u in ("u1", "u2", "u3"):
        store.write_findings(out, "r1", u, [_finding(u)])
    store.write_stats(out, "r1", "u1", {"run_id": "r1", "unit_id": "u1", "function": "sinpi"})
    return out


def _one_line(res) -> str:
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1, res.output
    return lines[0]


def test_a_truncated_file_is_named_and_quarantine_restores_the_rest(tmp_path):
    out = _results(tmp_path)
    bad = out / "r1" / "u2.parquet"
    bad.write_bytes(bad.read_bytes()[:40])                      # truncated: no footer
    res = CliRunner().invoke(main, ["findings", str(out)])
    assert res.exit_code == 2 and str(bad) in _one_line(res)
    chk = CliRunner().invoke(main, ["check", str(out)])
    assert chk.exit_code == 1 and f"damaged: {bad}:" in chk.output
    q = CliRunner().invoke(main, ["check", str(out), "--quarantine"])
    assert q.exit_code == 0 and "quarantined" in q.output
    assert not bad.exists() and (out / "_quarantine" / "r1" / "u2.parquet").exists()
    assert store.read_findings(out).num_rows == 2               # u1 and u3
    assert CliRunner().invoke(main, ["check", str(out)]).exit_code == 0
    assert CliRunner().invoke(main, ["findings", str(out)]).exit_code == 0


def test_a_foreign_parquet_file_and_garbage_are_named(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    out = _results(tmp_path)
    pq.write_table(pa.table({"x": [1, 2]}), out / "r1" / "foreign.parquet")
    (out / "_stats" / "r1" / "junk.parquet").write_bytes(b"not parquet at all")
    found = {f.name: why for f, why in store.damaged_files(out)}
    assert set(found) == {"foreign.parquet", "junk.parquet"}
    assert "not a fuzzfarm results file" in found["foreign.parquet"]
    js = CliRunner().invoke(main, ["check", str(out), "--json"])
    recs = [json.loads(ln) for ln in js.output.splitlines()]
    assert js.exit_code == 1 and {r["file"].rsplit("/", 1)[1] for r in recs} == set(found)


def test_a_torn_journal_is_damage_only_before_its_end(tmp_path):
    out = _results(tmp_path)
    j = store.campaign_dir(out, "r1") / "journal.jsonl"
    j.parent.mkdir(parents=True)
    j.write_text('{"event": "issued", "unit": "u1"}\n{"event": "iss')      # a crash's tear
    assert store.damaged_files(out) == [] and len(store.read_journal(j)) == 1
    j.write_text('{"event": "issued"}\n{"ev\n{"event": "done"}\n')         # torn inside
    ((f, why),) = store.damaged_files(out)
    assert f == j and "line 2" in why
    with pytest.raises(store.StoreError) as e:
        store.read_journal(j)
    assert str(j) in str(e.value) and "\n" not in str(e.value)


def test_a_full_disk_during_a_write_is_one_line_naming_the_file(tmp_path, monkeypatch):
    out = tmp_path / "res"

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store.os, "fsync", full)
    with pytest.raises(store.StoreError) as e:
        store.write_findings(out, "r1", "u1", [_finding("u1")])
    msg = str(e.value)
    assert "No space left on device" in msg and str(out / "r1" / "u1.parquet") in msg
    assert "\n" not in msg
    assert list((out / "r1").iterdir()) == []                   # nothing half-written


def test_check_of_a_missing_directory_is_bad_input(tmp_path):
    res = CliRunner().invoke(main, ["check", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "no such results directory" in _one_line(res)
