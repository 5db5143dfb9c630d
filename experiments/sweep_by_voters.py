"""A sweep's summary folded by cluster size: one row per voter count, over the other
settings of the grid (for the README; the full per-cell table is summary.md).

    python experiments/sweep_by_voters.py SWEEP_DIR --out results/sweep-safety/by-voters.md
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pyarrow.parquet as pq

from kraftwalk.storage.output import markdown_table
from kraftwalk.storage.provenance import made_by, recorded_made_by


def sweep_made_by(sweep: Path) -> str:
    """What made the sweep's walks, as its sweep.json records it."""
    import json

    versions = json.loads((sweep / "sweep.json").read_text()).get("versions")
    return recorded_made_by(versions) or "not recorded (a sweep from before provenance)"


def reachable_targets(sweep: Path) -> int:
    """How many reachability targets the sweep's cells can reach: those whose features
    (snapshots, voter changes, disk loss) every cell of the sweep, as run, has on."""
    from kraftwalk.sweep_spec import load_sweep
    from kraftwalk.vocabulary.properties import PROPERTIES

    cells = load_sweep(sweep / "sweep.toml").cells()
    return sum(1 for p in PROPERTIES if p.kind == "sometimes" and all(
        all(getattr(c.config, f, False) for c in cells) for f in p.needs if f != "pre_vote"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    df = pq.read_table(args.sweep / "summary.parquet").to_pandas()
    has_pv = "pre_vote" in df.columns and df["pre_vote"].nunique() > 1
    head = ["voters", "cells", "walks", "checked steps", "violations",
            "targets reached (fewest in a cell)", "steps/s per core (median)", "committed / walk",
            "disruptions / walk" + (" (pre-vote on / off)" if has_pv else "")]
    reachable = reachable_targets(args.sweep)
    head[5] = f"targets reached (fewest in a cell, of the {reachable} it can reach)"
    rows = []
    for v, g in df.groupby("voters"):
        if has_pv:
            on, off = g[g["pre_vote"]], g[~g["pre_vote"]]
            committed = f"{on['mean_committed'].mean():.2f} / {off['mean_committed'].mean():.2f}"
            disrupt = f"{on['mean_disruptions'].mean():.3f} / {off['mean_disruptions'].mean():.3f}"
        else:
            committed = f"{g['mean_committed'].mean():.2f}"
            disrupt = f"{g['mean_disruptions'].mean():.3f}"
        rows.append([v, len(g), f"{g['walks'].sum():,}", f"{g['steps'].sum():,}",
                     f"{g['violations'].sum():,}", f"{g['targets_reached'].min()}/{reachable}",
                     f"{g['steps_per_s_per_core'].median():,.0f}", committed, disrupt])
    t = df["walks"].sum(), df["steps"].sum(), df["violations"].sum(), len(df)
    text = markdown_table(head, rows) + (
        f"\n{t[0]:,} walks and {t[1]:,} checked steps in {t[3]} cells (Kafka "
        f"{', '.join(sorted(map(str, df['kafka'].unique())))}), {t[2]:,} violations. "
        "Means per walk are over the cells of each row. Walks made by "
        + sweep_made_by(args.sweep) + "; this table made by " + made_by() + ".\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
