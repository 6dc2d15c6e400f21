"""The statsmodels user's workflow (issue 46): formulas, labelled results, the summary
object, tests of linear hypotheses, likelihood-ratio tests, predictions with intervals,
odds ratios and marginal effects, each against statsmodels (``smf.logit`` /
``smf.mnlogit`` on its shipped data sets, with categorical terms and interactions), and
the penalised likelihood-ratio test of Firth fits against logistf's definition
transcribed here (a direct maximisation by scipy)."""

import hashlib
import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.special
import scipy.stats
from reference import require

import fastgen

pd = require("pandas")
require("formulaic")
sm = require("statsmodels.api")
smf = require("statsmodels.formula.api")
import fastgen.formula as ff  # noqa: E402

TOL = 1e-6
FAIR = "affair ~ age + yrs_married + C(religious) * rate_marriage + children"
ANES = "PID ~ logpopul + age * C(vote) + TVnews"


def rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def digest(df):
    return hashlib.sha256(pd.util.hash_pandas_object(df, index=True).to_numpy()).hexdigest()


@pytest.fixture(scope="module")
def fair():
    d = sm.datasets.fair.load_pandas().data.copy()
    d["affair"] = (d["affairs"] > 0).astype(float)
    d["faith"] = d["religious"].map({1.0: "none", 2.0: "low", 3.0: "mid", 4.0: "high"})
    d["kids"] = d["children"] > 1
    return d


@pytest.fixture(scope="module")
def fair_fits(fair):
    return ff.logit(FAIR, fair), smf.logit(FAIR, fair).fit(disp=0, tol=1e-12)


@pytest.fixture(scope="module")
def anes():
    return sm.datasets.anes96.load_pandas().data


@pytest.fixture(scope="module")
def anes_fits(anes):
    ref = smf.mnlogit(ANES, anes).fit(disp=0, method="newton", maxiter=100, tol=1e-12)
    return ff.mnlogit(ANES, anes, tol=1e-12), ref


# ------------------------------------------------------------------------ formulas


@pytest.mark.parametrize("formula", [
    FAIR,
    "affair ~ C(religious):C(occupation) + age",
    "affair ~ np.log(age) + C(educ) + yrs_married:age - 1",
    "affair ~ C(rate_marriage, Treatment(reference=5)) + age * yrs_married"
    " + C(occupation):children",
    # a string column, a boolean one (patsy's kids[T.True]), a quoted level
    "affair ~ faith * yrs_married + kids",
    'affair ~ C(faith, Treatment("none")) + np.log(yrs_married + 1) + I(age ** 2)',
])
def test_formula_terms_and_estimates_match_statsmodels(fair, formula):
    res = ff.logit(formula, fair)
    ref = smf.logit(formula, fair).fit(disp=0, tol=1e-12, maxiter=200)
    assert list(res.params.index) == list(ref.params.index)
    assert list(res.feature_names) == list(ref.model.exog_names)
    assert rel(res.params, ref.params) < TOL
    assert rel(res.bse, ref.bse) < TOL
    assert res.dep_name == "affair" and res.nobs == ref.nobs
    assert abs(res.llf - ref.llf) < 1e-8 * abs(ref.llf)


def test_formula_drops_missing_rows_as_statsmodels_and_leaves_data_alone(fair):
    d = fair.copy()
    d.loc[d.index[::7], "age"] = np.nan
    d.loc[d.index[3::11], "religious"] = np.nan
    d.loc[d.index[5::13], "affair"] = np.nan
    before = digest(d)
    w = np.arange(d.shape[0]) % 3 + 1.0
    res = ff.logit(FAIR, d, sample_weight=w)
    ref = smf.logit(FAIR, d).fit(disp=0, tol=1e-12)
    assert digest(d) == before
    keep = ref.model.data.row_labels  # the rows statsmodels kept
    assert res.nobs == w[d.index.get_indexer(keep)].sum()
    unweighted = ff.logit(FAIR, d)
    assert unweighted.nobs == ref.nobs and rel(unweighted.params, ref.params) < TOL
    # the weights follow the rows kept: the fit equals one on the rows repeated
    rep = d.loc[keep].loc[d.loc[keep].index.repeat(w[d.index.get_indexer(keep)].astype(int))]
    assert rel(res.params, ff.logit(FAIR, rep).params) < TOL


def test_formula_left_side_keeps_its_labels(fair, fair_fits):
    d = fair.assign(had=np.where(fair["affair"] > 0, "yes", "no"))
    res = ff.logit(FAIR.replace("affair ~", "had ~"), d)
    assert list(res.classes) == ["no", "yes"] and res.dep_name == "had"
    assert rel(res.params, fair_fits[1].params) < TOL


def test_formula_keywords_reach_the_fit_and_the_inference(fair):
    with pytest.raises(ValueError, match="'- 1'"):
        ff.logit(FAIR, fair, fit_intercept=False)
    firth = ff.logit(FAIR, fair, penalty="firth")
    ref = smf.logit(FAIR, fair)  # statsmodels' design (patsy), fitted by Firth here
    X = pd.DataFrame(ref.exog[:, 1:], columns=ref.exog_names[1:])
    direct = fastgen.logistic_inference(
        fastgen.fit_logistic(X, ref.endog, penalty="firth"), X, ref.endog)
    assert firth.method == "Firth" and rel(firth.params, direct.params) < TOL
    assert rel(firth.bse, direct.bse) < TOL
    groups = fair["occupation"].to_numpy()
    cl = ff.logit(FAIR, fair, cov_type="cluster", groups="occupation")
    cl2 = ff.logit(FAIR, fair, cov_type="cluster", groups=groups)
    sref = smf.logit(FAIR, fair).fit(disp=0, tol=1e-12, cov_type="cluster",
                                     cov_kwds={"groups": groups})
    assert rel(cl.bse, sref.bse) < TOL and rel(cl2.bse, sref.bse) < TOL
    with pytest.raises(ValueError, match="unknown keyword"):
        ff.logit(FAIR, fair, cov="HC0")
    with pytest.raises(ValueError, match="mnlogit"):
        ff.logit("occupation ~ age", fair)
    with pytest.raises(ValueError, match="groups="):
        ff.logit(FAIR, fair, cov_type="cluster", groups="nope")


