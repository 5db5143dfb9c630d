"""Pre-vote and disruptions: how often is a working leader deposed by a vote request
of a higher epoch (a node that timed out, often behind a partition, coming back)?

Runs the same walks with pre-vote on (Kafka 4.0's default) and off and compares the
per-walk statistics of each run's walks dataset.

    python experiments/disruptions.py [--walks 100000]

writes results/disruptions.md.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from kraftwalk.storage import rundir
from kraftwalk.config import RunConfig
from kraftwalk.run.runner import run_swarm
from kraftwalk.storage.provenance import made_by
from kraftwalk.vocabulary.releases import DEFAULT as KAFKA

STATS = ("disruptions", "elections", "leader_changes", "committed", "max_epoch")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--walks", type=int, default=100_000)
    ap.add_argument("--voters", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("results"))
    args = ap.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for pre_vote in (True, False):
            out = Path(tmp) / f"pv{int(pre_vote)}"
            res = run_swarm(RunConfig(walks=args.walks, voters=args.voters, pre_vote=pre_vote,
                                      out=str(out)))
            t = rundir.read_dataset(out, rundir.WALKS, columns=list(STATS) + ["steps"]).to_pandas()
            per_m = 1e6 / t["steps"].sum()
            rows[pre_vote] = {s: t[s].sum() * per_m for s in STATS}
            rows[pre_vote]["walks with a disruption"] = (t["disruptions"] > 0).mean()
            rows[pre_vote]["violations"] = res["violations"]
    lines = [f"{args.walks:,} swarm walks each, Kafka {KAFKA}, {args.voters} voters + 1 observer, seed 0; "
             f"counts per million checked steps. Made by {made_by()}.", "",
             "| | pre-vote on | pre-vote off |", "|---|---|---|"]
    for key in rows[True]:
        a, b = rows[True][key], rows[False][key]
        fmt = (lambda x: f"{x:.1%}") if key == "walks with a disruption" else (lambda x: f"{x:,.0f}")
        lines.append(f"| {key} | {fmt(a)} | {fmt(b)} |")
    args.out.mkdir(exist_ok=True)
    (args.out / "disruptions.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
