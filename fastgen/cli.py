"""The ``fastgen`` command line.

Commands
--------
``fastgen demo``
    Fit pooled (LDA) and per-class (QDA) Gaussian discriminant analysis on the bundled
    iris data and print the parameters, training accuracy and confusion tables.
``fastgen curve``
    Learning curves of generative and discriminative classifiers, after Ng & Jordan (2001):
    mean test error ± standard error against the training-set size m, as a table and a
    PNG plot.
``fastgen fit`` / ``fastgen predict`` / ``fastgen info``
    Fit a model on a CSV file and save its params; predict for a CSV file; describe a
    saved params file.

User mistakes (a missing file, an unknown column or data set, non-numeric data, invalid
options) end with one line ``fastgen: error: ...`` on stderr and exit status 2, never a
traceback.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import textwrap
import warnings
import zipfile

import numpy as np

__all__ = ["main", "build_parser"]

EXIT_USAGE = 2

#: Models of ``fastgen curve``.  The Gaussian models and logistic regression see features
#: standardised with the training set's mean and standard deviation (a per-feature affine
#: map: it leaves unregularised GDA, naive Bayes and logistic predictions unchanged and puts
#: the small regularisers below in units of each feature's spread).
CURVE_MODELS = ("nb", "gda", "lda", "qda", "logistic")
CURVE_REG = 1e-3        # lda, gda:  Σ ← (1 − reg)·Σ + reg·I
CURVE_QDA_REG = 1e-2    # qda:       Σ_k ← (1 − reg)·Σ_k + reg·I
CURVE_L2 = 1e-2         # logistic:  ½·l2·‖w‖² (intercept not penalised)
CURVE_ALPHA = 1.0       # Bernoulli / multinomial NB: Laplace smoothing
CURVE_VAR_SMOOTHING = 1e-9  # Gaussian NB, as scikit-learn

_MODEL_HELP = {
    "nb": "naive Bayes matching the features: Bernoulli (binary), multinomial "
          "(non-negative integer counts) or Gaussian (otherwise)",
    "gda": f"GDA, shared variances (covariance='pooled_diagonal', "
           f"reg={CURVE_REG:g}): the generative partner of logistic",
    "lda": f"GDA, one full covariance (covariance='pooled', reg={CURVE_REG:g})",
    "qda": f"GDA, per-class covariances (covariance='per_class', reg={CURVE_QDA_REG:g})",
    "logistic": f"logistic regression by IRLS, l2={CURVE_L2:g}",
}

FIT_MODELS = ("lda", "qda", "gda", "nb", "gaussian_nb", "bernoulli_nb", "multinomial_nb",
              "logistic")

#: Data sets of ``fastgen curve --dataset``; all but the bundled iris need scikit-learn.
DATASETS = ("breast_cancer", "iris", "wine", "digits")

_NB_NAME = {"binary": "bernoulli", "counts": "multinomial", "continuous": "gaussian"}


class CLIError(Exception):
    """A user mistake: reported as one ``fastgen: error:`` line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, like every other CLI error."""

    def error(self, message):
        hint = f" (see '{self.prog} --help')"
        self.exit(EXIT_USAGE, f"fastgen: error: {message}{hint}\n")


# --------------------------------------------------------------------------- data input


def _parse_label(values):
    """Labels as int, else float, else str (so '1' and '1.0' stay what they look like)."""
    for kind in (int, float):
        try:
            return np.array([kind(v) for v in values])
        except ValueError:
            continue
    return np.array(values, dtype=str)


def read_csv(path):
    """Read a CSV file with a header row.

    Parameters
    ----------
    path : str
        The file.

    Returns
    -------
    header : list of str
        The column names.
    rows : list of list of str
        The data rows, each with as many fields as the header.

    Raises
    ------
    CLIError
        If the file is missing or unreadable, empty, has a repeated or empty column name,
        or a row with the wrong number of fields.
    """
    if not os.path.exists(path):
        raise CLIError(f"file {path!r} does not exist")
    if os.path.isdir(path):
        raise CLIError(f"{path!r} is a directory, not a CSV file")
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = [r for r in csv.reader(f) if r]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CLIError(f"cannot read {path!r}: {exc}") from None
    if not rows:
        raise CLIError(f"{path!r} is empty (expected a header row and data rows)")
    header = [h.strip() for h in rows[0]]
    for i, h in enumerate(header):
        if not h:
            raise CLIError(f"{path!r}: column {i + 1} of the header has no name")
    seen = set()
    for h in header:
        if h in seen:
            raise CLIError(f"{path!r}: column name {h!r} appears twice in the header")
        seen.add(h)
    body = rows[1:]
    if not body:
        raise CLIError(f"{path!r} has a header but no data rows")
    for i, r in enumerate(body):
        if len(r) != len(header):
            raise CLIError(f"{path!r}, line {i + 2}: {len(r)} fields, but the header has "
                           f"{len(header)}")
    return header, body


def _column_index(header, name, path):
    try:
        return header.index(name)
    except ValueError:
        cols = ", ".join(header[:20]) + (", ..." if len(header) > 20 else "")
        raise CLIError(f"column {name!r} not found in {path!r} (columns: {cols})") from None


def _numeric(rows, cols, header, path):
    """Convert the given columns of ``rows`` to float64, naming any bad cell."""
    try:  # fast path; on failure, the loop below finds and names the bad cell
        X = np.array([[r[j] for j in cols] for r in rows], dtype=str).astype(np.float64)
        if np.all(np.isfinite(X)):
            return X
    except ValueError:
        pass
    X = np.empty((len(rows), len(cols)))
    for i, r in enumerate(rows):
        for jj, j in enumerate(cols):
            s = r[j].strip()
            try:
                v = float(s)
            except ValueError:
                what = "an empty value" if not s else f"non-numeric value {s!r}"
                raise CLIError(f"{path!r}, line {i + 2}, column {header[j]!r}: {what} "
                               f"(features must be numbers)") from None
            if not math.isfinite(v):
                raise CLIError(f"{path!r}, line {i + 2}, column {header[j]!r}: value {s!r} "
                               f"is not finite")
            X[i, jj] = v
    return X


def load_csv(path, target):
    """Features and labels from a CSV file: every column but ``target`` is a feature.

    Parameters
    ----------
    path : str
    target : str
        The name of the label column.

    Returns
    -------
    X : ndarray (n, d) float64
    y : ndarray (n,) int, float or str labels
    feature_names : list of str
    """
    header, rows = read_csv(path)
    t = _column_index(header, target, path)
    cols = [j for j in range(len(header)) if j != t]
    if not cols:
        raise CLIError(f"{path!r} has no feature columns besides the target {target!r}")
    X = _numeric(rows, cols, header, path)
    y = _parse_label([r[t].strip() for r in rows])
    if y.dtype.kind == "U" and np.any(y == ""):
        i = int(np.flatnonzero(y == "")[0])
        raise CLIError(f"{path!r}, line {i + 2}: the target {target!r} is empty")
    return X, y, [header[j] for j in cols]


def load_dataset(spec):
    """Load a named data set, optionally reduced to two classes (``"digits:3v8"``).

    Parameters
    ----------
    spec : str
        ``NAME``, ``NAME:AvB`` or ``NAME:A,B`` with NAME one of :data:`DATASETS` and A, B
        two class labels as printed (``digits:3v8``; labels containing a "v" need the
        comma: ``iris:versicolor,virginica``).

    Returns
    -------
    X : ndarray (n, d) float64
    y : ndarray (n,)
    feature_names : list of str
    title : str
    """
    name, _, pair = spec.partition(":")
    if name not in DATASETS:
        raise CLIError(f"unknown data set {name!r} (choose from {', '.join(DATASETS)}, "
                       f"or pass --csv PATH --target COL)")
    if name == "iris":
        from .datasets import load_iris

        X, y, names = load_iris()
    else:
        try:
            import sklearn.datasets as skd
        except ImportError:
            raise CLIError(f"data set {name!r} needs scikit-learn: "
                           f"pip install 'fastgen[cli]'") from None
        bunch = getattr(skd, f"load_{name}")()
        X = np.asarray(bunch.data, dtype=np.float64)
        if name == "digits":
            y = np.asarray(bunch.target)
        else:
            y = np.asarray(bunch.target_names)[bunch.target].astype(str)
        names = [str(f) for f in bunch.feature_names]
    if pair:
        parts = pair.split(",") if "," in pair else pair.split("v")
        labels = [str(c) for c in np.unique(y)]
        if len(parts) != 2 or parts[0] == parts[1] or not all(p in labels for p in parts):
            raise CLIError(f"cannot read the class pair {pair!r} of {name!r}: write two "
                           f"different labels as AvB or A,B, from {', '.join(labels)}")
        keep = np.isin(y.astype(str), parts)
        X, y = X[keep], y[keep]
    return X, y, names, spec


def feature_kind(X):
    """Classify features as ``"binary"``, ``"counts"`` or ``"continuous"``.

    Binary: every value is 0 or 1.  Counts: every value is a non-negative integer.
    Otherwise continuous.  These pick the naive Bayes model (Bernoulli, multinomial,
    Gaussian).
    """
    if np.all((X == 0) | (X == 1)):
        return "binary"
    if np.all(X >= 0) and np.all(X == np.round(X)):
        return "counts"
    return "continuous"


# --------------------------------------------------------------------------- curve


def _standardise(Xtr, Xte):
    mu = Xtr.mean(axis=0)
    sd = Xtr.std(axis=0)
    sd[~(sd > 1e-12 * (1.0 + np.abs(mu)))] = 1.0
    return (Xtr - mu) / sd, (Xte - mu) / sd


def _fit_curve_model(model, kind, Xtr, ytr):
    import fastgen

    if model == "nb":
        if kind == "binary":
            return fastgen.fit_bernoulli_nb(Xtr, ytr, alpha=CURVE_ALPHA)
        if kind == "counts":
            return fastgen.fit_multinomial_nb(Xtr, ytr, alpha=CURVE_ALPHA)
        return fastgen.fit_gaussian_nb(Xtr, ytr, var_smoothing=CURVE_VAR_SMOOTHING)
    if model == "gda":
        return fastgen.fit_gda(Xtr, ytr, "pooled_diagonal", reg=CURVE_REG)
    if model == "lda":
        return fastgen.fit_gda(Xtr, ytr, "pooled", reg=CURVE_REG)
    if model == "qda":
        return fastgen.fit_gda(Xtr, ytr, "per_class", reg=CURVE_QDA_REG)
    return fastgen.fit_logistic(Xtr, ytr, l2=CURVE_L2)


def _nested_order(rng, y_pool, per_class=2):
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


_STATE = {}


def _init_worker(state):
    """Process-pool initialiser: keep the data once per worker; one thread per worker."""
    _STATE.update(state)
    _single_thread()


def _single_thread():
    """Run numba and BLAS on one thread; return a callable that restores them.

    Curve fits are small (at most a few thousand rows): launching a parallel region costs
    more than the work, and on a busy machine far more (measured: 0.1 ms per fit on one
    thread against ~100 ms with two threads at a load of 9 on 2 cores).  Parallelism comes
    from ``--jobs`` instead, across splits.
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


