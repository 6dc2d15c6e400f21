"""fastgen: Numba-compiled kernels for generative classifiers.

Gaussian discriminant analysis, naive Bayes and IRLS logistic regression behind a thin
functional API: ``fit_*`` functions return frozen parameter dataclasses, and the four
scoring functions accept every params type.
"""

import os as _os

# numba's default OpenMP workers spin after every parallel region, taking the cores from
# the BLAS call or the Python code that follows; fastgen alternates both.  Measured here
# (2 cores): 20 × (fit_gda + predict_proba + a 300×300 GEMM) took 1.1 s with spinning
# workers and 0.37 s with passive ones.  Set before numba starts its pool; a value the
# user chose (or an OpenMP runtime already started by another library) wins.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# numba raises at import when it can write its cache nowhere (a read-only install and no
# writable home): fall back to a private temp directory first (see fastgen/_cache.py).
# A truncated or garbled cache file of a fastgen kernel is recompiled, not an error.
from ._cache import ensure_writable_cache as _ensure_writable_cache
from ._cache import tolerate_corrupt_cache as _tolerate_corrupt_cache

_ensure_writable_cache()
_tolerate_corrupt_cache()

from .io import load_params, save_params
from .scoring import joint_log_likelihood, predict, predict_log_proba, predict_proba

# --- Gaussian discriminant analysis ---
from .gda import (
    GDAParams,
    SingularCovarianceError,
    fit_gda,
    gda_from_moments,
    lda_transform,
    linear_discriminant,
)
from .moments import ClassMoments, class_moments, merge_moments
# --- naive Bayes ---
from .naive_bayes import (
    AlphaClippedWarning,
    BernoulliNBParams,
    CategoricalNBParams,
    ComplementNBParams,
    GaussianNBParams,
    MultinomialNBParams,
    fit_bernoulli_nb,
    fit_categorical_nb,
    fit_complement_nb,
    fit_gaussian_nb,
    fit_multinomial_nb,
)
# --- logistic regression ---
from .logistic import ConvergenceWarning, LogisticParams, fit_logistic, irls_step
# --- streaming ---
from .streaming import NBCounts, merge_counts, nb_counts, nb_from_counts

__version__ = "0.1.0"

__all__ = [
    "ConvergenceWarning",
    "LogisticParams",
    "fit_logistic",
    "irls_step",
    "ClassMoments",
    "class_moments",
    "merge_moments",
    "GDAParams",
    "SingularCovarianceError",
    "fit_gda",
    "gda_from_moments",
    "linear_discriminant",
    "lda_transform",
    "AlphaClippedWarning",
    "GaussianNBParams",
    "BernoulliNBParams",
    "MultinomialNBParams",
    "ComplementNBParams",
    "CategoricalNBParams",
    "fit_gaussian_nb",
    "fit_bernoulli_nb",
    "fit_multinomial_nb",
    "fit_complement_nb",
    "fit_categorical_nb",
    "joint_log_likelihood",
    "predict_log_proba",
    "predict_proba",
    "predict",
    "save_params",
    "load_params",
    "NBCounts",
    "nb_counts",
    "merge_counts",
    "nb_from_counts",
]
