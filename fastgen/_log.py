"""The ``fastgen`` logger, and the one line that says a call is compiling kernels.

fastgen logs through the standard :mod:`logging` logger ``"fastgen"`` (never a Python
warning, which strict test suites turn into errors).  It is set up the first time
fastgen logs, never at import:

* its level, unless the program set one: ``$FASTGEN_LOG_LEVEL`` (a level name such as
  ``WARNING``, or a non-negative whole number; anything else is ignored with a WARNING
  line that names it), ``WARNING`` when ``$FASTGEN_QUIET`` is set to anything but
  ``0`` or the empty string, else ``INFO``;
* a handler that prints the bare message to stderr, used only while the program has no
  handler of its own for it (none on the root logger or on ``"fastgen"``): a program
  that configures logging gets fastgen's records through its own handlers instead.

What fastgen logs: at INFO, once per process and model family, ``fastgen: compiling
kernels for logistic regression (fit_logistic) on first use (cached in
/path/to/numba/cache for later runs)`` when a public call is about to compile a kernel
(the family is the call's, from its arguments too: ``fit_logistic(penalty="firth")``,
and any call given a Firth fit, is "Firth logistic regression", see :func:`call_family`)
(numba's cache had no entry for it: first use after installation, a new dtype, a
cleared cache; small inputs never compile, see ``fastgen._small``); at WARNING, a
damaged cache entry (see :mod:`fastgen._runtime`).  Silence the first with
``logging.getLogger("fastgen").setLevel(logging.WARNING)`` or ``FASTGEN_QUIET=1``.

How "about to compile" is detected: a listener for numba's ``"numba:compile"`` event
(:mod:`numba.core.event`), registered by ``fastgen._runtime.configure_process`` when
``fastgen._validation`` is first imported (before any public call runs a kernel).  numba
fires the event only when it compiles (a cache hit fires nothing), so a warm process
pays nothing; the listener looks at the first compile of a fastgen kernel and names
the public fastgen function on the call stack (none: not a fastgen call, no message).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading

from ._public import LAZY

__all__ = ["LOGGER_NAME", "get_logger", "compile_message", "call_family", "watch_compiles",
           "on_compile", "announce", "compile_clock", "CompileClock"]

LOGGER_NAME = "fastgen"

_setup_lock = threading.Lock()
_set_up = False


class _StderrDefault(logging.Handler):
    """Prints the bare message to the current ``sys.stderr``, unless the program has a
    handler of its own for fastgen's records (on the root logger or on ``"fastgen"``),
    or a status display took the line (:func:`on_compile`)."""

    def emit(self, record):
        logger = logging.getLogger(LOGGER_NAME)
        if logging.getLogger().handlers or any(h is not self for h in logger.handlers):
            return
        try:
            msg = self.format(record)
            writer = _line_writer
            if writer is not None:
                writer(msg)
                return
            stream = sys.stderr
            if stream is None:
                return
            stream.write(msg + "\n")
            stream.flush()
        except Exception:  # noqa: BLE001 - as logging's own handlers do
            self.handleError(record)


def _level_from_env():
    """(level, rejected): the level asked for by $FASTGEN_LOG_LEVEL / $FASTGEN_QUIET, or
    None; and the text of a $FASTGEN_LOG_LEVEL that is neither a level name nor a
    non-negative whole number in digits (``+5``, ``1e3``, ``no-such-level``), else
    None: it is ignored, and :func:`get_logger` says so."""
    value = os.environ.get("FASTGEN_LOG_LEVEL", "").strip()
    rejected = None
    if value:
        if value.isascii() and value.isdigit():
            return int(value), None
        level = logging.getLevelName(value.upper())
        if isinstance(level, int):
            return level, None
        rejected = value
    if os.environ.get("FASTGEN_QUIET", "").strip() not in ("", "0"):
        return logging.WARNING, rejected
    return None, rejected


def get_logger() -> logging.Logger:
    """The ``"fastgen"`` logger, set up on first use (see the module docstring)."""
    global _set_up
    logger = logging.getLogger(LOGGER_NAME)
    if _set_up:
        return logger
    rejected = None
    with _setup_lock:
        if not _set_up:
            if logger.level == logging.NOTSET:
                env, rejected = _level_from_env()
                logger.setLevel(logging.INFO if env is None else env)
            if not any(isinstance(h, _StderrDefault) for h in logger.handlers):
                logger.addHandler(_StderrDefault())
            _set_up = True
    if rejected is not None:
        logger.warning(f"fastgen: the environment variable FASTGEN_LOG_LEVEL={rejected!r} "
                       f"is neither a level name (DEBUG, INFO, WARNING, ERROR, CRITICAL) "
                       f"nor a non-negative whole number; ignored")
    return logger


# ----------------------------------------------------------------- the compile notice

def compile_message(name: str, family: str | None = None, cache: str | None = None) -> str:
    """The line logged when the public function ``name`` (of model ``family``) starts
    compiling, with numba's cache folder ``cache`` when known."""
    what = name if family is None else f"{family} ({name})"
    where = "for later runs" if cache is None else f"in {cache} for later runs"
    return f"fastgen: compiling kernels for {what} on first use (cached {where})"


