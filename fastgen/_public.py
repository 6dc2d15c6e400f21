"""fastgen's public names and the submodule that defines each.

The package root resolves these names on first use (``fastgen/__init__.py``), and the
compile notice (``fastgen/_log.py``) uses them to name the public call that compiles a
kernel.  Both read this leaf, which imports nothing, so neither imports the other.
``__all__`` of the package is this table plus ``RuntimeSetupWarning``.
"""

__all__ = ["PUBLIC", "LAZY"]

# Submodule -> the public names it defines.
PUBLIC = {
    "io": ("ParamsFileError", "load_feature_names", "save_params", "load_params"),
    "scoring": ("joint_log_likelihood", "predict_log_proba", "predict_proba", "predict"),
    # --- sufficient statistics (host or device X) ---
    "stats": ("ClassMoments", "class_moments", "merge_moments", "NBCounts", "nb_counts",
              "merge_counts"),
    # --- Gaussian discriminant analysis ---
    "gda": ("GDAParams", "SingularCovarianceError", "fit_gda", "gda_from_moments",
            "linear_discriminant", "lda_transform"),
    # --- naive Bayes ---
    "naive_bayes": ("AlphaClippedWarning", "GaussianNBParams", "BernoulliNBParams",
                    "MultinomialNBParams", "ComplementNBParams", "CategoricalNBParams",
                    "fit_gaussian_nb", "fit_bernoulli_nb", "fit_multinomial_nb",
                    "fit_complement_nb", "fit_categorical_nb", "gaussian_nb_from_moments",
                    "nb_from_counts"),
    # --- logistic regression ---
    "logistic": ("ConvergenceWarning", "LogisticParams", "fit_logistic", "irls_step",
                 "LogisticInference", "logistic_inference", "PerfectSeparationWarning",
                 "CollinearityWarning", "detect_separation", "SeparationResult"),
}

#: Public name -> the submodule that defines it.
LAZY = {name: module for module, names in PUBLIC.items() for name in names}
