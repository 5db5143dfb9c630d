"""The ``kraftwalk`` command line: the app, and its one way of failing.

Each command is a function in :mod:`kraftwalk.commands` (one module per command,
its options from :mod:`kraftwalk.commands.options`), registered below in the order
``--help`` lists them. A command raises :class:`~kraftwalk.errors.UsageError` for a
bad value; :class:`KraftwalkGroup` turns every usage error (ours and click's) into
one stderr line and exit 2.
"""
from __future__ import annotations

if __name__ == "__main__":  # `python -m kraftwalk.cli`: signals kept from the first line
    from kraftwalk.run.signals import keep_stops

    keep_stops()

import errno
import os
from typing import Annotated, Any, NoReturn, Optional

import typer
from typer.core import TyperGroup

from kraftwalk import __version__
from kraftwalk.commands import bench, compare, elect, hunt, replay, report, swarm, sweep, versions
from kraftwalk.commands.console import EXIT_RUN_ERROR, fail, one_line
from kraftwalk.errors import RunError, RunStopped, UsageError

try:  # newer typer vendors its own copy of click; its exceptions are what it raises
    from typer._click import exceptions as _cx
except ImportError:  # older typer runs on click itself
    from click import exceptions as _cx

# Errors that say a path the user gave cannot name a file on any machine: a component
# too long for the file system, or a file where a folder has to be.
BAD_PATH_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.ENOTDIR})

# click < 8.2 shows help for a bare group without raising; `except ()` matches nothing.
_NO_ARGS_IS_HELP: Any = getattr(_cx, "NoArgsIsHelpError", ())


def _fail_click(err: Any) -> NoReturn:
    message = err.format_message()
    ctx = getattr(err, "ctx", None)
    if isinstance(err, _cx.UsageError) and ctx is not None:
        message = f"{one_line(message)} (see '{ctx.command_path} --help')"
    fail(message, err.exit_code)


class KraftwalkGroup(TyperGroup):
    """Group that reports usage errors of all commands as one line, exit 2.

    Typer would draw a multi-line box; a single line is easier to grep in CI
    logs and is what scripts expect. Parsing of the group's own options
    happens in make_context, a command's parsing and body in invoke.
    """

    def make_context(self, info_name: Any, args: Any, parent: Any = None, **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except _NO_ARGS_IS_HELP:
            raise  # bare `kraftwalk`: show the help, not an error line
        except _cx.ClickException as err:
            _fail_click(err)

    def invoke(self, ctx: Any) -> Any:
        from kraftwalk.kernels.jit.numba_switch import plain_requested
        from kraftwalk.run.signals import stop_on_signals

        try:
            plain_requested()  # a bad $KRAFTWALK_PLAIN_NUMBA, before any kernel loads
        except ValueError as err:
            fail(err)
        try:
            with stop_on_signals():  # SIGTERM and SIGHUP stop any command as Ctrl-C does
                return super().invoke(ctx)
        except RunStopped as stop:  # a command with nothing of its own to save or say
            fail(f"stopped by {stop}", 128 + stop.signum)
        except UsageError as err:
            fail(err)
        except RunError as err:
            fail(err, EXIT_RUN_ERROR)
        except OSError as err:
            where = f" {err.filename}" if getattr(err, "filename", None) else ""
            if err.errno in BAD_PATH_ERRNOS:  # the path given, not the machine: bad input
                fail(f"bad path{where}: {err.strerror or err}")
            # the machine, not the input: a full disk, a vanished folder
            fail(f"cannot read or write{where}: {err.strerror or err}", EXIT_RUN_ERROR)
        except _cx.ClickException as err:
            _fail_click(err)

app = typer.Typer(
    cls=KraftwalkGroup,
    no_args_is_help=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Random-walk checker for the Kafka KRaft consensus protocol.",
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"kraftwalk {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        Optional[bool],
        typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version and exit."),
    ] = None,
) -> None:
    """Random-walk checker for the Kafka KRaft consensus protocol.

    Each walk simulates a small KRaft cluster under random crashes, restarts,
    network faults and message reorderings, and checks the safety invariants
    after every step.
    """

def _flowed(command: Any) -> str:
    """A command's docstring with each paragraph on one line: rich help keeps the
    docstring's line breaks, which at any other width break sentences mid-line."""
    import inspect
    import re

    return "\n\n".join(" ".join(p.split())
                       for p in re.split(r"\n\s*\n", inspect.getdoc(command) or ""))


for command in (swarm.swarm, sweep.sweep, hunt.hunt, replay.replay):
    app.command(help=_flowed(command))(command)
app.command(name="shrink", help=_flowed(replay.shrink))(replay.shrink)
for command in (report.plot, report.report, elect.elect, compare.compare, hunt.mutations,
                versions.versions, bench.bench):
    app.command(help=_flowed(command))(command)


def program() -> None:
    """The program: the app, then an end no stop signal can cut. The interpreter's own
    teardown is not left to run: there, a stop signal killed the process half torn
    down or was lost (Python handlers no longer run, and loky's resource tracker
    unblocks SIGINT and SIGTERM), and its leftovers made loky warn. So the local worker
    pool is shut down and the exit handlers run here, with the stop signals still kept
    (:func:`kraftwalk.run.signals.keep_stops`); then one that came after the command's
    output ends the process as one during the command would, and it exits at once."""
    import atexit
    import signal
    import sys

    from kraftwalk.run.signals import STOP_SIGNALS, kept_after

    try:
        app(prog_name="kraftwalk")
        code: object = 0
    except SystemExit as done:
        code = done.code
    _stop_local_workers()
    atexit._run_exitfuncs()  # joblib's temporary folders, a Dask or Ray session
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    signum = kept_after()
    if signum is None:
        pending = set(STOP_SIGNALS) & signal.sigpending()
        signum = min(pending) if pending else None
    if signum is not None:
        typer.echo(f"kraftwalk: error: stopped by {signal.Signals(signum).name}", err=True)
        code = 128 + signum
    if code is not None and not isinstance(code, int):
        typer.echo(code, err=True)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said on it
            pass
    os._exit(code or 0)


def _stop_local_workers() -> None:
    """Shut down joblib's reusable loky pool, if this process started one (an exit
    handler would otherwise wait for its idle workers). Its workers are asked to end,
    not killed: a killed one can leave a lock loky's resource tracker warns about."""
    import sys

    loky = sys.modules.get("joblib.externals.loky.reusable_executor")
    pool = getattr(loky, "_executor", None)
    if pool is not None:
        pool.shutdown(wait=True)


if __name__ == "__main__":  # `python -m kraftwalk.cli` before the package is installed
    program()
