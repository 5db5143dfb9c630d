"""The network: a bag of in-flight messages, any of which may be delivered next.

Actions name messages by their slot in the bag, so the slot order is part of the
model (it is the kernel's convention): a new message or a duplicate goes at the
end; removing message ``k`` moves the LAST message into slot ``k``. A send is
lost if the link is cut and dropped (and counted) if the bag already holds
``capacity`` messages.
"""
from __future__ import annotations

from dataclasses import replace

from .state import Message


class Network:
    def __init__(self, capacity: int, stats: dict):
        self.capacity = capacity
        self.stats = stats
        self.messages: list[Message] = []

    def __len__(self) -> int:
        return len(self.messages)

    def send(self, msg: Message, link_up: bool) -> bool:
        """Put ``msg`` in flight; False if it was lost (cut link) or dropped (full)."""
        self.stats["msgs_sent"] += 1
        if not link_up:
            self.stats["msgs_lost"] += 1
            return False
        if len(self.messages) >= self.capacity:
            self.stats["msgs_dropped_full"] += 1
            return False
        self.messages.append(msg)
        return True

    def take(self, k: int) -> Message:
        """Remove message k from the bag (the last message moves into its slot)."""
        msg = self.messages[k]
        last = self.messages.pop()
        if k < len(self.messages):
            self.messages[k] = last
        return msg

    def lose(self, k: int) -> None:
        self.take(k)
        self.stats["msgs_lost"] += 1

    def duplicate(self, k: int) -> bool:
        if len(self.messages) >= self.capacity:
            return False
        self.messages.append(replace(self.messages[k]))
        self.stats["msgs_duplicated"] += 1
        return True
