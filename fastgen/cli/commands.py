"""The commands of ``fastgen``: ``demo``, ``curve``, ``fit``, ``predict``, ``info`` and
``compile``.

Each command takes the parsed arguments and an output stream, calls the pieces of the
other modules (CSV input, the model registry, the curve experiment, the plot) and
fastgen's public API, prints its report and returns the exit status 0; a user mistake
is a :class:`~fastgen.cli.errors.CLIError`.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import os
import re
import sys
import warnings
import zipfile

import numpy as np

from .. import (
    fit_gda,
    fit_logistic,
    linear_discriminant,
    load_feature_names,
    load_params,
    logistic_inference,
    predict,
    predict_proba,
    save_params,
)
from ..datasets import load_iris
from ..io import atomic_write
from .csvio import (
    check_input_file,
    check_output_file,
    column_index,
    load_csv,
    load_dataset,
    max_pipe_bytes,
    numeric_columns,
    read_csv_lines,
)
from .curve import curve_sizes, n_test_rows, parse_models, run_curve, summarise
from .errors import CLIError, OutputError
from .models import feature_kind, label, resolve
from .plot import check_plot_possible, plot_curves
from .text import did_you_mean, printable, say

__all__ = ["demo", "curve", "fit", "predict_csv", "info", "compile_kernels", "print_table",
           "sidecar", "file_sha256", "escape_cell"]


def print_table(rows, header, out):
    """Print rows under a header, every column right-aligned to its widest cell
    (cells escaped by :func:`~fastgen.cli.text.printable`)."""
    header = [printable(h) for h in header]
    rows = [[printable(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for r in rows:
        print("  ".join(v.rjust(w) for v, w in zip(r, widths)), file=out)


# --------------------------------------------------------------------------- demo


def _confusion(y_true, y_pred, classes):
    idx = {c: i for i, c in enumerate(classes)}
    C = np.zeros((len(classes), len(classes)), dtype=int)
    for t, p in zip(y_true, y_pred):
        C[idx[t], idx[p]] += 1
    return C


def demo(args, out=None):
    """``fastgen demo``: LDA and QDA on the bundled iris data, parameters and accuracy."""
    out = sys.stdout if out is None else out
    X, y, names = load_iris()
    print(f"Fisher's iris: {X.shape[0]} flowers, {X.shape[1]} features "
          f"({', '.join(names)})\n", file=out)
    np.set_printoptions(precision=4, suppress=True, linewidth=100)
    for cov, title in (("pooled", "pooled covariance (LDA)"),
                       ("per_class", "per-class covariance (QDA)")):
        params = fit_gda(X, y, covariance=cov)
        pred = predict(params, X)
        acc = float(np.mean(pred == y))
        print(f"== Gaussian discriminant analysis, {title} ==", file=out)
        print("priors: " + ", ".join(f"{c}={p:.4f}" for c, p in
                                    zip(params.classes, params.priors)), file=out)
        print("class means:", file=out)
        print_table([[c, *(f"{v:.4f}" for v in m)] for c, m in
                     zip(params.classes, params.means)], ["class", *names], out)
        if cov == "pooled":
            print("pooled covariance Σ:", file=out)
            print(params.covariance, file=out)
            W, b = linear_discriminant(params)
            print("linear discriminant w_k = Σ⁻¹μ_k (columns) and "
                  "b_k = -½μ_kᵀΣ⁻¹μ_k + log p_k:", file=out)
            print_table([[c, *(f"{v:.3f}" for v in W[:, k]), f"{b[k]:.3f}"]
                         for k, c in enumerate(params.classes)],
                        ["class", *names, "b"], out)
        else:
            print("log|Σ_k|: " + ", ".join(f"{c}={v:.4f}" for c, v in
                                           zip(params.classes, params.log_det)), file=out)
        print(f"training accuracy: {acc:.4f} ({int(round(acc * len(y)))}/{len(y)})",
              file=out)
        C = _confusion(y, pred, params.classes)
        print("confusion table (rows: true class, columns: predicted):", file=out)
        print_table([[c, *C[i]] for i, c in enumerate(params.classes)],
                    ["true \\ pred", *params.classes], out)
        print(file=out)
    return 0


# --------------------------------------------------------------------------- curve


def _fmt(mean, se):
    if not np.isfinite(mean):
        return "failed"
    s = f"{mean:.4f}"
    return s + (f" ± {se:.4f}" if np.isfinite(se) else "")


def _curve_data(args):
    """X, y and the title from ``--csv``/``--target`` or ``--dataset``."""
    if args.csv is not None:
        if args.target is None:
            raise CLIError("--csv needs --target COL (the name of the label column)")
        X, y, _names = load_csv(args.csv, args.target, max_bytes=_pipe_limit(args),
                                numeric_labels=getattr(args, "numeric_labels", False))
        return X, y, os.path.basename(args.csv)
    if args.target is not None:
        raise CLIError("--target goes with --csv, not --dataset")
    X, y, _names, title = load_dataset(args.dataset)
    return X, y, title


def curve(args, out=None):
    """``fastgen curve``: run :func:`~fastgen.cli.curve.run_curve`, print the table, plot."""
    out = sys.stdout if out is None else out
    models = parse_models(args.models)
    if args.splits < 1:
        raise CLIError(f"--splits must be at least 1; got {args.splits}")
    if args.jobs < 1:
        raise CLIError(f"--jobs must be at least 1; got {args.jobs}")
    if not 0 < args.test_size < 1:
        raise CLIError(f"--test-size must be a fraction in (0, 1); got {args.test_size:g}")
    X, y, title = _curve_data(args)
    classes, counts = np.unique(y, return_counts=True)
    if classes.shape[0] < 2:
        raise CLIError(f"{title}: the target has a single class ({classes[0]!r}); "
                       f"a classifier needs at least two")
    n, d = X.shape
    n_test = n_test_rows(args.test_size, n)
    sizes = curve_sizes(args.sizes, n - n_test, classes.shape[0])
    if args.plot is not None:
        check_output_file(args.plot, [p for p in [args.csv] if p], "the plot")
        check_plot_possible(args.plot)
    kind = feature_kind(X)

    # what runs, before it runs (flushed: seen at once on a terminal or in a log)
    cls = ", ".join(f"{c}: {k}" for c, k in zip(classes, counts, strict=True))
    say(f"{title}: n={n}, d={d}, {classes.shape[0]} classes ({cls}); {kind} features",
        out)
    print(f"{args.splits} random splits (seed {args.seed}): {n_test} test rows, nested "
          f"training sets of m rows from the other {n - n_test}", file=out)
    labels = [label(m, kind) for m in models]
    print("models:", file=out)
    for m, lab in zip(models, labels, strict=True):
        print(f"  {lab:<{max(map(len, labels))}}  {resolve(m, kind).curve_description}",
              file=out)
    out.flush()

    errors, failures, n_warned = run_curve(
        X, y, models=models, splits=args.splits, sizes=sizes, test_size=args.test_size,
        seed=args.seed, jobs=args.jobs,
        progress=not args.no_progress and sys.stderr.isatty())
    mean, se, n_ok = summarise(errors)
    print(f"\ntest error, mean ± standard error over {args.splits} splits", file=out)
    rows = [[m, *(_fmt(mean[i, j], se[i, j]) for i in range(len(models)))]
            for j, m in enumerate(sizes)]
    print_table(rows, ["m", *labels], out)
    if failures or n_warned.any():
        print(file=out)
    if failures:
        for im in range(len(models)):
            mine = [f for f in failures if f[1] == im]
            if not mine:
                continue
            at = ", ".join(f"m={sizes[j]}: {args.splits - n_ok[im, j]}"
                           for j in range(len(sizes)) if n_ok[im, j] < args.splits)
            say(f"{labels[im]}: {len(mine)} failed fits recorded as NaN and left out of "
                f"the mean ({at}); first: {mine[0][3]}", out)
    for im in np.flatnonzero(n_warned):
        print(f"{labels[im]}: {n_warned[im]} of {args.splits * len(sizes)} fits warned "
              f"(e.g. not converged)", file=out)
    if args.plot is not None:
        plot_curves(args.plot, sizes, mean, se, labels, title, n, d, args.splits)
        print(file=out)
        say(f"plot written to {args.plot}", out)
    return 0


# --------------------------------------------------------------------------- fit / predict


def _pipe_limit(args):
    """The pipe limit of ``--max-pipe-bytes`` (else its environment variable or default)."""
    return max_pipe_bytes(getattr(args, "max_pipe_bytes", None))


def sidecar(path):
    """The JSON file beside a params file that names its model, target and features,
    and carries the params file's SHA-256 (``params_sha256``)."""
    return os.fspath(path) + ".json"


