"""Swarm tuning study: which centre weights find the deep bugs in the fewest steps?

For each candidate weight vector (the centre of the swarm's per-walk draws) and
each master seed, run walks in order until the first violation of a hunt target
and record the checked steps it took: a machine-independent measure of search
power. The deep target is commit-old-epoch (Raft Figure 8) with the two checks
that catch the premature HW directly (CommitCurrentEpoch, HighWatermarkMonotonic)
turned off, so only real data loss (LeaderCompleteness, StateMachineSafety, ...)
counts.

    python experiments/tune_swarm.py [--seeds 5] [--budget-steps 100000000]

writes results/swarm_tuning.md and results/swarm_tuning.parquet.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from kraftwalk.kernels.properties.checkers import (
    ALL_CHECKS, COMMIT_CURRENT_EPOCH, HIGH_WATERMARK_MONOTONIC, INVARIANT_NAMES,
)
from kraftwalk.kernels.features import (
    MUT_COMMIT_OLD_EPOCH, MUT_DOUBLE_VOTE, MUT_RESTARTED_LEADER, PRE_VOTE,
)
from kraftwalk.kernels.state.layout import make_params
from kraftwalk.kernels.choosers.swarm import DEFAULT_WEIGHTS
from kraftwalk.kernels.transition import FAMILY_NAMES
from kraftwalk.kernels.drivers.walk import run_chunk
from kraftwalk.storage.provenance import made_by
from kraftwalk.vocabulary.releases import DEFAULT as KAFKA

DEEP = ALL_CHECKS & ~(1 << COMMIT_CURRENT_EPOCH) & ~(1 << HIGH_WATERMARK_MONOTONIC)
TARGETS = {
    "commit-old-epoch (deep)": PRE_VOTE | DEEP | MUT_COMMIT_OLD_EPOCH,
    "double-vote": PRE_VOTE | ALL_CHECKS | MUT_DOUBLE_VOTE,
    "restarted-leader-keeps-leading": PRE_VOTE | ALL_CHECKS | MUT_RESTARTED_LEADER,
}


def weights(**changes) -> np.ndarray:
    w = DEFAULT_WEIGHTS.copy()
    for name, x in changes.items():
        w[FAMILY_NAMES.index(name)] = x
    return w


CANDIDATES = {
    "default": DEFAULT_WEIGHTS,
    "calm elections": weights(timeout=0.3, check_quorum=0.1),
    "more appends": weights(client_append=6.0, flush=4.0),
    "more faults": weights(crash=0.6, restart=2.0, partition=1.0, lose=1.5),
    "more sends (the first default)": weights(send=8.0),
    "fewer sends still": weights(send=2.0),
    "uniform": np.ones_like(DEFAULT_WEIGHTS),
}


def steps_to_first(params, base, features, seed, budget_steps, chunk=512):
    first = steps = 0
    while steps < budget_steps:
        stats, viol, _ = run_chunk(seed, first, chunk, params, base, True, features)
        bad = np.nonzero(viol[:, 0])[0]
        if len(bad):
            r = int(bad[0])
            return True, steps + int(stats[:r, 0].sum()) + int(viol[r, 1]), \
                INVARIANT_NAMES[viol[r, 0] - 1]
        steps += int(stats[:, 0].sum())
        first += chunk
    return False, steps, None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budget-steps", type=int, default=100_000_000)
    ap.add_argument("--out", type=Path, default=Path("results"))
    args = ap.parse_args()
    params = make_params(3, 1, 32, 16, 60, 4, 500)
    rows = []
    for cand, base in CANDIDATES.items():
        for target, features in TARGETS.items():
            for seed in range(args.seeds):
                t = time.perf_counter()
                found, steps, inv = steps_to_first(params, base, features, seed, args.budget_steps)
                rows.append({"candidate": cand, "target": target, "seed": seed, "found": found,
                             "steps": steps, "invariant": inv,
                             "seconds": time.perf_counter() - t})
                print(f"{cand:16} {target:32} seed {seed}: "
                      f"{'found ' + inv if found else 'not found'} after {steps:,} steps", flush=True)
    lines = ["| centre weights | target | found | median steps to first violation | caught by |",
             "|---|---|---|---|---|"]
    for cand in CANDIDATES:
        for target in TARGETS:
            rs = [r for r in rows if r["candidate"] == cand and r["target"] == target]
            ok = [r for r in rs if r["found"]]
            med = statistics.median(r["steps"] for r in ok) if len(ok) == len(rs) else None
            lines.append(f"| {cand} | {target} | {len(ok)}/{len(rs)} | "
                         f"{'-' if med is None else f'{med:,.0f}'} | "
                         f"{', '.join(sorted({r['invariant'] for r in ok})) or '-'} |")
    lines.append(f"\nKafka {KAFKA}; steps budget per hunt: {args.budget_steps:,}; {args.seeds} seeds; swarm "
                 "draws around each centre. Changes from default: "
                 + "; ".join(f"{c}: " + ", ".join(f"{FAMILY_NAMES[i]} {x:g}" for i, x in enumerate(w)
                                                  if x != DEFAULT_WEIGHTS[i])
                             for c, w in CANDIDATES.items() if c != "default")
                 + f". Made by {made_by()}.")
    args.out.mkdir(exist_ok=True)
    (args.out / "swarm_tuning.md").write_text("\n".join(lines) + "\n")
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), args.out / "swarm_tuning.parquet")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
