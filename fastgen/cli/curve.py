"""The learning-curve experiment of ``fastgen curve`` (after Ng & Jordan, 2001).

:func:`run_curve` takes arrays and plain options (no argparse): for each random split it
holds out a test set, fits every model on nested training sets of the given sizes and
records the test errors.  Splits run in this process or in a pool of worker processes;
split ``i`` draws its random numbers from ``numpy.random.default_rng([seed, i])`` alone,
so the result does not depend on the number of workers.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from dataclasses import dataclass

import numpy as np

from .. import predict
from .._log import announce, compile_clock, on_compile
from .errors import CLIError
from .models import CURVE_MODELS, feature_kind, resolve
from .text import did_you_mean

__all__ = ["CurveJob", "run_curve", "curve_split", "nested_order", "standardise",
           "curve_sizes", "parse_models", "n_test_rows", "summarise", "progress_bar",
           "single_thread"]


@dataclass(frozen=True)
class CurveJob:
    """Everything one split needs: the data and the experiment's options.

    Attributes
    ----------
    X, y, seed :
        The arguments of :func:`run_curve`.
    models, sizes : tuple
        Those of :func:`run_curve`, as tuples; every size is in [1, n − n_test].
    n_test : int
        Rows held out for testing in every split.
    kind : str
        :func:`~fastgen.cli.models.feature_kind` of X (picks the naive Bayes model).
    """

    X: np.ndarray
    y: np.ndarray
    models: tuple
    sizes: tuple
    n_test: int
    seed: int
    kind: str


def standardise(Xtr, Xte):
    """Both sets standardised with the training set's mean and standard deviation.

    A feature that is constant on the training set (sd ≤ 1e-12·(1 + |mean|)) is only
    centred.
    """
    mu = Xtr.mean(axis=0)
    sd = Xtr.std(axis=0)
    sd[~(sd > 1e-12 * (1.0 + np.abs(mu)))] = 1.0
    return (Xtr - mu) / sd, (Xte - mu) / sd


def nested_order(rng, y_pool, per_class=2):
    """Order the training pool at random, every class first.

    The first rows hold ``per_class`` rows of every class (fewer if the pool has fewer),
    so that small nested training sets (prefixes of the order) see every class.
    """
    order = rng.permutation(y_pool.shape[0])
    yo = y_pool[order]
    first = []
    for c in np.unique(yo):
        first.extend(np.flatnonzero(yo == c)[:per_class].tolist())
    first = np.sort(np.asarray(first, dtype=np.intp))
    rest = np.setdiff1d(np.arange(order.shape[0]), first, assume_unique=True)
    return order[np.concatenate([first, rest])]


def single_thread():
    """Run numba and BLAS on one thread; return a callable that restores them.

    Curve fits are small (at most a few thousand rows): launching a parallel region costs
    more than the work, and on a busy machine far more (benchmarks/NOTES.md).
    Parallelism comes
    from ``jobs`` instead, across splits.
    """
    import numba
    from threadpoolctl import threadpool_limits

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    limits = threadpool_limits(limits=1)

    def restore():
        limits.restore_original_limits()
        numba.set_num_threads(before)

    return restore


def curve_split(job: CurveJob, split: int):
    """Test errors of every model at every size for one random split.

    Returns
    -------
    errors : ndarray (n_models, n_sizes), NaN where a fit failed
    failures : list of (model index, size index, message)
    n_warned : ndarray (n_models,) fits that raised a warning (e.g. ConvergenceWarning)
    """
    X, y, sizes = job.X, job.y, job.sizes
    entries = [resolve(m, job.kind) for m in job.models]
    rng = np.random.default_rng([job.seed, split])
    perm = rng.permutation(X.shape[0])
    test, pool = perm[:job.n_test], perm[job.n_test:]
    order = pool[nested_order(rng, y[pool])]
    Xte, yte = X[test], y[test]
    errors = np.full((len(entries), len(sizes)), np.nan)
    n_warned = np.zeros(len(entries), dtype=int)
    failures = []
    for jm, m in enumerate(sizes):
        idx = order[:m]
        Xtr, ytr = X[idx], y[idx]
        Zs = None
        for im, entry in enumerate(entries):
            if entry.standardise and Zs is None:
                Zs = standardise(Xtr, Xte)
            A, B = Zs if entry.standardise else (Xtr, Xte)
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    params = entry.fit_curve(A, ytr)
                    pred = predict(params, B)
                if caught:
                    n_warned[im] += 1
                errors[im, jm] = float(np.mean(pred != yte))
            except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
                failures.append((im, jm, f"{type(exc).__name__}: {exc}"))
    return errors, failures, n_warned


# The job of a worker process of the pool: set once by the initialiser, so that the data
# travel to each worker once rather than with every split.  Only worker processes set it.
_worker_job: CurveJob | None = None
_worker_scope = contextlib.ExitStack()


def _init_worker(job, messages=None):
    """Process-pool initialiser: keep the job; one thread per worker; the worker's
    "compiling kernels" line goes to the parent through the queue ``messages``, which
    shows it once, instead of to stderr."""
    global _worker_job
    _worker_job = job
    single_thread()
    if messages is not None:
        _worker_scope.enter_context(on_compile(messages.put, log=False))


def _worker_split(split):
    """:func:`curve_split` in a worker, with the seconds it spent compiling."""
    with compile_clock() as clock:
        result = curve_split(_worker_job, split)
    return (*result, clock.seconds)


def discount_compilation(bar, seconds):
    """Move the bar's start ``seconds`` later: compilation is a one-off, not work, and
    counted as work it made the first estimates many times too long.  The bar uses
    the average rate (``smoothing=0``), which this keeps exact."""
    if bar is not None and seconds > 0.0:
        bar.start_t += seconds


def n_test_rows(test_size, n):
    """``round(test_size·n)`` test rows, checked to leave at least 2 training rows."""
    n_test = int(round(test_size * n))
    if not 1 <= n_test <= n - 2:
        raise CLIError(f"--test-size {test_size:g} leaves {n_test} test rows and "
                       f"{n - n_test} training rows of {n}; need at least 1 and 2")
    return n_test


def curve_sizes(spec, n_pool, K):
    """Training-set sizes from ``--sizes``: 'geometric', 'linear' or a list m1,m2,...

    The named spacings give (up to) 10 distinct sizes from max(2K, 4) to ``n_pool``.
    """
    m_min = min(n_pool, max(2 * K, 4))
    if spec in ("geometric", "linear"):
        if spec == "geometric":
            s = np.geomspace(m_min, n_pool, 10)
        else:
            s = np.linspace(m_min, n_pool, 10)
        return sorted({int(round(v)) for v in s})
    try:
        sizes = sorted({int(v) for v in spec.split(",") if v.strip()})
    except ValueError:
        raise CLIError(f"--sizes must be 'geometric', 'linear' or a comma-separated list "
                       f"of integers; got {spec!r}") from None
    if not sizes:
        raise CLIError("--sizes is empty")
    bad = [m for m in sizes if not 1 <= m <= n_pool]
    if bad:
        raise CLIError(f"--sizes: {bad[0]} is outside [1, {n_pool}] (the training pool after "
                       f"holding out the test set)")
    return sizes


def parse_models(spec):
    """The model names of ``--models`` (comma-separated, each once)."""
    models = [m.strip() for m in spec.split(",") if m.strip()]
    if not models:
        raise CLIError("--models is empty")
    for m in models:
        if m not in CURVE_MODELS:
            raise CLIError(f"unknown model {m!r} in --models (choose from "
                           f"{', '.join(CURVE_MODELS)}){did_you_mean(m, CURVE_MODELS)}")
    if len(set(models)) != len(models):
        raise CLIError(f"--models lists a model twice: {spec!r}")
    return models


def progress_bar(total, enabled):
    """A tqdm bar on stderr counting splits, or None (disabled, or tqdm missing)."""
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    # a terminal that reports no size (a bare pseudo-terminal) would get a bar on a
    # screen of 0 rows and columns, which tqdm does not draw: 80 × 24 there
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
        shape = {} if size.columns and size.lines else {"ncols": 80, "nrows": 24}
    except (OSError, ValueError, AttributeError):
        shape = {}
    # the average rate over the run (smoothing=0), from which discount_compilation takes
    # the time spent compiling
    return tqdm(total=total, desc="splits", unit="split", file=sys.stderr, leave=False,
                smoothing=0, **shape)


def compile_status(bar):
    """Context manager: while the first fits compile fastgen's kernels, ``bar`` (or
    None) shows "compiling kernels for ... (cached for later runs)" as its status, and
    fastgen's one-line message is written above the bar instead of through it.  The
    status is cleared by :func:`clear_status`."""
    if bar is None:
        return contextlib.nullcontext()

    def show(message):
        bar.set_postfix_str(message.removeprefix("fastgen: "))

    def write(line):
        bar.write(line, file=sys.stderr)

    return on_compile(show, writer=write)


def clear_status(bar):
    """Clear the status :func:`compile_status` set (a split finished)."""
    if bar is not None and bar.postfix:
        bar.set_postfix_str("")


def _relay(messages):
    """Show the "compiling kernels" lines workers sent (the first one only: announce
    logs once per process)."""
    import queue

    while True:
        try:
            message = messages.get_nowait()
        except (queue.Empty, OSError, ValueError):
            return
        announce(message)


def run_curve(X, y, *, models, splits, sizes, test_size, seed, jobs=1, progress=False):
    """Run the learning-curve experiment.

    For each split, a random test set of ``round(test_size·n)`` rows is held out; the
    rest, in a random order whose first rows hold two rows of every class, gives nested
    training sets (the first m rows, for each m in ``sizes``).  Every model is fitted on
    every training set and scored on the test set.  Split ``i`` draws its random numbers
    from ``numpy.random.default_rng([seed, i])``, so results do not depend on ``jobs``.

    Parameters
    ----------
    X : ndarray (n, d) float64
    y : ndarray (n,)
    models : sequence of str
        Names from :data:`~fastgen.cli.models.CURVE_MODELS`.
    splits : int
        Number of random splits.
    sizes : sequence of int
        Training-set sizes, each in [1, n − round(test_size·n)].
    test_size : float
        Fraction of rows held out for testing.
    seed : int
    jobs : int, default 1
        Worker processes (1: run in this process).
    progress : bool, default False
        Show a progress bar on stderr (if tqdm is installed).

    Returns
    -------
    errors : ndarray (splits, n_models, n_sizes)
        Test error rates; NaN where a fit failed.
    failures : list of (split, model index, size index, message)
    n_warned : ndarray (n_models,)
        Number of fits per model that raised a warning.
    """
    job = CurveJob(X=X, y=y, models=tuple(models), sizes=tuple(sizes),
                   n_test=n_test_rows(test_size, X.shape[0]), seed=seed, kind=feature_kind(X))
    results = [None] * splits
    bar = progress_bar(splits, progress)
    try:
        with compile_status(bar):
            if jobs == 1:
                restore = single_thread()
                try:
                    for i in range(splits):
                        with compile_clock() as clock:
                            results[i] = curve_split(job, i)
                        if bar is not None:
                            discount_compilation(bar, clock.seconds)
                            clear_status(bar)
                            bar.update()
                finally:
                    restore()
            else:
                _run_pool(job, splits, jobs, results, bar)
    finally:
        if bar is not None:
            bar.close()
    errors = np.stack([r[0] for r in results])
    failures = [(i, im, jm, msg) for i, r in enumerate(results) for im, jm, msg in r[1]]
    n_warned = np.sum([r[2] for r in results], axis=0)
    return errors, failures, n_warned


def _run_pool(job, splits, jobs, results, bar):
    """Run the splits in ``jobs`` worker processes, filling ``results``."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # spawn: forking a process whose numba/OpenMP thread pools have started is unsafe,
    # and spawn is the same on every platform.
    ctx = multiprocessing.get_context("spawn")
    messages = ctx.Queue()
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                                 initargs=(job, messages)) as ex:
            futures = {ex.submit(_worker_split, i): i for i in range(splits)}
            pending = set(futures)
            while pending:
                done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                _relay(messages)
                for fut in done:
                    results[futures[fut]] = fut.result()
                    if bar is not None:
                        # the workers compile side by side: their compile time over jobs
                        discount_compilation(bar, results[futures[fut]][3] / jobs)
                        clear_status(bar)
                        bar.update()
            _relay(messages)
    finally:
        messages.close()


def summarise(errors):
    """Mean and standard error over splits, ignoring failed (NaN) fits.

    Parameters
    ----------
    errors : ndarray (splits, n_models, n_sizes)

    Returns
    -------
    mean, se : ndarray (n_models, n_sizes)
        ``se = std(ddof=1) / sqrt(n_ok)``; NaN where fewer than two fits succeeded
        (mean NaN where none did).
    n_ok : ndarray (n_models, n_sizes) int
    """
    ok = np.isfinite(errors)
    n_ok = ok.sum(axis=0)
    filled = np.where(ok, errors, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=0) / n_ok
        dev = np.where(ok, errors - mean, 0.0)
        var = (dev ** 2).sum(axis=0) / (n_ok - 1)
        se = np.sqrt(var / n_ok)
    mean = np.where(n_ok > 0, mean, np.nan)
    se = np.where(n_ok > 1, se, np.nan)
    return mean, se, n_ok
