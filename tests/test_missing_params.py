"""The params fields of fits with missing features pass the same checks as every other
field: built by a fit, replaced, or loaded from a file (damaged or not)."""

import dataclasses

import numpy as np
import pytest
from reference import make_blobs
from test_params_validation import _applies, _array_fields, _damaged, _refused

import fastgen


def _nan(X, rate, seed):
    Xm = np.array(X, dtype=float)
    Xm[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return Xm


@pytest.fixture(scope="module")
def fitted():
    X, y = make_blobs(90, 3, 3, seed=40)
    rng = np.random.default_rng(41)
    Xc = rng.poisson(1.5, size=(90, 4)).astype(float)
    yc = np.arange(90) % 3
    return {
        "em-pooled": fastgen.fit_gda(_nan(X, 0.2, 1), y, nan_policy="marginalize"),
        "em-per_class": fastgen.fit_gda(_nan(X, 0.2, 2), y, "per_class",
                                        nan_policy="marginalize"),
        "bernoulli": fastgen.fit_bernoulli_nb(_nan(Xc, 0.2, 3), yc, binarize=1.0,
                                              nan_policy="marginalize"),
    }


@pytest.mark.parametrize("name", ["em-pooled", "em-per_class", "bernoulli"])
def test_every_field_refuses_every_damage(name, fitted, tmp_path):
    p = fitted[name]
    fields = _array_fields(p)
    assert {"log_likelihood_history"} < set(fields) or {"observed_count"} < set(fields)
    for field in fields:
        for kind in ("shape", "nan", "inf", "dtype"):
            if _applies(p, field, kind):
                _refused(p, field, _damaged(p, field, kind, 0), tmp_path)


@pytest.mark.parametrize("name", ["em-pooled", "em-per_class", "bernoulli"])
def test_round_trip(name, fitted, tmp_path):
    p = fitted[name]
    q = fastgen.load_params(fastgen.save_params(tmp_path / "p.npz", p))
    assert q == p


def test_em_record_is_checked(fitted):
    p = fitted["em-pooled"]
    h = p.log_likelihood_history
    with pytest.raises(ValueError, match=r"GDAParams\.log_likelihood_history must never "
                                         r"decrease"):
        dataclasses.replace(p, log_likelihood_history=h[::-1].copy())
    assert p.history_monotone is True  # EM with a maximising M-step
    with pytest.raises(ValueError, match=r"GDAParams\.converged must be set with the "
                                         r"other fields of the EM record"):
        dataclasses.replace(p, converged=None)
    with pytest.raises(ValueError, match=r"GDAParams\.history_monotone must be set"):
        dataclasses.replace(p, history_monotone=None)
    with pytest.raises(ValueError, match=r"GDAParams\.history_monotone must be True or "
                                         r"False"):
        dataclasses.replace(p, history_monotone=1)
    # a record that says its EM does not guarantee monotonicity may dip
    dipped = dataclasses.replace(p, log_likelihood_history=h[::-1].copy(),
                                 history_monotone=False)
    assert dipped.history_monotone is False
    with pytest.raises(ValueError, match=r"GDAParams\.log_likelihood_history must have "
                                         r"shape"):
        dataclasses.replace(p, n_iter=p.n_iter + 1)
    with pytest.raises(ValueError, match=r"GDAParams\.converged must be True or False"):
        dataclasses.replace(p, converged=1)
    with pytest.raises(ValueError, match=r"GDAParams\.n_iter must be >= 0"):
        dataclasses.replace(p, n_iter=-1)


def test_bernoulli_observed_count_is_checked_against_the_tables(fitted, tmp_path):
    p = fitted["bernoulli"]
    other = p.observed_count + 1.0
    with pytest.raises(fastgen.ParamsFileError, match="feature_log_prob must be "
                                                      "recomputed"):
        path = fastgen.save_params(tmp_path / "b.npz", p)
        with np.load(path) as z:
            arrays = {k: z[k] for k in z.files}
        arrays["observed_count"] = other
        np.savez(tmp_path / "bad.npz", **arrays)
        fastgen.load_params(tmp_path / "bad.npz")