def test_mnlogit_labels_match_statsmodels(anes_fits):
    res, ref = anes_fits
    assert isinstance(res.params, pd.DataFrame)
    assert list(res.params.index) == list(ref.params.index)
    assert list(res.params.columns) == list(ref.params.columns)
    assert rel(res.params.to_numpy(), ref.params.to_numpy()) < TOL
    assert rel(res.bse.to_numpy(), ref.bse.to_numpy()) < TOL
    ci, rci = res.conf_int(), ref.conf_int()
    assert list(ci.index) == [(str(a), b) for a, b in rci.index]
    assert list(ci.columns) == list(rci.columns) and rel(ci, rci) < TOL
    assert list(ci.index.names) == list(rci.index.names)


# ------------------------------------------------------------------ labelled results


def test_dataframe_input_gives_labelled_results_and_arrays_stay_arrays():
    d = sm.datasets.spector.load_pandas().data
    X, y = d[["GPA", "TUCE", "PSI"]], d["GRADE"]
    res = fastgen.logistic_inference(fastgen.fit_logistic(X, y), X, y)
    ref = sm.Logit(y, sm.add_constant(X)).fit(disp=0, tol=1e-12)
    for name in ["params", "bse", "tvalues", "pvalues"]:
        got, want = getattr(res, name), getattr(ref, name)
        assert isinstance(got, pd.Series) and list(got.index) == list(want.index)
        assert rel(got, want) < TOL, name
    ci = res.conf_int()
    assert list(ci.columns) == [0, 1] and list(ci.index) == list(ref.conf_int().index)
    assert rel(ci, ref.conf_int()) < TOL
    arr = fastgen.logistic_inference(fastgen.fit_logistic(X.to_numpy(), y.to_numpy()),
                                     X.to_numpy(), y.to_numpy())
    assert all(isinstance(getattr(arr, n), np.ndarray)
               for n in ["params", "bse", "tvalues", "pvalues"])
    assert isinstance(arr.conf_int(), np.ndarray) and arr.dep_name == "y"
    # every user of the fields takes both kinds alike
    assert np.allclose(res.to_frame().to_numpy(), arr.to_frame().to_numpy(), rtol=1e-12,
                       atol=0)
    def numbers(summary):
        return [ln.split()[1:] for ln in str(summary).splitlines()[11:]]

    assert numbers(res.summary()) == numbers(arr.summary())


# ------------------------------------------------------------------------- summary


def test_summary_object_names_y_and_renders_text_latex_html(fair_fits):
    res, ref = fair_fits
    s = res.summary()
    text = str(s)
    assert text == s.as_text() == repr(s)
    assert "Dep. Variable:" in text and text.split("Dep. Variable:")[1].split()[0] == "affair"
    assert len(s.tables) == 2 and "Logit Regression Results" in str(s.tables[0])
    assert [row[0] for row in s.tables[1].data] == list(ref.params.index)
    html = s._repr_html_()
    assert html == s.as_html() and html.count("<table") == 2 and "C(religious)[T.2.0]" in html
    latex = s.as_latex()
    assert latex.count("\\begin{tabular}") == 2 and "C(religious){[}T.2.0{]}" in latex
    # the numbers in the table are statsmodels' (4 decimals)
    for name in ["age", "C(religious)[T.3.0]:rate_marriage"]:
        line = next(ln for ln in text.splitlines() if ln.startswith(name + " "))
        assert f"{ref.params[name]:.4f}" in line and f"{ref.bse[name]:.4f}" in line
    assert "GRADE2" in str(res.summary(yname="GRADE2"))
    odds = str(res.summary(odds_ratios=True))
    line = next(ln for ln in odds.splitlines() if ln.startswith("age "))
    assert f"{np.exp(ref.params['age']):.4f}" in line and "odds ratio" in odds


def test_series_name_and_cli_target_name_y():
    d = sm.datasets.spector.load_pandas().data
    X, y = d[["GPA", "TUCE", "PSI"]].to_numpy(), d["GRADE"]
    res = fastgen.logistic_inference(fastgen.fit_logistic(X, y.to_numpy()), X, y)
    assert res.dep_name == "GRADE" and isinstance(res.params, np.ndarray)


def test_cli_summary_names_the_target(tmp_path, capsys):
    from fastgen.cli import main

    d = sm.datasets.spector.load_pandas().data
    path = tmp_path / "spector.csv"
    d.to_csv(path, index=False)
    assert main(["fit", "--model", "logistic", "--summary", str(path),
                 "--target", "GRADE"]) == 0
    out = capsys.readouterr().out
    assert out.split("Dep. Variable:")[1].split()[0] == "GRADE"


def test_odds_ratio_frame(fair_fits):
    res, ref = fair_fits
    df = res.to_frame(odds_ratios=True)
    assert rel(df["odds ratio"], np.exp(ref.params)) < TOL
    assert rel(df["OR [0.025"], np.exp(ref.conf_int()[0])) < TOL
    assert rel(df["OR 0.975]"], np.exp(ref.conf_int()[1])) < TOL
    assert rel(df["coef"], ref.params) < TOL


