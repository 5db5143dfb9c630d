"""The canonical snapshot: one comparable view of a cluster, whatever model produced it.

Both the reference model (``ReferenceCluster.snapshot``) and the kernel
(``from_kernel.kernel_snapshot``) build their view through these functions, so
the two can be compared with ``==``. A field is shown only where it means
something: a crashed node shows only what survives on disk (and its links); a
role-specific field (a nominee's tally, a leader's replica offsets, ...) only in
that role; the rest is ``None``. Sets are shown as sorted tuples, ids as ints with
-1 for "none", the HW as -1 while unknown.
"""
from __future__ import annotations

from kraftwalk.kernels.state.layout import CANDIDATE, FOLLOWER, LEADER, PROSPECTIVE, RESIGNED

NODE_FIELDS = (
    "up", "role", "epoch", "voted_id", "leader_id", "log", "flushed_end", "hw", "granted",
    "rejected", "has_fetched", "epoch_start", "fetched", "acked", "preferred", "links",
    "inflight", "replica_end", "log_start", "start_epoch", "latest", "first_snapshot_epoch",
    "fetching", "voters",
    "dir", "voted_dir", "replica_dir", "voter_dirs",
)


def _ids(s) -> tuple:
    return tuple(sorted(int(x) for x in s))


def node_view(*, up, role, epoch, voted_id, leader_id, log, flushed_end, hw, granted,
              rejected, has_fetched, epoch_start, fetched, acked, preferred, links, inflight,
              replica_end, log_start=0, start_epoch=0, latest=(0, 0), first_snapshot_epoch=0,
              fetching=None,
              voters=(), voters_at=-1, voter_count=None, dir=0, voted_dir=0,
              replica_dir=None, voter_dirs=None, self_voter=None) -> dict:
    """``fetched``/``acked``/``links`` exclude the node itself; ``preferred`` is a bool for a
    follower, the set of successors for a resigned leader; ``inflight`` maps a destination
    to the correlation id of the outstanding request; ``latest`` is the latest snapshot's
    (end, epoch), ``fetching`` the id of the snapshot a follower downloads (None).

    ``voters`` is the node's voter set, ``voters_at`` the offset of the VotersRecord it
    comes from (-1: the bootstrap voters) and ``voter_count`` its size (default
    ``len(voters)``): derived from the log, which the reference reads each time and the
    kernel caches (VOTERS, VOTERS_AT, VOTER_COUNT), so showing them checks the caches.

    Replica keys (KIP-853): ``dir`` is the node's directory id; ``voted_dir`` the one of
    the key it voted for, shown only with a vote; ``replica_dir`` (a leader's, indexed as
    ``replica_end``) the one each replica fetched with, shown only where its offset is
    known; ``voter_dirs`` maps each voter of the node's view to its directory id (default
    all 0) and ``self_voter`` says whether its own key is one of them (derived from the
    log and ``dir``, which the kernel caches as SELF_VOTER)."""
    view = {
        "up": bool(up), "role": None, "epoch": int(epoch), "voted_id": int(voted_id),
        "leader_id": int(leader_id), "log": tuple((int(e), int(v)) for e, v in log),
        "flushed_end": int(flushed_end), "hw": None, "granted": None, "rejected": None,
        "has_fetched": None, "epoch_start": None, "fetched": None, "acked": None,
        "preferred": None, "links": _ids(links), "inflight": None, "replica_end": None,
        "log_start": int(log_start), "start_epoch": int(start_epoch),
        "latest": (int(latest[0]), int(latest[1])),
        "first_snapshot_epoch": int(first_snapshot_epoch), "fetching": None,
        "voters": (_ids(voters), int(voters_at),
                   len(voters) if voter_count is None else int(voter_count)),
        "dir": int(dir),
        "voted_dir": int(voted_dir) if int(voted_id) >= 0 else None,
        "replica_dir": None,
        "voter_dirs": (
            tuple(sorted((int(j), 0 if voter_dirs is None else int(voter_dirs[j]))
                         for j in voters)),
            None if self_voter is None else bool(self_voter)),
    }
    if not up:
        return view
    view["role"] = int(role)
    view["hw"] = int(hw)
    view["inflight"] = tuple(sorted((int(j), int(c)) for j, c in inflight.items() if c))
    if role in (PROSPECTIVE, CANDIDATE):
        view["granted"] = _ids(granted)
        view["rejected"] = _ids(rejected)
    elif role == FOLLOWER:
        view["has_fetched"] = bool(has_fetched)
        view["preferred"] = bool(preferred)
        view["fetching"] = None if fetching is None else (int(fetching[0]), int(fetching[1]))
    elif role == LEADER:
        view["epoch_start"] = int(epoch_start)
        view["fetched"] = _ids(fetched)
        view["acked"] = _ids(acked)
        view["replica_end"] = tuple(int(x) for x in replica_end)
        dirs = [0] * len(replica_end) if replica_dir is None else replica_dir
        view["replica_dir"] = tuple(int(d) if int(x) >= 0 else None
                                    for x, d in zip(replica_end, dirs))
    elif role == RESIGNED:
        view["acked"] = _ids(acked)
        view["preferred"] = _ids(preferred)
    return view


def snapshot_view(*, nodes, messages, next_value, next_corr, stats, committed) -> dict:
    return {
        "nodes": list(nodes),
        "messages": [tuple(m) for m in messages],
        "next_value": int(next_value),
        "next_corr": int(next_corr),
        "stats": {k: int(v) for k, v in stats.items()},
        "committed": tuple((int(e), int(v)) for e, v in committed),
    }


def diff(a: dict, b: dict) -> list[str]:
    """Human-readable differences between two snapshots: 'path: a != b' lines."""
    out = []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if key == "nodes" and isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (nx, ny) in enumerate(zip(x, y)):
                for f in NODE_FIELDS:
                    if nx.get(f) != ny.get(f):
                        out.append(f"nodes[{i}].{f}: {nx.get(f)!r} != {ny.get(f)!r}")
        elif key == "messages" and isinstance(x, list) and isinstance(y, list):
            for k in range(max(len(x), len(y))):
                mx = x[k] if k < len(x) else "(none)"
                my = y[k] if k < len(y) else "(none)"
                if mx != my:
                    out.append(f"messages[{k}]: {mx!r} != {my!r}")
        elif key == "stats" and isinstance(x, dict) and isinstance(y, dict):
            for s in sorted(set(x) | set(y)):
                if x.get(s) != y.get(s):
                    out.append(f"stats.{s}: {x.get(s)!r} != {y.get(s)!r}")
        elif x != y:
            out.append(f"{key}: {x!r} != {y!r}")
    return out