def file_sha256(path):
    """The SHA-256 of a file's bytes, as hex."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fit(args, out=None):
    """``fastgen fit``: fit the registry's model on a CSV file, write params and sidecar."""
    out = sys.stdout if out is None else out
    summary = getattr(args, "summary", False)
    if summary and args.model != "logistic":
        raise CLIError("--summary goes with --model logistic")
    firth = getattr(args, "firth", False)
    correction = getattr(args, "correction", None)
    if (firth or correction) and args.model != "logistic":
        raise CLIError("--firth and --correction go with --model logistic")
    if correction and not firth:
        raise CLIError("--correction needs --firth (it corrects Firth's estimate)")
    if firth and getattr(args, "l2", 0.0) != 0.0:
        raise CLIError("--firth replaces the ridge penalty: leave --l2 at 0")
    if args.output is None and not summary:
        raise CLIError("-o/--output is required (unless --summary is given)")
    path = None if args.output is None else _params_output(args.output, args.data)
    X, y, names, lines = load_csv(args.data, args.target, max_bytes=_pipe_limit(args),
                                  numeric_labels=getattr(args, "numeric_labels", False),
                                  with_lines=True)
    kind = feature_kind(X)
    entry = resolve(args.model, kind)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            params = (fit_logistic(X, y, penalty="firth", correction=correction) if firth
                      else entry.fit_with(X, y, getattr(args, entry.option)))
        except ValueError as exc:
            raise CLIError(located(_csv_names(str(exc), names), args.data, lines,
                                   names)) from None
    for w in caught:
        _warn(_csv_names(str(w.message), names))
    if entry.name == "bernoulli_nb" and kind != "binary":
        _warn(f"bernoulli_nb binarises the {kind} features at "
              f"binarize={params.binarize:g} (x > {params.binarize:g} counts as 1); "
              f"choose --model nb to fit the naive Bayes model matching the features")
    if summary:
        try:
            res = logistic_inference(params, X, y, feature_names=names)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        for line in str(res.summary(yname=args.target)).split("\n"):
            say(line, out)
        if args.output is None:
            return 0
    try:
        # each file is replaced whole; the sidecar follows the params file and names its
        # hash, so a sidecar left from an earlier fit is recognised (and ignored)
        save_params(path, params, feature_names=names, target_name=args.target)
        meta = {"model": entry.name, "target": args.target, "features": names,
                "params_sha256": file_sha256(path)}
        with atomic_write(sidecar(path), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1)
    except OSError as exc:
        raise OutputError(f"cannot write {path!r}: {exc.strerror or exc}") from None
    how = (f" (Firth{', ' + correction.upper() if correction else ''})" if firth else "")
    say(f"fitted {entry.name}{how} on {X.shape[0]} rows, {X.shape[1]} features, "
        f"{params.n_classes} classes; wrote {path} and {sidecar(path)}", out)
    return 0


