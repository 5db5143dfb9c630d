"""The timed chooser: walks are pure functions of (seed, index, config) whatever the
chunking; the correct model violates no property; each liveness property fires on a
crafted state or a known-bug mutation and holds without it; a timed walk's actions
replay on the untimed transition relation step for step.

Each feature mask compiles the whole timed kernel once: the tests share the few below.
"""
import numpy as np
import pytest

from kraftwalk.run.elect import property_names
from kraftwalk.kernel_inputs import timed_features, timed_params, timing_params
from kraftwalk.vocabulary.timing import TP_CHECK_QUORUM_FACTOR, TP_CUT_OFF_SLACK, TP_FETCH_TIMEOUT
from kraftwalk.elect_config import ElectConfig
from kraftwalk.kernels.state.clock import (
    CATCH_UP_DEADLINE, CATCH_UP_TARGET, CUT_SINCE, CUT_UNION, HEALED_AT, INF, HEALED_COMMIT, KNOWN, NOW, PRE_REACH, PREV_ROLE, TS_NAMES,
    TS_VIOLATION_AT,
    alloc_clock,
)
from kraftwalk.kernels.state.layout import (
    CANDIDATE, EPOCH, FOLLOWER, F_DST, F_SRC, F_TYPE, HW, INTENT, INTENT_ARG, LEADER, LINKS,
    N_MSGS, PROSPECTIVE, ROLE, S_STEPS, UP, VOTERS, VOTERS_AT, VOTER_COUNT, VOTE_REQUEST, V_INVARIANT,
)
from kraftwalk.kernels.properties.liveness import (
    CUT_OFF_LEADER_RESIGNS, HEALED_CLUSTER_RECOVERS, PRE_VOTE_ISOLATED_NEVER_CANDIDATE,
    REMOVED_VOTER_STAYS_QUIET, REPLICAS_CATCH_UP, check_catch_up_deadline, check_removed_quiet,
    removed_sender, check_cut_off, check_quorum_restarted, check_recovery_deadline, cut_off_deadline,
    track_reachability,
)
from kraftwalk.kernels.drivers.timed import record_timed_walk, run_timed_chunk
from kraftwalk.kernels.choosers.timed_step import enter_role
from kraftwalk.kernels.drivers.trace import apply_and_check, new_walk

F_TIMED = timed_features(True, "none")
SEED = 20261203


def tp(scenario, **timing):
    return timing_params(ElectConfig(voters=(3,), scenario=scenario, timing=timing))


def names_of(viol):
    return [property_names()[c - 1] for c in viol[:, 0] if c]


@pytest.fixture(scope="module")
def faults_run():
    params = timed_params(3, 1, 1_000_000)
    return params, run_timed_chunk(SEED, 0, 60, params, tp("random-faults"), F_TIMED)


@pytest.mark.parametrize("bounds", [[0, 1, 25, 60], [0, 30, 31, 60]])
def test_chunking_does_not_change_timed_walks(faults_run, bounds):
    params, whole = faults_run
    parts = [run_timed_chunk(SEED, a, b - a, params, tp("random-faults"), F_TIMED)
             for a, b in zip(bounds, bounds[1:])]
    for k in range(4):
        assert np.array_equal(whole[k], np.concatenate([p[k] for p in parts]))


def test_correct_model_violates_nothing_under_random_faults(faults_run):
    _, (stats, viol, timed, _) = faults_run
    assert names_of(viol) == []
    healed = timed[:, TS_NAMES.index("healed_recovery_us")]
    assert (healed >= 0).mean() > 0.9  # the walks did heal and recover, not just end


@pytest.mark.parametrize("scenario", ["cold-start", "leader-crash", "leader-isolated",
                                      "rolling-restart"])
def test_scenarios_measure_an_election_and_hold(scenario):
    stats, viol, timed, _ = run_timed_chunk(SEED, 0, 40, timed_params(3, 0, 1_000_000),
                                            tp(scenario), F_TIMED)
    assert names_of(viol) == []
    elect = timed[:, TS_NAMES.index("elect_us")]
    assert (elect > 0).all()
    # Kafka's defaults: a follower notices 2 s (its fetch timeout) after its last
    # successful fetch, which the leader may have held up to 500 ms before the fault; in
    # a cold start the election timer (1-2 s) runs
    floor = 1_000_000 if scenario == "cold-start" else 1_500_000
    assert elect.min() >= floor and np.median(elect) < 10_000_000


