"""Scenarios of timed walks: named scripts over the same events, and what they measure.

Every scenario starts from a cold cluster (every node up, Unattached, empty logs).
``cold-start`` measures the first election. The others wait for a steady state (a
leader every voter follows, with a commit in its epoch), let a random moment pass
(``settle_ms``), then strike: ``leader-crash`` crashes the leader and restarts it
later, ``leader-isolated`` cuts it off from every node and heals the cut later,
``rolling-restart`` crashes and restarts each voter in turn, ``random-faults``
crashes nodes and cuts links at random for a fault phase, then heals everything.
Three change the voter set (their walks run with voter changes on): ``voter-removed``
cuts a follower off from every node, has the leader remove it, and heals the cut later
(a removed voter whose log still names it a voter: Raft's disruptive removed server);
``voter-removed-while-down`` crashes the leader, then crashes the first voter that
grants its vote in the election that follows, before it learns who won; the new leader
removes it, and ``restart_delay_ms`` after that commits it restarts Unattached in the
new epoch, a voter in its own eyes that the leader does not know (KAFKA-17030's case);
``leader-removed`` splits the leader
from all but (voters - 1) // 2 of the other voters, too few to commit a new voter set
without it, has the leader remove itself, and heals the split later (KAFKA-16531's
leader outside its voter set).
After every heal the HealedClusterRecovers and ReplicasCatchUp properties are due
within the liveness bound. Once its measures are in (every live replica caught up
included), a walk goes on for ``observe_ms`` and ends.
"""
import numpy as np

from ..jit import kernel

from ..state.clock import (
    APPEND_AT, BURST_END, CATCH_UP_DEADLINE, CATCH_UP_FROM, CATCH_UP_TARGET, DL_CHECK_QUORUM, DL_CRASH, DL_FLUSH, DL_POLL, DL_RESTART, DL_TIMER, DONE,
    END,
    FAULTS_END, NEXT_BURST,
    HEALED_AT, HEALED_COMMIT, HEALS, HEALTHY, HEALTHY_OK, HEAL_AT, INF, KNOWN, KNOWN_ALL,
    LIVE_DEADLINE, LOSS_AT, NEXT_APPEND, NEXT_PARTITION, NEXT_SCRIPT, NOW, PHASE, PH_MEASURE,
    PH_SETTLE, PH_WARMUP, PREV_ROLE, PRE_REACH, PROBE_AT, PROBE_OFFSET, PROBE_VALUE, RETRIES,
    ROLES_CHANGED, ROLL, STATS_AT, TIMER_KIND, TRIGGER_AT, TRIGGER_COMMIT, TRIGGER_EPOCH,
    TRIGGER_LEADER, TS_COMMITS, TS_COMMIT_MAX, TS_COMMIT_SUM, TS_ELECT, TS_ELECTION_EPOCHS,
    TS_FIRST_LEADER, TS_FIRST_TIMEOUT, TS_HEALED_RECOVERY, TS_LEADER_LOSSES, TS_RECOVERY_MAX,
    TS_RECOVERY_SUM, TS_STALE_LEADER, TS_UNAVAILABLE, TS_VIOLATION_AT, TS_CAUGHT_UP, T_WIDTH, CUT_RESTARTED, CUT_SINCE, CUT_UNION,
    fault_below, fault_exponential, seed_fault_stream,
)
from ..state.layout import (
    CM_VALUE, EPOCH, EPOCH_START, FOLLOWER, G_COMMIT_LEN, HW, LEADER, LEADER_ID, P_NODES, ROLE,
    UNATTACHED, UP, VOTED_ID, VOTERS_AT,
)
from ..properties.liveness import caught_up, leader_known, recovered, track_reachability
from ..state.rng import rand_below
from .swarm import nth_set_bit
from .timed_step import enter_role, follower_timeout, poll_time, timed_act
from kraftwalk.vocabulary.timing import (
    LAT_FIXED, LAT_UNIFORM, SC_COLD_START, SC_LEADER_CRASH, SC_LEADER_ISOLATED,
    SC_LEADER_REMOVED, SC_RANDOM_FAULTS, SC_ROLLING_RESTART, SC_VOTER_REMOVED,
    SC_VOTER_REMOVED_WHILE_DOWN, TP_APPEND_INTERVAL, TP_FAULT_PHASE, TP_FETCH_TIMEOUT,
    TP_ISOLATION, TP_LATENCY_A, TP_LATENCY_B, TP_LATENCY_KIND, TP_LIVENESS_BOUND, TP_LOSS,
    TP_LOSS_BURST_INTERVAL,
    TP_MAX_TIME, TP_MTBF, TP_OBSERVE, TP_PARTITION_INTERVAL, TP_RESTART_DELAY, TP_SCENARIO,
    TP_SETTLE, TP_SYNC_TIMERS,
)
from ..transition import FAM_CRASH, FAM_PARTITION, FAM_REMOVE_VOTER, FAM_RESTART
from ..protocol.reconfig import remove_voter_targets
from ..state.voters import bootstrap_voters, is_voter, popcount, voters

