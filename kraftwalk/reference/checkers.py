"""The safety invariants, written from their definitions over the full history.

Logs are compared entry by entry. The history the protocol never reads (the
"ghost" state) is kept in plain dicts and lists by :class:`History`:

* ``leader_of_epoch[e]``     the first node seen leading epoch e
* ``votes[(voter, d, e)]``    the candidate voter key (voter, d) granted its (standard)
                              vote to in e (a replaced disk is a new key, with no votes)
* ``committed``               the committed log as first established: every entry a
                              voter's HW covered, in the order its HW first covered it
* ``committed_in[k]``         the epoch of the node whose HW first covered offset k
* ``last_led[i]``             (epoch, log) of node i when last seen leading
* ``prev_epoch[i]``           node i's epoch after the previous step
* ``top_hw``                  (epoch, HW) of the highest-epoch leader last seen
* ``prev_snapshot[i]``        node i's latest snapshot end after the previous step
* ``loaded_as``               (node, role) of each snapshot installed in this step
* ``commit_voters``           the voter set (in its own view) of the node that last grew
                              the committed log, empty before any (KIP-853)
* ``hw_voters[i]``            leader i's voter keys ``{id: directory id}`` when its HW
                              last moved up (missing: the bootstrap voters, directory id 0)

The histories of one node's disk (its previous epoch, what it last led, its latest
snapshot) start again when it loses its disk (``disk_replaced``).

It is kept whether or not a check is enabled, so switching one check off never
changes what another sees. Checks run after every step in a fixed order (node by
node, then the cluster-wide ones) and the first violation found is the one kept,
as the kernel does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from kraftwalk.kernels.properties.checkers import (
    AT_MOST_ONE_UNCOMMITTED_VOTER_SET, CANDIDATE_IS_VOTER, COMMIT_CURRENT_EPOCH, ELECTION_SAFETY,
    EPOCH_MONOTONIC,
    HIGH_WATERMARK_MONOTONIC, HIGH_WATERMARK_VALID, INVARIANT_NAMES, LEADER_APPEND_ONLY,
    LEADER_COMPLETENESS, LEADER_NEVER_LOADS_SNAPSHOT, LOG_EPOCHS_MONOTONIC, LOG_MATCHING,
    MAJORITY_REACHED_HIGH_WATERMARK, OBSERVER_CONSISTENCY, QUORUM_OVERLAP,
    SNAPSHOT_AT_LOG_START, SNAPSHOT_CONSISTENT, SNAPSHOT_MONOTONIC, STATE_MACHINE_SAFETY,
    VOTE_UNIQUENESS,
)
from kraftwalk.kernels.features import DISK_LOSS, RECONFIG, SNAPSHOTS
from kraftwalk.kernels.state.layout import CANDIDATE, LEADER, PROSPECTIVE, RESIGNED

from .voters import (
    is_voter, is_voters_record, majorities_intersect, majority_of, voter_keys, voters,
)


@dataclass(frozen=True)
class Violation:
    invariant: int
    step: int
    node_a: int = -1
    node_b: int = -1
    epoch: int = -1
    offset: int = -1

    @property
    def name(self) -> str:
        return INVARIANT_NAMES[self.invariant]

    def __str__(self) -> str:
        return (f"{self.name} at step {self.step} (nodes {self.node_a}, {self.node_b}, "
                f"epoch {self.epoch}, offset {self.offset})")


def first_difference(a: list, b: list, length: int) -> int:
    """First offset below ``length`` where the two logs differ (``length`` if none)."""
    for k in range(length):
        if k >= len(a) or k >= len(b) or a[k] != b[k]:
            return k
    return length


class History:
    """Ghost state: what happened so far, as the checkers need it."""

    def __init__(self, n_nodes: int):
        self.leader_of_epoch: dict[int, int] = {}
        self.votes: dict[tuple, int] = {}
        self.committed: list = []
        self.committed_in: list[int] = []
        self.last_led: dict[int, tuple] = {}
        self.prev_epoch = [0] * n_nodes
        self.top_hw = (-1, -1)
        self.prev_snapshot = [0] * n_nodes
        self.loaded_as: list[tuple] = []
        self.commit_voters: frozenset = frozenset()
        self.hw_voters: dict[int, dict] = {}
        self.during_step: list[Violation] = []   # found by a protocol handler mid-step
        self.logs_before: list = []

    # ---- called by the protocol ------------------------------------------------------
    def begin_step(self, c) -> None:
        """Remember every log as it was before the step (to tell what the step wrote)."""
        self.logs_before = [list(node.log) for node in c.nodes]

    def written_from(self, node) -> int:
        """First offset of node's log that the current step (re)wrote; its log end if none."""
        before = self.logs_before[node.id] if self.logs_before else []
        return first_difference(before, node.log, node.log_end)

    def hw_raised(self, leader, keys: dict) -> None:
        """A leader's HW moved up, counted over its voter keys then, ``{id: directory id}``."""
        self.hw_voters[leader.id] = dict(keys)

    def disk_replaced(self, node) -> None:
        """Node's disk was replaced: what the per-node histories compare with next is the
        new, empty disk (epoch 0, nothing led, no snapshot)."""
        i = node.id
        self.prev_epoch[i] = 0
        self.last_led.pop(i, None)
        self.prev_snapshot[i] = 0
        self.hw_voters.pop(i, None)
        self.loaded_as = [x for x in self.loaded_as if x[0] != i]

    def loaded_snapshot(self, node) -> None:
        """A node installs a downloaded snapshot (in the role it has now)."""
        self.loaded_as.append((node.id, node.role))

    def vote_granted(self, c, voter: int, candidate: int, epoch: int) -> None:
        """A standard vote was granted. Recorded by the handler itself, so a second vote is
        caught even when the voter's persisted vote is not overwritten."""
        prev = self.votes.setdefault((voter, c.nodes[voter].dir, epoch), candidate)
        if prev != candidate:
            # found while the step runs, before it is counted: numbered as its checks are
            self.during_step.append(
                Violation(VOTE_UNIQUENESS, c.steps + 1, voter, candidate, epoch, -1))

    # ---- the committed log -----------------------------------------------------------
    def reach_before(self, epoch: int) -> int:
        """1 + the highest offset committed in an epoch < ``epoch``: a leader of ``epoch``
        must hold the committed log up to there."""
        reach = 0
        for k, by in enumerate(self.committed_in):
            if by < epoch:
                reach = k + 1
        return reach

    def extend_committed(self, c, node, upto: int) -> None:
        """The committed log grows to ``upto`` with ``node``'s entries (its HW covers them)."""
        self.commit_voters = frozenset(voters(c, node))
        for k in range(len(self.committed), upto):
            self.committed.append(node.log[k])
            self.committed_in.append(node.epoch)


