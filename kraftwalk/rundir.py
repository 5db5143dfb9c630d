"""The run folder: what a run writes, and how it is read back.

::

    RUN/
      config.toml          the full config; ``--config RUN/config.toml`` repeats the run
      run.json             status, counts, versions; rewritten after every saved part
      walks/               one row per walk                 | Parquet datasets, one
      violations/          one row per violating walk       | complete file per group
      walks_histogram/     (--walk-stats histogram) counts  | of finished chunks

Each dataset folder holds parts named after the walks they hold,
``part-<first>-<end>.parquet`` (end exclusive). A part is written under a hidden
temporary name in the run folder, fsynced, and renamed into its dataset folder, so
every file there is complete whatever ends the process, kill -9 included; DuckDB
(``'RUN/walks/*.parquet'``), pandas and pyarrow (the folder) and polars read a
dataset as one table. A range of walks is saved once its walks (or histogram) part
exists: its violations part is renamed first, and one left without a walks part
(a kill between the two renames) is ignored by the readers here.

Run folders written before the datasets existed hold single ``walks.parquet`` /
``violations.parquet`` files; the readers accept those too.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kraftwalk.errors import UsageError
from kraftwalk.output import _fsync_dir, _unlink_quietly

CONFIG = "config.toml"
RUN_JSON = "run.json"
WALKS = "walks"
VIOLATIONS = "violations"
HISTOGRAM = "walks_histogram"
DATASETS = (WALKS, VIOLATIONS, HISTOGRAM)

_PART = re.compile(r"^part-(\d{12})-(\d{12})\.parquet$")
TMP_PREFIX = ".tmp-"


def part_name(first: int, end: int) -> str:
    return f"part-{first:012d}-{end:012d}.parquet"


def write_part(run_dir: Path, dataset: str, first: int, end: int, table: pa.Table) -> Path:
    """Write walks [first, end) of ``dataset`` as one complete Parquet file."""
    folder = run_dir / dataset
    folder.mkdir(exist_ok=True)
    name = part_name(first, end)
    tmp = run_dir / f"{TMP_PREFIX}{dataset}-{name}"
    try:
        with pq.ParquetWriter(tmp, table.schema, compression="zstd") as w:
            if table.num_rows:
                w.write_table(table, row_group_size=table.num_rows)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, folder / name)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    _fsync_dir(str(folder))
    return folder / name


def parts(run_dir: str | Path, dataset: str) -> list[tuple[int, int, Path]]:
    """(first, end, path) of each part of a dataset, in walk order."""
    folder = Path(run_dir) / dataset
    if not folder.is_dir():
        return []
    out = []
    for p in folder.iterdir():
        m = _PART.match(p.name)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), p))
    return sorted(out)


def saved_ranges(run_dir: str | Path) -> list[tuple[int, int]]:
    """The walk ranges whose results are saved (their walks or histogram part exists)."""
    return sorted({(a, b) for ds in (WALKS, HISTOGRAM) for a, b, _ in parts(run_dir, ds)})


def walks_saved(run_dir: str | Path) -> int:
    return sum(b - a for a, b in saved_ranges(run_dir))


def remove_leftovers(run_dir: str | Path) -> None:
    """Drop what a killed run may leave that belongs to no saved range: temporary files
    and violations parts whose walks part never arrived."""
    run = Path(run_dir)
    for p in run.glob(TMP_PREFIX + "*"):
        _unlink_quietly(str(p))
    saved = set(saved_ranges(run))
    for a, b, p in parts(run, VIOLATIONS):
        if (a, b) not in saved and a != b:
            _unlink_quietly(str(p))


def _read_file(path: Path, columns=None, filters=None) -> pa.Table:
    try:
        return pq.read_table(path, columns=columns, filters=filters)
    except (pa.ArrowException, OSError, ValueError) as e:
        msg = " ".join(str(e).split())
        raise UsageError(f"{path} is not a readable kraftwalk Parquet file ({msg[:200]})") from None


def _legacy(run_dir: Path, dataset: str) -> Path:
    return run_dir / f"{dataset}.parquet"


def has_dataset(run_dir: str | Path, dataset: str) -> bool:
    run = Path(run_dir)
    return bool(parts(run, dataset)) or _legacy(run, dataset).is_file()


def read_dataset(run_dir: str | Path, dataset: str, columns=None, filters=None) -> pa.Table:
    """The whole dataset as one table, parts in walk order; a part that cannot be read
    is a one-line UsageError naming it."""
    run = Path(run_dir)
    legacy = _legacy(run, dataset)
    if not parts(run, dataset) and legacy.is_file():
        return _read_file(legacy, columns, filters)
    found = parts(run, dataset)
    if not found:
        raise UsageError(f"{run_dir} has no {dataset}/ dataset: it is not a finished or "
                         "saved kraftwalk run folder")
    saved = set(saved_ranges(run)) if dataset == VIOLATIONS else None
    tables = [_read_file(p, columns, filters) for a, b, p in found
              if saved is None or (a, b) in saved or a == b]
    schema = tables[0].schema
    try:
        return pa.concat_tables([t.cast(schema) for t in tables])
    except (pa.ArrowException, ValueError) as e:
        raise UsageError(f"the parts of {run / dataset} do not share one schema "
                         f"({' '.join(str(e).split())[:200]})") from None
