"""First-contact errors: each says what is wrong and what to do, and doing it works.

* ``fit_gda(covariance="per_class")`` on a singular class suggests a ``reg`` on the
  data's scale (following the advice fits a model whose posteriors are not all 0 or 1);
* a class whose rows all weigh 0 is refused by every fit, naming the class;
* Firth's singular Fisher information names the collinear columns;
* a malformed ``FASTGEN_SMALL_VALUES`` raises, naming the variable and its value.
"""

import hashlib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
from fastgen import SingularCovarianceError

ROOT = Path(__file__).resolve().parents[1]
_REG = re.compile(r"reg=([0-9.e+-]+) makes the fit succeed")


def _follow_reg_advice(X, y, **kw):
    """The per-class fit's error, then a fit that follows its advice: the suggested
    reg, on standardised features where the message says to standardise them.
    Returns (message, params, the transformation of X the advice asked for)."""
    with pytest.raises(SingularCovarianceError) as info:
        fastgen.fit_gda(X, y, "per_class", **kw)
    msg = str(info.value)
    reg = float(_REG.search(msg).group(1))
    assert 0 < reg <= 1, msg
    if "standardise the features" in msg:
        sd = X.astype(np.float64).std(axis=0)
        transform = lambda Z: (Z / sd).astype(X.dtype)  # noqa: E731
    else:
        transform = lambda Z: Z  # noqa: E731
    kw = dict(kw, reg=reg)
    return msg, fastgen.fit_gda(transform(X), y, "per_class", **kw), transform


@pytest.mark.parametrize("scale", [1e-4, 1.0, 30.0, 1e5])
@pytest.mark.parametrize("K, d", [(3, 2), (4, 3), (6, 5)])
def test_one_row_per_class_reg_advice_gives_graded_posteriors(scale, K, d):
    # one row per class: no class has any spread; a reg that merely passes the
    # checks (1e-14) gave posteriors of exactly 0 or 1 everywhere
    rng = np.random.default_rng(K * d)
    X = rng.standard_normal((K, d)) * scale + 3.0 * scale
    y = np.arange(K)
    msg, p, transform = _follow_reg_advice(X, y)
    assert "rank 0 of" in msg
    fresh = transform(rng.standard_normal((500, d)) * scale + 3.0 * scale)
    top = fastgen.predict_proba(p, fresh).max(axis=1)
    assert np.median(top) < 0.999, (msg, np.median(top))
    # the posteriors on the classes' own rows still pick their class
    np.testing.assert_array_equal(fastgen.predict(p, transform(X)), y)


@pytest.mark.parametrize("scale", [1e-6, 1e-2, 1.0, 1e3, 1e6])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("unbiased", [False, True])
def test_collinear_class_reg_advice_succeeds(scale, dtype, unbiased):
    rng = np.random.default_rng(3)
    n, d = 300, 4
    y = np.arange(n) % 3
    X = rng.standard_normal((n, d)) + y[:, None]
    m = y == 1
    X[m, 3] = X[m, 0] - 2.0 * X[m, 1]  # class 1 spans 3 of 4 directions
    X = (X * scale + 10.0 * scale).astype(dtype)
    before = hashlib.sha256(X.tobytes()).hexdigest()
    msg, p, transform = _follow_reg_advice(X, y, unbiased=unbiased)
    assert "class 1" in msg and "rank 3 of 4" in msg, msg
    assert hashlib.sha256(X.tobytes()).hexdigest() == before  # the caller's X untouched
    P = fastgen.predict_proba(p, transform(X))
    assert np.all(np.isfinite(P))
    # a model on the data's scale: most rows are classified as the pooled model does
    ref = fastgen.predict(fastgen.fit_gda(X, y, "pooled"), X)
    assert np.mean(fastgen.predict(p, transform(X)) == ref) > 0.8