def check_invariants(c, checks: int) -> Optional[Violation]:
    """Check every invariant after a step; return the first violation found in it (None if
    none). ``checks`` is the feature mask: bit i enables invariant i's report.

    The order decides which violation is kept when one step breaks several invariants
    (the kernel's order): first what a protocol handler found mid-step; then node by node
    its own invariants (EpochMonotonic, VoteUniqueness, CandidateIsVoter, and for a leader
    ElectionSafety, LeaderAppendOnly, QuorumOverlap if newly leading, LeaderCompleteness,
    CommitCurrentEpoch; HighWatermarkValid; StateMachineSafety/ObserverConsistency, and
    QuorumOverlap if it grows the committed log; the snapshot invariants;
    AtMostOneUncommittedVoterSet; LogEpochsMonotonic and LogMatching for the entries it
    wrote in this step);
    then every leader again (LeaderCompleteness if the committed log grew in this step,
    MajorityReachedHighWatermark); last HighWatermarkMonotonic."""
    h: History = c.history
    found: list[Violation] = []
    step = c.steps

    def report(inv, a=-1, b=-1, epoch=-1, offset=-1):
        if checks & (1 << inv) and not found:
            found.append(Violation(inv, step, a, b, epoch, offset))

    for v in h.during_step:
        if checks & (1 << v.invariant) and not found:
            found.append(v)
    h.during_step.clear()

    leaders = [node for node in c.nodes if node.up and node.role == LEADER]
    extended = False
    for node in c.nodes:
        i, e = node.id, node.epoch

        # EpochMonotonic: a node's (persisted) epoch never goes down, crashes included.
        if e < h.prev_epoch[i]:
            report(EPOCH_MONOTONIC, i, -1, e)
        h.prev_epoch[i] = e

        # VoteUniqueness: one vote per voter per epoch (from the persisted vote).
        if is_voter(c, node) and node.voted_id is not None:
            prev = h.votes.setdefault((i, node.dir, e), node.voted_id)
            if prev != node.voted_id:
                report(VOTE_UNIQUENESS, i, node.voted_id, e)

        # CandidateIsVoter: only a voter (in its own view) runs for election.
        if node.up and node.role in (PROSPECTIVE, CANDIDATE) and not is_voter(c, node):
            report(CANDIDATE_IS_VOTER, i, -1, e)

        if node in leaders:
            # ElectionSafety: at most one leader per epoch, over the whole history.
            first = h.leader_of_epoch.setdefault(e, i)
            if first != i:
                report(ELECTION_SAFETY, first, i, e)

            # LeaderAppendOnly: while a node leads one epoch (across crashes too), its log
            # only grows: the log it had when last seen leading is a prefix of its log now.
            led_epoch, led_log = h.last_led.get(i, (-1, []))
            if led_epoch == e and node.log[:len(led_log)] != led_log:
                report(LEADER_APPEND_ONLY, i, -1, e,
                       first_difference(led_log, node.log, len(led_log)))

            # QuorumOverlap, for a new leader: the majority that elected it (of its voter
            # set) meets the majority that committed the latest committed entry, so it
            # holds that entry.
            if (checks & RECONFIG and led_epoch != e and h.commit_voters
                    and not majorities_intersect(voters(c, node), h.commit_voters)):
                report(QUORUM_OVERLAP, i, -1, e, -1)
            h.last_led[i] = (e, list(node.log))

            check_leader_completeness(h, node, report)

            # CommitCurrentEpoch: the leader's HW ends on an entry of its own epoch.
            hw = node.hw
            if hw is not None and 0 < hw <= node.log_end and node.log[hw - 1][0] != e:
                report(COMMIT_CURRENT_EPOCH, i, -1, e, hw - 1)

        # HighWatermarkValid: HW <= log end.
        if node.hw is not None and node.hw > node.log_end:
            report(HIGH_WATERMARK_VALID, i, -1, e, node.hw)

        # StateMachineSafety (voters) / ObserverConsistency (observers): what a node's HW
        # covers is a prefix of the committed log; a voter's HW past it extends it.
        covered = -1 if node.hw is None else min(node.hw, node.log_end)
        if covered > 0:
            clen = len(h.committed)
            m = min(covered, clen)
            inv = STATE_MACHINE_SAFETY if is_voter(c, node) else OBSERVER_CONSISTENCY
            if node.log[:m] != h.committed[:m]:
                report(inv, i, -1, e, first_difference(node.log, h.committed, m))
            elif covered > clen:
                # the committing node is a voter, or a leader that removed itself (it
                # still leads until its removal commits, then resigns at once)
                if is_voter(c, node) or node in leaders or node.role == RESIGNED:
                    # QuorumOverlap, for a commit: its majority meets the previous one's.
                    if (checks & RECONFIG and h.commit_voters
                            and not majorities_intersect(voters(c, node), h.commit_voters)):
                        report(QUORUM_OVERLAP, i, -1, e, covered - 1)
                    h.extend_committed(c, node, covered)
                    extended = True
                else:
                    report(OBSERVER_CONSISTENCY, i, -1, e, clen)

        if checks & SNAPSHOTS:
            check_snapshots(h, node, report)

        # AtMostOneUncommittedVoterSet: past the committed log, at most one VotersRecord
        # (one voter change at a time).
        if checks & RECONFIG:
            pending = [k for k in range(len(h.committed), node.log_end)
                       if is_voters_record(node.log[k][1])]
            if len(pending) > 1:
                report(AT_MOST_ONE_UNCOMMITTED_VOTER_SET, i, -1, e, pending[1])

        # LogEpochsMonotonic and LogMatching, for the entries this node wrote in this step
        # (the others were checked when they were written).
        log = node.log
        for k in range(max(h.written_from(node), 1), len(log)):
            if log[k][0] < log[k - 1][0]:
                report(LOG_EPOCHS_MONOTONIC, i, -1, log[k][0], k)
                break
        bad = log_matching_violation(c.nodes, node, h.written_from(node))
        if bad is not None:
            report(LOG_MATCHING, *bad)

    top = None
    for node in leaders:
        if top is None or node.epoch > top.epoch:
            top = node
        if extended:
            check_leader_completeness(h, node, report)
        # MajorityReachedHighWatermark: a majority of voters hold [0, HW) as the leader does.
        # With voter changes, of the set the HW was counted over when it last moved: a
        # voter added since need not hold it yet (a majority of the old set meets every
        # majority of the new one). With disk loss, a voter key whose disk is gone counts
        # as holding it: that key can never vote or fetch again, so it is in no majority
        # that lacks the entries.
        hw = node.hw
        if hw is not None and 0 < hw <= node.log_end:
            counted = voter_keys(c, node)
            if checks & RECONFIG:
                counted = h.hw_voters.get(node.id, dict.fromkeys(c.bootstrap_voters, 0))
            holders = sum(1 for j, d in counted.items()
                          if c.nodes[j].log[:hw] == node.log[:hw]
                          or (checks & DISK_LOSS and c.nodes[j].dir != d))
            if holders < majority_of(counted):
                report(MAJORITY_REACHED_HIGH_WATERMARK, node.id, -1, node.epoch, hw - 1)

    # HighWatermarkMonotonic (Kafka's MonotonicHighWatermark): the HW of the highest-epoch
    # leader never goes down; a leader of a lower epoch than one already seen is ignored.
    if top is not None and top.hw is not None:
        seen_epoch, seen_hw = h.top_hw
        if top.epoch >= seen_epoch:
            if top.hw < seen_hw:
                report(HIGH_WATERMARK_MONOTONIC, top.id, -1, top.epoch, top.hw)
            h.top_hw = (top.epoch, top.hw)

    # LogMatching over every pair of logs, from the definition: a safety net under the
    # incremental check above (it must never find anything that one missed).
    if not found:
        bad = log_matching_violation(c.nodes)
        if bad is not None:
            report(LOG_MATCHING, *bad)

    h.loaded_as.clear()
    return found[0] if found else None


