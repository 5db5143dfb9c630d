"""Compiling a job's kernel variants side by side: one per (kind, feature mask), in
other processes, into the cache the job then loads from."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from kraftwalk.config import RunConfig
from kraftwalk.run.hunt import hunt_configs, hunt_variant
from kraftwalk.run.precompile import distinct_variants, precompile, swarm_variant
from kraftwalk.kernel_inputs import features_for


def test_one_variant_per_kind_and_feature_mask_in_first_seen_order():
    base = RunConfig(workers=2)
    configs = hunt_configs(base, ["double-vote", "no-check-quorum", "none"],
                           ["swarm", "uniform"], [0, 1, 2])
    # seeds and weights modes share a variant; the liveness mutation has one weights mode
    assert len(configs) == 2 * 3 + 3 + 2 * 3
    kinds = [(kind, features) for kind, _, _, features
             in distinct_variants(map(hunt_variant, configs))]
    assert [k for k, _ in kinds] == ["swarm", "timed", "swarm"]
    assert kinds[0][1] == features_for(configs[0]) and kinds[2][1] == features_for(base)
    assert len(set(kinds)) == 3


def test_nothing_runs_for_one_variant_or_one_worker(monkeypatch):
    import joblib

    monkeypatch.setattr(joblib, "Parallel", None)  # any use would raise
    one = [swarm_variant(RunConfig()), swarm_variant(RunConfig(seed=3))]
    assert precompile(one, workers=2) == 0.0
    two = [swarm_variant(RunConfig()), swarm_variant(RunConfig(mutation="double-vote"))]
    assert precompile(two, workers=1) == 0.0


def test_a_sweep_runs_the_swarm_kernels_even_for_a_liveness_mutation():
    (kind, *_), = distinct_variants([swarm_variant(RunConfig(mutation="no-check-quorum"))])
    assert kind == "swarm"


JOB = textwrap.dedent("""
    import json, sys
    from kraftwalk.config import RunConfig
    from kraftwalk.run.precompile import precompile
    from kraftwalk.run.runner import warm_up
    from kraftwalk.kernel_inputs import features_for, params_for
    from kraftwalk.kernel_inputs import walk_weights
    from kraftwalk.kernels.jit import entry
    from kraftwalk.kernels.drivers.walk import _run_walks
    from kraftwalk.run.precompile import swarm_variant
    configs = [RunConfig(depth=50, mutation=m) for m in ("double-vote", "commit-old-epoch")]
    precompile(map(swarm_variant, configs), workers=2)
    for cfg in configs:
        warm_up(params_for(cfg), walk_weights(cfg), features_for(cfg))
    stats = entry(_run_walks).stats
    print(json.dumps({"hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values())}))
""")


@pytest.mark.long
def test_the_job_loads_what_the_workers_compiled_into_an_empty_cache(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", JOB], env=env, capture_output=True,
                         text=True, timeout=1200)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1]) == {"hits": 2, "misses": 0}
