"""Snapshots (kernels/protocol/snapshots.py): taking and cleaning, the leader's snapshot id in a
FetchResponse, the FetchSnapshot download, and a restart whose log is behind its snapshot.

Rules: KafkaMetadataLog.createNewSnapshot / deleteBeforeSnapshot / truncateToLatestSnapshot,
ReplicatedLog.validateOffsetAndEpoch, KafkaRaftClient.handleFetchSnapshotRequest /
handleFetchSnapshotResponse (Kafka's raft/ and core/ sources).
"""
from conftest import (
    F, F_SNAPSHOTS, act, cluster_with_leader, deliver, fetch_round, log_of, msg, send,
)
from kraftwalk.kernels.properties.checkers import SNAPSHOT_CONSISTENT
from kraftwalk.kernels.features import MUT_SNAPSHOT_ABOVE_HW
from kraftwalk.kernels.state.layout import (
    ERR_NONE, ERR_SNAPSHOT_NOT_FOUND, FETCHING_END, FETCHING_EPOCH, FETCH_REQUEST,
    FETCH_RESPONSE, FETCH_SNAPSHOT_REQUEST, FETCH_SNAPSHOT_RESPONSE, FLUSHED_END, F_ERROR,
    F_N_RECORDS, F_REQ_SNAPSHOT_END, F_REQ_SNAPSHOT_EPOCH, F_SNAPSHOT_COUNT, F_SNAPSHOT_END,
    F_SNAPSHOT_EPOCH, HW, LOG_END, LOG_START, REACHED, SNAP_END, SNAP_EPOCH, START_EPOCH,
    S_SNAPSHOTS, S_SNAPSHOTS_LOADED, T_RESTARTED_FROM_SNAPSHOT, T_SNAPSHOT_LOADED,
)
from kraftwalk.kernels.transition import (
    FAM_CLEAN, FAM_CLIENT_APPEND, FAM_CRASH, FAM_RESTART, FAM_SNAPSHOT,
)


def committed_at_leader(n, features=F_SNAPSHOTS):
    """Leader 0 of epoch 1 with its LeaderChange record and ``n`` client records, all
    replicated to voter 1 and committed (HW n + 1 at both); voter 2's log is empty."""
    w = cluster_with_leader(features, snapshots=True)
    for _ in range(n):
        act(w, (FAM_CLIENT_APPEND, 0, 0), features)
    fetch_round(w, 1, 0, features)   # the records
    fetch_round(w, 1, 0, features)   # the leader's HW, now past them
    assert w.node[HW, 0] == w.node[HW, 1] == n + 1
    return w


def test_snapshot_and_clean_at_the_hw():
    w = committed_at_leader(3)
    act(w, (FAM_CLEAN, 0, 0), F_SNAPSHOTS, expect=-1)   # nothing to clean up to yet
    act(w, (FAM_SNAPSHOT, 0, 0), F_SNAPSHOTS)
    assert (w.node[SNAP_END, 0], w.node[SNAP_EPOCH, 0], w.node[LOG_START, 0]) == (4, 1, 0)
    act(w, (FAM_SNAPSHOT, 0, 0), F_SNAPSHOTS, expect=-1)  # none past the HW
    act(w, (FAM_CLEAN, 0, 0), F_SNAPSHOTS)
    assert (w.node[LOG_START, 0], w.node[START_EPOCH, 0], w.node[LOG_END, 0]) == (4, 1, 4)
    assert w.scal[S_SNAPSHOTS] == 1
    # without the feature neither family is enabled
    act(w, (FAM_SNAPSHOT, 1, 0), F, expect=-1)


def offered_snapshot(w, i):
    """Node i, its log empty, fetches from leader 0 and is told of the leader's snapshot
    (4, 1) instead of records; it starts fetching that snapshot."""
    send(w, i, 0, F_SNAPSHOTS)
    deliver(w, FETCH_REQUEST, i, 0, F_SNAPSHOTS)
    m = msg(w, FETCH_RESPONSE, 0, i)
    assert (m[F_ERROR], m[F_SNAPSHOT_END], m[F_SNAPSHOT_EPOCH], m[F_N_RECORDS]) == (ERR_NONE, 4, 1, 0)
    deliver(w, FETCH_RESPONSE, 0, i, F_SNAPSHOTS)
    assert (w.node[FETCHING_END, i], w.node[FETCHING_EPOCH, i]) == (4, 1)


