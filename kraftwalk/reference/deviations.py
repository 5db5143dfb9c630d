"""Where the kernel and Apache Kafka (as this model reads it) disagree.

The reference model follows Kafka (apache/kafka ``raft/``, KafkaRaftClient and
QuorumState at commit 0bce3346, the newest stored). Each entry below is one
place where the Numba kernel does something else. A ``ReferenceCluster`` built
with ``kernel_compat={name, ...}`` does what the kernel does for those names,
so the differential test can check everything else while a disagreement stays
open. Modelling conventions (message slot order, the action encoding, counters,
what the untimed model lets happen "at any time") are not listed here: the
reference mirrors them.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Deviation:
    name: str
    kernel: str      # where the kernel does it
    kernel_does: str
    kafka_does: str


DEVIATIONS: dict[str, Deviation] = {d.name: d for d in (
    Deviation(
        "restart_candidate_keeps_leader",
        "kernels/faults.py restart_node (the `VOTED_ID == i` branch)",
        "a node that restarts as Candidate (it had voted for itself in its epoch) keeps the "
        "leader id it had learned in that epoch",
        "QuorumState.initialize builds a CandidateState, whose election() is "
        "withVotedCandidate (no leader), and writes it back durably: the leader is forgotten. "
        "Observable: the restarted Candidate's vote requests are answered with leader L and "
        "maybeHandleCommonResponse makes it Follower of L at once (!hasLeader); the kernel "
        "keeps it Candidate, answers with leader L, and a lost pre-vote later makes it "
        "Follower where Kafka would go Unattached",
    ),
    Deviation(
        "prospective_refollows_known_leader",
        "kernels/quorum_state.py maybe_transition (`LEADER_ID == leader and role != FOLLOWER`)",
        "a Prospective that already knows leader L (it came from Follower of L) becomes "
        "Follower of L again on a same-epoch BeginQuorumEpoch/EndQuorumEpoch (or error "
        "response) naming L",
        "maybeTransition only re-follows a known leader when the message carries more "
        "endpoints than the state knows; ProspectiveState keeps the leader's endpoints from "
        "FollowerState (transitionToProspective passes state.leaderEndpoints()), so the "
        "Prospective stays Prospective (only Unattached/Candidate report empty endpoints)",
    ),
    Deviation(
        "no_observer_switch_to_leader",
        "kernels/replication.py handle_fetch_response (no maybeSwitchObserverFetchToLeader)",
        "an Unattached observer that still knows leader L (after its fetch timeout) ignores "
        "a successful FetchResponse from L: maybe_handle_common_response does not re-follow "
        "a known leader, and the role check then drops the records and the HW",
        "handleFetchResponse first calls maybeSwitchObserverFetchToLeader: same epoch, "
        "Unattached, leader id present -> transitionToFollower(leader); the response is then "
        "handled as a follower's (records appended, HW updated, fetch timer reset)",
    ),
    Deviation(
        "no_single_voter_restart_election",
        "kernels/faults.py restart_node",
        "a single voter restarts in the role its persisted state gives (Unattached, Resigned "
        "or Candidate) and waits for a timeout action",
        "KafkaRaftClient.initialize: when it is the only voter and Unattached/Follower/"
        "Resigned it calls transitionToProspective, which short-circuits to Candidate (epoch "
        "+ 1) and Leader; a restarted Candidate runs onBecomeCandidate, which makes it Leader "
        "at once",
    ),
    Deviation(
        "empty_leader_log_diverging_epoch",
        "kernels/replication.py handle_fetch_request (`e == 0 and end == 0 and lfe > 0`)",
        "a leader with an EMPTY log (only reachable with MUT_RESTARTED_LEADER) answers a "
        "Fetch with offset > 0 with divergingEpoch (lastFetchedEpoch, 0)",
        "KafkaRaftLog.endOffsetForEpoch on an empty epoch cache returns (LEO, lastFetchedEpoch) "
        "= (0, 0), so the diverging epoch is (0, 0); the follower truncates to 0 either way",
    ),
    Deviation(
        "vote_uniqueness_step_off_by_one",
        "kernels/checkers.py record_vote_granted -> report (V_STEP = S_STEPS), called from "
        "election.py handle_vote_request before trace._apply_and_check / walk.run_walk "
        "increment S_STEPS",
        "a second vote caught by the vote handler is reported with step = (steps before this "
        "one); every other violation, including the same double vote caught by the "
        "persisted-vote scan, gets the 1-based step number",
        "(reporting convention, not protocol) the violation's step should be the step that "
        "caused it, consistently",
    ),
)}

# Every known disagreement: what a ReferenceCluster adopts to behave exactly like the kernel.
KERNEL_COMPAT_ALL = frozenset(DEVIATIONS)


def check_names(names) -> frozenset:
    names = frozenset(names)
    unknown = names - KERNEL_COMPAT_ALL
    if unknown:
        raise ValueError(f"unknown kernel_compat names: {sorted(unknown)}")
    return names