# ---------------------------------------------------------------- linear hypotheses


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0", "HC1", "cluster"])
def test_t_and_wald_tests_match_statsmodels(fair, cov_type):
    groups = fair["occupation"].to_numpy()
    kw = {"cov_type": cov_type}
    skw = {}
    if cov_type == "cluster":
        kw["groups"] = groups
        skw = {"cov_type": "cluster", "cov_kwds": {"groups": groups}}
    elif cov_type != "nonrobust":
        skw = {"cov_type": cov_type}
    res = ff.logit(FAIR, fair, **kw)
    ref = smf.logit(FAIR, fair).fit(disp=0, tol=1e-12, **skw)
    for c in ["age = yrs_married", "age = yrs_married, children = 0",
              "C(religious)[T.2.0] + C(religious)[T.3.0] = 1"]:
        t, u = res.t_test(c), ref.t_test(c)
        assert rel(t.summary_frame(), u.summary_frame()) < TOL, c
        assert list(t.summary_frame().columns) == list(u.summary_frame().columns)
        row = str(t.summary()).splitlines()[2].split()
        assert row[0] == "c0" and abs(float(row[1]) - u.effect[0]) <= 5e-5 + 1e-3 * abs(u.effect[0])
        w, v = res.wald_test(c), ref.wald_test(c, scalar=True)
        assert rel(w.statistic, v.statistic) < TOL and rel(w.pvalue, v.pvalue) < TOL
        assert w.df_denom == v.df_denom
    R = np.zeros((2, len(res.params)))
    R[0, 1], R[0, 2], R[1, 5] = 1.0, -1.0, 1.0
    q = np.array([0.0, 0.5])
    t, u = res.t_test((R, q)), ref.t_test((R, q))
    assert rel(t.tvalue, u.tvalue) < TOL and rel(t.conf_int(), u.conf_int()) < TOL
    assert rel(res.wald_test(R).statistic, ref.wald_test(R, scalar=True).statistic) < TOL
    # predictions and margins use the same covariance
    new = fair.iloc[:20]
    assert rel(res.get_prediction(new).summary_frame(),
               ref.get_prediction(new).summary_frame()) < TOL
    assert rel(res.get_margeff(at="mean").margeff_se, ref.get_margeff(at="mean").margeff_se) < TOL


def test_multinomial_hypotheses_match_statsmodels(anes_fits):
    res, ref = anes_fits
    names = res.param_names
    assert names[:2] == ["Intercept[1]", "C(vote)[T.1.0][1]"]
    R = np.zeros((2, len(names)))
    R[0, names.index("age[2]")], R[0, names.index("age[3]")] = 1.0, -1.0
    R[1, names.index("TVnews[6]")] = 1.0
    t, u = res.t_test("age[2] = age[3], TVnews[6] = 0"), ref.t_test(R)
    assert rel(t.summary_frame(), u.summary_frame()) < TOL
    assert rel(res.wald_test(R).statistic, ref.wald_test(R, scalar=True).statistic) < TOL


def test_constraint_errors_name_the_coefficients(fair_fits):
    res, _ = fair_fits
    with pytest.raises(ValueError, match="coefficients' names"):
        res.t_test("agee = 0")
    with pytest.raises(ValueError, match="one column per coefficient"):
        res.wald_test(np.eye(3))


def test_t_test_on_arrays_uses_default_names():
    d = sm.datasets.spector.load_pandas().data
    X, y = d[["GPA", "TUCE", "PSI"]].to_numpy(), d["GRADE"].to_numpy()
    res = fastgen.logistic_inference(fastgen.fit_logistic(X, y), X, y)
    ref = sm.Logit(y, sm.add_constant(X)).fit(disp=0, tol=1e-12)
    assert rel(res.t_test("x1 + x3 = 0").tvalue, ref.t_test("x1 + x3 = 0").tvalue) < TOL


# -------------------------------------------------------------------------- LR tests


def test_lr_test_of_nested_ml_fits(fair):
    small = "affair ~ age + yrs_married + rate_marriage"
    full, restricted = ff.logit(FAIR, fair), ff.logit(small, fair)
    sfull = smf.logit(FAIR, fair).fit(disp=0, tol=1e-12)
    srest = smf.logit(small, fair).fit(disp=0, tol=1e-12)
    test = fastgen.logistic.inference.lr_test(restricted, full)
    stat = 2.0 * (sfull.llf - srest.llf)
    df = sfull.df_model - srest.df_model
    assert rel(test.statistic, stat) < TOL and test.df_diff == df
    assert rel(test.pvalue, scipy.stats.chi2.sf(stat, df)) < TOL
    with pytest.raises(ValueError, match="fewer coefficients"):
        fastgen.logistic.inference.lr_test(full, restricted)


def _penalised_loglik(beta, X, y):
    """logistf's penalised log-likelihood l(β) + ½ log det I(β), transcribed."""
    eta = X @ beta
    pi = scipy.special.expit(eta)
    info = X.T @ ((pi * (1 - pi))[:, None] * X)
    return np.sum(y * eta - np.logaddexp(0.0, eta)) + 0.5 * np.linalg.slogdet(info)[1]


