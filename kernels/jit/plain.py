"""Kernels on Numba's public API alone: the fall-back of :mod:`.jit`.

Each kernel is ``numba.njit(cache=True)`` and a bundle a plain namedtuple. The
feature mask is an ordinary run-time integer here (``literally`` does nothing): one
compile serves every mask, where a literal mask would cost a whole compile of the
model per mask, each several times the hooks' (kernels optimized each on its own and
again in every caller, with their Python wrappers, once per constant passed). The
same Python functions compile to the same arithmetic, so every walk, violation and
coverage count is the one the hooks give (tests/kernels/test_plain_numba.py); what
is lost is speed (README, "Numba versions").
"""
from collections import namedtuple

import numba

from .numba_cache import kernel_cache_dir

MODE = "plain"


def kernel(fn=None, **options):
    """``numba.njit`` for kernel code, cached in the kernels' own folder."""
    cache = options.pop("cache", True)

    def make(f):
        with kernel_cache_dir(MODE):
            return numba.njit(cache=cache, **options)(f)

    return make if fn is None else make(fn)


@kernel
def literally(features):
    """The mask stays a run-time value: this is ``numba.literally`` in the hooks."""
    return features


def call_with_features(dispatcher, *args):
    """Call an entry point whose last argument is the feature mask."""
    return dispatcher(*args[:-1], int(args[-1]))


def entry(dispatcher):
    """The dispatcher Python calls for a kernel: the kernel itself."""
    return dispatcher


def bundle(name, fields, module):
    """A namedtuple class of arrays (defined in ``module``)."""
    return namedtuple(name, fields, module=module)
