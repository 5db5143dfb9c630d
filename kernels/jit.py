"""The one decorator for kernel code.

``_nrt=False`` compiles without Numba's reference-counting runtime: kernels
never allocate, and without it passing the walk's arrays to a function costs
no atomic increfs and decrefs (with it, a call cost ~70 atomics: 40x slower).
Any allocation inside a kernel is then a compile error, which is the point.

No kernel is ``inline="always"``: Numba inlines such a function by copying and
re-typing its IR at every call site, which took a fifth of the cold compile,
while LLVM inlines the same small callees on its own at no cost in speed
(results/speed-levers.md has the figures).
"""
import functools
import threading

from numba import njit
from numba.core import caching, event, ir_utils

try:
    import fcntl
except ImportError:  # not POSIX: saves stay unlocked, as Numba ships them
    fcntl = None


def kernel(fn=None, **options):
    options.setdefault("cache", True)
    options.setdefault("_nrt", False)
    if fn is None:
        return lambda f: njit(**options)(f)
    return njit(**options)(fn)


class _FreshLabelsPerCompile(event.Listener):
    """Numba numbers IR blocks from one process-wide counter, and each inlining of
    an ``inline="always"`` callee that itself inlined others offsets its labels past
    the counter, so the counter about doubles per such inlining (~35 decimal digits
    per feature mask of this kernel). After ~30 masks in one process a block name
    passes LLVM's 1024-character limit and the compile fails ("name is too long").
    Every top-level compile starts from fresh bytecode, so it may start the counter
    from zero as a fresh process does; nested compiles (callees) keep it."""

    def __init__(self):
        self._depth = threading.local()

    def on_start(self, ev):
        depth = getattr(self._depth, "n", 0)
        if depth == 0:
            ir_utils._the_max_label._value = 0
        self._depth.n = depth + 1

    def on_end(self, ev):
        self._depth.n -= 1


if hasattr(getattr(ir_utils, "_the_max_label", None), "_value"):
    event.register("numba:compile", _FreshLabelsPerCompile())


def _serialized(save):
    """Numba saves a cache entry by reading the function's index, picking the first
    free data-file number, writing the index and then the data, with no lock. Two
    processes that compile different variants of one kernel into the same cache
    (kraftwalk.precompile does) can pick the same number: one index entry is lost and
    the other may point at the other variant's code. An exclusive lock per index file
    around the whole save makes each save see the last one's index."""
    @functools.wraps(save)
    def locked_save(self, key, data):
        try:
            lock = open(self._index_path + ".lock", "a")
        except OSError:  # a cache we cannot lock is one we cannot write either
            return save(self, key, data)
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            return save(self, key, data)
    locked_save.serialized = True
    return locked_save


_index_file = getattr(caching, "IndexDataCacheFile", None)
if fcntl is not None and hasattr(_index_file, "save") and not getattr(
        _index_file.save, "serialized", False):
    _index_file.save = _serialized(_index_file.save)

_ENTRY_POINTS = {}


def call_with_features(dispatcher, *args):
    """Call a kernel whose last argument is the literal feature mask.

    Numba resolves a literal argument from Python by failing and retrying its
    dispatch, about 10 ms a call; here the specialisation is compiled (or loaded
    from the cache) once per (kernel, mask) and its entry point called directly,
    about 1 us.
    """
    from numba.core import types

    features = int(args[-1])
    key = (dispatcher, features)
    entry = _ENTRY_POINTS.get(key)
    if entry is None:
        sig = tuple(dispatcher.typeof_pyval(a) for a in args[:-1]) + (types.literal(features),)
        entry = dispatcher.compile(sig)
        _ENTRY_POINTS[key] = entry
    return entry(*args[:-1], features)
