"""What a scoring kernel writes (its ``mode`` argument).

A module of constants only, without numba: the layers above the kernels read the modes
without loading a kernel (small inputs are scored by numpy, ``fastgen/_small.py``).
:mod:`fastgen.kernels.special` re-exports them.
"""

__all__ = ["MODE_JLL", "MODE_LOG_PROBA", "MODE_PROBA"]

#: the joint log-likelihood log p(x|y=k) + log p(y=k)
MODE_JLL = 0
#: log posteriors: the joint log-likelihood less its row's log-sum-exp
MODE_LOG_PROBA = 1
#: posteriors
MODE_PROBA = 2
