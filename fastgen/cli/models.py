"""The model registry of the command line, shared by ``fastgen curve`` and ``fastgen fit``.

One entry per model: its name, a description, the fastgen fit function, the one option
the command line sets (``reg``, ``l2``, ``alpha`` or ``var_smoothing``) and that option's
default in each command.  ``fastgen fit`` fits without regularisation by default;
``fastgen curve`` adds a little (Σ ← (1 − reg)·Σ + reg·I for the Gaussian models, ½·l2·‖w‖²
for logistic regression), which it applies to standardised features, so in units of each
feature's spread.  ``nb`` is resolved by the features to one of the naive Bayes entries
(:func:`feature_kind`, :data:`NB_FOR_KIND`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from .. import fit_bernoulli_nb, fit_gaussian_nb, fit_gda, fit_logistic, fit_multinomial_nb

__all__ = ["Model", "MODELS", "CURVE_MODELS", "FIT_MODELS", "NB_FOR_KIND", "feature_kind",
           "resolve", "label", "fit_option_default"]


@dataclass(frozen=True)
class Model:
    """One entry of the registry.

    Attributes
    ----------
    name : str
        The name on the command line (``--model``, ``--models``).
    description : str
        One line for the help and the curve report; ``{value:g}`` stands for the curve
        default of ``option``.  A newline continues the line in the help's model list.
    fit : callable or None
        ``fit(X, y, **{option: value}) -> params``; None for ``nb``, which
        :func:`resolve` replaces by a naive Bayes entry.
    option : str or None
        The fit function's keyword that the command line sets.
    fit_default, curve_default : float or None
        The value of ``option`` in ``fastgen fit`` and in ``fastgen curve``.
    standardise : bool
        ``fastgen curve`` fits it on standardised features (the Gaussian models and
        logistic regression); False: on the raw values (discrete naive Bayes).
    """

    name: str
    description: str
    fit: Callable | None = None
    option: str | None = None
    fit_default: float | None = None
    curve_default: float | None = None
    standardise: bool = True

    @property
    def curve_description(self) -> str:
        """The description with the curve default filled in."""
        return self.description.format(value=self.curve_default)

    def fit_curve(self, X, y):
        """Fit with ``fastgen curve``'s default for ``option``."""
        return self.fit(X, y, **{self.option: self.curve_default})

    def fit_with(self, X, y, value):
        """Fit with ``option`` set to ``value``."""
        return self.fit(X, y, **{self.option: value})


_ENTRIES = (
    Model("lda", "GDA, one full covariance (covariance='pooled', reg={value:g})",
          partial(fit_gda, covariance="pooled"), "reg", 0.0, 1e-3),
    Model("qda", "GDA, per-class covariances (covariance='per_class', reg={value:g})",
          partial(fit_gda, covariance="per_class"), "reg", 0.0, 1e-2),
    Model("gda", "GDA, shared variances (covariance='pooled_diagonal', reg={value:g}): "
                 "the generative partner of logistic",
          partial(fit_gda, covariance="pooled_diagonal"), "reg", 0.0, 1e-3),
    Model("nb", "naive Bayes matching the features: Bernoulli (binary), multinomial\n"
                "(non-negative integer counts) or Gaussian (otherwise)"),
    Model("gaussian_nb", "Gaussian naive Bayes", fit_gaussian_nb, "var_smoothing",
          1e-9, 1e-9),
    Model("bernoulli_nb", "Bernoulli naive Bayes", fit_bernoulli_nb, "alpha", 1.0, 1.0,
          standardise=False),
    Model("multinomial_nb", "Multinomial naive Bayes", fit_multinomial_nb, "alpha", 1.0, 1.0,
          standardise=False),
    Model("logistic", "logistic regression by IRLS, l2={value:g}", fit_logistic, "l2",
          0.0, 1e-2),
)

#: name → entry, in the order of ``fastgen fit --model``'s choices
MODELS = {m.name: m for m in _ENTRIES}

#: ``fastgen fit --model`` choices
FIT_MODELS = tuple(MODELS)

#: ``fastgen curve --models`` choices, in the default order of the table's columns
CURVE_MODELS = ("nb", "gda", "lda", "qda", "logistic")

#: the naive Bayes entry ``nb`` stands for, by :func:`feature_kind`
NB_FOR_KIND = {"binary": "bernoulli_nb", "counts": "multinomial_nb",
               "continuous": "gaussian_nb"}


def feature_kind(X) -> str:
    """Classify features as ``"binary"``, ``"counts"`` or ``"continuous"``.

    Binary: every value is 0 or 1.  Counts: every value is a non-negative integer.
    Otherwise continuous.  These pick the naive Bayes model (Bernoulli, multinomial,
    Gaussian): see :data:`NB_FOR_KIND`.
    """
    if np.all((X == 0) | (X == 1)):
        return "binary"
    if np.all(X >= 0) and np.all(X == np.round(X)):
        return "counts"
    return "continuous"


def resolve(name: str, kind: str) -> Model:
    """The entry that fits model ``name`` on features of ``kind`` (``nb`` resolved)."""
    return MODELS[NB_FOR_KIND[kind]] if name == "nb" else MODELS[name]


def label(name: str, kind: str) -> str:
    """The model's column title in the curve report: ``nb (gaussian)`` for ``nb``."""
    if name != "nb":
        return name
    return f"nb ({resolve(name, kind).name.removesuffix('_nb')})"


def fit_option_default(option: str) -> float:
    """``fastgen fit``'s default for ``option``, the same in every entry that has it."""
    values = {m.fit_default for m in _ENTRIES if m.option == option}
    if len(values) != 1:  # the parser has one --OPTION for all of them
        raise AssertionError(f"entries disagree on the fit default of {option!r}: {values}")
    return values.pop()
