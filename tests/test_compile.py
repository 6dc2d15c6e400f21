"""Compiling on first use says so, once; ``fastgen compile`` fills the cache ahead.

Each run is a fresh interpreter whose ``NUMBA_CACHE_DIR`` is a temporary directory:
numba (0.60-0.68) looks there before the ``__pycache__`` beside the sources, so the runs
do not depend on the repository's cache (checked: the cold run writes its index files
there).  numba's ``"numba:compile"`` event, which fires only when numba compiles (never
for a cache hit), tells what each run compiled.
"""

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastgen

ROOT = str(Path(fastgen.__file__).resolve().parent.parent)
LINE = "fastgen: compiling kernels for "

# Gaussian naive Bayes on typical data (other shapes than the warm-up's), sent to the
# kernels whatever their size (FASTGEN_SMALL_VALUES=0, see _env), recording the fastgen
# kernels numba compiles.  argv[1] picks how the program sets up logging.
_SCRIPT = r"""
import json, logging, sys
import numpy as np
from numba.core import event
import fastgen

mode = sys.argv[1]
if mode == "logger-level":
    logging.getLogger("fastgen").setLevel(logging.WARNING)
elif mode == "basic-config":
    logging.basicConfig(format="LOGGED %(levelname)s %(name)s: %(message)s",
                        stream=sys.stdout)
compiled = []

class Recorder(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        if f.__module__.startswith("fastgen"):
            compiled.append(f"{f.__module__}.{f.__qualname__}")

    def on_end(self, ev):
        pass

event.register("numba:compile", Recorder())
rng = np.random.default_rng(0)
for n, d, K, weighted in ((300, 4, 3, False), (2000, 7, 2, True), (500, 24, 6, False),
                          (9000, 5, 3, False)):
    y = np.arange(n) % K
    X = rng.standard_normal((n, d)) + y[:, None]
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    p = fastgen.fit_gaussian_nb(X, y, sample_weight=w)
    fastgen.predict_proba(p, X)
    fastgen.predict(p, X)
print(json.dumps({"compiled": compiled}))
"""


def _env(cache, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "FASTGEN_QUIET", "FASTGEN_LOG_LEVEL")}
    # small inputs take numpy passes that compile nothing: these runs go to the kernels
    env.update(NUMBA_CACHE_DIR=str(cache), FASTGEN_SMALL_VALUES="0", **extra)
    return env


