"""Accuracy with values removed at random: fastgen's marginal models against the
complete-data model and against mean imputation followed by scikit-learn.

For each data set that scikit-learn ships (breast cancer, wine) and each fraction of
values removed at random (from training and test rows alike), stratified 5-fold
cross-validation over several seeds of:

* ``fastgen marginalize``: fit with ``nan_policy="marginalize"`` (EM for LDA and QDA,
  available-case Gaussian naive Bayes), score the incomplete test rows by the marginal
  of their observed features;
* ``complete data``: the same model on the data before removal (the ceiling);
* ``mean imputation + scikit-learn``: ``SimpleImputer(strategy="mean")`` then
  scikit-learn's estimator.

QDA uses ``reg_param=0.05`` everywhere (wine has 13 features for ~50 rows per class).
Prints a markdown table of mean accuracies (benchmarks/NOTES.md keeps the results).

    python -m benchmarks.missing_report [--seeds 3]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn import discriminant_analysis as sk_da
from sklearn import naive_bayes as sk_nb
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.impute import SimpleImputer
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline

import fastgen
from fastgen import sklearn as fs

MODELS = {
    "LDA": (lambda: fs.LinearDiscriminantAnalysis(nan_policy="marginalize"),
            sk_da.LinearDiscriminantAnalysis),
    "QDA": (lambda: fs.QuadraticDiscriminantAnalysis(reg_param=0.05,
                                                     nan_policy="marginalize"),
            lambda: sk_da.QuadraticDiscriminantAnalysis(reg_param=0.05)),
    "Gaussian NB": (None, sk_nb.GaussianNB),
}


class _GaussianNBMarginal:
    """fit_gaussian_nb / predict with nan_policy="marginalize" (the functional API)."""

    def fit(self, X, y):
        self.p = fastgen.fit_gaussian_nb(X, y, nan_policy="marginalize")
        return self

    def score(self, X, y):
        return float(np.mean(fastgen.predict(self.p, X, nan_policy="marginalize") == y))


def _ours(name):
    return _GaussianNBMarginal() if name == "Gaussian NB" else MODELS[name][0]()


def _accuracies(X, y, rate, seed):
    Xm = X.copy()
    Xm[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    out = {}
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y):
        for name, (_, peer) in MODELS.items():
            scores = out.setdefault(name, [[], [], []])
            scores[0].append(_ours(name).fit(Xm[tr], y[tr]).score(Xm[te], y[te]))
            scores[1].append(_ours(name).fit(X[tr], y[tr]).score(X[te], y[te]))
            imputed = make_pipeline(SimpleImputer(strategy="mean"), peer())
            scores[2].append(imputed.fit(Xm[tr], y[tr]).score(Xm[te], y[te]))
    return {k: [np.mean(v) for v in s] for k, s in out.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    print("| data | removed | model | fastgen marginalize | complete data | "
          "mean imputation + scikit-learn |")
    print("|---|---:|---|---:|---:|---:|")
    for data_name, loader in (("breast cancer", load_breast_cancer), ("wine", load_wine)):
        X, y = loader(return_X_y=True)
        for rate in (0.1, 0.2, 0.3):
            runs = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
                for seed in range(args.seeds):
                    runs.append(_accuracies(X, y, rate, seed))
            for name in MODELS:
                m = np.mean([r[name] for r in runs], axis=0)
                print(f"| {data_name} | {rate:.0%} | {name} | {m[0]:.3f} | {m[1]:.3f} | "
                      f"{m[2]:.3f} |", flush=True)


if __name__ == "__main__":
    main()
