"""One step of a timed walk: apply an action through the transition relation, check
it, then read what the handlers asked of their timers.

The handlers never see a clock. They leave timer intents in the node they changed
(``layout.INTENT``); :func:`after_step` turns those into deadlines as Kafka's
EpochState classes would (FollowerState's fetch timer, CandidateState's election
timer and backoff, LeaderState's check-quorum timer, ...), gives each new message
a delivery time, and keeps the per-link request bookkeeping of Kafka's
RequestManager (one outstanding request per destination, resent after the request
timeout, a retry backoff after an error).
"""
import numpy as np

from ..jit import kernel

from ..properties.checkers import check_after_step
from ..state.clock import (
    BURST_END, BURST_MUTED, CUT_SINCE, DL_CHECK_QUORUM, DL_FLUSH, DL_POLL, DL_TIMER, ELECTION_AT,
    INF, LAST_DUE, LAST_FETCH, APPEND_AT,
    LOST, NEXT_TRY, NOW, PRE_REACH, PREV_ROLE, RETRIES, ROLES_CHANGED, TIMER_KIND, TS_DISRUPTIVE,
    TS_FAILED_PRE_VOTES, TS_LOST_ELECTIONS, due_col, election_backoff, election_timeout,
    end_epoch_backoff, fault_happens, latency, parked_col,
)
from ..features import PRE_VOTE, RECONFIG, TRACE
from ..state.layout import (
    F_FETCH_OFFSET,
    BEGIN_QUORUM_EPOCH_RESPONSE, CANDIDATE, END_QUORUM_EPOCH_RESPONSE, EPOCH, FETCH_REQUEST,
    FETCH_RESPONSE,
    FOLLOWER, F_CORR, F_DST, F_SRC, F_TYPE, HW, INFLIGHT, INTENT, INTENT_ARG, I_BACKOFF,
    I_CHECK_QUORUM, I_ELECTION_RESET, I_END_EPOCH, I_FETCHED, I_FETCH_RESET, I_KEEP_TIMER, I_ROLE, LEADER, LOG_END, N_MSGS, PROSPECTIVE,
    P_NODES, RESIGNED, ROLE, S_STEPS, UNATTACHED, UP, VOTE_REQUEST, VOTE_RESPONSE,
)
from ..properties.liveness import (
    PRE_VOTE_ISOLATED_NEVER_CANDIDATE, check_quorum_restarted, check_removed_quiet,
    inbound_voters, reached_by, removed_sender, two_way_voters, violate,
)
from ..state.voters import checks_quorum, in_voters, is_voter, majority, popcount
from ..protocol.replication import flush_enabled
from ..state.rng import rand_unit
from kraftwalk.vocabulary.timing import (
    TP_ELECTION_LOSS, LOSS_WAIT, TP_CHECK_QUORUM_FACTOR, TP_FETCH_TIMEOUT, TP_FLUSH_DELAY, TP_LOSS,
    TP_LOSS_BURST_RATE, TP_RANDOM_FETCH_TIMEOUT, TP_RESIGNED_KEEPS_TIME, TP_OBSERVER_FETCH,
    OBSERVER_FETCH_BOOTSTRAP,
    TP_FETCH_PURGATORY, PURGATORY_HW,
)
from ..transition import (
    FAM_DELIVER, FAM_DUPLICATE, FAM_LOSE, FAM_PARTITION, FAM_SEND, do_action,
    message_fingerprint, node_family_enabled, request_targets, target_enabled, touched_node,
)


@kernel
def is_response(t):
    return (t == VOTE_RESPONSE or t == FETCH_RESPONSE or t == BEGIN_QUORUM_EPOCH_RESPONSE
            or t == END_QUORUM_EPOCH_RESPONSE)


@kernel
def follower_timeout(w, c):
    """A follower's fetch timer; Raft's randomized election timer in a Raft profile."""
    if c.tp[TP_RANDOM_FETCH_TIMEOUT] != 0.0:
        return election_timeout(w, c)
    return np.int64(c.tp[TP_FETCH_TIMEOUT])


