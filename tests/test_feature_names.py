"""Column names are checked everywhere, by scikit-learn's rule.

Params fitted on a data frame whose column names are all str keep them
(``feature_names``); scoring a frame whose columns differ in name or order is a
ValueError naming the columns; names on one side only (an array scored after a frame
fit, or a frame after an array fit) warn with scikit-learn's words.  The same rule runs
through every family, and the names travel through the mergeable statistics and the
params files.
"""

import dataclasses
import warnings
from functools import partial

import numpy as np
import pytest
from reference import make_blobs, require

import fastgen

pd = require("pandas")

COLS = ["sepal", "petal", "stem", "leaf"]
SCORERS = {
    "predict": fastgen.predict,
    "predict_proba": fastgen.predict_proba,
    "predict_log_proba": fastgen.predict_log_proba,
    "joint_log_likelihood": fastgen.joint_log_likelihood,
}


def _gauss():
    X, y = make_blobs(90, 4, 3, seed=21)
    return X, y


def _counts():
    rng = np.random.default_rng(22)
    y = np.arange(90) % 3
    X = rng.poisson(1.0 + y[:, None] * np.array([0.2, 1.0, 0.1, 2.0])).astype(float)
    return X, y


def _binary():
    X, y = make_blobs(80, 4, 2, seed=23, spread=0.7)
    return X, y


# family -> (fit(X, y), data)
FAMILIES = {
    **{f"gda-{c}": (lambda X, y, c=c: fastgen.fit_gda(X, y, c), _gauss)
       for c in ("pooled", "per_class", "diagonal", "pooled_diagonal")},
    "gaussian_nb": (fastgen.fit_gaussian_nb, _gauss),
    "bernoulli_nb": (lambda X, y: fastgen.fit_bernoulli_nb(X, y, binarize=1.0), _counts),
    "multinomial_nb": (fastgen.fit_multinomial_nb, _counts),
    "complement_nb": (fastgen.fit_complement_nb, _counts),
    "categorical_nb": (fastgen.fit_categorical_nb, _counts),
    "logistic-binary": (fastgen.fit_logistic, _binary),
    "logistic-multinomial": (lambda X, y: fastgen.fit_logistic(X, y, l2=1.0), _gauss),
    "logistic-firth": (lambda X, y: fastgen.fit_logistic(X, y, penalty="firth"), _binary),
}


pl = require("polars")


class _Frames:
    """The operations the tests need, for one data frame library."""

    def __init__(self, make, select, rename):
        self.make, self.select, self.rename = make, select, rename


# pandas and polars side by side (issue 42: polars lost its names when the
# interchange protocol went; every frame follows one rule)
FRAMES = {
    "pandas": _Frames(lambda X: pd.DataFrame(X, columns=COLS),
                      lambda df, cols: df[list(cols)],
                      lambda df, old, new: df.rename(columns={old: new})),
    "polars": _Frames(lambda X: pl.DataFrame(X, schema=COLS),
                      lambda df, cols: df.select(list(cols)),
                      lambda df, old, new: df.rename({old: new})),
}


@pytest.fixture(scope="module")
def fitted():
    """(library, family) -> (params fitted on a frame, params fitted on the array,
    frame, y)."""
    out = {}
    for name, (fit, data) in FAMILIES.items():
        X, y = data()
        q = fit(X, y)
        for lib, frames in FRAMES.items():
            df = frames.make(X)
            out[lib, name] = (fit(df, y), q, df, y)
    return out


@pytest.mark.parametrize("lib", FRAMES)
@pytest.mark.parametrize("family", FAMILIES)
def test_a_frame_fit_keeps_the_names_and_scores_as_the_array_fit(family, lib, fitted):
    p, q, df, _ = fitted[lib, family]
    assert p.feature_names == tuple(COLS)
    assert q.feature_names is None
    assert p == dataclasses.replace(q, feature_names=tuple(COLS))  # bitwise the same fit
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matching names: no warning
        for score in SCORERS.values():
            np.testing.assert_array_equal(score(p, df), score(q, df.to_numpy()))


