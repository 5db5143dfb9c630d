"""The timed chooser: a discrete-event simulation over the same transition relation.

Where the swarm chooser (:mod:`.swarm`) draws any enabled action, the timed one
asks what happens next in time: the earliest of the nodes' deadlines (election,
fetch, backoff, check-quorum, flush, request resends), the messages' delivery
times, client appends, and the scenario's faults. Ties go to the walk's own
random stream, so a timed walk is still a pure function of (seed, walk index,
config). Every action goes through :func:`.transition.do_action` and is checked
by the same invariants as in an untimed walk; its trace (with times) replays on
the untimed transition relation and on the reference model.

A leader holds a Fetch that has nothing new for it (Kafka's fetch purgatory): it
is answered when the leader appends, after the max wait, and from 4.1 when its HW
moves (``fetch_purgatory``, KAFKA-14145). Only a Fetch that acknowledges nothing new
is held, so holding it delays no commit.
"""
import numpy as np

from ..jit import call_with_features, kernel, literally

from ..state.clock import (
    BURST_END, BURST_MUTED, CATCH_UP_DEADLINE, DL_CHECK_QUORUM, DL_CRASH, DL_FLUSH, DL_POLL, DL_RESTART,
    DL_TIMER, END, FAULTS_END, LAST_FETCH, SENT_AT, APPEND_AT, APPEND_FROM, HEALTHY, HEAL_AT, INF, LIVE_DEADLINE, NEXT_APPEND, NEXT_PARTITION,
    NEXT_BURST, NEXT_SCRIPT, NEXT_TRY, NOW, PHASE, PH_MEASURE, PROBE_AT, PROBE_OFFSET, PROBE_VALUE,
    ROLES_CHANGED, STATS_AT, TIMER_KIND, TRIGGER_AT, TS_END, TS_EVENTS, TS_FIRST_TIMEOUT,
    TS_WIDTH, SCHEDULED, alloc_clock, due_col, fault_below, fault_exponential,
    fault_happens, parked_col,
)
from ..features import MUT_PARK_DIVERGING_FETCH, TRACE
from ..state.layout import (
    CANDIDATE, C_NEXT_VALUE, EPOCH, FETCH_REQUEST, FOLLOWER, F_DST, F_EPOCH, F_FETCH_OFFSET,
    F_LAST_FETCHED_EPOCH, F_SRC, F_TYPE, HW, INFLIGHT, LEADER, LEADER_ID, LOG_END, N_MSGS,
    N_TARGETS, P_DEPTH, P_NODES, REACHED, REPLICA_END, ROLE, STATS_BASE, S_BOUND_HIT,
    S_CLIENT_APPENDS, S_STEPS, S_WIDTH, UNATTACHED, UP, VIOL_BASE, V_INVARIANT, V_WIDTH,
    BOUND_NONE, alloc_walk,
)
from ..properties.liveness import (
    HEALTHY_LEADER_KEPT, check_catch_up_deadline, check_cut_off, check_recovery_deadline, cut_off_deadline, link, violate,
)
from ..state.log import last_epoch
from ..protocol.replication import diverging_epoch
from ..state.voters import is_voter, popcount
from ..state.rng import rand_below
from ..choosers.scenarios import (
    on_healed_links, on_restarted, on_script, progress, scenario, start_timed,
)
from ..choosers.swarm import nth_set_bit
from ..choosers.timed_step import pending_until, poll_time, start_backoff, timed_act
from kraftwalk.vocabulary.timing import (
    SC_RANDOM_FAULTS, TP_FETCH_MAX_WAIT, TP_FETCH_TIMEOUT, TP_LOSS_BURST_DURATION,
    TP_LOSS_BURST_INTERVAL, TP_MTBF,
    TP_PARTITION_DURATION, TP_PARTITION_INTERVAL, TP_REQUEST_TIMEOUT, TP_RESTART_DELAY,
    TP_APPEND_INTERVAL, TP_CANDIDATE_TIMEOUT_BACKOFF, TP_BEGIN_QUORUM_EPOCH, BQE_NOT_FETCHING,
    TP_FETCH_PURGATORY, PURGATORY_HW, TP_APPEND_LINGER,
)
from ..transition import (
    FAM_CHECK_QUORUM, FAM_CLIENT_APPEND, FAM_CRASH, FAM_DELIVER, FAM_FLUSH, FAM_LOSE,
    FAM_PARTITION, FAM_RESTART, FAM_SEND, FAM_TIMEOUT, N_FAMILIES, request_targets,
)
from .walk import reset_walk

