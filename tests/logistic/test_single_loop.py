"""One Newton loop: every logistic fit runs ``newton_solve``, and no other module
iterates Newton steps."""

import ast
import pathlib
import warnings

import numpy as np
import pytest
from reference import require

import fastgen
from fastgen.logistic import newton

PACKAGE = pathlib.Path(fastgen.__file__).parent
SOLVES = {"cho_solve", "solve", "lstsq", "cholesky_solve", "pcg", "direction", "step"}
MOVES = {"evaluate", "line_search"}


def _loops_that_step(path):
    """(function, line) of every loop that evaluates an objective (or searches a line)
    and solves for a step in the same body: a Newton iteration."""
    found = []
    tree = ast.parse(path.read_text())
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for loop in ast.walk(fn):
            if not isinstance(loop, (ast.For, ast.While)):
                continue
            calls = {c.func.attr if isinstance(c.func, ast.Attribute) else
                     getattr(c.func, "id", "") for c in ast.walk(loop)
                     if isinstance(c, ast.Call)}
            if calls & MOVES and calls & SOLVES:
                found.append((fn.name, loop.lineno))
    return found


def test_no_module_but_newton_iterates_newton_steps():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "newton.py":
            continue
        loops = _loops_that_step(path)
        if loops:
            offenders[str(path.relative_to(PACKAGE))] = loops
    assert not offenders, offenders
    assert _loops_that_step(PACKAGE / "logistic" / "newton.py")  # the check can fail


def _data(K=2, n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.argmax(X @ rng.normal(size=(3, K)) + rng.gumbel(size=(n, K)), axis=1)
    return X, y


FITS = {
    "plain": lambda X, y: fastgen.fit_logistic(X, y),
    "ridge": lambda X, y: fastgen.fit_logistic(X, y, l2=1.0),
    "multinomial": lambda X, y: fastgen.fit_logistic(X, np.r_[y[:-20], np.arange(20) % 3]),
    "firth": lambda X, y: fastgen.fit_logistic(X, y, penalty="firth"),
    "firth multinomial": lambda X, y: fastgen.fit_logistic(
        X, np.r_[y[:-20], np.arange(20) % 3], penalty="firth"),
    "flic": lambda X, y: fastgen.fit_logistic(X, y, penalty="firth", correction="flic"),
    "flac": lambda X, y: fastgen.fit_logistic(X, y, penalty="firth", correction="flac"),
    "profile": lambda X, y: fastgen.logistic_inference(
        fastgen.fit_logistic(X, y, penalty="firth"), X, y, ci="profile"),
    "irls_step": lambda X, y: fastgen.irls_step(fastgen.fit_logistic(X, y), X, y),
}


@pytest.mark.parametrize("name", sorted(FITS))
def test_every_fit_runs_newton_solve(monkeypatch, name):
    calls = []
    original = newton.newton_solve

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    # every caller imported the name: patch it where it is used
    from fastgen.logistic import api, penalised, ridge

    for module in (newton, api, penalised, ridge):
        if hasattr(module, "newton_solve"):
            monkeypatch.setattr(module, "newton_solve", counting)
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
        FITS[name](X, y)
    assert calls


def test_dask_fit_runs_newton_solve(monkeypatch):
    da = require("dask.array")
    from fastgen import dask as fgdask
    from fastgen.logistic import api

    calls = []
    original = api.newton_solve
    monkeypatch.setattr(api, "newton_solve",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    X, y = _data()
    fgdask.fit_logistic(da.from_array(X, chunks=(50, 3)), da.from_array(y, chunks=50))
    assert calls