#: public function -> the model family whose kernels it compiles (scoring functions and
#: logistic_inference: by the fitted model they are given, see :func:`call_family`)
_FAMILY = {
    "fit_gda": "GDA", "class_moments": "GDA", "merge_moments": "GDA",
    "gda_from_moments": "GDA", "lda_transform": "GDA", "linear_discriminant": "GDA",
    "fit_gaussian_nb": "Gaussian naive Bayes",
    "gaussian_nb_from_moments": "Gaussian naive Bayes",
    "fit_bernoulli_nb": "Bernoulli naive Bayes",
    "fit_multinomial_nb": "multinomial naive Bayes",
    "fit_complement_nb": "complement naive Bayes",
    "fit_categorical_nb": "categorical naive Bayes",
    "nb_counts": "naive Bayes counts", "merge_counts": "naive Bayes counts",
    "nb_from_counts": "naive Bayes counts",
    "fit_logistic": "logistic regression", "logistic_inference": "logistic regression",
    "irls_step": "logistic regression", "detect_separation": "logistic regression",
}
_PARAMS_FAMILY = {
    "GDAParams": "GDA", "GaussianNBParams": "Gaussian naive Bayes",
    "BernoulliNBParams": "Bernoulli naive Bayes",
    "MultinomialNBParams": "multinomial naive Bayes",
    "ComplementNBParams": "complement naive Bayes",
    "CategoricalNBParams": "categorical naive Bayes",
    "LogisticParams": "logistic regression",
}

#: Firth's penalised likelihood compiles kernels of its own (the curvature pass, its
#: packed products), though it is reached through ``fit_logistic``: a family of its own.
FIRTH = "Firth logistic regression"
#: ``LogisticParams.solver`` of the fits made with Firth's penalty (FLIC and FLAC too).
_FIRTH_SOLVERS = frozenset({"firth", "flic", "flac"})
#: Public functions whose family is that of the fitted model they are given.
_BY_MODEL = {"joint_log_likelihood": "params", "predict_log_proba": "params",
             "predict_proba": "params", "predict": "params",
             "logistic_inference": "model"}


def call_family(name: str, arguments) -> str | None:
    """The model family whose kernels the public call ``name`` compiles, given its
    arguments (a mapping, e.g. the frame's locals): ``fit_logistic`` with
    ``penalty="firth"`` and any function given a Firth, FLIC or FLAC fit are Firth's;
    scoring functions and ``logistic_inference`` take the family of their model (a
    scikit-learn adapter's method of that name: of its ``params_``); the others that of
    the function (None: not a model family's function)."""
    if name == "fit_logistic":
        penalty = arguments.get("penalty")
        return FIRTH if isinstance(penalty, str) and penalty == "firth" else \
            _FAMILY[name]
    if name in _BY_MODEL:
        model = arguments.get(_BY_MODEL[name])
        if model is None:  # a scikit-learn adapter's method of that name
            model = getattr(arguments.get("self"), "params_", None)
        family = _PARAMS_FAMILY.get(type(model).__name__)
        if family == _PARAMS_FAMILY["LogisticParams"] and \
                getattr(model, "solver", None) in _FIRTH_SOLVERS:
            return FIRTH
        if family is not None:
            return family
    return _FAMILY.get(name)


_announced = set()  # the families whose line was logged in this process
_callbacks: list = []  # [callback, called] of the active on_compile contexts
_line_writer = None  # where the default handler writes while a status display is shown
_registered = False
_state_lock = threading.Lock()

# Modules whose frames never name the call: the kernels themselves and this machinery.
_NOT_ENTRY_POINTS = ("fastgen.kernels", "fastgen.cuda.kernels", "fastgen._log",
                     "fastgen._runtime", "fastgen._compile", "fastgen.cli")


