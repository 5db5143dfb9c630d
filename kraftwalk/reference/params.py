"""The sizes and bounds of one simulated cluster."""
from __future__ import annotations

from dataclasses import dataclass

from kraftwalk.kernels.state.layout import (
    P_DEPTH, P_LOG_CAP, P_MAX_EPOCH, P_MAX_RECORDS, P_MSG_SLOTS, P_OBSERVERS, P_VOTERS,
)


@dataclass(frozen=True)
class Params:
    """The bootstrap voters are nodes ``0 .. voters-1``, observers ``voters ..
    voters+observers-1``; who votes in a node's view is read through ``voters.py``."""

    voters: int
    observers: int = 0
    log_capacity: int = 32      # entries a log can hold (a full log refuses appends)
    msg_slots: int = 16         # messages the network can hold (a full network drops sends)
    max_epoch: int = 60         # an election that would pass it ends the walk
    max_records: int = 4        # records per FetchResponse
    depth: int = 500            # steps per walk (only the caller's loop uses it)

    @property
    def nodes(self) -> int:
        return self.voters + self.observers

    @classmethod
    def of(cls, p) -> "Params":
        """Params from a Params, a dict of fields, or a kernel params array (``make_params``)."""
        if isinstance(p, Params):
            return p
        if isinstance(p, dict):
            return cls(**p)
        return cls(
            voters=int(p[P_VOTERS]), observers=int(p[P_OBSERVERS]),
            log_capacity=int(p[P_LOG_CAP]), msg_slots=int(p[P_MSG_SLOTS]),
            max_epoch=int(p[P_MAX_EPOCH]), max_records=int(p[P_MAX_RECORDS]),
            depth=int(p[P_DEPTH]),
        )
