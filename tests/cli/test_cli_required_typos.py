"""A required option that is missing because it was mistyped is reported as the typo,
with the closest option, not as "the following arguments are required"."""

import pytest

from tests.cli.test_cli_suggestions import COMMANDS, _error


def _required(command):
    """The required options of a subcommand and of its mutually exclusive groups."""
    parser = COMMANDS[command]
    plain = [a.option_strings[-1] for a in parser._actions
             if a.required and a.option_strings]
    groups = [g._group_actions[0].option_strings[-1]
              for g in parser._mutually_exclusive_groups if g.required]
    return plain + groups


CASES = [(c, o) for c in COMMANDS for o in _required(c) if o.startswith("--")]


def test_some_commands_have_required_options():
    assert len(CASES) >= 3


@pytest.mark.parametrize("command,option", CASES)
@pytest.mark.parametrize("typo", ["swap", "drop"])
def test_a_mistyped_required_option_is_named(command, option, typo, capsys):
    name = option[2:]
    wrong = ("--" + name[1] + name[0] + name[2:] if typo == "swap" and len(name) > 2
             else "--" + name[:-1])
    if any(o.startswith(wrong) for a in COMMANDS[command]._actions
           for o in a.option_strings):
        pytest.skip("the typo is a valid prefix of an option")
    code, line = _error([command, wrong, "value"], capsys)
    assert code == 2
    assert f"unrecognized arguments: {wrong}" in line, line
    assert f"did you mean '{option}'" in line, line
    assert "required" not in line


def test_a_missing_required_option_is_still_named(capsys):
    code, line = _error(["fit", "data.csv"], capsys)
    assert code == 2 and "required" in line and "--model" in line
