"""Inference through the adapters: the scikit-learn estimator's ``inference_`` /
``summary()`` and ``fastgen fit --summary``, against statsmodels on spector."""

import numpy as np
import pytest
from reference import require

import fastgen
from fastgen.cli import main

sm = require("statsmodels.api")
require("sklearn")
from fastgen.sklearn import LogisticRegression  # noqa: E402


@pytest.fixture(scope="module")
def spector():
    d = sm.datasets.spector.load_pandas().data
    return d[["GPA", "TUCE", "PSI"]].to_numpy(), d["GRADE"].to_numpy(), d


def test_estimator_inference_matches_statsmodels(spector):
    X, y, _ = spector
    est = LogisticRegression(C=np.inf, tol=1e-10).fit(X, y)  # default tol is 1e-4
    ref = sm.Logit(y, sm.add_constant(X)).fit(disp=0)
    res = est.inference_
    scale = np.max(np.abs(ref.params))
    assert np.max(np.abs(res.params - ref.params)) <= 1e-8 * scale
    assert np.max(np.abs(res.bse - ref.bse)) <= 1e-8 * np.max(ref.bse)
    table = est.summary()
    assert "Logit Regression Results" in table and "x3" in table


def test_estimator_summary_refuses_a_penalised_fit(spector):
    X, y, _ = spector
    est = LogisticRegression(C=1.0).fit(X, y)
    assert est.inference_ is None
    with pytest.raises(ValueError, match="ridge"):
        est.summary()


def test_cli_fit_summary_prints_the_table(spector, tmp_path, capsys):
    _, _, d = spector
    path = tmp_path / "spector.csv"
    d.to_csv(path, index=False)
    assert main(["fit", "--model", "logistic", "--summary", str(path),
                 "--target", "GRADE"]) == 0
    out = capsys.readouterr().out
    ref = sm.Logit(d["GRADE"], sm.add_constant(d[["GPA", "TUCE", "PSI"]])).fit(disp=0)
    assert "GPA" in out and f"{ref.params['GPA']:.4f}" in out
    assert not list(tmp_path.glob("*.npz"))  # -o is optional with --summary


def test_cli_summary_needs_logistic(spector, tmp_path, capsys):
    _, _, d = spector
    path = tmp_path / "spector.csv"
    d.to_csv(path, index=False)
    assert main(["fit", "--model", "lda", "--summary", str(path), "--target", "GRADE"]) == 2
    assert "--summary goes with --model logistic" in capsys.readouterr().err


def test_fastgen_exports_inference():
    assert fastgen.logistic_inference is fastgen.logistic.inference.logistic_inference