EV_NONE = 0
EV_TIMER = 1
EV_POLL = 2
EV_CHECK_QUORUM = 3
EV_FLUSH = 4
EV_CRASH = 5
EV_RESTART = 6
EV_MESSAGE = 7
EV_SCRIPT = 8
EV_APPEND = 9
EV_PARTITION = 10
EV_HEAL = 11
EV_CUT_OFF = 12
EV_LIVENESS = 13
EV_BURST = 14
EV_BURST_END = 15
EV_DRAIN = 16
EV_CATCH_UP = 17


@kernel
def earlier(w, best, ev, who, ties, x, e, i):
    """One candidate (time x, event e, subject i) against the earliest so far: an
    earlier one replaces it; an equal one replaces it with probability 1/ties, so ties
    go uniformly at random (reservoir sampling on the walk's stream)."""
    if x < best:
        return x, e, i, 1
    if x == best and x < INF:
        ties += 1
        if rand_below(w.scal, ties) == 0:
            return best, e, i, ties
    return best, ev, who, ties


@kernel
def next_event(w, c):
    """The earliest pending event: (kind, node or message slot, time). Events at the
    same time are taken in an order drawn from the walk's stream."""
    best = INF
    ev = EV_NONE
    who = -1
    ties = 0
    n = w.scal[P_NODES]
    for i in range(n):
        for r in range(7):
            if r == 0:
                x, e = c.node[DL_TIMER, i], EV_TIMER
            elif r == 1:
                x, e = c.node[DL_POLL, i], EV_POLL
            elif r == 2:
                x, e = c.node[DL_CHECK_QUORUM, i], EV_CHECK_QUORUM
            elif r == 3:
                x, e = c.node[DL_FLUSH, i], EV_FLUSH
            elif r == 4:
                x, e = c.node[DL_CRASH, i], EV_CRASH
            elif r == 5:
                x, e = c.node[DL_RESTART, i], EV_RESTART
            else:
                x, e = c.node[APPEND_AT, i], EV_DRAIN
            best, ev, who, ties = earlier(w, best, ev, who, ties, x, e, i)
        best, ev, who, ties = earlier(w, best, ev, who, ties, cut_off_deadline(c, i),
                                      EV_CUT_OFF, i)
    dc = due_col(w)
    for k in range(w.scal[N_MSGS]):
        best, ev, who, ties = earlier(w, best, ev, who, ties, np.int64(abs(w.msgs[k, dc])),
                                      EV_MESSAGE, k)
    for r in range(8):
        if r == 0:
            x, e = c.t[NEXT_SCRIPT], EV_SCRIPT
        elif r == 1:
            x, e = c.t[NEXT_APPEND], EV_APPEND
        elif r == 2:
            x, e = c.t[NEXT_PARTITION], EV_PARTITION
        elif r == 3:
            x, e = c.t[HEAL_AT], EV_HEAL
        elif r == 4:
            x, e = c.t[LIVE_DEADLINE], EV_LIVENESS
        elif r == 5:
            x, e = c.t[NEXT_BURST], EV_BURST
        elif r == 6:
            x, e = c.t[BURST_END], EV_BURST_END
        else:
            x, e = c.t[CATCH_UP_DEADLINE], EV_CATCH_UP
        best, ev, who, ties = earlier(w, best, ev, who, ties, x, e, -1)
    return ev, who, best


