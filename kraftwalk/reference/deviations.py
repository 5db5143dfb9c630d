"""Where the kernel and Apache Kafka (as this model reads it) disagree.

The reference model follows Kafka (apache/kafka ``raft/``: KafkaRaftClient,
QuorumState, ProspectiveState at commit 0bce3346, the newest stored). When the
differential test finds the kernel doing something else, the place goes in
``DEVIATIONS`` while it is open: ``ReferenceCluster(..., kernel_compat={name})``
must then do what the kernel does for that name (each protocol module tests
``name in c.compat`` at the one place concerned), so the test can look past it
and keep checking everything else. ``RESOLVED`` keeps the record of the ones
the kernel has since fixed.

Modelling conventions are not deviations and the reference mirrors them: message
slot order and the action encoding, counters, what the untimed model lets happen
"at any time", the bounds that end a walk, and the kernel's explicit choices to
let a broken promise be reported by a checker rather than crash the node as
Kafka does (a follower asked to truncate below its HW, or handed a lower HW).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Deviation:
    name: str
    kernel: str       # where the kernel does it (file, line, commit)
    kernel_does: str
    kafka_does: str
    status: str = "open"


# Open disagreements (none at present).
DEVIATIONS: dict[str, Deviation] = {}

# Found while writing this model and its differential test (kernel 9ad5478 .. c37cc76).
RESOLVED: tuple[Deviation, ...] = (
    Deviation(
        "restart_candidate_keeps_leader",
        "kernels/transition/faults.py:64 (restart_node, `VOTED_ID == i` branch)",
        "a node that restarts as Candidate (it had voted for itself in its epoch, then "
        "learnt the leader L) keeps leader id L",
        "QuorumState.initialize builds a CandidateState, whose election() is "
        "withVotedCandidate (no leader), and writes it back durably: L is forgotten. So its "
        "vote requests are answered with leader L and maybeHandleCommonResponse makes it "
        "Follower of L (!hasLeader); the kernel stayed Candidate, answered others with leader "
        "L, and after a lost pre-vote went Follower where Kafka goes Unattached",
        "fixed in de0468b",
    ),
    Deviation(
        "prospective_refollows_known_leader",
        "kernels/protocol/quorum_state.py:186 (maybe_transition, "
        "`LEADER_ID == leader and role != FOLLOWER`)",
        "a Prospective that knows leader L (it came from Follower of L) became Follower of L "
        "again on a same-epoch BeginQuorumEpoch / EndQuorumEpoch naming L",
        "maybeTransition re-follows a known leader only when the message brings more "
        "endpoints than the state holds; ProspectiveState keeps FollowerState's leader "
        "endpoints, so the Prospective stays Prospective (its pre-vote goes on)",
        "fixed in de0468b",
    ),
    Deviation(
        "no_observer_switch_to_leader",
        "kernels/protocol/replication.py:65-67 (handle_fetch_response) with quorum_state.py:201",
        "an Unattached observer that still knows leader L (after its fetch timeout) ignored a "
        "successful FetchResponse from L: no re-follow, records and HW dropped",
        "handleFetchResponse first runs maybeSwitchObserverFetchToLeader: same epoch, "
        "Unattached, leader named -> transitionToFollower, then appends the records and "
        "takes the HW",
        "fixed in de0468b",
    ),
    Deviation(
        "no_single_voter_restart_election",
        "kernels/transition/faults.py:71 (restart_node)",
        "a lone voter restarted Unattached / Resigned / Candidate and waited for a timeout",
        "KafkaRaftClient.initialize: the only voter, Unattached/Follower/Resigned, calls "
        "transitionToProspective (short-circuits to Candidate at epoch + 1, then Leader); a "
        "restarted Candidate runs onBecomeCandidate and leads at once",
        "fixed in de0468b",
    ),
    Deviation(
        "empty_leader_log_diverging_epoch",
        "kernels/protocol/replication.py:149 (handle_fetch_request)",
        "a leader with an EMPTY log (reachable only with MUT_RESTARTED_LEADER) answered a "
        "Fetch at offset > 0 with divergingEpoch (lastFetchedEpoch, 0)",
        "KafkaRaftLog.endOffsetForEpoch on an empty epoch cache is (LEO, lastFetchedEpoch) "
        "= (0, 0): divergingEpoch (0, 0). The follower truncates to 0 either way",
        "fixed in de0468b",
    ),
    Deviation(
        "isolate_isolated_node_counts_as_change",
        "kernels/transition/faults.py:89-94 (change_partition kind 0)",
        "isolating a node that was already isolated counted as a change (a step), although "
        "the docstring says False when nothing would change (a scheduler convention)",
        "(not protocol) the action should count as not enabled",
        "fixed in de0468b",
    ),
    Deviation(
        "vote_uniqueness_step_off_by_one",
        "kernels/properties/checkers.py report via record_vote_granted (election.py handle_vote_request)",
        "a second vote caught by the vote handler was numbered with the step count before the "
        "step (one less than the same violation found by the after-step checks)",
        "(reporting convention) number it as the step that caused it",
        "fixed in e1d7601",
    ),
    # Found by the swarm once voter changes made single-voter sets reachable (both models
    # had it: the reference was written to the same reading of Kafka).
    Deviation(
        "restart_follower_that_voted_for_itself",
        "kernels/transition/faults.py (restart_node, `VOTED_ID == i` branch)",
        "a Candidate that went on to follow the winner of its epoch kept its own vote, and a "
        "restart made it Candidate of that epoch again; with itself the only voter it then "
        "led an epoch that already had a leader (ElectionSafety)",
        "Kafka 3.9: FollowerState.election() is withElectedLeader without the vote, so "
        "QuorumState.initialize restarts it as Follower of that leader. Kafka 4.0 and later "
        "(KAFKA-17642) keep the vote in the Follower's quorum state and restart it as "
        "Candidate of the epoch, as the model first did",
        "not a fix but 3.9's rule, applied to every release by 0b3bf3e; since the release "
        "switch kafka_17642 each release has its own rule, and the 4.0+ one breaks "
        "ElectionSafety in Kafka too: results/findings/kafka-17642-restart-as-candidate.md",
    ),
    # Found while following the KAFKA-17642 finding through Kafka's code (both models).
    Deviation(
        "check_quorum_with_the_leader_outside_a_one_voter_set",
        "kernels/protocol/replication.py check_quorum_enabled (`other_voters != 0`)",
        "a leader that removed itself, leaving one other voter, resigned when that voter "
        "stopped fetching",
        "LeaderState.timeUntilCheckQuorumExpires is Long.MAX_VALUE whenever the voter set "
        "has one member, whether or not the leader is that member: it keeps leading",
        "fixed with the release switches (voter_count > 1)",
    ),
)

# Every open disagreement: what a ReferenceCluster adopts to behave exactly like the kernel.
KERNEL_COMPAT_ALL = frozenset(DEVIATIONS)


def check_names(names) -> frozenset:
    names = frozenset(names)
    unknown = names - KERNEL_COMPAT_ALL
    if unknown:
        raise ValueError(f"unknown kernel_compat names (open ones: {sorted(KERNEL_COMPAT_ALL)}): "
                         f"{sorted(unknown)}")
    return names
