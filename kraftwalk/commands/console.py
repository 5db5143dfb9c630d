"""What every command prints the same way: one-line errors with their exit codes,
and numbers and tables in the summaries."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

import typer
from rich import box
from rich.markup import escape
from rich.table import Table


# Exit codes a CI job acts on (the README's table of exit codes); 128 + N is a stop by signal N.
EXIT_RUN_ERROR = 1  # a failure that is not a bad value
EXIT_USAGE = 2  # same code click uses for its own usage errors
EXIT_SAFETY = 12  # a safety invariant (an always property) broke: TLC's code for it
EXIT_LIVENESS = 13  # a liveness property (eventually) broke and no invariant: TLC's code
EXIT_UNREACHED = 14  # a --require target no walk reached


def violations_exit(names) -> int | None:
    """The exit code for violations of the properties ``names``, None for none."""
    from kraftwalk.vocabulary.properties import LIVENESS_NAMES

    names = set(names)
    if not names:
        return None
    return EXIT_LIVENESS if names <= set(LIVENESS_NAMES) else EXIT_SAFETY


def one_line(text: object) -> str:
    return " ".join(str(text).split())


def fail(message: object, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``kraftwalk: error: <message>`` as one stderr line and exit."""
    typer.echo(f"kraftwalk: error: {one_line(message)}", err=True)
    raise typer.Exit(code)


def num(value: Any, fmt: str = ",") -> str:
    if value is None:
        return "n/a"
    try:
        return format(float(value) if "f" in fmt else int(value), fmt)
    except (TypeError, ValueError):
        return str(value)


def byte_size(n_bytes: int) -> str:
    if n_bytes < 1024:
        return f"{n_bytes} B"
    size = float(n_bytes)
    for unit in ("KiB", "MiB", "GiB"):
        size /= 1024
        if size < 1024 or unit == "GiB":
            break
    return f"{size:.1f} {unit}"


def counts_table(title: str, counts: Mapping[str, Any], style: str) -> Table:
    table = Table(title=title, box=box.SIMPLE, title_justify="left", title_style=style)
    table.add_column("name")
    table.add_column("count", justify="right")
    for name, count in sorted(counts.items(), key=lambda kv: (-int(kv[1]), kv[0])):
        table.add_row(escape(str(name)), num(count))
    return table
