"""Exceptions the front end turns into clean one-line error messages and exit codes."""
import signal


class UsageError(Exception):
    """A bad user value (CLI option, TOML key or value, config file).

    The message is one line that names the bad value and what is allowed; the
    CLI prints it as ``kraftwalk: error: <message>`` and exits with code 2.
    """


class RunError(Exception):
    """A failure that is not a bad value (a replay that no longer matches its run, say):
    the CLI prints its one-line message as ``kraftwalk: error: <message>`` and exits 1."""


class RunStopped(KeyboardInterrupt):
    """A run stopped by a signal (Ctrl-C, SIGTERM, SIGHUP) after saving what it had;
    ``summary`` is the run's summary, ``signum`` the signal. The CLI exits 128 + signum."""

    def __init__(self, signum: int, summary: dict | None = None) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.summary = summary