@kernel
def fetch_timer(w, c, i):
    """When node i, just made Follower or fetched successfully, next times out: a voter
    runs an election then; an observer of 3.9-4.1 turns to the bootstrap voters, and
    from 4.2 (KAFKA-19354) its fetch timeout does nothing."""
    if is_voter(w, i):
        return c.t[NOW] + follower_timeout(w, c)
    if np.int64(c.tp[TP_OBSERVER_FETCH]) == OBSERVER_FETCH_BOOTSTRAP:
        return c.t[NOW] + np.int64(c.tp[TP_FETCH_TIMEOUT])
    return INF


@kernel
def check_quorum_timeout(c):
    return np.int64(c.tp[TP_CHECK_QUORUM_FACTOR] * c.tp[TP_FETCH_TIMEOUT])


@kernel
def start_backoff(w, c, i):
    """CandidateState.startBackingOff: the next candidacy waits a random backoff."""
    c.node[TIMER_KIND, i] = 1
    c.node[DL_TIMER, i] = c.t[NOW] + election_backoff(w, c, c.node[RETRIES, i])


@kernel
def enter_role(w, c, i, features):
    """Node i entered a role (or crashed or restarted): its timers start afresh, as a
    new EpochState's do, and its connections are new."""
    now = c.t[NOW]
    n = w.scal[P_NODES]
    for j in range(n):
        c.pair[NEXT_TRY, i, j] = now
        c.pair[LAST_FETCH, i, j] = -INF  # a new LeaderState: nobody has fetched yet
    c.node[DL_TIMER, i] = INF
    c.node[TIMER_KIND, i] = 0
    c.node[DL_CHECK_QUORUM, i] = INF
    c.node[APPEND_AT, i] = INF  # a LeaderState's accumulator goes with it, unwritten
    r = w.node[ROLE, i]
    prev = c.node[PREV_ROLE, i]
    c.node[PREV_ROLE, i] = r
    if w.node[UP, i] == 0:
        c.node[DL_POLL, i] = INF
        c.node[DL_FLUSH, i] = INF
        c.node[PREV_ROLE, i] = -1
        return
    if prev == PROSPECTIVE and r != PROSPECTIVE and r != CANDIDATE:
        c.t[TS_FAILED_PRE_VOTES] += 1
    if prev == CANDIDATE and r != CANDIDATE and r != LEADER:
        c.t[TS_LOST_ELECTIONS] += 1
    if r == CANDIDATE:
        c.node[RETRIES, i] += 1
    elif r != PROSPECTIVE and r != RESIGNED:
        c.node[RETRIES, i] = 0
    if r == PROSPECTIVE and prev != PROSPECTIVE:
        c.node[PRE_REACH, i] = 1 if two_way_voters(w, i) >= majority(w, i) else 0
    if (features & PRE_VOTE and r == CANDIDATE and prev == PROSPECTIVE
            and c.node[PRE_REACH, i] == 0):
        violate(w, c, PRE_VOTE_ISOLATED_NEVER_CANDIDATE, i, -1, w.node[EPOCH, i], features)
    if r == FOLLOWER:
        c.node[DL_TIMER, i] = fetch_timer(w, c, i)
    elif r == LEADER:
        if checks_quorum(w, i):
            c.node[DL_CHECK_QUORUM, i] = now + check_quorum_timeout(c)
    elif is_voter(w, i) or r == RESIGNED:
        # (ResignedState has its election timer whether or not the leader is still a
        # voter: one that removed itself ends its epoch with it, pollResigned)
        c.node[DL_TIMER, i] = now + election_timeout(w, c)
        c.node[ELECTION_AT, i] = c.node[DL_TIMER, i]


@kernel
def pending_until(w, c, i):
    """When node i's earliest unanswered request times out (INF: none is pending)."""
    best = INF
    for j in range(w.scal[P_NODES]):
        if w.peer[INFLIGHT, i, j] != 0 and c.pair[NEXT_TRY, i, j] > c.t[NOW]:
            best = min(best, c.pair[NEXT_TRY, i, j])
    return best


@kernel
def poll_time(w, c, i, features):
    """When node i next has a request to send: the earliest time a target may get a
    new one. A node that fetches (Unattached or Follower) has one Fetch pending at a
    time: it waits for that one's answer or request timeout."""
    if w.node[UP, i] == 0:
        return INF
    tg = request_targets(w, i, features)
    if tg == 0:
        return INF
    if w.node[ROLE, i] == UNATTACHED or w.node[ROLE, i] == FOLLOWER:
        best = pending_until(w, c, i)
        if best < INF:
            return best
    best = INF
    for j in range(w.scal[P_NODES]):
        if (tg >> j) & 1:
            best = min(best, c.pair[NEXT_TRY, i, j])
    return max(best, c.t[NOW])


