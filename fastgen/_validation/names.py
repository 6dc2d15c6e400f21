"""Feature names: the column names of data frames, checked against a fitted model's
and merged (see :mod:`fastgen._validation`)."""

from __future__ import annotations

import functools
import re
import sys

import numpy as np

from .arrays import is_sparse

__all__ = ["feature_names_of", "check_feature_names", "merged_feature_names",
           "stored_feature_names", "feature_label", "naming_columns", "with_column_names"]

# ------------------------------------------------------------------ feature names
#
# scikit-learn's rule: a data frame whose column names are all strings has feature
# names; anything else (arrays, sparse matrices, frames with integer columns) has none.


# Reading names needs no data frame library: pandas and polars are recognised by type
# (through sys.modules, so neither is imported), and any other frame through what it
# exposes: ``column_names`` (pyarrow), ``columns``, the interchange protocol's
# ``__dataframe__().column_names()`` or the schema of an Arrow PyCapsule stream
# (``__arrow_c_stream__``, read with pyarrow where it is installed).  narwhals, the
# layer scikit-learn uses, would give the same names for the libraries it knows at the
# price of a required dependency of the core (``import fastgen`` imports no third-party
# module) and of a second place where the rule lives; conversion to numpy goes through
# ``__array__`` (pandas, polars) or the Arrow stream either way.  So fastgen reads
# names without it.


def _column_names(X):
    """The column names of a data frame X as a list, or None if X is not one."""
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(X, pd.DataFrame):
        return list(X.columns)
    pl = sys.modules.get("polars")
    if pl is not None and isinstance(X, pl.DataFrame):
        return list(X.columns)
    # the shape first: a lazy frame (no shape) resolves its whole query to name its
    # columns, and it is no data to fit on anyway
    frame = (hasattr(X, "__dataframe__") or hasattr(X, "__arrow_c_stream__")
             or (len(getattr(X, "shape", ())) == 2 and hasattr(X, "columns")))
    if not frame:
        return None
    names = getattr(X, "column_names", None)  # pyarrow.Table: .columns are the arrays
    if names is None:
        names = getattr(X, "columns", None)
    if names is None and hasattr(X, "__dataframe__"):
        names = X.__dataframe__().column_names()
    if names is None and hasattr(X, "__arrow_c_stream__"):
        names = _arrow_stream_names(X)
    return None if names is None else list(names)


def _arrow_stream_names(X):
    """The field names of an Arrow PyCapsule stream's schema (pyarrow reads it), or
    None where pyarrow is not installed."""
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pyarrow comes with pandas and polars here
        return None
    schema_of = getattr(X, "__arrow_c_schema__", None)
    if schema_of is not None:
        return list(pa.schema(X).names)
    return list(pa.RecordBatchReader.from_stream(X).schema.names)


def feature_names_of(X):
    """The column names of a data frame X as a tuple of str, or None.

    One rule for every data frame: pandas, polars, and anything else that exposes
    its column names (see :func:`_column_names`).  Names count only where every
    column name is a str and they are distinct (a frame with repeated names has no
    usable names).  Mixing str and other column names is an error, as in
    scikit-learn.  Arrays and sparse matrices have no names.
    """
    if isinstance(X, np.ndarray) or is_sparse(X):
        return None
    cols = _column_names(X)
    if not cols:
        return None
    is_str = [isinstance(c, str) for c in cols]
    if not all(is_str):
        if any(is_str):
            kinds = sorted({type(c).__name__ for c in cols})
            raise ValueError(
                f"X has column names of the types {kinds}; feature names must all be "
                f"str (convert them with X.columns = X.columns.astype(str)) or none be str"
            )
        return None
    names = tuple(str(c) for c in cols)
    return names if len(set(names)) == len(names) else None


def _listed(names, limit=8):
    shown = ", ".join(repr(n) for n in names[:limit])
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return f"[{shown}{more}]"


def stored_feature_names(names, n_features, owner):
    """The feature names a fitted object stores (params, moments, counts): None, or
    ``n_features`` distinct str as a tuple.  A ValueError ``"{owner}.feature_names …"``
    saying what is wrong otherwise."""
    if names is None:
        return None

    def fail(problem):
        raise ValueError(f"{owner}.feature_names {problem}")

    if isinstance(names, (str, bytes)):
        fail("must be a sequence of str, not one str")
    if isinstance(names, np.ndarray):
        names = names.tolist()
    try:
        names = tuple(names)
    except TypeError:
        fail(f"must be a sequence of str; got {names!r}")
    if not all(isinstance(n, str) for n in names):
        fail("must all be str")
    names = tuple(str(n) for n in names)
    if len(names) != n_features:
        fail(f"has {len(names)} names; the model has {n_features} features")
    if len(set(names)) != len(names):
        fail("must be distinct")
    return names


