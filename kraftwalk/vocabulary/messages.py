"""The KRaft message types, one table entry each: the single description of a message.

An entry names a type and its payload fields, in order; a field says which kernel
row columns it occupies and how the reference model holds it. Everything else about
messages is derived from :data:`MESSAGE_TYPES`:

* the type ids (``VOTE_REQUEST`` ...), ``MSG_NAMES``, the row columns ``F_*`` and
  ``MSG_WIDTH``, which :mod:`.layout` re-exports as plain ints (the kernels read
  them as compile-time constants; the table itself is read at import time only);
* the reference model's ``Message`` attributes and its canonical tuple
  (:func:`canonical`), the row a reference message packs to (:func:`pack`, whose
  payload the action fingerprint hashes) and back (:func:`decode`, and
  :func:`unpack` for a kernel row's canonical tuple);
* the field names that replay's text reads (:func:`canonical_names`).

Columns: the header ``F_TYPE .. F_CORR`` comes first. A field several types carry
(error, leader, ...) lands in the same column in each, so that its ``F_*`` name means
one column: the first type that has it places it, and every later type keeps it there
and puts its own new fields in its lowest free columns, in order. A variable-length
tail (a FetchResponse's records) starts at ``MSG_WIDTH``, past every type's fixed
columns. Message fingerprints in recorded traces hash the type id and the columns
``F_CORR+1 .. FINGERPRINT_WIDTH-1``: new types go at the end of the table, and a new
field of an old type goes after its old ones (past FINGERPRINT_WIDTH if it must not
change the type's fingerprints), so that traces recorded before it still replay.
"""
from __future__ import annotations

import re
from typing import NamedTuple, Optional

# Every message: its type, ends, epoch (a request's; a response's: the responder's) and
# correlation id (a request's, echoed by its response): columns 0 .. 4 of every row.
HEADER = ("type", "src", "dst", "epoch", "corr")


# ---- field kinds: the kernel row's encoding and the reference model's attribute ----------
class Int:
    """An integer, the same in the row and in the reference model."""

    def __init__(self, name: str, default: int = 0, unhashed: bool = False):
        self.name = name
        self.attrs = ((name, int, default),)      # (attribute, type, default) in Message
        self.columns = (name,)                    # row columns, named F_<NAME>
        self.tail = None                          # name of a variable-length tail, if any
        # placed at FINGERPRINT_WIDTH or past it: a field added to an old type that
        # must leave the type's fingerprints (and so recorded traces) as they were
        self.unhashed = unhashed

    def values(self, msg) -> tuple:
        """Its attributes' values in a reference message (as in ``attrs``)."""
        return (getattr(msg, self.name),)

    def canonical(self, values: tuple) -> tuple:
        """Its part of the canonical tuple, from its attributes' values."""
        return values

    def encode(self, msg) -> tuple:
        """Its fixed columns' values in the kernel row of a reference message."""
        return (getattr(msg, self.name),)

    def decode(self, row, col: dict, n: int) -> tuple:
        """Its attributes' values (as in ``attrs``) from a kernel row."""
        return (int(row[col[self.name]]),)


class Flag(Int):
    """A bool in the reference model, 0/1 in the row."""

    def __init__(self, name: str):
        super().__init__(name)
        self.attrs = ((name, bool, False),)

    def canonical(self, values: tuple) -> tuple:
        return (bool(values[0]),)

    def encode(self, msg) -> tuple:
        return (int(getattr(msg, self.name)),)

    def decode(self, row, col: dict, n: int) -> tuple:
        return (bool(row[col[self.name]]),)


class NodeSet(Int):
    """A frozenset of node ids in the reference model, a bitmask in the row."""

    def __init__(self, name: str):
        super().__init__(name)
        self.attrs = ((name, frozenset, frozenset()),)

    def canonical(self, values: tuple) -> tuple:
        return (tuple(sorted(values[0])),)

    def encode(self, msg) -> tuple:
        return (sum(1 << j for j in getattr(msg, self.name)),)

    def decode(self, row, col: dict, n: int) -> tuple:
        mask = int(row[col[self.name]])
        return (frozenset(j for j in range(n) if (mask >> j) & 1),)