def test_firth_lr_test_is_logistfs_nested_penalised_test():
    d = sm.datasets.spector.load_pandas().data
    d = d.assign(GRADE=d["GRADE"].astype(float))
    full = ff.logit("GRADE ~ GPA + TUCE + PSI", d, penalty="firth")
    restricted = ff.logit("GRADE ~ GPA", d, penalty="firth")
    test = fastgen.logistic.inference.lr_test(restricted, full)
    X = np.column_stack([np.ones(len(d)), d[["GPA", "TUCE", "PSI"]].to_numpy()])
    y = d["GRADE"].to_numpy()
    # the full fit's penalised likelihood is logistf's
    assert abs(full.llf - _penalised_loglik(full.params.to_numpy(), X, y)) < 1e-8
    # the restricted maximum in the full design (TUCE and PSI fixed at 0), by scipy
    free = [0, 1]
    opt = scipy.optimize.minimize(
        lambda b: -_penalised_loglik(np.r_[b, 0.0, 0.0], X, y),
        restricted.params.to_numpy(), method="Nelder-Mead",
        options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000})
    assert len(free) == 2
    stat = 2.0 * (full.llf + opt.fun)
    assert abs(test.statistic - stat) < 1e-6 * max(1.0, stat) and test.df_diff == 2
    # not the naive difference of the two fits' own penalised likelihoods
    assert abs(2.0 * (full.llf - restricted.llf) - stat) > 1e-3


# ---------------------------------------------------------------------- predictions


def test_get_prediction_matches_statsmodels(fair, fair_fits):
    res, ref = fair_fits
    new = fair.iloc[[0, 5, 17, 400, 6000]].copy()
    new.index = ["a", "b", "c", "d", "e"]
    got, want = res.get_prediction(new).summary_frame(), ref.get_prediction(new).summary_frame()
    assert list(got.columns) == ["predicted", "se", "ci_lower", "ci_upper"]
    assert list(got.columns) == list(want.columns) and list(got.index) == list(want.index)
    assert rel(got, want) < TOL
    got = res.get_prediction().summary_frame(alpha=0.1)
    want = ref.get_prediction().summary_frame(alpha=0.1)
    assert rel(got, want) < TOL
    assert np.all((got["ci_lower"] >= 0) & (got["ci_upper"] <= 1))
    assert rel(res.predict(new), ref.predict(new)) < 1e-10


def test_multinomial_prediction_is_the_delta_method(anes, anes_fits):
    res, ref = anes_fits
    new = anes.iloc[:4]
    pred = res.get_prediction(new)
    assert rel(pred.predicted, ref.predict(new)) < TOL
    # the delta method by central differences of the probabilities in the coefficients
    X = np.asarray(ref.model.exog[:4])
    beta = res.params.to_numpy()

    def probs(b):
        eta = np.column_stack([np.zeros(4), X @ b.reshape(beta.shape, order="F")])
        return scipy.special.softmax(eta, axis=1)

    flat = beta.ravel(order="F")
    G = np.empty((4, 7, flat.size))
    for k in range(flat.size):
        h = 1e-6 * max(1.0, abs(flat[k]))
        e = np.zeros_like(flat)
        e[k] = h
        G[:, :, k] = (probs(flat + e) - probs(flat - e)) / (2 * h)
    se = np.sqrt(np.einsum("nkq,qr,nkr->nk", G, res.cov_params, G))
    assert rel(pred.se, se) < 1e-5
    frame = pred.summary_frame()
    assert frame.shape == (28, 4)
    assert np.all((frame["ci_lower"] >= 0) & (frame["ci_upper"] <= 1))
    assert np.all((frame["ci_lower"] <= frame["predicted"])
                  & (frame["predicted"] <= frame["ci_upper"]))


# ------------------------------------------------------------------ marginal effects


@pytest.mark.parametrize("at", ["overall", "mean", "median", "zero"])
def test_margeff_matches_statsmodels(fair_fits, at):
    res, ref = fair_fits
    for method in ["dydx", "eyex", "dyex", "eydx"]:
        for dummy, count in [(False, False), (True, True)]:
            if (dummy or count) and (method in ("eyex", "dyex") or at in ("median", "zero")):
                with pytest.raises(ValueError, match="discrete changes"):
                    res.get_margeff(at=at, method=method, dummy=dummy, count=count)
                continue
            m = res.get_margeff(at=at, method=method, dummy=dummy, count=count)
            s = ref.get_margeff(at=at, method=method, dummy=dummy, count=count)
            assert rel(m.margeff, s.margeff) < TOL, (method, dummy)
            assert rel(m.margeff_se, s.margeff_se) < TOL, (method, dummy)
    got, want = res.get_margeff(at=at).summary_frame(), ref.get_margeff(at=at).summary_frame()
    assert list(got.columns) == list(want.columns) and list(got.index) == list(want.index)
    assert rel(got, want) < TOL
    text = str(res.get_margeff(at=at).summary())
    line = next(ln for ln in text.splitlines() if ln.startswith("yrs_married "))
    assert f"{want.loc['yrs_married', 'dy/dx']:.4f}" in line
    assert text.split("At:")[1].split()[0] == at


