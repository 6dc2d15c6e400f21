"""fastgen's environment variables are read strictly: a value outside the documented
form is refused (or, for the log level, ignored with a line that names it), never read
as something else.

``FASTGEN_SMALL_VALUES`` decides which path computes, so a typo must not silently move
the threshold: ``+5`` is not "5", ``1e400`` is not ``inf`` (float() reads it so), and a
number beyond ``sys.maxsize`` is not clipped.
"""

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fastgen import _log, _small

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = 100_000


def _threshold(monkeypatch, value):
    monkeypatch.setenv("FASTGEN_SMALL_VALUES", value)
    return _small._from_env(DEFAULT)


@pytest.mark.parametrize("value", [
    "+5", "-0", "-1", "1.0", "1.5", "1e-1", "1e+5", "1.5e3", "e5", "1e", "0x10", "1_000",
    "5 5", "nan", "-inf", "+inf", "infinity", "abc", "\u0661\u0662",  # Arabic digits
])
def test_values_outside_the_documented_form_are_refused(monkeypatch, value):
    with pytest.raises(ValueError) as info:
        _threshold(monkeypatch, value)
    msg = str(info.value)
    assert f"FASTGEN_SMALL_VALUES={value!r}" in msg and "non-negative whole number" in msg
    assert "unset it for the default 100000" in msg


@pytest.mark.parametrize("value", ["inf", "Inf", "INF", " inf "])
def test_inf_in_any_case_sends_every_input_to_numpy(monkeypatch, value):
    assert _threshold(monkeypatch, value) == sys.maxsize


@pytest.mark.parametrize("value", ["1e400", "1e19", "9223372036854775808",
                                   "99999999999999999999999999", "1" + "0" * 400,
                                   "10e18"])
def test_numbers_beyond_any_input_are_refused_not_read_as_inf(monkeypatch, value):
    with pytest.raises(ValueError) as info:
        _threshold(monkeypatch, value)
    msg = str(info.value)
    assert f"FASTGEN_SMALL_VALUES={value!r}" in msg
    assert str(sys.maxsize) in msg and "write inf" in msg


@pytest.mark.parametrize("value, threshold", [
    ("0", 0), ("00", 0), ("250", 250), ("1e5", 100_000), ("1E5", 100_000),
    ("25e2", 2_500), ("0e7", 0), (" 7 ", 7), ("\t12\n", 12), ("", DEFAULT), ("  ", DEFAULT),
    ("inf", sys.maxsize), (" inf ", sys.maxsize), (str(sys.maxsize), sys.maxsize),
])
def test_documented_forms_set_the_threshold(monkeypatch, value, threshold):
    got = _threshold(monkeypatch, value)
    assert got == threshold and type(got) is int


def test_the_first_call_raises_on_overflow():
    """End to end: the variable is read by the first call, which raises."""
    code = textwrap.dedent("""
        import numpy as np, fastgen
        try:
            fastgen.fit_gda(np.eye(4), [0, 0, 1, 1])
        except ValueError as exc:
            print("ValueError:", exc)
    """)
    env = dict(os.environ, FASTGEN_SMALL_VALUES="1e400")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("ValueError: the environment variable "
                                 "FASTGEN_SMALL_VALUES='1e400'"), out.stdout


# ----------------------------------------------------------------- FASTGEN_LOG_LEVEL

@pytest.fixture
def fresh_logger(monkeypatch):
    """The fastgen logger as a process that has not logged yet sees it; restored."""
    logger = logging.getLogger("fastgen")
    level, handlers = logger.level, list(logger.handlers)
    monkeypatch.setattr(_log, "_set_up", False)
    logger.setLevel(logging.NOTSET)
    monkeypatch.delenv("FASTGEN_QUIET", raising=False)
    yield logger
    logger.handlers[:] = handlers
    logger.setLevel(level)


@pytest.mark.parametrize("value, level", [("+5", logging.INFO), ("-5", logging.INFO),
                                          ("1e3", logging.INFO), ("warn ing", logging.INFO),
                                          ("\u0663\u0660", logging.INFO)])
def test_a_malformed_log_level_is_ignored_and_named(fresh_logger, monkeypatch, caplog,
                                                    value, level):
    monkeypatch.setenv("FASTGEN_LOG_LEVEL", value)
    with caplog.at_level(logging.NOTSET, logger="fastgen"):
        fresh_logger.setLevel(logging.NOTSET)  # caplog set one; a fresh process has none
        assert _log.get_logger().level == level
        _log.get_logger()  # once only
    lines = [r.getMessage() for r in caplog.records if r.name == "fastgen"]
    assert lines == [f"fastgen: the environment variable FASTGEN_LOG_LEVEL={value!r} is "
                     f"neither a level name (DEBUG, INFO, WARNING, ERROR, CRITICAL) nor a "
                     f"non-negative whole number; ignored"]
    assert caplog.records[-1].levelno == logging.WARNING


@pytest.mark.parametrize("value, level", [("25", 25), ("0", 0), ("error", logging.ERROR),
                                          (" DEBUG ", logging.DEBUG)])
def test_a_well_formed_log_level_is_taken_silently(fresh_logger, monkeypatch, caplog,
                                                   value, level):
    monkeypatch.setenv("FASTGEN_LOG_LEVEL", value)
    with caplog.at_level(logging.NOTSET, logger="fastgen"):
        fresh_logger.setLevel(logging.NOTSET)
        assert _log.get_logger().level == level
    assert [r for r in caplog.records if r.name == "fastgen"] == []
