"""Fill numba's cache ahead of time: :func:`compile` and ``fastgen compile``.

fastgen's kernels are compiled on first use and cached on disk (numba's ``cache=True``);
a fresh installation, container or CI runner pays the compilation on its first calls.
:func:`compile` pays it up front: for each chosen family and dtype a worker process
(spawn) runs the family's public functions on tiny synthetic data shaped to take every
kernel path real calls take (small and wide X, two and several classes, with and
without weights, dense and CSR with int32 and int64 indices, every scoring function),
each call sent to the kernels whatever its size (small inputs take numpy passes that
need no compilation, see ``fastgen._small``), so that later processes load every
kernel from the cache.

Where the cache lives (numba's order): ``$NUMBA_CACHE_DIR`` when set; else the
``__pycache__`` directory beside fastgen's kernel sources; else numba's user cache
directory (``~/.cache/numba`` on Linux); else a private directory under the system temp
directory, which fastgen sets as ``NUMBA_CACHE_DIR``.  numba uses a location only if
the process can write there: a cache on a read-only volume, or in an image layer owned
by another user, is skipped and every kernel compiles again.  Entries are keyed on each
kernel source file's path, modification time and size, the numba version and the CPU:
to share one cache between workers (a cluster, CI jobs, containers), give them the same
writable ``NUMBA_CACHE_DIR`` on a shared volume, the same fastgen installation at the
same path, the same numba version and the same CPU model; fill it once
(``fastgen compile``) before they start.  Concurrent workers may write to it: saves
are serialised by a lock file in the cache directory.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

from ._warmup import NEEDS, WARM, scans

__all__ = ["FAMILIES", "DTYPES", "CompiledFamily", "CompileReport", "compile",
           "cache_location", "run_family"]

#: Family name -> the public functions its warm-up runs (the help text lists them).
FAMILIES = {
    "gda": "fit_gda (every covariance and shrinkage; missing features, unlabelled rows), "
           "the scoring functions (nan_policy too), lda_transform, "
           "class_moments/merge_moments/gda_from_moments",
    "gaussian_nb": "fit_gaussian_nb, the scoring functions, nb_counts",
    "bernoulli_nb": "fit_bernoulli_nb on dense and CSR X, the scoring functions, nb_counts",
    "multinomial_nb": "fit_multinomial_nb on dense and CSR X, the scoring functions, "
                      "nb_counts",
    "complement_nb": "fit_complement_nb on dense and CSR X, the scoring functions",
    "categorical_nb": "fit_categorical_nb on dense and CSR X, the scoring functions",
    "logistic": "fit_logistic (binary and multinomial, dense and CSR, narrow and wide), "
                "the scoring functions, logistic_inference (every cov_type), irls_step",
    "firth": "fit_logistic(penalty='firth') and logistic_inference with profile intervals",
}

#: The dtypes X keeps end to end (other real dtypes are converted to float64).
DTYPES = ("float64", "float32")


# The order tasks start in: longest first (CPU seconds with an empty cache:
# benchmarks/NOTES.md), a family's float32 task behind a task of another group (by then
# its float64 task has filled the cache with the kernels they share), so that two
# workers finish together.
_TASKS = (("logistic", "float64"), ("gda", "float64"), ("logistic", "float32"),
          ("multinomial_nb", "float64"), ("gda", "float32"), ("multinomial_nb", "float32"),
          ("firth", "float64"), ("firth", "float32"), ("categorical_nb", "float64"),
          ("categorical_nb", "float32"), ("gaussian_nb", "float64"),
          ("gaussian_nb", "float32"), ("bernoulli_nb", "float64"),
          ("bernoulli_nb", "float32"), ("complement_nb", "float64"),
          ("complement_nb", "float32"))

# Families that compile many of the same kernels (dtype-independent ones for both dtypes
# of a family, e.g. the inference finishing steps; the logistic data passes for Firth):
# two tasks of one group running at once would both compile them.
_GROUP = {"logistic": "logistic", "firth": "logistic", "gda": "gaussian",
          "gaussian_nb": "gaussian", "categorical_nb": "categorical",
          "multinomial_nb": "discrete", "bernoulli_nb": "discrete",
          "complement_nb": "discrete"}


def _next_task(pending, running):
    """The task to start next: the first pending one (longest first) whose group has no
    task running; None (the worker waits) where every pending task's group has one
    running: a task beside another of its group compiles their shared kernels a second
    time, and it then loads them from the cache after a wait that is shorter."""
    running = list(running)
    busy = {_GROUP[f] for f, _ in running}
    for i, (f, _) in enumerate(pending):
        if _GROUP[f] not in busy:
            return pending.pop(i)
    return pending.pop(0) if not running else None


def run_family(family: str, dtype: str, done=()) -> dict:
    """Run the warm-up of one family and dtype in this process (every kernel it needs is
    loaded from the cache or compiled into it), after the warm-ups of the families it
    needs (:data:`fastgen._warmup.NEEDS`) that are not among ``done`` (families warmed
    before it, whose kernels are in the cache).

    Returns {"family", "dtype", "seconds", "compiled"}: ``compiled`` counts the fastgen
    kernel signatures numba compiled (0 when the cache had them all).
    """
    import warnings

    import numpy as np
    from numba.core import event

    import fastgen

    from . import _small
    from ._log import on_compile
    from ._validation import sparse as _validation_sparse

    compiled = []

    class _Count(event.Listener):
        def on_start(self, ev):
            module = getattr(ev.data["dispatcher"].py_func, "__module__", "") or ""
            if module.startswith("fastgen"):
                compiled.append(module)

        def on_end(self, ev):
            pass

    t0, c0 = time.perf_counter(), time.process_time()
    thresholds = (_small.SMALL_VALUES, _validation_sparse.STRUCTURE_KERNEL_NNZ)
    try:
        with warnings.catch_warnings(), on_compile(lambda message: None, log=False), \
                event.install_listener("numba:compile", _Count()):
            warnings.simplefilter("ignore")
            # The warm-up data are small: every call goes to the kernels all the same
            # (small inputs take the numpy passes, which need no compilation), the CSR
            # structure kernel included.
            _small.SMALL_VALUES = -1
            _validation_sparse.STRUCTURE_KERNEL_NNZ = 0
            scans(np.dtype(dtype).type)
            for need in NEEDS.get(family, ()):
                if need not in done:
                    WARM[need](fastgen, np.dtype(dtype).type)
            WARM[family](fastgen, np.dtype(dtype).type)
    finally:
        _small.SMALL_VALUES, _validation_sparse.STRUCTURE_KERNEL_NNZ = thresholds
    return {"family": family, "dtype": dtype, "seconds": time.perf_counter() - t0,
            "cpu_seconds": time.process_time() - c0, "compiled": len(compiled)}


def _line(stream, text):
    """``text`` and its newline in one write, flushed: the workers and the parent share
    stderr (unbuffered when it is not a terminal), and a line written in two pieces
    could be split by another process's line."""
    stream.write(text + "\n")
    stream.flush()


