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