@kernel
def assign_dues(w, c):
    """Give each message sent by the last step its delivery time (or its loss time):
    latency drawn per message, in order per link."""
    dc = due_col(w)
    now = c.t[NOW]
    loss = c.tp[TP_LOSS]
    if c.t[BURST_END] < INF and c.t[BURST_MUTED] == 0:  # a loss burst is under way
        loss = max(loss, c.tp[TP_LOSS_BURST_RATE])
    for k in range(w.scal[N_MSGS]):
        if w.msgs[k, dc] != 0:
            continue
        s = w.msgs[k, F_SRC]
        d = w.msgs[k, F_DST]
        due = max(now + latency(w, c), c.pair[LAST_DUE, s, d])
        c.pair[LAST_DUE, s, d] = due
        if loss > 0.0 and rand_unit(w.scal) < loss and fault_happens(c, LOST):
            w.msgs[k, dc] = -due
        else:
            w.msgs[k, dc] = due


@kernel
def release_parked(w, c, i, below):
    """The leader's log end, role or (from 4.1) HW changed: the Fetches it holds at an
    offset below ``below`` are answered now (Kafka's fetch purgatory completes a fetch
    once the log end passes its offset, every one on a role change, and from 4.1 on a
    HW change, KAFKA-14145). Only a Fetch at the old log end is held unless
    park-diverging-fetch, so an append releases each one."""
    dc = due_col(w)
    pc = parked_col(w)
    for k in range(w.scal[N_MSGS]):
        if (w.msgs[k, pc] == 1 and w.msgs[k, F_DST] == i and w.msgs[k, dc] > c.t[NOW]
                and w.msgs[k, F_FETCH_OFFSET] < below):
            w.msgs[k, dc] = c.t[NOW]


@kernel
def after_step(w, c, t, resp_from, was_leader, le, hw, role, epoch, up, voted_req,
               features):
    """Turn the intents node t's handlers left into deadlines, and time new messages."""
    now = c.t[NOW]
    if t >= 0:
        it = w.node[INTENT, t]
        w.node[INTENT, t] = 0
        r = w.node[ROLE, t]
        if it & I_ROLE:
            left = c.node[ELECTION_AT, t]
            prev = c.node[PREV_ROLE, t]
            enter_role(w, c, t, features)
            if (it & I_KEEP_TIMER and r == UNATTACHED and is_voter(w, t)
                    and (prev != RESIGNED or c.tp[TP_RESIGNED_KEEPS_TIME] != 0.0)):
                # transitionToUnattached: the election time the role it left had left
                c.node[DL_TIMER, t] = max(left, now)
                c.node[ELECTION_AT, t] = c.node[DL_TIMER, t]
        if (it & I_ELECTION_RESET and not it & I_ROLE
                and (r == UNATTACHED or r == PROSPECTIVE)):
            # a granted vote in the same epoch: a fresh election timer (entering the role
            # in this step drew one already)
            c.node[DL_TIMER, t] = now + election_timeout(w, c)
            c.node[ELECTION_AT, t] = c.node[DL_TIMER, t]
        if it & I_FETCH_RESET and r == FOLLOWER:
            c.node[DL_TIMER, t] = fetch_timer(w, c, t)
            c.node[TIMER_KIND, t] = 0
        if it & I_END_EPOCH and r == FOLLOWER:
            m = w.node[INTENT_ARG, t]
            c.node[DL_TIMER, t] = now + end_epoch_backoff(c, m >> 8, m & 255)
        if (it & I_BACKOFF and r == CANDIDATE and c.node[TIMER_KIND, t] == 0
                and np.int64(c.tp[TP_ELECTION_LOSS]) != LOSS_WAIT):
            start_backoff(w, c, t)  # maybeHandleElectionLoss (4.1 on: waits out its timer)
        if it & I_CHECK_QUORUM and r == LEADER:
            c.node[DL_CHECK_QUORUM, t] = now + check_quorum_timeout(c)
            check_quorum_restarted(c, t)
        if it & I_FETCHED and r == LEADER:
            c.pair[LAST_FETCH, t, w.node[INTENT_ARG, t]] = now
        if (resp_from >= 0 and w.peer[INFLIGHT, t, resp_from] == 0 and not it & I_ROLE
                and r != LEADER):  # (a leader's next BeginQuorumEpoch waits for its timer)
            # RequestManager.onResponseResult: ready again at once. (Kafka backs off only
            # after a response its handler could not use; it uses every error the model
            # sends: FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH,
            # INVALID_VOTER_KEY, SNAPSHOT_NOT_FOUND.)
            c.pair[NEXT_TRY, t, resp_from] = now
        c.node[DL_POLL, t] = poll_time(w, c, t, features)
        if flush_enabled(w, t) and (r == LEADER or not is_voter(w, t)):
            if c.node[DL_FLUSH, t] == INF:
                c.node[DL_FLUSH, t] = now + np.int64(c.tp[TP_FLUSH_DELAY])
        else:
            c.node[DL_FLUSH, t] = INF
        if was_leader and (r != role or w.node[EPOCH, t] != epoch or w.node[UP, t] != up
                           or (w.node[HW, t] != hw
                               and np.int64(c.tp[TP_FETCH_PURGATORY]) == PURGATORY_HW)):
            release_parked(w, c, t, INF)
        elif was_leader and w.node[LOG_END, t] != le:
            release_parked(w, c, t, w.node[LOG_END, t])
        if (was_leader and voted_req and r != LEADER
                and popcount(inbound_voters(w, t)) >= majority(w, t)):
            c.t[TS_DISRUPTIVE] += 1
        if it & I_ROLE or w.node[UP, t] != up:
            c.t[ROLES_CHANGED] = 1  # who leads whom is re-read after the event
    assign_dues(w, c)


