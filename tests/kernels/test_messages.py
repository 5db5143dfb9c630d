"""The message table (kraftwalk/vocabulary/messages.py) against the kernel's row layout and the
reference model: the columns it derives fit the row and never drift from layout's
constants, and every message the kernel puts in flight reads back as a reference
message that packs to the same row and fingerprint."""
from __future__ import annotations

from kraftwalk.kernels.state import layout

from kraftwalk.vocabulary import messages
from kraftwalk.kernels.state.layout import F_CORR, MSG_NAMES, MSG_WIDTH, N_MSGS, P_NODES
from kraftwalk.vocabulary.messages import HEADER, MESSAGE_TYPES, TYPE_COLUMNS
from kraftwalk.kernels.choosers.swarm import DEFAULT_WEIGHTS, with_feature_weights
from kraftwalk.kernels.drivers.trace import apply_and_check, new_walk, record_walk
from kraftwalk.kernels.transition import message_fingerprint
from kraftwalk.reference.encoding import message_fingerprint as reference_fingerprint
from kraftwalk.reference.state import Message

from conftest import F, F_SNAPSHOTS, params


def test_each_type_has_the_header_then_distinct_payload_columns_within_the_row():
    for mt, col in zip(MESSAGE_TYPES, TYPE_COLUMNS):
        assert [col[name] for name in HEADER] == list(range(len(HEADER))), mt.name
        tails = {f.tail for f in mt.fields if f.tail}
        payload = [k for name, k in col.items() if name not in HEADER and name not in tails]
        assert len(set(payload)) == len(payload), mt.name
        assert all(F_CORR < k < MSG_WIDTH for k in payload), mt.name
        assert all(col[name] == MSG_WIDTH for name in tails), mt.name


def test_layout_exports_the_tables_ids_and_columns_as_plain_ints():
    # Numba reads these as compile-time constants: they must be ints, one column per name.
    assert MSG_NAMES == ("None",) + tuple(mt.name for mt in MESSAGE_TYPES)
    for t, mt in enumerate(MESSAGE_TYPES, start=1):
        assert getattr(layout, messages.constant_name(mt.name)) == t
        for name, k in TYPE_COLUMNS[t - 1].items():
            value = getattr(layout, "F_" + name.upper())
            assert type(value) is int and value == k, (mt.name, name)
    assert type(layout.MSG_WIDTH) is int and layout.MSG_WIDTH == MSG_WIDTH


def test_ids_and_columns_stay_as_recorded_traces_hash_them():
    # Fingerprints in recorded traces hash type ids and columns F_CORR+1 ..
    # FINGERPRINT_WIDTH-1: a new message type goes at the end of the table, a new field of
    # an old type past those columns or, if it is 0 in every walk recorded before it (the
    # directory ids: 0 unless a disk is lost), in a column that was unused and so 0; and
    # these stay as they are.
    assert MSG_NAMES[1:9] == (
        "VoteRequest", "VoteResponse", "BeginQuorumEpochRequest", "BeginQuorumEpochResponse",
        "EndQuorumEpochRequest", "EndQuorumEpochResponse", "FetchRequest", "FetchResponse")
    payload = {mt.name: [n for n, _ in sorted(col.items(), key=lambda x: x[1])][len(HEADER):]
               for mt, col in zip(MESSAGE_TYPES, TYPE_COLUMNS)}
    assert payload["VoteRequest"] == ["last_epoch", "last_offset", "pre_vote", "candidate_dir",
                                      "voter_dir"]
    assert payload["VoteResponse"] == ["error", "leader", "pre_vote", "granted"]
    assert payload["EndQuorumEpochRequest"] == ["req_leader", "successors", "position"]
    assert layout.F_POSITION >= 12  # added later: unhashed, so old traces still replay
    assert payload["FetchRequest"] == ["fetch_offset", "last_fetched_epoch", "replica_dir"]
    assert payload["FetchResponse"][:7] == ["error", "leader", "hw", "diverging_epoch",
                                            "diverging_end", "base_offset", "n_records"]
    assert layout.FINGERPRINT_WIDTH == 12 and layout.F_SNAPSHOT_END >= 12


def _check_row(w, k, n):
    """In-flight row k -> reference message -> the same row, fingerprint and canonical tuple."""
    row = w.msgs[k].tolist()
    msg = Message(**messages.decode(row, n))
    packed = messages.pack(msg)
    assert packed == row[:len(packed)], (msg, row)
    assert not any(row[len(packed):-2]), row     # the last two columns are the timed chooser's
    assert reference_fingerprint(msg) == int(message_fingerprint(w, k)), msg
    assert messages.unpack(row, n) == msg.canonical()
    return msg


# A FetchResponse of each kind: failed, diverging, with records.
FETCH_KINDS = {(True, False, False), (False, True, False), (False, False, True)}


def _missing(seen: set) -> tuple:
    types = set(range(1, len(MESSAGE_TYPES) + 1)) - {shape[0] for shape in seen}
    fetch = FETCH_KINDS - {shape[1:] for shape in seen if shape[0] == layout.FETCH_RESPONSE}
    return types, fetch


def _round_trips(p, weights, features, seen: set) -> None:
    n = int(p[P_NODES])
    for walk in range(200):
        actions = record_walk(7, walk, p, weights, True, features)[0]
        w = new_walk(p)
        for action in actions:
            if apply_and_check(w, tuple(int(x) for x in action), features) > 0:
                break
            for k in range(int(w.scal[N_MSGS])):
                msg = _check_row(w, k, n)
                seen.add((msg.type, msg.error != 0, msg.diverging is not None, bool(msg.records)))
        if _missing(seen) == (set(), set()):
            return


def test_every_message_the_kernel_sends_round_trips_through_the_reference_model():
    seen = set()
    _round_trips(params(3, 1), DEFAULT_WEIGHTS, F, seen)
    # the snapshot messages (KIP-630) fly only with snapshots on
    assert _missing(seen)[0] <= {layout.FETCH_SNAPSHOT_REQUEST, layout.FETCH_SNAPSHOT_RESPONSE}
    weights = with_feature_weights(DEFAULT_WEIGHTS, ["snapshots"])
    _round_trips(params(3, 1, snapshots=True), weights, F_SNAPSHOTS, seen)
    assert _missing(seen) == (set(), set()), seen