# Statistics that are a single time or count, -1 until measured.
_UNMEASURED = (TS_FIRST_LEADER, TS_ELECT, TS_UNAVAILABLE, TS_ELECTION_EPOCHS, TS_FIRST_TIMEOUT,
               TS_STALE_LEADER, TS_VIOLATION_AT, TS_HEALED_RECOVERY, TS_CAUGHT_UP)


@kernel
def scenario(c):
    return np.int64(c.tp[TP_SCENARIO])


@kernel
def cut_off_scenario(c):
    """Is the leader cut off from a majority at the fault (its stale time is measured)?"""
    return scenario(c) == SC_LEADER_ISOLATED or scenario(c) == SC_LEADER_REMOVED


@kernel
def healthy_applies(c):
    """HealthyLeaderKept needs a network that can always answer a Fetch in time: no
    loss, and a bounded latency well under the fetch timeout."""
    if c.tp[TP_LOSS] > 0.0:
        return False
    kind = np.int64(c.tp[TP_LATENCY_KIND])
    top = c.tp[TP_LATENCY_A]
    if kind == LAT_UNIFORM:
        top = max(top, c.tp[TP_LATENCY_B])
    elif kind != LAT_FIXED:
        return False
    return top * 4.0 < c.tp[TP_FETCH_TIMEOUT]


@kernel
def start_timed(w, c, features):
    """The clock of a fresh walk (after ``walk.reset_walk``): every node enters its
    initial role at time 0."""
    for k in range(T_WIDTH):
        c.t[k] = 0
    for k in range(STATS_AT, T_WIDTH):
        c.t[k] = 0
    for k in _UNMEASURED:
        c.t[k] = -1
    c.t[END] = np.int64(c.tp[TP_MAX_TIME])
    c.t[NEXT_SCRIPT] = INF
    interval = np.int64(c.tp[TP_APPEND_INTERVAL])
    c.t[NEXT_APPEND] = interval if interval > 0 else INF
    c.t[NEXT_PARTITION] = INF
    c.t[HEAL_AT] = INF
    c.t[LIVE_DEADLINE] = INF
    c.t[CATCH_UP_DEADLINE] = INF
    c.t[FAULTS_END] = INF
    c.t[NEXT_BURST] = INF
    c.t[BURST_END] = INF
    for k in (TRIGGER_AT, TRIGGER_EPOCH, TRIGGER_LEADER, HEALED_AT, KNOWN, KNOWN_ALL, LOSS_AT):
        c.t[k] = -1
    c.t[HEALTHY_OK] = 1 if healthy_applies(c) else 0
    seed_fault_stream(w, c)
    n = w.scal[P_NODES]
    c.pair[:, :, :] = 0
    for i in range(n):
        for r in (DL_TIMER, DL_POLL, DL_CHECK_QUORUM, DL_FLUSH, DL_CRASH, DL_RESTART, APPEND_AT):
            c.node[r, i] = INF
        c.node[TIMER_KIND, i] = 0
        c.node[RETRIES, i] = 0
        c.node[CUT_SINCE, i] = -1
        c.node[CUT_UNION, i] = 0
        c.node[CUT_RESTARTED, i] = 0
        c.node[PRE_REACH, i] = 0
        c.node[PREV_ROLE, i] = -1
        enter_role(w, c, i, features)
        c.node[DL_POLL, i] = poll_time(w, c, i, features)
    if scenario(c) == SC_COLD_START:
        c.t[PHASE] = PH_MEASURE
        c.t[TRIGGER_AT] = 0
        c.t[TRIGGER_EPOCH] = 0
    else:
        c.t[PHASE] = PH_WARMUP


