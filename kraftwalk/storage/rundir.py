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

A sweep (``kraftwalk sweep``) keeps its cells' datasets together, hive-partitioned:
a cell's config.toml and run.json are in ``SWEEP/cells/<partition>/`` and its parts in
``SWEEP/walks/<partition>/`` and so on, with <partition> like
``voters=5/pre_vote=true``; the cell's run.json names the partition, so every reader
here takes a cell's folder like any run folder.

Run folders written before the datasets existed hold single ``walks.parquet`` /
``violations.parquet`` files; the readers accept those too.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kraftwalk.errors import UsageError
from kraftwalk.storage.output import _fsync_dir, _unlink_quietly

CONFIG = "config.toml"
RUN_JSON = "run.json"
WALKS = "walks"
VIOLATIONS = "violations"
HISTOGRAM = "walks_histogram"
COVERAGE = "coverage"  # per saved range; coverage.parquet is the run's aggregate
COVERAGE_FILE = "coverage.parquet"
DATASETS = (WALKS, VIOLATIONS, HISTOGRAM, COVERAGE)
SAVED_BY = (WALKS, HISTOGRAM)  # a range is saved once its part in one of these exists

_PART = re.compile(r"^part-(\d{12})-(\d{12})\.parquet$")
TMP_PREFIX = ".tmp-"


@dataclass(frozen=True)
class Layout:
    """Where a run keeps its files: ``root`` holds config.toml, run.json and temporary
    files; dataset ``name`` lives in ``data_root/name/partition``."""

    root: Path
    data_root: Path
    partition: str = ""

    def dataset(self, name: str) -> Path:
        base = self.data_root / name
        return base / self.partition if self.partition else base

    def keys(self) -> list[str]:
        """The partition's column names (``voters=5/pre_vote=true``: voters, pre_vote)."""
        return [p.split("=", 1)[0] for p in self.partition.split("/")] if self.partition else []

    def meta(self) -> dict:
        """What run.json records so that readers find a sweep cell's datasets."""
        if not self.partition:
            return {}
        return {"partition": self.partition,
                "data_root": os.path.relpath(self.data_root, self.root)}


def layout(run: str | Path | Layout) -> Layout:
    """The layout of a run folder: its own, or a sweep cell's as its run.json says."""
    if isinstance(run, Layout):
        return run
    root = Path(run)
    try:
        meta = json.loads((root / RUN_JSON).read_text())
        if isinstance(meta, dict) and meta.get("partition"):
            return Layout(root, (root / meta["data_root"]).resolve(), meta["partition"])
    except (OSError, ValueError, TypeError, KeyError):
        pass
    return Layout(root, root)


def part_name(first: int, end: int) -> str:
    return f"part-{first:012d}-{end:012d}.parquet"


def write_part(run: Path | Layout, dataset: str, first: int, end: int, table: pa.Table) -> Path:
    """Write walks [first, end) of ``dataset`` as one complete Parquet file. In a sweep
    cell, the partition's columns are left out of the file: its folder names them, and
    a column in both would clash for the readers of the hive-partitioned dataset."""
    lay = layout(run)
    drop = [k for k in lay.keys() if k in table.column_names]
    if drop:
        table = table.drop_columns(drop)
    folder = lay.dataset(dataset)
    folder.mkdir(parents=True, exist_ok=True)
    name = part_name(first, end)
    tmp = lay.root / f"{TMP_PREFIX}{dataset}-{name}"
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


def parts(run: str | Path | Layout, dataset: str) -> list[tuple[int, int, Path]]:
    """(first, end, path) of each part of a dataset, in walk order."""
    folder = layout(run).dataset(dataset)
    if not folder.is_dir():
        return []
    out = []
    for p in folder.iterdir():
        m = _PART.match(p.name)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), p))
    return sorted(out)


def saved_ranges(run: str | Path | Layout) -> list[tuple[int, int]]:
    """The walk ranges whose results are saved (their walks or histogram part exists)."""
    lay = layout(run)
    return sorted({(a, b) for ds in SAVED_BY for a, b, _ in parts(lay, ds)})


def walks_saved(run: str | Path | Layout) -> int:
    return sum(b - a for a, b in saved_ranges(run))


def saved_prefix(run: str | Path | Layout) -> int:
    """End of the saved walks 0..K-1. Parts are saved in walk order, so saved ranges
    chain from 0; anything else is a folder this module did not write."""
    end = 0
    for a, b in saved_ranges(run):
        if a != end and not a == b == 0:
            raise UsageError(f"{layout(run).root}: the saved parts skip walks {end}..{a - 1}; "
                             "this is not a folder kraftwalk wrote")
        end = max(end, b)
    return end


def remove_leftovers(run: str | Path | Layout) -> None:
    """Drop what a killed run may leave that belongs to no saved range: temporary files
    and violations or coverage parts whose walks part never arrived."""
    lay = layout(run)
    for p in lay.root.glob(TMP_PREFIX + "*"):
        _unlink_quietly(str(p))
    saved = set(saved_ranges(lay))
    for ds in (VIOLATIONS, COVERAGE):
        for a, b, p in parts(lay, ds):
            if (a, b) not in saved and a != b:
                _unlink_quietly(str(p))


def read_file(path: Path, columns=None, filters=None) -> pa.Table:
    """One Parquet file; one that cannot be read is a one-line UsageError naming it."""
    try:
        return pq.read_table(path, columns=columns, filters=filters)
    except (pa.ArrowException, OSError, ValueError) as e:
        msg = " ".join(str(e).split())
        raise UsageError(f"{path} is not a readable kraftwalk Parquet file ({msg[:200]})") from None


def _legacy(lay: Layout, dataset: str) -> Path:
    return lay.root / f"{dataset}.parquet"


def has_dataset(run: str | Path | Layout, dataset: str) -> bool:
    lay = layout(run)
    return bool(parts(lay, dataset)) or _legacy(lay, dataset).is_file()


def read_dataset(run: str | Path | Layout, dataset: str, columns=None, filters=None) -> pa.Table:
    """The whole dataset as one table, parts in walk order; a part that cannot be read
    is a one-line UsageError naming it."""
    lay = layout(run)
    legacy = _legacy(lay, dataset)
    found = parts(lay, dataset)
    if not found and legacy.is_file():
        return read_file(legacy, columns, filters)
    if not found:
        raise UsageError(f"{lay.root} has no {dataset}/ dataset: it is not a finished or "
                         "saved kraftwalk run folder")
    saved = None if dataset in SAVED_BY else set(saved_ranges(lay))
    tables = [read_file(p, columns, filters) for a, b, p in found
              if saved is None or (a, b) in saved or a == b]
    schema = tables[0].schema
    try:
        return pa.concat_tables([t.cast(schema) for t in tables])
    except (pa.ArrowException, ValueError) as e:
        raise UsageError(f"the parts of {lay.dataset(dataset)} do not share one schema "
                         f"({' '.join(str(e).split())[:200]})") from None
