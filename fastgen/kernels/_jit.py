"""The one decorator preset every fastgen kernel uses.

``cache=True`` (compiled code is stored beside the source, or under
``NUMBA_CACHE_DIR``), ``nogil=True`` (kernels release the GIL, so Python threads run
them concurrently), ``error_model="numpy"`` (division by zero gives inf/nan like numpy
instead of raising, and keeps loops vectorisable).  No ``fastmath``: it assumes no NaN
or inf, which breaks ``-inf`` log-probabilities.

Changing the policy for every kernel is a one-line edit here.  Kernels are numba's own
dispatchers, nothing added: small inputs never reach them (fastgen computes those with
numpy, see ``fastgen._small``), so no kernel needs a second, serial compilation.

With numba's JIT switched off (``NUMBA_DISABLE_JIT=1``) every kernel is a stub whose
call raises :class:`~fastgen.kernels._notice.JITDisabledError`, which says how to debug
a kernel instead: the kernels call BLAS and CPU intrinsics that cannot run as Python, so
the first call that needs a kernel stops with that one error (everything that needs no
kernel, such as :func:`fastgen.load_params`, works).

Every kernel module takes its decorator from here, so this module is where numba gets
configured for the kernels (:func:`fastgen.kernels._setup.configure_numba`: a writable
cache location, damaged cache entries read as misses, parallel start-up hooks kept on
cache load, ...): on its first import, before the first kernel is decorated with
``cache=True`` (a kernel module without a writable cache location would fail to
import), compiled or loaded.
"""

from ._setup import configure_numba

configure_numba()


import functools  # noqa: E402

from numba import njit  # noqa: E402 - numba is used only once it is configured
from numba.core import config as numba_config  # noqa: E402
from numba.core.cpu import ParallelOptions  # noqa: E402

from ._cache import cache_enabled  # noqa: E402
from ._notice import JIT_DISABLED_MESSAGE, JITDisabledError  # noqa: E402

__all__ = ["jit", "pjit", "REASSOC", "PRANGE_ONLY"]

#: ``fastmath`` flags for kernels with float reductions: reassociation and contraction
#: (FMA) only, so dot products and running sums vectorise while NaN/inf semantics stay
#: intact.  The order is fixed at compile time: results still do not depend on the
#: thread count.
REASSOC = {"reassoc", "contract"}

#: ``parallel`` option of :func:`pjit`: only explicit ``prange`` loops run in parallel.
#: numba's other conversions (array expressions, ``np.zeros``, ``.sum()``, slice
#: assignment, loop fusion) would each become a parallel region of its own, compiled
#: separately, for work that is O(slots), never O(n·d), in these kernels.  An options
#: object, not a dict: numba empties a dict it reads, so a second specialisation would
#: get every conversion back.
PRANGE_ONLY = ParallelOptions({"prange": True, "comprehension": False, "reduction": False,
                               "inplace_binop": False, "setitem": False, "numpy": False,
                               "stencil": False, "fusion": False})


def jit(func=None, **overrides):
    """Serial kernel preset: ``njit(cache=True, nogil=True, error_model="numpy")``
    (``cache=False`` on a numba whose cache loading fastgen cannot check:
    :func:`~fastgen.kernels._cache.cache_enabled`)."""
    options = {"cache": cache_enabled(), "nogil": True, "error_model": "numpy"}
    options.update(overrides)
    if func is None:
        return lambda f: _kernel(f, options)
    return _kernel(func, options)


def pjit(func=None, **overrides):
    """Parallel kernel preset: :func:`jit` plus ``parallel`` (:data:`PRANGE_ONLY`).

    Only for kernels of O(n·d) work or more.  A parallel kernel must not call
    ``numba.get_num_threads()`` (that silently disables its cache); its work split is
    fixed by the problem size alone, so results do not depend on the thread count.
    """
    overrides.setdefault("parallel", PRANGE_ONLY)
    return jit(func, **overrides)


class _NeedsJIT:
    """A kernel while numba's JIT is switched off: calling it raises
    :class:`JITDisabledError`; ``py_func`` is its Python source, as on a dispatcher."""

    def __init__(self, func):
        self.py_func = func
        functools.update_wrapper(self, func)

    def __call__(self, *args, **kwargs):
        raise JITDisabledError(JIT_DISABLED_MESSAGE)


def _kernel(func, options):
    if numba_config.DISABLE_JIT:
        return _NeedsJIT(func)
    return njit(**options)(func)
