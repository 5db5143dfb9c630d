"""Plots draw what was run: a hunt's plot has a row per mutation and mode hunted."""
from __future__ import annotations

from kraftwalk.storage.plots import hunted_pairs, plot_hunt


def _row(m, mode, seed, found=True, seconds=0.05):
    return {"mutation": m, "weights": mode, "seed": seed, "found": found, "seconds": seconds}


def test_a_hunt_plot_has_no_row_for_a_mode_a_mutation_was_not_hunted_in(tmp_path):
    rows = [_row("double-vote", w, s) for w in ("swarm", "uniform") for s in (0, 1)]
    rows += [_row("no-check-quorum", "timed leader-isolated", s) for s in (0, 1)]
    rows += [_row("commit-old-epoch", "swarm", 0), _row("commit-old-epoch", "uniform", 0, False)]
    assert hunted_pairs(rows) == {"double-vote": ["swarm", "uniform"],
                                  "no-check-quorum": ["timed leader-isolated"],
                                  "commit-old-epoch": ["swarm", "uniform"]}
    assert plot_hunt(rows, tmp_path / "hunt.png", 60.0).stat().st_size > 0