@kernel
def should_park(w, c, k, features):
    """Would the leader hold Fetch k (nothing new to send, nothing new acknowledged)?
    A Fetch whose answer is a diverging epoch is answered at once (KAFKA-15100, 3.5.2);
    it acknowledges nothing either, so under the known bug it is held too."""
    if c.tp[TP_FETCH_MAX_WAIT] <= 0.0:
        return False
    m = w.msgs[k]
    if m[F_TYPE] != FETCH_REQUEST or m[parked_col(w)] != 0:
        return False
    i = m[F_DST]
    r = m[F_SRC]
    if w.node[UP, i] == 0 or w.node[ROLE, i] != LEADER or m[F_EPOCH] != w.node[EPOCH, i]:
        return False
    if not link(w, r, i):
        return False
    if (np.int64(c.tp[TP_FETCH_PURGATORY]) == PURGATORY_HW
            and w.node[HW, r] < w.node[HW, i]):
        # 4.1 (KAFKA-14145): the Fetch carries its sender's high watermark, and one
        # behind the leader's is answered at once. (The model reads the sender's HW on
        # arrival: it moves only on a FetchResponse, and its fetch is still unanswered.)
        return False
    off = m[F_FETCH_OFFSET]
    if (features & MUT_PARK_DIVERGING_FETCH and off > 0
            and diverging_epoch(w, i, off, m[F_LAST_FETCHED_EPOCH])[0] >= 0):
        return True  # known bug (KAFKA-15100): a diverging-epoch answer has no records
    return (off == w.node[LOG_END, i] and m[F_LAST_FETCHED_EPOCH] == last_epoch(w, i)
            and w.peer[REPLICA_END, i, r] == off)


@kernel
def send_begin_quorum_epochs(w, c, i, tg, trace, features):
    """maybeSendBeginQuorumEpochRequests: the leader's BeginQuorumEpoch timer expired
    (its first expiry is at once); it goes to every other voter (3.9-4.1, KAFKA-16536) or
    to those that have not fetched for fetch timeout / 2 (4.2 on, KAFKA-16926), each
    whose connection is ready (no request of the last request timeout unanswered), and
    the timer restarts: one timer for all voters, kept in the leader's NEXT_TRY row."""
    now = c.t[NOW]
    half = np.int64(c.tp[TP_FETCH_TIMEOUT]) // 2
    only_idle = np.int64(c.tp[TP_BEGIN_QUORUM_EPOCH]) == BQE_NOT_FETCHING
    for j in range(w.scal[P_NODES]):
        if not (tg >> j) & 1:
            continue
        c.pair[NEXT_TRY, i, j] = now + half
        if only_idle and now - c.pair[LAST_FETCH, i, j] < half:
            continue  # needToSendBeginQuorumRequests: it fetched lately
        if w.peer[INFLIGHT, i, j] != 0 and now < c.pair[SENT_AT, i, j] + np.int64(
                c.tp[TP_REQUEST_TIMEOUT]):
            continue  # RequestManager.isReady: one unanswered request at a time
        c.pair[SENT_AT, i, j] = now
        if timed_act(w, c, FAM_SEND, i, j, trace, features) == 1:
            return  # a violation ends the walk
        if w.node[ROLE, i] != LEADER:
            return  # (the flush that ends its poll can commit its own removal: it resigned)


@kernel
def fetch_pending(w, c, i):
    """RequestManager.hasAnyInflightRequest: a request of node i is unanswered and has
    not timed out."""
    return pending_until(w, c, i) < INF


@kernel
def send_fetch_to_any_bootstrap(w, c, i, boot, trace, features):
    """maybeSendFetchToAnyBootstrap: with no request pending, a Fetch to the first ready
    bootstrap voter (of the mask ``boot``) from a random place in their list
    (RequestManager.findReadyBootstrapServer)."""
    now = c.t[NOW]
    count = popcount(boot)
    if count == 0 or fetch_pending(w, c, i):
        return
    start = rand_below(w.scal, count)
    for k in range(count):
        j = nth_set_bit(boot, (start + k) % count)
        if c.pair[NEXT_TRY, i, j] <= now:
            c.pair[NEXT_TRY, i, j] = now + np.int64(c.tp[TP_REQUEST_TIMEOUT])
            timed_act(w, c, FAM_SEND, i, j, trace, features)
            return


@kernel
def poll_follower(w, c, i, tg, trace, features):
    """pollFollower's fetch (maybeSendFetchToBestNode): to the leader while nothing is
    pending; to a random bootstrap voter once the request to the leader timed out,
    and (3.9-4.1, pollFollowerAsObserver) always while an observer's fetch timeout has
    expired, until a fetch succeeds."""
    now = c.t[NOW]
    ld = w.node[LEADER_ID, i]
    if c.node[TIMER_KIND, i] == 2:
        send_fetch_to_any_bootstrap(w, c, i, tg, trace, features)
    elif w.peer[INFLIGHT, i, ld] != 0 and c.pair[NEXT_TRY, i, ld] <= now:
        w.peer[INFLIGHT, i, ld] = 0  # requestManager.reset(leader): its answer is dropped
        send_fetch_to_any_bootstrap(w, c, i, tg, trace, features)
    elif not fetch_pending(w, c, i) and c.pair[NEXT_TRY, i, ld] <= now:
        c.pair[NEXT_TRY, i, ld] = now + np.int64(c.tp[TP_REQUEST_TIMEOUT])
        timed_act(w, c, FAM_SEND, i, ld, trace, features)


