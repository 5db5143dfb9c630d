"""An independent, plain-Python reference model of the KRaft transition system.

The Numba kernels (``kraftwalk.kernels``) pack a cluster into fixed-size arrays
for speed. This package is the same transition system written for clarity, as
an executable specification: dataclasses, lists of ``(epoch, value)`` entries,
sets and dicts, one function per protocol step, named like Kafka's (and the
kernel's) handlers. It shares nothing with the kernel but constants (role,
message and error codes, action families, feature bits, invariant ids).

Where this model believes the kernel differs from Apache Kafka it follows
Kafka, and names the difference in :mod:`kraftwalk.reference.deviations` while
it is open; a ``ReferenceCluster`` built with ``kernel_compat=...`` adopts the
kernel's choice for named open differences, so a differential test can look
past them. Where the choice is a modelling convention (message slot order, the
action encoding, counters, the bounds that end a walk) it mirrors the kernel.

Entry points:

* :class:`ReferenceCluster` -- ``apply(action)``, ``check()``, ``snapshot()``
* :func:`kraftwalk.reference.from_kernel.kernel_snapshot` -- the same canonical
  snapshot read from a kernel ``Walk``
"""
from .cluster import ReferenceCluster
from .deviations import DEVIATIONS, KERNEL_COMPAT_ALL
from .params import Params
from .state import Message, Node

__all__ = ["ReferenceCluster", "Params", "Node", "Message", "DEVIATIONS", "KERNEL_COMPAT_ALL"]
