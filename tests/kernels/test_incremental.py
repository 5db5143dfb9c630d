"""The fast path checks only the node a step changed and updates the enabled-action
masks incrementally; it must give exactly the results of checking every node and
recomputing every mask after every step (FULL_CHECKS)."""
import numpy as np
import pytest

from kraftwalk.kernels.properties.checkers import ALL_CHECKS
from kraftwalk.kernels.features import (
    FULL_CHECKS, MUT_COMMIT_OLD_EPOCH, MUT_DOUBLE_VOTE, MUT_RESTARTED_LEADER, PRE_VOTE,
)
from kraftwalk.kernels.state.layout import make_params
from kraftwalk.kernels.choosers.swarm import DEFAULT_WEIGHTS
from kraftwalk.kernels.drivers.walk import run_chunk

ALL_MUTATIONS = MUT_COMMIT_OLD_EPOCH | MUT_DOUBLE_VOTE | MUT_RESTARTED_LEADER


@pytest.mark.parametrize("mutations", [0, ALL_MUTATIONS], ids=["correct", "mutated"])
def test_incremental_checks_equal_full_checks(mutations):
    params = make_params(3, 1, 32, 16, 60, 4, 500)
    features = PRE_VOTE | ALL_CHECKS | mutations
    fast = run_chunk(11, 0, 3000, params, DEFAULT_WEIGHTS, True, features)
    full = run_chunk(11, 0, 3000, params, DEFAULT_WEIGHTS, True, features | FULL_CHECKS)
    for a, b in zip(fast, full):
        np.testing.assert_array_equal(a, b)
    if mutations:
        assert (fast[1][:, 0] > 0).sum() > 100  # the comparison covers many violations
