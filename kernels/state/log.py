"""The replicated log of each node: append, truncate, flush, and epoch look-ups.

Every write goes through ``append_entry`` or ``truncate_to`` so that the prefix
hash stays correct and ``dirty_from`` tells the checkers which offsets changed.
"""
import numpy as np
from ..jit import kernel

from .layout import (
    DIRTY_FROM, ENTRY_EPOCH, ENTRY_VALUE, FLUSHED_END, LOG_END, LOG_HASH, S_LOG_FULL,
    T_LOG_CAPACITY_HIT, VOTERS_AT,
)
from .coverage import reach
from .rng import mix64
from .voters import apply_voters_record, is_voters_record, refresh_voters

HASH_SEED = np.uint64(0x6A09E667F3BCC909)


@kernel
def entry_hash(prev, epoch, value):
    key = (np.uint64(np.uint32(epoch)) << np.uint64(32)) | np.uint64(np.uint32(value))
    return mix64(prev ^ mix64(key))


@kernel
def prefix_hash(w, i, length):
    """Hash of the entries [0, length) of node i's log."""
    if length <= 0:
        return HASH_SEED
    return w.hashes[LOG_HASH + i, length - 1]


@kernel
def last_epoch(w, i):
    """Epoch of the last entry in node i's log, 0 when empty."""
    n = w.node[LOG_END, i]
    if n == 0:
        return 0
    return w.log[ENTRY_EPOCH, i, n - 1]


@kernel
def append_entry(w, i, epoch, value):
    """Append (epoch, value) to node i's log. False (and counted) if the log is full."""
    n = w.node[LOG_END, i]
    if n >= w.log.shape[2]:
        w.scal[S_LOG_FULL] += 1
        reach(w, T_LOG_CAPACITY_HIT, 0)
        return False
    w.log[ENTRY_EPOCH, i, n] = epoch
    w.log[ENTRY_VALUE, i, n] = value
    w.hashes[LOG_HASH + i, n] = entry_hash(prefix_hash(w, i, n), epoch, value)
    w.node[LOG_END, i] = n + 1
    if n < w.node[DIRTY_FROM, i]:
        w.node[DIRTY_FROM, i] = n
    if is_voters_record(value):
        apply_voters_record(w, i, value, n)  # takes effect on append (KIP-853)
    return True


@kernel
def truncate_to(w, i, offset):
    """Drop node i's entries at offsets >= offset (a VotersRecord among them is rolled
    back: the node's voter set is the latest one left)."""
    if offset < w.node[LOG_END, i]:
        w.node[LOG_END, i] = offset
        if w.node[FLUSHED_END, i] > offset:
            w.node[FLUSHED_END, i] = offset
        if offset < w.node[DIRTY_FROM, i]:
            w.node[DIRTY_FROM, i] = offset
        if w.node[VOTERS_AT, i] >= offset:
            refresh_voters(w, i)


@kernel
def flush(w, i):
    w.node[FLUSHED_END, i] = w.node[LOG_END, i]


@kernel
def end_offset_for_epoch(w, i, epoch):
    """Kafka's endOffsetForEpoch on node i's log.

    Returns (e, end): e is the largest epoch <= ``epoch`` present in the log and
    end the offset just past its last entry (the start of the next epoch, or the
    log end). When no such epoch exists, (0, 0): the log start.
    """
    n = w.node[LOG_END, i]
    k = n - 1
    while k >= 0 and w.log[ENTRY_EPOCH, i, k] > epoch:
        k -= 1
    if k < 0:
        return 0, 0
    return w.log[ENTRY_EPOCH, i, k], k + 1


@kernel
def log_up_to_date(last_epoch_a, end_a, last_epoch_b, end_b):
    """True when a log ending (last_epoch_a, end_a) is at least as up to date as b."""
    if last_epoch_a != last_epoch_b:
        return last_epoch_a > last_epoch_b
    return end_a >= end_b
