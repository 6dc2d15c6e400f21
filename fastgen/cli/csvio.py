"""CSV input of the command line, and the named data sets of ``fastgen curve``.

Every mistake in a file (missing, unreadable, ragged, a non-numeric or non-finite
feature) is a :class:`~fastgen.cli.errors.CLIError` naming the file, the file's own line
number (blank lines count) and the column.

What is read.  DATA is a regular file, read whole, or a pipe (``<(zcat data.csv.gz)``,
``/dev/stdin`` fed by a pipe), read up to :func:`max_pipe_bytes` bytes: a pipe has no
size to check beforehand.  Directories, character and block devices (``/dev/zero``)
and sockets are refused.

Numbers.  A feature is a number as Python's ``float()`` reads it, without underscores
(``float`` accepts ``1_000``; the command line does not): optional sign, digits with an
optional point and exponent (``12``, ``-3.5``, ``.5``, ``1e-3``, ``+1E6``), surrounding
whitespace ignored.  ``inf`` and ``nan`` are read but refused as not finite.
"""

from __future__ import annotations

import codecs
import csv
import io
import math
import os
import stat

import numpy as np

from .errors import CLIError
from .text import did_you_mean

__all__ = ["DATASETS", "read_csv", "column_index", "numeric_columns", "load_csv",
           "load_dataset", "DEFAULT_MAX_PIPE_BYTES", "MAX_PIPE_BYTES_ENV", "max_pipe_bytes",
           "parse_size", "check_input_file", "read_csv_lines", "parse_labels",
           "check_output_file"]

#: Data sets of ``fastgen curve --dataset``; all but the bundled iris need scikit-learn.
DATASETS = ("breast_cancer", "iris", "wine", "digits")

#: The most bytes read from a pipe unless ``--max-pipe-bytes`` or
#: :data:`MAX_PIPE_BYTES_ENV` says otherwise (1 GiB).
DEFAULT_MAX_PIPE_BYTES = 1 << 30

#: The environment variable that sets the pipe limit (``--max-pipe-bytes`` wins).
MAX_PIPE_BYTES_ENV = "FASTGEN_MAX_PIPE_BYTES"

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text, what="--max-pipe-bytes"):
    """Bytes from ``text``: an integer with an optional K, M, G or T suffix (powers of
    1024; a trailing B or iB is allowed: ``512M``, ``2GiB``, ``1048576``)."""
    s = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    unit = s[-1:] if s[-1:] in _UNITS else ""
    digits = s[:len(s) - len(unit)].strip()
    if not digits.isascii() or not digits.isdigit() or int(digits) < 1:
        raise CLIError(f"{what} must be a positive number of bytes such as 1048576, "
                       f"512M or 2G; got {text!r}")
    return int(digits) * _UNITS[unit]


def max_pipe_bytes(option=None):
    """The pipe limit: ``option`` (``--max-pipe-bytes``) if given, else
    :data:`MAX_PIPE_BYTES_ENV`, else :data:`DEFAULT_MAX_PIPE_BYTES`."""
    if option is not None:
        return parse_size(option)
    env = os.environ.get(MAX_PIPE_BYTES_ENV)
    if env:
        return parse_size(env, MAX_PIPE_BYTES_ENV)
    return DEFAULT_MAX_PIPE_BYTES


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def check_input_file(path, what="a CSV file", *, pipe_ok=True):
    """Refuse what cannot be read as a file: return ``"file"`` or ``"pipe"``.

    A CLIError names a missing path, a directory, a device or a socket (and a pipe when
    ``pipe_ok`` is False).
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise CLIError(f"file {path!r} does not exist") from None
    except OSError as exc:
        raise CLIError(f"cannot read {path!r}: {exc.strerror or exc}") from None
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISFIFO(mode) and pipe_ok:
        return "pipe"
    kind = next((k for test, k in _KINDS if test(mode)), "not a regular file")
    if stat.S_ISFIFO(mode):
        kind = "a pipe"
    raise CLIError(f"{path!r} is {kind}, not {what}")


def check_output_file(path, inputs=(), what="the output", *, regular_only=False):
    """Refuse an output path that cannot or must not be written, before any work.

    A CLIError when ``path`` is a directory, is the same file as one of ``inputs``
    (through symbolic or hard links too: ``os.path.samefile``), or, with
    ``regular_only``, exists and is not a regular file (a device, pipe or socket).
    A path that does not exist yet passes.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:  # absent, or unreachable: the write itself reports it
        return
    if stat.S_ISDIR(mode):
        raise CLIError(f"{path!r} is a directory; name a file to write {what} to")
    if not stat.S_ISREG(mode):
        if regular_only:
            kind = next((k for test, k in _KINDS if test(mode)), "not a regular file")
            kind = "a pipe" if stat.S_ISFIFO(mode) else kind
            raise CLIError(f"{path!r} is {kind}; {what} must be a regular file")
        return
    for source in inputs:
        try:
            same = os.path.samefile(path, source)
        except (OSError, ValueError):
            continue
        if same:
            raise CLIError(f"{path!r} is the input {source!r} (the same file): writing "
                           f"{what} there would replace it; name another file")