def _run(cache, mode="plain", **extra):
    res = subprocess.run([sys.executable, "-W", "error", "-c", _SCRIPT, mode],
                         env=_env(cache, **extra), cwd=ROOT, capture_output=True,
                         text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    return out["compiled"], res.stderr, res.stdout


def _lines(text):
    return [s for s in text.splitlines() if LINE in s]


def _index_files(cache):
    return sorted(Path(cache).rglob("*.nbi"))


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A cache filled by a cold run (the run's compiled kernels and stderr kept)."""
    cache = tmp_path_factory.mktemp("warm") / "numba-cache"
    cache.mkdir()
    compiled, err, _ = _run(cache)
    return cache, compiled, err


def test_cold_run_says_so_once_and_warm_run_is_silent(warm_cache):
    cache, compiled, err = warm_cache
    assert compiled, "the cold run compiled nothing: not an empty cache"
    assert _index_files(cache), "numba did not write into NUMBA_CACHE_DIR"
    # the cache folder named is numba's directory for the kernels, inside the cache
    (line,) = _lines(err)
    assert line.startswith(
        f"fastgen: compiling kernels for Gaussian naive Bayes (fit_gaussian_nb) on first "
        f"use (cached in {cache}{os.sep}kernels_") and line.endswith(" for later runs)"), err
    compiled, err, _ = _run(cache)
    assert compiled == []
    assert _lines(err) == [], err[-2000:]


def _cache_missing_a_kernel(warm, dest):
    """A copy of the warm cache without the entries of the (small, serial) label-coding
    kernel, so that the next run compiles that kernel only."""
    shutil.copytree(warm, dest)
    removed = [p for p in _index_files(dest) if p.name.startswith("labels.int_label_codes")]
    assert removed, sorted(p.name for p in _index_files(dest))
    for p in removed:
        p.unlink()
    return dest


@pytest.mark.parametrize("mode, env, shown", [
    ("plain", {}, "stderr"),
    ("plain", {"FASTGEN_QUIET": "1"}, None),
    ("plain", {"FASTGEN_LOG_LEVEL": "WARNING"}, None),
    ("logger-level", {}, None),
    ("basic-config", {}, "logging"),
])
def test_message_is_silenced_by_level_or_environment(warm_cache, tmp_path, mode, env,
                                                      shown):
    cache = _cache_missing_a_kernel(warm_cache[0], tmp_path / "cache")
    compiled, err, out = _run(cache, mode, **env)
    assert compiled, "nothing compiled: the run cannot show whether the line appears"
    if shown == "stderr":
        assert len(_lines(err)) == 1 and _lines(out) == [], err[-2000:]
    elif shown == "logging":  # the program's own handler prints it, fastgen's does not
        assert _lines(err) == [], err[-2000:]
        assert [s.split(":", 1)[0] for s in _lines(out)] == ["LOGGED INFO fastgen"], out
    else:
        assert _lines(err) == [] and _lines(out) == [], err[-2000:]


_CURVE = r"""
import sys
import numpy as np
from fastgen.cli.curve import run_curve

rng = np.random.default_rng(0)
y = np.arange(120) % 3
X = rng.standard_normal((120, 4)) + y[:, None]
run_curve(X, y, models=["nb"], splits=4, sizes=[20, 40], test_size=0.3, seed=0,
          jobs=int(sys.argv[1]), progress=True)
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_curve_progress_bar_shows_the_compile_status(warm_cache, tmp_path, jobs):
    """The bar's status says what compiles; the line is printed once, also when worker
    processes compile."""
    cache = _cache_missing_a_kernel(warm_cache[0], tmp_path / "cache")
    res = subprocess.run([sys.executable, "-W", "error", "-c", _CURVE, str(jobs)],
                         env=_env(cache), cwd=ROOT, capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    pieces = res.stderr.replace("\r", "\n").splitlines()
    message = (f"compiling kernels for Gaussian naive Bayes (fit_gaussian_nb) on first use "
               f"(cached in {cache}{os.sep}kernels_")
    assert sum(p.startswith(f"fastgen: {message}") for p in pieces) == 1, res.stderr
    assert any(p.startswith("splits:") and f", {message}" in p for p in pieces), res.stderr
    bars = [p for p in pieces if p.startswith("splits:")]
    assert "compiling" not in bars[-1], res.stderr  # cleared once a split finished


def test_fastgen_compile_fills_an_empty_cache(tmp_path):
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    cmd = [sys.executable, "-W", "error", "-m", "fastgen", "compile", "--family",
           "gaussian_nb", "--dtype", "float64", "--jobs", "1"]
    res = subprocess.run(cmd, env=_env(cache), cwd=ROOT, capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"numba cache: {cache}" in res.stdout, res.stdout
    assert "gaussian_nb  float64" in res.stdout, res.stdout
    assert "[1/1] gaussian_nb float64" in res.stderr, res.stderr  # progress line
    assert _lines(res.stderr) == [], res.stderr  # the workers' notices are not shown
    compiled, err, _ = _run(cache)
    assert compiled == [], "typical calls compiled kernels the warm-up did not"
    assert _lines(err) == [], err[-2000:]
    # a second fill finds everything cached
    res = subprocess.run(cmd + ["--no-progress"], env=_env(cache), cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "all cached" in res.stdout and res.stderr == "", (res.stdout, res.stderr)


@pytest.mark.parametrize("kwargs, match", [
    ({"families": ["gda", "lda"]}, "unknown family 'lda'"),
    ({"families": []}, "no family chosen"),
    ({"dtypes": "float16"}, "unknown dtype 'float16'"),
    ({"jobs": 0}, "jobs must be a positive integer"),
    ({"jobs": 1.5}, "jobs must be a positive integer"),
])
def test_compile_rejects_bad_choices(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fastgen.compile(**kwargs)


def test_compile_is_resolved_lazily_but_not_star_exported():
    assert fastgen.compile is fastgen._compile.compile
    assert "compile" in dir(fastgen) and "compile" not in fastgen.__all__


@pytest.fixture
def _log():
    from fastgen import _log

    return _log


@pytest.fixture
def fresh_logger(monkeypatch, _log):
    """The fastgen logger as a process that has not logged yet sees it; restored."""
    logger = logging.getLogger("fastgen")
    level, handlers = logger.level, list(logger.handlers)
    monkeypatch.setattr(_log, "_set_up", False)
    logger.setLevel(logging.NOTSET)
    yield logger
    logger.handlers[:] = handlers
    logger.setLevel(level)


@pytest.mark.parametrize("env, level", [
    ({}, logging.INFO),
    ({"FASTGEN_LOG_LEVEL": "debug"}, logging.DEBUG),
    ({"FASTGEN_LOG_LEVEL": "ERROR"}, logging.ERROR),
    ({"FASTGEN_LOG_LEVEL": "25"}, 25),
    ({"FASTGEN_LOG_LEVEL": "no-such-level"}, logging.INFO),
    ({"FASTGEN_QUIET": "1"}, logging.WARNING),
    ({"FASTGEN_QUIET": "yes", "FASTGEN_LOG_LEVEL": "DEBUG"}, logging.DEBUG),
    ({"FASTGEN_QUIET": "0"}, logging.INFO),
])
def test_logger_level_from_environment(fresh_logger, _log, monkeypatch, env, level):
    logger = fresh_logger
    for name in ("FASTGEN_QUIET", "FASTGEN_LOG_LEVEL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert _log.get_logger().level == level
    # a level the program set is kept
    logger.setLevel(logging.CRITICAL)
    monkeypatch.setattr(_log, "_set_up", False)
    assert _log.get_logger().level == logging.CRITICAL


def test_announce_logs_once_and_calls_each_context_once(_log, monkeypatch, caplog):
    monkeypatch.setattr(_log, "_announced", set())
    seen = []
    gda, gda2 = (_log.compile_message(n, "GDA") for n in ("fit_gda", "predict"))
    logistic = _log.compile_message("fit_logistic", "logistic regression")
    with caplog.at_level(logging.INFO, logger="fastgen"):
        with _log.on_compile(seen.append):
            _log.announce(gda, "GDA")
            _log.announce(gda2, "GDA")  # the same family: not again
        with _log.on_compile(seen.append, log=False):
            _log.announce(logistic, "logistic regression")  # not logged here
        _log.announce(logistic, "logistic regression")
        _log.announce(logistic, "logistic regression")
    assert [r.getMessage() for r in caplog.records if r.name == "fastgen"] == [
        gda, logistic]
    assert seen == [gda, logistic]


# ------------------------------------------------------------ fewer specialisations
# Each numba specialisation of a kernel costs its own compile on first use: these tests
# pin what a call compiles (or dispatches to), not only what it returns.

_LABEL_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "bool"]


@pytest.mark.parametrize("dtype", _LABEL_DTYPES)
@pytest.mark.parametrize("read_only", [False, True])
def test_integer_labels_of_every_dtype_share_one_label_kernel(monkeypatch, dtype,
                                                             read_only):
    from fastgen import _small
    from fastgen._validation import check_y
    from fastgen.kernels.labels import int_label_codes

    rng = np.random.default_rng(len(dtype))
    hi = 2 if dtype == "bool" else 9
    y = rng.integers(0, hi, size=300).astype(dtype)
    y.flags.writeable = not read_only
    monkeypatch.setattr(_small, "SMALL_VALUES", -1)  # the kernel, not numpy
    classes, codes = check_y(y)
    ref_classes, ref_codes = np.unique(y, return_inverse=True)
    assert classes.dtype == y.dtype
    np.testing.assert_array_equal(classes, ref_classes)
    np.testing.assert_array_equal(codes, ref_codes.astype(np.int32))
    # one specialisation (int64, C-contiguous, writeable) serves every label dtype
    assert {str(sig[0]) for sig in int_label_codes.signatures} == {"array(int64, 1d, C)"}


@pytest.mark.parametrize("K, d", [(2, 3), (2, 30), (3, 30), (4, 40)])
def test_inference_pass_compiles_only_the_kernel_of_its_class_count(monkeypatch, K, d):
    # the dense pass (not tiles) of a binary call runs the binary kernel only, a
    # multinomial call the multinomial one: neither compiles the other's per-group code
    import fastgen.kernels.inference as inference_kernels
    from fastgen import _small

    monkeypatch.setattr(_small, "SMALL_VALUES", -1)  # the kernels, not numpy
    calls = []
    for name in ("inference_pass_binary", "inference_pass_multinomial", "inference_pass"):
        kernel = getattr(inference_kernels, name)
        monkeypatch.setattr(inference_kernels, name,
                            lambda *a, _k=kernel, _n=name: calls.append(_n) or _k(*a))
    rng = np.random.default_rng(d)
    n = 400
    y = np.arange(n) % K
    X = rng.standard_normal((n, d)) + 0.3 * y[:, None]
    params = fastgen.fit_logistic(X, y)
    res = fastgen.logistic_inference(params, X, y)
    assert np.all(np.isfinite(res.bse))
    want = "inference_pass_binary" if K == 2 else "inference_pass_multinomial"
    assert calls and set(calls) == {want}, calls