def test_an_empty_log_is_sent_the_snapshot_before_the_log_is_cleaned():
    """KAFKA-15078 (tryCompleteFetchRequest, every release): a Fetch at offset 0 gets the
    latest snapshot id whenever the leader has one, though its log still starts at 0;
    a fetch at any other offset is served from the log as before."""
    w = committed_at_leader(3)
    act(w, (FAM_SNAPSHOT, 0, 0), F_SNAPSHOTS)
    assert w.node[LOG_START, 0] == 0
    offered_snapshot(w, 2)
    act(w, (FAM_CLIENT_APPEND, 0, 0), F_SNAPSHOTS)
    fetch_round(w, 1, 0, F_SNAPSHOTS)      # voter 1 (log end 4) fetches records as ever
    assert w.node[LOG_END, 1] == 5 and w.node[FETCHING_END, 1] == 0


def test_before_cleaning_a_fetch_older_than_the_first_snapshot_gets_the_snapshot():
    """validateOffsetAndEpoch's third SNAPSHOT case with the log still starting at 0:
    the earliest snapshot on disk is the first one taken, and a Fetch whose last
    fetched epoch is below that snapshot's epoch gets the latest snapshot id (where a
    later epoch gets records or a diverging epoch). With a dynamic quorum (voter
    changes) the earliest is the bootstrap snapshot 0-0, so only the offset-0 rule
    offers one. The reference model does the same (kraftwalk/reference/snapshots.py)."""
    from conftest import F_RECONFIG, craft
    from kraftwalk.kernels.protocol.snapshots import fetch_needs_snapshot
    from kraftwalk.kernels.state.layout import FIRST_SNAP_EPOCH

    w = committed_at_leader(3)
    act(w, (FAM_SNAPSHOT, 0, 0), F_SNAPSHOTS)
    assert w.node[FIRST_SNAP_EPOCH, 0] == 1      # the first snapshot: (4, epoch 1)
    craft(w, 0, FIRST_SNAP_EPOCH=2)              # as if it had been taken in epoch 2
    features = F_SNAPSHOTS
    assert fetch_needs_snapshot(w, 0, 3, 1, features)       # last fetched epoch 1 < 2
    assert not fetch_needs_snapshot(w, 0, 3, 2, features)
    assert fetch_needs_snapshot(w, 0, 0, 0, features)       # KAFKA-15078
    assert not fetch_needs_snapshot(w, 0, 3, 1, F_RECONFIG | F_SNAPSHOTS)
    assert fetch_needs_snapshot(w, 0, 0, 0, F_RECONFIG | F_SNAPSHOTS)
    act(w, (FAM_CLEAN, 0, 0), F_SNAPSHOTS)       # cleaned: the log-start snapshot rules
    assert not fetch_needs_snapshot(w, 0, 4, 1, features)
    assert fetch_needs_snapshot(w, 0, 3, 1, features)       # below the log start


def test_a_lagging_follower_downloads_the_leaders_snapshot():
    w = committed_at_leader(3)
    act(w, (FAM_SNAPSHOT, 0, 0), F_SNAPSHOTS)
    act(w, (FAM_CLEAN, 0, 0), F_SNAPSHOTS)
    # voter 2 fetches from offset 0, below the leader's log start: the snapshot id comes back
    offered_snapshot(w, 2)
    # its next request is a FetchSnapshot for that id; the answer holds the whole snapshot
    send(w, 2, 0, F_SNAPSHOTS)
    m = msg(w, FETCH_SNAPSHOT_REQUEST, 2, 0)
    assert (m[F_REQ_SNAPSHOT_END], m[F_REQ_SNAPSHOT_EPOCH]) == (4, 1)
    deliver(w, FETCH_SNAPSHOT_REQUEST, 2, 0, F_SNAPSHOTS)
    m = msg(w, FETCH_SNAPSHOT_RESPONSE, 0, 2)
    assert (m[F_ERROR], m[F_SNAPSHOT_END], m[F_SNAPSHOT_COUNT]) == (ERR_NONE, 4, 4)
    deliver(w, FETCH_SNAPSHOT_RESPONSE, 0, 2, F_SNAPSHOTS)
    # installed: the log is the snapshot and starts at its end; the HW is up to it
    assert log_of(w, 2) == log_of(w, 0)
    assert [int(w.node[f, 2]) for f in (LOG_START, START_EPOCH, LOG_END, FLUSHED_END, HW,
                                         SNAP_END, SNAP_EPOCH, FETCHING_END)] == [4, 1, 4, 4, 4,
                                                                                  4, 1, 0]
    assert w.scal[S_SNAPSHOTS_LOADED] == 1 and (w.scal[REACHED] >> T_SNAPSHOT_LOADED) & 1
    # and it fetches on from the snapshot: offset 4 with the snapshot's epoch is valid
    act(w, (FAM_CLIENT_APPEND, 0, 0), F_SNAPSHOTS)
    fetch_round(w, 2, 0, F_SNAPSHOTS)
    assert log_of(w, 2) == log_of(w, 0) and w.node[LOG_END, 2] == 5


