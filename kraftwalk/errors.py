"""Exceptions the front end turns into clean one-line error messages."""


class UsageError(Exception):
    """A bad user value (CLI option, TOML key or value, config file).

    The message is one line that names the bad value and what is allowed; the
    CLI prints it as ``kraftwalk: error: <message>`` and exits with code 2.
    """