def test_reg_advice_when_reg_was_too_small():
    X, y = np.random.default_rng(0).standard_normal((6, 3)), np.arange(6) % 3
    X[y == 2] = X[y == 2][0]  # class 2: identical rows
    with pytest.raises(SingularCovarianceError, match=r"reg=1e-30 is not enough") as info:
        fastgen.fit_gda(X, y, "per_class", reg=1e-30)
    reg = float(_REG.search(str(info.value)).group(1))
    assert 1e-30 < reg <= 1
    fastgen.fit_gda(X, y, "per_class", reg=reg)


# ---------------------------------------------------------------- zero-weight classes

def _fits():
    def gda(kind):
        return lambda X, y, **kw: fastgen.fit_gda(X, y, kind, **kw)

    return {
        **{f"gda-{k}": (gda(k), "dense") for k in ("pooled", "per_class", "diagonal",
                                                   "pooled_diagonal")},
        "gaussian_nb": (fastgen.fit_gaussian_nb, "dense"),
        "multinomial_nb": (fastgen.fit_multinomial_nb, "counts"),
        "complement_nb": (fastgen.fit_complement_nb, "counts"),
        "bernoulli_nb": (fastgen.fit_bernoulli_nb, "binary"),
        "categorical_nb": (fastgen.fit_categorical_nb, "categories"),
        "logistic": (fastgen.fit_logistic, "dense"),
        "firth": (lambda X, y, **kw: fastgen.fit_logistic(X, y, penalty="firth", **kw),
                  "dense"),
    }


def _data(kind, n, rng, sparse):
    X = {"dense": lambda: rng.standard_normal((n, 4)),
         "counts": lambda: rng.poisson(2.0, (n, 6)).astype(float),
         "binary": lambda: (rng.random((n, 6)) < 0.4).astype(float),
         "categories": lambda: rng.integers(0, 3, (n, 5)).astype(float)}[kind]()
    return sp.csr_matrix(X) if sparse and kind != "dense" else X


@pytest.mark.parametrize("family, sparse", [(f, s) for f, (_, kind) in _fits().items()
                                             for s in ([False] if kind == "dense"
                                                       else [False, True])])
@pytest.mark.parametrize("labels", ["int", "str"])
def test_a_class_of_zero_total_weight_is_refused_by_every_fit(family, labels, sparse):
    fit, kind = _fits()[family]
    rng = np.random.default_rng(0)
    n = 90
    codes = np.arange(n) % 3
    y = codes if labels == "int" else np.array(["a", "b", "c"])[codes]
    X = _data(kind, n, rng, sparse)
    w = np.where(codes == 1, 0.0, rng.uniform(0.5, 2.0, n))
    digest = hashlib.sha256(w.tobytes() + np.asarray(y).tobytes()).hexdigest()
    name = "1" if labels == "int" else "'b'"
    with pytest.raises(ValueError, match=rf"class {name} has zero total weight \(sample_"
                                          rf"weight is 0 on all its rows\).*drop its rows"):
        fit(X, y, sample_weight=w)
    assert hashlib.sha256(w.tobytes() + np.asarray(y).tobytes()).hexdigest() == digest
    # a small positive weight is a class like any other
    w[codes == 1] = 1e-3
    fit(X, y, sample_weight=w)


def test_statistics_keep_zero_weight_classes():
    # counts and moments are statistics to merge (classes declared ahead, batches
    # that lack one): they accept a class without weight; the fits refuse it
    rng = np.random.default_rng(1)
    X = rng.poisson(2.0, (30, 4)).astype(float)
    y = np.arange(30) % 3
    w = np.where(y == 2, 0.0, 1.0)
    counts = fastgen.nb_counts(X, y, "multinomial", sample_weight=w)
    np.testing.assert_array_equal(counts.class_count, [10.0, 10.0, 0.0])
    m = fastgen.class_moments(X, y, sample_weight=w)
    np.testing.assert_array_equal(m.counts, [10.0, 10.0, 0.0])
    with pytest.raises(ValueError, match=r"class 2 has zero total weight"):
        fastgen.gda_from_moments(m)