def _curve_split(split):
    """Test errors of every model at every size for one random split.

    Returns
    -------
    errors : ndarray (n_models, n_sizes), NaN where a fit failed
    failures : list of (model index, size index, message)
    n_warned : ndarray (n_models,) fits that raised a warning (e.g. ConvergenceWarning)
    """
    import fastgen

    s = _STATE
    X, y, sizes, models, kind = s["X"], s["y"], s["sizes"], s["models"], s["kind"]
    rng = np.random.default_rng([s["seed"], split])
    perm = rng.permutation(X.shape[0])
    test, pool = perm[:s["n_test"]], perm[s["n_test"]:]
    order = pool[_nested_order(rng, y[pool])]
    Xte, yte = X[test], y[test]
    errors = np.full((len(models), len(sizes)), np.nan)
    n_warned = np.zeros(len(models), dtype=int)
    failures = []
    for jm, m in enumerate(sizes):
        idx = order[:m]
        Xtr, ytr = X[idx], y[idx]
        Zs = None
        for im, model in enumerate(models):
            raw = model == "nb" and kind != "continuous"
            if not raw and Zs is None:
                Zs = _standardise(Xtr, Xte)
            A, B = (Xtr, Xte) if raw else Zs
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    params = _fit_curve_model(model, kind, A, ytr)
                    pred = fastgen.predict(params, B)
                if caught:
                    n_warned[im] += 1
                errors[im, jm] = float(np.mean(pred != yte))
            except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
                failures.append((im, jm, f"{type(exc).__name__}: {exc}"))
    return errors, failures, n_warned