def test_a_snapshot_cleaned_away_before_the_download_is_not_found():
    w = committed_at_leader(3)
    act(w, (FAM_SNAPSHOT, 0, 0), F_SNAPSHOTS)
    act(w, (FAM_CLEAN, 0, 0), F_SNAPSHOTS)
    fetch_round(w, 2, 0, F_SNAPSHOTS)   # voter 2 now fetches snapshot (4, 1)
    # the leader moves on: a newer snapshot, and the log cleaned up to it
    act(w, (FAM_CLIENT_APPEND, 0, 0), F_SNAPSHOTS)
    fetch_round(w, 1, 0, F_SNAPSHOTS)
    fetch_round(w, 1, 0, F_SNAPSHOTS)
    act(w, (FAM_SNAPSHOT, 0, 0), F_SNAPSHOTS)
    act(w, (FAM_CLEAN, 0, 0), F_SNAPSHOTS)
    assert (w.node[SNAP_END, 0], w.node[LOG_START, 0]) == (5, 5)
    send(w, 2, 0, F_SNAPSHOTS)
    deliver(w, FETCH_SNAPSHOT_REQUEST, 2, 0, F_SNAPSHOTS)
    assert msg(w, FETCH_SNAPSHOT_RESPONSE, 0, 2)[F_ERROR] == ERR_SNAPSHOT_NOT_FOUND
    deliver(w, FETCH_SNAPSHOT_RESPONSE, 0, 2, F_SNAPSHOTS)
    assert w.node[FETCHING_END, 2] == 0   # it starts over with a Fetch ...
    fetch_round(w, 2, 0, F_SNAPSHOTS)
    assert (w.node[FETCHING_END, 2], w.node[FETCHING_EPOCH, 2]) == (5, 1)  # ... and the new id


def test_a_restart_behind_its_snapshot_starts_the_log_at_the_snapshot():
    """An observer does not flush on fetch: its snapshot can pass its flushed log, which a
    crash then loses; on restart the log starts at the snapshot (KafkaMetadataLog load)."""
    w = committed_at_leader(3)
    fetch_round(w, 3, 0, F_SNAPSHOTS)   # the observer learns of the leader
    fetch_round(w, 3, 0, F_SNAPSHOTS)   # records and the HW
    assert (w.node[LOG_END, 3], w.node[HW, 3], w.node[FLUSHED_END, 3]) == (4, 4, 0)
    act(w, (FAM_SNAPSHOT, 3, 0), F_SNAPSHOTS)
    act(w, (FAM_CRASH, 3, 0), F_SNAPSHOTS)
    assert w.node[LOG_END, 3] == 0
    act(w, (FAM_RESTART, 3, 0), F_SNAPSHOTS)
    assert [int(w.node[f, 3]) for f in (LOG_START, START_EPOCH, LOG_END, FLUSHED_END,
                                         SNAP_END)] == [4, 1, 4, 4, 4]
    assert log_of(w, 3) == log_of(w, 0)
    assert (w.scal[REACHED] >> T_RESTARTED_FROM_SNAPSHOT) & 1


def test_snapshot_above_hw_is_caught():
    """The known bug: a snapshot up to the log end, past the HW (uncommitted entries)."""
    features = F_SNAPSHOTS | MUT_SNAPSHOT_ABOVE_HW
    w = committed_at_leader(2, features)
    act(w, (FAM_CLIENT_APPEND, 0, 0), features)
    act(w, (FAM_SNAPSHOT, 0, 0), features, expect=SNAPSHOT_CONSISTENT + 1)
    assert w.node[SNAP_END, 0] == 4 and w.node[HW, 0] == 3