# ------------------------------------------------------ Firth's singular information

@pytest.mark.parametrize("K, correction", [(2, None), (2, "flic"), (2, "flac"), (3, None)])
@pytest.mark.parametrize("offset", [0.0, 100.0])
def test_firth_singular_information_names_the_columns(K, offset, correction):
    rng = np.random.default_rng(K)
    n = 240
    X = rng.standard_normal((n, 4)) + offset
    X[:, 2] = X[:, 0] + 2.0 * X[:, 1]
    y = (np.arange(n) % K) if K > 2 else (X[:, 0] + rng.standard_normal(n) > offset)
    y = y.astype(int)
    with pytest.raises(np.linalg.LinAlgError) as info:
        fastgen.fit_logistic(X, y, penalty="firth", correction=correction)
    msg = str(info.value)
    assert "Fisher information is singular" in msg
    assert "rank 4 of 5 columns" in msg
    assert re.search(r"'x3' \(X\[:, 2\]\) = 1·'x1' \(X\[:, 0\]\) \+ 2·'x2' \(X\[:, 1\]\)",
                     msg), msg
    # the combination it names holds, and dropping the named column fits
    fastgen.fit_logistic(np.delete(X, 2, axis=1), y, penalty="firth",
                         correction=correction)


def test_firth_singular_information_uses_the_frames_names():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    n = 200
    df = pd.DataFrame(rng.standard_normal((n, 3)), columns=["age", "dose", "weight"])
    df["const"] = 4.0  # a constant column duplicates the intercept
    y = (df["age"] + rng.standard_normal(n) > 0).astype(int).to_numpy()
    with pytest.raises(np.linalg.LinAlgError, match=r"'const' = 4·'intercept'"):
        fastgen.fit_logistic(df, y, penalty="firth")


# ------------------------------------------------------------- FASTGEN_SMALL_VALUES

_CALL = """
import numpy as np, fastgen
X = np.random.default_rng(0).standard_normal((40, 3)); y = np.arange(40) % 2
try:
    fastgen.fit_gda(X, y)
except ValueError as exc:
    print("ValueError:", exc)
else:
    from fastgen import _small
    print("threshold", _small.SMALL_VALUES)
"""


def _with_env(value):
    env = dict(os.environ, FASTGEN_SMALL_VALUES=value)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(_CALL)], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("value", ["abc", "-1", "1.5", "nan", "1e5x", "-inf"])
def test_malformed_small_values_raise_naming_the_variable(value):
    line = _with_env(value)
    assert line.startswith("ValueError:"), line
    assert f"FASTGEN_SMALL_VALUES={value!r}" in line and "non-negative whole number" in line


@pytest.mark.parametrize("value, threshold", [("0", 0), ("250", 250), ("1e5", 100_000),
                                              (" 7 ", 7), ("", 100_000),
                                              ("inf", sys.maxsize)])
def test_well_formed_small_values_set_the_threshold(value, threshold):
    assert _with_env(value) == f"threshold {threshold}"


@pytest.mark.parametrize("fit", ["fit_gda", "fit_gaussian_nb", "fit_multinomial_nb",
                                 "fit_bernoulli_nb", "fit_categorical_nb", "fit_logistic"])
def test_dask_fits_refuse_a_class_of_zero_total_weight(fit):
    da = pytest.importorskip("dask.array")
    import dask

    import fastgen.dask as fd

    rng = np.random.default_rng(4)
    n = 90
    y = np.arange(n) % 3
    X = np.floor(np.abs(rng.standard_normal((n, 4))) * 2.0)
    w = np.where(y == 1, 0.0, 1.0)
    chunk = lambda a: da.from_array(a, chunks=30)  # noqa: E731
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match=r"class 1 has zero total weight"):
            getattr(fd, fit)(chunk(X), chunk(y), sample_weight=chunk(w))