def test_correct_model_keeps_check_quorum_promise_with_five_voters_under_random_faults():
    """Crashes and restarts let voters reach a cut-off leader one after another: Kafka's
    check quorum counts each of them, and a fetch from before the cut can restart its
    timer once. CutOffLeaderResigns fired in 8 of these walks while it counted only
    voters that reached the leader at once, and only from the cut."""
    _, viol, _, _ = run_timed_chunk(SEED, 0, 300, timed_params(5, 0, 1_000_000),
                                    tp("random-faults"), F_TIMED)
    assert names_of(viol) == []


def test_cut_off_clock_counts_voters_that_reach_the_leader_one_after_another():
    """5 voters, leader 0: only voter 1 reaches it (cut off: 2 of 5); then voter 1
    crashes and voter 2 reaches it. {0, 1, 2} is a majority over the time since the cut,
    so the clock starts again then, with the voters that reach the leader now."""
    w, c = crafted(5)
    w.node[ROLE, 0] = LEADER
    for j in (2, 3, 4):
        w.node[LINKS, j] &= ~1
    track_reachability(w, c)
    assert c.node[CUT_SINCE, 0] == 5_000_000 and c.node[CUT_UNION, 0] == 0b00011
    cq = int(c.tp[TP_CHECK_QUORUM_FACTOR] * c.tp[TP_FETCH_TIMEOUT])
    assert cut_off_deadline(c, 0) == 5_000_000 + cq + int(c.tp[TP_CUT_OFF_SLACK]) + 1
    c.t[NOW] = 6_000_000
    w.node[UP, 1] = 0
    track_reachability(w, c)  # still {0}: 1 of 5, the clock runs on
    assert c.node[CUT_SINCE, 0] == 5_000_000 and c.node[CUT_UNION, 0] == 0b00011
    c.t[NOW] = 7_000_000
    w.node[LINKS, 2] |= 1
    track_reachability(w, c)
    assert c.node[CUT_SINCE, 0] == 7_000_000 and c.node[CUT_UNION, 0] == 0b00101
    w.node[LINKS, 3] |= 1  # a majority at once: not cut off
    track_reachability(w, c)
    assert c.node[CUT_SINCE, 0] == -1 and cut_off_deadline(c, 0) > 10**15


def test_cut_off_clock_moves_with_the_first_check_quorum_restart_only():
    """Fetches from before the cut can complete a majority once: the timer's first
    restart after the cut moves the deadline, a second one (which the voters that still
    reach the leader cannot make) does not."""
    w, c = crafted(5)
    w.node[ROLE, 0] = LEADER
    for j in (2, 3, 4):
        w.node[LINKS, j] &= ~1
    track_reachability(w, c)
    cq = int(c.tp[TP_CHECK_QUORUM_FACTOR] * c.tp[TP_FETCH_TIMEOUT])
    slack = int(c.tp[TP_CUT_OFF_SLACK])
    c.t[NOW] = 5_300_000
    check_quorum_restarted(c, 0)
    assert cut_off_deadline(c, 0) == 5_300_000 + cq + slack + 1
    c.t[NOW] = 6_000_000
    check_quorum_restarted(c, 0)
    assert cut_off_deadline(c, 0) == 5_300_000 + cq + slack + 1


def test_tight_liveness_bound_fires_healed_cluster_recovers():
    _, viol, _, _ = run_timed_chunk(SEED, 0, 20, timed_params(3, 0, 1_000_000),
                                    tp("random-faults", liveness_bound_ms=1.0), F_TIMED)
    assert "HealedClusterRecovers" in names_of(viol)


@pytest.mark.parametrize("mutation, scenario, prop", [
    ("no-check-quorum", "leader-isolated", "CutOffLeaderResigns"),
    ("no-fetch-timer-reset", "cold-start", "HealthyLeaderKept"),
    ("check-quorum-counts-leader", "leader-removed", "CutOffLeaderResigns"),
])
def test_liveness_mutation_found_in_every_walk(mutation, scenario, prop):
    _, viol, _, _ = run_timed_chunk(SEED, 0, 10, timed_params(3, 1, 1_000_000), tp(scenario),
                                    timed_features(True, mutation, scenario=scenario))
    assert names_of(viol) == [prop] * 10


@pytest.mark.parametrize("scenario", ["voter-removed", "leader-removed",
                                      "voter-removed-while-down"])