def test_multinomial_margeff_matches_statsmodels(anes_fits):
    res, ref = anes_fits
    # statsmodels 0.15's MNLogit fails for eyex and dyex (a broadcasting error)
    for at, method in [("overall", "dydx"), ("mean", "eydx"), ("median", "dydx"),
                       ("zero", "eydx")]:
        m = res.get_margeff(at=at, method=method)
        s = ref.get_margeff(at=at, method=method)
        assert m.margeff.shape == s.margeff.shape
        assert rel(m.margeff, s.margeff) < TOL and rel(m.margeff_se, s.margeff_se) < TOL
    # the elasticity at the mean row is dP_k/dx_j · x_j / P_k
    xbar = np.asarray(ref.model.exog, dtype=float).mean(0)[1:]
    P = res.get_prediction(None).predicted  # noqa: F841 - exercises the fitted rows
    Pbar = ref.model.predict(ref.params.to_numpy(), np.r_[1.0, xbar][None, :])[0]
    ey = res.get_margeff(at="mean", method="eyex").margeff
    dy = ref.get_margeff(at="mean", method="dydx").margeff
    assert rel(ey, dy * xbar[:, None] / Pbar[None, :]) < TOL
    got, want = res.get_margeff().summary_frame(), ref.get_margeff().summary_frame()
    assert [tuple(map(str, i)) for i in got.index] == [tuple(map(str, i)) for i in want.index]
    assert rel(got, want) < TOL


def test_multinomial_dummy_margeff_is_the_discrete_change(anes_fits):
    """statsmodels 0.15's MNLogit fails with dummy=True (a shape error in its
    Jacobian), so the definition is checked directly: the average change of the
    probabilities from x_j = 0 to 1, its se by central differences."""
    res, ref = anes_fits
    X = np.asarray(ref.model.exog, dtype=float)
    j = list(ref.model.exog_names).index("C(vote)[T.1.0]")
    beta = res.params.to_numpy()

    def change(flat):
        b = flat.reshape(beta.shape, order="F")
        X0, X1 = X.copy(), X.copy()
        X0[:, j], X1[:, j] = 0.0, 1.0

        def probs(Z):
            return scipy.special.softmax(np.column_stack([np.zeros(len(Z)), Z @ b]), axis=1)

        return (probs(X1) - probs(X0)).mean(0)

    flat = beta.ravel(order="F")
    G = np.empty((7, flat.size))
    for k in range(flat.size):
        h = 1e-6 * max(1.0, abs(flat[k]))
        e = np.zeros_like(flat)
        e[k] = h
        G[:, k] = (change(flat + e) - change(flat - e)) / (2 * h)
    m = res.get_margeff(dummy=True)
    row = list(m.names).index("C(vote)[T.1.0]")
    assert rel(m.margeff[row], change(flat)) < 1e-10
    assert rel(m.margeff_se[row], np.sqrt(np.diag(G @ res.cov_params @ G.T))) < 1e-5


def test_margeff_with_frequency_weights_equals_repeated_rows():
    d = sm.datasets.spector.load_pandas().data
    X, y = d[["GPA", "TUCE", "PSI"]], d["GRADE"]
    w = np.arange(len(d)) % 3 + 1.0
    res = fastgen.logistic_inference(fastgen.fit_logistic(X, y, sample_weight=w), X, y,
                                     sample_weight=w)
    rep = d.loc[d.index.repeat(w.astype(int))]
    Xr, yr = rep[["GPA", "TUCE", "PSI"]], rep["GRADE"]
    ref = sm.Logit(yr, sm.add_constant(Xr)).fit(disp=0, tol=1e-12)
    for at in ["overall", "mean", "median"]:
        m, s = res.get_margeff(at=at), ref.get_margeff(at=at)
        assert rel(m.margeff, s.margeff) < TOL and rel(m.margeff_se, s.margeff_se) < TOL


# ------------------------------------------------------------------------- adapters


def test_sklearn_adapter_names_columns_in_warnings_and_errors():
    require("sklearn")
    from sklearn.datasets import load_breast_cancer

    from fastgen.sklearn import LogisticRegression

    X = load_breast_cancer(as_frame=True).data[["mean radius", "mean texture"]]
    y = (X["mean radius"] > 14).astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = LogisticRegression(C=np.inf).fit(X, y)
    msgs = [str(w.message) for w in caught if "separation" in str(w.message)]
    assert msgs and "+mean radius" in msgs[0] and "x1" not in msgs[0]
    assert "+mean radius" in est._inference_error
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.predict(X)  # no feature-name warning from the params
    X2 = load_breast_cancer(as_frame=True).data[["mean texture", "mean smoothness"]]
    est = LogisticRegression(C=np.inf, tol=1e-10).fit(X2, y)
    assert list(est.inference_.params.index) == ["const", "mean texture", "mean smoothness"]
    ref = sm.Logit(y, sm.add_constant(X2)).fit(disp=0, tol=1e-12)
    assert rel(est.inference_.params, ref.params) < TOL


def test_flic_refuses_what_needs_the_full_covariance():
    d = sm.datasets.spector.load_pandas().data
    flic = ff.logit("GRADE ~ GPA + TUCE + PSI", d, penalty="firth", correction="flic")
    for call in (lambda: flic.get_prediction(d.iloc[:2]), flic.get_margeff):
        with pytest.raises(ValueError, match="FLIC"):
            call()
    assert "FLIC" in str(flic.summary())
    # tests that leave out the intercept, or test it alone, are defined
    firth = ff.logit("GRADE ~ GPA + TUCE + PSI", d, penalty="firth")
    t, u = flic.t_test("GPA = PSI"), firth.t_test("GPA = PSI")  # FLIC keeps Firth's slopes
    assert rel(t.tvalue, u.tvalue) < 1e-10
    assert rel(flic.t_test("Intercept = 0").tvalue, flic.tvalues["Intercept"]) < 1e-12
    with pytest.raises(ValueError, match="FLIC"):
        flic.wald_test("Intercept = GPA")


