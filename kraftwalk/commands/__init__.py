"""The command line's parts: its shared options, progress displays and reports."""
