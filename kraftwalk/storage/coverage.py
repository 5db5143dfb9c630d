"""Coverage of a run: what its walks reached, with a witness for each target.

Three kinds of rows, each with a stable name:

- ``sometimes``: the reachability targets (kraftwalk.vocabulary.properties: a
  leader elected, an entry committed, a follower truncated, ...). ``walks`` reached
  it; ``first_walk`` and ``first_step`` are its witness: replaying that walk up to that
  step (``kraftwalk replay RUN --witness NAME``) shows it happen.
- ``action``: steps taken of each action family; ``walks`` took at least one.
- ``delivery``: messages delivered, per message type.

Per saved range of walks the rows go to the run's ``coverage/`` dataset (so a resumed
run recovers them); their aggregate over the whole run is ``coverage.parquet``.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from kraftwalk.vocabulary.properties import TARGET_NAMES

SCHEMA = pa.schema([("kind", pa.string()), ("target", pa.string()), ("walks", pa.int64()),
                    ("count", pa.int64()), ("first_walk", pa.int64()),
                    ("first_step", pa.int64())])


def row_names() -> list[tuple[str, str]]:
    """(kind, target) of every row, in a fixed order."""
    from kraftwalk.kernels.state.layout import MSG_NAMES
    from kraftwalk.vocabulary.families import FAMILY_NAMES

    return ([("sometimes", t) for t in TARGET_NAMES] + [("action", f) for f in FAMILY_NAMES]
            + [("delivery", m) for m in MSG_NAMES[1:]])


class Coverage:
    """Coverage rows accumulated over chunks of walks (in walk order)."""

    def __init__(self) -> None:
        n = len(row_names())
        self.walks = np.zeros(n, np.int64)
        self.count = np.zeros(n, np.int64)
        self.first_walk = np.full(n, -1, np.int64)
        self.first_step = np.full(n, -1, np.int64)

    def add(self, first: int, reach: np.ndarray, counts: np.ndarray) -> None:
        """A chunk of walks from ``first``: reach[:, 0] the reached mask, reach[:, 1 + t]
        first steps; counts[:, k] per family, then per message type (type 0 unused)."""
        from kraftwalk.kernels.state.layout import N_TARGETS
        from kraftwalk.kernels.transition import N_FAMILIES

        hit = ((reach[:, :1] >> np.arange(N_TARGETS)) & 1).astype(bool)  # walks x targets
        per_walk = np.concatenate([hit, counts[:, :N_FAMILIES] > 0, counts[:, N_FAMILIES + 1:] > 0],
                                  axis=1)
        totals = np.concatenate([hit.sum(axis=0), counts[:, :N_FAMILIES].sum(axis=0),
                                 counts[:, N_FAMILIES + 1:].sum(axis=0)])
        self.walks += per_walk.sum(axis=0)
        self.count += totals
        for k in np.nonzero((self.first_walk < 0) & per_walk.any(axis=0))[0]:
            r = int(np.argmax(per_walk[:, k]))
            self.first_walk[k] = first + r
            if k < N_TARGETS:
                self.first_step[k] = reach[r, 1 + k]

    def merge(self, other: "Coverage") -> None:
        """Add a later range's coverage."""
        take = (self.first_walk < 0) & (other.first_walk >= 0)
        self.first_walk[take] = other.first_walk[take]
        self.first_step[take] = other.first_step[take]
        self.walks += other.walks
        self.count += other.count

    def table(self) -> pa.Table:
        names = row_names()
        return pa.table({
            "kind": pa.array([k for k, _ in names]).dictionary_encode(),
            "target": pa.array([t for _, t in names]),
            "walks": self.walks, "count": self.count,
            "first_walk": pa.array(self.first_walk, mask=self.first_walk < 0),
            "first_step": pa.array(self.first_step, mask=self.first_step < 0)})

    @classmethod
    def from_table(cls, t: pa.Table) -> "Coverage":
        """Aggregate coverage rows of many parts (in walk order) into one."""
        c = cls()
        index = {name: i for i, name in enumerate(row_names())}
        for r in t.to_pylist():
            i = index.get((r["kind"], r["target"]))
            if i is None:
                continue
            c.walks[i] += r["walks"]
            c.count[i] += r["count"]
            if c.first_walk[i] < 0 and r["first_walk"] is not None:
                c.first_walk[i] = r["first_walk"]
                c.first_step[i] = -1 if r["first_step"] is None else r["first_step"]
        return c

    def reached(self) -> dict[str, int]:
        """Walks that reached each sometimes target."""
        return {t: int(self.walks[i]) for i, t in enumerate(TARGET_NAMES)}