def test_predictions_and_margins_without_an_intercept():
    d = sm.datasets.spector.load_pandas().data
    X, y = d[["GPA", "TUCE", "PSI"]].to_numpy(), d["GRADE"].to_numpy()
    res = fastgen.logistic_inference(fastgen.fit_logistic(X, y, fit_intercept=False), X, y)
    ref = sm.Logit(y, X).fit(disp=0, tol=1e-12)
    assert not res.fit_intercept
    assert rel(res.get_prediction(X[:5]).summary_frame(),
               ref.get_prediction(X[:5]).summary_frame()) < TOL
    m, s = res.get_margeff(at="mean", method="eyex"), ref.get_margeff(at="mean", method="eyex")
    assert rel(m.margeff, s.margeff) < TOL and rel(m.margeff_se, s.margeff_se) < TOL
    with pytest.raises(ValueError, match="3 columns"):
        res.get_prediction(X[:5, :2])
    X0 = X.copy()  # atexog fixes a column of a copy, not of the caller's X
    m, s = res.get_margeff(at="mean", atexog={2: 1.0}), ref.get_margeff(at="mean", atexog={2: 1.0})
    assert rel(m.margeff, s.margeff) < TOL and rel(m.margeff_se, s.margeff_se) < TOL
    assert np.array_equal(X, X0)


# ------------------------------------------- the order, names and data of statsmodels'
# (patsy's) formulas: powers, products, nesting, transforms, the caller's names


@pytest.mark.parametrize("formula", [
    "affair ~ (age + yrs_married + rate_marriage)**2",
    "affair ~ (age + yrs_married + rate_marriage)**3",
    "affair ~ (age + C(religious) + rate_marriage)**2",
    "affair ~ (age + yrs_married + rate_marriage)**2 - age:yrs_married",
    "affair ~ age + (yrs_married + rate_marriage)**2",
    "affair ~ 0 + (age + rate_marriage)**2",
    "affair ~ (C(religious) + C(occupation) + age)**2",
    "affair ~ age * yrs_married + rate_marriage",
    "affair ~ age + yrs_married:rate_marriage + children",
    "affair ~ rate_marriage:age + C(religious) + age",
    "affair ~ (age + yrs_married) * C(religious)",
    "affair ~ C(religious) / age",
    "affair ~ age / (yrs_married + rate_marriage)",
    # names as written (.5, 1e-1), boolean I() as patsy's categorical [T.True]
    "affair ~ np.log(age + .5) + I(yrs_married * 1e-1) + C(occupation, Treatment(3))",
    "affair ~ I(age > 30) * yrs_married",
    "affair ~ rate_marriage + age:I(yrs_married > 10)",  # both levels, as patsy
    # a term removed and added again goes last; factors within a term as patsy met them
    "affair ~ age + (age + yrs_married)**2 - age + rate_marriage:C(religious) + age",
    "affair ~ (C(religious) + age / C(religious))**2 / yrs_married",
    # contrasts and splines whose labels formulaic writes otherwise
    "affair ~ C(rate_marriage, Poly) + C(religious, Diff) * yrs_married",
    "affair ~ bs(age, df=4) + yrs_married",
])
def test_term_order_and_names_match_statsmodels(fair, formula):
    res = ff.logit(formula, fair, tol=1e-12)
    ref = smf.logit(formula, fair).fit(disp=0, tol=1e-12, maxiter=200)
    assert list(res.params.index) == list(ref.params.index)
    # positional use refers to the same coefficients
    assert rel(np.asarray(res.params), np.asarray(ref.params)) < TOL
    assert rel(res.cov_params, np.asarray(ref.cov_params())) < TOL
    R = np.eye(len(ref.params))[[1, -1]]
    assert rel(res.wald_test(R).statistic, ref.wald_test(R, scalar=True).statistic) < TOL


def test_comparison_outside_I_is_refused_with_the_fix(fair):
    with pytest.raises(ValueError, match=r"Unknown operator '>'.*inside I\(\)"):
        ff.logit("affair ~ age + (age > 30)", fair)


def test_formula_sees_the_callers_names(fair):
    import numpy  # noqa: F401 - the formula's numpy.sqrt

    def centred(x):
        return x - 30.0

    K = 10.0
    z = np.asarray(fair["children"]) ** 2 * 0.5 + 1.0  # noqa: F841 - the formula's z
    for formula in ["affair ~ centred(age)", "affair ~ age + z", "affair ~ I(age / K)",
                    "affair ~ numpy.sqrt(age)"]:
        res = ff.logit(formula, fair, tol=1e-12)
        ref = smf.logit(formula, fair).fit(disp=0, tol=1e-12, maxiter=200)
        assert list(res.params.index) == list(ref.params.index)
        assert rel(res.params, ref.params) < TOL
    f = "affair ~ centred(age) + I(yrs_married / K)"
    res = ff.logit(f, fair, tol=1e-12)
    ref = smf.logit(f, fair).fit(disp=0, tol=1e-12)
    new = fair.iloc[:5]
    assert rel(res.predict(new), ref.predict(new)) < TOL
    with pytest.raises(Exception, match="centred"):
        ff.logit("affair ~ centred(age)", fair, eval_env={})
    ref = smf.logit("affair ~ I(age / K)", fair).fit(disp=0, tol=1e-12)
    assert rel(ff.logit("affair ~ I(age / K)", fair, eval_env={"K": K}, tol=1e-12).params,
               ref.params) < TOL


# ---------------------------------------------------- constraints in patsy's grammar