def test_voter_change_scenarios_hold_with_pre_vote(scenario):
    """The newest release: the removed voter learns it was removed and stays quiet; the
    leader that removed itself and lost its majority resigns, and after the heal every
    replica (the old leader, now an observer, and the observer) catches up."""
    stats, viol, timed, _ = run_timed_chunk(SEED, 0, 30, timed_params(3, 1, 1_000_000),
                                            tp(scenario), timed_features(True, "none",
                                                                         scenario=scenario))
    assert names_of(viol) == []
    assert (timed[:, TS_NAMES.index("caught_up_us")] >= 0).all()  # the heal was measured
    if scenario == "leader-removed":
        assert (timed[:, TS_NAMES.index("stale_leader_us")] > 0).all()


def test_removed_voter_disrupts_without_pre_vote():
    """Kafka 3.9.x (no pre-vote): a voter removed while cut off times out, and once the
    cut heals its vote request of a higher epoch deposes the leader that removed it
    (results/findings/removed-voter-disrupts-3.9.md)."""
    ecfg = ElectConfig(kafka=("3.9",), voters=(3,), scenario="voter-removed").for_release("3.9")
    _, viol, _, _ = run_timed_chunk(SEED, 0, 10, timed_params(3, 1, 1_000_000),
                                    timing_params(ecfg),
                                    timed_features(False, "none", "3.9", scenario="voter-removed"))
    assert names_of(viol) == ["RemovedVoterStaysQuiet"] * 10


@pytest.mark.parametrize("kafka, disrupts", [("3.9", True), ("3.9.1", False)])
def test_a_voter_removed_while_down_disrupts_only_before_kafka_17030(kafka, disrupts):
    """voter-removed-while-down: the voter that granted its vote crashes before it learns
    who won, is removed, and restarts Unattached in the new epoch. On 3.9 it waits for its
    election timeout and its vote request deposes the leader in many walks (not all: where
    the leader lost its epoch before the restart, the request is stale); from 3.9.1
    (KAFKA-17030) it fetches from a bootstrap voter, finds the leader and learns it was
    removed, in every walk."""
    ecfg = ElectConfig(kafka=(kafka,), voters=(3,),
                       scenario="voter-removed-while-down").for_release(kafka)
    _, viol, timed, _ = run_timed_chunk(
        SEED, 0, 20, timed_params(3, 1, 1_000_000), timing_params(ecfg),
        timed_features(False, "none", kafka, scenario="voter-removed-while-down"))
    names = names_of(viol)
    if disrupts:
        assert set(names) == {"RemovedVoterStaysQuiet"} and 5 <= len(names) < 20
    else:
        assert names == []
        assert (timed[:, TS_NAMES.index("caught_up_us")] >= 0).all()  # the restart healed


# ---- crafted states: each property's check on a hand-made walk -------------------------
def crafted(voters=3):
    params = timed_params(voters, 0, 1000)
    w = new_walk(params)
    c = alloc_clock(voters, tp("leader-crash"))
    c.t[NOW] = 5_000_000
    c.node[CUT_SINCE, :] = -1
    c.t[TS_VIOLATION_AT] = -1  # no violation yet (start_timed's job in a real walk)
    return w, c


@pytest.mark.parametrize("role, fires", [(LEADER, True), (FOLLOWER, False)])
def test_cut_off_leader_resigns(role, fires):
    w, c = crafted()
    w.node[ROLE, 0] = role
    c.node[CUT_SINCE, 0] = 0
    check_cut_off(w, c, 0, F_TIMED)
    assert w.scal[V_INVARIANT] == (CUT_OFF_LEADER_RESIGNS + 1 if fires else 0)


@pytest.mark.parametrize("reach, fires", [(0, True), (1, False)])
def test_pre_vote_isolated_never_candidate(reach, fires):
    w, c = crafted()
    w.node[ROLE, 1] = CANDIDATE
    c.node[PREV_ROLE, 1] = PROSPECTIVE
    c.node[PRE_REACH, 1] = reach
    enter_role(w, c, 1, F_TIMED)
    assert w.scal[V_INVARIANT] == (PRE_VOTE_ISOLATED_NEVER_CANDIDATE + 1 if fires else 0)


