"""Disk loss with directory ids (KIP-853; kernels/faults.lose_disk, kernels/state/voters.py): a
node that lost its disk starts empty under a new directory id, and nothing it does counts
as the voter its old key names: Vote and BeginQuorumEpoch name the receiver's key, Fetch
carries the fetcher's, the leader's HW counts a voter's state only under its key. It comes
back as a voter by being removed and added again.

Rules: KafkaRaftClient.handleVoteRequest / handleBeginQuorumEpochRequest (isValidVoterKey),
LeaderState.updateReplicaState (ReplicaState.matchesKey), AddVoterHandler (DUPLICATE_VOTER).
"""
from conftest import (
    F_DISK_LOSS, F_RECONFIG, F_WIPED_SAME_ID, act, cluster_with_leader, deliver, fetch_round,
    msg, name_of, send, timeout, violation, vote_round,
)
from kraftwalk.kernels.properties.checkers import LEADER_COMPLETENESS
from kraftwalk.kernels.state.layout import (
    DIR, EPOCH, ERR_INVALID_VOTER_KEY, F_ERROR, F_GRANTED, HW,
    LEADER, LOG_END, MAX_DIR, REACHED, REJECTED, REPLICA_DIR, REPLICA_END, ROLE, SELF_VOTER,
    S_DISK_LOSSES, T_DISK_LOST, T_WIPED_VOTER_READDED, UNATTACHED, UP, VOTE_REQUEST,
    VOTE_RESPONSE, VOTED_ID, VOTER_DIRS,
)
from kraftwalk.kernels.transition import (
    FAM_ADD_VOTER, FAM_CLIENT_APPEND, FAM_CRASH, FAM_DISK_LOSS, FAM_REMOVE_VOTER,
)

FD = F_DISK_LOSS


def committed_on_0_and_1(features=FD):
    """Leader 0 of epoch 1 with its LeaderChange and a client record committed on 0 and 1
    (HW 2); voter 2 follows but has fetched nothing."""
    w = cluster_with_leader(features)
    act(w, (FAM_CLIENT_APPEND, 0, 0), features)
    for _ in range(3):
        fetch_round(w, 1, 0, features)
    assert w.node[HW, 0] == 2 and w.node[LOG_END, 1] == 2 and w.node[LOG_END, 2] == 0
    return w


def test_a_lost_disk_starts_empty_under_a_new_directory_id():
    w = committed_on_0_and_1()
    act(w, (FAM_DISK_LOSS, 1, 0), FD)
    assert w.node[UP, 1] == 1 and w.node[ROLE, 1] == UNATTACHED
    assert w.node[EPOCH, 1] == 0 and w.node[LOG_END, 1] == 0 and w.node[VOTED_ID, 1] == -1
    assert w.node[DIR, 1] == 1 and w.node[SELF_VOTER, 1] == 0      # an observer now
    assert w.scal[S_DISK_LOSSES] == 1 and w.scal[REACHED] >> T_DISK_LOST & 1
    # the HW entry lost a holder, but the key that held it can never vote again
    assert w.node[HW, 0] == 2


def test_disk_loss_needs_its_feature_and_happens_at_most_max_dir_times():
    w = cluster_with_leader(F_RECONFIG)
    act(w, (FAM_DISK_LOSS, 1, 0), F_RECONFIG, expect=-1)
    w = cluster_with_leader(FD)
    for _ in range(MAX_DIR):
        act(w, (FAM_DISK_LOSS, 2, 0), FD)
    act(w, (FAM_DISK_LOSS, 2, 0), FD, expect=-1)
    assert w.node[DIR, 2] == MAX_DIR


def test_the_new_disk_refuses_a_vote_request_naming_the_old_one():
    w = committed_on_0_and_1()
    act(w, (FAM_DISK_LOSS, 1, 0), FD)
    timeout(w, 2, FD)                               # pre-vote in epoch 1
    send(w, 2, 1, FD)
    deliver(w, VOTE_REQUEST, 2, 1, FD)
    r = msg(w, VOTE_RESPONSE, 1, 2)
    assert r[F_ERROR] == ERR_INVALID_VOTER_KEY and r[F_GRANTED] == 0
    deliver(w, VOTE_RESPONSE, 1, 2, FD)
    assert not w.node[REJECTED, 2] >> 1 & 1        # handled: neither a grant nor a rejection
    assert w.node[VOTED_ID, 1] == -1