@pytest.mark.parametrize("constraint", [
    "age = yrs_married = 0",                       # chained: two constraints
    "C(religious)[T.2.0]:rate_marriage = 0",        # an interaction's name
    "rate_marriage + C(religious)[T.4.0]:rate_marriage = 0",
    "rate_marriage = -0.5",                         # unary minus after =
    "age = -yrs_married",
    "age = 1e-3",                                   # scientific notation
    "2 * (age - .5 * yrs_married) = rate_marriage / 4, children",
])
def test_constraint_strings_match_statsmodels(fair_fits, constraint):
    res, ref = fair_fits
    w, sw = res.wald_test(constraint), ref.wald_test(constraint, scalar=True)
    assert w.df_denom == sw.df_denom
    assert rel(w.statistic, sw.statistic) < TOL
    t, st = res.t_test(constraint), ref.t_test(constraint)
    assert rel(t.effect, st.effect) < TOL and rel(t.sd, st.sd) < TOL


def test_unreadable_constraints_are_refused_by_name(fair_fits):
    res = fair_fits[0]
    for bad, what in [("age * yrs_married = 0", "not linear"), ("agee = 0", "agee"),
                      ("age = (1", r"expected '\)'"), ("1 = 2", "without coefficients"),
                      ("age / 0 = 1", "nonzero number")]:
        with pytest.raises(ValueError, match=what):
            res.t_test(bad)


# ----------------------------------------------- predictions: rows, missing values, levels


def test_get_prediction_keeps_the_datas_index(fair):
    d = fair.copy()
    d.index = d.index * 3 + 100  # not 0 … n−1
    d.loc[d.index[5::9], "age"] = np.nan
    f = "affair ~ age + yrs_married + C(religious)"
    res, ref = ff.logit(f, d), smf.logit(f, d).fit(disp=0, tol=1e-12)
    got, want = res.get_prediction().summary_frame(), ref.get_prediction().summary_frame()
    assert list(got.index) == list(want.index)
    assert rel(got["predicted"], want["predicted"]) < TOL
    assert rel(res.predict(), ref.predict()) < TOL  # arrays, as statsmodels'
    # DataFrame input, with and without an intercept fit
    X, y = d.dropna()[["age", "yrs_married"]], d.dropna()["affair"]
    arr = fastgen.logistic_inference(fastgen.fit_logistic(X, y, tol=1e-12), X, y)
    sref = sm.Logit(y, sm.add_constant(X)).fit(disp=0, tol=1e-12)
    got = arr.get_prediction().summary_frame()
    assert list(got.index) == list(sref.get_prediction().summary_frame().index)
    # multinomial: the rows of each class keep the labels
    a = sm.datasets.anes96.load_pandas().data
    a.index = a.index + 1000
    mres = ff.mnlogit("PID ~ age + TVnews", a)
    rows = mres.get_prediction().summary_frame().index.get_level_values("row")
    assert list(pd.unique(rows)) == list(a.index)


def test_predict_on_new_data_with_missing_values_is_nan_in_place(fair, anes):
    f = "affair ~ age + yrs_married + C(religious)"
    res, ref = ff.logit(f, fair), smf.logit(f, fair).fit(disp=0, tol=1e-12)
    new = fair.iloc[[0, 10, 20, 30]].copy()
    new.index = [7, 3, 99, 5]
    new.loc[3, "age"] = np.nan
    new.loc[5, "religious"] = np.nan  # a missing level: missing, not the reference
    got, want = res.predict(new), ref.predict(new)
    assert isinstance(got, pd.Series) and list(got.index) == list(want.index)
    assert got.isna().tolist() == want.isna().tolist() == [False, True, False, True]
    assert rel(got.dropna(), want.dropna()) < TOL
    pred = res.get_prediction(new).summary_frame()
    assert list(pred.index) == list(ref.get_prediction(new).summary_frame().index)
    mres = ff.mnlogit(ANES, anes, tol=1e-12)
    mref = smf.mnlogit(ANES, anes).fit(disp=0, method="newton", tol=1e-12)
    mnew = anes.iloc[:4].copy()
    mnew.iloc[1, mnew.columns.get_loc("TVnews")] = np.nan
    got, want = mres.predict(mnew), mref.predict(mnew)
    assert isinstance(got, pd.DataFrame) and got.shape == want.shape
    assert got.isna().all(axis=1).tolist() == [False, True, False, False]
    assert rel(got.dropna(), want.dropna()) < TOL
    assert fair.notna().all().all()  # the caller's data untouched


def test_unseen_levels_are_refused_by_column_and_level(fair):
    new = fair.iloc[:2].copy()
    for col, value, shown in [("religious", 7.0, "7.0"), ("faith", "devout", "devout")]:
        f = "affair ~ age + C(religious)" if col == "religious" else "affair ~ age + faith"
        res = ff.logit(f, fair)
        bad = new.copy()
        bad[col] = bad[col].astype(object)
        bad.iloc[1, bad.columns.get_loc(col)] = value
        with pytest.raises(Exception, match=shown):  # noqa: B017 - statsmodels refuses too
            smf.logit(f, fair).fit(disp=0).predict(bad)
        for call in (res.predict, res.get_prediction):
            with pytest.raises(ValueError, match=rf"column '{col}'.*{shown}"):
                call(bad)
    # a categorical of a transform: checked through formulaic's warning
    f = "affair ~ C(np.round(rate_marriage / 2)) + age"
    res, ref = ff.logit(f, fair), smf.logit(f, fair).fit(disp=0, tol=1e-12)
    assert rel(res.predict(new), ref.predict(new)) < TOL
    bad = new.assign(rate_marriage=[4.0, 11.0])
    with pytest.raises(Exception, match="6"):  # noqa: B017 - statsmodels refuses too
        ref.predict(bad)
    with pytest.raises(ValueError, match=r"C\(np.round\(rate_marriage / 2\)\).*6\.0"):
        res.predict(bad)
    bad = new.assign(religious=new["religious"].astype(str))  # "3.0" is not 3.0
    res = ff.logit("affair ~ age + C(religious)", fair)
    with pytest.raises(ValueError, match=r"column 'religious'.*'\d\.0'"):
        res.predict(bad)