@kernel
def poll(w, c, i, trace, features):
    """Node i sends the requests its role calls for to every target that may get one
    now (an Unattached node: to one bootstrap voter, picked at random)."""
    now = c.t[NOW]
    tg = request_targets(w, i, features)
    n = w.scal[P_NODES]
    r = w.node[ROLE, i]
    if r == UNATTACHED:
        send_fetch_to_any_bootstrap(w, c, i, tg, trace, features)
    elif r == FOLLOWER and tg != (1 << w.node[LEADER_ID, i]):
        poll_follower(w, c, i, tg, trace, features)
    elif r == LEADER:
        send_begin_quorum_epochs(w, c, i, tg, trace, features)
    else:
        # a request unanswered for the request timeout is sent again
        wait = np.int64(c.tp[TP_REQUEST_TIMEOUT])
        for j in range(n):
            if (tg >> j) & 1 and c.pair[NEXT_TRY, i, j] <= now:
                c.pair[NEXT_TRY, i, j] = now + wait
                if timed_act(w, c, FAM_SEND, i, j, trace, features) == 1:
                    return
                if request_targets(w, i, features) != tg:
                    break
    c.node[DL_POLL, i] = poll_time(w, c, i, features)


@kernel
def top_leader(w):
    best = -1
    for i in range(w.scal[P_NODES]):
        if w.node[UP, i] == 1 and w.node[ROLE, i] == LEADER:
            if best < 0 or w.node[EPOCH, i] > w.node[EPOCH, best]:
                best = i
    return best


@kernel
def client_append_event(w, c):
    """The leader is asked to append a record (the controller's periodic no-op record):
    it goes into the leader's batch, whose append linger starts with its first record
    (BatchAccumulator.append)."""
    c.t[NEXT_APPEND] += np.int64(c.tp[TP_APPEND_INTERVAL])
    ld = top_leader(w)
    if ld >= 0 and c.node[APPEND_AT, ld] == INF:
        c.node[APPEND_AT, ld] = c.t[NOW] + np.int64(c.tp[TP_APPEND_LINGER])
        c.node[APPEND_FROM, ld] = c.t[NOW]


@kernel
def drain_batch(w, c, i, trace, features):
    """maybeAppendBatches: the linger is over, leader i writes its batch (one record:
    the model's appends come 500 ms apart); the first record not yet timed becomes the
    probe whose commit latency is measured, from when it was asked for."""
    c.node[APPEND_AT, i] = INF
    before = w.scal[S_CLIENT_APPENDS]
    timed_act(w, c, FAM_CLIENT_APPEND, i, 0, trace, features)
    if w.scal[S_CLIENT_APPENDS] > before and c.t[PROBE_VALUE] == 0:
        c.t[PROBE_VALUE] = w.scal[C_NEXT_VALUE]
        c.t[PROBE_OFFSET] = w.node[LOG_END, i] - 1
        c.t[PROBE_AT] = c.node[APPEND_FROM, i]


