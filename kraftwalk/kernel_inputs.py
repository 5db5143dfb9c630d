"""What the kernels get from a configuration, for both choosers: the params array
(cluster shape and bounds), the family weights with whether the swarm draws around
them, and the compile-time feature mask (kraftwalk.vocabulary.features). Every
command that runs, replays, precompiles or measures kernels builds their inputs here,
apart from where the walks run (backends.py) and how a run is saved (runner.py).
"""
from __future__ import annotations

import numpy as np

from kraftwalk.config import RunConfig
from kraftwalk.elect_config import ElectConfig, timing_value
from kraftwalk.vocabulary.features import feature_mask
from kraftwalk.vocabulary.releases import DEFAULT
from kraftwalk.vocabulary.timing import RECONFIG_SCENARIOS, SCENARIO_NAMES, TIMING, TIMING_BY_NAME, TP_WIDTH

# Kernel bounds of a timed walk: enough log and message room for any scenario's length.
LOG_CAPACITY, MSG_SLOTS, MAX_EPOCH, MAX_RECORDS = 256, 32, 1000, 8


# ---- the swarm chooser (untimed walks) ------------------------------------------
def features_for(cfg: RunConfig) -> int:
    """The compile-time feature mask of a run: its switches, enabled checks, mutation."""
    return feature_mask(pre_vote=cfg.pre_vote, snapshots=cfg.snapshots, reconfig=cfg.reconfig,
                        disk_loss=cfg.disk_loss, mutation=cfg.mutation,
                        disabled_checks=cfg.disabled_checks, kafka=cfg.kafka)


def params_for(cfg: RunConfig) -> np.ndarray:
    from kraftwalk.kernels.state.layout import make_params

    return make_params(cfg.voters, cfg.observers, cfg.log_capacity, cfg.msg_slots,
                       cfg.max_epoch, cfg.max_records, cfg.depth, cfg.snapshots)


def base_weights(mode: str) -> np.ndarray:
    """Family weights of a weights mode: the tuned defaults (the centre of the swarm's
    draws, and the ``fixed`` mode) or all equal (``uniform``). A feature's families
    weigh 0 here; :func:`walk_weights` weighs them when their feature is on."""
    from kraftwalk.kernels.choosers.swarm import DEFAULT_WEIGHTS
    from kraftwalk.vocabulary.families import N_BASE_FAMILIES

    if mode != "uniform":
        return DEFAULT_WEIGHTS
    uniform = np.ones_like(DEFAULT_WEIGHTS)
    uniform[N_BASE_FAMILIES:] = 0.0
    return uniform


def walk_weights(cfg: RunConfig) -> tuple[np.ndarray, bool]:
    """(family weights, swarm?) of a run: its weights mode's, with the fault weights it
    sets (--crash-weight, --partition-weight, ...) in place of the mode's."""
    from kraftwalk.config import FAULT_WEIGHTS
    from kraftwalk.kernels.choosers.swarm import with_feature_weights
    from kraftwalk.vocabulary.families import FAMILY_ID, FEATURE_WEIGHTS

    on = [name for name in FEATURE_WEIGHTS if getattr(cfg, name)]  # features with families
    base = with_feature_weights(base_weights(cfg.weights), on, cfg.weights == "uniform")
    if any(getattr(cfg, name) is not None for name in FAULT_WEIGHTS):
        for name, family in FAULT_WEIGHTS.items():
            if getattr(cfg, name) is not None:
                base[FAMILY_ID[family]] = getattr(cfg, name)
    return base, cfg.weights == "swarm"


# ---- timed walks ---------------------------------------------------------------
def timed_features(pre_vote: bool, mutation: str, kafka: str = DEFAULT,
                   disabled_checks: tuple = (), scenario: str = "") -> int:
    """Compile-time features of a timed walk: the release's switches, every safety and
    liveness check on but ``disabled_checks`` (the release's timing rules are in its
    ``tp``), and voter changes where the scenario changes the voter set."""
    return feature_mask(pre_vote=pre_vote, mutation=mutation, liveness=True, kafka=kafka,
                        disabled_checks=disabled_checks,
                        reconfig=scenario in RECONFIG_SCENARIOS)


def timing_params(ecfg: ElectConfig) -> np.ndarray:
    """The timed kernels' ``tp`` array of a timed run's settings (microseconds)."""
    numeric = {k: float(SCENARIO_NAMES.index(v)) if k == "scenario" else timing_value(k, v)
               for k, v in ecfg.timing_ms().items()}
    return timing_array(numeric)


def timing_array(overrides=None) -> np.ndarray:
    """The timed kernels' ``tp`` array: every timing parameter's default
    (kraftwalk.vocabulary.timing), with ``overrides`` (name -> value in TIMING's units);
    the kernels work in microseconds, so every *_ms entry is converted."""
    tp = np.zeros(TP_WIDTH, dtype=np.float64)
    for k, t in TIMING.items():
        tp[k] = t.default
    for name, value in (overrides or {}).items():
        tp[TIMING_BY_NAME[name]] = float(value)
    for k, t in TIMING.items():
        if t.name.endswith("_ms"):
            tp[k] *= 1000.0
    return tp


def timed_params(voters: int, observers: int, depth: int) -> np.ndarray:
    from kraftwalk.kernels.state.layout import make_params

    return make_params(voters, observers, LOG_CAPACITY, MSG_SLOTS, MAX_EPOCH, MAX_RECORDS, depth)
