"""Every action family of the transition relation, declared once.

A family is a kind of action the swarm chooser draws (kernels/choosers/swarm.py) and the
transition relation applies (kernels/transition/__init__.py). Its position here is its id in
the kernels (FAM_*), in the walk's weights and in every family column of the run
files; the families every walk has come first, then each feature's, in the order
the kernels' ``n_families`` cuts them off (snapshots, then voter changes, then disk
loss), so a new one goes in its feature's place or at the end.
"""
from __future__ import annotations

from dataclasses import dataclass

KINDS = ("protocol", "fault")
ACTS_ON = ("node", "node pair", "network")  # what an action of the family names
FEATURES = (None, "snapshots", "reconfig", "disk_loss")  # in the kernels' cut-off order


@dataclass(frozen=True)
class Family:
    name: str
    kind: str              # one of KINDS
    acts_on: str           # one of ACTS_ON
    weight: float          # the tuned weight: the fixed mode's, the centre of the swarm's
    omittable: bool        # a swarm walk may leave the family out altogether
    meaning: str
    feature: str | None = None   # the run option that adds the family (its weight is 0 without)
    weight_option: bool = False  # --<name>-weight sets its weight


FAMILIES: tuple[Family, ...] = (
    # The tuned weights (experiments/tune_swarm.py, results/swarm_tuning.md): message
    # traffic dominates, faults are rare enough for elections to finish; sending at a
    # third of the delivery rate, rather than two thirds, halved the median steps to
    # the deep Figure 8 violation.
    Family("timeout", "protocol", "node", 1.0, False, "an election or fetch timer expires"),
    Family("deliver", "protocol", "network", 12.0, False, "one in-flight message is delivered"),
    Family("send", "protocol", "node pair", 4.0, False,
           "a node sends the request its role calls for"),
    Family("client_append", "protocol", "node", 2.0, True, "the leader appends a client record"),
    Family("flush", "protocol", "node", 2.0, False, "a node flushes its log"),
    Family("check_quorum", "protocol", "node", 0.3, True,
           "the leader's check-quorum timer expires"),
    Family("resign", "protocol", "node", 0.1, True, "the leader resigns gracefully"),
    Family("crash", "fault", "node", 0.2, True, "a node crashes, losing its unflushed tail",
           weight_option=True),
    Family("restart", "fault", "node", 1.0, False, "a crashed node restarts"),
    Family("partition", "fault", "network", 0.3, True, "links are cut or healed",
           weight_option=True),
    Family("lose", "fault", "network", 0.5, True, "an in-flight message is lost",
           weight_option=True),
    Family("duplicate", "fault", "network", 0.3, True, "an in-flight message is duplicated",
           weight_option=True),
    # Snapshots a little rarer than client appends, cleaning as often as snapshots: the
    # log start then often passes a lagging follower's fetch offset.
    Family("snapshot", "protocol", "node", 0.5, False,
           "a node snapshots its log up to its high watermark", "snapshots"),
    Family("clean", "protocol", "node", 0.5, False,
           "a node deletes its log below its latest snapshot", "snapshots"),
    # Voter changes as rare as crashes: each is enabled only between commits, and a walk
    # should see several.
    Family("add_voter", "protocol", "node pair", 0.3, False,
           "leader a adds node b to the voters", "reconfig"),
    Family("remove_voter", "protocol", "node pair", 0.3, False,
           "leader a removes voter b", "reconfig"),
    # A disk loss a quarter as often as a crash: each costs the cluster a voter until it is
    # removed and added back.
    Family("disk_loss", "fault", "node", 0.05, True,
           "node a loses its disk and starts empty under a new directory id", "disk_loss"),
)

FAMILY_NAMES: tuple[str, ...] = tuple(f.name for f in FAMILIES)
FAMILY_ID: dict[str, int] = {f.name: k for k, f in enumerate(FAMILIES)}
# The families every walk has; the others exist only with their feature on.
N_BASE_FAMILIES = sum(1 for f in FAMILIES if f.feature is None)
# The weights of a walk with no feature on: a feature's families weigh 0.
BASE_WEIGHTS: tuple[float, ...] = tuple(0.0 if f.feature else f.weight for f in FAMILIES)
# A feature's families and their weights, added when the feature is on.
FEATURE_WEIGHTS: dict[str, dict[str, float]] = {
    feature: {f.name: f.weight for f in FAMILIES if f.feature == feature}
    for feature in FEATURES if feature}
# --crash-weight and the like: config field -> family.
WEIGHT_OPTIONS: dict[str, str] = {f"{f.name}_weight": f.name for f in FAMILIES if f.weight_option}


def weights_help() -> str:
    """The tuned weights as --help shows them, largest first, then each feature's."""
    base = sorted((f for f in FAMILIES if not f.feature), key=lambda f: -f.weight)
    parts = [", ".join(f"{f.name} {f.weight:g}" for f in base)]
    for feature, weights in FEATURE_WEIGHTS.items():
        parts.append(f"with --{feature.replace('_', '-')} "
                     + ", ".join(f"{n} {w:g}" for n, w in weights.items()))
    return "tuned: " + ", ".join(parts) + "; uniform: all 1"
