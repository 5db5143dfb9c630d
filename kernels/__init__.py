"""Numba kernels of kraftwalk, installed as ``kraftwalk.kernels``.

``layout`` defines the packed state of a walk (``bundle`` hands its arrays to
kernels by reference); the protocol handlers live in
``quorum_state``, ``election``, ``replication`` and ``quorum_epoch``; ``faults``
holds crash, restart and network faults; ``checkers`` the safety invariants;
``transition`` says which actions are enabled and applies them (the transition
relation); ``swarm`` chooses the next action (the untimed swarm chooser); ``walk``
runs whole walks; ``trace`` records and replays them.

``jit`` compiles them, on Numba's internals where they install and on its public
API otherwise; ``numba_cache`` says where the compiled code is cached.
"""