@kernel
def handle_event(w, c, ev, who, trace, features):
    now = c.t[NOW]
    i = who
    if ev == EV_TIMER:
        if (w.node[ROLE, i] == CANDIDATE and c.node[TIMER_KIND, i] == 0
                and c.tp[TP_CANDIDATE_TIMEOUT_BACKOFF] != 0.0):
            start_backoff(w, c, i)  # pollCandidate (3.9): the election timed out, back off
            return
        c.node[DL_TIMER, i] = INF
        if not is_voter(w, i) and w.node[ROLE, i] == FOLLOWER:
            # an observer's fetch timeout (3.9-4.1): it turns to the bootstrap voters
            c.node[TIMER_KIND, i] = 2
            c.node[DL_POLL, i] = poll_time(w, c, i, features)
            return
        if is_voter(w, i):
            if c.t[PHASE] == PH_MEASURE and c.t[TRIGGER_AT] >= 0 and c.t[TS_FIRST_TIMEOUT] < 0:
                c.t[TS_FIRST_TIMEOUT] = now - c.t[TRIGGER_AT]
            if c.t[HEALTHY] == 1 and w.node[ROLE, i] == FOLLOWER:
                violate(w, c, HEALTHY_LEADER_KEPT, i, w.node[LEADER_ID, i], w.node[EPOCH, i],
                        features)
                return
        timed_act(w, c, FAM_TIMEOUT, i, 0, trace, features)
    elif ev == EV_POLL:
        poll(w, c, i, trace, features)
    elif ev == EV_CHECK_QUORUM:
        c.node[DL_CHECK_QUORUM, i] = INF
        timed_act(w, c, FAM_CHECK_QUORUM, i, 0, trace, features)
    elif ev == EV_FLUSH:
        c.node[DL_FLUSH, i] = INF
        timed_act(w, c, FAM_FLUSH, i, 0, trace, features)
    elif ev == EV_CRASH:
        c.node[DL_CRASH, i] = INF
        back = now + fault_exponential(c, c.tp[TP_RESTART_DELAY])
        if not fault_happens(c, SCHEDULED):  # suppressed: the node stays up, restarts idly
            c.node[DL_RESTART, i] = back
        else:
            c.t[HEALTHY] = 0
            if timed_act(w, c, FAM_CRASH, i, 0, trace, features) >= 0:
                c.node[DL_RESTART, i] = back
    elif ev == EV_RESTART:
        c.node[DL_RESTART, i] = INF
        timed_act(w, c, FAM_RESTART, i, 0, trace, features)
        if scenario(c) == SC_RANDOM_FAULTS and now < c.t[FAULTS_END]:
            c.node[DL_CRASH, i] = now + fault_exponential(c, c.tp[TP_MTBF])
        on_restarted(w, c, i)
    elif ev == EV_MESSAGE:
        dc = due_col(w)
        if w.msgs[i, dc] < 0:
            timed_act(w, c, FAM_LOSE, i, 0, trace, features)
        elif should_park(w, c, i, features):
            # tryCompleteFetchRequest ran on arrival (lastFetchTimestamp), and runs again
            # when the held fetch is answered
            c.pair[LAST_FETCH, w.msgs[i, F_DST], w.msgs[i, F_SRC]] = now
            w.msgs[i, parked_col(w)] = 1
            w.msgs[i, dc] = now + np.int64(c.tp[TP_FETCH_MAX_WAIT])
        else:
            timed_act(w, c, FAM_DELIVER, i, 0, trace, features)
    elif ev == EV_APPEND:
        client_append_event(w, c)
    elif ev == EV_DRAIN:
        drain_batch(w, c, i, trace, features)
    elif ev == EV_SCRIPT:
        on_script(w, c, trace, features)
    elif ev == EV_PARTITION:
        c.t[NEXT_PARTITION] = INF
        kind = 0 if fault_below(c, 2) == 0 else 2  # isolate a node, or split in two
        arg = fault_below(c, 1 << 30)
        if fault_happens(c, SCHEDULED):  # (suppressed, its heal heals nothing)
            c.t[HEALTHY] = 0
            timed_act(w, c, FAM_PARTITION, kind, arg, trace, features)
        c.t[HEAL_AT] = now + fault_exponential(c, c.tp[TP_PARTITION_DURATION])
        c.t[ROLES_CHANGED] = 1
    elif ev == EV_HEAL:
        c.t[HEAL_AT] = INF
        timed_act(w, c, FAM_PARTITION, 3, 0, trace, features)
        if scenario(c) == SC_RANDOM_FAULTS and now < c.t[FAULTS_END]:
            c.t[NEXT_PARTITION] = now + fault_exponential(c, c.tp[TP_PARTITION_INTERVAL])
        c.t[ROLES_CHANGED] = 1
        on_healed_links(w, c)
    elif ev == EV_BURST:
        c.t[NEXT_BURST] = INF
        if fault_happens(c, SCHEDULED):
            c.t[HEALTHY] = 0
        else:
            c.t[BURST_MUTED] = 1
        c.t[BURST_END] = now + fault_exponential(c, c.tp[TP_LOSS_BURST_DURATION])
    elif ev == EV_BURST_END:
        c.t[BURST_END] = INF
        c.t[BURST_MUTED] = 0
        if scenario(c) == SC_RANDOM_FAULTS and now < c.t[FAULTS_END]:
            c.t[NEXT_BURST] = now + fault_exponential(c, c.tp[TP_LOSS_BURST_INTERVAL])
    elif ev == EV_CUT_OFF:
        check_cut_off(w, c, i, features)
    elif ev == EV_LIVENESS:
        check_recovery_deadline(w, c, features)
    elif ev == EV_CATCH_UP:
        check_catch_up_deadline(w, c, features)