class Diverging:
    """A FetchResponse's diverging epoch: ``(epoch, end offset)`` or None in the reference
    model; two columns in the row, the epoch -1 for none. The kernel sets the end offset to
    -1 with it in a successful response and leaves it 0 in an error response."""

    name = "diverging"
    attrs = (("diverging", Optional[tuple], None),)
    columns = ("diverging_epoch", "diverging_end")
    tail = None

    def values(self, msg) -> tuple:
        return (msg.diverging,)

    def canonical(self, values: tuple) -> tuple:
        return values

    def encode(self, msg) -> tuple:
        if msg.diverging is not None:
            return tuple(msg.diverging)
        return (-1, 0) if msg.error else (-1, -1)

    def decode(self, row, col: dict, n: int) -> tuple:
        epoch = int(row[col["diverging_epoch"]])
        return (None if epoch < 0 else (epoch, int(row[col["diverging_end"]])),)


class Records:
    """A FetchResponse's records: a base offset and ``((epoch, value), ...)`` in the reference
    model; in the row, the base offset and the count, then (epoch, value) pairs in the tail.
    Only a response that neither failed, diverged nor named a snapshot fills them; the
    canonical base offset is None when there are no records."""

    name = "records"
    attrs = (("base_offset", int, 0), ("records", tuple, ()))
    columns = ("base_offset", "n_records")
    tail = "records"

    def values(self, msg) -> tuple:
        return (msg.base_offset, msg.records)

    def canonical(self, values: tuple) -> tuple:
        base_offset, records = values
        return (base_offset if records else None, tuple(records))

    def encode(self, msg) -> tuple:
        if msg.error or msg.diverging is not None or msg.snapshot_end >= 0:
            return (0, 0)
        return (msg.base_offset, len(msg.records))

    def encode_tail(self, msg) -> list:
        return [x for entry in msg.records for x in entry]

    def decode(self, row, col: dict, n: int) -> tuple:
        count = int(row[col["n_records"]])
        at = col["records"]
        records = tuple((int(row[at + 2 * q]), int(row[at + 2 * q + 1])) for q in range(count))
        return (int(row[col["base_offset"]]), records)


class SnapshotRecords(Records):
    """A FetchSnapshotResponse's content: the entries ``((epoch, value), ...)`` of the
    snapshot from offset 0 (the model's state machine is its log prefix), sent whole in
    one response; in the row, the count, then the pairs in the shared tail."""

    name = "snapshot_records"
    attrs = (("snapshot_records", tuple, ()),)
    columns = ("snapshot_count",)
    tail = "records"

    def values(self, msg) -> tuple:
        return (msg.snapshot_records,)

    def canonical(self, values: tuple) -> tuple:
        return (tuple(values[0]),)

    def encode(self, msg) -> tuple:
        return (0,) if msg.error else (len(msg.snapshot_records),)

    def encode_tail(self, msg) -> list:
        return [x for entry in msg.snapshot_records for x in entry]

    def decode(self, row, col: dict, n: int) -> tuple:
        count = int(row[col["snapshot_count"]])
        at = col["records"]
        return (tuple((int(row[at + 2 * q]), int(row[at + 2 * q + 1])) for q in range(count)),)


# ---- the table -------------------------------------------------------------------------------
class MessageType(NamedTuple):
    name: str
    fields: tuple