@pytest.mark.parametrize("scorer", SCORERS)
@pytest.mark.parametrize("lib", FRAMES)
@pytest.mark.parametrize("family", FAMILIES)
def test_other_names_or_order_raise_naming_the_columns(family, lib, scorer, fitted):
    p, _, df, _ = fitted[lib, family]
    frames = FRAMES[lib]
    score = SCORERS[scorer]
    owner = type(p).__name__
    with pytest.raises(ValueError, match=rf"are those {owner} was fitted with in another "
                                         r"order \(column 0 \(0-based\) is 'leaf' where "
                                         r"the fit had 'sepal'"):
        score(p, frames.select(df, COLS[::-1]))
    with pytest.raises(ValueError, match=r"missing \['petal'\]; unexpected \['petals'\]"):
        score(p, frames.rename(df, "petal", "petals"))
    with pytest.raises(ValueError, match=r"missing \['leaf'\]; .*X\[list\(params.feat"):
        score(p, frames.select(df, COLS[:3]))


@pytest.mark.parametrize("lib", FRAMES)
@pytest.mark.parametrize("family", FAMILIES)
def test_names_on_one_side_warn_as_scikit_learn(family, lib, fitted):
    p, q, df, _ = fitted[lib, family]
    owner = type(p).__name__
    for score in SCORERS.values():
        with pytest.warns(UserWarning, match=f"^X does not have valid feature names, but "
                                             f"{owner} was fitted with feature names$"):
            score(p, df.to_numpy())
        with pytest.warns(UserWarning, match=f"^X has feature names, but {owner} was "
                                             f"fitted without feature names$"):
            score(q, df)


@pytest.mark.parametrize("family", FAMILIES)
def test_names_are_saved_without_being_told_and_compared(family, fitted, tmp_path):
    p, q, _, _ = fitted["pandas", family]
    path = fastgen.save_params(tmp_path / "named.npz", p)
    r = fastgen.load_params(path)
    assert r.feature_names == tuple(COLS) and r == p
    assert fastgen.load_feature_names(path) == (tuple(COLS), None)
    assert fitted["polars", family][0] == p  # the same model from either library
    # names take part in equality: the same numbers without names are another model
    assert fastgen.load_params(fastgen.save_params(tmp_path / "plain.npz", q)) == q
    assert p != q
    # the keyword still works, and must agree with the params' own names
    fastgen.save_params(tmp_path / "told.npz", p, feature_names=COLS, target_name="t")
    assert fastgen.load_feature_names(tmp_path / "told.npz") == (tuple(COLS), "t")
    with pytest.raises(ValueError, match="differ from the names the params were fitted"):
        fastgen.save_params(tmp_path / "bad.npz", p, feature_names=COLS[::-1])


class _ProtocolFrame:
    """A frame known only by a protocol: the interchange protocol's column names, or
    a ``columns`` attribute with a 2-D shape, with ``__array__`` for the values."""

    def __init__(self, X, how):
        self._X, self.shape = X, X.shape
        if how == "columns":
            self.columns = list(COLS)
        else:
            names = list(COLS)
            self.__dataframe__ = lambda *a, **k: type(
                "Interchange", (), {"column_names": lambda self: names})()

    def __array__(self, dtype=None, copy=None):
        return self._X if dtype is None else self._X.astype(dtype)


@pytest.mark.parametrize("how", ["columns", "__dataframe__"])
def test_any_frame_that_exposes_its_names_follows_the_rule(how):
    X, y = _gauss()
    p = fastgen.fit_gda(_ProtocolFrame(X, how), y)
    assert p.feature_names == tuple(COLS)
    with pytest.raises(ValueError, match="another order"):
        fastgen.predict(p, pd.DataFrame(X[:, ::-1], columns=COLS[::-1]))