@pytest.mark.parametrize("known, fires", [(-1, True), (0, False)])
def test_healed_cluster_recovers(known, fires):
    w, c = crafted()
    c.t[HEALED_AT] = 1_000_000
    c.t[HEALED_COMMIT] = -1  # any committed log counts as growth
    c.t[KNOWN] = known
    check_recovery_deadline(w, c, F_TIMED)
    assert w.scal[V_INVARIANT] == (HEALED_CLUSTER_RECOVERS + 1 if fires else 0)


@pytest.mark.parametrize("hw, up, fires", [(4, 1, True), (-1, 1, True), (5, 1, False),
                                           (4, 0, False)])
def test_replicas_catch_up(hw, up, fires):
    """At the deadline every running replica's HW must have passed the first commit
    after the heal (offset 5 here); one behind fires, unless it is down."""
    w, c = crafted()
    w.node[UP, :] = 1
    w.node[HW, :] = 5
    w.node[HW, 2] = hw
    w.node[UP, 2] = up
    c.t[CATCH_UP_TARGET] = 5
    c.t[CATCH_UP_DEADLINE] = c.t[NOW]
    check_catch_up_deadline(w, c, F_TIMED)
    assert w.scal[V_INVARIANT] == (REPLICAS_CATCH_UP + 1 if fires else 0)
    assert c.t[CATCH_UP_DEADLINE] == INF


@pytest.mark.parametrize("sender, voters_at, raised, fires", [
    (2, 3, True, True),     # node 2 is outside node 0's committed voter set {0, 1}
    (2, 3, False, False),   # ... but the request did not raise node 0's epoch
    (1, 3, True, False),    # node 1 is a voter
    (2, 5, True, False),    # the VotersRecord that removed node 2 is not committed yet
])
def test_removed_voter_stays_quiet(sender, voters_at, raised, fires):
    w, c = crafted()
    w.node[UP, :] = 1
    w.node[VOTERS, 0] = 0b011
    w.node[VOTER_COUNT, 0] = 2
    w.node[VOTERS_AT, 0] = voters_at
    w.node[HW, 0] = 5
    w.node[EPOCH, 0] = 4
    m = w.msgs[0]
    m[F_TYPE] = VOTE_REQUEST
    m[F_SRC] = sender
    m[F_DST] = 0
    s = removed_sender(w, 0, m)
    assert (s == sender) == (sender == 2 and voters_at < 5)
    if raised:
        w.node[EPOCH, 0] = 5
    check_removed_quiet(w, c, 0, s, 4, F_TIMED)
    assert w.scal[V_INVARIANT] == (REMOVED_VOTER_STAYS_QUIET + 1 if fires else 0)


@pytest.mark.parametrize("offset, last_epoch, mutated, parks", [
    (2, 1, False, True),    # at the leader's log end: nothing new, held
    (3, 1, False, False),   # past what epoch 1 holds there: a diverging epoch, answered
    (3, 1, True, True),     # ... unless KAFKA-15100's bug holds it too
    (1, 1, True, False),    # records to send: answered, bug or not
])
def test_leader_holds_only_a_fetch_with_nothing_to_answer(offset, last_epoch, mutated, parks):
    from kraftwalk.kernels.drivers.timed import should_park
    from kraftwalk.kernels.features import MUT_PARK_DIVERGING_FETCH
    from kraftwalk.kernels.state.layout import (
        ENTRY_EPOCH, FETCH_REQUEST, F_EPOCH, F_FETCH_OFFSET, F_LAST_FETCHED_EPOCH, LOG_END,
        REPLICA_END,
    )

    w, c = crafted()
    w.node[UP, :] = 1
    w.node[ROLE, 0] = LEADER
    w.node[EPOCH, 0] = 2
    w.node[LOG_END, 0] = 2
    w.log[ENTRY_EPOCH, 0, :2] = 1
    w.peer[REPLICA_END, 0, 1] = offset
    m = w.msgs[0]
    m[F_TYPE], m[F_SRC], m[F_DST], m[F_EPOCH] = FETCH_REQUEST, 1, 0, 2
    m[F_FETCH_OFFSET], m[F_LAST_FETCHED_EPOCH] = offset, last_epoch
    w.scal[N_MSGS] = 1
    features = F_TIMED | (MUT_PARK_DIVERGING_FETCH if mutated else 0)
    assert should_park(w, c, 0, features) == parks


