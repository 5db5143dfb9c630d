"""``kraftwalk versions``: the Kafka releases the walks can follow, and what changed
in each (kraftwalk.vocabulary.releases)."""
from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from kraftwalk.vocabulary.releases import ALIASES, DEFAULT, QUIET, RELEASES, new_in


def versions() -> None:
    """List the Kafka releases --kafka accepts, the raft/ behaviour each changed (by
    KAFKA issue), and whether the model switches it yet."""
    table = Table(box=box.SIMPLE, show_header=True, title="Kafka releases (--kafka)",
                  title_justify="left")
    table.add_column("release", style="bold")
    table.add_column("change")
    table.add_column("from this release on")
    table.add_column("modelled")
    for r in RELEASES:
        changes = new_in(r)
        name = r + (" (default)" if r == DEFAULT else "")
        if not changes:
            table.add_row(name, "-", QUIET.get(r, "no change to the behaviour modelled"), "")
        for k, c in enumerate(changes):
            table.add_row(name if k == 0 else "", c.issue, c.now,
                          f"yes ({c.switch})" if c.switch else f"not yet: {c.model}")
    console = Console()
    console.print(table)
    aliases = ", ".join(f"{a} = {r}" for a, r in ALIASES.items())
    console.print(f"aliases: {aliases}")