def _worker(family, dtype, announce=False, done=()):
    """A pool task: :func:`run_family`, any failure returned as text; with
    ``announce``, a line on stderr when it starts (flushed: seen at once in a log)."""
    if announce and sys.stderr is not None:
        _line(sys.stderr, f"fastgen compile: {family} {dtype}: started")
    try:
        return run_family(family, dtype, done)
    except BaseException as exc:  # noqa: BLE001 - reported by the parent
        import traceback

        return {"family": family, "dtype": dtype, "seconds": float("nan"),
                "cpu_seconds": float("nan"), "compiled": 0,
                "error": f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"}


def cache_location() -> str:
    """The directory numba stores fastgen's compiled kernels in, in this process (see
    the module docstring for how it is chosen).

    A RuntimeError where there is none: numba's JIT is switched off
    (``JITDisabledError``), or this numba's cache loading is one fastgen cannot check,
    so its kernels compile in every process without the on-disk cache."""
    from numba.core import config as numba_config

    from .kernels._notice import JIT_DISABLED_MESSAGE, JITDisabledError
    from .kernels.labels import first_nonfinite

    if numba_config.DISABLE_JIT:
        raise JITDisabledError(JIT_DISABLED_MESSAGE)
    path = getattr(first_nonfinite._cache, "_cache_path", None)
    if path is None:
        import numba

        raise RuntimeError(f"fastgen compiles its kernels without numba's on-disk cache "
                           f"on numba {numba.__version__} (see the RuntimeSetupWarning), "
                           f"so there is nothing to compile ahead of time")
    return str(path)


# ------------------------------------------------------------------ the public function

@dataclass(frozen=True)
class CompiledFamily:
    """One family and dtype of :func:`compile`.

    Attributes
    ----------
    family, dtype : str
    seconds : float
        Wall seconds of its warm-up (compilation, or loading from the cache).
    compiled : int
        Kernel signatures numba compiled (0: the cache had them all).
    cpu_seconds : float
        CPU seconds of the warm-up in its worker process (on a busy machine the wall
        seconds grow, these do not).
    """

    family: str
    dtype: str
    seconds: float
    compiled: int
    cpu_seconds: float = float("nan")


@dataclass(frozen=True)
class CompileReport:
    """What :func:`compile` did.

    Attributes
    ----------
    cache_dir : str
        Where the compiled kernels are stored.
    families : tuple of CompiledFamily
        One per family and dtype, in the order they finished.
    seconds : float
        Wall seconds in all.
    """

    cache_dir: str
    families: tuple
    seconds: float


def _check_choice(values, known, what):
    if values is None:
        return list(known)
    if isinstance(values, str):
        values = [values]
    values = [str(v) for v in values]
    bad = [v for v in values if v not in known]
    if bad:
        raise ValueError(f"unknown {what} {bad[0]!r}; choose from {', '.join(known)}")
    if not values:
        raise ValueError(f"no {what} chosen; choose from {', '.join(known)}")
    return list(dict.fromkeys(values))


class _Lines:
    """Plain progress lines (no tqdm, or stderr is not a terminal)."""

    def __init__(self, total, stream):
        self.total, self.done, self.stream = total, 0, stream

    def update(self, item):
        self.done += 1
        if "error" in item:
            what = "FAILED"
        else:
            what = (f"{item['seconds']:.1f} s ({item['cpu_seconds']:.1f} s CPU), "
                    + (f"{item['compiled']} kernels compiled" if item["compiled"]
                       else "all cached"))
        _line(self.stream, f"fastgen compile: [{self.done}/{self.total}] {item['family']} "
                           f"{item['dtype']}: {what}")

    def close(self):
        pass


class _Bar:
    def __init__(self, total, stream):
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc="fastgen compile", unit="family", file=stream,
                        leave=False)

    def update(self, item):
        self.bar.set_postfix_str(f"{item['family']} {item['dtype']} done")
        self.bar.update()

    def close(self):
        self.bar.close()


