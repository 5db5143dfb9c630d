"""Plots: a run's per-walk statistics, and the hunt's time to first violation."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.ticker  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from kraftwalk.sweep_spec import value_text  # noqa: E402

RUN_STATS = ("elections", "leader_changes", "committed", "max_epoch", "crashes", "msgs_lost")


def _save(fig, path: Path) -> Path:
    from kraftwalk.storage.output import write_bytes_atomic
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    write_bytes_atomic(path, buf.getvalue())
    return path


def plot_run(run_dir: str | Path, path: str | Path | None = None) -> Path:
    """Histograms of the main per-walk statistics of a run (its walks or
    walks_histogram dataset)."""
    from kraftwalk.storage import rundir

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
        ax.set_yscale("log")  # a linear axis hid the tails, where the rare walks are
        ax.set_title(s.replace("_", " "))
        ax.set_xlabel("per walk")
        ax.set_ylabel("share of walks (log scale)")
    fig.suptitle(f"{run.name}: {total:,} walks")
    fig.tight_layout()
    return _save(fig, path)


def hunted_pairs(rows: list[dict]) -> dict[str, list[str]]:
    """Mutation -> the modes it was hunted in, in order: a plot row each. A liveness
    mutation has only its timed mode, so the full cross product of mutations and modes
    would be mostly empty rows."""
    modes = list(dict.fromkeys(r["weights"] for r in rows))
    return {m: [mode for mode in modes
                if any(r["mutation"] == m and r["weights"] == mode for r in rows)]
            for m in dict.fromkeys(r["mutation"] for r in rows)}


def plot_hunt(rows: list[dict], path: str | Path, budget: float) -> Path:
    """Seconds to the first violation per mutation and weights mode, one dot per seed
    (log scale; hunts that found nothing sit at the budget, hollow)."""
    mutations = list(dict.fromkeys(r["mutation"] for r in rows))
    modes = list(dict.fromkeys(r["weights"] for r in rows))
    pairs = hunted_pairs(rows)
    n = sum(len(v) for v in pairs.values())
    fig, ax = plt.subplots(figsize=(8, 0.9 + 0.35 * n + 0.2 * len(mutations)))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    y = 0
    ticks, labels = [], []
    for m in mutations:
        for mode in pairs[m]:
            j = modes.index(mode)
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


def plot_coverage(share: dict[str, dict[str, float]], path: str | Path) -> Path:
    """Share of walks reaching each target: bars for one run, a heatmap (cells x
    targets) for a sweep's cells."""
    labels = list(share)
    targets = list(next(iter(share.values())))
    if len(labels) == 1:
        vals = [share[labels[0]][t] for t in targets]
        fig, ax = plt.subplots(figsize=(8, 0.35 * len(targets) + 1))
        ax.barh(targets, [max(v, 1e-7) for v in vals], color="#3b6ea5")
        ax.set_xscale("log")
        ax.set_xlabel("share of walks that reached the target (log scale)")
        ax.invert_yaxis()
        for y, v in enumerate(vals):
            ax.text(max(v, 1e-7), y, f" {v:.2%}" if v else " never", va="center", fontsize=8)
    else:
        grid = np.array([[share[c][t] for t in targets] for c in labels])
        # sized by the grid: a row per cell of readable height, room for the rotated names
        fig, ax = plt.subplots(figsize=(2.5 + 0.5 * len(targets), 2.8 + 0.4 * len(labels)))
        shown = np.log10(np.maximum(grid, 1e-6))
        im = ax.imshow(shown, aspect="auto", cmap="viridis", vmin=-6, vmax=0)
        ax.set_xticks(range(len(targets)), targets, rotation=45, ha="right", fontsize=8)
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
        for i, j in zip(*np.nonzero(grid == 0)):
            ax.text(j, i, "×", ha="center", va="center", color="white", fontsize=8)
        bar = fig.colorbar(im, ax=ax)
        bar.set_label("share of walks reaching it (log10; × never)")
    fig.tight_layout()
    return _save(fig, Path(path))


