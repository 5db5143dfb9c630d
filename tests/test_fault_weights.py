"""Fault weights (--crash-weight, --partition-weight, ...): they replace the weights
mode's value for their family, 0 switches the fault off, and replay uses them."""
from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from kraftwalk.storage import rundir
from kraftwalk.kernel_inputs import base_weights, walk_weights
from kraftwalk.commands.options import TUNED_WEIGHTS_HELP
from kraftwalk.config import FAULT_WEIGHTS, RunConfig
from kraftwalk.errors import UsageError
from kraftwalk.kernels.choosers.swarm import DEFAULT_WEIGHTS
from kraftwalk.kernels.transition import FAMILY_NAMES
from kraftwalk.counterexamples.replay import load_run, record
from kraftwalk.run.runner import run_swarm


def test_unset_fault_weights_keep_the_mode_weights():
    for mode in ("swarm", "fixed", "uniform"):
        base, swarm = walk_weights(RunConfig(weights=mode))
        assert np.array_equal(base, base_weights(mode)) and swarm == (mode == "swarm")


def test_fault_weights_replace_their_family_only():
    base, _ = walk_weights(RunConfig(partition_weight=2.5, crash_weight=0))
    expected = DEFAULT_WEIGHTS.copy()
    expected[FAMILY_NAMES.index("partition")] = 2.5
    expected[FAMILY_NAMES.index("crash")] = 0.0
    assert np.array_equal(base, expected)
    assert DEFAULT_WEIGHTS[FAMILY_NAMES.index("partition")] == 0.3  # the tuned array untouched


def test_the_help_states_the_tuned_weights():
    from kraftwalk.kernels.choosers.swarm import FEATURE_WEIGHTS
    from kraftwalk.kernels.transition import N_BASE_FAMILIES

    for name, w in zip(FAMILY_NAMES[:N_BASE_FAMILIES], DEFAULT_WEIGHTS):
        assert f"{name} {w:g}" in TUNED_WEIGHTS_HELP
    for families in FEATURE_WEIGHTS.values():  # weighed only with their feature on
        for name, w in families.items():
            assert f"{name} {w:g}" in TUNED_WEIGHTS_HELP
    assert set(FAULT_WEIGHTS.values()) <= set(FAMILY_NAMES)


@pytest.mark.parametrize("value", [-0.1, 1001, float("nan"), "x", True])
def test_bad_fault_weights(value):
    with pytest.raises(UsageError, match="--lose-weight must be a number between 0 and 1000"):
        RunConfig(lose_weight=value)


def test_zero_switches_a_fault_off_and_replay_follows(tmp_path):
    out = tmp_path / "run"
    res = run_swarm(RunConfig(walks=1500, depth=200, workers=1, partition_weight=0.0,
                              crash_weight=3.0, mutation="double-vote", out=str(out)))
    cov = pq.read_table(out / rundir.COVERAGE_FILE).to_pylist()
    steps = {r["target"]: r["count"] for r in cov if r["kind"] == "action"}
    assert steps["partition"] == 0 and steps["crash"] > 0
    first = res["first_violations"][0]
    cfg = load_run(out)  # from the run's config.toml, as kraftwalk replay reads it
    assert (cfg.partition_weight, cfg.crash_weight) == (0.0, 3.0)
    trace = record(cfg, first["walk"])
    assert trace.violation["step"] == first["step"]
    assert trace.violation["invariant"] == first["invariant"]
