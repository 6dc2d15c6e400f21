"""fastgen: Numba-compiled kernels for generative classifiers.

Gaussian discriminant analysis, naive Bayes and IRLS logistic regression behind a thin
functional API: ``fit_*`` functions return frozen parameter dataclasses, and the four
scoring functions accept every params type.
"""

# What importing fastgen sets for the whole process (OMP_WAIT_POLICY if unset, a
# NUMBA_CACHE_DIR fallback when numba could write its cache nowhere, a wrap of numba's
# cache-file loading on tested numba versions) is listed in one place: the docstring of
# fastgen/_runtime.py.  It runs before any kernel module is imported.
from ._runtime import RuntimeSetupWarning
from ._runtime import configure_process as _configure_process

_configure_process()

from .io import ParamsFileError, load_feature_names, load_params, save_params
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
    gaussian_nb_from_moments,
)
# --- logistic regression ---
from .logistic import ConvergenceWarning, LogisticParams, fit_logistic, irls_step
from .logistic import LogisticInference, logistic_inference
from .logistic import (
    CollinearityWarning,
    PerfectSeparationWarning,
    SeparationResult,
    detect_separation,
)
# --- streaming ---
from .streaming import NBCounts, merge_counts, nb_counts, nb_from_counts

__version__ = "0.1.0"

__all__ = [
    "RuntimeSetupWarning",
    "ConvergenceWarning",
    "LogisticParams",
    "fit_logistic",
    "irls_step",
    "LogisticInference",
    "logistic_inference",
    "PerfectSeparationWarning",
    "CollinearityWarning",
    "detect_separation",
    "SeparationResult",
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
    "gaussian_nb_from_moments",
    "joint_log_likelihood",
    "predict_log_proba",
    "predict_proba",
    "predict",
    "ParamsFileError",
    "load_feature_names",
    "save_params",
    "load_params",
    "NBCounts",
    "nb_counts",
    "merge_counts",
    "nb_from_counts",
]
