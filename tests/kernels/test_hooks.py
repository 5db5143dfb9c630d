"""The kernel decorator on Numba's internals (kernels/jit/hooks.py). Kernels compile
without Python wrappers; a call from Python goes through a twin that has them. Tests
of the literal feature mask are folded before typing."""
import pytest

from kraftwalk.kernels import jit
from kraftwalk.kernels.jit import call_with_features, entry, kernel

pytestmark = pytest.mark.skipif(jit.MODE != "hooks", reason="plain Numba has no hooks")


@kernel(cache=False)
def _callee(x):
    return x * 3


@kernel(cache=False)
def _caller(x):
    return _callee(x) + 1


def _has_python_wrapper(dispatcher):
    (cres,) = dispatcher.overloads.values()
    return cres.fndesc.llvm_cpython_wrapper_name in cres.library.get_llvm_str()


def test_kernels_compile_without_python_wrappers_and_python_calls_use_a_twin():
    assert _caller(4) == 13 and _callee(2) == 6  # from Python: through each twin
    assert _has_python_wrapper(entry(_caller))
    assert not _caller.overloads, "the kernel itself is compiled only when a kernel calls it"
    # compiled as a callee of _caller's twin: no wrapper, and its own entry untouched
    assert not _has_python_wrapper(_callee)
    assert entry(_callee).py_func.__qualname__ == "_callee__entry"


_ON = 4


@kernel(cache=False)
def _untypable(x):
    return x.no_such_attribute  # a typing error wherever it is compiled


@kernel(cache=False)
def _switched(x, features):
    if features & _ON:
        return _untypable(x)
    if not features & 2 and x > 0:
        return x + 1
    return x


def test_a_feature_switch_on_the_literal_mask_is_folded_before_typing():
    """With the feature off, the branch that calls _untypable is dropped before typing,
    so it compiles; with it on, that branch is typed and fails."""
    from numba.core.errors import TypingError

    assert call_with_features(_switched, 5, 0) == 6
    assert call_with_features(_switched, 5, 2) == 5
    with pytest.raises(TypingError):
        call_with_features(_switched, 5, _ON)


@kernel(cache=False)
def _scaled(x, k):
    return x * k


@kernel(cache=False)
def _masked(x, features):
    return x + 1 if features & 2 else x


@kernel(cache=False)
def _calls_with_constants(x, a):
    # constants, an int32 and an int64: one compile of _scaled; the masks stay literal
    return (_scaled(x, 3) + _scaled(x, 5) + _scaled(a[0], x) + _scaled(x, a[1])
            + _masked(x, 2) + _masked(x, 4))


def test_a_callee_compiles_once_for_plain_types_and_the_masks_stay_literal():
    import numpy as np
    from numba.core import types

    a = np.array([7, 9], dtype=np.int32)
    assert _calls_with_constants(2, a) == 2 * 3 + 2 * 5 + 7 * 2 + 2 * 9 + 3 + 2
    assert list(_scaled.overloads) == [(types.int64, types.int64)]
    assert sorted(str(sig[1]) for sig in _masked.overloads) == ["Literal[int](2)",
                                                               "Literal[int](4)"]
