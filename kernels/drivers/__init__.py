"""Whole walks: run chunks of them with a chooser and the checks after every step
(``walk``, ``timed``), record and replay one (``trace``), time the phases (``profile``)."""