ERROR = Int("error")             # ERR_* of a response (0 = ERR_NONE)
LEADER = Int("leader", -1)       # responder's known leader in its epoch, -1 none
PRE_VOTE = Flag("pre_vote")      # 1 = pre-vote (echoed by the VoteResponse)
REQ_LEADER = Int("req_leader", -1)  # the leader a BeginQuorumEpoch/EndQuorumEpoch announces
# A snapshot id (KIP-630): its end offset and the epoch of the last entry it covers; in a
# FetchResponse, -1/-1 unless the leader asks the follower to fetch that snapshot.
SNAPSHOT_END = Int("snapshot_end", -1)
SNAPSHOT_EPOCH = Int("snapshot_epoch", -1)
# The receiver's key as the sender's voter set names it (KIP-853): its directory id.
VOTER_DIR = Int("voter_dir")
REPLICA_DIR = Int("replica_dir")   # the fetcher's directory id (its key, with src)

MESSAGE_TYPES = (
    MessageType("VoteRequest", (
        Int("last_epoch"),              # candidate's last log entry epoch
        Int("last_offset"),             # candidate's log end offset
        PRE_VOTE,
        Int("candidate_dir"),           # candidate's directory id (its key, with src)
        VOTER_DIR)),
    MessageType("VoteResponse", (ERROR, LEADER, PRE_VOTE, Flag("granted"))),
    MessageType("BeginQuorumEpochRequest", (REQ_LEADER, VOTER_DIR)),
    MessageType("BeginQuorumEpochResponse", (ERROR, LEADER)),
    MessageType("EndQuorumEpochRequest", (
        REQ_LEADER,
        NodeSet("successors"),          # preferred successors
        # the receiver's place in the leader's list, ordered by descending fetch
        # offset (the list's length if it is absent): Kafka's request carries the
        # ordered list, and its receiver reads only its own place from it
        Int("position", unhashed=True))),
    MessageType("EndQuorumEpochResponse", (ERROR, LEADER)),
    MessageType("FetchRequest", (
        Int("fetch_offset"),
        Int("last_fetched_epoch"),
        REPLICA_DIR)),
    MessageType("FetchResponse", (
        ERROR, LEADER,
        Int("hw", -1),                  # leader's high watermark, -1 unknown
        Diverging(),
        Records(),
        SNAPSHOT_END, SNAPSHOT_EPOCH)),  # fetch this snapshot first (the fetch offset is
                                         # below the leader's log start)
    MessageType("FetchSnapshotRequest", (
        Int("req_snapshot_end"),        # the snapshot id asked for
        Int("req_snapshot_epoch"),
        REPLICA_DIR)),
    MessageType("FetchSnapshotResponse", (
        ERROR, LEADER,
        SNAPSHOT_END, SNAPSHOT_EPOCH,   # the id served (-1/-1: SNAPSHOT_NOT_FOUND)
        SnapshotRecords())),
)

MSG_NAMES = ("None",) + tuple(t.name for t in MESSAGE_TYPES)


# The row width before snapshots (KIP-630): fingerprints hash the columns below it, so
# traces recorded before the FetchResponse's snapshot id (columns 12, 13) still replay.
FINGERPRINT_WIDTH = 12


def constant_name(type_name: str) -> str:
    """``VoteRequest`` -> ``VOTE_REQUEST``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type_name).upper()


def _columns() -> tuple:
    """Each type's {column name: column}, and MSG_WIDTH; checks that shared names agree."""
    fixed = []
    placed = {}   # a shared field's column, where the first type that has it put it
    for mt in MESSAGE_TYPES:
        col = {name: k for k, name in enumerate(HEADER)}
        names = [name for field in mt.fields for name in field.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"{mt.name}: two columns with one name")
        col.update((name, placed[name]) for name in names if name in placed)
        unhashed = {f.name for f in mt.fields if getattr(f, "unhashed", False)}
        for name in names:
            if name not in col:
                lo = FINGERPRINT_WIDTH if name in unhashed else len(HEADER)
                col[name] = min(set(range(lo, lo + len(names) + len(placed)))
                                - set(col.values()))
            placed.setdefault(name, col[name])
        if len(set(col.values())) != len(col):
            raise ValueError(f"{mt.name}: two fields in one column")
        fixed.append(col)
    width = max(max(col.values()) + 1 for col in fixed)
    for mt, col in zip(MESSAGE_TYPES, fixed):
        tails = [f.tail for f in mt.fields if f.tail]
        if len(tails) > 1:
            raise ValueError(f"{mt.name}: at most one field may have a tail")
        col.update((name, width) for name in tails)
    seen = {}
    for mt, col in zip(MESSAGE_TYPES, fixed):
        for name, k in col.items():
            if seen.setdefault(name, k) != k:
                raise ValueError(f"{mt.name}: column {name!r} at {k}, elsewhere at {seen[name]}")
    return tuple(fixed), seen, width


