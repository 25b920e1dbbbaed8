"""The results directory: Parquet findings and stats, written once and atomically.

Layout of ``--out DIR``::

    DIR/<run_id>/<unit_id>.parquet          findings (one row per failure or note)
    DIR/_stats/<run_id>/<unit_id>.parquet   one stats row per work unit
    DIR/_runs/<run_id>.json                 the run's options, devices and summary
    DIR/_campaign/<run_id>/campaign.toml    a campaign's spec as given (``campaign.json``:
                                            as resolved), for ``fuzzfarm run --resume``
    DIR/_campaign/<run_id>/journal.jsonl    every unit issued (and each strike), in order
    DIR/_campaign/<run_id>/status.json      live progress, rewritten every few seconds
    DIR/_faults/<run_id>/<unit_id>.npz      the inputs of a unit recorded as a device fault
    .../part-<id>.parquet                   many units' files compacted into one
                                            (``compact``), beside the per-unit files

``pyarrow.dataset.dataset(DIR)`` reads every finding of every run as one table (pyarrow
skips names starting with ``_`` or ``.``); ``pyarrow.dataset.dataset(DIR + "/_stats")``
reads the stats.  Every file is written to a hidden temporary name in its final directory,
flushed, fsynced and renamed (docs/design.md, decision 6): a killed writer leaves only complete
files, plus at worst a ``.tmp-*`` file that readers ignore.

Compaction (``compact``) keeps a long run's file count and per-file overhead (about 12 KB
of Parquet footer for a one-row stats file) from growing with time: it writes an intent
(``.compact-<id>.json``: the part's name and the files it replaces), then the part, then
deletes the replaced files, then the intent.  Readers skip the files a written part
replaces, so they never count a row twice; a compaction killed midway is finished by
the next holder of the directory's lock (``finish_compactions``).
"""
from __future__ import annotations

import json
import os
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from fuzzfarm.errors import BadInput, CorruptResults

__all__ = ["FINDINGS_SCHEMA", "STATS_SCHEMA", "new_run_id", "check_writable", "remove_unused",
           "write_findings",
           "write_findings_table", "write_stats", "write_run", "read_findings", "read_stats",
           "StoreError", "campaign_dir", "Journal", "read_journal", "done_units",
           "write_json", "write_text", "read_status", "latest_campaign", "write_fault_inputs",
           "ResultsLock", "ResultsInUse", "remove_orphans", "damaged_files", "quarantine",
           "compact", "finish_compactions"]


class StoreError(CorruptResults):
    """The results directory is unusable (unwritable, or holds something else)."""


_DEVICE_FIELDS = [
    ("device_fingerprint", pa.string()), ("platform", pa.string()), ("device", pa.string()),
    ("driver_version", pa.string()), ("opencl_version", pa.string()),
    ("opencl_c_version", pa.string()), ("profile", pa.string()), ("fp_config", pa.string()),
]

FINDINGS_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("unit_id", pa.string()), *_DEVICE_FIELDS,
    ("function", pa.string()), ("precision", pa.string()), ("vector_width", pa.int16()),
    ("build_options", pa.string()), ("element", pa.int64()),
    ("input_bits", pa.list_(pa.uint64())), ("inputs", pa.string()),
    ("output", pa.string()), ("output_bits", pa.list_(pa.uint64())), ("outputs", pa.string()),
    ("expected", pa.string()), ("rule_id", pa.string()), ("section", pa.string()),
    ("sentence", pa.string()), ("severity", pa.string()), ("reading", pa.string()),
    ("text", pa.string()), ("verb", pa.string()),
    ("ulp_error", pa.float64()), ("fault_detail", pa.string()), ("seed", pa.int64()), ("recipe", pa.string()),
    ("time", pa.timestamp("ms", tz="UTC")),
    # the findings this row stands for: itself and the others of its group (rule,
    # severity, input class) that were counted, not stored (store.samples); null: 1
    ("count", pa.int64()),
    # the IEEE class of each argument, "x:pos_normal,y:int_neg" ('' where none applies)
    ("input_class", pa.string()),
    # how the kernel entered the driver: 'opencl-c' or 'spirv' (target.FRONT_ENDS), or
    # a constants job's folded result's door ('opencl-c-constants', 'spirv-constants':
    # target.CONSTANTS_DOORS); null in rows written before it was a column: OpenCL C
    ("front_end", pa.string()),
])