def _sizes(spec, n_pool, K):
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


def _parse_models(spec):
    models = [m.strip() for m in spec.split(",") if m.strip()]
    if not models:
        raise CLIError("--models is empty")
    for m in models:
        if m not in CURVE_MODELS:
            raise CLIError(f"unknown model {m!r} in --models (choose from "
                           f"{', '.join(CURVE_MODELS)})")
    if len(set(models)) != len(models):
        raise CLIError(f"--models lists a model twice: {spec!r}")
    return models


def _progress(total, enabled):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="splits", unit="split", file=sys.stderr, leave=False)


def run_curve(X, y, *, models, splits, sizes, test_size, seed, jobs, progress):
    """Run the learning-curve experiment.

    For each split, a random test set of ``round(test_size·n)`` rows is held out; the
    rest, in a random order whose first rows hold two rows of every class, gives nested
    training sets (the first m rows, for each m in ``sizes``).  Every model is fitted on
    every training set and scored on the test set.  Split ``i`` draws its random numbers
    from ``numpy.random.default_rng([seed, i])``, so results do not depend on ``jobs``.

    Returns
    -------
    errors : ndarray (splits, n_models, n_sizes)
        Test error rates; NaN where a fit failed.
    failures : list of (split, model index, size index, message)
    n_warned : ndarray (n_models,)
        Number of fits per model that raised a warning.
    """
    state = {"X": X, "y": y, "sizes": sizes, "models": models, "kind": feature_kind(X),
             "seed": seed, "n_test": _n_test(test_size, X.shape[0])}
    results = [None] * splits
    bar = _progress(splits, progress)
    try:
        if jobs == 1:
            _STATE.update(state)
            restore = _single_thread()
            try:
                for i in range(splits):
                    results[i] = _curve_split(i)
                    if bar is not None:
                        bar.update()
            finally:
                restore()
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor, as_completed

            # spawn: forking a process whose numba/OpenMP thread pools have started is
            # unsafe, and spawn is the same on every platform.
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx,
                                     initializer=_init_worker,
                                     initargs=(state,)) as ex:
                futures = {ex.submit(_curve_split, i): i for i in range(splits)}
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    if bar is not None:
                        bar.update()
    finally:
        if bar is not None:
            bar.close()
    errors = np.stack([r[0] for r in results])
    failures = [(i, im, jm, msg) for i, r in enumerate(results) for im, jm, msg in r[1]]
    n_warned = np.sum([r[2] for r in results], axis=0)
    return errors, failures, n_warned


