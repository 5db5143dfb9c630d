"""Resuming a run folder: the config it was run with, and the totals of the walks it
already saved.

A resumed run continues after the saved walks 0..K-1 (parts are saved in walk order)
with the same config, so it ends with the same walks, violations and statistics as a
run that was never stopped. Options that cannot change a walk (how many workers run
it, where, how it is chunked and saved) may differ; any other change is refused.
"""
from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from kraftwalk.storage import rundir
from kraftwalk.config import RunConfig, make_config, option_name
from kraftwalk.errors import UsageError
from kraftwalk.run import fingerprint
from kraftwalk.run.fingerprint import FREE_ON_RESUME
from kraftwalk.storage.lock import refuse_if_held


def resume_config(run_dir: str | Path, given: dict[str, Any]) -> RunConfig:
    """The config of the run in ``run_dir`` with the harmless options in ``given``
    applied; any other option in ``given`` that differs is a usage error, and so is a
    config.toml edited since the run started (:func:`check_unchanged`)."""
    run = Path(run_dir)
    if not (run / rundir.CONFIG).is_file():
        raise UsageError(f"--resume {run_dir}: not a run folder (it has no {rundir.CONFIG})")
    refuse_if_held(run, "--resume")
    cfg = make_config(str(run / rundir.CONFIG))
    check_unchanged(rundir.layout(run), cfg)
    changes = {}
    for name, value in given.items():
        if value is None or name == "out":
            continue
        if name in FREE_ON_RESUME:
            changes[name] = value
            continue
        if isinstance(value, list):
            value = tuple(dict.fromkeys(value))
        if value != getattr(cfg, name):
            raise UsageError(
                f"--resume {run_dir}: the run was made with {option_name(name)} "
                f"{_shown(getattr(cfg, name))}; {_shown(value)} would change its walks "
                "(start a new run instead)")
    return dataclasses.replace(cfg, out=str(run), **changes)


def check_unchanged(lay: rundir.Layout, cfg: RunConfig) -> None:
    """Refuse to resume a run (or a sweep's cell) whose run.json records another
    fingerprint than ``cfg`` and this kraftwalk's (:mod:`kraftwalk.run.fingerprint`)."""
    status = lay.root / rundir.RUN_JSON
    fingerprint.check(lay.root, status, fingerprint.of_run(cfg),
                      status.exists() or rundir.walks_saved(lay) > 0)


def _shown(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def previous_seconds(run: rundir.Layout) -> float:
    """Run time (compile excluded) the run folder has already had, 0 if unknown."""
    try:
        return float(json.loads((run.root / rundir.RUN_JSON).read_text()).get("seconds", 0.0))
    except (OSError, ValueError, TypeError, AttributeError):
        return 0.0


def saved_totals(run: rundir.Layout, histogram: bool) -> dict:
    """walks, steps, disabled attempts, bound hits and violations of the saved walks."""
    from kraftwalk.storage.tables import VIOL_COLUMNS

    out = {"walks": 0, "steps": 0, "disabled_attempts": 0, "bound_hits": Counter(),
           "violations_by_invariant": Counter(), "violations": 0, "first_violations": []}
    if histogram:
        from kraftwalk.kernels.state.layout import BOUND_NAMES

        t = rundir.read_dataset(run, rundir.HISTOGRAM).to_pandas()
        for stat, key in (("steps", "steps"), ("disabled_attempts", "disabled_attempts")):
            part = t[t["stat"] == stat]
            out[key] = int((part["value"] * part["count"]).sum())
        out["walks"] = int(t[t["stat"] == "steps"]["count"].sum())
        bh = t[(t["stat"] == "bound_hit") & (t["value"] > 0)]
        out["bound_hits"].update({BOUND_NAMES[int(v)]: int(c) for v, c in
                                  zip(bh["value"], bh["count"])})
    else:
        t = rundir.read_dataset(run, rundir.WALKS, columns=["steps", "disabled_attempts",
                                                             "bound_hit"])
        out["walks"] = t.num_rows
        out["steps"] = int(np.sum(t.column("steps").to_numpy()))
        out["disabled_attempts"] = int(np.sum(t.column("disabled_attempts").to_numpy()))
        out["bound_hits"].update(c for c in t.column("bound_hit").to_pylist() if c != "none")
    v = rundir.read_dataset(run, rundir.VIOLATIONS, columns=["walk", *VIOL_COLUMNS])
    rows = sorted(v.to_pylist(), key=lambda r: r["walk"])
    out["violations_by_invariant"].update(r["invariant"] for r in rows)
    out["violations"] = len(rows)
    out["first_violations"] = rows[:5]
    return out