@pytest.mark.parametrize("lib", FRAMES)
def test_frame_labels_and_weights_convert_as_arrays(lib):
    # y and sample_weight as the library's series, X of mixed column dtypes
    X, y = _gauss()
    w = np.linspace(0.5, 2.0, X.shape[0])
    series = pd.Series if lib == "pandas" else pl.Series
    labels = np.array(["a", "b", "c"])[y]
    mixed = X.copy()
    mixed[:, 1] = np.round(mixed[:, 1])
    df = FRAMES[lib].make(mixed)
    if lib == "pandas":
        df["petal"] = df["petal"].astype(np.int64)
    else:
        df = df.with_columns(pl.col("petal").cast(pl.Int64))
    logistic = partial(fastgen.fit_logistic, l2=1.0)
    for fit in (fastgen.fit_gda, fastgen.fit_gaussian_nb, logistic):
        p = fit(df, series(labels), sample_weight=series(w))
        q = fit(mixed, labels, sample_weight=w)
        assert p == dataclasses.replace(q, feature_names=tuple(COLS))


def test_unnamed_params_files_keep_format_2(tmp_path):
    import json

    X, y = _gauss()
    for p, version in ((fastgen.fit_gda(X, y), 2),
                       (fastgen.fit_gda(pd.DataFrame(X, columns=COLS), y), 3)):
        path = fastgen.save_params(tmp_path / f"v{version}.npz", p)
        with np.load(path) as z:
            header = json.loads(str(z["__fastgen__"][()]))
        assert header["version"] == version
        assert ("feature_names" in header["fields"]) == (version == 3)


@pytest.mark.parametrize("columns, names", [
    ([0, 1, 2, 3], None),                               # integer columns: no names
    (["a", "b", "a", "c"], None),                       # repeated: not usable names
    (np.array(["a", "b", "c", "d"]), ("a", "b", "c", "d")),  # np.str_ count as str
])
def test_what_counts_as_names(columns, names):
    X, y = _gauss()
    df = pd.DataFrame(X, columns=columns)
    p = fastgen.fit_gda(df, y)
    assert p.feature_names == names
    fastgen.predict(p, df)  # the same frame scores without a warning


def test_mixed_str_and_other_column_names_are_refused():
    X, y = _gauss()
    df = pd.DataFrame(X, columns=["a", "b", 2, 3])
    with pytest.raises(ValueError, match=r"column names of the types \['int', 'str'\]"):
        fastgen.fit_gda(df, y)


@pytest.mark.parametrize("lib", FRAMES)
def test_names_travel_through_moments_and_counts(lib):
    X, y = _gauss()
    C, yc = _counts()
    df, dc = FRAMES[lib].make(X), FRAMES[lib].make(C)
    for kind in ("pooled", "per_class", "diagonal"):
        m = fastgen.merge_moments(fastgen.class_moments(df[:40], y[:40], kind=kind),
                                  fastgen.class_moments(df[40:], y[40:], kind=kind))
        assert m.feature_names == tuple(COLS)
        assert fastgen.gda_from_moments(m, "pooled_diagonal").feature_names == tuple(COLS)
    m = fastgen.class_moments(df, y, kind="diagonal")
    assert fastgen.gaussian_nb_from_moments(m).feature_names == tuple(COLS)
    for model, D, yy in (("gaussian", df, y), ("multinomial", dc, yc),
                         ("complement", dc, yc), ("bernoulli", dc, yc)):
        c = fastgen.merge_counts(fastgen.nb_counts(D[:40], yy[:40], model),
                                 fastgen.nb_counts(D[40:], yy[40:], model,
                                                   sample_weight=np.ones(len(yy) - 40)))
        assert c.feature_names == tuple(COLS)
        p = fastgen.nb_from_counts(c)
        assert p.feature_names == tuple(COLS)
        with pytest.raises(ValueError, match="another order"):
            fastgen.predict(p, FRAMES[lib].select(D, COLS[::-1]))