@kernel
def timed_act(w, c, f, a, b, trace, features):
    """Apply action (f, a, b), count and check it, and record it (with its time) in
    ``trace`` under the TRACE feature. Returns -1 if it changed nothing, 1 if the
    walk now has a violation, else 0."""
    t = touched_node(w, f, a)
    resp_from = -1
    voted_req = False
    stale_from = -1
    quiet_from = -1
    if f == FAM_DELIVER:
        m = w.msgs[a]
        if features & RECONFIG:
            quiet_from = removed_sender(w, t, m)
        if is_response(m[F_TYPE]) and w.peer[INFLIGHT, m[F_DST], m[F_SRC]] == m[F_CORR]:
            resp_from = m[F_SRC]
        voted_req = m[F_TYPE] == VOTE_REQUEST
        # A Fetch its sender sent before it crashed still counts for check quorum
        # when it arrives: for the leader's cut-off clock, its sender reaches it then.
        if (m[F_TYPE] == FETCH_REQUEST and w.node[UP, m[F_SRC]] == 0
                and in_voters(w, t, m[F_SRC])):
            stale_from = m[F_SRC]
    le = hw = role = epoch = up = 0
    was_leader = False
    if t >= 0:
        le = w.node[LOG_END, t]
        hw = w.node[HW, t]
        role = w.node[ROLE, t]
        epoch = w.node[EPOCH, t]
        up = w.node[UP, t]
        was_leader = up == 1 and role == LEADER
    if f != FAM_DELIVER and f != FAM_LOSE and f != FAM_PARTITION:
        if not node_family_enabled(w, f, a, features) or (f == FAM_SEND and not target_enabled(w, f, a, b, features)):
            return -1
    if features & TRACE and (f == FAM_DELIVER or f == FAM_LOSE or f == FAM_DUPLICATE):
        b = message_fingerprint(w, a)
    if not do_action(w, f, a, b, features):
        return -1
    if features & TRACE:
        k = w.scal[S_STEPS]
        if k < trace.shape[0]:
            trace[k, 0] = f
            trace[k, 1] = a
            trace[k, 2] = b
            trace[k, 3] = c.t[NOW]
    w.scal[S_STEPS] += 1
    if stale_from >= 0 and c.node[CUT_SINCE, t] >= 0:
        reached_by(w, c, t, 1 << stale_from)
    bad = check_after_step(w, t, features)
    if features & RECONFIG:
        check_removed_quiet(w, c, t, quiet_from, epoch, features)
    after_step(w, c, t, resp_from, was_leader, le, hw, role, epoch, up, voted_req,
               features)
    return 1 if bad else 0
