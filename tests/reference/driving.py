"""Driving a reference cluster by hand in the reference tests: apply an action and
require its verdict, find an in-flight message, deliver it, run a request round. (Not a conftest: that
name is tests/kernels' helper module, imported as ``conftest`` there.)"""
from kraftwalk.kernels.state.layout import FETCH_REQUEST, FETCH_RESPONSE
from kraftwalk.kernels.transition import FAM_DELIVER, FAM_SEND
from kraftwalk.reference.encoding import message_fingerprint


def act(c, action, expect=0):
    """Apply one action; by default it must be enabled and break no invariant."""
    got = c.apply_and_check(action)
    assert got == expect, f"{action}: got {got}, want {expect}; {c.describe()}"
    return got


def find(c, mtype, src, dst):
    """The slot and message of the first in-flight ``mtype`` from src to dst."""
    for k, m in enumerate(c.net.messages):
        if (m.type, m.src, m.dst) == (mtype, src, dst):
            return k, m
    raise AssertionError(f"no message {mtype} {src}->{dst} in flight; {c.describe()}")


def deliver(c, mtype, src, dst, expect=0):
    """Deliver that message (its verdict must be ``expect``); returns the message."""
    k, m = find(c, mtype, src, dst)
    act(c, (FAM_DELIVER, k, message_fingerprint(m)), expect)
    return m


def request(c, a, b, req, resp):
    """a sends b the request its role calls for; b answers; a handles the answer (which is
    returned)."""
    act(c, (FAM_SEND, a, b))
    deliver(c, req, a, b)
    return deliver(c, resp, b, a)


def fetch_round(c, a, b):
    return request(c, a, b, FETCH_REQUEST, FETCH_RESPONSE)