def test_merging_statistics_with_other_names_is_an_error():
    X, y = _gauss()
    a, b = pd.DataFrame(X[:45], columns=COLS), pd.DataFrame(X[45:], columns=COLS)
    for kind in ("pooled", "diagonal"):
        ma = fastgen.class_moments(a, y[:45], kind=kind)
        for other, msg in ((b[b.columns[::-1]], "the same names in another order"),
                           (b.rename(columns={"leaf": "root"}),
                            r"only in the first \['leaf'\]; only in the second \['root'\]")):
            with pytest.raises(ValueError, match=f"different feature names: {msg}"):
                fastgen.merge_moments(ma, fastgen.class_moments(other, y[45:], kind=kind))
        with pytest.warns(UserWarning, match="with feature names and moments without"):
            m = fastgen.merge_moments(ma, fastgen.class_moments(X[45:], y[45:], kind=kind))
        assert m.feature_names == tuple(COLS)
    C, yc = _counts()
    ca = fastgen.nb_counts(pd.DataFrame(C[:45], columns=COLS), yc[:45])
    cb = fastgen.nb_counts(pd.DataFrame(C[45:], columns=COLS[::-1]), yc[45:])
    with pytest.raises(ValueError, match="cannot merge counts with different feature names"):
        fastgen.merge_counts(ca, cb)


def test_logistic_inference_and_irls_step_check_the_names(fitted):
    p, _, df, y = fitted["pandas", "logistic-binary"]
    res = fastgen.logistic_inference(p, df, y)
    assert res.feature_names == ("const", *COLS)
    with pytest.raises(ValueError, match="another order"):
        fastgen.logistic_inference(p, df[df.columns[::-1]], y)
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        fastgen.logistic_inference(p, df.to_numpy(), y)
    # a frame after an array fit only labels the table (docs/guide/inputs.rst)
    assert fastgen.logistic_inference(fitted["pandas", "logistic-binary"][1], df, y).feature_names \
        == ("const", *COLS)
    q = fastgen.irls_step(p, df, y)
    assert q.feature_names == tuple(COLS)
    with pytest.raises(ValueError, match="another order"):
        fastgen.irls_step(p, df[df.columns[::-1]], y)


def test_lda_transform_checks_the_names(fitted):
    p, _, df, _ = fitted["pandas", "gda-pooled"]
    Z = fastgen.lda_transform(p, df)
    np.testing.assert_array_equal(Z, fastgen.lda_transform(fitted["pandas", "gda-pooled"][1],
                                                           df.to_numpy()))
    with pytest.raises(ValueError, match="another order"):
        fastgen.lda_transform(p, df[df.columns[::-1]])


def test_sklearn_adapters_warn_once_not_twice():
    from fastgen.sklearn import GaussianNB, LogisticRegression, QuadraticDiscriminantAnalysis

    X, y = _gauss()
    df = pd.DataFrame(X, columns=COLS)
    for est in (GaussianNB(), QuadraticDiscriminantAnalysis(), LogisticRegression()):
        est.fit(df, y)
        est.predict(df)  # no warning (the suite turns warnings into errors)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.predict(X)
        assert [str(w.message) for w in caught] == [
            f"X does not have valid feature names, but {type(est).__name__} was fitted "
            f"with feature names"]
        with pytest.raises(ValueError, match="Feature names must be in the same order"):
            est.predict(df[df.columns[::-1]])


def test_dask_scoring_warns_once():
    da = require("dask.array")
    from fastgen import dask as fdask

    X, y = _gauss()
    p = fastgen.fit_gda(pd.DataFrame(X, columns=COLS), y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fdask.predict_proba(p, da.from_array(X, chunks=(20, 4))).compute()
    assert len(caught) == 1 and "does not have valid feature names" in str(caught[0].message)
    np.testing.assert_allclose(out, fastgen.predict_proba(fastgen.fit_gda(X, y), X),
                               rtol=1e-12)
