"""The one decorator preset every fastgen kernel uses.

``cache=True`` (compiled code is stored beside the source, or under
``NUMBA_CACHE_DIR``), ``nogil=True`` (kernels release the GIL, so Python threads run
them concurrently), ``error_model="numpy"`` (division by zero gives inf/nan like numpy
instead of raising, and keeps loops vectorisable).  No ``fastmath``: it assumes no NaN
or inf, which breaks ``-inf`` log-probabilities.

Changing the policy for every kernel is a one-line edit here.  Every parallel kernel
also gets a serial twin here (:func:`serial_twin`), which fastgen runs for small inputs.

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


import contextlib  # noqa: E402
import functools  # noqa: E402
import threading  # noqa: E402
import types  # noqa: E402

from numba import njit  # noqa: E402 - numba is used only once it is configured
from numba.core import config as numba_config  # noqa: E402
from numba.core.cpu import ParallelOptions  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402

from ._cache import cache_enabled  # noqa: E402
from ._notice import JIT_DISABLED_MESSAGE, JITDisabledError  # noqa: E402

__all__ = ["jit", "pjit", "REASSOC", "PRANGE_ONLY", "serial_code", "in_serial_code", "serial_twin",
           "KernelDispatcher"]

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
    Its serial twin (:func:`serial_twin`) runs the same source with ``prange`` as
    ``range``.
    """
    overrides.setdefault("parallel", PRANGE_ONLY)
    return jit(func, **overrides)


# ------------------------------------------------------------------ serial twins
#
# Why.  numba's parfor lowering costs seconds of compilation per parallel kernel, on
# every first use with an empty cache, while inputs below ``SMALL_WORK`` run on one
# thread anyway (fastgen._runtime.threads_for).  Each parallel kernel therefore has a
# serial twin: the same Python source compiled without ``parallel``, its calls to
# parallel kernels bound to their twins.  Inside :func:`serial_code` a call of a
# kernel from Python runs the twin, so a small input compiles (and loads) only serial
# code.  Same source, same fixed work split, same order: the twin computes what the
# parallel kernel computes on one thread (tests/kernels/test_serial_twins.py compares them).

_mode = threading.local()


@contextlib.contextmanager
def serial_code(active: bool = True):
    """Inside: kernels called from Python run their serial twins (``active=False``: run
    the parallel kernels, for a large pass inside a small scope).  Per thread,
    re-entrant."""
    before = getattr(_mode, "serial", False)
    _mode.serial = bool(active)
    try:
        yield
    finally:
        _mode.serial = before


def in_serial_code() -> bool:
    """Whether this thread is inside :func:`serial_code` (active)."""
    return getattr(_mode, "serial", False)


class KernelDispatcher(CPUDispatcher):
    """numba's CPU dispatcher, with one addition: called from Python inside
    :func:`serial_code`, it runs its serial twin.  Typing, compiling, caching and calls
    from numba code are numba's own."""

    def __call__(self, *args, **kwargs):
        if getattr(_mode, "serial", False):
            twin = serial_twin(self)
            if twin is not self:
                return twin(*args, **kwargs)
        return CPUDispatcher.__call__(self, *args, **kwargs)


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
    dispatcher = njit(**options)(func)
    dispatcher.__class__ = KernelDispatcher
    dispatcher._fastgen_options = dict(options)
    return dispatcher


def _options_of(dispatcher):
    """The decorator options of a fastgen kernel: as given to :func:`jit`, or, for a
    dispatcher numba rebuilt from a pickle in another process, from its target
    options."""
    options = getattr(dispatcher, "_fastgen_options", None)
    if options is None:
        options = {k: v for k, v in dispatcher.targetoptions.items() if k != "nopython"}
        options["cache"] = cache_enabled()
    return dict(options)


def _callees(code):
    """Global names a code object (and the code objects nested in it) reads."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _callees(const)
    return names


def serial_twin(dispatcher):
    """The serial twin of a fastgen kernel: itself for a serial kernel that calls no
    parallel kernel; else the same source compiled without ``parallel`` (cached under
    its own name, ``<name>_serial``), with every fastgen kernel it calls replaced by
    that kernel's twin.  Made on first request, once."""
    twin = dispatcher.__dict__.get("_serial_twin")
    if twin is not None:
        return twin
    func = dispatcher.py_func
    options = _options_of(dispatcher)
    parallel = bool(options.pop("parallel", False))
    swapped = {}
    for name in _callees(func.__code__):
        value = func.__globals__.get(name)
        if isinstance(value, KernelDispatcher) and value is not dispatcher:
            other = serial_twin(value)
            if other is not value:
                swapped[name] = other
    if not parallel and not swapped:
        twin = dispatcher
    else:
        # The twin's own namespace: the module's, with the callees' twins in place of
        # the callees; refreshed from the module whenever the twin compiles.
        namespace = dict(func.__globals__)
        namespace.update(swapped)
        twin_func = types.FunctionType(func.__code__, namespace, func.__name__,
                                       func.__defaults__, func.__closure__)
        twin_func.__qualname__ = func.__qualname__ + "_serial"
        twin_func.__doc__ = func.__doc__
        twin_func.__kwdefaults__ = func.__kwdefaults__
        twin = njit(**options)(twin_func)
        twin.__class__ = _TwinDispatcher
        twin._twin_of = (func.__globals__, frozenset(swapped))
    dispatcher._serial_twin = twin
    return twin


class _TwinDispatcher(CPUDispatcher):
    """A serial twin.  Like any numba function it reads its module's globals when it
    compiles a signature (not when the twin was made), except the callees it has twins
    for."""

    def compile(self, sig):
        module_globals, swapped = self._twin_of
        namespace = self.py_func.__globals__
        for name, value in module_globals.items():
            if name not in swapped:
                namespace[name] = value
        return CPUDispatcher.compile(self, sig)
