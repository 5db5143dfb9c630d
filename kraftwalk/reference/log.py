"""The replicated log: a list of (epoch, value) entries, and Kafka's epoch look-ups."""
from __future__ import annotations


def last_epoch(log: list) -> int:
    """Epoch of the last entry (Kafka's lastFetchedEpoch), 0 for an empty log."""
    return log[-1][0] if log else 0


def append(c, node, epoch: int, value: int) -> bool:
    """Append one entry to node's log; False (and counted) when the log is full."""
    if len(node.log) >= c.params.log_capacity:
        c.stats["log_full"] += 1
        return False
    node.log.append((epoch, value))
    return True


def truncate(node, offset: int) -> None:
    """Drop the entries at offsets >= offset (the flushed prefix shrinks with them)."""
    if offset < len(node.log):
        del node.log[offset:]
        node.flushed_end = min(node.flushed_end, offset)


def end_offset_for_epoch(log: list, epoch: int) -> tuple:
    """KafkaRaftLog.endOffsetForEpoch over LeaderEpochFileCache.endOffsetFor, as (epoch, offset).

    * requested epoch >= the latest epoch in the log: (latest epoch, log end);
    * otherwise: the largest epoch <= requested that has entries, and the offset where
      the next higher epoch starts;
    * requested below every epoch in the log: (requested epoch, start of the first epoch);
    * empty log (no epoch cached): (lastFetchedEpoch, LEO) = (0, 0).

    A log's epochs never decrease along its offsets, so "the largest epoch <= requested"
    is the epoch of the last entry with epoch <= requested, and the next epoch starts
    right after that entry.
    """
    if not log:
        return (0, 0)
    for k in range(len(log) - 1, -1, -1):
        if log[k][0] <= epoch:
            return (log[k][0], k + 1)
    return (epoch, 0)


def log_up_to_date(a_last_epoch: int, a_end: int, b_last_epoch: int, b_end: int) -> bool:
    """(a_end, a_last_epoch) >= (b_end, b_last_epoch) as Kafka's OffsetAndEpoch: epoch first."""
    return (a_last_epoch, a_end) >= (b_last_epoch, b_end)
