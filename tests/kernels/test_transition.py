"""The transition relation: one enabledness rule per node family, from which both
the chooser's masks and replay's check of a recorded action derive."""
from __future__ import annotations

import numpy as np

from kraftwalk.kernels.features import PRE_VOTE
from kraftwalk.kernels.choosers.swarm import DEFAULT_WEIGHTS, step
from kraftwalk.kernels.transition import (
    FAM_SEND, NODE_FAMILIES, N_FAMILIES, action_enabled, enabled_masks, node_family_enabled,
    request_targets,
)
from kraftwalk.kernels.drivers.trace import new_walk
from kraftwalk.kernel_inputs import features_for, params_for
from kraftwalk.config import RunConfig


def test_every_node_family_is_listed_once():
    # 8, 2 with snapshots, 2 with voter changes, 1 with disk loss
    assert len(set(NODE_FAMILIES)) == len(NODE_FAMILIES) == 13
    assert all(0 <= f < N_FAMILIES for f in NODE_FAMILIES)


def test_masks_and_replay_agree_with_the_rule_along_walks():
    cfg = RunConfig(voters=3, observers=1)
    features = features_for(cfg)
    assert features & PRE_VOTE
    masks = np.zeros(N_FAMILIES, np.int64)
    act = np.zeros(4, np.int64)
    checked = 0
    for walk in range(20):
        w = new_walk(params_for(cfg), 0, walk, DEFAULT_WEIGHTS, True)
        for _ in range(200):
            enabled_masks(w, masks, features)
            for f in NODE_FAMILIES:
                for i in range(4):
                    rule = node_family_enabled(w, f, i, features)
                    assert bool((masks[f] >> i) & 1) == rule
                    targets = request_targets(w, i, features)
                    b = (targets & -targets).bit_length() - 1 if f == FAM_SEND and targets else 0
                    assert action_enabled(w, f, i, b, features) == rule
                    checked += 1
            if not step(w, act, masks, features):
                break
    assert checked > 10_000
