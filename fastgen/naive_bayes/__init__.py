"""Naive Bayes: Gaussian, Bernoulli, multinomial, complement and categorical models.

Every ``fit_*`` function validates its input once, runs one counting kernel over the
data (reading each stored value once, dense or CSR) and returns a frozen params
dataclass whose vocabulary follows scikit-learn (``classes``, ``class_count``,
``class_log_prior``, ``feature_count``, ``feature_log_prob``, ...).  The scoring
functions of :mod:`fastgen.scoring` accept all of them; the Bernoulli, multinomial,
complement and categorical models score scipy CSR input without densifying it.

Smoothing: ``alpha = 1`` is Laplace smoothing (a feature never seen with a class in
training still gets a finite log-probability), ``0 < alpha < 1`` Lidstone smoothing.
``alpha`` below 1e-10 (including 0) is clipped to 1e-10 with an
:class:`AlphaClippedWarning`, as scikit-learn does with ``force_alpha=False``.

float32 data gives float32 parameters and float32 scores; counts are accumulated in
float64 and kept in float64.
Modules:

* :mod:`~fastgen.naive_bayes.base`: argument checks, priors, the counting helpers and
  ``LinearNB``, the params base of the models linear in their features;
* :mod:`~fastgen.naive_bayes.gaussian`: ``GaussianNBParams``, ``fit_gaussian_nb``;
* :mod:`~fastgen.naive_bayes.discrete`: multinomial and complement params and fits, and
  ``discrete_counts``, the one counting pass they share with Bernoulli;
* :mod:`~fastgen.naive_bayes.bernoulli`: ``BernoulliNBParams``, ``fit_bernoulli_nb``;
* :mod:`~fastgen.naive_bayes.categorical`: ``CategoricalNBParams``, ``fit_categorical_nb``;
* :mod:`~fastgen.naive_bayes.from_counts`: ``nb_from_counts`` and the
  ``*_from_counts`` / ``*_from_moments`` builders: params from statistics;
* :mod:`~fastgen.naive_bayes.scoring`: the scorers of the linear and categorical models
  (Gaussian naive Bayes scores with :mod:`fastgen.gda.scoring`).

The models read X through the statistics layer (:mod:`fastgen.stats`: ``NBCounts``,
``nb_counts``, ``merge_counts`` and the counting pass; re-exported here) and import the
shared core (``fastgen._params``, ``_runtime``, ``_validation``, ``kernels``); adapters
(scikit-learn, Dask, CLI) use the names exported here.
"""

from .base import ALPHA_MIN, AlphaClippedWarning
from .bernoulli import BernoulliNBParams, fit_bernoulli_nb
from .categorical import CategoricalNBParams, fit_categorical_nb
from .discrete import (
    ComplementNBParams,
    MultinomialNBParams,
    fit_complement_nb,
    fit_multinomial_nb,
)
from .from_counts import (
    bernoulli_nb_from_counts,
    categorical_nb_from_counts,
    complement_nb_from_counts,
    gaussian_nb_from_moments,
    multinomial_nb_from_counts,
    nb_from_counts,
)
from .gaussian import GaussianNBParams, fit_gaussian_nb

from ..stats.counts import NB_MODELS, NBCounts, merge_counts, nb_counts  # isort: skip

__all__ = [
    "ALPHA_MIN",
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
    "bernoulli_nb_from_counts",
    "multinomial_nb_from_counts",
    "complement_nb_from_counts",
    "categorical_nb_from_counts",
    "NB_MODELS",
    "NBCounts",
    "nb_counts",
    "merge_counts",
    "nb_from_counts",
]
