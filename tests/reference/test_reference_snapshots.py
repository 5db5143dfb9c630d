"""The reference model's snapshot offers (kraftwalk/reference/snapshots.py), written from
Kafka's validateOffsetAndEpoch apart from the kernel's: the differential test checks
that the two agree along walks; this checks the reference's own reading of Kafka on
the case a walk rarely reaches (a fetch older than the first snapshot, before the log
is cleaned)."""
from __future__ import annotations

from kraftwalk.kernels.features import PRE_VOTE, RECONFIG, SNAPSHOTS
from kraftwalk.kernels.properties.checkers import ALL_CHECKS
from kraftwalk.reference import Params, ReferenceCluster
from kraftwalk.reference.snapshots import fetch_needs_snapshot

F_SNAPSHOTS = PRE_VOTE | ALL_CHECKS | SNAPSHOTS


def leader_with_snapshot(features):
    """Node 0 holds the snapshot (4, epoch 2), the first it took; its log starts at 0."""
    c = ReferenceCluster(Params(3, 0, log_capacity=16, msg_slots=16), features)
    node = c.nodes[0]
    node.log = [(1, -1), (1, 2), (2, -3), (2, 4)]
    node.latest, node.first_snapshot_epoch = (4, 2), 2
    return c, node


def test_before_cleaning_the_first_snapshot_is_the_earliest():
    c, node = leader_with_snapshot(F_SNAPSHOTS)
    assert fetch_needs_snapshot(c, node, 3, 1)         # last fetched epoch 1 < 2
    assert not fetch_needs_snapshot(c, node, 3, 2)
    assert fetch_needs_snapshot(c, node, 0, 0)         # KAFKA-15078: an empty log's fetch


def test_a_dynamic_quorum_has_the_bootstrap_snapshot_as_its_earliest():
    c, node = leader_with_snapshot(F_SNAPSHOTS | RECONFIG)
    assert not fetch_needs_snapshot(c, node, 3, 1)     # no epoch is below 0-0's
    assert fetch_needs_snapshot(c, node, 0, 0)


def test_after_cleaning_the_log_start_snapshot_is_the_earliest():
    c, node = leader_with_snapshot(F_SNAPSHOTS)
    node.log_start, node.start_epoch = 4, 2
    assert fetch_needs_snapshot(c, node, 3, 2)         # below the log start
    assert fetch_needs_snapshot(c, node, 4, 1)         # at it, another epoch
    assert not fetch_needs_snapshot(c, node, 4, 2)
