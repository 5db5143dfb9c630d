"""Options declared once: every RunConfig field has its one option, spelled as the
config key; the commands that take a --config file offer exactly the keys they read."""
import dataclasses

import typer.main

from kraftwalk.cli import app
from kraftwalk.commands import options as opts
from kraftwalk.commands.bench import BENCH_KEYS
from kraftwalk.commands.hunt import HUNT_KEYS
from kraftwalk.commands.sweep import BUDGET, FREE
from kraftwalk.config import RunConfig, option_name


def _options(command: str) -> set[str]:
    cmd = typer.main.get_command(app).commands[command]
    # typer may run on its own copy of click: options are told by their kind, not class
    return {o for p in cmd.params if p.param_type_name == "option" for o in p.opts}


def test_every_config_field_has_its_option_spelled_as_its_key():
    fields = [f.name for f in dataclasses.fields(RunConfig)]
    assert set(opts.CONFIG_OPTIONS) == set(fields)
    for f in fields:
        assert option_name(f) in _options("swarm"), f


def test_each_command_offers_the_config_keys_it_reads():
    from kraftwalk.commands import bench, hunt, sweep

    for command, keys in ((hunt.hunt, HUNT_KEYS), (bench.bench, BENCH_KEYS),
                          (sweep.sweep, (*BUDGET, *FREE))):
        assert command.config_fields == keys, command.__name__
        offered = _options(command.__name__)
        assert {option_name(k) for k in keys} <= offered, command.__name__


def test_an_unknown_field_is_refused_when_declared():
    try:
        opts.config_options("no_such_field")
    except ValueError as e:
        assert "no_such_field" in str(e)
    else:
        raise AssertionError("config_options took an unknown field")


def test_values_reach_the_command_as_one_dict():
    seen = {}

    @opts.config_options("voters", "disabled_checks")
    def command(values, config=None):
        seen.update(values, config=config)

    command(voters=5, disabled_checks=[], config="x")
    assert seen == {"voters": 5, "disabled_checks": None, "config": "x"}


def test_command_help_paragraphs_are_one_line_each():
    """Rich help keeps a docstring's line breaks, which at other widths cut sentences
    mid-line: each paragraph reaches it as one line, wrapped to the terminal."""
    from kraftwalk.cli import app

    for info in app.registered_commands:
        assert info.help, info.callback
        for paragraph in info.help.split("\n\n"):
            assert "\n" not in paragraph and paragraph == paragraph.strip(), paragraph
