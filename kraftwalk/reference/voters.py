"""Who votes, in a node's view: the reference model's twin of ``kernels/voters.py``.

Every rule that counts votes, acknowledgements or voters asks here. Today each
node's view is the cluster's bootstrap voters (nodes ``0 .. voters-1``); with
KIP-853 it becomes the latest VotersRecord in the node's log, and only this module
changes.
"""
from __future__ import annotations


def voters(c, node) -> frozenset:
    """The voter set in ``node``'s view."""
    return c.bootstrap_voters


def is_voter(c, node) -> bool:
    """Is ``node`` a voter in its own view?"""
    return node.id in voters(c, node)


def other_voters(c, node) -> set:
    """The voters in ``node``'s view other than itself."""
    return set(voters(c, node)) - {node.id}


def majority(c, node) -> int:
    """The size of a majority of ``node``'s voter set."""
    return len(voters(c, node)) // 2 + 1


def has_majority(c, node, ids) -> bool:
    """Do the nodes ``ids`` hold a majority of ``node``'s voter set?"""
    return len(voters(c, node) & set(ids)) >= majority(c, node)
