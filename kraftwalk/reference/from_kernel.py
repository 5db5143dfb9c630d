"""Read a kernel ``Walk`` (its NumPy arrays) into the canonical snapshot of :mod:`.canonical`.

Only the layout constants of ``kraftwalk.kernels.layout`` are used; no kernel code runs.
"""
from __future__ import annotations

from kraftwalk.kernels.layout import (
    ACKED_MASK, CM_EPOCH, CM_VALUE, C_NEXT_CORR, C_NEXT_VALUE, ENTRY_EPOCH, ENTRY_VALUE, EPOCH,
    EPOCH_START, FETCHED_MASK, FLUSHED_END, FOLLOWER, F_BASE_OFFSET, F_CORR, F_DIVERGING_END,
    F_DIVERGING_EPOCH, F_DST, F_EPOCH, F_ERROR, F_FETCH_OFFSET, F_GRANTED, F_HW, F_LAST_EPOCH,
    F_LAST_FETCHED_EPOCH, F_LAST_OFFSET, F_LEADER, F_N_RECORDS, F_PRE_VOTE, F_RECORDS,
    F_REQ_LEADER, F_SRC, F_SUCCESSORS, F_TYPE, GRANTED, G_COMMIT_LEN, HAS_FETCHED, HW, INFLIGHT,
    LEADER_ID, LINKS, LOG_END, N_MSGS, PREFERRED, P_NODES, REJECTED, REPLICA_END, ROLE,
    STAT_NAMES, STATS_BASE, UP, VOTED_ID, BEGIN_QUORUM_EPOCH_REQUEST,
    BEGIN_QUORUM_EPOCH_RESPONSE, END_QUORUM_EPOCH_REQUEST, END_QUORUM_EPOCH_RESPONSE,
    FETCH_REQUEST, FETCH_RESPONSE, VOTE_REQUEST, VOTE_RESPONSE,
)

from . import canonical


def _bits(mask: int, n: int) -> set:
    return {j for j in range(n) if (int(mask) >> j) & 1}


def kernel_log(w, i: int) -> list:
    n = int(w.node[LOG_END, i])
    return list(zip(w.log[ENTRY_EPOCH, i, :n].tolist(), w.log[ENTRY_VALUE, i, :n].tolist()))


def kernel_message(row, n: int) -> tuple:
    """One message row as the tuple ``Message.canonical`` gives for the same message."""
    t = int(row[F_TYPE])
    head = (t, int(row[F_SRC]), int(row[F_DST]), int(row[F_EPOCH]), int(row[F_CORR]))
    if t == VOTE_REQUEST:
        return head + (int(row[F_LAST_EPOCH]), int(row[F_LAST_OFFSET]), bool(row[F_PRE_VOTE]))
    if t == VOTE_RESPONSE:
        return head + (int(row[F_ERROR]), int(row[F_LEADER]), bool(row[F_PRE_VOTE]),
                       bool(row[F_GRANTED]))
    if t == BEGIN_QUORUM_EPOCH_REQUEST:
        return head + (int(row[F_REQ_LEADER]),)
    if t == END_QUORUM_EPOCH_REQUEST:
        return head + (int(row[F_REQ_LEADER]), tuple(sorted(_bits(row[F_SUCCESSORS], n))))
    if t in (BEGIN_QUORUM_EPOCH_RESPONSE, END_QUORUM_EPOCH_RESPONSE):
        return head + (int(row[F_ERROR]), int(row[F_LEADER]))
    if t == FETCH_REQUEST:
        return head + (int(row[F_FETCH_OFFSET]), int(row[F_LAST_FETCHED_EPOCH]))
    if t == FETCH_RESPONSE:
        div_epoch = int(row[F_DIVERGING_EPOCH])
        diverging = None if div_epoch < 0 else (div_epoch, int(row[F_DIVERGING_END]))
        nrec = int(row[F_N_RECORDS])
        records = tuple((int(row[F_RECORDS + 2 * q]), int(row[F_RECORDS + 2 * q + 1]))
                        for q in range(nrec))
        base = int(row[F_BASE_OFFSET]) if nrec else None
        return head + (int(row[F_ERROR]), int(row[F_LEADER]), int(row[F_HW]), diverging, base,
                       records)
    raise ValueError(f"unknown message type {t}")


def kernel_snapshot(w) -> dict:
    """The canonical snapshot of kernel walk ``w`` (compare with ReferenceCluster.snapshot)."""
    n = int(w.scal[P_NODES])
    node = [row[:n] for row in w.node.tolist()]      # plain ints: much faster to read
    inflight = w.peer[INFLIGHT, :n, :n].tolist()
    replica_end = w.peer[REPLICA_END, :n, :n].tolist()
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
        ))
    scal = w.scal.tolist()
    stats = {name: scal[STATS_BASE + k] for k, name in enumerate(STAT_NAMES)
             if name != "disabled_attempts"}
    clen = scal[G_COMMIT_LEN]
    committed = list(zip(w.ghost[CM_EPOCH, :clen].tolist(), w.ghost[CM_VALUE, :clen].tolist()))
    rows = w.msgs[:scal[N_MSGS]].tolist()
    return canonical.snapshot_view(
        nodes=nodes,
        messages=[kernel_message(row, n) for row in rows],
        next_value=scal[C_NEXT_VALUE], next_corr=scal[C_NEXT_CORR],
        stats=stats, committed=committed)
