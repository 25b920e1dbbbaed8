"""One writer per results directory, and nothing left over by a killed one (issue 18,
items 1 and 2): ResultsLock refuses a second writer with one line naming the directory and
the holder, is released by the OS when its holder is killed, and removes the temporary
files of writes that never finished; readers never see those files."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc
import pytest
from click.testing import CliRunner

from devices import selector
from fuzzfarm.cli import main
from fuzzfarm.store import dataset as store
from fuzzfarm.store.samples import SAMPLE_ROWS, counts

ROOT = Path(__file__).resolve().parent.parent

HOLD = """
import sys, time
from fuzzfarm.store import dataset as store
lock = store.ResultsLock(sys.argv[1], "test holder")
lock.acquire()
print("held", flush=True)
time.sleep(120)
"""


def _holder(out: Path) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], cwd=ROOT,
                         stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.stdout.readline().strip() == "held"
    return p


def test_a_second_writer_is_refused_naming_the_directory_and_the_holder(tmp_path):
    out = tmp_path / "res"
    p = _holder(out)
    try:
        with pytest.raises(store.ResultsInUse) as e:
            store.ResultsLock(out).acquire()
        msg = str(e.value)
        assert str(out) in msg and f"process {p.pid}" in msg and "test holder" in msg
        assert "\n" not in msg
    finally:
        p.kill()
        p.wait()
    # the OS released the killed holder's lock: the next writer gets it
    lock = store.ResultsLock(out)
    lock.acquire()
    lock.release()
    assert not (out / store.HOLDER_NAME).exists()


def test_the_cli_refuses_a_second_sweep_with_exit_2(tmp_path):
    out = tmp_path / "res"
    p = _holder(out)
    try:
        res = CliRunner().invoke(main, ["sweep", "sin", "--out", str(out), "--chunks", "1",
                                        "--device", selector()])
    finally:
        p.kill()
        p.wait()
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "in use by process" in lines[0] and str(out) in lines[0]


def test_orphans_of_killed_writers_are_removed_and_never_read(tmp_path):
    out = tmp_path / "res"
    (out / "run1").mkdir(parents=True)
    (out / "_stats" / "run1").mkdir(parents=True)
    store.write_findings(out, "run1", "u1", [{"run_id": "run1", "unit_id": "u1",
                                              "function": "sin", "rule_id": "r"}])
    # what a writer killed between mkstemp and rename leaves: a partly written file
    orphans = [out / "run1" / f"{store.TEMP_PREFIX}abc.parquet{store.TEMP_SUFFIX}",
               out / "_stats" / "run1" / f"{store.TEMP_PREFIX}def.parquet{store.TEMP_SUFFIX}",
               out / "run1" / f"{store.TEMP_PREFIX}old.parquet"]      # the former naming
    for o in orphans:
        o.write_bytes(b"PAR1\x00truncated")
    # readers skip them (dot files); a *.parquet glob matches only the former naming
    assert store.read_findings(out).num_rows == 1
    assert sorted(p.name for p in out.glob("*/*.parquet")) == [".tmp-old.parquet", "u1.parquet"]
    with store.ResultsLock(out) as lock:
        assert lock.removed == 3
    assert not any(o.exists() for o in orphans)
    assert sorted(p.name for p in out.glob("*/*.parquet")) == ["u1.parquet"]
    assert store.read_findings(out).num_rows == 1


def test_an_interrupted_atomic_write_leaves_nothing(tmp_path):
    out = tmp_path / "res"

    def boom(fh):
        fh.write(b"PAR1 half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store._atomic_write(out / "run1" / "u1.parquet", boom)
    assert list((out / "run1").iterdir()) == []


def test_a_killed_writer_leaves_a_temp_file_that_the_next_run_removes(tmp_path):
    """SIGKILL inside the write (after the temporary file exists, before the rename)."""
    out = tmp_path / "res"
    code = ("import os, signal, sys\n"
            "from pathlib import Path\n"
            "from fuzzfarm.store import dataset as store\n"
            "def die(fh):\n"
            "    fh.write(b'PAR1 half'); fh.flush(); os.kill(os.getpid(), signal.SIGKILL)\n"
            "store._atomic_write(Path(sys.argv[1]) / 'run1' / 'u1.parquet', die)\n")
    r = subprocess.run([sys.executable, "-c", code, str(out)], cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == -signal.SIGKILL
    left = list((out / "run1").iterdir())
    assert len(left) == 1 and left[0].name.startswith(store.TEMP_PREFIX)
    assert not list(out.glob("*/*.parquet"))
    with store.ResultsLock(out) as lock:
        assert lock.removed == 1
    assert list((out / "run1").iterdir()) == []


# --------------------------------------------------------------------------- compaction
def _findings(out) -> int:
    """Findings in ``out``: the sum of the rows' counts (store.samples)."""
    return int(pc.sum(counts(store.read_findings(out))).as_py() or 0)