# Panel titles of an elect sweep's summary columns
CELL_STAT_TITLES = {"elect_p50_ms": "time to elect, p50", "elect_p99_ms": "time to elect, p99",
                    "elect_p99_9_ms": "time to elect, p99.9",
                    "split_vote_pct": "split votes (% of walks)",
                    "downtime_p99_ms": "downtime, p99 (ms)"}


def plot_per_cell(rows: list[dict], grid: dict[str, list], x: str | None,
                  stats: tuple[str, ...], path: str | Path, ylabel: str,
                  log: bool = False) -> Path:
    """One panel per statistic of a sweep's summary rows: against setting ``x`` with a
    line per combination of the other settings, or as bars per cell when no setting is
    numeric. ``log``: a log-scaled y axis (tails, where a p99.9 is ten times a p50)."""
    fig, axes = plt.subplots(1, len(stats), figsize=(4.2 * len(stats) + 1.5, 3.6), squeeze=False)
    others = [k for k in grid if k != x]
    for ax, stat in zip(axes[0], stats):
        if x is None:
            ax.bar(range(len(rows)), [r[stat] for r in rows], color="#3b6ea5")
            ax.set_xticks(range(len(rows)), [r["partition"] for r in rows], rotation=60,
                          ha="right", fontsize=7)
        else:
            combos = list(dict.fromkeys(tuple(r[k] for k in others) for r in rows))
            for combo in combos:
                pts = sorted((r[x], r[stat]) for r in rows
                             if tuple(r[k] for k in others) == combo)
                label = ", ".join(f"{k}={value_text(v)}"
                                  for k, v in zip(others, combo)) or None
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, label=label)
            ax.set_xticks(sorted({r[x] for r in rows}))  # the grid's values, not 3.25
            ax.set_xlabel(x)
            if 0 < len(combos) <= 12 and others:
                ax.legend(fontsize=7)
        if log:
            ax.set_yscale("log")
            plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(plain)
            ax.tick_params(axis="y", which="minor", labelsize=7)
        else:
            ax.set_ylim(bottom=0)  # from 0: a 10% difference must not look like a cliff
        ax.set_title(CELL_STAT_TITLES.get(stat, stat.replace("mean_", "").replace("_", " ")))
        ax.set_ylabel(ylabel)
    fig.tight_layout()
    return _save(fig, Path(path))


def plot_elect_sweep(rows: list[dict], x: str | None, lines: list[str],
                     stats: tuple[str, ...], path: str | Path, ylabel: str,
                     log: bool = False) -> Path:
    """An elect sweep's summary rows: a row of panels per statistic, a column per
    cluster size, each statistic against setting ``x`` (cells in order without one)
    with a line per combination of the settings ``lines``, coloured along a sequential
    map so neighbouring values look alike; one legend."""
    from kraftwalk.sweep_spec import value_text

    sizes = sorted({r["voters"] for r in rows})
    combos = list(dict.fromkeys(tuple(r[k] for k in lines) for r in rows))
    colors = plt.get_cmap("viridis")
    fig, axes = plt.subplots(len(stats), len(sizes), squeeze=False, sharex=True,
                             sharey="row", figsize=(3.4 * len(sizes) + 2.2, 2.8 * len(stats)))
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    for row, stat in enumerate(stats):
        for col, size in enumerate(sizes):
            ax = axes[row][col]
            for k, combo in enumerate(combos):
                pts = [r for r in rows if r["voters"] == size
                       and tuple(r[key] for key in lines) == combo and r[stat] is not None]
                xs = [r[x] for r in pts] if x else list(range(len(pts)))
                label = ", ".join(f"{key}={value_text(v)}" for key, v in zip(lines, combo))
                ax.plot(xs, [r[stat] for r in pts], "o-", ms=3, label=label or None,
                        color=colors(0.9 * k / max(len(combos) - 1, 1)))
            if log:
                ax.set_yscale("log")
                ax.yaxis.set_major_formatter(plain)
                ax.yaxis.set_minor_formatter(plain)
                ax.tick_params(axis="y", which="minor", labelsize=7)
            if x:
                ax.set_xscale("log")  # timing settings come in doublings
                ax.xaxis.set_major_formatter(plain)
                ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
                ax.set_xticks(sorted({r[x] for r in rows}))
            ax.grid(True, which="both", alpha=0.3)
            if row == 0:
                ax.set_title(f"{size} voters", fontsize=10)
            if row == len(stats) - 1:
                ax.set_xlabel(x or "cell")
            if col == 0:
                ax.set_ylabel(CELL_STAT_TITLES.get(stat, stat) + (f"\n{ylabel}" if ylabel else ""),
                              fontsize=9)
        if not log:  # from 0, once the row's panels are drawn (they share the axis): a
            # 10% difference must not look like a cliff
            axes[row][0].set_ylim(0, max(a.dataLim.y1 for a in axes[row]) * 1.05)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if labels:
        fig.legend(handles, labels, loc="center right", fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0, 1 - 2.0 / fig.get_figwidth(), 1))
    else:
        fig.tight_layout()
    return _save(fig, Path(path))


