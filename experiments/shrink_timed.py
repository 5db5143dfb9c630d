"""How far do liveness counterexamples shrink? Find the first violating timed walks of
the random-faults scenario under the no-check-quorum bug (3 voters + 1 observer,
pre-vote on, Kafka's timing; then again with 1% of messages lost), shrink each
(``kraftwalk shrink`` on an elect folder does the same) and report the random faults
and steps before and after. (The other liveness mutation, no-fetch-timer-reset,
breaks HealthyLeaderKept before any fault: it has no fault to drop.)

    python experiments/shrink_timed.py [--walks-per-case 3] [--seed 0]

writes results/shrink-timed.md.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from kraftwalk.run.elect import property_names
from kraftwalk.kernel_inputs import timed_features, timed_params, timing_params
from kraftwalk.elect_config import ElectConfig
from kraftwalk.kernels.drivers.timed import run_timed_chunk
from kraftwalk.storage.output import markdown_table, write_text_atomic
from kraftwalk.counterexamples.timed_replay import shrink_timed_trace, timed_trace, untimed_config
from kraftwalk.counterexamples.timed_shrink import TimedWalk
from kraftwalk.storage.provenance import made_by
from kraftwalk.vocabulary.releases import DEFAULT as KAFKA

VOTERS = 3
MUTATION = "no-check-quorum"
CASES = {"random-faults": {}, "random-faults, 1% loss": {"loss": 0.01}}


def violating_walks(ecfg: ElectConfig, params, tp, features, wanted: int) -> list[int]:
    found, first = [], 0
    while len(found) < wanted and first < 100_000:
        _, viol, _, _ = run_timed_chunk(ecfg.seed, first, 256, params, tp, features)
        found += [first + int(k) for k in np.nonzero(viol[:, 0])[0]]
        first += 256
    return found[:wanted]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--walks-per-case", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("results"))
    args = ap.parse_args()
    rows = []
    for case, timing in CASES.items():
        ecfg = ElectConfig(voters=(VOTERS,), observers=0, pre_vote=(True,), scenario="random-faults",
                           mutation=MUTATION, seed=args.seed, timing=timing)
        params = timed_params(VOTERS, ecfg.observers, ecfg.depth)
        tp, features = timing_params(ecfg), timed_features(True, MUTATION)
        for walk in violating_walks(ecfg, params, tp, features, args.walks_per_case):
            t = time.perf_counter()
            tw = TimedWalk(ecfg.seed, walk, params, tp, features)
            trace, faults = timed_trace(tw, untimed_config(ecfg, VOTERS, True), "random-faults")
            small = shrink_timed_trace(trace)
            rows.append({
                "scenario": case, "property": property_names()[trace.invariant - 1],
                "walk": walk, "faults before": len(faults), "faults after": small.faults_kept[0],
                "steps before": len(trace.actions), "steps after": len(small.actions),
                "seconds": f"{time.perf_counter() - t:.2f}"})
            print(rows[-1], flush=True)
    text = (markdown_table(list(rows[0]), [r.values() for r in rows])
            + "\nRandom faults: crashes, partitions, loss bursts and lost messages. Mutation "
            f"{MUTATION}, seed {args.seed}, Kafka {KAFKA}, {VOTERS} voters + 1 observer, pre-vote "
            "on, Kafka's timing; the first row's seconds include compiling the kernels; "
            f"`python experiments/shrink_timed.py`. Made by {made_by()}.\n")
    args.out.mkdir(exist_ok=True)
    write_text_atomic(args.out / "shrink-timed.md", text)


if __name__ == "__main__":
    main()
