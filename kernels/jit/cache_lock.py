"""The kernels' Numba cache, with each save serialized across processes.

Numba saves a cache entry by reading the function's index, picking the first free
data-file number, writing the index and then the data, with no lock. Two processes
that compile different variants of one kernel into the same cache
(kraftwalk.run.precompile does) can pick the same number: one index entry is lost and
the other may point at the other variant's code. :class:`KernelCache` holds an
exclusive lock per index file around the whole save, so each save sees the last
one's index. Only kraftwalk's kernels use it; other Numba code caches as Numba ships.
Where there is no ``fcntl`` (not POSIX) saves stay unlocked, and precompile compiles
one variant at a time (:data:`SAVES_SERIALIZED`).
"""
try:
    import fcntl
except ImportError:
    fcntl = None

from numba.core.caching import FunctionCache, IndexDataCacheFile

# What the lock needs of Numba's cache file (checked with the other internals, .hooks).
REQUIRED = [(IndexDataCacheFile, "save"), (FunctionCache, "_impl_class")]
SAVES_SERIALIZED = fcntl is not None


class SerializedSaves:
    """A cache file whose saves hold ``<index>.lock`` exclusively."""

    def __init__(self, inner):
        self._inner = inner
        self._lock_path = inner._index_path + ".lock"

    def save(self, key, data):
        try:
            lock = open(self._lock_path, "a")
        except OSError:  # a cache we cannot lock is one we cannot write either
            return self._inner.save(key, data)
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            return self._inner.save(key, data)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class KernelCache(FunctionCache):
    """Numba's function cache, saves serialized where there are locks."""

    def __init__(self, py_func):
        super().__init__(py_func)
        if SAVES_SERIALIZED:
            self._cache_file = SerializedSaves(self._cache_file)
