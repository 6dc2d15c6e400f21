"""A mistyped option, subcommand or choice names the closest valid one.

argparse says "unrecognized arguments" or "invalid choice" and stops; Python 3.14's
``suggest_on_error`` adds a suggestion, which fastgen (Python 3.10+) gives itself, with
difflib.  Every option of every subcommand, every subcommand and every choice is
mistyped here in a few ways, and the suggestion must be the original.
"""

import argparse
import csv
import difflib
import re

import pytest

from fastgen import cli
from fastgen.cli.main import build_parser

PARSER = build_parser()
COMMANDS = next(a for a in PARSER._actions
                if isinstance(a, argparse._SubParsersAction)).choices


def _error(args, capsys):
    """(exit status, the one stderr line) of ``fastgen ARGS``."""
    with pytest.raises(SystemExit) as info:
        cli.main(list(args))
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return info.value.code, err.strip()


def _suggested(line, typo, expected, candidates):
    """Whether ``line`` suggests ``expected``, or a candidate exactly as close to the
    typo (``flc`` is as near ``flac`` as ``flic``)."""
    found = re.search(r"did you mean '([^']+)'\?", line)
    if found is None:
        return False
    ratio = lambda c: difflib.SequenceMatcher(None, typo, c).ratio()  # noqa: E731
    return found.group(1) == expected or ratio(found.group(1)) == ratio(expected) == max(
        ratio(c) for c in candidates)


def _typos(word):
    """A letter dropped, doubled and two swapped, away from the leading dashes."""
    body = word.lstrip("-")
    dashes = word[:len(word) - len(body)]
    i = len(body) // 2
    out = {dashes + body[:i] + body[i + 1:], dashes + body[:i] + body[i] + body[i:]}
    if len(body) > 3 and body[i] != body[i + 1]:
        out.add(dashes + body[:i] + body[i + 1] + body[i] + body[i + 2:])
    return sorted(out - {word})


def _options():
    for name, parser in COMMANDS.items():
        strings = [s for a in parser._actions for s in a.option_strings]
        for option in strings:
            if option.startswith("--") and len(option) >= 6 and option != "--help":
                yield name, option, strings


def _required(name):
    """Arguments that let subcommand ``name`` reach its unknown-option check."""
    return {"curve": ["--dataset", "iris"], "fit": ["--model", "lda", "d.csv", "--target",
                                                     "y"],
            "predict": ["p.npz", "d.csv"], "info": ["p.npz"]}.get(name, [])


@pytest.mark.parametrize("command, option, strings", list(_options()),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_every_option_of_every_command_is_suggested(command, option, strings, capsys):
    for typo in _typos(option):
        if any(s.startswith(typo) for s in strings):
            continue  # an abbreviation argparse accepts (or calls ambiguous)
        code, line = _error([command, *_required(command), typo], capsys)
        assert code == 2
        assert line.startswith("fastgen: error: unrecognized arguments: "), line
        assert _suggested(line, typo.split("=")[0], option, strings), (typo, line)
        assert f"(see 'fastgen {command} --help')" in line


def test_an_option_with_its_value_and_several_typos(capsys):
    code, line = _error(["compile", "--famly=gda", "--jbs", "3"], capsys)
    assert code == 2
    assert ("unrecognized arguments: --famly=gda --jbs 3; did you mean '--family' for "
            "--famly and '--jobs' for --jbs?") in line, line
    code, line = _error(["compile", "--families", "gda"], capsys)
    assert "unrecognized arguments: --families gda; did you mean '--family'?" in line


@pytest.mark.parametrize("args, expected", [
    (["--verison"], "--verison; did you mean '--version'?"),
    (["--hepl"], "--hepl; did you mean '--help'?"),
    (["--verison", "fit"], "--verison; did you mean '--version'?"),  # not fit's own
    (["-x", "demo"], "-x"),
])
def test_options_before_the_subcommand(args, expected, capsys):
    """Before the subcommand, an unknown option is the first thing said (argparse said
    "the following arguments are required: command")."""
    code, line = _error(args, capsys)
    assert code == 2
    assert line == f"fastgen: error: unrecognized arguments: {expected} (see 'fastgen --help')"


def test_nothing_close_gets_no_suggestion(capsys):
    code, line = _error(["demo", "--zzzzzzzz"], capsys)
    assert code == 2 and "did you mean" not in line
    assert line == ("fastgen: error: unrecognized arguments: --zzzzzzzz "
                    "(see 'fastgen demo --help')")
    code, line = _error(["qqqqqq"], capsys)
    assert "invalid choice: 'qqqqqq'" in line and "did you mean" not in line


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_subcommand_is_suggested(command, capsys):
    for typo in _typos(command):
        if typo in COMMANDS:
            continue
        code, line = _error([typo], capsys)
        assert code == 2
        assert f"invalid choice: {typo!r}" in line, line
        assert _suggested(line, typo, command, COMMANDS), (typo, line)


def _choice_actions():
    for name, parser in COMMANDS.items():
        for action in parser._actions:
            if action.choices and action.option_strings:
                for choice in action.choices:
                    if len(choice) >= 4:
                        yield name, action.option_strings[-1], choice


@pytest.mark.parametrize("command, option, choice", list(_choice_actions()))
def test_every_choice_is_suggested(command, option, choice, capsys):
    base = _required(command)
    if option in base:  # the option itself is one of them: its value is the typo
        i = base.index(option)
        base = base[:i] + base[i + 2:]
    for typo in _typos(choice):
        if typo in COMMANDS[command]._option_string_actions[option].choices:
            continue
        code, line = _error([command, *base, option, typo], capsys)
        assert code == 2
        assert f"argument {option}: invalid choice: {typo!r}" in line, line
        choices = COMMANDS[command]._option_string_actions[option].choices
        assert _suggested(line, typo, choice, choices), (typo, line)


# ------------------------------------------------- names checked by the commands


def _command_error(args, capsys):
    assert cli.main(list(args)) == 2
    return capsys.readouterr().err.strip()


@pytest.mark.parametrize("args, expected", [
    (["compile", "--family", "logistc"], "did you mean 'logistic'?"),
    (["compile", "--family", "gda,frith"], "did you mean 'firth'?"),
    (["compile", "--dtype", "float63"], "did you mean 'float64'?"),
    (["curve", "--dataset", "wien"], "did you mean 'wine'?"),
    (["curve", "--dataset", "iris", "--models", "lda,qdaa"], "did you mean 'qda'?"),
])
def test_names_in_option_values_are_suggested(args, expected, capsys):
    err = _command_error(args, capsys)
    assert err.startswith("fastgen: error: ") and err.endswith(expected), err


def test_compile_family_typo_is_refused_before_any_work(capsys, monkeypatch):
    import fastgen

    def no_compile(*a, **k):
        raise AssertionError("compile ran")

    monkeypatch.setattr(fastgen, "compile", no_compile, raising=False)
    err = _command_error(["compile", "--family", "gda,logistc"], capsys)
    assert "unknown family 'logistc'" in err and "did you mean 'logistic'?" in err


def test_target_column_typo_is_suggested(tmp_path, capsys):
    path = tmp_path / "d.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["height", "weight", "species"])
        w.writerows([[1.0, 2.0, "a"], [2.0, 1.0, "b"], [1.5, 2.5, "a"], [2.5, 0.5, "b"]])
    err = _command_error(["fit", "--model", "lda", str(path), "--target", "specis",
                          "-o", str(tmp_path / "p")], capsys)
    assert "column 'specis' not found" in err and err.endswith("did you mean 'species'?")