STATS_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("unit_id", pa.string()), *_DEVICE_FIELDS,
    ("function", pa.string()), ("precision", pa.string()), ("vector_width", pa.int16()),
    ("build_options", pa.string()), ("seed", pa.int64()), ("recipe", pa.string()),
    ("inputs_tested", pa.int64()), ("inputs_by_class", pa.map_(pa.string(), pa.int64())),
    ("failures", pa.int64()), ("failures_by_rule", pa.map_(pa.string(), pa.int64())),
    ("notes", pa.int64()), ("notes_by_rule", pa.map_(pa.string(), pa.int64())),
    ("max_ulp_error", pa.float64()), ("max_ulp_inputs", pa.list_(pa.uint64())),
    ("screened", pa.int64()), ("exact", pa.int64()),
    ("unjudged", pa.int64()),
    ("device_seconds", pa.float64()), ("check_seconds", pa.float64()),
    ("time", pa.timestamp("ms", tz="UTC")),
    # the ULP errors of the inputs a device screen passed (oracle.device_screen: exponent
    # band of the input, log-spaced error bin), nonzero cells only; null where none
    ("ulp_histogram", pa.list_(pa.struct([("band", pa.int16()), ("bin", pa.int16()),
                                          ("count", pa.int64())]))),
    # distinct inputs: per argument and IEEE class (keys as inputs_by_class), and distinct
    # input rows (tuples of all arguments); null where not counted (older rows, faults)
    ("distinct_by_class", pa.map_(pa.string(), pa.int64())),
    ("distinct_inputs", pa.int64()),
    ("front_end", pa.string()),                 # as FINDINGS_SCHEMA's
])