_AT_ROW = re.compile(r" at row (\d+)(?:, column (\d+))?(?P<mark> \(0-based(?:\)|; |, ))?")


def located(message, path, lines, names):
    """A model's refusal naming a row (and column) of X, ``"X contains a negative value
    (-6.0) at row 2, column 1; ..."``, said as the file's line and column name, as
    parse errors are: ``"'d.csv', line 6, column 'b': X contains a negative value
    (-6.0); ..."``.  Other messages are returned unchanged."""
    m = _AT_ROW.search(message)
    if m is None or int(m.group(1)) >= len(lines) or (
            m.group(2) is not None and int(m.group(2)) >= len(names)):
        return message
    where = f"{path!r}, line {lines[int(m.group(1))]}"
    if m.group(2) is not None:
        where += f", column {names[int(m.group(2))]!r}"
    # what followed "(0-based" in the same parentheses stays: "(0-based; 1e300)"
    rest = " (" if m.group("mark") not in (None, " (0-based)") else ""
    return f"{where}: {message[:m.start()]}{rest}{message[m.end():]}"


def _params_output(output, data):
    """The params file ``fastgen fit -o OUTPUT`` writes (``.npz`` appended where
    missing), checked with its sidecar before anything is read: neither may be a
    directory, a device or the DATA file."""
    output = os.fspath(output)
    if not os.path.basename(output):  # '' or 'dir/' would write the hidden 'dir/.npz'
        raise CLIError(f"-o {output!r} names no file; name the params file to write "
                       f"(e.g. -o model.npz)")
    check_output_file(output, [data], "PARAMS", regular_only=True)
    path = output if output.endswith(".npz") else output + ".npz"
    check_output_file(path, [data], "PARAMS", regular_only=True)
    check_output_file(sidecar(path), [data], "the sidecar PARAMS.json", regular_only=True)
    return path