def _progress(total, progress, stream):
    if not progress:
        return None
    if stream is not None and getattr(stream, "isatty", lambda: False)():
        try:
            return _Bar(total, stream)
        except ImportError:
            pass
    return _Lines(total, stream)


def compile(families=None, dtypes=None, *, jobs=None, progress=True):  # noqa: A001
    """Compile fastgen's kernels ahead of time into numba's cache.

    For each family and dtype, a worker process (multiprocessing's spawn context) runs
    the family's public functions on tiny synthetic data that takes every kernel path
    real calls take, so that later processes (of any program using this fastgen
    installation and cache) load every kernel from the cache instead of compiling it on
    first use.  Run it once after installing, e.g. in a Dockerfile
    (``RUN fastgen compile``) or a cluster's start-up script.  Families already in the
    cache take seconds each (loading the kernels and running the warm-up).  The workers
    are spawned: in a script, call it under ``if __name__ == "__main__":``.

    Where the cache lives: ``$NUMBA_CACHE_DIR`` when set; else ``__pycache__`` beside
    fastgen's kernel sources (``fastgen/kernels/__pycache__``); else numba's user cache
    directory (``~/.cache/numba``); else a private directory under the temp directory;
    numba skips a location the process cannot write to (so run this as the user, or
    with the ``NUMBA_CACHE_DIR``, of the processes that will use the cache).  To share
    one cache between workers, point their ``NUMBA_CACHE_DIR`` at the same writable
    directory on a shared volume, with the same fastgen (installed at the same path),
    numba version and CPU model, and fill it once with this function; concurrent
    writers are serialised by a lock file.

    Parameters
    ----------
    families : str or sequence of str, optional
        From :data:`FAMILIES`: ``gda``, ``gaussian_nb``, ``bernoulli_nb``,
        ``multinomial_nb``, ``complement_nb``, ``categorical_nb``, ``logistic``,
        ``firth``.  Default: all.
    dtypes : str or sequence of str, optional
        The dtypes of X to compile for (fastgen keeps float32 X in float32).  Default:
        both, ``("float64", "float32")``.
    jobs : int, optional
        Worker processes (default: the number of CPUs, at most one per task).  Tasks
        start longest first; two tasks that compile many of the same kernels (the two
        dtypes of a family, logistic and Firth, the discrete naive Bayes models) never
        run at once (a worker takes another task, or waits), so those kernels compile
        once.
    progress : bool, default True
        Report progress on stderr: a tqdm bar when tqdm is installed and stderr is a
        terminal, else one line (flushed) when each family and dtype starts and one
        when it finishes.

    Returns
    -------
    CompileReport
        The cache directory and, per family and dtype, the seconds taken and the number
        of kernel signatures compiled.

    Raises
    ------
    ValueError
        An unknown family or dtype, or ``jobs`` < 1.
    RuntimeError
        A family's warm-up failed (after the others finished); the message holds the
        worker's traceback.  Or there is no cache to fill: numba's JIT is switched off,
        or fastgen compiles without the on-disk cache on this numba version.
    """
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    fams = _check_choice(families, tuple(FAMILIES), "family")
    dts = _check_choice(dtypes, DTYPES, "dtype")
    tasks = [(f, d) for f, d in _TASKS if f in fams and d in dts]
    if jobs is None:
        jobs = os.cpu_count() or 1
    if int(jobs) != jobs or jobs < 1:
        raise ValueError(f"jobs must be a positive integer; got {jobs!r}")
    jobs = min(int(jobs), len(tasks))
    t0 = time.perf_counter()
    where = cache_location()  # also applies fastgen's process set-up (cache fallback)
    stream = sys.stderr
    if progress and stream is not None:
        print(f"fastgen compile: {len(fams)} families × {len(dts)} dtypes in {jobs} "
              f"processes; numba cache: {where}", file=stream, flush=True)
    bar = _progress(len(tasks), progress, stream)
    results = []
    try:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as ex:
            announce = isinstance(bar, _Lines)  # a tqdm bar shows what runs itself
            pending, running = list(tasks), {}
            while pending or running:
                while pending and len(running) < jobs:
                    task = _next_task(pending, running.values())
                    if task is None:
                        break
                    # the families this run warms before it: a family that needs
                    # one of them finds its kernels in the cache
                    running[ex.submit(_worker, *task, announce, tuple(fams))] = task
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    del running[fut]
                    item = fut.result()
                    results.append(item)
                    if bar is not None:
                        bar.update(item)
    finally:
        if bar is not None:
            bar.close()
    failed = [r for r in results if "error" in r]
    if failed:
        raise RuntimeError("fastgen compile: " + "; ".join(
            f"{r['family']} {r['dtype']} failed: {r['error']}" for r in failed))
    return CompileReport(
        cache_dir=where,
        families=tuple(CompiledFamily(r["family"], r["dtype"], r["seconds"], r["compiled"],
                                      r["cpu_seconds"]) for r in results),
        seconds=time.perf_counter() - t0)
