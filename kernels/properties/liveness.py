"""Liveness ("eventually") properties of timed walks, and who leads whom.

Each property has a stable name and an id after the safety invariants' (the next
bits of the same check mask), is recorded like a safety violation (invariant,
step, nodes, epoch) and replays like one. They need time, so only the timed
chooser checks them:

HealedClusterRecovers          once every fault has healed, a leader known to a
                               majority of voters and a new commit come within
                               the liveness bound (TigerBeetle's VOPR liveness mode)
CutOffLeaderResigns            a leader that no majority of voters can reach (not
                               even one by one, over the time since it was cut off)
                               stops leading within check quorum (1.5 x fetch
                               timeout) plus a slack of the cut, or of the one
                               restart of its timer that fetches from before the
                               cut can still make
PreVoteIsolatedNeverCandidate  with pre-vote, a voter that has not had two-way
                               links with a majority since it became Prospective
                               never becomes Candidate (KIP-996's promise)
HealthyLeaderKept              in a cluster with no fault yet, no loss and small
                               latencies, a follower of a leader that every voter
                               knows never times out
ReplicasCatchUp                once every fault has healed, every live replica,
                               observers included, learns of a commit made after
                               the heal (its high watermark passes it) within the
                               liveness bound
RemovedVoterStaysQuiet         a vote request from a node outside a voter's
                               committed voter set never raises that voter's epoch
                               (with voter changes on)
"""
from ..jit import kernel

from kraftwalk.vocabulary.properties import LIVENESS_ID, LIVENESS_NAMES

from .checkers import N_INVARIANTS, report
from ..state.clock import (
    CATCH_UP_DEADLINE, CATCH_UP_TARGET, CUT_RESTARTED, CUT_SINCE, CUT_UNION, HEALED_AT, HEALED_COMMIT, INF, KNOWN, LIVE_DEADLINE, NOW, PRE_REACH,
    TS_VIOLATION_AT,
)
from ..state.layout import (
    EPOCH, FOLLOWER, F_SRC, F_TYPE, G_COMMIT_LEN, HW, LEADER, LEADER_ID, LINKS, PROSPECTIVE,
    P_NODES, ROLE, UP, VOTERS_AT, VOTE_REQUEST,
)
from kraftwalk.vocabulary.timing import TP_CHECK_QUORUM_FACTOR, TP_CUT_OFF_SLACK, TP_FETCH_TIMEOUT
from ..state.voters import checks_quorum, in_voters, majority, popcount, voter_count, voters

# Ids of the liveness properties (after the invariants'): the registry's order
# (kraftwalk.vocabulary.properties).
HEALED_CLUSTER_RECOVERS = LIVENESS_ID["HealedClusterRecovers"]
CUT_OFF_LEADER_RESIGNS = LIVENESS_ID["CutOffLeaderResigns"]
PRE_VOTE_ISOLATED_NEVER_CANDIDATE = LIVENESS_ID["PreVoteIsolatedNeverCandidate"]
HEALTHY_LEADER_KEPT = LIVENESS_ID["HealthyLeaderKept"]
REPLICAS_CATCH_UP = LIVENESS_ID["ReplicasCatchUp"]
REMOVED_VOTER_STAYS_QUIET = LIVENESS_ID["RemovedVoterStaysQuiet"]
N_LIVENESS = len(LIVENESS_NAMES)
ALL_LIVENESS = ((1 << N_LIVENESS) - 1) << N_INVARIANTS


@kernel
def violate(w, c, prop, a, b, epoch, checks):
    """Record liveness property ``prop`` as violated now (if its check is on)."""
    if checks & (1 << prop) and c.t[TS_VIOLATION_AT] < 0:
        report(w, prop, a, b, epoch, -1)
        c.t[TS_VIOLATION_AT] = c.t[NOW]


@kernel
def link(w, i, j):
    return (w.node[LINKS, i] >> j) & 1


@kernel
def inbound_voters(w, i):
    """The voters (i included) that are up and can send to node i, as a mask."""
    mask = 0
    vs = voters(w, i)
    for j in range(w.scal[P_NODES]):
        if (vs >> j) & 1 and (j == i or (w.node[UP, j] == 1 and link(w, j, i))):
            mask |= 1 << j
    return mask


@kernel
def two_way_voters(w, i):
    """Voters (i included) that are up and linked with node i both ways."""
    count = 0
    vs = voters(w, i)
    for j in range(w.scal[P_NODES]):
        if (vs >> j) & 1 and (j == i or (w.node[UP, j] == 1 and link(w, j, i)
                                         and link(w, i, j))):
            count += 1
    return count


@kernel
def leader_known(w, everyone):
    """The leader that a majority of voters (every voter, if ``everyone``) knows and
    follows in its epoch, itself included; -1 if none."""
    n = w.scal[P_NODES]
    for i in range(n):
        if w.node[UP, i] == 0 or w.node[ROLE, i] != LEADER:
            continue
        need = voter_count(w, i) if everyone else majority(w, i)
        e = w.node[EPOCH, i]
        vs = voters(w, i)
        count = 0
        for j in range(n):
            if not (vs >> j) & 1:
                continue
            if j == i or (w.node[UP, j] == 1 and w.node[ROLE, j] == FOLLOWER
                          and w.node[EPOCH, j] == e and w.node[LEADER_ID, j] == i):
                count += 1
        if count >= need:
            return i
    return -1


