"""Nanoseconds per phase of a step (masks, draw, checks, step) for this checkout.

The benchmark's breakdown (kernels/drivers/profile.py) on its own, three times over, so two
checkouts can be compared phase by phase one after the other:

    python experiments/phase_costs.py [--repeats 3] [--n 2000000]
"""
from __future__ import annotations

import argparse

from kraftwalk.config import RunConfig
from kraftwalk.kernels.drivers.profile import phase_costs
from kraftwalk.kernels.drivers.trace import new_walk
from kraftwalk.kernel_inputs import features_for, params_for, walk_weights


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=2_000_000, help="iterations per phase")
    args = ap.parse_args()
    base = RunConfig()
    params = params_for(base)
    bw = walk_weights(base)[0]
    runs = [phase_costs(new_walk(params, base_weights=bw), bw, features_for(base), n=args.n)
            for _ in range(args.repeats)]
    for name in runs[0]:
        print(f"{name:40s} " + "  ".join(f"{r[name]:7.1f}" for r in runs) + "  ns")


if __name__ == "__main__":
    main()
