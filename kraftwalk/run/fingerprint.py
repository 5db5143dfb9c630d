"""What decides a run's walks, recorded when it starts and checked when it resumes.

A resumed run must go on making the walks it began, or its folder would hold one
dataset of two models. A walk is a pure function of (seed, walk index, config) and the
code that runs it, so the fingerprint is the walk-deciding settings (every option but
where and how the walks run, FREE_ON_RESUME), the kraftwalk version and the hash of
the kernel sources. run.json and sweep.json keep it; ``--resume`` refuses a folder
whose config.toml or sweep.toml was edited since, or that another model wrote, and
names what differs.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kraftwalk import __version__
from kraftwalk.config import RunConfig, fields_of
from kraftwalk.errors import UsageError

# Options a resumed run may change: where and how walks run, none of what they do.
FREE_ON_RESUME = fields_of("execution")
KEY = "fingerprint"  # its key in run.json and sweep.json


def walk_settings(cfg: RunConfig) -> dict[str, Any]:
    return {k: v for k, v in cfg.to_dict().items() if k not in FREE_ON_RESUME}


def _model() -> dict[str, str]:
    from kraftwalk.kernels.jit.numba_cache import kernel_sources_hash

    return {"kraftwalk": __version__, "kernel_sources": kernel_sources_hash()[:16]}


def of_run(cfg: RunConfig) -> dict[str, Any]:
    return {**_model(), "walks": walk_settings(cfg)}


def elect_settings(cfg) -> dict[str, Any]:
    """What decides an elect run's walks, per cell (its partition): every setting but
    the execution ones, and its timing as the cell's release has it."""
    from kraftwalk.elect_config import EXECUTION, KEYS
    from kraftwalk.storage.elect_folder import partition

    out = {}
    for k, v, p in cfg.cells():
        c = cfg.for_release(k)
        settings = {key: getattr(c, key) for key in KEYS
                    if key not in (*EXECUTION, "timing", "kafka", "voters", "pre_vote")}
        out[partition(k, v, p)] = {**settings, "timing": c.timing_ms()}
    return json.loads(json.dumps(out))


def of_elect(cfg) -> dict[str, Any]:
    return {**_model(), "walks": {"command": "elect", "cells": elect_settings(cfg)}}


def of_sweep(spec) -> dict[str, Any]:
    """A sweep's: every cell's walk settings, by partition."""
    settings = elect_settings if spec.command == "elect" else walk_settings
    return {**_model(), "walks": {"command": spec.command, "cells": {
        c.partition: settings(c.config) for c in spec.cells()}}}


def recorded(status_file: Path) -> dict | None:
    """The fingerprint a run.json or sweep.json records, or None."""
    try:
        meta = json.loads(status_file.read_text())
    except (OSError, ValueError):
        return None
    fp = meta.get(KEY) if isinstance(meta, dict) else None
    return fp if isinstance(fp, dict) else None


def differences(old: Any, new: Any, where: str = "") -> list[str]:
    """'key: old -> new' for each leaf that differs (dicts compared key by key)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in dict.fromkeys([*old, *new]):
            name = f"{where} {k}".strip() if where else str(k)
            if k not in old:
                out.append(f"{name}: (none) -> {_shown(new[k])}")
            elif k not in new:
                out.append(f"{name}: {_shown(old[k])} -> (none)")
            else:
                out += differences(old[k], new[k], name)
        return out
    return [] if old == new else [f"{where}: {_shown(old)} -> {_shown(new)}"]


def _shown(v: Any) -> str:
    if isinstance(v, dict):
        return "{...}"
    return json.dumps(v) if isinstance(v, (str, list)) else str(v)


def check(folder: Path, status_file: Path, now: dict, anything_saved: bool) -> None:
    """Refuse to resume ``folder`` when what it would run differs from what it ran.

    A folder with nothing saved has nothing to mix with; one with saved walks and no
    fingerprint was written by a kraftwalk before fingerprints (its model is unknown)."""
    old = recorded(status_file)
    if old is None:
        if anything_saved:
            raise UsageError(f"--resume {folder}: {status_file.name} records no fingerprint of "
                             "the model that made its walks (an older kraftwalk, or the file "
                             "is damaged); start a new run")
        return
    diffs = differences(old.get("walks"), now["walks"])
    if diffs:
        shown = "; ".join(diffs[:3]) + (f"; and {len(diffs) - 3} more" if len(diffs) > 3 else "")
        raise UsageError(f"--resume {folder}: its settings changed since it started ({shown}); "
                         "resumed, it would mix two models in one dataset: start a new run")
    model = {k: v for k, v in now.items() if k != "walks"}
    if {k: old.get(k) for k in model} != model:
        shown = "; ".join(differences({k: old.get(k) for k in model}, model))
        raise UsageError(f"--resume {folder}: its walks were made by another kraftwalk model "
                         f"({shown}); resume it with that one, or start a new run")


def check_sweep(out: Path, spec) -> None:
    """Refuse to resume the sweep in ``out`` when its spec or model changed."""
    from kraftwalk.sweep_spec import SWEEP_JSON

    status = out / SWEEP_JSON
    check(out, status, of_sweep(spec), status.exists())
