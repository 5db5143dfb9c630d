"""Numba kernels of kraftwalk, installed as ``kraftwalk.kernels``.

``layout`` defines the packed state of a walk; the protocol handlers live in
``election``, ``replication`` and ``quorum_epoch``; ``faults`` holds crash,
restart and network faults; ``checkers`` the safety invariants; ``scheduler``
picks actions; ``walk`` runs whole walks.
"""