def check_snapshots(h: History, node, report) -> None:
    """The snapshot invariants of one node (KIP-630)."""
    i, e = node.id, node.epoch
    end, epoch = node.latest

    # LeaderNeverLoadsSnapshot: only a follower installs a downloaded snapshot.
    if (i, LEADER) in h.loaded_as:
        report(LEADER_NEVER_LOADS_SNAPSHOT, i, -1, e, end)

    # SnapshotMonotonic: the latest snapshot never moves back, crashes included.
    if end < h.prev_snapshot[i]:
        report(SNAPSHOT_MONOTONIC, i, -1, e, end)
    h.prev_snapshot[i] = end

    # SnapshotConsistent: the snapshot's content is the committed log up to its end, and
    # its epoch that of the committed entry just below the end.
    if end > 0:
        content = list(node.snapshots[node.latest])
        m = min(end, len(h.committed))
        if content[:m] != h.committed[:m]:
            report(SNAPSHOT_CONSISTENT, i, -1, e, first_difference(content, h.committed, m))
        elif end > len(h.committed):
            report(SNAPSHOT_CONSISTENT, i, -1, e, len(h.committed))
        elif epoch != h.committed[end - 1][0]:
            report(SNAPSHOT_CONSISTENT, i, -1, e, end - 1)

    # SnapshotAtLogStart: a running node's log starts at a snapshot it holds.
    start = node.log_start
    if start > 0 and node.up and (start > end or start > node.log_end
                                  or node.start_epoch != node.log[start - 1][0]):
        report(SNAPSHOT_AT_LOG_START, i, -1, e, start)


def check_leader_completeness(h: History, node, report) -> None:
    """LeaderCompleteness: the entries committed in epochs before the leader's are in its log."""
    need = h.reach_before(node.epoch)
    if node.log[:need] != h.committed[:need]:
        report(LEADER_COMPLETENESS, node.id, -1, node.epoch,
               first_difference(node.log, h.committed, need))


def log_matching_violation(nodes, only=None, from_offset: int = 0) -> Optional[tuple]:
    """(i, j, epoch, first differing offset) for a pair of logs that breaks LogMatching:
    an entry of the same epoch at the same offset, but different logs up to there.
    With ``only``: pairs with that node, at offsets >= ``from_offset`` of its log."""
    firsts = nodes if only is None else [only]
    for a in firsts:
        for b in nodes:
            if b is a or (only is None and b.id < a.id):
                continue
            length = min(a.log_end, b.log_end)
            d = first_difference(a.log, b.log, length)
            for k in range(max(d, from_offset), length):
                if a.log[k][0] == b.log[k][0]:
                    return (a.id, b.id, a.log[k][0], d)
    return None
