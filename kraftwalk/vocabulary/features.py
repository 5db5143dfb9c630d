"""The kernels' compile-time feature mask: what each bit switches, and the one
function that turns a run's settings into the mask.

Behaviour that can be switched (pre-vote, snapshots, each property check, each
known-bug mutation, trace recording) is one bit of an int the kernels receive as a
Numba literal: every distinct mask compiles its own specialisation, the branches on
it fold away, and the unmutated kernel pays nothing for mutations.

- bits 0-31: the property checks, by id (properties.INVARIANT_ID, then LIVENESS_ID);
- bits 32-39: the switches below;
- bits 40-62: the mutations, in their registry's order (mutations.MUTATIONS).
"""
from __future__ import annotations

from dataclasses import dataclass

from .mutations import mutation_bit, mutation_reverts
from .properties import INVARIANT_NAMES, LIVENESS_NAMES
from .releases import DEFAULT, switches

CHECKS_MASK = (1 << 32) - 1


@dataclass(frozen=True)
class Switch:
    name: str      # the run option that sets it, where one does
    bit: int
    meaning: str


SWITCHES: tuple[Switch, ...] = (
    Switch("pre_vote", 1 << 32, "KIP-996 pre-vote: a candidate first asks whether it could win"),
    Switch("trace", 1 << 33, "record each applied action (replay, shrinking)"),
    Switch("full_checks", 1 << 34,
           "check every node after every step and recompute every enabled-action mask, "
           "instead of only the node the step changed: slower, and the reference the fast "
           "path must equal"),
    Switch("snapshots", 1 << 35,
           "KIP-630 snapshots: nodes snapshot their committed log and clean it up to the "
           "snapshot, followers below the leader's log start fetch its snapshot"),
    Switch("reconfig", 1 << 36,
           "KIP-853 voter changes: leaders append VotersRecords (AddVoter, RemoveVoter), every "
           "node votes and counts by the latest VotersRecord in its log"),
    Switch("disk_loss", 1 << 37,
           "disk loss with directory ids (KIP-853): a node's disk is replaced and it starts "
           "empty under a new directory id; votes, Fetch and the HW check replica keys"),
    # Kafka's releases (releases.py): each modelled change of raft/ behaviour, on in the
    # releases that have it
    Switch("kafka_17642", 1 << 38,
           "KAFKA-17642 (Kafka 4.0): a Follower's quorum state keeps its vote, so a voter "
           "that voted for itself and then followed the epoch's leader restarts as "
           "Candidate of that epoch"),
    Switch("kafka_17030", 1 << 39,
           "KAFKA-17030 (Kafka 3.9.1, 4.0): an Unattached voter fetches from a bootstrap "
           "voter, as an observer does, so a voter the leader does not know finds it"),
)
SWITCH_BIT: dict[str, int] = {s.name: s.bit for s in SWITCHES}
# The switches a run's settings turn on (the others are the tools' own: trace, full checks).
RUN_SWITCHES = ("pre_vote", "snapshots", "reconfig", "disk_loss")


def feature_mask(*, pre_vote: bool, snapshots: bool = False, reconfig: bool = False,
                 disk_loss: bool = False, mutation: str = "none",
                 disabled_checks: tuple = (), liveness: bool = False,
                 kafka: str = DEFAULT) -> int:
    """The mask of a run: its switches, the Kafka release's (pre-vote is its own
    option), every invariant check but the disabled ones, the liveness checks but the
    disabled ones when ``liveness`` (timed walks), and its mutation."""
    on = {"pre_vote": pre_vote, "snapshots": snapshots, "reconfig": reconfig,
          "disk_loss": disk_loss}
    mask = sum(SWITCH_BIT[name] for name in RUN_SWITCHES if on[name])
    mask |= sum(SWITCH_BIT[name] for name, yes in switches(kafka).items()
                if yes and name not in RUN_SWITCHES)
    for bit, name in enumerate(INVARIANT_NAMES):
        if name not in disabled_checks:
            mask |= 1 << bit
    if liveness:
        for k, name in enumerate(LIVENESS_NAMES):
            if name not in disabled_checks:
                mask |= 1 << (len(INVARIANT_NAMES) + k)
    if mutation_reverts(mutation):  # the mutation undoes a fix the release has
        mask &= ~SWITCH_BIT[mutation_reverts(mutation)]
    return mask | mutation_bit(mutation)
