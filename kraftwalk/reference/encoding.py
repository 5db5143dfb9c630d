"""The kernel's action encoding for message actions (a modelling convention, mirrored).

A recorded DELIVER / LOSE / DUPLICATE action is ``(family, slot, fingerprint)``:
the fingerprint is a content key of the message (type, ends, epoch and the first
payload fields of the kernel's message row; not its slot, not its correlation
id), so that a delivery still names the same message when a shrunk trace leaves
out earlier actions. The action applies to ``slot`` if the message there has the
fingerprint, else to the first message that has it; it is disabled if none has.

Reproducing the key needs the kernel's row of each message (packed as the
message table, kraftwalk/vocabulary/messages.py, says) and SplitMix64's finaliser, spelled
out here in plain Python.
"""
from __future__ import annotations

from kraftwalk.vocabulary.messages import F_CORR, FINGERPRINT_WIDTH, pack

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1


def mix64(z: int) -> int:
    """SplitMix64's finaliser (Steele, Lea and Flood 2014) on 64-bit unsigned ints."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def payload_fields(msg) -> list:
    """The kernel row's fields F_CORR+1 .. FINGERPRINT_WIDTH-1 for ``msg`` (unused ones
    hold 0)."""
    return pack(msg)[F_CORR + 1:FINGERPRINT_WIDTH]


def message_fingerprint(msg) -> int:
    h = msg.type | (msg.src << 4) | (msg.dst << 8) | ((msg.epoch & MASK32) << 12)
    for x in payload_fields(msg):
        h = mix64(h ^ (x & MASK32))
    return h >> 2