def new_run_id() -> str:
    """A sortable, unique run id: UTC time plus 6 random hex digits."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + uuid.uuid4().hex[:6]


def check_writable(out: str | os.PathLike) -> Path:
    """Create ``out`` if needed and prove it writable, leaving nothing behind.

    Raises StoreError with a one-line reason.
    """
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise StoreError(f"--out {str(p)!r} exists and is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".probe-", dir=p)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        raise StoreError(f"--out {str(p)!r} is not writable: {exc.strerror or exc}") from None
    return p


#: Temporary files of the atomic writes: a leading dot (pyarrow's dataset discovery skips
#: them) and a suffix no reader globs for (``*.parquet`` never matches one).
TEMP_PREFIX, TEMP_SUFFIX = ".tmp-", ".part"


def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=path.suffix + TEMP_SUFFIX,
                               dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):        # a full disk (ENOSPC), a read-only mount, ...
            raise StoreError(f"cannot write {str(path)!r}: {exc.strerror or exc}; nothing "
                             f"of it was kept") from None
        raise


#: How a unit's own files are written: uncompressed and without column statistics, a
#: third of zstd's cost for a one-row stats file (1.0 ms against 2.6 ms on the 2-core
#: machine), which every unit pays; ``compact`` rewrites them into zstd parts.
_UNIT_FILE_OPTIONS = {"compression": "none", "write_statistics": False}


def _write_unit_table(path: Path, table: pa.Table, keep: dict | None = None) -> None:
    """Write one unit's ``table`` to ``path`` atomically (``_atomic_write``), recorded in
    ``keep`` ({key: table}, store.compact's ``known``) where given."""
    _atomic_write(path, lambda fh: pq.write_table(table, fh, **_UNIT_FILE_OPTIONS))
    if keep is not None:
        keep[_known_key(path)] = table


def _write_table(path: Path, rows: list[dict], schema: pa.Schema,
                 keep: dict | None = None) -> None:
    _write_unit_table(path, pa.Table.from_pylist(rows, schema=schema), keep)


def _known_key(path: str | os.PathLike) -> str:
    """The key of a written file in ``compact``'s ``known`` ({key: table})."""
    return os.path.abspath(path)


def write_findings(out: Path, run_id: str, unit_id: str, rows: list[dict],
                   keep: dict | None = None) -> Path | None:
    """Write one unit's findings (dicts with FINDINGS_SCHEMA's keys); None when empty.
    ``keep`` (a dict), where given, gets the table written under its path's key, for a
    later ``compact(known=keep)`` that then need not read the file back."""
    if not rows:
        return None
    path = Path(out) / run_id / f"{unit_id}.parquet"
    _write_table(path, rows, FINDINGS_SCHEMA, keep)
    return path


def write_findings_table(out: Path, run_id: str, unit_id: str, table: pa.Table,
                         keep: dict | None = None) -> Path | None:
    """Write one unit's findings already built as a table of FINDINGS_SCHEMA (where
    ``write_findings`` writes rows); None when it is empty.  ``keep`` as in
    ``write_findings``."""
    if table.num_rows == 0:
        return None
    path = Path(out) / run_id / f"{unit_id}.parquet"
    _write_unit_table(path, table, keep)
    return path


def write_stats(out: Path, run_id: str, unit_id: str, row: dict,
                keep: dict | None = None) -> Path:
    """Write one unit's stats row (a dict with STATS_SCHEMA's keys); ``keep`` as in
    ``write_findings``."""
    path = Path(out) / "_stats" / run_id / f"{unit_id}.parquet"
    _write_table(path, [row], STATS_SCHEMA, keep)
    return path


def write_run(out: Path, run_id: str, meta: dict) -> Path:
    """Write (or replace) the run's metadata JSON."""
    path = Path(out) / "_runs" / f"{run_id}.json"
    data = json.dumps(meta, indent=2, sort_keys=True, default=str).encode()
    _atomic_write(path, lambda fh: fh.write(data))
    return path


def read_findings(out: str | os.PathLike, run_id: str | None = None) -> pa.Table:
    """All findings under ``out`` (optionally of one run) as one table."""
    return _read(Path(out) / run_id if run_id else Path(out), FINDINGS_SCHEMA)


def read_stats(out: str | os.PathLike, run_id: str | None = None) -> pa.Table:
    """All stats rows under ``out`` (optionally of one run) as one table."""
    base = Path(out) / "_stats"
    return _read(base / run_id if run_id else base, STATS_SCHEMA)


def _read(path: Path, schema: pa.Schema) -> pa.Table:
    import pyarrow.dataset as ds

    for attempt in range(4):
        if not path.exists():
            return schema.empty_table()
        gone = _superseded(path)
        source = str(path)
        if gone:                # a compaction wrote its part but has not deleted these yet
            source = [str(f) for f in _visible(path) if f not in gone]
            if not source:
                return schema.empty_table()
        try:
            return ds.dataset(source, schema=schema, format="parquet").to_table()
        except FileNotFoundError:
            if attempt < 3:     # a compaction removed a file while this was reading
                continue
            raise StoreError(f"results directory {str(path)!r} changed while read") from None
        except (pa.ArrowInvalid, OSError) as exc:
            bad = damaged_files(path)
            if bad:
                f, why = bad[0]
                more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
                raise StoreError(f"damaged results file {str(f)!r} ({why}){more}; `fuzzfarm "
                                 f"check {_root_of(path)} --quarantine` moves damaged files "
                                 f"aside") from None
            raise StoreError(f"results directory {str(path)!r} is corrupt: {exc}") from None


def _visible(root: Path) -> list[Path]:
    """The Parquet files under ``root`` a pyarrow dataset reads (no path part below root
    starting with ``_`` or ``.``), sorted."""
    return sorted(f for f in root.rglob("*.parquet")
                  if not any(q.startswith(("_", ".")) for q in f.relative_to(root).parts))


#: Compaction: the intent files (hidden: readers skip them) and the parts' names.
COMPACT_PREFIX, PART_PREFIX = ".compact-", "part-"


def _intents(root: Path):
    """(intent path, the files its part replaces) of every compaction intent under
    ``root``; the files are [] where the part was never written and None where the intent
    does not read (a killed writer's, never renamed into place)."""
    for intent in sorted(root.rglob(COMPACT_PREFIX + "*.json")):
        try:
            data = json.loads(intent.read_text())
            part, names = str(data["part"]), list(data["replaces"])
        except (OSError, ValueError, KeyError, TypeError):
            yield intent, None
            continue
        written = (intent.parent / part).exists()
        yield intent, [intent.parent / n for n in names] if written else []


def _superseded(root: Path) -> set[Path]:
    """The files under ``root`` that a written part replaces but that are not deleted yet."""
    return {f for _, files in _intents(root) for f in files or ()}


def compact(out: str | os.PathLike, min_files: int = 64, known: dict | None = None) -> int:
    """Merge the per-unit Parquet files of every run under ``out`` (findings and stats),
    directory by directory, into one ``part-*.parquet`` each where at least ``min_files``
    are waiting; returns how many files were replaced.  Safe beside writers adding units
    (only the files listed at the start are merged) and readers (module docstring); call
    it holding the directory's ResultsLock (or from the process that holds it).
    ``known``: tables already in memory ({key: table} as ``write_stats``'s and
    ``write_findings``'s ``keep`` fill it), used instead of reading those files back (a
    sweep's 256 chunk files: ~1.2 s to read on a 2-core host, ~1.8 s on the GPU host)."""
    root = Path(out)
    n = 0
    for d in (root / "_stats").glob("*"):
        if d.is_dir():
            n += _compact_dir(d, STATS_SCHEMA, min_files, known=known)
    for d in root.glob("*"):     # only finished units' findings: others may write again
        if d.is_dir() and not d.name.startswith(("_", ".")):
            n += _compact_dir(d, FINDINGS_SCHEMA, min_files, done_units(root, d.name),
                              sample=True, known=known)
    return n


def _compact_dir(d: Path, schema: pa.Schema, min_files: int, only=None,
                 sample: bool = False, known: dict | None = None) -> int:
    """Merge ``d``'s unit files (of the units in ``only``, where given) into one part.
    With ``sample`` (findings) the directory's earlier parts are merged in too and every
    group is cut to its bounded sample with exact counts (store.samples.sample_table), so
    a directory's findings stay one part whose size follows the number of groups.  Stats
    rows keep one ULP-error histogram per target and part, the sum of its units'
    (``_histograms_per_target``); every row keeps its recipe, from which its inputs are
    made again (work.make, work.unit.unit_from_row)."""
    files = sorted(f for f in d.glob("*.parquet") if not f.name.startswith((".", PART_PREFIX))
                   and (only is None or f.name[:-len(".parquet")] in only))
    if len(files) < max(2, min_files):
        return 0
    if sample:
        files += sorted(f for f in d.glob(f"{PART_PREFIX}*.parquet")
                        if f not in _superseded(d))
    key = uuid.uuid4().hex[:12]
    part, intent = d / f"{PART_PREFIX}{key}.parquet", d / f"{COMPACT_PREFIX}{key}.json"
    write_json(intent, {"part": part.name, "replaces": [f.name for f in files]})

    def write(fh):      # streamed: memory holds one row group, not the directory
        if sample:      # sampled findings: groups span files, so all at once (bounded)
            from fuzzfarm.store.samples import sample_table
            t = sample_table(pa.concat_tables(list(_read_all(files, schema, known=known))))
            pq.write_table(t, fh, compression="zstd", row_group_size=_PART_ROW_GROUP)
            return
        sums = _histogram_sums(files, schema, known) if "ulp_histogram" in schema.names \
            else None
        placed: set = set()
        with pq.ParquetWriter(fh, schema, compression="zstd") as w:
            batch, rows = [], 0
            for t in _read_all(files, schema, known=known):
                if sums is not None:
                    t = _histograms_per_target(t, sums, placed)
                batch.append(t)
                rows += t.num_rows
                if rows >= _PART_ROW_GROUP:
                    w.write_table(pa.concat_tables(batch))
                    batch, rows = [], 0
            if batch:
                w.write_table(pa.concat_tables(batch))
    _atomic_write(part, write)
    for f in files:
        f.unlink(missing_ok=True)
    intent.unlink(missing_ok=True)
    pa.default_memory_pool().release_unused()
    return len(files)


#: Rows per row group of a compacted part (bounds the compaction's memory).
_PART_ROW_GROUP = 16384
#: Files read at once by a compaction (threads: pyarrow reads without the GIL).
_READ_WINDOW = 64


def _read_all(files: list, schema: pa.Schema, columns=None, known: dict | None = None):
    """The tables of ``files`` in order (only ``columns``, where given): from ``known``
    ({key: table}, see ``compact``) where it has them, else read ``_READ_WINDOW`` at a time
    by a few threads (a sweep's 256 one-row stats files: ~1 s one by one on a 16-core
    host)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(f):
        t = known.get(_known_key(f)) if known else None
        if t is None:       # older files may lack newer columns: read_table fills them
            return pq.read_table(f, schema=schema, columns=columns)
        return t if columns is None else t.select(columns)

    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        for k in range(0, len(files), _READ_WINDOW):
            yield from pool.map(one, files[k:k + _READ_WINDOW])


#: The stats columns that identify one target's units in a run: a compacted part keeps
#: one ULP-error histogram per such group (``_histograms_per_target``).
_HIST_KEY = ("run_id", "device_fingerprint", "function", "precision", "vector_width",
             "build_options", "front_end")


def _histogram_sums(files: list, schema: pa.Schema, known: dict | None = None) -> dict:
    """{group (``_HIST_KEY`` values): summed histogram (oracle.histogram layout)} of the
    stats rows in ``files`` (``known``: see ``_read_all``)."""
    from fuzzfarm.oracle.histogram import from_cells
    sums: dict = {}
    for t in _read_all(files, schema, list(_HIST_KEY) + ["ulp_histogram"], known):
        keys = zip(*(t[c].to_pylist() for c in _HIST_KEY))
        for key, cells in zip(keys, t["ulp_histogram"].to_pylist()):
            if cells:
                h = from_cells(cells)
                sums[key] = h if key not in sums else sums[key] + h
    return sums


def _histograms_per_target(t: pa.Table, sums: dict, placed: set) -> pa.Table:
    """``t`` (stats rows) with each group's summed histogram on the first of its rows in
    the part (``placed``: the groups already given theirs) and null on the others: a
    unit's histogram is 72% of its stats row (~600 of ~830 bytes), and readers only ever
    sum them per target (triage, the sweep summary), which this keeps exact."""
    from fuzzfarm.oracle.histogram import to_cells
    cells = []
    for key in zip(*(t[c].to_pylist() for c in _HIST_KEY)):
        if key in sums and key not in placed:
            placed.add(key)
            cells.append(to_cells(sums[key]))
        else:
            cells.append(None)
    i = t.schema.get_field_index("ulp_histogram")
    return t.set_column(i, t.schema.field(i), pa.array(cells, t.schema.field(i).type))


def finish_compactions(out: str | os.PathLike) -> int:
    """Finish what killed compactions left under ``out``: delete the files a written part
    replaces, and every intent; returns how many intents there were.  Holding the lock."""
    n = 0
    for intent, files in _intents(Path(out)):
        for f in files or ():
            f.unlink(missing_ok=True)
        intent.unlink(missing_ok=True)
        n += 1
    return n


def _root_of(path: Path) -> str:
    """The results directory a findings or stats path is in (for the hint)."""
    p = Path(path)
    for parent in (p, *p.parents):
        if (parent / "_runs").is_dir() or (parent / "_stats").is_dir():
            return str(parent)
    return str(p)


#: Where ``quarantine`` moves damaged files (kept, not deleted: evidence for a report).
QUARANTINE = "_quarantine"


def damaged_files(out: str | os.PathLike) -> list[tuple[Path, str]]:
    """Every file under ``out`` that a reader would trip on, with why, sorted: a Parquet
    file whose footer does not read (truncated, overwritten, not Parquet) or whose columns
    are not those of its kind (findings or stats), and a journal with an unreadable line
    before its last (a torn last line is a crash's and is skipped by readers).  Files in
    ``_quarantine`` and temporary files are not looked at."""
    root = Path(out)
    found = []
    if not root.exists():
        return found
    for f in sorted(root.rglob("*.parquet")):
        rel = f.relative_to(root).parts
        if f.name.startswith(".") or QUARANTINE in rel:
            continue
        try:
            meta = pq.read_metadata(f)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds
            found.append((f, f"not a readable Parquet file: {' '.join(str(exc).split())[:120]}"))
            continue
        want = STATS_SCHEMA if "_stats" in rel else FINDINGS_SCHEMA
        names = set(meta.schema.to_arrow_schema().names)
        missing = [c for c in ("run_id", "unit_id") if c in want.names and c not in names]
        if missing:
            found.append((f, f"no column {missing[0]!r}: not a fuzzfarm results file"))
    for j in sorted(root.glob("_campaign/*/journal.jsonl")):
        try:
            read_journal(j)
        except StoreError as exc:
            found.append((j, str(exc).split(": ", 1)[-1]))
    return found


def quarantine(out: str | os.PathLike, files) -> list[Path]:
    """Move ``files`` (paths under ``out``) to ``out/_quarantine/`` keeping their relative
    paths; returns the new paths.  Readers never look there."""
    root = Path(out)
    moved = []
    for f in files:
        f = Path(f)
        dest = root / QUARANTINE / f.relative_to(root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(f, dest)
        moved.append(dest)
    return moved


# --------------------------------------------------------------------------- ownership
#: The lock file of a results directory, and the note beside it naming its holder.
LOCK_NAME, HOLDER_NAME = ".fuzzfarm.lock", ".fuzzfarm.holder.json"


class ResultsInUse(BadInput):
    """Another process is writing to the results directory (one line, naming it)."""


class ResultsLock:
    """Exclusive ownership of a results directory for one writing process (``run``,
    ``sweep``, a campaign's driver): a ``filelock.FileLock`` on ``DIR/.fuzzfarm.lock``, held
    until ``release`` (or the process's end: the OS drops the lock of a killed process), and
    a note naming the holder (pid, host, command, start time), removed on release.  The
    empty lock file itself stays (deleting it would let a process that opened it just
    before lock a file no longer on the path).  Readers (findings, triage,
    repro) take no lock: every file they see was renamed into place whole.

    ``acquire()`` raises ResultsInUse naming the directory and the holder when another
    process holds it; then it removes what dead writers left (``remove_orphans``) and
    returns how many files that was."""

    def __init__(self, out: str | os.PathLike, what: str = "fuzzfarm"):
        import filelock
        self.out = Path(out)
        self.what = what
        self._lock = filelock.FileLock(str(self.out / LOCK_NAME))
        self.removed = 0

    def acquire(self) -> int:
        import filelock
        self.out.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire(timeout=0)
        except filelock.Timeout:
            raise ResultsInUse(f"results directory {str(self.out)!r} is in use by "
                               f"{_holder(self.out)}; wait for it, or give another --out") \
                from None
        import socket
        import sys
        write_json(self.out / HOLDER_NAME, {
            "pid": os.getpid(), "host": socket.gethostname(), "what": self.what,
            "argv": sys.argv, "since": datetime.now(timezone.utc).isoformat(timespec="seconds")})
        self.removed = remove_orphans(self.out)
        finish_compactions(self.out)
        return self.removed

    def release(self) -> None:
        if self._lock.is_locked:
            try:
                (self.out / HOLDER_NAME).unlink()
            except OSError:
                pass
            self._lock.release()

    def __enter__(self) -> "ResultsLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _holder(out: Path) -> str:
    try:
        h = json.loads((out / HOLDER_NAME).read_text())
        return (f"process {h.get('pid')} on {h.get('host')} ({h.get('what')}, since "
                f"{h.get('since')})")
    except (OSError, ValueError):
        return "another process"


def remove_unused(out: str | os.PathLike) -> bool:
    """Remove the directory ``out`` where it holds nothing but a results lock's file (a
    directory a command created and then refused to use: bad input leaves nothing);
    returns whether it did.  Never raises."""
    try:
        if {p.name for p in os.scandir(out)} <= {LOCK_NAME}:
            for name in os.listdir(out):
                os.unlink(os.path.join(out, name))
            os.rmdir(out)
            return True
    except OSError:
        pass
    return False


def remove_orphans(out: str | os.PathLike) -> int:
    """Remove the temporary files of writes that never finished (a writer killed between
    creating and renaming its file) anywhere under ``out``; returns how many.  Call it only
    while holding the directory's ResultsLock: a live writer's file would go too."""
    n = 0
    for p in Path(out).rglob(TEMP_PREFIX + "*"):
        if p.is_file():
            try:
                p.unlink()
                n += 1
            except OSError:
                pass
    return n


# --------------------------------------------------------------------------- campaigns
def campaign_dir(out: str | os.PathLike, run_id: str) -> Path:
    """Where a campaign keeps its spec, journal and status: ``DIR/_campaign/<run_id>``."""
    return Path(out) / "_campaign" / run_id


def write_json(path: Path, data: dict) -> Path:
    """Write (or replace) a JSON file atomically."""
    text = json.dumps(data, indent=2, sort_keys=True, default=str).encode()
    _atomic_write(Path(path), lambda fh: fh.write(text))
    return Path(path)


def write_text(path: Path, text: str) -> Path:
    """Write (or replace) a text file (UTF-8) atomically: a report, never half written."""
    data = str(text).encode("utf-8")
    _atomic_write(Path(path), lambda fh: fh.write(data))
    return Path(path)


class Journal:
    """An append-only JSON-lines file of events (``fuzzfarm.orchestrate.scheduler``).  Each
    ``append`` writes one line and flushes it to the operating system, so a killed
    process loses nothing written; ``sync=True`` also fsyncs each line (a lost machine
    then loses nothing either).  A line torn by a crash is ignored by ``read_journal`` and
    cut off when the journal is opened again."""

    def __init__(self, path: str | os.PathLike, sync: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # a last line torn by a crash is cut off, so that the journal stays whole lines
        # (only a torn journal is read back: a whole one may be long)
        if self.path.exists() and self.path.stat().st_size:
            with open(self.path, "r+b") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    fh.seek(0)
                    fh.truncate(fh.read().rfind(b"\n") + 1)
        self._fh = open(self.path, "ab", buffering=0)
        self.sync = sync

    def append(self, event: dict) -> None:
        self._fh.write(json.dumps(event, sort_keys=True, separators=(",", ":")).encode()
                       + b"\n")
        if self.sync:
            os.fsync(self._fh.fileno())

    def rewrite(self, events: list[dict]) -> None:
        """Replace the journal by ``events`` (one line each; atomically: a crash leaves
        the old journal or the new one) and go on appending to it
        (``Scheduler.checkpoint``).  Raises StoreError where it cannot be written (the old
        journal is kept)."""
        body = b"".join(json.dumps(e, sort_keys=True, separators=(",", ":")).encode() + b"\n"
                        for e in events)
        _atomic_write(self.path, lambda fh: fh.write(body))
        self._fh.close()
        self._fh = open(self.path, "ab", buffering=0)

    def close(self) -> None:
        self._fh.close()


def read_journal(path: str | os.PathLike) -> list[dict]:
    """The events of a journal, in order ([] when there is none).  A line that does not
    parse is skipped when it is the last one or followed only by such lines (torn by a
    crash); anywhere else it raises StoreError naming the file and line."""
    p = Path(path)
    if not p.exists():
        return []
    lines = p.read_bytes().split(b"\n")
    events, bad = [], None
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
            if not isinstance(ev, dict):
                raise ValueError("not an object")
        except ValueError:
            bad = bad or no
            continue
        if bad is not None:
            raise StoreError(f"results directory is corrupt: {str(p)!r} line {bad} is not "
                             f"a journal event")
        events.append(ev)
    return events


def done_units(out: str | os.PathLike, run_id: str) -> set[str]:
    """Ids of the units of ``run_id`` whose stats row is written: the units that are done
    (the stats file is the last one a unit writes)."""
    d = Path(out) / "_stats" / run_id
    if not d.is_dir():
        return set()
    done = set()
    for p in d.iterdir():
        if not p.name.endswith(".parquet") or p.name.startswith("."):
            continue
        if p.name.startswith(PART_PREFIX):          # compacted: the ids are in the rows
            try:
                done.update(pq.read_table(p, columns=["unit_id"]).column(0).to_pylist())
            except FileNotFoundError:
                continue
        else:
            done.add(p.name[:-len(".parquet")])
    return done


def latest_campaign(out: str | os.PathLike, unfinished: bool = False) -> str | None:
    """The run id of the campaign in ``out`` started last (by run id: they sort by start
    time), or with ``unfinished`` the last one whose status is not "completed"; None when
    there is none."""
    base = Path(out) / "_campaign"
    if not base.is_dir():
        return None
    for run_id in sorted((p.name for p in base.iterdir() if p.is_dir()), reverse=True):
        if not unfinished:
            return run_id
        status = read_status(out, run_id)
        if status is None or status.get("state") != "completed":
            return run_id
    return None


def read_status(out: str | os.PathLike, run_id: str | None = None) -> dict | None:
    """The status file of campaign ``run_id`` (default: the latest) as a dict, or None
    when there is none.  Raises StoreError when it is not JSON."""
    run_id = run_id or latest_campaign(out)
    if run_id is None:
        return None
    p = campaign_dir(out, run_id) / "status.json"
    if not p.exists():
        return None
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError) as exc:
        raise StoreError(f"results directory is corrupt: {str(p)!r}: {exc}") from None


def write_fault_inputs(out: str | os.PathLike, run_id: str, unit_id: str,
                       inputs: dict) -> Path:
    """Save the inputs of a unit recorded as a device fault ({name: array}) as
    ``DIR/_faults/<run_id>/<unit_id>.npz``."""
    import numpy as np
    path = Path(out) / "_faults" / run_id / f"{unit_id}.npz"
    _atomic_write(path, lambda fh: np.savez_compressed(fh, **inputs))
    return path
