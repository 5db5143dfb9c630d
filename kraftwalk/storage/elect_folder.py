"""An elect folder: what ``kraftwalk elect`` writes, and how it is read back.

::

    ELECT/
      config.toml     the full config; ``--config ELECT/config.toml`` repeats the run,
                      ``kraftwalk elect --resume ELECT`` continues it
      run.json        status, cells, versions, fingerprint; rewritten after every saved part
      walks/kafka=4.3/voters=3/pre_vote=true/part-*.parquet   one row per walk  | hive-
      walks_histogram/...  (--walk-stats histogram) counts per value             | partitioned
      violations/...       one row per walk that broke a property                | datasets
      summary.parquet, summary.md, elect-cdf.png   of the saved walks, at the end or a stop

A cell (release, cluster size, pre-vote) is a partition of the run folder's datasets
(:mod:`kraftwalk.storage.rundir`): its parts are saved as they finish, each complete
whatever ends the process, so DuckDB reads a dataset with one glob
(``read_parquet('ELECT/walks/**/*.parquet')``, the cell's columns from the folder names)
and a resumed run goes on after a cell's saved walks. The cell's columns are left out
of the files (a column in both would clash); the readers here put them back with their
types.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from kraftwalk.errors import UsageError
from kraftwalk.storage import rundir
from kraftwalk.storage.elect_stats import Histogram

CELL_COLUMNS = ("kafka", "voters", "pre_vote")
SUMMARY = "summary.parquet"
SUMMARY_MD = "summary.md"
CDF_PLOT = "elect-cdf.png"


def partition(kafka: str, voters: int, pre_vote: bool, within: str = "") -> str:
    """A cell's partition, under ``within`` (a sweep cell's grid partition) whose keys
    it does not repeat."""
    have = {p.split("=", 1)[0] for p in within.split("/")} if within else set()
    own = [f"{k}={x}" for k, x in (("kafka", kafka), ("voters", voters),
                                  ("pre_vote", "true" if pre_vote else "false"))
           if k not in have]
    return "/".join([within, *own] if within else own)


def cell_layout(folder: str | Path, kafka: str, voters: int, pre_vote: bool,
                base: rundir.Layout | None = None) -> rundir.Layout:
    """Where a cell of the elect run in ``folder`` keeps its parts: its partition of the
    folder's own datasets, or, for a cell of ``kraftwalk sweep`` (``base``, else as the
    folder's run.json says), under the sweep cell's grid partition of the sweep's."""
    base = base if base is not None else rundir.layout(folder)
    return rundir.Layout(base.root, base.data_root,
                         partition(kafka, voters, pre_vote, base.partition))


def cell_columns(kafka: str, voters: int, pre_vote: bool, n: int) -> dict[str, pa.Array]:
    """The cell's columns for ``n`` rows, typed as elect's tables have them."""
    from kraftwalk.storage.tables import constant

    return {"kafka": constant(kafka, n), "voters": pa.array(np.full(n, voters, np.int8)),
            "pre_vote": pa.array(np.full(n, pre_vote, bool))}


def config_of(folder: str | Path):
    """The ElectConfig an elect folder ran with."""
    from kraftwalk.elect_config import make_elect_config

    path = Path(folder) / rundir.CONFIG
    if not path.is_file():
        raise UsageError(f"{folder} has no {rundir.CONFIG}: it is not a kraftwalk elect folder")
    return make_elect_config(path)


def read_cell(folder: str | Path, cell: tuple[str, int, bool], dataset: str,
              columns: list[str] | None = None) -> pa.Table | None:
    """One cell's saved rows of ``dataset``, the cell's columns first; None when the
    cell saved nothing there. A part that cannot be read is a one-line UsageError."""
    lay = cell_layout(folder, *cell)
    if not rundir.parts(lay, dataset):
        return None
    own = None if columns is None else [c for c in columns if c not in CELL_COLUMNS]
    t = rundir.read_dataset(lay, dataset, columns=own)
    t = t.drop_columns([c for c in CELL_COLUMNS if c in t.column_names])
    head = cell_columns(*cell, t.num_rows)
    if columns is not None:
        head = {c: head[c] for c in CELL_COLUMNS if c in columns}
    return pa.table({**head, **{n: t.column(n) for n in t.column_names}})


def read_cells(folder: str | Path, dataset: str, columns: list[str] | None = None,
               cfg=None) -> pa.Table:
    """Every cell's saved rows of ``dataset``, cells in run order; a folder where no cell
    saved any is a UsageError."""
    cfg = cfg if cfg is not None else config_of(folder)
    tables = [t for cell in cfg.cells()
              if (t := read_cell(folder, cell, dataset, columns)) is not None]
    if not tables:
        raise UsageError(f"{folder} has no saved {dataset}/ parts")
    try:
        return pa.concat_tables(tables, promote_options="default")
    except (pa.ArrowException, ValueError) as e:
        raise UsageError(f"the parts of {Path(folder) / dataset} do not share one schema "
                         f"({' '.join(str(e).split())[:200]})") from None


def has_cells(folder: str | Path, dataset: str, cfg=None) -> bool:
    cfg = cfg if cfg is not None else config_of(folder)
    return any(rundir.parts(cell_layout(folder, *cell), dataset) for cell in cfg.cells())


def cell_histogram(folder: str | Path, cell: tuple[str, int, bool], histogram: bool
                   ) -> Histogram:
    """The histogram of a cell's saved walks, read part by part (memory stays flat),
    exactly the one its walks made as they ran."""
    lay = cell_layout(folder, *cell)
    h = Histogram()
    saved = set(rundir.saved_ranges(lay))
    for a, b, path in rundir.parts(lay, rundir.HISTOGRAM if histogram else rundir.WALKS):
        if (a, b) not in saved:
            continue
        t = rundir.read_file(path, columns=None if histogram else list(h.names))
        try:
            h.add_table(t) if histogram else h.add_rows(t)
        except (KeyError, ValueError, pa.ArrowException) as e:
            raise UsageError(f"{path} is not a part kraftwalk elect wrote ({e})") from None
    return h


def cell_violations(folder: str | Path, cell: tuple[str, int, bool]) -> int:
    t = read_cell(folder, cell, rundir.VIOLATIONS, ["walk"])
    return 0 if t is None else t.num_rows