def _n_test(test_size, n):
    n_test = int(round(test_size * n))
    if not 1 <= n_test <= n - 2:
        raise CLIError(f"--test-size {test_size:g} leaves {n_test} test rows and "
                       f"{n - n_test} training rows of {n}; need at least 1 and 2")
    return n_test


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


def _model_label(model, kind):
    return f"nb ({_NB_NAME[kind]})" if model == "nb" else model


def _fmt(mean, se):
    if not np.isfinite(mean):
        return "failed"
    s = f"{mean:.4f}"
    return s + (f" ± {se:.4f}" if np.isfinite(se) else "")


def _curve(args, out=None):
    out = sys.stdout if out is None else out
    models = _parse_models(args.models)
    if args.splits < 1:
        raise CLIError(f"--splits must be at least 1; got {args.splits}")
    if args.jobs < 1:
        raise CLIError(f"--jobs must be at least 1; got {args.jobs}")
    if not 0 < args.test_size < 1:
        raise CLIError(f"--test-size must be a fraction in (0, 1); got {args.test_size:g}")
    if args.csv is not None:
        if args.target is None:
            raise CLIError("--csv needs --target COL (the name of the label column)")
        X, y, _names = load_csv(args.csv, args.target)
        title = os.path.basename(args.csv)
    else:
        if args.target is not None:
            raise CLIError("--target goes with --csv, not --dataset")
        X, y, _names, title = load_dataset(args.dataset)
    classes, counts = np.unique(y, return_counts=True)
    if classes.shape[0] < 2:
        raise CLIError(f"{title}: the target has a single class ({classes[0]!r}); "
                       f"a classifier needs at least two")
    n, d = X.shape
    n_test = _n_test(args.test_size, n)
    sizes = _sizes(args.sizes, n - n_test, classes.shape[0])
    if args.plot is not None:
        _check_plot_possible(args.plot)
    kind = feature_kind(X)

    errors, failures, n_warned = run_curve(
        X, y, models=models, splits=args.splits, sizes=sizes, test_size=args.test_size,
        seed=args.seed, jobs=args.jobs,
        progress=not args.no_progress and sys.stderr.isatty())
    mean, se, n_ok = summarise(errors)

    cls = ", ".join(f"{c}: {k}" for c, k in zip(classes, counts, strict=True))
    print(f"{title}: n={n}, d={d}, {classes.shape[0]} classes ({cls}); {kind} features",
          file=out)
    print(f"{args.splits} random splits (seed {args.seed}): {n_test} test rows, nested "
          f"training sets of m rows from the other {n - n_test}", file=out)
    labels = [_model_label(m, kind) for m in models]
    print("models:", file=out)
    for m, lab in zip(models, labels, strict=True):
        help_ = _MODEL_HELP[m] if m != "nb" else f"{_NB_NAME[kind].capitalize()} naive Bayes"
        print(f"  {lab:<{max(map(len, labels))}}  {help_}", file=out)
    print(f"\ntest error, mean ± standard error over {args.splits} splits", file=out)
    rows = [[m, *(_fmt(mean[i, j], se[i, j]) for i in range(len(models)))]
            for j, m in enumerate(sizes)]
    _print_table(rows, ["m", *labels], out)
    if failures or n_warned.any():
        print(file=out)
    if failures:
        for im in range(len(models)):
            mine = [f for f in failures if f[1] == im]
            if not mine:
                continue
            at = ", ".join(f"m={sizes[j]}: {args.splits - n_ok[im, j]}"
                           for j in range(len(sizes)) if n_ok[im, j] < args.splits)
            print(f"{labels[im]}: {len(mine)} failed fits recorded as NaN and left out of "
                  f"the mean ({at}); first: {mine[0][3]}", file=out)
    for im in np.flatnonzero(n_warned):
        print(f"{labels[im]}: {n_warned[im]} of {args.splits * len(sizes)} fits warned "
              f"(e.g. not converged)", file=out)
    if args.plot is not None:
        _plot(args.plot, sizes, mean, se, labels, title, n, d, args.splits)
        print(f"\nplot written to {args.plot}", file=out)
    return 0


