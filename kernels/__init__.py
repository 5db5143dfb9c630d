"""Numba kernels of kraftwalk, installed as ``kraftwalk.kernels``; one sub-package
per layer, each importing only the ones listed before it:

* ``jit``: the one decorator for kernel code (on Numba's internals, or its public
  API alone) and where the compiled code is cached; ``features`` names the
  compile-time feature bits;
* ``state``: the packed state of a walk (``state.layout`` documents every array),
  logs, messages in flight, voter sets, timers, random numbers, coverage;
* ``properties``: the safety invariants and the timed liveness properties;
* ``protocol``: KRaft's handlers, named after the Kafka methods they model;
* ``transition``: the transition relation (enabled actions, applying one) and faults;
* ``choosers``: the untimed swarm chooser and the timed one, on the same transitions;
* ``drivers``: whole walks, traces and replay, phase profiling.

The modules were once one flat folder; their old names (``kraftwalk.kernels.layout``,
``kraftwalk.kernels.walk``, ...) still import, as the same module objects.
"""
import importlib
import importlib.abc
import importlib.util
import sys

# old flat name -> where the module lives now
MOVED = {
    "hooks": "jit.hooks", "plain": "jit.plain", "bundle": "jit.bundles",
    "link_only": "jit.link_only", "numba_cache": "jit.numba_cache",
    "cache_lock": "jit.cache_lock", "numba_switch": "jit.numba_switch",
    "layout": "state.layout", "rng": "state.rng", "network": "state.network",
    "voters": "state.voters", "clock": "state.clock", "log": "state.log",
    "coverage": "state.coverage",
    "checkers": "properties.checkers", "liveness": "properties.liveness",
    "quorum_state": "protocol.quorum_state", "election": "protocol.election",
    "replication": "protocol.replication", "quorum_epoch": "protocol.quorum_epoch",
    "snapshots": "protocol.snapshots", "reconfig": "protocol.reconfig",
    "faults": "transition.faults",
    "swarm": "choosers.swarm", "timed_step": "choosers.timed_step",
    "scenarios": "choosers.scenarios",
    "walk": "drivers.walk", "timed": "drivers.timed", "trace": "drivers.trace",
    "profile": "drivers.profile",
}
# the tables that moved into the vocabulary (Numba-free)
MOVED_OUT = {"messages": "kraftwalk.vocabulary.messages",
             "timing": "kraftwalk.vocabulary.timing"}


def _target(name: str) -> str | None:
    prefix, _, stem = name.rpartition(".")
    if prefix != __name__:
        return None
    if stem in MOVED:
        return f"{__name__}.{MOVED[stem]}"
    return MOVED_OUT.get(stem)


class _OldNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old flat name as the module that now lives elsewhere."""

    def find_spec(self, name, path=None, target=None):
        if _target(name) is None:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return importlib.import_module(_target(spec.name))

    def exec_module(self, module):
        pass


if not any(isinstance(f, _OldNames) for f in sys.meta_path):
    sys.meta_path.insert(0, _OldNames())