@kernel
def heal(w, c):
    """The scenario's faults are healed: HealedClusterRecovers is now due."""
    c.t[HEALED_AT] = c.t[NOW]
    c.t[HEALED_COMMIT] = w.scal[G_COMMIT_LEN]
    c.t[LIVE_DEADLINE] = c.t[NOW] + np.int64(c.tp[TP_LIVENESS_BOUND])
    # ReplicasCatchUp: every live replica, observers included, learns of a commit made
    # after the heal within the same bound
    c.t[CATCH_UP_FROM] = c.t[NOW]
    c.t[CATCH_UP_TARGET] = w.scal[G_COMMIT_LEN] + 1
    c.t[CATCH_UP_DEADLINE] = c.t[LIVE_DEADLINE] + 1  # after HealedClusterRecovers' check
    c.t[HEALS] += 1
    c.t[ROLES_CHANGED] = 1


@kernel
def trigger(w, c, trace, features):
    """The scenario's fault strikes the steady cluster."""
    now = c.t[NOW]
    sc = scenario(c)
    ld = c.t[KNOWN_ALL] if c.t[KNOWN_ALL] >= 0 else c.t[KNOWN]
    c.t[PHASE] = PH_MEASURE
    c.t[TRIGGER_AT] = now
    c.t[TRIGGER_LEADER] = ld
    c.t[TRIGGER_EPOCH] = w.node[EPOCH, ld] if ld >= 0 else 0
    c.t[TRIGGER_COMMIT] = w.scal[G_COMMIT_LEN]
    c.t[HEALTHY] = 0
    c.t[ROLES_CHANGED] = 1
    restart = np.int64(c.tp[TP_RESTART_DELAY])
    if sc == SC_LEADER_CRASH and ld >= 0:
        timed_act(w, c, FAM_CRASH, ld, 0, trace, features)
        c.node[DL_RESTART, ld] = now + restart
    elif sc == SC_LEADER_ISOLATED and ld >= 0:
        timed_act(w, c, FAM_PARTITION, 0, ld, trace, features)
        c.t[HEAL_AT] = now + np.int64(c.tp[TP_ISOLATION])
    elif sc == SC_ROLLING_RESTART:
        crash_next_voter(w, c, trace, features)
    elif sc == SC_VOTER_REMOVED and ld >= 0:
        picked = other_voters_from(w, c, ld, 1)
        if picked != 0:
            v = nth_set_bit(picked, 0)
            timed_act(w, c, FAM_PARTITION, 0, v, trace, features)
            timed_act(w, c, FAM_REMOVE_VOTER, ld, v, trace, features)
            c.t[HEAL_AT] = now + np.int64(c.tp[TP_ISOLATION])
    elif sc == SC_LEADER_REMOVED and ld >= 0:
        # the leader keeps (voters - 1) // 2 of the others: one short of a majority of
        # the voter set without it
        side = (np.int64(1) << ld) | other_voters_from(
            w, c, ld, (popcount(bootstrap_voters(w)) - 1) // 2)
        timed_act(w, c, FAM_PARTITION, 2, side << 8, trace, features)
        timed_act(w, c, FAM_REMOVE_VOTER, ld, ld, trace, features)
        c.t[HEAL_AT] = now + np.int64(c.tp[TP_ISOLATION])
    elif sc == SC_VOTER_REMOVED_WHILE_DOWN and ld >= 0:
        timed_act(w, c, FAM_CRASH, ld, 0, trace, features)
        c.node[DL_RESTART, ld] = now + restart
        c.t[ROLL] = -1  # the voter that crashes once it has voted: none yet
    elif sc == SC_RANDOM_FAULTS:
        c.t[FAULTS_END] = now + np.int64(c.tp[TP_FAULT_PHASE])
        c.t[NEXT_SCRIPT] = c.t[FAULTS_END]
        for i in range(w.scal[P_NODES]):
            c.node[DL_CRASH, i] = now + fault_exponential(c, c.tp[TP_MTBF])
        c.t[NEXT_PARTITION] = now + fault_exponential(c, c.tp[TP_PARTITION_INTERVAL])
        if c.tp[TP_LOSS_BURST_INTERVAL] > 0:
            c.t[NEXT_BURST] = now + fault_exponential(c, c.tp[TP_LOSS_BURST_INTERVAL])
    if c.tp[TP_SYNC_TIMERS] != 0.0:
        # Ongaro's setup: the last heartbeat restarted every follower's timer at once.
        for j in range(w.scal[P_NODES]):
            if is_voter(w, j) and w.node[UP, j] == 1 and (
                    w.node[ROLE, j] == FOLLOWER or w.node[ROLE, j] == UNATTACHED):
                c.node[DL_TIMER, j] = now + follower_timeout(w, c)


@kernel
def other_voters_from(w, c, ld, k):
    """``k`` bootstrap voters other than ``ld``, in id order from a random one (on the
    faults' stream), as a mask."""
    n = w.scal[P_NODES]
    vs = bootstrap_voters(w) & ~(np.int64(1) << ld)
    start = fault_below(c, n)
    mask = np.int64(0)
    for d in range(n):
        j = (start + d) % n
        if k > 0 and (vs >> j) & 1:
            mask |= np.int64(1) << j
            k -= 1
    return mask


@kernel
def crash_next_voter(w, c, trace, features):
    v = c.t[ROLL]
    c.t[ROLL] += 1
    c.t[CATCH_UP_DEADLINE] = INF  # a new fault: the next heal starts the count again
    timed_act(w, c, FAM_CRASH, v, 0, trace, features)
    c.node[DL_RESTART, v] = c.t[NOW] + np.int64(c.tp[TP_RESTART_DELAY])


@kernel
def removed_while_down_step(w, c, features):
    """voter-removed-while-down's next scripted step, once its condition holds: (1, v)
    crash v, a voter that has granted its vote in an epoch after the fault and knows no
    leader of it yet; (2, leader) the leader known to a majority removes the crashed
    voter, once it may change the voter set; (3, v) the removal has committed on that
    leader: v restarts. (0, -1) while none is due."""
    v = c.t[ROLL]
    if c.t[PHASE] != PH_MEASURE or c.t[HEALS] > 0:
        return 0, -1
    if v < 0:
        for j in range(w.scal[P_NODES]):
            if (j != c.t[TRIGGER_LEADER] and w.node[UP, j] == 1 and is_voter(w, j)
                    and w.node[EPOCH, j] > c.t[TRIGGER_EPOCH] and w.node[LEADER_ID, j] < 0
                    and w.node[VOTED_ID, j] >= 0 and w.node[VOTED_ID, j] != j):
                return 1, j
        return 0, -1
    ld = c.t[KNOWN]
    if ld < 0 or ld == v or w.node[UP, v] == 1 or c.node[DL_RESTART, v] != INF:
        return 0, -1
    if (voters(w, ld) >> v) & 1:
        return (2, ld) if (remove_voter_targets(w, ld, features) >> v) & 1 else (0, -1)
    if w.node[VOTERS_AT, ld] < w.node[HW, ld]:
        return 3, v
    return 0, -1


@kernel
def removed_while_down_act(w, c, trace, features):
    step, j = removed_while_down_step(w, c, features)
    if step == 1:
        timed_act(w, c, FAM_CRASH, j, 0, trace, features)
        c.t[ROLL] = j
    elif step == 2:
        timed_act(w, c, FAM_REMOVE_VOTER, j, c.t[ROLL], trace, features)
    elif step == 3:
        # it restarts restart_delay_ms later (the old leader is back by then); that
        # restart heals the scenario (on_restarted)
        c.node[DL_RESTART, j] = c.t[NOW] + np.int64(c.tp[TP_RESTART_DELAY])


@kernel
def end_faults(w, c, trace, features):
    """random-faults: the fault phase is over; heal every link, restart every node,
    stop losing messages."""
    c.t[NEXT_PARTITION] = INF
    c.t[HEAL_AT] = INF
    c.t[NEXT_BURST] = INF
    c.t[BURST_END] = INF
    timed_act(w, c, FAM_PARTITION, 3, 0, trace, features)
    for i in range(w.scal[P_NODES]):
        c.node[DL_CRASH, i] = INF
        c.node[DL_RESTART, i] = INF
        if w.node[UP, i] == 0:
            timed_act(w, c, FAM_RESTART, i, 0, trace, features)
    heal(w, c)


@kernel
def on_script(w, c, trace, features):
    c.t[NEXT_SCRIPT] = INF
    if c.t[PHASE] == PH_SETTLE:
        trigger(w, c, trace, features)
    elif scenario(c) == SC_RANDOM_FAULTS and c.t[NOW] >= c.t[FAULTS_END]:
        end_faults(w, c, trace, features)
    elif scenario(c) == SC_ROLLING_RESTART and c.t[ROLL] < popcount(bootstrap_voters(w)):
        crash_next_voter(w, c, trace, features)
    elif scenario(c) == SC_VOTER_REMOVED_WHILE_DOWN:
        removed_while_down_act(w, c, trace, features)


@kernel
def on_restarted(w, c, i):
    """A scripted restart of node i: in random-faults the node may crash again; in
    voter-removed-while-down only the removed voter's restart heals (not the old
    leader's); otherwise the restart heals the scenario's fault."""
    sc = scenario(c)
    if sc == SC_RANDOM_FAULTS:
        return
    if sc == SC_VOTER_REMOVED_WHILE_DOWN and i != c.t[ROLL]:
        return
    heal(w, c)


@kernel
def on_healed_links(w, c):
    sc = scenario(c)
    if sc == SC_LEADER_ISOLATED or sc == SC_LEADER_REMOVED or sc == SC_VOTER_REMOVED:
        heal(w, c)


@kernel
def observe_leadership(w, c):
    """Re-read who leads whom after a role change: leader losses and recoveries."""
    now = c.t[NOW]
    known = leader_known(w, False)
    prev = c.t[KNOWN]
    if known != prev:
        if prev >= 0 and c.t[LOSS_AT] < 0:
            c.t[LOSS_AT] = now
            c.t[TS_LEADER_LOSSES] += 1
        if known >= 0:
            if c.t[LOSS_AT] >= 0:
                d = now - c.t[LOSS_AT]
                c.t[TS_RECOVERY_SUM] += d
                c.t[TS_RECOVERY_MAX] = max(c.t[TS_RECOVERY_MAX], d)
                c.t[LOSS_AT] = -1
            if c.t[TS_FIRST_LEADER] < 0:
                c.t[TS_FIRST_LEADER] = now
    c.t[KNOWN] = known
    c.t[KNOWN_ALL] = leader_known(w, True)


@kernel
def measured(w, c):
    sc = scenario(c)
    if c.t[CATCH_UP_DEADLINE] != INF:  # a live replica has yet to catch up
        return False
    if sc == SC_VOTER_REMOVED or sc == SC_VOTER_REMOVED_WHILE_DOWN:
        # the leader stays (or was elected before the heal): the heal is what is measured
        return c.t[HEALS] > 0 and c.t[HEALED_AT] < 0
    if c.t[TS_ELECT] < 0 or c.t[TS_UNAVAILABLE] < 0:
        return sc == SC_RANDOM_FAULTS and c.t[HEALS] > 0 and c.t[HEALED_AT] < 0
    if sc == SC_COLD_START:
        return True
    if cut_off_scenario(c) and c.t[TS_STALE_LEADER] < 0:
        return False
    if sc == SC_ROLLING_RESTART and c.t[ROLL] < popcount(bootstrap_voters(w)):
        return False
    return c.t[HEALS] > 0 and c.t[HEALED_AT] < 0


@kernel
def progress(w, c, features):
    """After each event: who leads, what the scenario has measured, what comes next."""
    now = c.t[NOW]
    if c.t[ROLES_CHANGED] == 1:
        c.t[ROLES_CHANGED] = 0
        observe_leadership(w, c)
        track_reachability(w, c)
    # Commit latency of the client record being timed.
    if c.t[PROBE_VALUE] != 0 and w.scal[G_COMMIT_LEN] > c.t[PROBE_OFFSET]:
        if w.ghost[CM_VALUE, c.t[PROBE_OFFSET]] == c.t[PROBE_VALUE]:
            d = now - c.t[PROBE_AT]
            c.t[TS_COMMIT_SUM] += d
            c.t[TS_COMMIT_MAX] = max(c.t[TS_COMMIT_MAX], d)
            c.t[TS_COMMITS] += 1
        c.t[PROBE_VALUE] = 0
    ph = c.t[PHASE]
    everyone = c.t[KNOWN_ALL]
    if everyone >= 0 and c.t[TRIGGER_AT] <= 0 and c.t[HEALTHY_OK] == 1:
        if scenario(c) == SC_COLD_START or ph == PH_WARMUP:
            c.t[HEALTHY] = 1
    if ph == PH_WARMUP:
        if everyone >= 0 and w.scal[G_COMMIT_LEN] > w.node[EPOCH_START, everyone]:
            c.t[PHASE] = PH_SETTLE
            c.t[NEXT_SCRIPT] = now + settle_delay(w, c)
    elif ph == PH_MEASURE:
        known = c.t[KNOWN]
        if c.t[TS_ELECT] < 0 and known >= 0 and w.node[EPOCH, known] > c.t[TRIGGER_EPOCH]:
            c.t[TS_ELECT] = now - c.t[TRIGGER_AT]
            c.t[TS_ELECTION_EPOCHS] = w.node[EPOCH, known] - c.t[TRIGGER_EPOCH]
        if c.t[TS_UNAVAILABLE] < 0 and w.scal[G_COMMIT_LEN] > c.t[TRIGGER_COMMIT]:
            c.t[TS_UNAVAILABLE] = now - c.t[TRIGGER_AT]
        old = c.t[TRIGGER_LEADER]
        if c.t[TS_STALE_LEADER] < 0 and cut_off_scenario(c) and old >= 0:
            if (w.node[UP, old] == 0 or w.node[ROLE, old] != LEADER
                    or w.node[EPOCH, old] != c.t[TRIGGER_EPOCH]):
                c.t[TS_STALE_LEADER] = now - c.t[TRIGGER_AT]
    if c.t[HEALED_AT] >= 0 and recovered(w, c):
        d = now - c.t[HEALED_AT]
        c.t[TS_HEALED_RECOVERY] = max(c.t[TS_HEALED_RECOVERY], d)
        c.t[HEALED_AT] = -1
        c.t[LIVE_DEADLINE] = INF
        if scenario(c) == SC_ROLLING_RESTART and c.t[ROLL] < popcount(bootstrap_voters(w)):
            c.t[NEXT_SCRIPT] = now + settle_delay(w, c)
    if c.t[CATCH_UP_DEADLINE] != INF and caught_up(w, c) < 0:
        c.t[TS_CAUGHT_UP] = max(c.t[TS_CAUGHT_UP], now - c.t[CATCH_UP_FROM])
        c.t[CATCH_UP_DEADLINE] = INF
    if (scenario(c) == SC_VOTER_REMOVED_WHILE_DOWN and c.t[NEXT_SCRIPT] == INF
            and removed_while_down_step(w, c, features)[0] != 0):
        c.t[NEXT_SCRIPT] = now
    if c.t[DONE] == 0 and ph == PH_MEASURE and measured(w, c):
        c.t[DONE] = 1
        c.t[END] = min(c.t[END], now + np.int64(c.tp[TP_OBSERVE]))


@kernel
def settle_delay(w, c):
    s = np.int64(c.tp[TP_SETTLE])
    return rand_below(w.scal, s) if s > 0 else np.int64(0)
