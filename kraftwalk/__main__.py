"""The ``kraftwalk`` program (``python -m kraftwalk`` and the console script): stop
signals are kept from its first line (:func:`kraftwalk.run.signals.keep_stops`),
before the command line's imports, which a Ctrl-C would otherwise cut in two."""


def main() -> None:
    from kraftwalk.run.signals import keep_stops

    keep_stops()
    from kraftwalk.cli import program

    program()


if __name__ == "__main__":
    main()
