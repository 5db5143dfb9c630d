"""The one decorator for kernel code.

``_nrt=False`` compiles without Numba's reference-counting runtime: kernels
never allocate, and without it passing the walk's arrays to a function costs
no atomic increfs and decrefs (with it, a call cost ~70 atomics: 40x slower).
Any allocation inside a kernel is then a compile error, which is the point.
"""
from numba import njit


def kernel(fn=None, **options):
    options.setdefault("cache", True)
    options.setdefault("_nrt", False)
    if fn is None:
        return lambda f: njit(**options)(f)
    return njit(**options)(fn)


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
