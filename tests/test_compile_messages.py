"""The compile line: once per model family and process, naming the family, the public
function and numba's cache folder (a second family compiling later gets its own line)."""

import logging
import types

import pytest

from fastgen import _log


def _event(module="fastgen.kernels.moments", cache="/some/numba/cache"):
    py_func = types.SimpleNamespace(__module__=module)
    dispatcher = types.SimpleNamespace(py_func=py_func,
                                       _cache=types.SimpleNamespace(_cache_path=cache))
    return types.SimpleNamespace(data={"dispatcher": dispatcher})


# Public functions as fastgen's modules define them: frames whose globals name a
# fastgen module and whose code is a public name (what the listener looks for).
_API = """
def fit_gda():
    _log._on_compile_start(ev)

def fit_logistic():
    _log._on_compile_start(ev)

def predict_proba(params):
    _log._on_compile_start(ev)

def helper():
    _log._on_compile_start(ev)
"""


@pytest.fixture
def api(monkeypatch):
    monkeypatch.setattr(_log, "_announced", set())
    namespace = {"__name__": "fastgen.scoring", "_log": _log, "ev": _event()}
    exec(compile(_API, "<fastgen api>", "exec"), namespace)
    return types.SimpleNamespace(**namespace)


class LogisticParams:  # stands for fastgen's (the family is read from the type's name)
    pass


class GDAParams:
    pass


def _messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "fastgen"]


def test_one_line_per_family_naming_it_and_the_cache(api, caplog):
    with caplog.at_level(logging.INFO, logger="fastgen"):
        api.fit_gda()
        api.fit_gda()
        api.predict_proba(GDAParams())  # the same family: no second line
        api.fit_logistic()
        api.predict_proba(LogisticParams())
    assert _messages(caplog) == [
        "fastgen: compiling kernels for GDA (fit_gda) on first use (cached in "
        "/some/numba/cache for later runs)",
        "fastgen: compiling kernels for logistic regression (fit_logistic) on first use "
        "(cached in /some/numba/cache for later runs)"]


def test_scoring_names_the_family_of_its_params(api, caplog):
    with caplog.at_level(logging.INFO, logger="fastgen"):
        api.predict_proba(LogisticParams())
    assert _messages(caplog) == [
        "fastgen: compiling kernels for logistic regression (predict_proba) on first use "
        "(cached in /some/numba/cache for later runs)"]


def test_compiles_outside_fastgen_or_of_other_code_say_nothing(api, caplog):
    with caplog.at_level(logging.INFO, logger="fastgen"):
        _log._on_compile_start(_event())  # no fastgen function on the stack
        ns = {"__name__": "fastgen.scoring", "_log": _log,
              "ev": _event(module="numpy_user_code")}
        exec(compile(_API, "<fastgen api>", "exec"), ns)
        ns["fit_gda"]()  # a compile of the user's own numba code
    assert _messages(caplog) == []


def test_message_without_family_or_cache():
    assert _log.compile_message("fit_gda") == (
        "fastgen: compiling kernels for fit_gda on first use (cached for later runs)")
