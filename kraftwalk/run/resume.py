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
from kraftwalk.config import RunConfig, fields_of, make_config, option_name
from kraftwalk.errors import UsageError

# Options a resumed run may change: where and how walks run, none of what they do.
FREE_ON_RESUME = fields_of("execution")


def resume_config(run_dir: str | Path, given: dict[str, Any]) -> RunConfig:
    """The config of the run in ``run_dir`` with the harmless options in ``given``
    applied; any other option in ``given`` that differs is a usage error."""
    run = Path(run_dir)
    if not (run / rundir.CONFIG).is_file():
        raise UsageError(f"--resume {run_dir}: not a run folder (it has no {rundir.CONFIG})")
    cfg = make_config(str(run / rundir.CONFIG))
    pid = running_pid(run)
    if pid is not None:
        raise UsageError(f"--resume {run_dir}: the run is still running (pid {pid}); stop it first")
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


def running_pid(run: Path, status_file: str = rundir.RUN_JSON) -> int | None:
    """The pid of the process still running the run (or sweep: its ``status_file``), if
    that file names a live one."""
    import os

    try:
        meta = json.loads((run / status_file).read_text())
        pid = int(meta["pid"]) if meta.get("status") == "running" else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if pid is None or pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    stat = Path(f"/proc/{pid}/stat")
    if stat.is_file() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
        return None  # a zombie (its parent has not reaped it): not running
    return pid


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
