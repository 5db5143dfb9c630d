"""A kernel compiled as another kernel's callee is linked, not compiled on its own:
no machine code of its own, its IR optimized and code-generated inside the entry
point only. Its cache entry holds that IR, so another entry point compiled in a
later process links it from the cache."""
import textwrap

import numba
import pytest

from kraftwalk.kernels import jit
from kraftwalk.kernels.jit import entry, kernel
from kraftwalk.kernels.jit.link_only import LinkOnlyLibrary

pytestmark = pytest.mark.skipif(jit.MODE != "hooks", reason="plain Numba has no hooks")


@kernel(cache=False)
def _leaf(x):
    t = 0
    for k in range(x):
        t += k * k
    return t


@kernel(cache=False)
def _mid(x):
    return _leaf(x) + _leaf(x + 1)


def test_a_callee_has_no_machine_code_and_the_entry_point_runs_it():
    assert _mid(5) == _mid.py_func(5) == 30 + 55  # the twin: a normal, compiled library
    (cres,) = entry(_mid).overloads.values()
    assert not isinstance(cres.library, LinkOnlyLibrary)
    assert cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name) != 0
    for callee in (_leaf,):  # compiled only as _mid's callee
        (c,) = callee.overloads.values()
        assert isinstance(c.library, LinkOnlyLibrary)
        assert c.library.get_pointer_to_function(c.fndesc.llvm_func_name) == 0
        assert c.fndesc.llvm_func_name in c.library.get_llvm_str()


KERNELS = textwrap.dedent("""
    from kraftwalk.kernels.jit import kernel

    @kernel
    def shared(x):
        return x * 7 + 1

    @kernel
    def first(x):
        return shared(x) + 1

    @kernel
    def second(x):
        return shared(x) - 1
""")

# The first process compiles `first` (and `shared` as its callee) into the cache; the
# second compiles `second`, which must find `shared` there and run it correctly.
FIRST = "from probe import first, shared\nassert first(2) == 16\n"
SECOND = textwrap.dedent("""
    from probe import second, shared
    assert second(2) == 14 and second(-3) == -21
    assert not shared.stats.cache_misses, dict(shared.stats.cache_misses)
    assert len(shared.stats.cache_hits) == 1, dict(shared.stats.cache_hits)
""")


def test_a_callee_cached_by_one_entry_point_is_linked_from_the_cache_by_another(
        probe_processes):
    procs = probe_processes(KERNELS)
    for script in (FIRST, SECOND):
        run = procs.run(script)
        assert run.returncode == 0, run.stderr


@kernel(cache=False)
def _bulky(x, y):
    """Too costly for LLVM's default inlining threshold (250), well under ours."""
    t = x
    for k in range(y):
        if t % 3 == 0:
            t = t * 3 + k
        elif t % 4 == 1:
            t = t * 5 + k - 1
        elif t % 5 == 2:
            t = t * 7 + k - 2
        elif t % 6 == 0:
            t = t * 9 + k - 3
        elif t % 7 == 1:
            t = t * 11 + k - 4
        elif t % 8 == 2:
            t = t * 13 + k - 5
        elif t % 9 == 0:
            t = t * 15 + k - 6
        elif t % 10 == 1:
            t = t * 17 + k - 7
        else:
            t = t + 1
    return t


@kernel(cache=False)
def _bulky_twice(x, y):
    return _bulky(x, y) + _bulky(y, x)


def test_the_entry_point_inlines_callees_past_llvms_default_threshold():
    assert _bulky_twice(5, 9) == _bulky_twice.py_func(5, 9)
    (cres,) = entry(_bulky_twice).overloads.values()
    (callee,) = _bulky.overloads.values()
    name = callee.fndesc.llvm_func_name
    calls = [ln for ln in cres.library.get_llvm_str().splitlines() if "call " in ln and name in ln]
    assert not calls, calls


# The same two functions on plain Numba, as code beside kraftwalk's would be.
_bulky_numba = numba.njit(_bulky.py_func)


@numba.njit
def _bulky_twice_numba(x, y):
    return _bulky_numba(x, y) + _bulky_numba(y, x)


def test_other_numba_code_is_inlined_at_llvms_own_threshold():
    """LLVM's threshold is process-wide; kraftwalk raises it only while an entry point
    of its own is optimized."""
    assert _bulky_twice(7, 4) == _bulky_twice.py_func(7, 4)  # a kraftwalk entry point first
    assert _bulky_twice_numba(5, 9) == _bulky_twice.py_func(5, 9)
    (cres,) = _bulky_twice_numba.overloads.values()
    (callee,) = _bulky_numba.overloads.values()
    name = callee.fndesc.llvm_func_name
    calls = [ln for ln in cres.library.get_llvm_str().splitlines() if "call " in ln and name in ln]
    assert calls, "inlined: kraftwalk's threshold leaked into other code"
