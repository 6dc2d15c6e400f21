"""Deprecated alias of :mod:`fastgen.stats.moments`, kept for one release.

Import ``ClassMoments``, ``class_moments`` and ``merge_moments`` from :mod:`fastgen`
(or :mod:`fastgen.stats`) instead.
"""

import warnings

from .stats.moments import *  # noqa: F403
from .stats.moments import __all__  # noqa: F401

warnings.warn(
    "fastgen.moments is deprecated and will be removed in the next release; import "
    "ClassMoments, class_moments and merge_moments from fastgen (or fastgen.stats)",
    DeprecationWarning,
    stacklevel=2,
)
