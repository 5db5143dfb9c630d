"""How short do counterexamples get? For each known-bug mutation, find the first few
violating walks of a swarm run, shrink each, and report the lengths before and after.

    python experiments/shrink_lengths.py [--walks-per-mutation 3]

writes results/shrink.md.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from kraftwalk.config import RunConfig
from kraftwalk.kernels.properties.checkers import INVARIANT_NAMES
from kraftwalk.kernels.drivers.walk import run_chunk
from kraftwalk.counterexamples.replay import record, shrink_trace
from kraftwalk.kernel_inputs import features_for, params_for, walk_weights
from kraftwalk.storage.provenance import made_by
from kraftwalk.vocabulary.releases import DEFAULT as KAFKA

CASES = {
    "double-vote": {},
    "restarted-leader-keeps-leading": {},
    "commit-old-epoch": {},
    "commit-old-epoch (deep: data loss)": {
        "disabled_checks": ("CommitCurrentEpoch", "HighWatermarkMonotonic")},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--walks-per-mutation", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("results"))
    args = ap.parse_args()
    lines = ["| mutation | invariant | walk | steps before | steps after | seconds |",
             "|---|---|---|---|---|---|"]
    after_all = []
    for case, extra in CASES.items():
        cfg = RunConfig(mutation=case.split(" ")[0], **extra)
        params, features = params_for(cfg), features_for(cfg)
        found, first = [], 0
        while len(found) < args.walks_per_mutation:
            _, viol, _ = run_chunk(cfg.seed, first, 4096, params, *walk_weights(cfg), features)
            found += [first + int(r) for r in np.nonzero(viol[:, 0])[0]]
            first += 4096
        for walk in found[:args.walks_per_mutation]:
            t = time.perf_counter()
            trace = record(cfg, walk)
            small = shrink_trace(trace)
            after_all.append(len(small.actions))
            lines.append(f"| {case} | {INVARIANT_NAMES[trace.invariant - 1]} | {walk} | "
                         f"{len(trace.actions)} | {len(small.actions)} | "
                         f"{time.perf_counter() - t:.1f} |")
            print(lines[-1], flush=True)
    lines.append(f"\nMedian shrunk length: {statistics.median(after_all):.0f} actions "
                 f"(longest {max(after_all)}). Seed 0, default config (Kafka {KAFKA}). Made by {made_by()}.")
    args.out.mkdir(exist_ok=True)
    (args.out / "shrink.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
