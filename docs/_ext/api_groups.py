"""Which public names the API reference shows on which page, in which order.

Names are public import paths only (``fastgen.<name>`` for ``fastgen.__all__``,
``fastgen.sklearn.<name>``, ``fastgen.dask.<name>``, ...), so the pages keep building when
the modules behind them move.  Any name of a public module's ``__all__`` that no group
lists lands in the ``other`` group of that module, so every public name is documented
even before someone files it under a topic.
"""

# group id -> (module, [names]).  A name's kind (function, class, params dataclass,
# exception, data) is found at build time.
GROUPS = {
    "gda": ("fastgen", [
        "fit_gda", "gda_from_moments", "linear_discriminant", "lda_transform",
        "GDAParams", "SingularCovarianceError",
    ]),
    "naive_bayes": ("fastgen", [
        "fit_gaussian_nb", "fit_bernoulli_nb", "fit_multinomial_nb", "fit_complement_nb",
        "fit_categorical_nb", "GaussianNBParams", "BernoulliNBParams", "MultinomialNBParams",
        "ComplementNBParams", "CategoricalNBParams", "AlphaClippedWarning",
        "gaussian_nb_from_moments",
    ]),
    "naive_bayes_builders": ("fastgen.naive_bayes", [
        "gaussian_nb_from_moments", "bernoulli_nb_from_counts", "multinomial_nb_from_counts",
        "complement_nb_from_counts", "categorical_nb_from_counts",
    ]),
    "logistic": ("fastgen", [
        "fit_logistic", "irls_step", "LogisticParams", "ConvergenceWarning",
    ]),
    "logistic_inference": ("fastgen", ["logistic_inference", "LogisticInference"]),
    "logistic_inference_results": ("fastgen.logistic.inference", [
        "lr_test", "Summary", "SummaryTable", "ContrastResults", "LRTestResults",
        "PredictionResults", "MarginalEffects", "FitData",
    ]),
    "formula": ("fastgen.formula", ["logit", "mnlogit", "FormulaDesign",
                                    "statsmodels_order"]),
    "logistic_diagnostics": ("fastgen", [
        "detect_separation", "SeparationResult", "PerfectSeparationWarning",
        "CollinearityWarning",
    ]),
    "logistic_module": ("fastgen.logistic", [
        "logistic_loss_grad_hess", "collinear_columns", "Collinearity",
    ]),
    "scoring": ("fastgen", [
        "joint_log_likelihood", "predict_log_proba", "predict_proba", "predict",
    ]),
    "moments": ("fastgen", ["class_moments", "merge_moments", "ClassMoments"]),
    "streaming": ("fastgen", ["nb_counts", "merge_counts", "nb_from_counts", "NBCounts"]),
    "streaming_module": ("fastgen.stats", ["NB_MODELS"]),
    "cuda": ("fastgen.cuda", ["is_device_array"]),
    "io": ("fastgen", ["save_params", "load_params", "load_feature_names", "ParamsFileError"]),
    "sklearn": ("fastgen.sklearn", [
        "LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis", "GaussianNB",
        "BernoulliNB", "MultinomialNB", "ComplementNB", "CategoricalNB",
        "LogisticRegression", "LogisticRegressionIRLS", "FirthLogisticRegression",
        "expected_failed_checks",
    ]),
    "dask": ("fastgen.dask", [
        "from_npy", "fit_gda", "fit_gaussian_nb", "fit_multinomial_nb", "fit_bernoulli_nb",
        "fit_categorical_nb",
        "fit_logistic", "logistic_inference", "joint_log_likelihood", "predict_log_proba",
        "predict_proba", "predict", "MULTINOMIAL_MAX_KP",
    ]),
}

# Names a group may list before they exist (planned public names): skipped quietly when
# absent, documented as soon as they appear.
OPTIONAL: set[str] = {"fastgen.sklearn.FirthLogisticRegression"}

# The public modules whose __all__ must be covered, with the group that takes the rest.
# fastgen.kernels.* are documented by the kernels page (fastgen-kernels directive).
MODULES = {
    "fastgen": "other",
    "fastgen.sklearn": "sklearn_other",
    "fastgen.dask": "dask_other",
    "fastgen.stats": "streaming_other",
    "fastgen.cuda": "cuda_other",
}

# Kernel modules documented as entry points for a user's own @njit code.
KERNEL_MODULES = [
    "fastgen.kernels.moments",
    "fastgen.kernels.gaussian",
    "fastgen.kernels.nb",
    "fastgen.kernels.sparse",
    "fastgen.kernels.irls",
    "fastgen.kernels.irls_sparse",
    "fastgen.kernels.special",
    "fastgen.kernels.labels",
    "fastgen.kernels.checked",
]

# Field descriptions the docs add where a params docstring gives only a type.  Keyed by
# "ClassName.field"; used only when the docstring's Attributes entry has no text.
FIELD_NOTES = {
    "alpha": "The additive (Laplace/Lidstone) smoothing the fit used.",
    "classes": "The class labels, sorted (as ``np.unique(y)``).",
    "LogisticParams.intercept": "Intercepts, one per row of ``coef`` (zeros when "
                                "``fit_intercept`` is False).",
    "LogisticParams.converged": "Whether the stopping rule was met within ``max_iter`` "
                                "Newton steps.",
    "GaussianNBParams.var_smoothing": "The option the fit used; ε = var_smoothing · "
                                      "max_j Var(x_j).",
    "ComplementNBParams.norm": "Whether the weights were normalised (scikit-learn's "
                               "``norm`` option).",
    "ComplementNBParams.class_count": "Weighted number of samples per class N_k.",
    "CategoricalNBParams.class_log_prior": "log π_k.",
    "CategoricalNBParams.n_categories": "Number of categories of each feature "
                                        "(codes 0 … n_categories[j] − 1).",
    "Collinearity.n_features": "d, the number of features (the intercept is column d).",
    "ClassRows.X": "The checked X: C-contiguous float32/float64 on the host, or a numba "
                   "device array (``on_device``).",
    "ClassRows.classes": "The sorted labels (host).",
    "ClassRows.codes": "The class code of every row, in [0, K) (host or device).",
    "ClassRows.weights": "The sample weights (host: empty for unit weights; device: None "
                         "for unit weights).",
    "ClassRows.feature_names": "The column names of a data frame, else None.",
    "ClassRows.on_device": "Whether X, codes and weights are device arrays.",
    "CategoricalNBParams.offsets": "Start of feature j's block of columns in "
                                   "``category_count`` and ``feature_log_prob``: "
                                   "offsets[j] = Σ_{l<j} n_categories[l].",
}


def documented_elsewhere(module: str, name: str) -> bool:
    """True when ``module.name`` is a re-export of an object a group already documents
    under ``fastgen.<name>`` (e.g. ``fastgen.stats.NBCounts`` is ``fastgen.NBCounts``):
    documenting it twice would be a duplicate object description."""
    import importlib

    if module == "fastgen":
        return False
    top = importlib.import_module("fastgen")
    listed = {n for m, names in GROUPS.values() if m == "fastgen" for n in names}
    obj = getattr(importlib.import_module(module), name, None)
    return name in listed and obj is not None and getattr(top, name, None) is obj