def _check_plot_possible(path):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CLIError("--plot needs matplotlib: pip install 'fastgen[cli]'") from None
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise CLIError(f"cannot write the plot {path!r}: directory {parent!r} does not exist")


def _plot(path, sizes, mean, se, labels, title, n, d, splits):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    m = np.asarray(sizes, dtype=float)
    for i, lab in enumerate(labels):
        mu, s = mean[i], np.nan_to_num(se[i])
        line, = ax.plot(m, mu, marker="o", markersize=3, label=lab)
        ax.fill_between(m, mu - s, mu + s, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xscale("log")
    ax.set_xticks(m, [str(v) for v in sizes])
    ax.minorticks_off()
    ax.set_xlabel("training set size m")
    ax.set_ylabel("test error")
    ax.set_title(f"{title} (n={n}, d={d}): mean test error ± s.e. over {splits} splits")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(path, format="png")
    except OSError as exc:
        raise CLIError(f"cannot write the plot {path!r}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)


# --------------------------------------------------------------------------- fit / predict


def _sidecar(path):
    return os.fspath(path) + ".json"


def _fit_model(model, X, y, args):
    import fastgen

    if model == "nb":
        model = {"binary": "bernoulli_nb", "counts": "multinomial_nb",
                 "continuous": "gaussian_nb"}[feature_kind(X)]
    if model in ("lda", "qda", "gda"):
        cov = {"lda": "pooled", "qda": "per_class", "gda": "pooled_diagonal"}[model]
        return model, fastgen.fit_gda(X, y, cov, reg=args.reg)
    if model == "gaussian_nb":
        return model, fastgen.fit_gaussian_nb(X, y, var_smoothing=args.var_smoothing)
    if model == "bernoulli_nb":
        return model, fastgen.fit_bernoulli_nb(X, y, alpha=args.alpha)
    if model == "multinomial_nb":
        return model, fastgen.fit_multinomial_nb(X, y, alpha=args.alpha)
    return model, fastgen.fit_logistic(X, y, l2=args.l2)


def _fit(args, out=None):
    out = sys.stdout if out is None else out
    import fastgen

    X, y, names = load_csv(args.data, args.target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, params = _fit_model(args.model, X, y, args)
    for w in caught:
        print(f"fastgen: warning: {w.message}", file=sys.stderr)
    path = os.fspath(args.output)
    if not path.endswith(".npz"):
        path += ".npz"
    try:
        fastgen.save_params(path, params)
        with open(_sidecar(path), "w", encoding="utf-8") as f:
            json.dump({"model": model, "target": args.target, "features": names}, f,
                      indent=1)
    except OSError as exc:
        raise CLIError(f"cannot write {path!r}: {exc.strerror or exc}") from None
    print(f"fitted {model} on {X.shape[0]} rows, {X.shape[1]} features, "
          f"{params.n_classes} classes; wrote {path} and {_sidecar(path)}", file=out)
    return 0


def _load_params(path):
    import fastgen

    if not os.path.exists(path):
        raise CLIError(f"file {path!r} does not exist")
    if not zipfile.is_zipfile(path):
        raise CLIError(f"{path!r} is not a fastgen params file (not an .npz archive)")
    params = fastgen.load_params(path)
    meta = None
    side = _sidecar(path)
    if os.path.exists(side):
        try:
            with open(side, encoding="utf-8") as f:
                meta = json.load(f)
            if not isinstance(meta.get("features"), list):
                raise ValueError("no feature list")
        except (OSError, ValueError, AttributeError) as exc:
            raise CLIError(f"cannot read {side!r}: {exc}") from None
    return params, meta


def _predict(args, out=None):
    out = sys.stdout if out is None else out
    import fastgen

    params, meta = _load_params(args.params)
    header, rows = read_csv(args.data)
    d = params.n_features_in
    if meta is not None:
        cols = [_column_index(header, name, args.data) for name in meta["features"]]
    else:
        if len(header) != d:
            raise CLIError(f"{args.params!r} has no {_sidecar(args.params)!r} naming its "
                           f"features, so every column of {args.data!r} must be a feature, "
                           f"in order: expected {d} columns, found {len(header)}")
        cols = list(range(len(header)))
    X = _numeric(rows, cols, header, args.data)
    if X.shape[1] != d:
        raise CLIError(f"{args.params!r} expects {d} features; found {X.shape[1]}")
    pred = fastgen.predict(params, X)
    proba = fastgen.predict_proba(params, X) if args.proba else None
    name = (meta or {}).get("target") or "prediction"
    head = [name] + ([f"p({c})" for c in params.classes] if args.proba else [])
    try:
        f = open(args.output, "w", newline="", encoding="utf-8") if args.output else out
    except OSError as exc:
        raise CLIError(f"cannot write {args.output!r}: {exc.strerror or exc}") from None
    try:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(head)
        for i in range(X.shape[0]):
            row = [_label_str(pred[i])]
            if proba is not None:
                row += [repr(float(v)) for v in proba[i]]
            w.writerow(row)
    finally:
        if f is not out:
            f.close()
    return 0


def _label_str(v):
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return str(v)


def _info(args, out=None):
    out = sys.stdout if out is None else out
    import dataclasses

    params, meta = _load_params(args.params)
    print(f"type: {type(params).__name__}", file=out)
    if meta is not None:
        print(f"model: {meta.get('model')}", file=out)
    cov = getattr(params, "covariance_type", None)
    if cov is not None:
        print(f"covariance type: {cov}", file=out)
    print(f"classes ({params.n_classes}): "
          + ", ".join(_label_str(c) for c in params.classes), file=out)
    print(f"n_features: {params.n_features_in}", file=out)
    if meta is not None:
        print(f"target: {meta.get('target')}", file=out)
        print("features: " + ", ".join(meta["features"]), file=out)
    print("fields:", file=out)
    for fld in dataclasses.fields(params):
        v = getattr(params, fld.name)
        if isinstance(v, np.ndarray):
            desc = f"array {v.dtype} {tuple(v.shape)}"
        else:
            desc = repr(v)
        print(f"  {fld.name}: {desc}", file=out)
    return 0


# --------------------------------------------------------------------------- demo


def _confusion(y_true, y_pred, classes):
    idx = {c: i for i, c in enumerate(classes)}
    C = np.zeros((len(classes), len(classes)), dtype=int)
    for t, p in zip(y_true, y_pred):
        C[idx[t], idx[p]] += 1
    return C


def _print_table(rows, header, out):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(str(h).rjust(w) for h, w in zip(header, widths))
    print(line, file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for r in rows:
        print("  ".join(str(v).rjust(w) for v, w in zip(r, widths)), file=out)


def _demo(args, out=sys.stdout):
    import fastgen
    from fastgen.datasets import load_iris

    X, y, names = load_iris()
    print(f"Fisher's iris: {X.shape[0]} flowers, {X.shape[1]} features "
          f"({', '.join(names)})\n", file=out)
    np.set_printoptions(precision=4, suppress=True, linewidth=100)
    for cov, title in (("pooled", "pooled covariance (LDA)"),
                       ("per_class", "per-class covariance (QDA)")):
        params = fastgen.fit_gda(X, y, covariance=cov)
        pred = fastgen.predict(params, X)
        acc = float(np.mean(pred == y))
        print(f"== Gaussian discriminant analysis, {title} ==", file=out)
        print("priors: " + ", ".join(f"{c}={p:.4f}" for c, p in
                                    zip(params.classes, params.priors)), file=out)
        print("class means:", file=out)
        _print_table([[c, *(f"{v:.4f}" for v in m)] for c, m in
                      zip(params.classes, params.means)], ["class", *names], out)
        if cov == "pooled":
            print("pooled covariance Σ:", file=out)
            print(params.covariance, file=out)
            W, b = fastgen.linear_discriminant(params)
            print("linear discriminant w_k = Σ⁻¹μ_k (columns) and "
                  "b_k = -½μ_kᵀΣ⁻¹μ_k + log p_k:", file=out)
            _print_table([[c, *(f"{v:.3f}" for v in W[:, k]), f"{b[k]:.3f}"]
                          for k, c in enumerate(params.classes)],
                         ["class", *names, "b"], out)
        else:
            print("log|Σ_k|: " + ", ".join(f"{c}={v:.4f}" for c, v in
                                           zip(params.classes, params.log_det)), file=out)
        print(f"training accuracy: {acc:.4f} ({int(round(acc * len(y)))}/{len(y)})",
              file=out)
        C = _confusion(y, pred, params.classes)
        print("confusion table (rows: true class, columns: predicted):", file=out)
        _print_table([[c, *C[i]] for i, c in enumerate(params.classes)],
                     ["true \\ pred", *params.classes], out)
        print(file=out)
    return 0


_CURVE_EPILOG = f"""\
models:
  nb        naive Bayes matching the features: Bernoulli (binary), multinomial
            (non-negative integer counts) or Gaussian (otherwise)
  gda       {_MODEL_HELP['gda']}
  lda       {_MODEL_HELP['lda']}
  qda       {_MODEL_HELP['qda']}
  logistic  {_MODEL_HELP['logistic']}
The Gaussian models and logistic regression see features standardised with each training
set's mean and standard deviation (so the small reg and l2 are in units of each feature's
spread); naive Bayes for binary or count features sees the raw values.  Split i draws its
random numbers from seed and i alone, so --jobs N gives the same table as --jobs 1.  The
training rows of a split are put in a random order whose first rows hold two of every
class; the training set of size m is the first m rows (nested sets).  A fit that fails is
recorded as NaN, left out of the mean and reported below the table.

data sets: {', '.join(DATASETS)} (iris is bundled; the others come from
scikit-learn); NAME:AvB keeps two classes, e.g. digits:3v8.
"""

_PREDICT_EPILOG = """\
'fastgen fit' writes PARAMS (fastgen.save_params) and PARAMS.json, which names the target
and the feature columns; predict reads those columns by name, so DATA may hold them in any
order, with the target or other columns besides.  Without PARAMS.json (params saved from
Python) every column of DATA must be a feature, in the order used for fitting.  Output: a
CSV with a header and the predicted label per row ('--proba' adds one probability column
p(CLASS) per class, written with full precision).
"""


def _wrap(text):
    return textwrap.fill(text, width=88)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of the ``fastgen`` command."""
    fmt = argparse.RawDescriptionHelpFormatter
    parser = _Parser(
        prog="fastgen",
        description="Generative classifiers (GDA, naive Bayes) and IRLS logistic regression.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("demo", help="fit LDA and QDA on the bundled iris data and report")
    p.set_defaults(func=_demo)

    p = sub.add_parser(
        "curve", formatter_class=fmt, epilog=_CURVE_EPILOG,
        help="learning curves: generative vs discriminative (Ng & Jordan 2001)",
        description=_wrap("Test error against training-set size m for generative classifiers "
                    "and logistic regression: mean ± standard error over random splits, "
                    "printed as a table and optionally drawn as a PNG."))
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", metavar="NAME", help="a named data set (see below)")
    src.add_argument("--csv", metavar="PATH", help="a CSV file with a header row")
    p.add_argument("--target", metavar="COL", help="the label column of --csv")
    p.add_argument("--models", default=",".join(CURVE_MODELS),
                   help="comma-separated models (default: %(default)s)")
    p.add_argument("--splits", type=int, default=50,
                   help="random test/train splits (default: %(default)s)")
    p.add_argument("--sizes", default="geometric",
                   help="training-set sizes: 'geometric' or 'linear' (10 sizes from "
                        "max(2K, 4) to all training rows) or a list m1,m2,... "
                        "(default: %(default)s)")
    p.add_argument("--test-size", type=float, default=0.3,
                   help="fraction of rows held out for testing (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    p.add_argument("--plot", metavar="PNG", help="draw the curves into this PNG file")
    p.add_argument("--jobs", type=int, default=1,
                   help="worker processes, one split each at a time (default: %(default)s)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (none is shown when stderr is not a terminal)")
    p.set_defaults(func=_curve)

    p = sub.add_parser(
        "fit", formatter_class=fmt, epilog=_PREDICT_EPILOG,
        help="fit a model on a CSV file and save its params",
        description=_wrap("Fit a model on DATA (every column but the target is a feature) and "
                    "write its params.  lda, qda, gda: fit_gda with covariance 'pooled', "
                    "'per_class', 'pooled_diagonal'; nb: Bernoulli, multinomial or "
                    "Gaussian naive Bayes for binary, count or other features."))
    p.add_argument("--model", required=True, choices=FIT_MODELS)
    p.add_argument("data", metavar="DATA", help="CSV file with a header row")
    p.add_argument("--target", required=True, metavar="COL", help="the label column")
    p.add_argument("-o", "--output", required=True, metavar="PARAMS",
                   help="params file to write (.npz; PARAMS.json is written beside it)")
    p.add_argument("--reg", type=float, default=0.0,
                   help="lda/qda/gda: Σ ← (1 − reg)Σ + reg·I (default: %(default)s)")
    p.add_argument("--l2", type=float, default=0.0,
                   help="logistic: ridge penalty on the coefficients (default: %(default)s)")
    p.add_argument("--alpha", type=float, default=1.0,
                   help="Bernoulli/multinomial NB smoothing (default: %(default)s)")
    p.add_argument("--var-smoothing", type=float, default=1e-9,
                   help="Gaussian NB variance smoothing (default: %(default)s)")
    p.set_defaults(func=_fit)

    p = sub.add_parser("predict", formatter_class=fmt, epilog=_PREDICT_EPILOG,
                       help="predict labels (and probabilities) for a CSV file",
                       description="Predict a label for every row of DATA.")
    p.add_argument("params", metavar="PARAMS", help="params file written by 'fastgen fit'")
    p.add_argument("data", metavar="DATA", help="CSV file with a header row")
    p.add_argument("--proba", action="store_true", help="add class probability columns")
    p.add_argument("-o", "--output", metavar="CSV", help="write here (default: stdout)")
    p.set_defaults(func=_predict)

    p = sub.add_parser("info", help="describe a params file",
                       description="Print the type, classes, n_features, covariance type "
                                   "and array shapes of a params file.")
    p.add_argument("params", metavar="PARAMS")
    p.set_defaults(func=_info)
    return parser


def main(argv=None) -> int:
    """Run the ``fastgen`` command line.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 2 for a user mistake (reported on stderr as one
        ``fastgen: error: ...`` line).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows up here when the output was buffered
        return status
    except (CLIError, ValueError) as exc:
        # fastgen reports every invalid input as a ValueError naming the problem.
        print(f"fastgen: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("fastgen: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`fastgen demo | head`): stop quietly, as Unix tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
