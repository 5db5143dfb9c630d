"""Plain Numba (KRAFTWALK_PLAIN_NUMBA=1, or the fall-back where the hooks do not
install) gives bit for bit the walks, violations and coverage the hooks give: the
same swarm run both ways, the default cluster and a mutated one (whose violations
are compared too)."""
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from kraftwalk.kernels.jit.numba_switch import plain_requested

pytestmark = pytest.mark.skipif(plain_requested(), reason="runs both modes itself")

RUNS = {
    "default": ["--walks", "5000", "--seed", "3"],
    "double-vote": ["--walks", "2000", "--seed", "3", "--mutation", "double-vote"],
}


def swarm(out, args, plain):
    env = {**os.environ, "KRAFTWALK_PLAIN_NUMBA": "1" if plain else "0"}
    run = subprocess.run([sys.executable, "-m", "kraftwalk.cli", "swarm", *args,
                          "--workers", "1", "--out", str(out)],
                         env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == (12 if "--mutation" in args else 0), run.stderr[-3000:]
    mode = json.loads((out / "run.json").read_text())["versions"]["numba_mode"]
    assert mode == ("plain (KRAFTWALK_PLAIN_NUMBA=1)" if plain else "hooks")
    return {name: pd.read_parquet(out / name).drop(columns="run_id", errors="ignore")
            .sort_values(key).reset_index(drop=True)
            for name, key in (("walks", ["walk"]), ("violations", ["walk", "step"]),
                              ("coverage.parquet", ["kind", "target"]))}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_plain_numba_gives_the_same_walks_violations_and_coverage(tmp_path, name):
    hooks = swarm(tmp_path / "hooks", RUNS[name], plain=False)
    plain = swarm(tmp_path / "plain", RUNS[name], plain=True)
    for table in hooks:
        pd.testing.assert_frame_equal(plain[table], hooks[table], obj=table)
    assert len(hooks["walks"]) == int(RUNS[name][1])
    assert (len(hooks["violations"]) > 0) == (name == "double-vote")