def test_without_directory_ids_the_empty_disk_elects_a_leader_that_lacks_committed_entries():
    fx = F_WIPED_SAME_ID
    w = committed_on_0_and_1(fx)
    act(w, (FAM_CRASH, 0, 0), fx)                   # (no leader left to hold the HW)
    act(w, (FAM_DISK_LOSS, 1, 0), fx)
    assert w.node[DIR, 1] == 0 and w.node[SELF_VOTER, 1] == 1   # the old key, empty
    timeout(w, 2, fx)
    vote_round(w, 2, 1, fx)                         # pre-vote granted by the empty log
    send(w, 2, 1, fx)                               # and the vote: 2 leads epoch 2 ...
    deliver(w, VOTE_REQUEST, 2, 1, fx)
    deliver(w, VOTE_RESPONSE, 1, 2, fx, expect=LEADER_COMPLETENESS + 1)
    assert w.node[ROLE, 2] == LEADER and w.node[EPOCH, 2] == 2   # ... without [0, 2)
    # with directory ids the same steps elect nobody
    w = committed_on_0_and_1()
    act(w, (FAM_CRASH, 0, 0), FD)
    act(w, (FAM_DISK_LOSS, 1, 0), FD)
    timeout(w, 2, FD)
    send(w, 2, 1, FD)
    deliver(w, VOTE_REQUEST, 2, 1, FD)
    deliver(w, VOTE_RESPONSE, 1, 2, FD)
    assert w.node[ROLE, 2] != LEADER and w.node[EPOCH, 2] == 1


def test_the_leader_does_not_count_the_new_disks_fetches():
    w = committed_on_0_and_1()
    act(w, (FAM_DISK_LOSS, 1, 0), FD)
    act(w, (FAM_CLIENT_APPEND, 0, 0), FD)          # offset 2: needs 0 and one of 1, 2
    for _ in range(4):                              # the new disk finds the leader, catches up
        fetch_round(w, 1, 0, FD)
    assert w.node[LOG_END, 1] == 3 and w.node[DIR, 1] == 1
    assert w.peer[REPLICA_END, 0, 1] == 2 and w.peer[REPLICA_DIR, 0, 1] == 0  # the old key's
    assert w.node[HW, 0] == 2                       # not committed by the new disk
    fetch_round(w, 2, 0, FD)
    fetch_round(w, 2, 0, FD)
    fetch_round(w, 2, 0, FD)
    assert w.node[HW, 0] == 3                       # voter 2 commits it


def test_a_wiped_voter_comes_back_removed_and_added_under_its_new_directory_id():
    w = committed_on_0_and_1()
    act(w, (FAM_DISK_LOSS, 2, 0), FD)
    act(w, (FAM_ADD_VOTER, 0, 2), FD, expect=-1)    # DUPLICATE_VOTER: id 2 is a voter
    act(w, (FAM_REMOVE_VOTER, 0, 2), FD)
    fetch_round(w, 1, 0, FD)
    fetch_round(w, 1, 0, FD)                        # the removal commits on {0, 1}
    for _ in range(4):
        fetch_round(w, 2, 0, FD)                    # the new disk fetches as an observer
    assert w.peer[REPLICA_DIR, 0, 2] == 1 and w.peer[REPLICA_END, 0, 2] >= 0
    act(w, (FAM_ADD_VOTER, 0, 2), FD)
    assert w.scal[REACHED] >> T_WIPED_VOTER_READDED & 1
    assert (w.node[VOTER_DIRS, 0] >> 4) & MAX_DIR == 1
    fetch_round(w, 2, 0, FD)
    assert w.node[SELF_VOTER, 2] == 1               # its own key is a voter again
    assert w.node[VOTER_DIRS, 2] == w.node[VOTER_DIRS, 0]


def test_majority_reached_hw_counts_a_lost_key_only_with_directory_ids():
    # With directory ids a lost key cannot vote or fetch: the HW stays safe (above).
    w = committed_on_0_and_1()
    act(w, (FAM_DISK_LOSS, 1, 0), FD)
    assert violation(w)[0] is None
    # Without them the same state is a committed entry on one voter of three.
    w = committed_on_0_and_1(F_WIPED_SAME_ID)
    got = act(w, (FAM_DISK_LOSS, 1, 0), F_WIPED_SAME_ID, expect=None)
    assert name_of(got - 1) == "MajorityReachedHighWatermark"
