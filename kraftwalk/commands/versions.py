"""``kraftwalk versions``: the Kafka releases the walks can follow, and what changed
in each (kraftwalk.vocabulary.releases)."""
from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from kraftwalk.vocabulary.releases import ALIASES, DEFAULT, table as releases_table


def versions() -> None:
    """List the Kafka releases --kafka accepts, the raft/ behaviour each changed (by
    KAFKA issue), and whether the model switches it yet."""
    table = Table(box=box.SIMPLE, show_header=True, title="Kafka releases (--kafka)",
                  title_justify="left")
    table.add_column("release", style="bold")
    table.add_column("change")
    table.add_column("from this release on")
    table.add_column("modelled")
    shown = None
    for release, change, now, _, modelled in releases_table():
        name = "" if release == shown else release + (" (default)" if release == DEFAULT else "")
        shown = release
        table.add_row(name, change, now, modelled)
    console = Console()
    console.print(table)
    aliases = ", ".join(f"{a} = {r}" for a, r in ALIASES.items())
    console.print(f"aliases: {aliases}")
