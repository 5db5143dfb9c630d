"""The Parquet tables of a run, built from the kernels' result arrays.

Column names need no quoting in SQL (DuckDB's reserved ``offset`` is ``log_offset``
here); strings that repeat are dictionary-encoded.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa

from kraftwalk.config import RunConfig

# The kernels' violation record (layout.VIOL_NAMES), as columns and summary keys.
VIOL_COLUMNS = ("invariant", "step", "node_a", "node_b", "epoch", "log_offset")
# Config settings repeated on every violation row, so rows from many runs compare.
CONFIG_COLUMNS = ("voters", "observers", "depth", "log_capacity", "msg_slots", "max_epoch",
                  "max_records")


def names():
    from kraftwalk.vocabulary.properties import INVARIANT_NAMES
    from kraftwalk.kernels.state.layout import BOUND_NAMES, STAT_NAMES
    from kraftwalk.vocabulary.families import FAMILY_NAMES

    return INVARIANT_NAMES, STAT_NAMES, BOUND_NAMES, FAMILY_NAMES


def named(codes: np.ndarray, names) -> pa.DictionaryArray:
    """Codes 1..len(names) as a dictionary column of their names; 0 is null."""
    idx = pa.array(codes.astype(np.int32) - 1, mask=codes == 0)
    return pa.DictionaryArray.from_arrays(idx, pa.array(names, pa.string()))


def constant(value: str, n: int) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)),
                                          pa.array([value], pa.string()))


def walks_table(first: int, stats: np.ndarray, viol: np.ndarray) -> pa.Table:
    inv_names, stat_names, bound_names, _ = names()
    cols = {"walk": pa.array(np.arange(first, first + len(stats), dtype=np.int64))}
    for k, name in enumerate(stat_names):
        if name == "bound_hit":  # a name for every walk, "none" included
            cols[name] = named(stats[:, k] + 1, bound_names)
        else:
            cols[name] = pa.array(stats[:, k].astype(np.int32))
    cols["violation"] = named(viol[:, 0], inv_names)
    return pa.table(cols)


def violations_table(cfg: RunConfig, run_id: str, first: int, viol: np.ndarray,
                     weights: np.ndarray) -> pa.Table:
    inv_names, _, _, family_names = names()
    rows = np.nonzero(viol[:, 0])[0]
    n = len(rows)
    v = viol[rows]
    cols = {
        "run_id": constant(run_id, n),
        "walk": pa.array((first + rows).astype(np.int64)),
        "seed": pa.array(np.full(n, cfg.seed, dtype=np.uint64)),
        "step": pa.array(v[:, 1].astype(np.int64)),
        "invariant": named(v[:, 0], inv_names),
    }
    for k, name in enumerate(VIOL_COLUMNS[2:], start=2):
        cols[name] = pa.array(v[:, k].astype(np.int32))
    for k, name in enumerate(family_names):
        cols[f"w_{name}"] = pa.array(weights[rows, k])
    for key in CONFIG_COLUMNS:
        cols[key] = pa.array(np.full(n, getattr(cfg, key), dtype=np.int32))
    cols["pre_vote"] = pa.array(np.full(n, cfg.pre_vote, dtype=bool))
    cols["kafka"] = constant(cfg.kafka, n)
    cols["mutation"] = constant(cfg.mutation, n)
    cols["weights"] = constant(cfg.weights, n)
    cols["disabled_checks"] = pa.array([list(cfg.disabled_checks)] * n, pa.list_(pa.string()))
    return pa.table(cols)


def histogram_table(stats: np.ndarray) -> pa.Table:
    """--walk-stats histogram: how many walks had each value of each statistic."""
    _, stat_names, _, _ = names()
    stat, value, count = [], [], []
    for k, name in enumerate(stat_names):
        vals, cnt = np.unique(stats[:, k], return_counts=True)
        stat += [name] * len(vals)
        value.append(vals)
        count.append(cnt)
    return pa.table({
        "stat": pa.array(stat, pa.string()).dictionary_encode(),
        "value": pa.array(np.concatenate(value).astype(np.int64)),
        "count": pa.array(np.concatenate(count).astype(np.int64))})


def violation_dicts(first: int, viol: np.ndarray, limit: int) -> list[dict]:
    """Up to ``limit`` violations of a chunk as dicts (for the summary)."""
    inv_names = names()[0]
    out = []
    for r in np.nonzero(viol[:, 0])[0][:limit]:
        d = dict(zip(VIOL_COLUMNS, (int(x) for x in viol[r])))
        d["invariant"] = inv_names[viol[r, 0] - 1]
        out.append({"walk": int(first + r), **d})
    return out


def tally(codes: np.ndarray, names, offset: int) -> Counter:
    """How often each nonzero code occurs, keyed by names[code - offset]."""
    c: Counter = Counter()
    for code, n in zip(*np.unique(codes, return_counts=True)):
        if code:
            c[names[code - offset]] += int(n)
    return c