def check_feature_names(fitted, names, owner, *, name="X"):
    """Check the names of data scored by a model fitted with names ``fitted``.

    ``names`` are the names of the data (:func:`feature_names_of`), ``owner`` the
    model's type name for the messages.  Names that differ from the fitted ones in
    membership or order raise a ValueError listing the missing, the unexpected and the
    misplaced columns.  Names on one side only warn, as scikit-learn does (the columns
    cannot be matched, only counted).
    """
    from .._warn import warn

    if fitted is None and names is None:
        return
    if fitted is None:
        warn(f"{name} has feature names, but {owner} was fitted without feature names",
             UserWarning)
        return
    if names is None:
        warn(f"{name} does not have valid feature names, but {owner} was fitted with "
             f"feature names", UserWarning)
        return
    if tuple(names) == tuple(fitted):
        return
    known, given = set(fitted), set(names)
    missing = [n for n in fitted if n not in given]
    unexpected = [n for n in names if n not in known]
    fix = f"pass the fitted columns in the fitted order, e.g. {name}[list(params.feature_names)]"
    if missing or unexpected:
        parts = ([f"missing {_listed(missing)}"] if missing else []) + (
            [f"unexpected {_listed(unexpected)}"] if unexpected else [])
        raise ValueError(f"the columns of {name} do not match the feature names {owner} "
                         f"was fitted with: {'; '.join(parts)}; {fix}")
    moved = [f"column {j} (0-based) is {n!r} where the fit had {f!r}"
             for j, (n, f) in enumerate(zip(names, fitted)) if n != f]
    extra = f" ({len(moved) - 3} more)" if len(moved) > 3 else ""
    raise ValueError(f"the columns of {name} are those {owner} was fitted with in another "
                     f"order ({'; '.join(moved[:3])}{extra}); {fix}")


def merged_feature_names(a, b, noun):
    """The feature names of the merge of two sets of statistics with names ``a``, ``b``.

    Different names are an error (the columns would be added up wrongly); names on one
    side only warn and are kept, as scoring unnamed data after a named fit warns.
    """
    from .._warn import warn

    if a == b:
        return a
    if a is None or b is None:
        warn(f"merging {noun} with feature names and {noun} without; the merged {noun} "
             f"keep the names {_listed(a if b is None else b)}", UserWarning)
        return a if b is None else b
    known, other = set(a), set(b)
    missing = [n for n in a if n not in other]
    unexpected = [n for n in b if n not in known]
    parts = ([f"only in the first {_listed(missing)}"] if missing else []) + (
        [f"only in the second {_listed(unexpected)}"] if unexpected else [])
    what = "; ".join(parts) or "the same names in another order"
    raise ValueError(f"cannot merge {noun} with different feature names: {what}")


def feature_label(j, names=None, word="feature") -> str:
    """``feature 3 (0-based)``, or ``feature 3 (0-based, 'age')`` where the feature
    names are known: how messages name a column by its position (numpy's, from 0)."""
    j = int(j)
    if names is not None and 0 <= j < len(names):
        return f"{word} {j} (0-based, {str(names[j])!r})"
    return f"{word} {j} (0-based)"


_POSITION = re.compile(r"\b(column|feature) (\d+) \(0-based([;)])")
_ENTRY = re.compile(r"\bX\[(\d+), (\d+)\]")


def with_column_names(text: str, names) -> str:
    """``text`` with the data frame's column name added where it names a column of X
    by position: "column 3 (0-based)" → "column 3 (0-based, 'age')" (also "feature 3
    (0-based; ..."), and "X[0, 3]" → "X[0, 3] (column 'age')"."""
    if not names:
        return text

    def position(m):
        j = int(m.group(2))
        if j >= len(names):
            return m.group(0)
        return f"{m.group(1)} {j} (0-based, {str(names[j])!r}{m.group(3)}"

    def entry(m):
        j = int(m.group(2))
        return m.group(0) if j >= len(names) else f"{m.group(0)} (column {str(names[j])!r})"

    return _ENTRY.sub(entry, _POSITION.sub(position, text))


def naming_columns(position=0):
    """Decorator of a public function of X (its ``position``-th argument): a ValueError
    that names a column of a data frame X by position is raised again with its name
    (one rule for every message, whichever layer raises it)."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except ValueError as exc:
                X = args[position] if len(args) > position else kwargs.get("X")
                try:
                    names = feature_names_of(X)
                except Exception:  # noqa: BLE001 - the original error stands
                    names = None
                text = with_column_names(str(exc), names)
                if text == str(exc):
                    raise
                from .rows import retexted

                raise retexted(exc, text) from None
        return wrapper
    return decorate
