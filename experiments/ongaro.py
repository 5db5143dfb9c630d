"""Validation of the timed mode against Ongaro's dissertation (ch. 9), then KRaft's own
election figures at Kafka's defaults.

    python experiments/ongaro.py [--walks 20000] [--workers 0]

writes results/ongaro-validation.md and results/ongaro-validation.json. Every walk is
a leader crash in a steady cluster (scenario leader-crash); the profile `ongaro`
restarts every follower's timer at the crash, as the leader's last heartbeat would.

1. First timeout among s live servers: E[first - T] = range / (s + 1).
2. Split votes, n = 5, s = 4, a 100 ms timeout range, fixed one-way latency 1, 10,
   20 ms: published 0.06%, 5.2%, 18.1% (sum over k >= c - 1 of C(s,k) l^k (1-l)^(s-k)).
3. The simulated WAN: 5 servers, latency uniform 30-40 ms, timeouts 300-600 ms: elections
   average about 475 ms and 99.9% finish within 1.5 s.
KRaft's own figures at Kafka's defaults are `kraftwalk elect`'s (README).
"""
from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import numpy as np

from kraftwalk.run.elect import cell_walks
from kraftwalk.elect_config import ElectConfig
from kraftwalk.storage.output import markdown_table, write_json_atomic, write_text_atomic
from kraftwalk.storage.provenance import made_by
from kraftwalk.vocabulary.releases import DEFAULT as KAFKA

# Walks end soon after the election: no observation phase, the crashed node back later.
SHORT = {"observe_ms": 0.0, "settle_ms": 100.0, "restart_delay_ms": 3000.0}


def cell(profile: str, voters: int, walks: int, workers: int, pre_vote: bool = False,
         seed: int = 0, **timing) -> tuple:
    # the dissertation's clusters have no observers
    cfg = ElectConfig(voters=(voters,), observers=0, pre_vote=(pre_vote,), profile=profile,
                      walks=walks,
                      seed=seed, timing={**SHORT, **timing}, chunk_walks=500)
    return cfg, cell_walks(cfg, voters, pre_vote, workers)


def col(table, name) -> np.ndarray:
    return table.column(name).drop_null().to_numpy().astype(np.float64)


def binomial_ci(k: int, n: int) -> tuple[float, float]:
    """Wilson 95% interval of a proportion."""
    if n == 0:
        return (math.nan, math.nan)
    z, p = 1.96, k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


def published_split(s: int, n: int, l: float) -> float:
    c = s - n // 2 + 1
    return sum(math.comb(s, k) * l**k * (1 - l) ** (s - k) for k in range(c - 1, s + 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--walks", type=int, default=20000)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("results"))
    args = ap.parse_args()
    workers = args.workers or os.cpu_count() or 1
    walks = args.walks
    started = time.time()
    res: dict = {"walks": walks}
    md = [f"Made by `python experiments/ongaro.py --walks {walks}` ({walks:,} walks per row; "
          f"every walk: a steady cluster whose leader crashes; Kafka {KAFKA}'s switches, the "
          "profile's timing). Intervals are 95% (Wilson for "
          f"proportions, 1.96 standard errors for means); made by {made_by()}.\n"]

    # 1. first timeout: timers in [T, 2T) restarted together at the crash
    md.append("#### 1. First timeout among s live servers\n")
    rows = []
    for n in (3, 5, 9):
        cfg, t = cell("ongaro", n, walks, workers)
        T = cfg.timing_ms()["election_timeout_ms"] * 1000
        x = (col(t, "first_timeout_us") - T) / T
        s = n - 1
        se = x.std(ddof=1) / math.sqrt(len(x))
        rows.append([n, s, f"{1 / (s + 1):.4f}", f"{x.mean():.4f} ± {1.96 * se:.4f}", len(x)])
        res[f"first_timeout_n{n}"] = {"published": 1 / (s + 1), "ours": x.mean(), "se": se}
    md.append(markdown_table(["n", "s", "published E/range", "ours", "walks"], rows))

    # 2. split votes, n = 5, s = 4, range 100 ms, fixed latency
    md.append("\n#### 2. Split votes, n = 5, s = 4, 100 ms timeout range, fixed latency\n")
    rows = []
    for l_ms in (1, 10, 20):
        _, t = cell("ongaro", 5, walks, workers, election_timeout_ms=100.0,
                       latency="fixed", latency_a_ms=float(l_ms))
        e = col(t, "election_epochs")
        k, n = int((e > 1).sum()), len(e)
        lo, hi = binomial_ci(k, n)
        pub = published_split(4, 5, l_ms / 100)
        rows.append([f"{l_ms} ms ({l_ms}%)", f"{100 * pub:.2f}%", f"{100 * k / n:.2f}%",
                     f"{100 * lo:.2f}-{100 * hi:.2f}%", n,
                     f"{np.median(col(t, 'elect_us')) / 1000:.0f}"])
        res[f"split_l{l_ms}"] = {"published": pub, "ours": k / n, "ci": [lo, hi], "walks": n}
    md.append(markdown_table(["latency", "published", "ours", "95% interval", "walks",
                              "median elect ms"], rows))

    # 3. the simulated WAN
    md.append("\n#### 3. Simulated WAN: 5 servers, latency 30-40 ms, timeouts 300-600 ms\n")
    _, t = cell("ongaro-wan", 5, walks, workers, restart_delay_ms=5000.0)
    e = col(t, "elect_us") / 1000
    ft = col(t, "first_timeout_us") / 1000
    se = e.std(ddof=1) / math.sqrt(len(e))
    p999 = float(np.quantile(e, 0.999))
    md.append(markdown_table(
        ["", "published", "ours"],
        [["mean election time", "about 475 ms", f"{e.mean():.0f} ± {1.96 * se:.0f} ms"],
         ["99.9th percentile", "within 1.5 s", f"{p999:.0f} ms"],
         ["max", "-", f"{e.max():.0f} ms"],
         ["mean first timeout", "360 ms (300 + 300/5)", f"{ft.mean():.0f} ms"],
         ["split votes", "-", f"{100 * (col(t, 'election_epochs') > 1).mean():.2f}%"]]))
    res["wan"] = {"mean_ms": e.mean(), "se_ms": se, "p99_9_ms": p999, "max_ms": e.max(),
                  "first_timeout_ms": ft.mean()}
    # where the mean and the tail come from: elections by the epochs they needed
    ep = t.column("election_epochs").to_numpy(zero_copy_only=False).astype(float)
    el = t.column("elect_us").to_numpy(zero_copy_only=False).astype(float) / 1000
    rows = []
    for k in range(1, int(np.nanmax(ep)) + 1):
        sel = ep == k
        if sel.any():
            more = (ep >= k + 1).sum() / (ep >= k).sum()
            rows.append([k, int(sel.sum()), f"{el[sel].mean():.0f}", f"{el[sel].max():.0f}",
                         f"{100 * more:.1f}%"])
    md.append("\nThe same walks by the epochs their election needed:\n")
    md.append(markdown_table(["epochs", "walks", "mean ms", "max ms",
                              "P(one more split)"], rows))

    res["seconds"] = round(time.time() - started, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(args.out / "ongaro-validation.json", res)
    write_text_atomic(args.out / "ongaro-validation.md", "\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