TYPE_COLUMNS, _ALL_COLUMNS, MSG_WIDTH = _columns()

# The module-level constants layout re-exports: type ids and F_<COLUMN> columns.
CONSTANTS = {"MSG_NONE": 0, "MSG_WIDTH": MSG_WIDTH, "FINGERPRINT_WIDTH": FINGERPRINT_WIDTH}
CONSTANTS.update((constant_name(mt.name), t) for t, mt in enumerate(MESSAGE_TYPES, start=1))
CONSTANTS.update(("F_" + name.upper(), k) for name, k in _ALL_COLUMNS.items())
globals().update(CONSTANTS)
__all__ = ["MSG_NAMES", *CONSTANTS]


def reference_attributes() -> list:
    """The reference Message's payload attributes ``(name, type, default)``, in table order;
    an attribute several types share must agree on its type and default."""
    attrs = {}
    for mt in MESSAGE_TYPES:
        for field in mt.fields:
            for a in field.attrs:
                if a[0] in HEADER:
                    raise ValueError(f"{mt.name}: attribute {a[0]!r} is a header field")
                if attrs.setdefault(a[0], a) != a:
                    raise ValueError(f"{mt.name}: attribute {a} differs from {attrs[a[0]]}")
    return list(attrs.values())


def message_type(t: int) -> MessageType:
    if not 1 <= t <= len(MESSAGE_TYPES):
        raise ValueError(f"unknown message type {t}")
    return MESSAGE_TYPES[t - 1]


def canonical_names(t: int) -> tuple:
    """Names of the payload values of a type's canonical tuple (after the header)."""
    return tuple(a[0] for f in message_type(t).fields for a in f.attrs)


def canonical(msg) -> tuple:
    """A reference message's meaningful fields, as one comparable tuple."""
    out = (msg.type, msg.src, msg.dst, msg.epoch, msg.corr)
    for field in message_type(msg.type).fields:
        out += field.canonical(field.values(msg))
    return out


def pack(msg) -> list:
    """The kernel row of a reference message: MSG_WIDTH columns (unused ones hold 0), then
    its tail if it has one."""
    t = msg.type
    col = TYPE_COLUMNS[t - 1]
    row = [0] * MSG_WIDTH
    for name in HEADER:
        row[col[name]] = getattr(msg, name)
    for field in message_type(t).fields:
        for name, x in zip(field.columns, field.encode(msg)):
            row[col[name]] = x
        if field.tail:
            row += field.encode_tail(msg)
    return row


def decode(row, n: int) -> dict:
    """A kernel row's message as the reference model's attributes (``n``: nodes)."""
    t = int(row[0])
    col = TYPE_COLUMNS[t - 1]
    attrs = dict(zip(HEADER, map(int, row[:len(HEADER)])))
    for field in message_type(t).fields:
        attrs.update(zip((a[0] for a in field.attrs), field.decode(row, col, n)))
    return attrs


def unpack(row, n: int) -> tuple:
    """A kernel row as the tuple :func:`canonical` gives for the same message."""
    t = int(row[0])
    col = TYPE_COLUMNS[t - 1]
    out = tuple(map(int, row[:len(HEADER)]))
    for field in message_type(t).fields:
        out += field.canonical(field.decode(row, col, n))
    return out