def plot_election_cdf(cells, path: str | Path, title: str) -> Path:
    """CDF of the time to elect; ``cells``: (release, voters, pre_vote, values in ms,
    walks per value, walks). One release: a line per cluster size (solid: pre-vote
    off, dashed: on). Several: a panel per cluster size, a line per release, side by
    side on the same axes."""
    releases = list(dict.fromkeys(c[0] for c in cells))
    sizes = sorted({c[1] for c in cells})
    several = len(releases) > 1
    panels = sizes if several else [None]
    fig, axes = plt.subplots(1, len(panels), figsize=(8 if not several else 4.2 * len(panels), 5),
                             sharey=True, squeeze=False)
    colors = plt.get_cmap("viridis")
    plain = matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}")
    for ax, size in zip(axes[0], panels):
        for k, v, p, vals, cnt, walks in cells:
            if several and v != size:
                continue
            y = np.cumsum(cnt) / max(walks, 1)  # unmeasured walks keep the curve below 1
            if several:
                i, n = releases.index(k), len(releases)
                label = f"Kafka {k}" + (f", pre-vote {'on' if p else 'off'}"
                                        if len({c[2] for c in cells if c[0] == k}) > 1 else "")
            else:
                i, n = sizes.index(v), len(sizes)
                label = f"{v} voters, pre-vote {'on' if p else 'off'}"
            ax.step(vals, y, where="post", color=colors(0.9 * i / max(n - 1, 1)),
                    linestyle="--" if p else "-", label=label)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(plain)
        ax.xaxis.set_minor_formatter(plain)
        ax.tick_params(axis="x", which="minor", labelsize=7)
        ax.set_xlabel("time to elect a new leader (ms, log scale)")
        ax.set_ylim(0, 1.01)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        if several:
            ax.set_title(f"{size} voters", fontsize=10)
    axes[0][0].set_ylabel("share of walks")
    fig.suptitle(title) if several else axes[0][0].set_title(title)
    fig.tight_layout()
    return _save(fig, Path(path))


# An elect folder's per-walk statistics: (column, title); a *_us column is a time
ELECT_STATS = (("elect_us", "time to elect (ms)"), ("unavailable_us", "downtime (ms)"),
               ("election_epochs", "epochs to elect"), ("failed_pre_votes", "failed pre-votes"),
               ("lost_elections", "lost elections"),
               ("disruptive_elections", "disruptive elections"))


