"""Aggregated statistics of timed walks: per cell, how many walks had each value of
each statistic, times to the millisecond (rounded down). The summary of every elect
run comes from these; ``--walk-stats histogram`` saves them instead of one row per
walk, so a run of any size writes a few thousand rows per cell and its memory stays
flat.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

US_PER_MS = 1000
TOTALS_KEY = b"kraftwalk.totals"  # a histogram part's exact sums, in its Parquet metadata
QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99_9", 0.999))


def is_time(name: str) -> bool:
    return name.endswith("_us")


class Histogram:
    """Counts per (statistic, value) of the walks of one cell; exact totals kept
    alongside, so sums and means of sums do not suffer the bucketing."""

    def __init__(self) -> None:
        from kraftwalk.kernels.state.clock import TS_NAMES

        self.names = TS_NAMES
        self.walks = 0
        self.counts: dict[str, dict[int, int]] = {n: {} for n in TS_NAMES}
        self.totals: dict[str, int] = {n: 0 for n in TS_NAMES}

    def add(self, timed: np.ndarray) -> "Histogram":
        """Add a chunk's timed statistics (rows: walks, columns: TS_NAMES)."""
        self.walks += len(timed)
        for k, name in enumerate(self.names):
            x = timed[:, k]
            measured = x[x >= 0]
            self.totals[name] += int(measured.sum())
            b = np.where(x >= 0, x // US_PER_MS if is_time(name) else x, -1)
            vals, cnt = np.unique(b, return_counts=True)
            d = self.counts[name]
            for v, c in zip(vals.tolist(), cnt.tolist()):
                d[v] = d.get(v, 0) + c
        return self

    def add_rows(self, rows: pa.Table) -> "Histogram":
        """Add walk rows (elect's walks dataset: a column per statistic, null where the
        walk never measured it)."""
        timed = np.stack([rows.column(n).fill_null(-1).to_numpy().astype(np.int64)
                          for n in self.names], axis=1) if rows.num_rows else \
            np.zeros((0, len(self.names)), np.int64)
        return self.add(timed)

    def add_table(self, t: pa.Table) -> "Histogram":
        """Add a saved histogram part (:meth:`table`): its counts, and the walks and exact
        totals its metadata keeps."""
        import json

        meta = json.loads((t.schema.metadata or {}).get(TOTALS_KEY, b"null"))
        if not isinstance(meta, dict) or not isinstance(meta.get("totals"), dict):
            raise ValueError("a histogram part without the walks and totals kraftwalk elect "
                             "records in its metadata")
        self.walks += int(meta["walks"])
        for name in self.names:
            self.totals[name] += int(meta["totals"].get(name, 0))
        stat = t.column("stat").cast(pa.string()).to_pylist()
        value = t.column("value").fill_null(-1).to_pylist()
        for s, v, c in zip(stat, value, t.column("count").to_pylist()):
            d = self.counts[s]
            d[v] = d.get(v, 0) + c
        return self

    def values(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Measured values (ms for times) and how many walks had each, ascending."""
        d = self.counts[name]
        vals = np.array(sorted(v for v in d if v >= 0), dtype=np.int64)
        return vals, np.array([d[v] for v in vals.tolist()], dtype=np.int64)

    def table(self, kafka: str, voters: int, pre_vote: bool) -> pa.Table:
        from kraftwalk.storage.tables import constant

        stat, value, unit, count = [], [], [], []
        for name in self.names:
            for v, c in sorted(self.counts[name].items()):
                stat.append(name)
                value.append(v)
                unit.append("ms" if is_time(name) else "count")
                count.append(c)
        import json

        n = len(stat)
        meta = {TOTALS_KEY: json.dumps({"walks": self.walks, "totals": self.totals})}
        return pa.table({
            "kafka": constant(kafka, n),
            "voters": pa.array(np.full(n, voters, np.int8)),
            "pre_vote": pa.array(np.full(n, pre_vote, bool)),
            "stat": pa.array(stat, pa.string()).dictionary_encode(),
            "value": pa.array(value, pa.int64(), mask=np.array(value) < 0),
            "unit": pa.array(unit, pa.string()).dictionary_encode(),
            "count": pa.array(count, pa.int64())}, metadata=meta)


def quantiles(vals: np.ndarray, cnt: np.ndarray) -> dict:
    """Nearest-rank quantiles and the maximum of a histogram."""
    if cnt.sum() == 0:
        return {**{k: None for k, _ in QUANTILES}, "max": None}
    cum = np.cumsum(cnt)
    out = {k: float(vals[np.searchsorted(cum, np.ceil(q * cum[-1]))]) for k, q in QUANTILES}
    return {**out, "max": float(vals[-1])}


def mean(vals: np.ndarray, cnt: np.ndarray) -> float | None:
    return float((vals * cnt).sum() / cnt.sum()) if cnt.sum() else None


def summarize_cell(kafka: str, voters: int, pre_vote: bool, h: Histogram,
                   violations: int) -> dict:
    """Election time quantiles (ms), split votes, downtime, disruptions, commit
    latency and violations of one cell."""
    elect = h.values("elect_us")
    epochs, e_cnt = h.values("election_epochs")
    down = quantiles(*h.values("unavailable_us"))
    commits = h.totals["commits_timed"]
    return {
        "kafka": kafka, "voters": voters, "pre_vote": pre_vote, "walks": h.walks, "elected": int(elect[1].sum()),
        **{f"elect_{k}_ms": x for k, x in quantiles(*elect).items()},
        "elect_mean_ms": mean(*elect),
        "split_vote_pct": (100.0 * float(e_cnt[epochs > 1].sum() / e_cnt.sum())
                           if e_cnt.sum() else None),
        "failed_pre_votes_per_walk": h.totals["failed_pre_votes"] / max(h.walks, 1),
        "downtime_p50_ms": down["p50"], "downtime_p99_ms": down["p99"],
        "disruptions": h.totals["disruptive_elections"],
        "commit_latency_mean_ms": (h.totals["commit_latency_sum_us"] / commits / US_PER_MS
                                   if commits else None),
        "stale_leader_p50_ms": quantiles(*h.values("stale_leader_us"))["p50"],
        "violations": violations,
    }