#: the default names the model layer gives the columns of an array ('x1' is column 0),
#: with the position its messages add ("'x1' (X[:, 0])")
_DEFAULT_NAME = re.compile(r"'x(\d+)'(?: \(X\[:, \d+\]\))?")


def _csv_names(message, names):
    """A fit's message with the default column names 'x1', 'x2', ... (the model layer
    sees an array) replaced by the CSV's column names, without their positions in the
    array."""
    def name(m):
        j = int(m.group(1)) - 1
        return repr(names[j]) if 0 <= j < len(names) else m.group(0)

    return _DEFAULT_NAME.sub(name, message)


def _warn(message):
    say(f"fastgen: warning: {message}", sys.stderr)


def _read_sidecar(path):
    """The sidecar's metadata, or None when there is none or it cannot be trusted.

    The params file is the authority: a sidecar that cannot be read, or whose
    ``params_sha256`` is not the params file's (left from an earlier fit, or a fit
    killed between writing the two), is ignored with a warning.  Sidecars written
    before the hash was added are used as they are.
    """
    side = sidecar(path)
    if not os.path.isfile(side):
        return None
    try:
        with open(side, encoding="utf-8") as f:
            meta = json.load(f)
        _check_sidecar(meta)
    except (OSError, ValueError, RecursionError, MemoryError) as exc:
        # RecursionError: deeply nested JSON ("[" * 100000)
        why = str(exc).split("\n")[0][:200] or type(exc).__name__
        _warn(f"ignoring {side!r}, which cannot be read ({why})")
        return None
    want = meta.get("params_sha256")
    if want is not None and want != file_sha256(path):
        _warn(f"ignoring {side!r}: it was written for another version of {path!r} (its "
              f"params_sha256 differs); the params file holds the model")
        return None
    return meta