@kernel
def run_timed_walk(w, c, trace, features):
    """Simulate one timed walk (already reset) to its end, a violation or a bound.
    True on a violation."""
    start_timed(w, c, features)
    depth = w.scal[P_DEPTH]
    while w.scal[S_STEPS] < depth:
        ev, who, when = next_event(w, c)
        if when >= c.t[END]:
            c.t[NOW] = c.t[END]
            break
        c.t[NOW] = when
        c.t[TS_EVENTS] += 1
        handle_event(w, c, ev, who, trace, features)
        progress(w, c, features)
        if w.scal[V_INVARIANT] != 0:
            break
        if w.scal[S_BOUND_HIT] != BOUND_NONE:
            break
    c.t[TS_END] = c.t[NOW]
    return w.scal[V_INVARIANT] != 0


@kernel
def _run_timed_walks(w, c, master_seed, first, count, weights, trace, out_stats, out_viol,
                     out_timed, out_reach, features):
    literally(features)
    for k in range(count):
        reset_walk(w, master_seed, first + k, weights, False)
        run_timed_walk(w, c, trace, features)
        for f in range(S_WIDTH):
            out_stats[k, f] = w.scal[STATS_BASE + f]
        for f in range(V_WIDTH):
            out_viol[k, f] = w.scal[VIOL_BASE + f]
        for f in range(TS_WIDTH):
            out_timed[k, f] = c.t[STATS_AT + f]
        for f in range(N_TARGETS + 1):
            out_reach[k, f] = w.scal[REACHED + f]


def run_timed_chunk(master_seed, first, count, params, tp, features, drop=None):
    """Run timed walks [first, first + count); returns (stats, violations, timed
    statistics (TS_NAMES order), reach). ``drop`` (shrinking): which of the walk's
    random faults to suppress (see ``clock.fault_happens``)."""
    w = alloc_walk(params, N_FAMILIES)
    c = alloc_clock(int(params[2]), tp, drop)
    out_stats = np.zeros((count, S_WIDTH), dtype=np.int64)
    out_viol = np.zeros((count, V_WIDTH), dtype=np.int64)
    out_timed = np.zeros((count, TS_WIDTH), dtype=np.int64)
    out_reach = np.zeros((count, N_TARGETS + 1), dtype=np.int64)
    call_with_features(_run_timed_walks, w, c, np.uint64(master_seed), np.int64(first),
                       np.int64(count), np.zeros(N_FAMILIES, dtype=np.float64),
                       np.zeros((1, 4), dtype=np.int64), out_stats, out_viol, out_timed,
                       out_reach, int(features))
    return out_stats, out_viol, out_timed, out_reach


@kernel
def _record_timed(w, c, master_seed, walk_index, weights, trace, features):
    literally(features)
    reset_walk(w, master_seed, walk_index, weights, False)
    run_timed_walk(w, c, trace, features)
    return w.scal[S_STEPS]


def record_timed_walk(master_seed, walk_index, params, tp, features, drop=None):
    """Re-run one timed walk and return (actions[steps, 4] = (family, a, b, time us),
    walk, clock); ``drop`` as for :func:`run_timed_chunk`."""
    w = alloc_walk(params, N_FAMILIES)
    c = alloc_clock(int(params[2]), tp, drop)
    trace = np.zeros((int(params[P_DEPTH]), 4), dtype=np.int64)
    n = call_with_features(_record_timed, w, c, np.uint64(master_seed), np.int64(walk_index),
                           np.zeros(N_FAMILIES, dtype=np.float64), trace, int(features) | TRACE)
    return trace[:n].copy(), w, c
