"""Kafka's timing rules per release in the timed chooser (run-time ``tp`` values, one
compile for every release): the lost-election backoff as each release draws it, and
what a Candidate does when it loses or its election times out."""
import numpy as np
import pytest

from kraftwalk.elect_config import ElectConfig
from kraftwalk.kernel_inputs import timed_features, timed_params, timing_params
from kraftwalk.kernels.drivers.timed import run_timed_chunk
from kraftwalk.kernels.drivers.trace import new_walk
from kraftwalk.kernels.state.clock import TS_NAMES, alloc_clock, election_backoff, end_epoch_backoff

F_TIMED = timed_features(True, "none")  # the variant tests/kernels/test_timed.py compiles
SEED = 20261206


def draws(kafka, retries, n=3000):
    params = timed_params(3, 0, 1000)
    w = new_walk(params)
    c = alloc_clock(3, timing_params(ElectConfig(kafka=kafka, voters=(3,))))
    return {int(election_backoff(w, c, retries)) // 1000 for _ in range(n)}  # ms


@pytest.mark.parametrize("kafka, retries, expected", [
    ("4.0", 1, {0, 100}),                  # 100 x nextInt(2): may be 0
    ("4.0", 2, {0, 100, 200, 300}),
    ("4.0.1", 1, {100}),                   # 100 x nextInt(1, 2): never 0
    ("4.0.1", 2, {100, 200, 300}),
    ("3.9.2", 1, {100, 200}),              # 100 x (1 + nextInt(2)): the backport
    ("3.9.2", 2, {100, 200, 300, 400}),
])
def test_the_lost_election_backoff_as_each_release_draws_it(kafka, retries, expected):
    assert draws(kafka, retries) == expected


def test_the_backoff_cap_is_exact_before_kafka_18345_and_jittered_after():
    exact = draws("4.0", 12)
    assert max(exact) == 1000 and 1000 in exact
    jittered = draws("4.0.1", 12)
    assert 1000 < max(jittered) <= 1099 and min(jittered) >= 100


def elect_ms(kafka, walks=300):
    tp = timing_params(ElectConfig(kafka=kafka, voters=(5,)))
    _, _, timed, _ = run_timed_chunk(SEED, 0, walks, timed_params(5, 0, 1_000_000), tp, F_TIMED)
    elect = timed[:, TS_NAMES.index("elect_us")]
    return np.median(elect[elect >= 0]) / 1000


def test_a_rejected_candidate_waits_out_its_election_timeout_from_4_1():
    """KAFKA-18345 (4.1): with no backoff after a lost election the next one waits for an
    election timeout (1-2 s) instead of a backoff (0-1 s); a 5-voter leader crash splits
    its first vote more often than not, so the median time to elect moves by most of a
    second (the same walks, the same seed, only the rule differs)."""
    before, after = elect_ms("4.0"), elect_ms("4.1")
    assert after - before > 500, (before, after)
    # 4.2's heartbeat (KAFKA-16926) sends fewer messages, so the walks' latency draws
    # differ, but it moves no election: the medians agree within noise; 4.3 is 4.2
    assert abs(elect_ms("4.2") - after) < 150, (after, elect_ms("4.2"))
    assert elect_ms("4.3") == elect_ms("4.2")


def heartbeats(kafka, walk=1):
    """A 3-voter leader-crash walk's BeginQuorumEpoch sends, replayed on the untimed
    relation to read each sender's role: {(leader, voter): [send times, ms]}."""
    from kraftwalk.kernels.drivers.timed import record_timed_walk
    from kraftwalk.kernels.drivers.trace import apply_and_check, new_walk
    from kraftwalk.kernels.features import KAFKA_17030, KAFKA_17642, PRE_VOTE
    from kraftwalk.kernels.state.layout import LEADER, ROLE
    from kraftwalk.kernels.transition import FAM_SEND

    params = timed_params(3, 0, 1_000_000)
    tp = timing_params(ElectConfig(kafka=kafka, voters=(3,),
                                   timing={"max_time_ms": 60_000}))
    actions, _, _ = record_timed_walk(SEED, walk, params, tp, F_TIMED)
    w = new_walk(params, SEED, walk)
    sends = {}
    for f, a, b, t in actions:
        if f == FAM_SEND and w.node[ROLE, a] == LEADER:
            sends.setdefault((int(a), int(b)), []).append(t // 1000)
        assert apply_and_check(w, (f, a, b), PRE_VOTE | KAFKA_17642 | KAFKA_17030) == 0
    return sends


def test_the_leader_heartbeat_goes_to_every_voter_until_4_2_then_to_the_idle_ones():
    """KAFKA-16536 (3.9): BeginQuorumEpoch to every other voter each fetch timeout / 2,
    on one timer; KAFKA-16926 (4.2): only to a voter that has not fetched for that long.
    The same 3-voter walk under 4.1 and 4.2 (the first leader crashes, the next one
    leads to the walk's end): a fetching follower gets the heartbeat every second under
    4.1 (every two around a request to a node that is down: one unanswered request at a
    time) and only when its leader starts under 4.2."""
    every, idle = heartbeats("4.1"), heartbeats("4.2")
    steady = [times for times in every.values() if len(times) > 5]
    assert steady
    for times in steady:  # one timer: a second apart (two, around a lost request)
        assert set(np.diff(times)) <= {1000, 2000}, times
    fetching = [times for times in idle.values() if len(times) == 1]
    assert fetching  # each follower of the new leader: told once, at its start
    assert sum(map(len, idle.values())) < sum(map(len, every.values())) / 4


def test_a_timed_out_candidate_backs_off_first_only_before_4_0():
    """pollCandidate: 3.9 backs off when a Candidate's election times out, 4.0 runs again
    at once. The same walks under 4.0's rules with 3.9's timeout backoff switched on."""
    base = ElectConfig(kafka="4.0", voters=(5,))
    tps = [timing_params(base), timing_params(ElectConfig(
        kafka="4.0", voters=(5,), timing={"candidate_timeout_backoff": 1}))]
    out = [run_timed_chunk(SEED, 0, 300, timed_params(5, 0, 1_000_000), tp, F_TIMED)[2]
           for tp in tps]
    k = TS_NAMES.index("elect_us")
    assert not np.array_equal(out[0][:, k], out[1][:, k])
    assert np.count_nonzero(tps[0] != tps[1]) == 1  # the one parameter that differs


def voted_out_candidate():
    """Node 0, Candidate of epoch 1 whose election timer has 700 ms left, and node 1's
    VoteRequest of epoch 2 on its way to it (node 0's log is ahead: it will refuse)."""
    from conftest import F_NOPV, craft, fresh, msgs, send, timeout
    from kraftwalk.kernels.state.clock import ELECTION_AT, NOW, PREV_ROLE, DL_TIMER
    from kraftwalk.kernels.state.layout import CANDIDATE, VOTE_REQUEST

    w = fresh(3, 0)
    timeout(w, 0, F_NOPV)
    timeout(w, 1, F_NOPV)
    timeout(w, 1, F_NOPV)
    craft(w, 0, log=[(0, 1)])
    send(w, 1, 0, F_NOPV)
    c = alloc_clock(3, timing_params(ElectConfig(voters=(3,))))
    c.t[NOW] = 1_000_000
    c.node[PREV_ROLE, 0] = CANDIDATE
    c.node[DL_TIMER, 0] = c.node[ELECTION_AT, 0] = 1_700_000
    return w, c, msgs(w, VOTE_REQUEST, 1, 0)[0]


def test_unattached_keeps_the_election_time_the_candidate_had_left():
    """QuorumState.transitionToUnattached: node 0 refuses the higher epoch's vote and
    becomes Unattached of epoch 2 with its Candidate timer's 700 ms, not a fresh
    1-2 s."""
    from kraftwalk.kernels.choosers.timed_step import timed_act
    from kraftwalk.kernels.state.clock import DL_TIMER
    from kraftwalk.kernels.state.layout import EPOCH, ROLE, UNATTACHED
    from kraftwalk.kernels.transition import FAM_DELIVER

    w, c, k = voted_out_candidate()
    timed_act(w, c, FAM_DELIVER, k, 0, np.zeros((1, 4), np.int64), F_TIMED)
    assert (w.node[ROLE, 0], w.node[EPOCH, 0]) == (UNATTACHED, 2)
    assert c.node[DL_TIMER, 0] == 1_700_000


def test_a_prospective_that_grants_a_vote_starts_a_fresh_election_timer():
    """QuorumState.prospectiveAddVotedState: a Prospective of epoch 1 that grants a
    Candidate of its own epoch becomes a new ProspectiveState with a fresh 1-2 s
    election timer, and keeps its requests in flight (no connection reset)."""
    from conftest import F_NOPV, craft, fresh, msgs, send, timeout
    from kraftwalk.kernels.choosers.timed_step import timed_act
    from kraftwalk.kernels.state.clock import DL_TIMER, ELECTION_AT, NEXT_TRY, NOW, PREV_ROLE
    from kraftwalk.kernels.state.layout import (
        EPOCH, INTENT, PROSPECTIVE, ROLE, VOTED_ID, VOTE_REQUEST,
    )
    from kraftwalk.kernels.transition import FAM_DELIVER

    w = fresh(3, 0)
    craft(w, 0, epoch=1)
    timeout(w, 0)                       # Prospective of epoch 1, not voted
    send(w, 0, 2)                       # its pre-vote request to node 2, in flight
    timeout(w, 1, F_NOPV)               # node 1: Candidate of epoch 1
    send(w, 1, 0, F_NOPV)
    w.node[INTENT, 0] = 0               # (the timed chooser would have read them)
    c = alloc_clock(3, timing_params(ElectConfig(voters=(3,))))
    c.t[NOW] = 1_000_000
    c.node[PREV_ROLE, 0] = PROSPECTIVE
    c.node[DL_TIMER, 0] = c.node[ELECTION_AT, 0] = 1_100_000
    c.pair[NEXT_TRY, 0, 2] = 3_000_000  # the pre-vote request's timeout
    k = msgs(w, VOTE_REQUEST, 1, 0)[0]
    timed_act(w, c, FAM_DELIVER, k, 0, np.zeros((1, 4), np.int64), F_TIMED)
    assert (w.node[ROLE, 0], w.node[EPOCH, 0], w.node[VOTED_ID, 0]) == (PROSPECTIVE, 1, 1)
    assert 2_000_000 <= c.node[DL_TIMER, 0] < 3_000_000 == c.pair[NEXT_TRY, 0, 2]


@pytest.mark.parametrize("position, total, ms", [
    (0, 3, 0),      # first in the list: at once
    (1, 3, 250),    # (1000 >> (3 - 1)) << (2 - 1)
    (2, 3, 500),
    (2, 2, 1000),   # absent from the list (its place: the list's length): the cap
    (0, 0, 0),      # an empty list (a restarted leader's): everyone at once
])
def test_end_quorum_epoch_backoff_by_place_in_the_successor_list(position, total, ms):
    """KafkaRaftClient.endEpochElectionBackoff / strictExponentialElectionBackoffMs
    (every release): position 0, and so an empty list, gives 0; absent gives the cap."""
    c = alloc_clock(4, timing_params(ElectConfig(voters=(3,))))
    assert end_epoch_backoff(c, position, total) // 1000 == ms


def test_commit_latency_counts_the_append_linger():
    """BatchAccumulator: the leader writes a record quorum.append.linger.ms (25 ms) after
    it was asked for; the commit latency is timed from the ask, so it grows by the
    linger (the same seed with linger 0 and 25 ms)."""
    k_sum, k_n = TS_NAMES.index("commit_latency_sum_us"), TS_NAMES.index("commits_timed")
    mean = []
    for linger in (0, 25):
        tp = timing_params(ElectConfig(voters=(3,), timing={"append_linger_ms": linger}))
        timed = run_timed_chunk(SEED, 0, 100, timed_params(3, 0, 1_000_000), tp, F_TIMED)[2]
        mean.append(timed[:, k_sum].sum() / timed[:, k_n].sum() / 1000)
    assert 20 < mean[1] - mean[0] < 30, mean



def observer_polls(kafka, leader_timed_out=False, polls=40):
    """Observer 3 follows leader 0 (3 voters); its timers start as its FollowerState's
    do. Under 3.9-4.1 its fetch timeout then expires; each poll's Fetch is answered at
    once (NOT_LEADER_OR_FOLLOWER from a voter that does not lead). Returns the
    observer's fetch deadline and the targets of its polls."""
    from conftest import cluster_with_leader, fetch_round, msgs
    from kraftwalk.kernels.choosers.timed_step import enter_role, timed_act
    from kraftwalk.kernels.drivers.timed import EV_TIMER, handle_event, poll
    from kraftwalk.kernels.state.clock import DL_TIMER, INF, NEXT_TRY, NOW
    from kraftwalk.kernels.state.layout import FETCH_REQUEST, F_DST, INFLIGHT, INTENT
    from kraftwalk.kernels.transition import FAM_LOSE

    w = cluster_with_leader()
    fetch_round(w, 3, 1)                    # discovery: it follows leader 0
    w.node[INTENT, 3] = 0                   # (the timed chooser would have read them)
    c = alloc_clock(4, timing_params(ElectConfig(kafka=kafka, voters=(3,), observers=1)))
    c.t[NOW] = 1_000_000
    enter_role(w, c, 3, F_TIMED)
    deadline = c.node[DL_TIMER, 3]
    trace = np.zeros((1, 4), np.int64)
    if deadline < INF:
        c.t[NOW] = deadline
        handle_event(w, c, EV_TIMER, 3, trace, F_TIMED)
    if leader_timed_out:
        w.peer[INFLIGHT, 3, 0] = 7          # a Fetch to the leader, unanswered ...
        c.pair[NEXT_TRY, 3, 0] = c.t[NOW]   # ... for the request timeout
    targets = []
    for _ in range(polls):
        poll(w, c, 3, trace, F_TIMED)
        sent = msgs(w, FETCH_REQUEST, 3)
        assert len(sent) == 1
        j = int(w.msgs[sent[0], F_DST])
        targets.append(j)
        timed_act(w, c, FAM_LOSE, sent[0], 0, trace, F_TIMED)
        w.peer[INFLIGHT, 3, j] = 0          # answered: the connection is ready again
        c.pair[NEXT_TRY, 3, j] = c.t[NOW]
    return deadline, targets


def test_an_observer_turns_to_the_bootstrap_voters_at_its_fetch_timeout_until_4_2():
    """pollFollowerAsObserver: in 3.9-4.1 an observer whose fetch timeout expired fetches
    from random bootstrap voters until a fetch succeeds; from 4.2 (KAFKA-19354) its
    fetch timeout does nothing: it fetches from its leader, and from a random bootstrap
    voter only once a request to the leader timed out (maybeSendFetchToBestNode), then
    from its leader again."""
    deadline, old = observer_polls("4.1")
    assert deadline == 1_000_000 + 2_000_000          # the fetch timeout
    assert set(old) == {0, 1, 2}                      # random bootstrap voters, the leader too
    deadline, new = observer_polls("4.2")
    assert deadline == 1 << 62                        # none
    assert set(new) == {0}
    _, fallback = observer_polls("4.2", leader_timed_out=True, polls=2)
    assert fallback[0] in (0, 1, 2) and fallback[1] == 0
