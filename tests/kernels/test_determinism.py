"""A walk depends only on (seed, walk index, params, weights mode, features): never on
how walks are chunked; record_walk re-runs exactly the walk run_chunk ran, and its
actions replayed one by one through apply_and_check reach the same final state."""
import numpy as np
import pytest

from conftest import F, F_DOUBLE_VOTE
from kraftwalk.kernels.state.layout import (
    BOUND_STUCK, RNG, S_BOUND_HIT, S_DISABLED, S_STEPS, STATS_BASE, V_INVARIANT, VIOL_BASE,
    make_params,
)
from kraftwalk.kernels.choosers.swarm import DEFAULT_WEIGHTS
from kraftwalk.kernels.transition import N_FAMILIES
from kraftwalk.kernels.drivers.trace import apply_and_check, new_walk, record_walk
from kraftwalk.kernels.drivers.walk import run_chunk

PARAMS = make_params(3, 1, 32, 16, 60, 4, 300)
SEED = 987654321
COUNT = 240


@pytest.fixture(scope="module", params=[True, False], ids=["swarm", "fixed-weights"])
def whole(request):
    swarm = request.param
    return swarm, run_chunk(SEED, 0, COUNT, PARAMS, DEFAULT_WEIGHTS, swarm, F)


def test_output_shapes(whole):
    _, (stats, viol, weights) = whole
    assert stats.shape[0] == viol.shape[0] == weights.shape[0] == COUNT
    assert weights.shape[1] == N_FAMILIES
    assert (stats[:, S_STEPS - STATS_BASE] > 0).all()


@pytest.mark.parametrize("bounds", [[0, 1, 64, 65, 130, COUNT], [0, 119, COUNT],
                                    [0, 7, 8, 9, 200, COUNT]])
def test_chunking_does_not_change_walks(whole, bounds):
    swarm, expected = whole
    parts = [run_chunk(SEED, a, b - a, PARAMS, DEFAULT_WEIGHTS, swarm, F)
             for a, b in zip(bounds, bounds[1:])]
    for k, name in enumerate(("stats", "violations", "weights")):
        np.testing.assert_array_equal(np.concatenate([p[k] for p in parts]), expected[k],
                                      err_msg=name)


def test_a_chunk_that_starts_mid_run(whole):
    swarm, expected = whole
    got = run_chunk(SEED, 50, 100, PARAMS, DEFAULT_WEIGHTS, swarm, F)
    for k in range(3):
        np.testing.assert_array_equal(got[k], expected[k][50:150])


def test_same_seed_same_output(whole):
    swarm, expected = whole
    again = run_chunk(SEED, 0, COUNT, PARAMS, DEFAULT_WEIGHTS, swarm, F)
    for k in range(3):
        np.testing.assert_array_equal(again[k], expected[k])


def test_different_seeds_differ(whole):
    swarm, expected = whole
    other = run_chunk(SEED + 1, 0, COUNT, PARAMS, DEFAULT_WEIGHTS, swarm, F)
    assert not np.array_equal(other[0], expected[0])
    # walk by walk, too: nearly every walk differs
    same = (other[0] == expected[0]).all(axis=1).sum()
    assert same < COUNT // 10
    if swarm:
        assert not np.array_equal(other[2], expected[2])


def test_swarm_weights_vary_between_walks(whole):
    swarm, (_, _, weights) = whole
    if swarm:
        assert len({tuple(r) for r in weights}) == COUNT
        assert (weights == 0).any()     # some families are left out of some walks
    else:
        assert (weights == DEFAULT_WEIGHTS).all()


WALKS = [0, 3, 57, 131, 239]


@pytest.mark.parametrize("index", WALKS)
def test_record_walk_reproduces_run_chunk(whole, index):
    swarm, (stats, viol, weights) = whole
    actions, s, v, wt, final = record_walk(SEED, index, PARAMS, DEFAULT_WEIGHTS, swarm, F)
    np.testing.assert_array_equal(s, stats[index])
    np.testing.assert_array_equal(v, viol[index])
    np.testing.assert_array_equal(wt, weights[index])
    assert actions.shape == (s[S_STEPS - STATS_BASE], 3)


def replay(index, swarm, features, actions):
    """Replay recorded actions on a fresh walk of the same (seed, index); returns the
    walk and the per-action results of apply_and_check."""
    w = new_walk(PARAMS, SEED, index, DEFAULT_WEIGHTS, swarm)
    results = [apply_and_check(w, a, features) for a in actions]
    return w, results


def assert_same_state(got, want):
    """Every array of the walks equal, except S_DISABLED (draws the scheduler rejected),
    the random stream and the weights (only drawing touches them)."""
    for name in ("node", "peer", "log", "hashes", "msgs", "ghost"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    skip = [S_DISABLED, RNG]
    if want.scal[S_BOUND_HIT] == BOUND_STUCK:
        skip.append(S_BOUND_HIT)   # set by the driver loop when nothing was enabled
    mask = np.ones(len(want.scal), dtype=bool)
    mask[skip] = False
    np.testing.assert_array_equal(got.scal[mask], want.scal[mask], err_msg="scal")


@pytest.mark.parametrize("index", WALKS)
def test_replaying_recorded_actions_reaches_the_same_state(whole, index):
    swarm, _ = whole
    actions, s, v, _, final = record_walk(SEED, index, PARAMS, DEFAULT_WEIGHTS, swarm, F)
    w, results = replay(index, swarm, F, actions)
    assert all(r == 0 for r in results), results
    assert_same_state(w, final)


def test_replay_reproduces_a_violation():
    """A double-vote walk: record_walk and run_chunk agree on the violation, and the
    replay reports it at exactly the last recorded action."""
    swarm = True
    stats, viol, _ = run_chunk(SEED, 0, 400, PARAMS, DEFAULT_WEIGHTS, swarm, F_DOUBLE_VOTE)
    bad = np.flatnonzero(viol[:, 0])
    assert len(bad) > 0
    index = int(bad[0])
    actions, s, v, _, final = record_walk(SEED, index, PARAMS, DEFAULT_WEIGHTS, swarm,
                                          F_DOUBLE_VOTE)
    np.testing.assert_array_equal(v, viol[index])
    np.testing.assert_array_equal(s, stats[index])
    w, results = replay(index, swarm, F_DOUBLE_VOTE, actions)
    assert all(r == 0 for r in results[:-1]) and results[-1] == viol[index, 0]
    np.testing.assert_array_equal(w.scal[VIOL_BASE:VIOL_BASE + 6], v)
    assert w.scal[V_INVARIANT] == v[0]
    assert_same_state(w, final)