def _units(out, run, n, findings_per_unit=2, start=0):
    from datetime import datetime, timezone
    for i in range(start, start + n):
        uid = f"u{i:04d}"
        rows = [_finding_row(run, uid, k) for k in range(findings_per_unit)]
        store.write_findings(out, run, uid, rows)
        store.write_stats(out, run, uid, _stats_row(run, uid, datetime.now(timezone.utc)))


def _finding_row(run, uid, k):
    from datetime import datetime, timezone
    row = {f.name: None for f in store.FINDINGS_SCHEMA}
    row.update(run_id=run, unit_id=uid, function="sin", precision="binary32", element=k,
               rule_id="ulp.sin", severity="fail", input_bits=[k], output_bits=[k],
               time=datetime.now(timezone.utc))
    return row


def _stats_row(run, uid, now):
    row = {f.name: None for f in store.STATS_SCHEMA}
    row.update(run_id=run, unit_id=uid, function="sin", precision="binary32",
               inputs_tested=10, failures=2, time=now)
    return row


def test_compaction_merges_small_files_and_readers_see_each_row_once(tmp_path):
    out = tmp_path / "r"
    _units(out, "run1", 100)
    before = (_findings(out), store.read_stats(out).num_rows)
    assert before == (200, 100)
    replaced = store.compact(out, min_files=10)
    assert replaced == 200
    files = sorted(p.name for p in (out / "_stats" / "run1").iterdir())
    assert len(files) == 1 and files[0].startswith("part-")
    assert (_findings(out), store.read_stats(out).num_rows) == before
    # the findings: one group (rule, class, target), cut to its sample with exact counts
    assert store.read_findings(out).num_rows == SAMPLE_ROWS
    assert store.done_units(out, "run1") == {f"u{i:04d}" for i in range(100)}
    # more units after it: stats compacted into a second part, findings merged with the
    # first part into one again; nothing lost or doubled
    _units(out, "run1", 20, start=100)
    assert store.compact(out, min_files=10) == 41
    assert store.read_stats(out).num_rows == 120
    assert _findings(out) == 240 and store.read_findings(out).num_rows == SAMPLE_ROWS
    assert len(list((out / "run1").glob("*.parquet"))) == 1
    assert len(store.done_units(out, "run1")) == 120


def test_a_compaction_killed_midway_never_doubles_rows_and_is_finished_by_the_lock(tmp_path):
    """Killed after writing its part but before deleting what it replaces: readers skip
    the replaced files; the next lock holder deletes them and the intent."""
    out = tmp_path / "r"
    _units(out, "run1", 30)
    real_unlink = Path.unlink

    def dies(self, *a, **k):
        if self.suffix == ".parquet" and not self.name.startswith("part-"):
            raise KeyboardInterrupt          # the process dies here
        return real_unlink(self, *a, **k)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(Path, "unlink", dies)
        with pytest.raises(KeyboardInterrupt):
            store.compact(out, min_files=5)
    d = out / "_stats" / "run1"
    assert any(p.name.startswith(".compact-") for p in d.iterdir())
    assert len(list(d.glob("*.parquet"))) == 31             # the part and all 30 originals
    assert store.read_stats(out).num_rows == 30               # each row once
    assert _findings(out) == 60
    with store.ResultsLock(out, "test"):
        pass
    assert sorted(p.name[:5] for p in d.iterdir()) == ["part-"]
    assert store.read_stats(out).num_rows == 30
    # killed before its part was written: the originals stay and the intent goes
    _units(out, "run2", 10)
    real_write = store._atomic_write

    def part_dies(path, write):
        if str(path).endswith(".parquet"):
            raise KeyboardInterrupt
        return real_write(path, write)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(store, "_atomic_write", part_dies)
        with pytest.raises(KeyboardInterrupt):
            store._compact_dir(out / "_stats" / "run2", store.STATS_SCHEMA, 2)
    assert list((out / "_stats" / "run2").glob(".compact-*"))      # the intent was written
    assert store.read_stats(out, "run2").num_rows == 10
    with store.ResultsLock(out, "test"):
        pass
    assert store.read_stats(out, "run2").num_rows == 10
    assert not list((out / "_stats" / "run2").glob(".compact-*"))