def test_park_diverging_fetch_slows_the_catch_up_on_4_0():
    """KAFKA-15100's bug costs time, not a property: the leader that was isolated has a
    log to truncate, and holding its diverging Fetch makes it catch up later (on 4.0:
    from 4.1 its Fetch, behind the leader's HW, is answered at once)."""
    ecfg = ElectConfig(kafka=("4.0",), voters=(3,), scenario="leader-isolated").for_release("4.0")
    params, tp_ = timed_params(3, 1, 1_000_000), timing_params(ecfg)
    col = TS_NAMES.index("caught_up_us")
    runs = [run_timed_chunk(SEED, 0, 20, params, tp_, timed_features(True, m, "4.0"))
            for m in ("none", "park-diverging-fetch")]
    for _, viol, _, _ in runs:
        assert names_of(viol) == []
    a, b = (r[2][:, col] for r in runs)
    assert (a > 0).all() and (b > 0).all() and b.mean() > a.mean() + 50_000


def test_tight_liveness_bound_fires_replicas_catch_up_once_recovery_is_not_checked():
    """With HealedClusterRecovers off, a bound too short for anything to catch up
    breaks ReplicasCatchUp: its deadline is a timed event of its own."""
    features = timed_features(True, "none", disabled_checks=("HealedClusterRecovers",))
    _, viol, _, _ = run_timed_chunk(SEED, 0, 6, timed_params(3, 1, 1_000_000),
                                    tp("leader-crash", liveness_bound_ms=1.0), features)
    assert names_of(viol) == ["ReplicasCatchUp"] * 6


def test_caught_up_time_is_measured_after_each_heal(faults_run):
    """In the correct model every replica, the observer included, catches up after the
    heal: a time per walk, shorter than the bound."""
    _, (_, viol, timed, _) = faults_run
    t = timed[:, TS_NAMES.index("caught_up_us")]
    assert (t >= 0).all() and (t < 30_000_000).all()


# ---- replay ----------------------------------------------------------------------------
@pytest.mark.parametrize("scenario", ["random-faults", "leader-isolated"])
def test_timed_walk_replays_on_the_untimed_transition_relation(scenario):
    from kraftwalk.kernels.properties.checkers import ALL_CHECKS
    from kraftwalk.kernels.features import KAFKA_17030, KAFKA_17642, PRE_VOTE
    from kraftwalk.reference import KERNEL_COMPAT_ALL, ReferenceCluster

    params = timed_params(3, 1, 1_000_000)
    actions, w_timed, _ = record_timed_walk(SEED, 3, params, tp(scenario), F_TIMED)
    assert len(actions) == w_timed.scal[S_STEPS] > 50
    assert (np.diff(actions[:, 3]) >= 0).all()  # times never go back
    untimed = PRE_VOTE | KAFKA_17642 | KAFKA_17030 | ALL_CHECKS  # the timed walk's release
    w = new_walk(params, SEED, 3)
    ref = ReferenceCluster(params, untimed, kernel_compat=KERNEL_COMPAT_ALL)
    for k, a in enumerate(actions[:, :3]):
        assert apply_and_check(w, a, untimed) == 0, f"step {k + 1} {a}"
        assert ref.apply_and_check(tuple(int(x) for x in a)) == 0, f"step {k + 1} {a}"
    for name in ("node", "peer", "log", "msgs"):
        got, want = getattr(w, name).copy(), getattr(w_timed, name).copy()
        if name == "msgs":  # the timed kernel's two extra columns hold delivery times
            got, want = got[:, :-2], want[:, :-2]
        if name == "node":  # timer intents: the timed chooser consumes them, replay does not
            got[[INTENT, INTENT_ARG]] = want[[INTENT, INTENT_ARG]] = 0
        assert np.array_equal(got, want), name


def test_loss_bursts_lose_messages():
    from kraftwalk.kernels.state.layout import STAT_NAMES

    lost = STAT_NAMES.index("msgs_lost")
    params = timed_params(3, 1, 1_000_000)
    calm = dict(mtbf_ms=2_000_000.0, partition_interval_ms=2_000_000.0)  # no other fault
    stats, viol, _, _ = run_timed_chunk(SEED, 0, 20, params, tp(
        "random-faults", loss_burst_interval_ms=0.0, **calm), F_TIMED)
    without = stats[:, lost].sum()
    stats, viol2, _, _ = run_timed_chunk(SEED, 0, 20, params, tp(
        "random-faults", loss_burst_interval_ms=3000.0, loss_burst_rate=0.9, **calm), F_TIMED)
    assert stats[:, lost].sum() > 100 + 4 * without  # a few are lost without bursts too
    assert names_of(viol) == names_of(viol2) == []
