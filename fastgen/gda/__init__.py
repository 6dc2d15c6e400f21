"""Gaussian discriminant analysis: pooled (LDA), per-class (QDA) and diagonal models.

Model: y ~ Categorical(φ), x | y=k ~ N(μ_k, Σ_k), fitted by maximum likelihood from the
class moments (one read of X, on the host or the device: :func:`fastgen.class_moments`).

* :mod:`~fastgen.gda.params`: ``GDAParams`` and its scoring tables (one implementation,
  used by the CPU kernels and by :mod:`fastgen.cuda`);
* :mod:`~fastgen.gda.scoring`: the scorer of the Gaussian models (GDA and Gaussian naive
  Bayes): which kernels score their tables, host or device;
* :mod:`~fastgen.gda.covariance`: class moments → Σ per covariance model (shrinkage,
  ``reg``, the rank of a singular pooled Σ, the advice of a failed per-class fit);
* :mod:`~fastgen.gda.fit`: the option checks, ``fit_gda`` and ``gda_from_moments``;
* :mod:`~fastgen.gda.discriminant`: ``linear_discriminant`` and ``lda_transform``.
"""

from .discriminant import lda_transform, linear_discriminant
from .fit import check_gda_options, fit_gda, gda_from_moments
from .params import COVARIANCE_TYPES, SCATTER_FOR, GDAParams, SingularCovarianceError

__all__ = [
    "GDAParams",
    "SingularCovarianceError",
    "fit_gda",
    "gda_from_moments",
    "linear_discriminant",
    "lda_transform",
    "COVARIANCE_TYPES",
    "SCATTER_FOR",
    "check_gda_options",
]
