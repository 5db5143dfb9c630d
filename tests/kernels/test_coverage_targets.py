"""Reachability targets ("sometimes" properties): every target is reached by some walk,
and each recorded witness step is exact: replaying the walk's actions up to that step
reaches the target, one step fewer does not."""
import numpy as np
import pytest

from conftest import F, F_DISK_LOSS, F_SNAPSHOTS
from kraftwalk.kernels.state.layout import REACHED, TARGET_NAMES, make_params
from kraftwalk.kernels.choosers.swarm import DEFAULT_WEIGHTS, with_feature_weights
from kraftwalk.kernels.transition import FAMILY_NAMES, N_FAMILIES
from kraftwalk.kernels.drivers.trace import record_walk, replay_actions
from kraftwalk.kernels.drivers.walk import run_chunk_covered

SEED = 5
SNAPSHOT_WEIGHTS = with_feature_weights(DEFAULT_WEIGHTS, ["snapshots"])
SNAPSHOT_WEIGHTS[FAMILY_NAMES.index("crash")] = 1.0
# name -> (params, weights, features): max_epoch 4 makes the epoch bound reachable; the
# snapshot targets need snapshots, and RestartedFromSnapshot an observer (whose snapshot
# can pass its flushed log) crashing before it flushes: two observers, five times the
# crashes; the voter-change and disk-loss targets need those features; the default config
# the rest
CONFIGS = {
    "default": (make_params(3, 1, 32, 16, 60, 4, 400), DEFAULT_WEIGHTS, F),
    "low max_epoch": (make_params(3, 1, 32, 16, 4, 4, 400), DEFAULT_WEIGHTS, F),
    "snapshots": (make_params(3, 2, 32, 16, 60, 4, 400, snapshots=True), SNAPSHOT_WEIGHTS,
                  F_SNAPSHOTS),
    "reconfig+disk-loss": (make_params(3, 2, 32, 16, 60, 4, 400),
                           with_feature_weights(DEFAULT_WEIGHTS, ["reconfig", "disk_loss"]),
                           F_DISK_LOSS),
}


@pytest.fixture(scope="module")
def runs():
    return {name: run_chunk_covered(SEED, 0, 1500, p, weights, True, features)
            for name, (p, weights, features) in CONFIGS.items()}


def test_every_target_is_reached(runs):
    reached = 0
    for _, _, _, reach, _ in runs.values():
        reached |= int(np.bitwise_or.reduce(reach[:, 0]))
    missing = [n for t, n in enumerate(TARGET_NAMES) if not (reached >> t) & 1]
    assert not missing


def test_counts_add_up_to_the_steps(runs):
    stats, _, _, _, counts = runs["default"]
    from kraftwalk.kernels.state.layout import S_STEPS, STATS_BASE

    assert (counts[:, :N_FAMILIES].sum(axis=1) == stats[:, S_STEPS - STATS_BASE]).all()
    assert counts[:, FAMILY_NAMES.index("deliver")].sum() >= counts[:, N_FAMILIES:].sum() > 0


@pytest.mark.parametrize("target", TARGET_NAMES)
def test_witness_step_is_exact(runs, target):
    t = TARGET_NAMES.index(target)
    for name, (_, _, _, reach, _) in runs.items():
        hits = np.nonzero((reach[:, 0] >> t) & 1)[0]
        if len(hits):
            break
    walk, step = int(hits[0]), int(reach[hits[0], 1 + t])
    params, weights, features = CONFIGS[name]
    actions = record_walk(SEED, walk, params, weights, True, features)[0]
    assert 1 <= step <= len(actions)
    _, _, w = replay_actions(params, actions[:step], features)
    assert (w.scal[REACHED] >> t) & 1, f"{target} not reached by step {step}"
    _, _, w = replay_actions(params, actions[:step - 1], features)
    assert not (w.scal[REACHED] >> t) & 1, f"{target} already reached before step {step}"