def test_unfinished_units_findings_are_not_compacted(tmp_path):
    out = tmp_path / "r"
    _units(out, "run1", 10)
    store.write_findings(out, "run1", "late", [_finding_row("run1", "late", 0)])  # no stats
    store.compact(out, min_files=2)
    assert (out / "run1" / "late.parquet").exists()
    assert _findings(out) == 21


def test_compaction_keeps_one_histogram_per_target_with_the_same_sums(tmp_path):
    """Compacted stats rows carry each target's summed ULP-error histogram on one row (a
    unit's histogram is most of its stats row); the sums per target are unchanged."""
    from datetime import datetime, timezone

    import numpy as np

    from fuzzfarm.oracle.histogram import NBINS, NROWS, from_cells, to_cells
    out = tmp_path / "r"
    rng = np.random.default_rng(2)
    want = {}
    for i in range(40):
        fn = ("sin", "exp")[i % 2]
        h = rng.integers(0, 3, (NROWS, NBINS))
        want[fn] = want.get(fn, 0) + h
        row = _stats_row("run1", f"u{i:04d}", datetime.now(timezone.utc))
        row.update(function=fn, ulp_histogram=to_cells(h))
        store.write_stats(out, "run1", f"u{i:04d}", row)

    def sums():
        got = {}
        for r in store.read_stats(out).to_pylist():
            got[r["function"]] = got.get(r["function"], 0) + from_cells(r["ulp_histogram"])
        return got
    assert all((sums()[k] == v).all() for k, v in want.items())
    assert store.compact(out, min_files=10) == 40
    assert all((sums()[k] == v).all() for k, v in want.items())
    rows = store.read_stats(out).to_pylist()
    assert len(rows) == 40 and sum(r["ulp_histogram"] is not None for r in rows) == 2


def test_compaction_from_tables_in_memory_writes_what_reading_the_files_writes(tmp_path):
    """``compact(known=...)`` (a sweep's closing compaction: the tables its chunks wrote)
    gives the same rows, histogram sums and sampled findings as reading the files back,
    and does not read the files it knows."""
    from datetime import datetime, timezone

    import numpy as np

    from fuzzfarm.oracle.histogram import NBINS, NROWS, to_cells
    rng = np.random.default_rng(5)
    outs = [tmp_path / "read", tmp_path / "known"]
    known: dict = {}
    for i in range(30):
        uid = f"u{i:04d}"
        row = _stats_row("run1", uid, datetime(2026, 11, 26, tzinfo=timezone.utc))
        row["ulp_histogram"] = to_cells(rng.integers(0, 4, (NROWS, NBINS)))
        rows = [_finding_row("run1", uid, k) for k in range(3)]
        for k, out in enumerate(outs):
            keep = known if k else None
            store.write_findings(out, "run1", uid, rows, keep=keep)
            store.write_stats(out, "run1", uid, row, keep=keep)
    assert len(known) == 60
    real = store.pq.read_table
    read: list = []

    def reading(f, **k):
        if not Path(f).name.startswith("part-"):      # a unit's file, not a written part
            read.append(f)
        return real(f, **k)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(store.pq, "read_table", reading)
        assert store.compact(outs[0], min_files=2) == 60
        assert len(read) == 90         # findings once, stats twice (histograms, rows)
        read.clear()
        assert store.compact(outs[1], min_files=2, known=known) == 60
        assert read == []

    def table(reader, out):
        return sorted(reader(out).to_pylist(), key=lambda r: (r["unit_id"], r.get("element")))
    assert table(store.read_stats, outs[1]) == table(store.read_stats, outs[0])
    assert table(store.read_findings, outs[1]) == table(store.read_findings, outs[0])
    assert _findings(outs[1]) == _findings(outs[0]) == 90