def _check_sidecar(meta):
    """A ValueError unless ``meta`` has the sidecar's shape: a JSON object whose
    ``features`` is a list of str and whose ``model``, ``target`` and
    ``params_sha256`` are str where present."""
    if not isinstance(meta, dict):
        raise ValueError(f"a JSON {type(meta).__name__}, not an object")
    features = meta.get("features")
    if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
        raise ValueError("no list of feature names")
    for key in ("model", "target", "params_sha256"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise ValueError(f"its {key!r} is not a string")


def _load_params(path):
    """Params and the sidecar's metadata (None without a usable sidecar)."""
    check_input_file(path, "a fastgen params file", pipe_ok=False)
    if not zipfile.is_zipfile(path):
        raise CLIError(f"{path!r} is not a fastgen params file (not an .npz archive)")
    params = load_params(path)
    return params, _read_sidecar(path)


def _label_str(v):
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return str(v)


# Cells a spreadsheet may read as a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text):
    if "_" in text:
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


def escape_cell(text):
    """``text`` for a CSV cell that a spreadsheet will not run as a formula.

    A cell beginning with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a
    leading single quote (``'=1+2``), as OWASP's guidance on CSV injection advises,
    unless it is a number (``-1``, ``+2.5``, ``-inf``), which is left alone.
    """
    if text.startswith(_FORMULA_START) and not _is_number(text):
        return "'" + text
    return text


def _feature_columns(args, params, meta, header):
    """Indices of the feature columns of DATA: by name (the names stored in the params
    file, else its sidecar's), or by position with ``--by-position`` only."""
    d = params.n_features_in
    if args.by_position:
        if len(header) != d:
            raise CLIError(f"--by-position reads every column of {args.data!r} as a "
                           f"feature, in order: {args.params!r} expects {d} columns, "
                           f"found {len(header)}")
        return list(range(d))
    names, _target = load_feature_names(args.params)
    if names is None and meta is not None:
        names = meta["features"]  # a file written before names were stored in it
    if names is None:
        raise CLIError(f"{args.params!r} does not name its features (and has no "
                       f"{sidecar(args.params)!r}), so the columns of {args.data!r} cannot "
                       f"be matched by name; pass --by-position to read its {d} columns "
                       f"in the order used for fitting")
    if len(names) != d:
        raise CLIError(f"{args.params!r} names {len(names)} features; the params have {d}")
    if len(set(names)) != len(names):  # one column read as two features
        raise CLIError(f"{args.params!r} names a feature more than once "
                       f"({', '.join(printable(n) for n in names)}); each column is "
                       f"one feature")
    return [column_index(header, name, args.data) for name in names]


def predict_csv(args, out=None):
    """``fastgen predict``: labels (and probabilities) for every row of a CSV file."""
    out = sys.stdout if out is None else out
    if args.output is not None:
        if not os.path.basename(args.output):
            raise CLIError(f"-o {args.output!r} names no file; name the file to write "
                           f"the predictions to (e.g. -o predictions.csv)")
        check_output_file(args.output, [args.params, sidecar(args.params), args.data],
                          "the predictions")
    params, meta = _load_params(args.params)
    header, rows, lines = read_csv_lines(args.data, max_bytes=_pipe_limit(args))
    d = params.n_features_in
    cols = _feature_columns(args, params, meta, header)
    X = numeric_columns(rows, cols, header, args.data, lines)
    if X.shape[1] != d:
        raise CLIError(f"{args.params!r} expects {d} features; found {X.shape[1]}")
    try:
        pred = predict(params, X)
        proba = predict_proba(params, X) if args.proba else None
    except ValueError as exc:
        raise CLIError(located(str(exc), args.data, lines,
                               [header[j] for j in cols])) from None
    name = load_feature_names(args.params)[1] or (meta or {}).get("target") or "prediction"
    head = [name] + ([f"p({c})" for c in params.classes] if args.proba else [])
    cell = (lambda text: text) if getattr(args, "raw", False) else escape_cell
    labels = {}  # label -> its cell, escaped once per class
    if args.output is None:
        if _is_terminal(out):  # shown, not stored: control characters as escapes
            stored = cell
            cell = lambda text: printable(stored(text))  # noqa: E731
        _write_predictions(out, head, pred, proba, cell, labels)
        return 0
    try:
        with atomic_write(args.output, "w", encoding="utf-8", newline="") as f:
            _write_predictions(f, head, pred, proba, cell, labels)
    except OSError as exc:
        raise OutputError(f"cannot write {args.output!r}: {exc.strerror or exc}") from None
    return 0


def _is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _write_predictions(f, head, pred, proba, cell, labels):
    minimal = csv.writer(f, lineterminator="\n")
    # a carriage return inside a cell must be quoted too (QUOTE_MINIMAL quotes only the
    # characters of the line terminator, here "\n"): such rows are written fully quoted
    quoted = csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def write(row):
        (quoted if any("\r" in c for c in row) else minimal).writerow(row)

    write([cell(h) for h in head])
    for i in range(pred.shape[0]):
        label = pred[i]
        text = labels.get(label)
        if text is None:
            text = labels[label] = cell(_label_str(label))
        row = [text]
        if proba is not None:
            row += [repr(float(v)) for v in proba[i]]
        write(row)


def info(args, out=None):
    """``fastgen info``: type, classes, features and array shapes of a params file."""
    out = sys.stdout if out is None else out
    params, meta = _load_params(args.params)
    say(f"type: {type(params).__name__}", out)
    if meta is not None:
        say(f"model: {meta.get('model')}", out)
    cov = getattr(params, "covariance_type", None)
    if cov is not None:
        say(f"covariance type: {cov}", out)
    say(f"classes ({params.n_classes}): "
        + ", ".join(_label_str(c) for c in params.classes), out)
    say(f"n_features: {params.n_features_in}", out)
    names, target = load_feature_names(args.params)
    if names is None and meta is not None:
        names, target = meta["features"], meta.get("target")
    if names is not None:
        say(f"target: {target}", out)
        say("features: " + ", ".join(names), out)
    print("fields:", file=out)
    for fld in dataclasses.fields(params):
        v = getattr(params, fld.name)
        if isinstance(v, np.ndarray):
            desc = f"array {v.dtype} {tuple(v.shape)}"
        else:
            desc = repr(v)
        say(f"  {fld.name}: {desc}", out)
    return 0


def _choices(values):
    """The values of a repeatable, comma-separable option (None when not given)."""
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def compile_kernels(args, out=None):
    """``fastgen compile``: :func:`fastgen.compile`, then one line per family and dtype
    and the cache directory."""
    from .. import compile as compile_cache

    out = sys.stdout if out is None else out
    if args.jobs is not None and args.jobs < 1:
        raise CLIError(f"--jobs must be at least 1; got {args.jobs}")
    families, dtypes = _choices(args.family), _choices(args.dtype)
    from .._compile import DTYPES, FAMILIES

    for option, values, known in (("--family", families, FAMILIES),
                                  ("--dtype", dtypes, DTYPES)):
        bad = [v for v in values or () if v not in known]
        if bad:
            raise CLIError(f"{option}: unknown {option[2:]} {bad[0]!r}; choose from "
                           f"{', '.join(known)}{did_you_mean(bad[0], known)}")
    try:
        report = compile_cache(families, dtypes, jobs=args.jobs,
                               progress=not args.no_progress)
    except RuntimeError as exc:
        say(f"fastgen: error: {exc}", sys.stderr)
        return 1
    rows = [[f.family, f.dtype, f"{f.seconds:.1f}", f.compiled or "all cached"]
            for f in report.families]
    print_table(rows, ["family", "dtype", "seconds", "kernels compiled"], out)
    print(file=out)
    say(f"numba cache: {report.cache_dir} ({report.seconds:.1f} s in all)", out)
    return 0
