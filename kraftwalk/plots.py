"""Plots: a run's per-walk statistics, and the hunt's time to first violation."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

RUN_STATS = ("elections", "leader_changes", "committed", "max_epoch", "crashes", "msgs_lost")


def _save(fig, path: Path) -> Path:
    from kraftwalk.output import write_bytes_atomic
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    write_bytes_atomic(path, buf.getvalue())
    return path


def plot_run(run_dir: str | Path, path: str | Path | None = None) -> Path:
    """Histograms of the main per-walk statistics of a run (its walks or
    walks_histogram dataset)."""
    from kraftwalk import rundir

    run = Path(run_dir)
    path = Path(path) if path else run / "walks.png"
    counts: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if rundir.has_dataset(run, rundir.WALKS):
        t = rundir.read_dataset(run, rundir.WALKS, columns=list(RUN_STATS))
        for s in RUN_STATS:
            vals, cnt = np.unique(t.column(s).to_numpy(), return_counts=True)
            counts[s] = (vals, cnt)
    else:
        t = rundir.read_dataset(run, rundir.HISTOGRAM).to_pandas()
        t = t.groupby(["stat", "value"], observed=True, as_index=False)["count"].sum()
        for s in RUN_STATS:
            part = t[t["stat"] == s]
            counts[s] = (part["value"].to_numpy(), part["count"].to_numpy())
    fig, axes = plt.subplots(2, 3, figsize=(12, 6))
    total = int(counts[RUN_STATS[0]][1].sum())
    for ax, s in zip(axes.flat, RUN_STATS):
        vals, cnt = counts[s]
        ax.bar(vals, cnt / max(total, 1), width=0.9, color="#3b6ea5")
        ax.set_title(s.replace("_", " "))
        ax.set_xlabel("per walk")
        ax.set_ylabel("share of walks")
    fig.suptitle(f"{run.name}: {total:,} walks")
    fig.tight_layout()
    return _save(fig, path)


def plot_hunt(rows: list[dict], path: str | Path, budget: float) -> Path:
    """Seconds to the first violation per mutation and weights mode, one dot per seed
    (log scale; hunts that found nothing sit at the budget, hollow)."""
    mutations = list(dict.fromkeys(r["mutation"] for r in rows))
    modes = list(dict.fromkeys(r["weights"] for r in rows))
    fig, ax = plt.subplots(figsize=(8, 0.9 + 0.7 * len(mutations) * len(modes)))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    y = 0
    ticks, labels = [], []
    for m in mutations:
        for j, mode in enumerate(modes):
            rs = [r for r in rows if r["mutation"] == m and r["weights"] == mode]
            for r in rs:
                x = max(r["seconds"], 1e-3)
                if r["found"]:
                    ax.plot(x, y, "o", color=colors[j % len(colors)])
                else:
                    ax.plot(budget, y, "o", mfc="none", color=colors[j % len(colors)])
            ticks.append(y)
            labels.append(f"{m} ({mode})")
            y += 1
        y += 0.5
    ax.set_yticks(ticks, labels)
    ax.set_xscale("log")
    ax.axvline(budget, color="grey", ls=":", lw=1)
    ax.set_xlabel("seconds to the first violation (hollow: none within the budget)")
    ax.invert_yaxis()
    fig.tight_layout()
    return _save(fig, Path(path))