def _public_caller(frame):
    """(name, family) of the public fastgen function running in ``frame`` or further
    out: the outermost frame whose function is one of fastgen's public names, with the
    family of the outermost such call that has one (:func:`call_family`: an adapter's
    method named ``predict_proba`` leaves it to the ``fastgen.predict_proba`` it calls);
    failing that the outermost frame of a fastgen module (adapters such as
    :mod:`fastgen.dask`; family None); None when fastgen is not on the stack."""
    name = family = other = None
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module == "fastgen" or module.startswith("fastgen."):
            code = frame.f_code
            if code.co_name in LAZY:
                name = code.co_name
                family = call_family(name, frame.f_locals) or family
            elif not module.startswith(_NOT_ENTRY_POINTS):
                other = (getattr(code, "co_qualname", code.co_name), None)
        frame = frame.f_back
    return other if name is None else (name, family)


def announce(message: str, key=None) -> None:
    """Say that a fastgen call is compiling (``message``: :func:`compile_message`): the
    log line, once per process and ``key`` (the family; default: the message), and
    every :func:`on_compile` callback not called yet.  Also how a parent process relays
    the message a worker sent it."""
    key = message if key is None else key
    with _state_lock:
        log = key not in _announced and not any(entry[2] for entry in _callbacks)
        if log:
            _announced.add(key)
        todo = [entry for entry in _callbacks if not entry[1]]
        for entry in todo:
            entry[1] = True
    for entry in todo:
        try:
            entry[0](message)
        except Exception:  # noqa: BLE001 - a status display must not break the call
            pass
    if log:
        get_logger().info(message)


def _on_compile_start(event) -> None:
    try:
        dispatcher = event.data["dispatcher"]
        module = getattr(dispatcher.py_func, "__module__", "") or ""
    except (KeyError, AttributeError, TypeError):
        return
    if not (module == "fastgen" or module.startswith("fastgen.")):
        return
    caller = _public_caller(sys._getframe(1))
    if caller is None:
        return
    name, family = caller
    key = family or name
    if key in _announced and all(entry[1] for entry in _callbacks):
        return
    cache = getattr(getattr(dispatcher, "_cache", None), "_cache_path", None)
    announce(compile_message(name, family, cache), key)


def watch_compiles() -> None:
    """Register the compile listener (idempotent); called by
    ``fastgen._runtime.configure_process``.  Does nothing if numba's event API is
    missing."""
    global _registered
    if _registered:
        return
    try:
        from numba.core import event
    except ImportError:
        _registered = None
        return

    class _Listener(event.Listener):
        def on_start(self, ev):
            _on_compile_start(ev)

        def on_end(self, ev):
            pass

    event.register("numba:compile", _Listener())
    _registered = True


@contextlib.contextmanager
def on_compile(callback, *, log=True, writer=None):
    """Context manager: ``callback(message)`` is called the first time a fastgen call
    inside compiles a kernel (once per context, even if the process logged the line
    already).

    Parameters
    ----------
    callback : callable
        Takes the message (:func:`compile_message`).
    log : bool, default True
        False: inside, the line is not logged in this process (the callback carries
        it elsewhere, e.g. to a parent process).
    writer : callable, optional
        Inside, the default stderr handler writes its lines through ``writer`` (e.g.
        ``tqdm.write``, so that a line does not break a progress bar).
    """
    global _line_writer
    entry = [callback, False, not log]
    with _state_lock:
        _callbacks.append(entry)
        previous = _line_writer
        if writer is not None:
            _line_writer = writer
    try:
        yield
    finally:
        with _state_lock:
            _callbacks[:] = [e for e in _callbacks if e is not entry]
            _line_writer = previous


class CompileClock:
    """Seconds numba spent compiling (outermost compilations only) while the
    :func:`compile_clock` context that returned it was active, in this process."""

    def __init__(self):
        self.seconds = 0.0
        self._depth = 0
        self._t0 = 0.0


@contextlib.contextmanager
def compile_clock():
    """Context manager yielding a :class:`CompileClock`: the time inside counts as
    compilation, not as work (a progress estimate subtracts it).  Nothing is timed when
    numba's event API is missing."""
    import time

    clock = CompileClock()
    try:
        from numba.core import event
    except ImportError:
        yield clock
        return

    class _Timer(event.Listener):
        def on_start(self, ev):
            if clock._depth == 0:
                clock._t0 = time.perf_counter()
            clock._depth += 1

        def on_end(self, ev):
            clock._depth -= 1
            if clock._depth == 0:
                clock.seconds += time.perf_counter() - clock._t0

    with event.install_listener("numba:compile", _Timer()):
        yield clock
