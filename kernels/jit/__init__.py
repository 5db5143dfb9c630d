"""The one decorator for kernel code, on Numba's internals or on its public API alone.

kraftwalk's speed comes from hooks into Numba's internals (:mod:`.hooks`: no Python
wrappers or reference counting, feature switches folded before typing, each kernel
optimized once in its entry point, the walk passed by reference), worth about 13x.
Those internals move between Numba releases, so the hooks are used only where they
install: ``KRAFTWALK_PLAIN_NUMBA=1`` turns them off, and a Numba that lacks one of
them (an import or attribute lookup fails) falls back to :mod:`.plain`, the public
API alone, with one warning line. Both compile the same functions to the same
arithmetic: every walk, violation and coverage count is the same either way
(tests/kernels/test_plain_numba.py); only speed and compile time differ.

The choice is made when the kernels are first imported, once per process, and is
passed on to worker processes through the environment, so a fall-back warns once.
"""
import os
import sys

from .numba_switch import COST, ENV, SUPPORTED, plain_requested


def _choose():
    """(implementation module, why plain or None)."""
    if plain_requested():
        from . import plain
        return plain, f"{ENV}=1"
    try:
        from . import hooks
        missing = hooks.missing_internal()
    except (ImportError, AttributeError) as e:
        missing = f"{type(e).__name__}: {e}"
    if missing is None:
        return hooks, None
    import numba

    from . import plain
    sys.stderr.write(f"kraftwalk: warning: Numba {numba.__version__} lacks an internal the "
                     f"fast kernels need ({missing}); running on plain Numba ({COST}; "
                     f"tested: {SUPPORTED})\n")
    os.environ[ENV] = "1"  # workers start plain too, without warning again
    return plain, f"fall-back: {missing}"


_impl, WHY_PLAIN = _choose()
MODE = _impl.MODE  # "hooks" or "plain"
kernel = _impl.kernel
call_with_features = _impl.call_with_features
entry = _impl.entry
bundle = _impl.bundle
literally = _impl.literally  # an entry point's feature mask: literal with the hooks


def parallel_compile_safe() -> bool:
    """Whether processes may compile kernel variants into one cache at once: only
    where saves are serialized (:mod:`.cache_lock`, with the hooks on POSIX)."""
    if MODE != "hooks":
        return False
    from .cache_lock import SAVES_SERIALIZED
    return SAVES_SERIALIZED


def describe() -> str:
    """The mode for run records: "hooks", or "plain (why)"."""
    return MODE if WHY_PLAIN is None else f"plain ({WHY_PLAIN})"
