"""CSV input of the command line, and the named data sets of ``fastgen curve``.

Every mistake in a file (missing, unreadable, ragged, a non-numeric or non-finite
feature) is a :class:`~fastgen.cli.errors.CLIError` naming the file, line and column.
"""

from __future__ import annotations

import csv
import math
import os

import numpy as np

from .errors import CLIError

__all__ = ["DATASETS", "read_csv", "column_index", "numeric_columns", "load_csv",
           "load_dataset"]

#: Data sets of ``fastgen curve --dataset``; all but the bundled iris need scikit-learn.
DATASETS = ("breast_cancer", "iris", "wine", "digits")


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


def column_index(header, name, path):
    """The position of column ``name`` in ``header``; a CLIError naming the columns if absent."""
    try:
        return header.index(name)
    except ValueError:
        cols = ", ".join(header[:20]) + (", ..." if len(header) > 20 else "")
        raise CLIError(f"column {name!r} not found in {path!r} (columns: {cols})") from None


def numeric_columns(rows, cols, header, path):
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
    t = column_index(header, target, path)
    cols = [j for j in range(len(header)) if j != t]
    if not cols:
        raise CLIError(f"{path!r} has no feature columns besides the target {target!r}")
    X = numeric_columns(rows, cols, header, path)
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
        from ..datasets import load_iris

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
