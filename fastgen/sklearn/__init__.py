"""scikit-learn estimators backed by fastgen's models (install the ``sklearn`` extra).

Each estimator validates its input the scikit-learn way (``validate_data``,
``check_classification_targets``), calls the fastgen model layer, keeps the fitted
params dataclass as ``params_`` and exposes scikit-learn's fitted attributes, so that
replacing ``from sklearn.naive_bayes import GaussianNB`` by
``from fastgen.sklearn import GaussianNB`` is enough for existing code::

    from fastgen.sklearn import QuadraticDiscriminantAnalysis
    clf = QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X, y)
    clf.predict_proba(X_test)
    fastgen.save_params("qda.npz", clf.params_)

Where the meaning differs from scikit-learn 1.9, the class docstring says so.  The
estimators pass ``sklearn.utils.estimator_checks.check_estimator``; the few checks that
cannot pass are listed, with the reason, by :func:`expected_failed_checks`.

Modules
-------
base
    :class:`~fastgen.sklearn.base.FastgenClassifier` (validation and scoring shared by
    every estimator), :class:`~fastgen.sklearn.base.LinearFastgenClassifier` (its
    ``decision_function`` for the linear models, LDA and logistic regression) and
    :func:`expected_failed_checks`.
discriminant
    LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis (``fastgen.fit_gda``).
naive_bayes
    GaussianNB, BernoulliNB, MultinomialNB, ComplementNB, CategoricalNB; ``fit`` and
    ``partial_fit`` merge mergeable statistics (``fastgen.nb_counts``, ``merge_counts``,
    ``nb_from_counts``; ``fastgen.class_moments`` for the Gaussian model).
advice
    :func:`~fastgen.sklearn.advice.in_own_terms`: the model layer's errors and warnings
    reworded in each estimator's own parameters (QDA's ``reg_param``, LDA's
    ``shrinkage``, another estimator where the model layer names a ``covariance``).
linear
    LogisticRegression (``fastgen.fit_logistic``; scikit-learn 1.9's parameters), also
    named LogisticRegressionIRLS; FirthLogisticRegression (``penalty="firth"``, with the
    FLIC/FLAC corrections).

This package is an adapter: it imports scikit-learn and fastgen's public names only,
never a kernel, a private name of the model layer or anything of the other adapters
(``fastgen.cli``, ``fastgen.dask``); its modules share only the public names of
:mod:`fastgen.sklearn.base`.  Importing it imports scikit-learn; ``import fastgen`` does
not.
"""

from .base import expected_failed_checks
from .discriminant import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from .linear import FirthLogisticRegression, LogisticRegression, LogisticRegressionIRLS
from .naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MultinomialNB

__all__ = [
    "LinearDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis",
    "GaussianNB",
    "BernoulliNB",
    "MultinomialNB",
    "ComplementNB",
    "CategoricalNB",
    "LogisticRegression",
    "LogisticRegressionIRLS",
    "FirthLogisticRegression",
    "expected_failed_checks",
]