@kernel
def start_cut_off(w, c, i):
    """Leader i's cut-off clock starts now, with the voters that reach it now."""
    c.node[CUT_SINCE, i] = c.t[NOW]
    c.node[CUT_UNION, i] = inbound_voters(w, i)
    c.node[CUT_RESTARTED, i] = 0


@kernel
def reached_by(w, c, i, mask):
    """Voters ``mask`` reached cut-off leader i. Check quorum counts each voter that
    fetched since its timer last restarted, however long ago: voters that reach the
    leader one after another (one crashes, another restarts) make a majority as surely
    as voters that reach it at once. Once those since the cut are a majority, the
    clock starts again."""
    c.node[CUT_UNION, i] |= mask
    if popcount(c.node[CUT_UNION, i] & voters(w, i)) >= majority(w, i):
        start_cut_off(w, c, i)


@kernel
def check_quorum_restarted(c, i):
    """Leader i's check-quorum timer restarted. Once per cut that is Kafka's promise
    kept: fetches from before the cut, still in LeaderState's fetchedVoters, can
    complete a majority with a voter that still reaches it, and the timer runs again
    from then. A second restart cannot come from the voters that still reach it (too
    few), so the clock moves with the first only."""
    if c.node[CUT_SINCE, i] >= 0 and c.node[CUT_RESTARTED, i] == 0:
        c.node[CUT_SINCE, i] = c.t[NOW]
        c.node[CUT_RESTARTED, i] = 1


@kernel
def track_reachability(w, c):
    """After links or liveness changed: start, extend or clear each leader's cut-off
    clock, and note each prospective voter that now reaches a majority both ways."""
    for i in range(w.scal[P_NODES]):
        leads = w.node[UP, i] == 1 and w.node[ROLE, i] == LEADER and checks_quorum(w, i)
        inbound = inbound_voters(w, i)
        if leads and popcount(inbound) < majority(w, i):
            if c.node[CUT_SINCE, i] < 0:
                start_cut_off(w, c, i)
            else:
                reached_by(w, c, i, inbound)
        else:
            c.node[CUT_SINCE, i] = -1
        if w.node[ROLE, i] == PROSPECTIVE and two_way_voters(w, i) >= majority(w, i):
            c.node[PRE_REACH, i] = 1


@kernel
def cut_off_deadline(c, i):
    """When leader i, cut off since CUT_SINCE, must have resigned by."""
    if c.node[CUT_SINCE, i] < 0:
        return INF
    cq = c.tp[TP_CHECK_QUORUM_FACTOR] * c.tp[TP_FETCH_TIMEOUT]
    return c.node[CUT_SINCE, i] + int(cq) + int(c.tp[TP_CUT_OFF_SLACK]) + 1


@kernel
def check_cut_off(w, c, i, checks):
    if w.node[UP, i] == 1 and w.node[ROLE, i] == LEADER:
        violate(w, c, CUT_OFF_LEADER_RESIGNS, i, -1, w.node[EPOCH, i], checks)
    c.node[CUT_SINCE, i] = -1


@kernel
def removed_sender(w, t, m):
    """The sender of vote request ``m`` to running node t, where it is outside t's
    voter set and that set is committed (t's latest VotersRecord is below its high
    watermark: a removal t knows is settled); -1 otherwise. RemovedVoterStaysQuiet
    watches whether the request raises t's epoch."""
    s = m[F_SRC]
    if (m[F_TYPE] != VOTE_REQUEST or w.node[UP, t] == 0 or in_voters(w, t, s)
            or w.node[VOTERS_AT, t] >= w.node[HW, t]):
        return -1
    return s


@kernel
def check_removed_quiet(w, c, t, s, epoch_before, checks):
    if s >= 0 and w.node[EPOCH, t] > epoch_before:
        violate(w, c, REMOVED_VOTER_STAYS_QUIET, t, s, w.node[EPOCH, t], checks)


@kernel
def recovered(w, c):
    """HealedClusterRecovers holds: a leader known to a majority and a commit since the heal."""
    return c.t[KNOWN] >= 0 and w.scal[G_COMMIT_LEN] > c.t[HEALED_COMMIT]


@kernel
def check_recovery_deadline(w, c, checks):
    if c.t[HEALED_AT] >= 0 and not recovered(w, c):
        violate(w, c, HEALED_CLUSTER_RECOVERS, c.t[KNOWN], -1, -1, checks)
    c.t[LIVE_DEADLINE] = INF


@kernel
def caught_up(w, c):
    """ReplicasCatchUp holds: every running node's high watermark has reached the
    target; else the first one behind (-1: all caught up)."""
    for i in range(w.scal[P_NODES]):
        if w.node[UP, i] == 1 and w.node[HW, i] < c.t[CATCH_UP_TARGET]:
            return i
    return -1


@kernel
def check_catch_up_deadline(w, c, checks):
    behind = caught_up(w, c)
    if behind >= 0:
        violate(w, c, REPLICAS_CATCH_UP, behind, -1, w.node[EPOCH, behind], checks)
    c.t[CATCH_UP_DEADLINE] = INF
