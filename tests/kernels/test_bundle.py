"""Bundles: kernels receive a walk's arrays by reference (one pointer), read and
write the caller's NumPy arrays through it, and pass it on to other kernels."""
import pickle
import re

import numpy as np
import pytest
from numba import typeof

from kraftwalk.kernels import jit
from kraftwalk.kernels.jit.bundles import BundleType, bundle
from kraftwalk.kernels.jit import entry, kernel
from kraftwalk.kernels.state.layout import Walk, alloc_walk, make_params
from kraftwalk.kernels.transition import N_FAMILIES

pytestmark = pytest.mark.skipif(jit.MODE != "hooks", reason="plain Numba passes namedtuples")

Pair = bundle("Pair", ["a", "b"], __name__)


@kernel(cache=False)
def _bump(p, i):
    p.a[i] += 1
    p.b[0, i] = p.a[i] * 2.5
    return p.a.shape[0] + p.b.shape[1]


@kernel(cache=False)
def _bump_all(p):
    total = 0
    for i in range(p.a.shape[0]):
        total += _bump(p, i)
    return total


def test_a_kernel_writes_the_callers_arrays_through_the_bundle():
    p = Pair(np.arange(4, dtype=np.int32), np.zeros((2, 4), dtype=np.float64))
    assert _bump_all(p) == 4 * (4 + 4)
    assert p.a.tolist() == [1, 2, 3, 4]
    assert p.b[0].tolist() == [2.5, 5.0, 7.5, 10.0]
    assert p.b[1].tolist() == [0.0] * 4


def test_the_bundle_type_holds_each_arrays_type():
    p = Pair(np.zeros(3, dtype=np.int32), np.zeros((2, 3), dtype=np.float64))
    ty = typeof(p)
    assert isinstance(ty, BundleType)
    assert ty.fields == ("a", "b")
    assert ty.arrays == (typeof(p.a), typeof(p.b))
    # another dtype is another type (another compiled specialisation), never a reuse
    q = Pair(np.zeros(3, dtype=np.int64), p.b)
    assert typeof(q) != ty
    assert typeof((p.a, p.b)) != ty  # a plain tuple stays a tuple


def test_a_walk_is_still_a_namedtuple_in_python():
    w = alloc_walk(make_params(3, 1, 8, 8, 6, 2, 10), N_FAMILIES)
    assert isinstance(w, Walk) and isinstance(w, tuple)
    assert w._fields == ("node", "peer", "log", "hashes", "msgs", "ghost", "scal", "weights")
    back = pickle.loads(pickle.dumps(w))
    assert type(back) is Walk
    assert all(np.array_equal(x, y) for x, y in zip(back, w))


def test_a_call_passes_the_bundle_as_one_pointer():
    """The point of bundles: the native function takes (return slot, exception slot,
    bundle, i), not every member of every array struct (~20 values for these two)."""
    p = Pair(np.zeros(2, dtype=np.int32), np.zeros((1, 2), dtype=np.float64))
    _bump(p, 0)
    (ir,) = entry(_bump).inspect_llvm().values()
    native = [line for line in ir.splitlines()
              if line.startswith("define") and "@_ZN" in line and "__entry" in line][0]
    params = native[native.index("(") + 1:native.rindex(")")]
    assert len(re.findall(r"%[\w.]+", params)) == 4, native


def test_a_member_that_is_not_an_array_is_a_type_error_not_a_crash():
    p = Pair(np.zeros(2, dtype=np.int32), np.zeros((1, 2), dtype=np.float64))
    _bump_all(p)
    (cres,) = entry(_bump_all).overloads.values()
    with pytest.raises(TypeError, match="unbox array"):
        cres.entry_point(Pair(None, p.b))  # the compiled wrapper's unboxing, no dispatch