def _read_pipe(path, limit):
    """The text of a pipe, at most ``limit`` bytes (a CLIError beyond)."""
    chunks, total = [], 0
    with open(path, "rb") as f:
        while True:
            chunk = f.read(min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise CLIError(
                    f"{path!r} is a pipe and sent more than {limit} bytes, the limit for "
                    f"pipes: raise it with --max-pipe-bytes or {MAX_PIPE_BYTES_ENV} "
                    f"(e.g. 4G), or read from a file")
    return codecs.decode(b"".join(chunks), "utf-8-sig")


def _lines_of(path, limit):
    """Header, data rows and the file's line number of each data row."""
    kind = check_input_file(path)
    try:
        if kind == "pipe":
            text = _read_pipe(path, limit)
        else:
            with open(path, newline="", encoding="utf-8-sig") as f:
                text = f.read()
        # strict: an unterminated quote would otherwise swallow the rest of the file
        # into one cell, and text after a closing quote ("c0"x) be glued to the cell
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        rows, lines, end = [], [], 0
        try:
            for r in reader:
                if r:  # blank lines are skipped but counted
                    rows.append(r)
                    lines.append(end + 1)
                end = reader.line_num
        except csv.Error as exc:
            raise CLIError(_quote_error(path, text, end, reader.line_num, exc)) from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CLIError(f"cannot read {path!r}: {exc}") from None
    if "\x00" in text:
        _refuse_nul(path, rows, lines)
    return rows, lines


def _open_quote_line(text, first):
    """The line of the quote still open at the end of ``text`` (its record starting on
    line ``first``), or None if every quote closes."""
    lines = text.splitlines(keepends=True)
    line, opened, quoted, at_start, k = first, None, False, True, 0
    body = "".join(lines[first - 1:])
    while k < len(body):
        c = body[k]
        if quoted:
            if c == '"':
                if body[k + 1:k + 2] == '"':
                    k += 1
                else:
                    quoted = False
        elif c == '"' and at_start:
            quoted, opened = True, line
        at_start = not quoted and c in ",\r\n"
        if c == "\n" or (c == "\r" and body[k + 1:k + 2] != "\n"):
            line += 1
        k += 1
    return opened if quoted else None


def _quote_error(path, text, end, line_num, exc):
    """The message for a ``csv.Error`` of the strict reader: the line where an
    unterminated quote opened, or the line with text after a closing quote."""
    if "expected after" in str(exc):
        return (f"{path!r}, line {line_num}: text after a closing quote (a quoted cell "
                f"ends at its closing quote; write \"\" for a quote inside a cell)")
    opened = _open_quote_line(text, end + 1)
    if opened is not None or "unexpected end of data" in str(exc):
        where = opened if opened is not None else end + 1
        return (f"{path!r}, line {where}: a quote opens a cell and is never closed (the "
                f"rest of the file would be read as that one cell)")
    return f"cannot read {path!r}, line {line_num}: {exc}"


def _refuse_nul(path, rows, lines):
    """A CLIError naming the first cell that holds a NUL character (numpy would drop a
    trailing one and read ``2\\x00`` as 2)."""
    header = rows[0] if rows else []
    for r, line in zip(rows, lines):
        for j, cell in enumerate(r):
            if "\x00" in cell:
                # the column by its name where the header gives a clean one, else its
                # position counted from 0, as every message counts columns
                name = header[j].strip() if r is not header and j < len(header) else ""
                column = (repr(name) if name and "\x00" not in name else
                          f"{j} (0-based)")
                raise CLIError(f"{path!r}, line {line}, column {column}: the cell {cell!r} "
                               f"holds a NUL character; a CSV file holds text (is this a "
                               f"binary file?)")
    raise CLIError(f"{path!r} holds a NUL character; a CSV file holds text")


def parse_labels(values, path, lines, target, *, numbers=False):
    """The labels of the target column: the text of each cell, as the file holds it
    (``007``, ``7`` and ``070`` are three classes), unless ``numbers`` asks for them
    as numbers (ints where every label is an integer, else floats, read as features
    are).  An empty label is refused."""
    for i, v in enumerate(values):
        if v == "":
            raise CLIError(f"{path!r}, line {lines[i]}: the target {target!r} is empty")
    if not numbers:
        return np.array(values, dtype=str)
    try:
        if not any("_" in v for v in values):
            return np.array([int(v) for v in values])
    except ValueError:
        pass
    return numeric_columns([[v] for v in values], [0], [target], path, lines)[:, 0]


def read_csv(path, *, max_bytes=None):
    """Read a CSV file with a header row.

    Parameters
    ----------
    path : str
        A regular file, or a pipe (read up to ``max_bytes``).
    max_bytes : int, optional
        The most bytes read from a pipe (default: :func:`max_pipe_bytes`).

    Returns
    -------
    header : list of str
        The column names.
    rows : list of list of str
        The data rows, each with as many fields as the header.

    Raises
    ------
    CLIError
        If the file is missing or unreadable, not a file or pipe, empty, has a repeated or
        empty column name, or a row with the wrong number of fields.
    """
    header, rows, _lines = read_csv_lines(path, max_bytes=max_bytes)
    return header, rows


def read_csv_lines(path, *, max_bytes=None):
    """:func:`read_csv`, plus the file's line number of each data row (for messages)."""
    limit = max_pipe_bytes() if max_bytes is None else max_bytes
    rows, lines = _lines_of(path, limit)
    if not rows:
        raise CLIError(f"{path!r} is empty (expected a header row and data rows)")
    header = [h.strip() for h in rows[0]]
    for i, h in enumerate(header):
        if not h:
            raise CLIError(f"{path!r}: column {i} (0-based) of the header has no name")
    seen = set()
    for h in header:
        if h in seen:
            raise CLIError(f"{path!r}: column name {h!r} appears twice in the header")
        seen.add(h)
    body, lines = rows[1:], lines[1:]
    if not body:
        raise CLIError(f"{path!r} has a header but no data rows")
    for r, line in zip(body, lines):
        if len(r) != len(header):
            raise CLIError(f"{path!r}, line {line}: {len(r)} fields, but the header has "
                           f"{len(header)}")
    return header, body, lines


def column_index(header, name, path):
    """The position of column ``name`` in ``header``; a CLIError naming the columns if absent."""
    try:
        return header.index(name)
    except ValueError:
        cols = ", ".join(header[:20]) + (", ..." if len(header) > 20 else "")
        raise CLIError(f"column {name!r} not found in {path!r} (columns: {cols})"
                       f"{did_you_mean(name, header)}") from None


def numeric_columns(rows, cols, header, path, lines=None):
    """Convert the given columns of ``rows`` to float64, naming any bad cell.

    A number is what Python's ``float()`` reads, without underscores; it must be finite.
    ``lines`` gives the file's line number of each row (default: row i on line i + 2).
    """
    try:  # fast path; on failure, the loop below finds and names the bad cell
        S = np.array([[r[j] for j in cols] for r in rows], dtype=str)
        X = S.astype(np.float64)  # numpy parses as float() does, underscores included
        if np.all(np.isfinite(X)) and not np.any(np.char.find(S, "_") >= 0):
            return X
    except ValueError:
        pass
    X = np.empty((len(rows), len(cols)))
    for i, r in enumerate(rows):
        line = i + 2 if lines is None else lines[i]
        for jj, j in enumerate(cols):
            s = r[j].strip()
            try:
                if "_" in s:
                    raise ValueError(s)
                v = float(s)
            except ValueError:
                what = "an empty value" if not s else f"non-numeric value {s!r}"
                why = ("features must be numbers, written without underscores" if "_" in s
                       else "features must be numbers")
                raise CLIError(f"{path!r}, line {line}, column {header[j]!r}: {what} "
                               f"({why})") from None
            if not math.isfinite(v):
                raise CLIError(f"{path!r}, line {line}, column {header[j]!r}: value {s!r} "
                               f"is not finite")
            X[i, jj] = v
    return X


def load_csv(path, target, *, max_bytes=None, numeric_labels=False, with_lines=False):
    """Features and labels from a CSV file: every column but ``target`` is a feature.

    Parameters
    ----------
    path : str
    target : str
        The name of the label column.
    max_bytes : int, optional
        The most bytes read from a pipe (default: :func:`max_pipe_bytes`).
    numeric_labels : bool
        Read the labels as numbers (:func:`parse_labels`); by default each label is
        the text of its cell, exactly as the file holds it.

    Returns
    -------
    X : ndarray (n, d) float64
    y : ndarray (n,) str labels (int or float with ``numeric_labels``)
    feature_names : list of str
    lines : list of int
        With ``with_lines`` only: the file's line number of each row (for messages).
    """
    header, rows, lines = read_csv_lines(path, max_bytes=max_bytes)
    t = column_index(header, target, path)
    cols = [j for j in range(len(header)) if j != t]
    if not cols:
        raise CLIError(f"{path!r} has no feature columns besides the target {target!r}")
    X = numeric_columns(rows, cols, header, path, lines)
    y = parse_labels([r[t] for r in rows], path, lines, target, numbers=numeric_labels)
    names = [header[j] for j in cols]
    return (X, y, names, lines) if with_lines else (X, y, names)


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
                       f"or pass --csv PATH --target COL){did_you_mean(name, DATASETS)}")
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
