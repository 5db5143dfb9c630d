"""Read a kernel ``Walk`` (its NumPy arrays) into the canonical snapshot of :mod:`.canonical`.

Only the layout constants of ``kraftwalk.kernels.state.layout`` and the message table are used;
no kernel code runs.
"""
from __future__ import annotations

from kraftwalk.kernels.state.layout import (
    ACKED_MASK, CM_EPOCH, CM_VALUE, C_NEXT_CORR, C_NEXT_VALUE, ENTRY_EPOCH, ENTRY_VALUE, EPOCH,
    EPOCH_START, FETCHED_MASK, FLUSHED_END, FOLLOWER, GRANTED, G_COMMIT_LEN, HAS_FETCHED, HW,
    INFLIGHT, LEADER_ID, LINKS, LOG_END, N_MSGS, PREFERRED, P_NODES, REJECTED, REPLICA_END, ROLE,
    STAT_NAMES, STATS_BASE, UP, VOTED_ID, FETCHING_END, FETCHING_EPOCH, LOG_START, SNAP_END,
    FIRST_SNAP_EPOCH, SNAP_EPOCH, START_EPOCH, VOTER_COUNT, VOTERS, VOTERS_AT, DIR, DIR_BITS, MAX_DIR,
    REPLICA_DIR, SELF_VOTER, VOTED_DIR, VOTER_DIRS,
)
from kraftwalk.vocabulary.messages import unpack

from . import canonical


def _bits(mask: int, n: int) -> set:
    return {j for j in range(n) if (int(mask) >> j) & 1}


def kernel_log(w, i: int) -> list:
    n = int(w.node[LOG_END, i])
    return list(zip(w.log[ENTRY_EPOCH, i, :n].tolist(), w.log[ENTRY_VALUE, i, :n].tolist()))


def voter_dirs(word: int, n: int) -> dict:
    """The directory id of every node id in a VOTER_DIRS word (DIR_BITS bits each)."""
    return {j: (int(word) >> (DIR_BITS * j)) & MAX_DIR for j in range(n)}


def kernel_snapshot(w) -> dict:
    """The canonical snapshot of kernel walk ``w`` (compare with ReferenceCluster.snapshot)."""
    n = int(w.scal[P_NODES])
    node = [row[:n] for row in w.node.tolist()]      # plain ints: much faster to read
    inflight = w.peer[INFLIGHT, :n, :n].tolist()
    replica_end = w.peer[REPLICA_END, :n, :n].tolist()
    replica_dir = w.peer[REPLICA_DIR, :n, :n].tolist()
    nodes = []
    for i in range(n):
        role = node[ROLE][i]
        nodes.append(canonical.node_view(
            up=node[UP][i] == 1, role=role, epoch=node[EPOCH][i],
            voted_id=node[VOTED_ID][i], leader_id=node[LEADER_ID][i],
            log=kernel_log(w, i), flushed_end=node[FLUSHED_END][i], hw=node[HW][i],
            granted=_bits(node[GRANTED][i], n), rejected=_bits(node[REJECTED][i], n),
            has_fetched=node[HAS_FETCHED][i] == 1, epoch_start=node[EPOCH_START][i],
            fetched=_bits(node[FETCHED_MASK][i], n) - {i},
            acked=_bits(node[ACKED_MASK][i], n) - {i},
            preferred=(node[PREFERRED][i] == 1 if role == FOLLOWER
                       else _bits(node[PREFERRED][i], n)),
            links=_bits(node[LINKS][i], n) - {i},
            inflight=dict(enumerate(inflight[i])),
            replica_end=replica_end[i],
            log_start=node[LOG_START][i], start_epoch=node[START_EPOCH][i],
            latest=(node[SNAP_END][i], node[SNAP_EPOCH][i]),
            first_snapshot_epoch=node[FIRST_SNAP_EPOCH][i],
            fetching=(None if node[FETCHING_END][i] == 0
                      else (node[FETCHING_END][i], node[FETCHING_EPOCH][i])),
            voters=_bits(node[VOTERS][i], n), voters_at=node[VOTERS_AT][i],
            voter_count=node[VOTER_COUNT][i],
            dir=node[DIR][i], voted_dir=node[VOTED_DIR][i], replica_dir=replica_dir[i],
            voter_dirs=voter_dirs(node[VOTER_DIRS][i], n), self_voter=node[SELF_VOTER][i] == 1,
        ))
    scal = w.scal.tolist()
    stats = {name: scal[STATS_BASE + k] for k, name in enumerate(STAT_NAMES)
             if name != "disabled_attempts"}
    clen = scal[G_COMMIT_LEN]
    committed = list(zip(w.ghost[CM_EPOCH, :clen].tolist(), w.ghost[CM_VALUE, :clen].tolist()))
    rows = w.msgs[:scal[N_MSGS]].tolist()
    return canonical.snapshot_view(
        nodes=nodes,
        messages=[unpack(row, n) for row in rows],
        next_value=scal[C_NEXT_VALUE], next_corr=scal[C_NEXT_CORR],
        stats=stats, committed=committed)