def test_prediction_se_is_stable_at_extreme_linear_predictors():
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    y = (rng.random(400) < scipy.special.expit(0.3 + 1.2 * x)).astype(float)
    res = fastgen.logistic_inference(fastgen.fit_logistic(x[:, None], y, tol=1e-12),
                                     x[:, None], y)
    b0, b1 = res.params
    eta = np.linspace(-40.0, 40.0, 33)
    pred = res.get_prediction(((eta - b0) / b1)[:, None])
    Xt = np.column_stack([np.ones_like(eta), (eta - b0) / b1])
    lse = np.sqrt(np.einsum("ij,jk,ik->i", Xt, res.cov_params, Xt))
    # p(1 − p) = exp(−log(1 + e^{−η}) − log(1 + e^{η})), no cancellation
    stable = np.exp(-np.logaddexp(0.0, -eta) - np.logaddexp(0.0, eta)) * lse
    assert np.max(np.abs(pred.se / stable - 1.0)) < 1e-12


# ------------------------------------------------------------- lr_test's refusals


def test_lr_test_refuses_non_nested_fits_and_other_rows(fair):
    lr_test = fastgen.logistic.inference.lr_test
    d = fair.assign(noise=np.random.default_rng(0).normal(size=len(fair)))
    with pytest.raises(ValueError, match="does not nest.*rate_marriage"):
        lr_test(ff.logit("affair ~ rate_marriage + yrs_married", d),
                ff.logit("affair ~ noise + age + children", d))
    d2 = d.sample(frac=1, random_state=1).reset_index(drop=True)
    with pytest.raises(ValueError, match="same rows"):
        lr_test(ff.logit("affair ~ age", d2.iloc[:3000]),
                ff.logit("affair ~ age + yrs_married", d2.iloc[3000:6000]))
    # arrays: no names, the likelihoods say it
    y = d["affair"].to_numpy()
    Xa, Xb = d[["rate_marriage"]].to_numpy(), d[["noise", "age"]].to_numpy()
    ra = fastgen.logistic_inference(fastgen.fit_logistic(Xa, y), Xa, y)
    rb = fastgen.logistic_inference(fastgen.fit_logistic(Xb, y), Xb, y)
    with pytest.raises(ValueError, match="does not nest"):
        lr_test(ra, rb)
    Xc = d[["rate_marriage", "age"]].to_numpy()
    rc = fastgen.logistic_inference(fastgen.fit_logistic(Xc, y), Xc, y)
    ref_c = sm.Logit(y, sm.add_constant(Xc)).fit(disp=0, tol=1e-12)
    ref_a = sm.Logit(y, sm.add_constant(Xa)).fit(disp=0, tol=1e-12)
    assert rel(lr_test(ra, rc).statistic, 2.0 * (ref_c.llf - ref_a.llf)) < TOL


# ------------------------------------------------- levels, FLIC's note, cov_type spelling


def test_profile_alpha_is_honoured_or_refused_and_t_test_alpha_reaches_its_tables(fair):
    s = sm.datasets.spector.load_pandas().data
    rp = ff.logit("GRADE ~ GPA + TUCE + PSI", s, ci="profile", alpha=0.1)
    assert "[0.050" in str(rp.summary()) and "[0.05" in rp.to_frame().columns
    for call in (rp.summary, rp.to_frame, rp.conf_int):
        with pytest.raises(ValueError, match="alpha=0.05"):
            call(alpha=0.05)
    res, ref = ff.logit("GRADE ~ GPA + TUCE + PSI", s), \
        smf.logit("GRADE ~ GPA + TUCE + PSI", s).fit(disp=0, tol=1e-12)
    t = res.t_test("GPA = 0, TUCE = PSI", alpha=0.1)
    want = ref.t_test("GPA = 0, TUCE = PSI").summary_frame(alpha=0.1)
    assert rel(t.summary_frame().iloc[:, 4:], want.iloc[:, 4:]) < TOL
    assert "[0.050" in str(t.summary())


def test_cov_type_in_lower_case_as_statsmodels(fair):
    f = "affair ~ age + yrs_married"
    res = ff.logit(f, fair, cov_type="hc0")
    ref = smf.logit(f, fair).fit(disp=0, tol=1e-12, cov_type="HC0")
    assert res.cov_type == "HC0" and rel(res.bse, ref.bse) < TOL


def test_flic_summary_explains_the_intercepts_p_value():
    s = sm.datasets.spector.load_pandas().data
    r = ff.logit("GRADE ~ GPA + TUCE + PSI", s, penalty="firth", correction="flic")
    off = s[["GPA", "TUCE", "PSI"]].to_numpy() @ np.asarray(r.params)[1:]
    glm = sm.GLM(s["GRADE"], np.ones((len(s), 1)), family=sm.families.Binomial(),
                 offset=off).fit(tol=1e-12)
    # logistf's convention: the Wald z of the offset refit (its p-value, 1e-114 here,
    # compared on the z scale)
    z = scipy.stats.norm.isf(r.pvalues.iloc[0] / 2)
    assert rel(z, abs(glm.tvalues.iloc[0])) < TOL
    assert abs(r.tvalues.iloc[0]) < 0.5 * z  # the table's z says something else
    text = str(r.summary())
    assert "FLIC (logistf's convention)" in text and "offset" in text