def _elect_counts(folder: Path) -> dict[tuple, dict[str, tuple[np.ndarray, np.ndarray, int]]]:
    """Per cell (release, voters, pre-vote): each ELECT_STATS column's values (ms for
    times, rounded down as elect's histogram has them), how many walks had each, and
    the cell's walks; from the walks/ rows, else the walks_histogram/ counts."""
    from kraftwalk.errors import UsageError
    from kraftwalk.storage import elect_folder as ef
    from kraftwalk.storage.elect_stats import US_PER_MS, is_time
    from kraftwalk.storage.rundir import HISTOGRAM, WALKS

    cells: dict[tuple, dict] = {}
    names = [s for s, _ in ELECT_STATS]
    cfg = ef.config_of(folder)
    if ef.has_cells(folder, WALKS, cfg):
        t = ef.read_cells(folder, WALKS, ["kafka", "voters", "pre_vote", *names], cfg).to_pandas()
        for key, g in t.groupby(["kafka", "voters", "pre_vote"], observed=True, sort=False):
            cells[key] = {}
            for s in names:
                v = g[s].dropna().to_numpy()  # null: not measured in that walk
                vals, cnt = np.unique(v // US_PER_MS if is_time(s) else v, return_counts=True)
                cells[key][s] = (vals, cnt, len(g))
        return cells
    if not ef.has_cells(folder, HISTOGRAM, cfg):
        raise UsageError(f"{folder} has no saved {WALKS}/ or {HISTOGRAM}/ parts")
    for cell in cfg.cells():
        h = ef.cell_histogram(folder, cell, True)
        if h.walks:  # its times are in ms already; a walk that never measured one has no value
            cells[cell] = {s: (*h.values(s), h.walks) for s in names}
    return cells


def plot_elect_walks(folder: str | Path, path: str | Path | None = None) -> Path:
    """Distributions of an elect folder's per-walk statistics, a line per release,
    cluster size and pre-vote setting, on log-scale shares (the tails are where the
    slow elections are): for times the share of walks slower than each time (log axes;
    a per-millisecond histogram is noise), for counts the share with each count."""
    from kraftwalk.storage.elect_stats import is_time

    folder = Path(folder)
    path = Path(path) if path else folder / "walks.png"
    cells = _elect_counts(folder)
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    colors = plt.get_cmap("viridis")
    for ax, (s, title) in zip(axes.flat, ELECT_STATS):
        timed = is_time(s)
        for n, ((k, v, p), stats) in enumerate(cells.items()):
            vals, cnt, walks = stats[s]
            if len(vals) == 0:
                continue
            style = dict(linestyle="--" if p else "-",
                         color=colors(0.9 * n / max(len(cells) - 1, 1)),
                         label=f"Kafka {k}, {v} voters, pre-vote {'on' if p else 'off'}")
            if timed:  # walks never measured (no election) count as slower than all
                slower = 1 - np.cumsum(cnt) / max(walks, 1)
                ax.step(vals, np.maximum(slower, 0.5 / max(walks, 1)), where="post", **style)
            else:  # points: a count no walk had is a gap, not a step
                ax.plot(vals, cnt / max(walks, 1), marker="o", ms=3, **style)
        ax.set_yscale("log")
        if timed:
            ax.set_xscale("log")
            ax.set_xlabel("ms (log scale)")
        else:  # counts from 0, whole numbers, room even when every walk had one value
            ax.set_xlim(-0.5, max(ax.get_xlim()[1], 1.5))
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.set_title(title)
        ax.set_ylabel("share of walks slower (log)" if timed else "share of walks (log)")
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 3), fontsize=7)
    fig.suptitle(f"{folder.name}: per-walk statistics of the timed walks")
    # the subplots above the legend's rows, three labels a row
    fig.tight_layout(rect=(0, 0.03 + 0.025 * ((len(labels) + 2) // 3), 1, 1))
    return _save(fig, path)


def plot_compare(table, path: str | Path) -> Path:
    """kraftwalk compare's differences as a forest plot: per cell, each statistic's
    change from A in % with its 95% interval; red where the interval leaves out 0."""
    path = Path(path)
    rows = table[table["a"] != 0]
    cells = list(dict.fromkeys(rows["cell"]))
    stats = list(dict.fromkeys(table["statistic"]))
    fig, axes = plt.subplots(len(cells), 1, figsize=(8, 0.9 + 0.32 * len(stats) * len(cells)),
                             squeeze=False, sharex=True)
    for ax, cell in zip(axes[:, 0], cells):
        part = rows[rows["cell"] == cell]
        y = [stats.index(s) for s in part["statistic"]]
        lo, hi, mid = part["change_low_pct"], part["change_high_pct"], part["change_pct"]
        colors = np.where(part["differs"], "tab:red", "tab:gray")
        ax.hlines(y, lo, hi, colors=colors, linewidth=2)
        ax.scatter(mid, y, c=colors, zorder=3, s=18)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(stats)), stats, fontsize=7)
        ax.set_ylim(len(stats) - 0.5, -0.5)
        ax.set_title(cell, fontsize=8)
        ax.grid(True, axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("B - A, % of A (95% interval; red: differs)")
    fig.tight_layout()
    return _save(fig, path)
