"""Two configurations' timed walks, statistic by statistic: each difference with a 95%
confidence interval, so that a change whose cost is a statistic (slower elections,
more disruptions) is shown, and decided, by one command.

The walks of two elect runs with the same seed are the same walks under two rules
(every walk is a pure function of seed, index and config): where both sides hold the
same (seed, walk) pairs, the bootstrap resamples the pairs, which cancels the noise
the two sides share; otherwise it resamples each side on its own. A statistic
*differs* when the interval of B - A leaves out 0.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kraftwalk.errors import UsageError

# The cell of a walk: what elect's rows say about its configuration.
AXES = ("kafka", "voters", "observers", "pre_vote", "scenario", "profile", "mutation")
# How ``--by`` names an axis.
BY_NAMES = {"kafka": "kafka", "voters": "voters", "observers": "observers",
            "pre-vote": "pre_vote", "scenario": "scenario", "profile": "profile",
            "mutation": "mutation"}
RESAMPLES = 1000
LEVEL = 0.95
BOOTSTRAP_SEED = 20261207  # the intervals are part of the output: they must not move


@dataclass(frozen=True)
class Metric:
    column: str
    name: str
    kind: str  # "mean", "p50", "p99" of the measured values; "share": of walks with > 0
    unit: str


METRICS = (
    Metric("elect_us", "time to elect, mean", "mean", "ms"),
    Metric("elect_us", "time to elect, p50", "p50", "ms"),
    Metric("elect_us", "time to elect, p99", "p99", "ms"),
    Metric("unavailable_us", "downtime, mean", "mean", "ms"),
    Metric("split_vote", "split votes", "share", "% of walks"),
    Metric("election_epochs", "epochs per election", "mean", ""),
    Metric("disruptive_elections", "walks with a disruptive election", "share", "% of walks"),
    Metric("disruptive_elections", "disruptive elections per walk", "mean", ""),
    Metric("lost_elections", "lost elections per walk", "mean", ""),
    Metric("failed_pre_votes", "failed pre-votes per walk", "mean", ""),
    Metric("leader_losses", "leader losses per walk", "mean", ""),
    Metric("caught_up_us", "time to catch up, mean", "mean", "ms"),
    Metric("caught_up_us", "time to catch up, p99", "p99", "ms"),
    Metric("violation", "walks with a liveness or safety violation", "share", "% of walks"),
)
COLUMNS = sorted({m.column for m in METRICS})


def read_walks(folder: str | Path) -> pd.DataFrame:
    """An elect folder's walk rows (elect with ``--walk-stats rows``, its default); the
    caller has checked that it is one."""
    from kraftwalk.storage import elect_folder as ef
    from kraftwalk.storage.rundir import HISTOGRAM, WALKS

    folder = Path(folder)
    cfg = ef.config_of(folder)
    if not ef.has_cells(folder, WALKS, cfg):
        hint = (f" (it has {HISTOGRAM}/: walks paired one by one need elect's "
                "--walk-stats rows)" if ef.has_cells(folder, HISTOGRAM, cfg) else "")
        raise UsageError(f"{folder} has no walk rows in {WALKS}/{hint}")
    t = ef.read_cells(folder, WALKS, [*AXES, "seed", "walk", *COLUMNS], cfg)
    df = t.to_pandas()
    for a in AXES:
        df[a] = df[a].astype(str) if a != "pre_vote" else df[a].map({True: "on", False: "off"})
    df["violation"] = df["violation"].notna()
    return df


def _values(df: pd.DataFrame, m: Metric) -> np.ndarray:
    x = df[m.column].to_numpy(dtype=np.float64, na_value=np.nan)
    if m.kind == "share":
        return (np.nan_to_num(x) > 0).astype(np.float64)
    return x / 1000.0 if m.column.endswith("_us") else x


def _stat(x: np.ndarray, kind: str) -> np.ndarray:
    """The metric of each row of ``x`` (walks along the last axis; NaN: not measured)."""
    import warnings

    with warnings.catch_warnings():  # a resample that measured nothing is NaN, not noise
        warnings.simplefilter("ignore", RuntimeWarning)
        if kind == "share":
            return 100.0 * np.nanmean(x, axis=-1)
        if kind == "mean":
            return np.nanmean(x, axis=-1)
        return np.nanquantile(x, {"p50": 0.5, "p99": 0.99}[kind], axis=-1)


def difference(a: np.ndarray, b: np.ndarray, kind: str, paired: bool,
               rng: np.random.Generator) -> tuple[float, ...]:
    """(A, B, B - A, low, high, change low, change high): the metric on each side, the
    bootstrap interval of the difference, and of the difference in % of A (each
    resample's own A: a change never below -100%)."""
    sa, sb = float(_stat(a, kind)), float(_stat(b, kind))
    if paired:
        idx = rng.integers(0, len(a), size=(RESAMPLES, len(a)))
        ia = ib = idx
    else:
        ia = rng.integers(0, len(a), size=(RESAMPLES, len(a)))
        ib = rng.integers(0, len(b), size=(RESAMPLES, len(b)))
    ra = _stat(a[ia], kind)
    d = _stat(b[ib], kind) - ra
    tail = (1 - LEVEL) / 2

    def interval(x):
        x = x[np.isfinite(x)]
        return tuple(float(q) for q in np.quantile(x, [tail, 1 - tail])) if len(x) else (
            np.nan, np.nan)

    with np.errstate(divide="ignore", invalid="ignore"):
        rel = 100.0 * d / np.abs(ra)
    return (sa, sb, sb - sa, *interval(d), *interval(rel))


def _pairs(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, bool]:
    """The two cells' walks, in one order of (seed, walk) when both hold the same ones."""
    ka = a.set_index(["seed", "walk"]).sort_index()
    kb = b.set_index(["seed", "walk"]).sort_index()
    if len(ka) == len(kb) and ka.index.equals(kb.index):
        return ka, kb, True
    return ka, kb, False


def compare_cells(pairs: list[tuple[str, pd.DataFrame, pd.DataFrame]]) -> pd.DataFrame:
    """One row per (cell, metric): both sides, the difference and its interval."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    out = []
    for cell, a, b in pairs:
        a, b, paired = _pairs(a, b)
        for m in METRICS:
            va, vb = _values(a, m), _values(b, m)
            if np.isnan(va).all() or np.isnan(vb).all():
                continue  # never measured in this scenario
            sa, sb, d, low, high, rlow, rhigh = difference(va, vb, m.kind, paired, rng)
            out.append({
                "cell": cell, "statistic": m.name, "unit": m.unit, "a": sa, "b": sb,
                "difference": d, "ci_low": low, "ci_high": high,
                "change_pct": 100.0 * d / abs(sa) if sa else np.nan,
                "change_low_pct": rlow, "change_high_pct": rhigh,
                "differs": bool(low > 0 or high < 0), "paired": paired,
                "walks_a": len(a), "walks_b": len(b)})
    return pd.DataFrame(out)


def cell_pairs(a: pd.DataFrame, b: pd.DataFrame | None, by: str | None,
               baseline: str | None) -> tuple[list, str, str]:
    """The cells to compare: (label, A walks, B walks) each, and what A and B are.

    With one folder, ``by`` (an axis) splits it: ``baseline``'s value (else the first)
    against each other value, in cells alike on every other axis. With two, A is the
    first folder, matched to the second on the axes whose values they share."""
    if b is None:
        if by is None:
            varied = [BY for BY, col in BY_NAMES.items() if a[col].nunique() > 1]
            raise UsageError("give --by to compare the values of one setting of this folder"
                             + (f": it varies {', '.join(varied)}" if varied else
                                ", or a second elect folder: this one has a single cell"))
        col = BY_NAMES[by]
        values = list(dict.fromkeys(a[col]))
        if len(values) < 2:
            raise UsageError(f"--by {by}: the folder has one value of it ({values[0]}); "
                             "nothing to compare")
        base = values[0] if baseline is None else baseline
        if base not in values:
            raise UsageError(f"--baseline {baseline} is not a {by} value of the folder; "
                             f"it has {', '.join(values)}")
        rest = [c for c in AXES if c != col]
        pairs = []
        for other in (v for v in values if v != base):
            pairs += _matched(a[a[col] == base], a[a[col] == other], rest,
                              f"{by} {base} -> {other}")
        return pairs, f"{by} {base}", f"{by} {', '.join(v for v in values if v != base)}"
    if by is not None or baseline is not None:
        raise UsageError("--by and --baseline split one folder; with two folders the first "
                         "is A, the second B")
    # A setting the two folders share no value of is what changed; on the others, cells
    # with the same values are the same cell.
    changed = [c for c in AXES if not set(a[c]) & set(b[c])]
    label = "; ".join(f"{c} {'/'.join(dict.fromkeys(a[c]))} -> {'/'.join(dict.fromkeys(b[c]))}"
                      for c in changed)
    keys = [c for c in AXES if c not in changed]
    return _matched(a, b, keys, label), "", ""


def _matched(a: pd.DataFrame, b: pd.DataFrame, keys: list[str], label: str) -> list:
    """The cells both sides have (alike on ``keys``), labelled by what tells them apart."""
    ga = dict(tuple(a.groupby(keys, observed=True))) if keys else {(): a}
    gb = dict(tuple(b.groupby(keys, observed=True))) if keys else {(): b}
    common = [k for k in ga if k in gb]
    if not common:
        raise UsageError("the two sides share no cell (the same cluster size, pre-vote, "
                         "scenario, ...): nothing to compare walk for walk")
    shown = [n for n in keys if n in ("kafka", "scenario", "voters", "pre_vote")
             or a[n].nunique() > 1
             or b[n].nunique() > 1]
    pairs = []
    for k in common:
        where = dict(zip(keys, k))
        cell = ", ".join(f"{n.replace('_', '-')} {where[n]}" for n in shown)
        pairs.append((f"{label}: {cell}" if label else cell, ga[k], gb[k]))
    return pairs
