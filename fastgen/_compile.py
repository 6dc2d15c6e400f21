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

__all__ = ["FAMILIES", "DTYPES", "CompiledFamily", "CompileReport", "compile",
           "cache_location", "run_family"]

#: Family name -> the public functions its warm-up runs (the help text lists them).
FAMILIES = {
    "gda": "fit_gda (every covariance and shrinkage), the scoring functions, "
           "lda_transform, class_moments/merge_moments/gda_from_moments",
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

_SCORES = ("joint_log_likelihood", "predict_log_proba", "predict_proba", "predict")


# ------------------------------------------------------------------ the warm-up calls

def _rng(seed):
    import numpy as np

    return np.random.default_rng(seed)


def _dense(n, d, K, dtype, seed=0):
    """Gaussian classes: X (n, d) of ``dtype``, int64 labels 0..K-1."""
    import numpy as np

    rng = _rng(seed)
    y = np.arange(n) % K
    X = rng.standard_normal((n, d)) + 0.7 * y[:, None] * (np.arange(d) % 3 == 0)
    return X.astype(dtype), y.astype(np.int64)


def _counts(n, d, K, dtype, seed=0):
    """Non-negative integer counts, dense (n, d) of ``dtype``, and int64 labels."""
    import numpy as np

    rng = _rng(seed)
    y = np.arange(n) % K
    X = rng.poisson(0.6 + 0.4 * ((np.arange(d)[None, :] + y[:, None]) % 3), size=(n, d))
    return X.astype(dtype), y.astype(np.int64)


def _csr_variants(X):
    """X as CSR with int32 and with int64 index arrays."""
    import numpy as np
    import scipy.sparse as sp

    a = sp.csr_matrix(X)
    b = a.copy()
    b.indices = b.indices.astype(np.int64)
    b.indptr = b.indptr.astype(np.int64)
    a.indices = a.indices.astype(np.int32)
    a.indptr = a.indptr.astype(np.int32)
    return a, b


def _labels(y):
    """The label encodings real data brings: int64, int32, bool (for two classes)."""
    import numpy as np

    out = [y, y.astype(np.int32)]
    if y.max() == 1:
        out.append(y.astype(bool))
    return out


def _weights(n, seed=1):
    return _rng(seed).uniform(0.5, 2.0, size=n)


def _score_all(fg, params, X):
    for name in _SCORES:
        getattr(fg, name)(params, X)


def _with_holes(X, seed=3):
    """X (dense) with a fifth of its entries NaN, the first row entirely."""
    import numpy as np

    A = np.array(X, dtype=X.dtype)
    hole = _rng(seed).random(A.shape) < 0.2
    hole[0] = True
    A[hole] = np.nan
    return A


def _score_missing(fg, params, X):
    """Every score with ``nan_policy="marginalize"`` on X with holes (dense; CSR too
    where the model takes it)."""
    import scipy.sparse as sp

    A = _with_holes(X.toarray() if sp.issparse(X) else X)
    for form in ((A, sp.csr_matrix(A)) if params.accepts_sparse else (A,)):
        for name in _SCORES:
            getattr(fg, name)(params, form, nan_policy="marginalize")


def _incomplete(fg, fit, X, y, **options):
    """The fits of incomplete data: missing features, unlabelled rows, both (the
    unlabelled rows are the second half of X)."""
    h = X.shape[0] // 2
    A = _with_holes(X)
    fit(A, y, nan_policy="marginalize", **options)
    fit(X[:h], y[:h], unlabeled=X[h:], **options)
    fit(A[:h], y[:h], unlabeled=A[h:], nan_policy="marginalize", **options)


def _gda(fg, dtype):
    for n, d, K in ((40, 3, 2), (60, 5, 3), (400, 40, 5), (900, 80, 4)):
        X, y = _dense(n, d, K, dtype)
        w = _weights(n)
        for cov in ("pooled", "per_class", "diagonal", "pooled_diagonal"):
            for yy in _labels(y):
                p = fg.fit_gda(X, yy, cov)
            _score_all(fg, p, X)
            fg.fit_gda(X, y, cov, sample_weight=w)
            fg.fit_gda(X, y, cov, reg=0.1, unbiased=True)
            shrinkages = (0.2, "ledoit-wolf", "oas") if cov in ("pooled", "per_class") else ()
            for s in shrinkages:
                fg.fit_gda(X, y, cov, shrinkage=s, sample_weight=w)
                fg.fit_gda(X, y, cov, shrinkage=s)
            _score_missing(fg, p, X)
        p = fg.fit_gda(X, y, "pooled")
        fg.linear_discriminant(p)
        fg.lda_transform(p, X)
        for kind in ("pooled", "per_class", "diagonal"):
            h = n // 2
            a = fg.class_moments(X[:h], y[:h], kind=kind)
            b = fg.class_moments(X[h:], y[h:], kind=kind, sample_weight=w[h:])
            fg.gda_from_moments(fg.merge_moments(a, b), kind)
    X, y = _dense(600, 6, 3, dtype)  # enough labelled rows per class for every kind
    for cov in ("pooled", "per_class", "diagonal", "pooled_diagonal"):
        _incomplete(fg, lambda *a, cov=cov, **k: fg.fit_gda(*a, cov, **k), X, y)


def _gaussian_nb(fg, dtype):
    for n, d, K in ((40, 3, 2), (60, 5, 3), (300, 20, 5), (600, 80, 8)):
        X, y = _dense(n, d, K, dtype)
        w = _weights(n)
        for yy in _labels(y):
            p = fg.fit_gaussian_nb(X, yy)
        _score_all(fg, p, X)
        _score_all(fg, fg.fit_gaussian_nb(X, y, sample_weight=w), X)
        _score_missing(fg, p, X)
        _incomplete(fg, fg.fit_gaussian_nb, X, y)
        h = n // 2
        a = fg.nb_counts(X[:h], y[:h], "gaussian")
        b = fg.nb_counts(X[h:], y[h:], "gaussian", sample_weight=w[h:])
        fg.nb_from_counts(fg.merge_counts(a, b))


def _discrete_nb(model):
    def warm(fg, dtype):
        fit = getattr(fg, f"fit_{model}_nb")
        for n, d, K in ((40, 6, 2), (60, 30, 3), (300, 200, 6)):
            X, y = _counts(n, d, K, dtype)
            w = _weights(n)
            for Xv in (X, *_csr_variants(X)):
                for yy in _labels(y):
                    p = fit(Xv, yy)
                _score_all(fg, p, Xv)
                _score_all(fg, fit(Xv, y, sample_weight=w), Xv)
                if model == "bernoulli":
                    fit(Xv, y, binarize=0.5)
                    B = Xv.copy()
                    B[B.nonzero()] = 1  # already binary
                    _score_all(fg, fit(B, y, binarize=None), B)
                if model == "complement":
                    _score_all(fg, fit(Xv, y, norm=True), Xv)
                if model != "complement":
                    _score_missing(fg, p, Xv)
                    h = n // 2
                    fit(Xv[:h], y[:h], unlabeled=Xv[h:])
                    if model == "bernoulli":
                        _incomplete(fg, fit, Xv.toarray() if hasattr(Xv, "toarray") else Xv,
                                    y)
                    a = fg.nb_counts(Xv[:h], y[:h], model)
                    b = fg.nb_counts(Xv[h:], y[h:], model, sample_weight=w[h:])
                    fg.nb_from_counts(fg.merge_counts(a, b))
    return warm


def _categorical_nb(fg, dtype):
    import numpy as np

    for n, d, K, m in ((40, 3, 2, 3), (300, 12, 5, 9)):
        rng = _rng(2)
        y = (np.arange(n) % K).astype(np.int64)
        X = ((rng.integers(0, m, size=(n, d)) + y[:, None]) % m).astype(dtype)
        w = _weights(n)
        for Xv in (X, *_csr_variants(X)):
            for yy in _labels(y):
                p = fg.fit_categorical_nb(Xv, yy)
            _score_all(fg, p, Xv)
            _score_all(fg, fg.fit_categorical_nb(Xv, y, sample_weight=w), Xv)
            _score_missing(fg, p, Xv)
            fg.fit_categorical_nb(Xv[: n // 2], y[: n // 2], unlabeled=Xv[n // 2:])
        _incomplete(fg, fg.fit_categorical_nb, X, y)


def _overlapping(n, d, K, dtype, seed=0):
    """Classes that a logistic model cannot separate: labels drawn from a softmax of
    weak linear scores."""
    import numpy as np

    rng = _rng(seed)
    X = rng.standard_normal((n, d))
    scores = 0.5 * X[:, :K] if d >= K else np.zeros((n, K))
    y = np.argmax(scores + rng.gumbel(size=(n, K)), axis=1)
    y[:K] = np.arange(K)  # every class present
    return X.astype(dtype), y.astype(np.int64)


def _logistic(fg, dtype):
    import numpy as np

    for n, d, K in ((60, 3, 2), (80, 4, 3), (400, 40, 2), (800, 70, 4)):
        X, y = _overlapping(n, d, K, dtype)
        w = _weights(n)
        for yy in _labels(y):
            p = fg.fit_logistic(X, yy)
        _score_all(fg, p, X)
        fg.fit_logistic(X, y, l2=1.0, sample_weight=w)
        fg.fit_logistic(X, y, fit_intercept=False, l2=0.5)
        fg.irls_step(p, X, y)
        groups = np.arange(n) % 7
        for cov in ("nonrobust", "HC0", "HC1"):
            fg.logistic_inference(p, X, y, cov_type=cov)
        fg.logistic_inference(p, X, y, cov_type="cluster", groups=groups)
        fg.logistic_inference(p, X, y, sample_weight=w)
        if d <= 4 and K == 2:
            fg.logistic_inference(p, X, y, ci="profile")
        for Xs in _csr_variants(X):
            ps = fg.fit_logistic(Xs, y, l2=0.5)
            _score_all(fg, ps, Xs)
            fg.fit_logistic(Xs, y, l2=0.5, sample_weight=w)
            fg.logistic_inference(fg.fit_logistic(Xs, y), Xs, y)
            fg.logistic_inference(fg.fit_logistic(Xs, y), Xs, y, cov_type="cluster",
                                  groups=groups)
    # wide sparse problems: conjugate gradients (binary) and Newton-CG (multinomial)
    for K in (2, 3):
        Xc, y = _counts(150, 2100, K, dtype)
        for Xs in _csr_variants(Xc):
            ps = fg.fit_logistic(Xs, y, l2=1.0, max_iter=3)
            _score_all(fg, ps, Xs)
    fg.detect_separation(*_dense(40, 3, 2, dtype))


def _firth(fg, dtype):
    import numpy as np

    for n, d in ((40, 2), (120, 6)):
        X, y = _overlapping(n, d, 2, dtype)
        w = _weights(n)
        p = fg.fit_logistic(X, y, penalty="firth")
        fg.fit_logistic(X, y.astype(bool), penalty="firth", sample_weight=w)
        _score_all(fg, p, X)
        fg.logistic_inference(p, X, y)
        fg.logistic_inference(p, X, y, ci="profile")
        for Xs in _csr_variants(X):
            fg.logistic_inference(fg.fit_logistic(Xs, y, penalty="firth"), Xs, y)
        # separated classes: the Newton matrix becomes l*'s own Hessian (the curvature
        # pass and its packed products)
        ys = (X[:, 0] > 0).astype(np.int64)
        fg.logistic_inference(fg.fit_logistic(X, ys, penalty="firth"), X, ys)
        yk = (np.arange(n) % 3).astype(np.int64)
        fg.logistic_inference(fg.fit_logistic(X, yk, penalty="firth"), X, yk)


_WARM = {
    "gda": _gda,
    "gaussian_nb": _gaussian_nb,
    "bernoulli_nb": _discrete_nb("bernoulli"),
    "multinomial_nb": _discrete_nb("multinomial"),
    "complement_nb": _discrete_nb("complement"),
    "categorical_nb": _categorical_nb,
    "logistic": _logistic,
    "firth": _firth,
}

# Longest first, so that a pool of workers finishes together.
_ORDER = ("logistic", "firth", "gda", "gaussian_nb", "categorical_nb", "multinomial_nb",
          "bernoulli_nb", "complement_nb")

# Families that compile many of the same kernels (dtype-independent ones for both dtypes
# of a family, e.g. the inference finishing steps; the logistic data passes for Firth):
# two tasks of one group running at once would both compile them.
_GROUP = {"logistic": "logistic", "firth": "logistic", "gda": "gaussian",
          "gaussian_nb": "gaussian", "categorical_nb": "categorical",
          "multinomial_nb": "discrete", "bernoulli_nb": "discrete",
          "complement_nb": "discrete"}


def _next_task(pending, running):
    """The task to start next: the first pending one (longest first) whose group has no
    task running, else the first pending one (a worker never waits)."""
    busy = {_GROUP[f] for f, _ in running}
    for i, (f, _) in enumerate(pending):
        if _GROUP[f] not in busy:
            return pending.pop(i)
    return pending.pop(0)


def run_family(family: str, dtype: str) -> dict:
    """Run the warm-up of one family and dtype in this process (every kernel it needs is
    loaded from the cache or compiled into it).

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
            _WARM[family](fastgen, np.dtype(dtype).type)
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


def _worker(family, dtype, announce=False):
    """A pool task: :func:`run_family`, any failure returned as text; with
    ``announce``, a line on stderr when it starts (flushed: seen at once in a log)."""
    if announce and sys.stderr is not None:
        _line(sys.stderr, f"fastgen compile: {family} {dtype}: started")
    try:
        return run_family(family, dtype)
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
        dtypes of a family, logistic and Firth) do not run at once while another task
        can, so those kernels compile once.
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
    tasks = [(f, d) for f in sorted(fams, key=_ORDER.index) for d in dts]
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
                    f, d = _next_task(pending, running.values())
                    running[ex.submit(_worker, f, d, announce)] = (f, d)
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
