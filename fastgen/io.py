"""Save and load fitted params as ``.npz`` files, without pickle.

The file holds one array per dataclass field plus a small JSON header naming the params
type, the format version and each field's kind (array, int, float, bool, str or None),
so that loading rebuilds exactly the object that was saved: same dtypes, same values,
bit for bit.

Format version 2 adds the names of the features (in the order of X's columns) and of the
target to the header, when :func:`save_params` is given them; :func:`load_feature_names`
reads them back.  Version 3 adds the params' own ``feature_names`` field (a model fitted
on a data frame), stored as a JSON list; a model without names is written as version 2,
so older fastgen versions still read it.  Version 1 files (no names) still load.

Loading checks what it reads: the params are built through their constructor, whose
checks (shapes, dtypes, finite values, sorted classes) turn a crafted or damaged file into
a :class:`ParamsFileError` before anything can score with it.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import stat
import tokenize
import zipfile
import zlib

import numpy as np

from ._atomic import atomic_write
from ._params import PARAMS_TYPES, FittedParams

__all__ = ["save_params", "load_params", "load_feature_names", "ParamsFileError",
           "atomic_write"]

_FORMAT = "fastgen-params"
_VERSION = 3
#: files of params without feature names keep the version 2 layout
_VERSION_UNNAMED = 2
_HEADER = "__fastgen__"


class ParamsFileError(ValueError):
    """A params file is missing, unreadable, foreign, or from a newer fastgen.

    A subclass of ``ValueError``, so existing ``except ValueError`` handlers still catch it.
    """


def _kind(value):
    if value is None:
        return "none"
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            raise ValueError("object arrays cannot be saved without pickle")
        return "array"
    for kind, types in (("bool", (bool, np.bool_)), ("int", (int, np.integer)),
                        ("float", (float, np.floating)), ("str", (str,))):
        if isinstance(value, types):
            return kind
    raise ValueError(f"cannot save a field of type {type(value).__name__}")


def _check_names(feature_names, target_name, n_features):
    if feature_names is not None:
        if isinstance(feature_names, str):
            raise ValueError("feature_names must be a sequence of str, not one str")
        feature_names = list(feature_names)
        if not all(isinstance(n, str) for n in feature_names):
            raise ValueError("feature_names must all be str")
        if len(feature_names) != n_features:
            raise ValueError(f"feature_names has {len(feature_names)} names; the params "
                             f"have {n_features} features")
        if len(set(feature_names)) != len(feature_names):
            raise ValueError("feature_names must be distinct")
    if target_name is not None and not isinstance(target_name, str):
        raise ValueError(f"target_name must be a str; got {type(target_name).__name__}")
    return feature_names, target_name


def save_params(path, params, *, feature_names=None, target_name=None) -> str:
    """Write ``params`` to ``path`` and return the path written.

    An ``.npz`` suffix is added when ``path`` lacks it (as numpy does), and
    :func:`load_params` finds the file under the same ``path``.

    The file is replaced whole or not at all (:func:`atomic_write`): a process killed
    while saving leaves the previous file at ``path`` intact.  A ``path`` that is an
    existing device or pipe (``/dev/null``, ``/dev/stdout``) is written directly, with
    no suffix added, the archive built in memory first (writing a zip archive needs
    seeking); one that refuses the write (``/dev/full``) raises an ``OSError`` naming
    it.  An empty path and a directory are refused (``ValueError``).

    Parameters
    ----------
    path : str or os.PathLike
    params : a fastgen params object
    feature_names : sequence of str, optional
        The names of the columns of X, in order (``n_features_in`` distinct names),
        stored in the file so that a reader can select columns by name
        (:func:`load_feature_names`; ``fastgen predict`` does).  Params fitted on a
        data frame store their own ``feature_names`` without being told (and
        ``load_params`` restores them); names given here must then be the same.
    target_name : str, optional
        The name of the target column.
    """
    if not isinstance(params, FittedParams) or not dataclasses.is_dataclass(params):
        raise ValueError(
            f"params must be a fitted fastgen params object; got {type(params).__name__}"
        )
    feature_names, target_name = _check_names(feature_names, target_name,
                                              params.n_features_in)
    own = getattr(params, "feature_names", None)
    if own is not None:
        if feature_names is None:
            feature_names = list(own)
        elif tuple(feature_names) != own:
            raise ValueError(
                f"feature_names {feature_names} differ from the names the params were "
                f"fitted with, {list(own)}; pass the params' own names or none"
            )
    arrays, kinds = {}, {}
    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        if f.name == "feature_names":
            if value is not None:  # absent when None: the version 2 layout
                kinds[f.name] = "names"
                arrays[f.name] = np.asarray(json.dumps(list(value)))
            continue
        kind = _kind(value)
        kinds[f.name] = kind
        if kind == "array":
            arrays[f.name] = value
        elif kind != "none":
            arrays[f.name] = np.asarray(value)
    version = _VERSION if own is not None else _VERSION_UNNAMED
    header = {"format": _FORMAT, "version": version, "type": type(params).__name__,
              "fields": kinds, "feature_names": feature_names, "target_name": target_name}
    arrays[_HEADER] = np.asarray(json.dumps(header))
    path = _save_path(path)
    mode = _mode_of(path)
    if mode is None or stat.S_ISREG(mode):
        with atomic_write(path) as fh:  # a kill at any moment leaves the old file or the new
            np.savez(fh, **arrays)
        return path
    buffer = io.BytesIO()  # a device or pipe cannot seek, and the zip writer does
    np.savez(buffer, **arrays)
    try:
        with atomic_write(path) as fh:
            fh.write(buffer.getbuffer())
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write params to {path!r}, {_kind_of(mode)}: "
                                 f"{exc.strerror or exc}") from None
    return path


def _save_path(path):
    """The file :func:`save_params` writes: ``path`` with ``.npz`` appended where
    missing, unless ``path`` is an existing device or pipe (``/dev/null``); a
    ValueError for an empty path or a directory."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    mode = _mode_of(path)
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        return path
    if not os.path.basename(path):
        raise ValueError(f"save_params needs a file name; got the path {path!r}, which "
                         f"names none (pass e.g. 'model.npz')")
    for candidate in (path, path if path.endswith(".npz") else path + ".npz"):
        if os.path.isdir(candidate):
            raise ValueError(f"{candidate!r} is a directory; pass a file path for the "
                             f"params (e.g. {os.path.join(candidate, 'model.npz')!r})")
    return path if path.endswith(".npz") else path + ".npz"


def _mode_of(path):
    """``st_mode`` of what ``path`` names (links followed), or None if nothing."""
    try:
        return os.stat(path).st_mode
    except (OSError, ValueError):
        return None


_SPECIAL = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a pipe (FIFO)"),
            (stat.S_ISSOCK, "a socket"))


def _kind_of(mode):
    """What a file of this ``st_mode`` is, in words (``"a socket"``)."""
    return next((kind for test, kind in _SPECIAL if test(mode)), "not a regular file")


def _resolve(path):
    """``path``, or ``path + ".npz"`` where only that exists (save_params adds it)."""
    path = os.fspath(path)
    if not os.path.exists(path) and not path.endswith(".npz") and os.path.exists(
            path + ".npz"):
        return path + ".npz"
    return path


def load_feature_names(path):
    """``(feature_names, target_name)`` stored in a params file.

    Each is None where the file does not hold it (``save_params`` was not given it, or
    the file is format version 1).  Raises :class:`ParamsFileError` as
    :func:`load_params` does, and for stored names that repeat or whose count is not
    the model's number of features (the file is read whole to check it).
    """
    header, _params = _load(path)
    names = header.get("feature_names")
    return (None if names is None else tuple(names)), header.get("target_name")


def _register_all_params():
    """Import every module that defines a params type (``import fastgen`` imports them
    only on first use), so that :data:`PARAMS_TYPES` knows them all."""
    from . import gda, logistic, naive_bayes  # noqa: F401


#: The array dtype kinds a scalar field of each declared kind may be stored as.
_SCALAR_DTYPES = {"int": "iu", "float": "f", "bool": "b", "str": "U"}


def _scalar(arr, kind, name, path):
    """The 0-d member ``arr`` as the Python scalar of the field's declared ``kind``;
    a member of another type (an edited file: 'yes' or 7 for a bool) is refused rather
    than converted."""
    if arr.shape != () or arr.dtype.kind not in _SCALAR_DTYPES[kind]:
        raise ParamsFileError(
            f"{os.fspath(path)!r}: the field {name!r} must be one {kind} value; the file "
            f"holds a {arr.dtype} array of shape {arr.shape}")
    return {"int": int, "float": float, "bool": bool, "str": str}[kind](arr[()])


def load_params(path):
    """Read params written by :func:`save_params` (its arrays read-only).

    ``path`` may omit the ``.npz`` suffix that :func:`save_params` adds.  Raises
    :class:`ParamsFileError` (a ``ValueError``) for a missing, truncated or foreign file,
    and for stored feature names that repeat or are not one per feature.
    """
    return _load(path)[1]


def _load(path):
    """The checked header and params of a params file."""
    header, values = _read(path, values=True)
    return _build(path, header, values)


def _build(path, header, values):
    """The params of a file read by :func:`_read`, checked."""
    cls = PARAMS_TYPES[header["type"]]
    expected = {f.name for f in dataclasses.fields(cls)}
    # fields added later with a default (e.g. GDAParams.rank) may be absent from
    # older files
    required = {f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING}
    if not required <= set(values) <= expected:
        raise ParamsFileError(f"{os.fspath(path)!r} does not match the fields of "
                              f"{cls.__name__}")
    try:
        params = cls(**values)  # the constructor's checks catch a crafted or damaged file
        params.check_consistency()  # and tables that do not belong together
    except (ValueError, TypeError) as exc:
        raise ParamsFileError(f"{os.fspath(path)!r} holds inconsistent params: "
                              f"{exc}") from None
    names = header.get("feature_names")
    if names is not None and len(names) != params.n_features_in:
        raise ParamsFileError(f"{os.fspath(path)!r} holds {len(names)} feature names; "
                              f"its model has {params.n_features_in} features (a crafted "
                              f"or damaged file)")
    return header, params


def _refuse_special(path, mode):
    if mode is not None and not stat.S_ISREG(mode):
        raise ParamsFileError(
            f"{os.fspath(path)!r} is {_kind_of(mode)}, not a params file: a params file "
            f"is a zip archive, read from a regular file (reading it needs seeking); "
            f"save or copy it to a file and load that")


def _open_regular(path):
    """``path`` opened for reading without blocking on a FIFO swapped in since it was
    checked, and checked again once open."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_BINARY", 0))
    try:
        _refuse_special(path, os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _read(path, *, values):
    """The checked header and (with ``values``) the field values of a params file."""
    path = _resolve(path)
    if not os.path.exists(path):
        raise ParamsFileError(f"params file {os.fspath(path)!r} does not exist")
    _refuse_special(path, _mode_of(path))  # before opening: opening a FIFO blocks
    try:
        with _open_regular(path) as fh:  # closed even when np.load fails half-way
            # a params file is a zip archive (.npz); anything else would reach np.load's
            # pickle branch, whose refusal talks of allow_pickle, not of the file
            magic = fh.read(6)
            fh.seek(0)
            if not (magic.startswith(b"PK\x03\x04") or magic == b"\x93NUMPY"):
                raise ParamsFileError(f"{os.fspath(path)!r} could not be read as a fastgen "
                                      f"params file: it is not an .npz archive")
            loaded = np.load(fh, allow_pickle=False)
            if not isinstance(loaded, np.lib.npyio.NpzFile):
                raise ParamsFileError(f"{os.fspath(path)!r} is not a fastgen params file "
                                      f"(it holds a single .npy array)")
            _check_members(loaded.zip, path)
            data = loaded
            if _HEADER not in data.files:
                raise ParamsFileError(
                    f"{os.fspath(path)!r} is not a fastgen params file (no fastgen header)"
                )
            header = json.loads(str(data[_HEADER][()]))
            if not isinstance(header, dict):
                raise ParamsFileError(f"{os.fspath(path)!r} could not be read as a fastgen "
                                      f"params file: its header is not a JSON object")
            if header.get("format") != _FORMAT:
                raise ParamsFileError(f"{os.fspath(path)!r} is not a fastgen params file")
            if header.get("version", 0) > _VERSION:
                raise ParamsFileError(
                    f"{os.fspath(path)!r} was written by a newer fastgen (format version "
                    f"{header['version']}); upgrade fastgen to read it"
                )
            if not isinstance(header.get("fields"), dict) or not all(
                    isinstance(k, str) and isinstance(v, str)
                    for k, v in header["fields"].items()):
                raise ParamsFileError(f"{os.fspath(path)!r} holds a malformed header (its "
                                      f"fields are not a table of names and kinds): a "
                                      f"crafted or damaged file")
            _check_expected_members(data.zip, path, header)
            _check_header_names(path, header, data)
            _register_all_params()
            cls = PARAMS_TYPES.get(header.get("type"))
            if cls is None:
                raise ParamsFileError(f"{os.fspath(path)!r} holds unknown params type "
                                      f"{header.get('type')!r}")
            out = {}
            for name, kind in (header["fields"].items() if values else ()):
                if kind == "none":
                    out[name] = None
                    continue
                if name not in data.files:
                    raise ParamsFileError(f"{os.fspath(path)!r} lacks the field {name!r}")
                arr = data[name]
                if kind == "array":
                    arr.flags.writeable = False  # fresh: the params keep it, no copy
                    out[name] = arr
                elif kind == "names":
                    names = json.loads(str(arr[()]))
                    if not isinstance(names, list) or not all(isinstance(n, str)
                                                              for n in names):
                        raise ParamsFileError(f"{os.fspath(path)!r} holds malformed "
                                              f"feature names")
                    out[name] = tuple(names)
                else:
                    out[name] = _scalar(arr, kind, name, path)
    except ParamsFileError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, KeyError, ValueError, TypeError,
            AttributeError, NotImplementedError, RuntimeError, zlib.error,
            MemoryError, SyntaxError, tokenize.TokenError) as exc:
        # ValueError: np.load refusing pickled data, a malformed .npy member, or bad JSON;
        # NotImplementedError: zipfile meeting a zip version or compression it does not
        # support; RuntimeError: an encrypted member; zlib.error: a damaged deflate
        # stream; MemoryError: a member too large for memory (its header is checked
        # against its size first, so only a genuinely huge file gets here);
        # tokenize.TokenError, SyntaxError: a .npy header numpy's parser cannot read
        raise ParamsFileError(f"{os.fspath(path)!r} could not be read as a fastgen params "
                              f"file: {type(exc).__name__}: {exc}") from None
    return header, out


def _check_header_names(path, header, data):
    """The header's feature and target names, checked: a list of distinct str, and the
    same as the params' own ``feature_names`` member where the file holds one (the names
    are stored twice; :func:`load_feature_names` reads the header, :func:`load_params`
    the member)."""
    names, target = header.get("feature_names"), header.get("target_name")
    if not (names is None or (isinstance(names, list)
                              and all(isinstance(n, str) for n in names))) \
            or not (target is None or isinstance(target, str)):
        raise ParamsFileError(f"{os.fspath(path)!r} holds malformed feature or target "
                              f"names in its header (feature_names must be str); save "
                              f"the params again")
    if names is not None and len(set(names)) != len(names):
        # a crafted ["a", "a"] would make fastgen predict read column a twice
        twice = next(n for i, n in enumerate(names) if n in names[:i])
        raise ParamsFileError(f"{os.fspath(path)!r} holds the feature name {twice!r} "
                              f"more than once: each feature has its own name (a "
                              f"crafted or damaged file)")
    if header["fields"].get("feature_names") == "names":
        try:
            own = json.loads(str(data["feature_names"][()]))
        except (KeyError, ValueError):
            raise ParamsFileError(f"{os.fspath(path)!r} holds malformed feature "
                                  f"names") from None
        if own != names:
            raise ParamsFileError(
                f"{os.fspath(path)!r} holds two different lists of feature names (the "
                f"header's feature_names and the member 'feature_names.npy'), which a "
                f"saved file keeps equal: a crafted or damaged file; save the params "
                f"again")


def _unexpected_member(path, name):
    return (f"{os.fspath(path)!r} holds the member {name!r}, which is not one a fastgen "
            f"params file holds (one '<field>.npy' member per field of the header and "
            f"{_HEADER + '.npy'!r}): a crafted or damaged file; save the params again")


def _check_expected_members(archive, path, header):
    """Refuse a member that is not the ``.npy`` of a field the header names (or the
    header itself): numpy would read an extra member under a field's key, silently."""
    fields = header.get("fields")
    if not isinstance(fields, dict):
        raise ParamsFileError(f"{os.fspath(path)!r} holds a malformed fastgen header")
    expected = {f"{name}.npy" for name, kind in fields.items() if kind != "none"}
    expected.add(f"{_HEADER}.npy")
    for name in archive.namelist():
        if name not in expected:
            raise ParamsFileError(_unexpected_member(path, name))


def _check_members(archive, path):
    """Refuse an archive with a member name twice (the reader would take one of them,
    silently), or a ``.npy`` member whose header claims more data than the member
    holds (reading it would allocate what the header says: a crafted header claiming
    shape (3, 10¹¹) asks for 2.2 TiB)."""
    names = archive.namelist()
    seen = set()
    for name in names:
        if name in seen:
            raise ParamsFileError(f"{os.fspath(path)!r} holds the member {name!r} more than "
                                  f"once: a params file has one member per field (a "
                                  f"crafted or damaged file)")
        seen.add(name)
        # numpy maps both 'means.npy' and 'means' to the key 'means' (and reads either);
        # a params file only ever holds '<field>.npy' members at the top level
        if not name.endswith(".npy") or "/" in name or "\\" in name \
                or not name[:-4].isidentifier():
            raise ParamsFileError(_unexpected_member(path, name))
    for info in archive.infolist():
        if not info.filename.endswith(".npy"):
            continue
        with archive.open(info) as fh:
            version = np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
            elif version in ((2, 0), (3, 0)):
                # 3.0 differs from 2.0 only in the header's encoding (utf-8 field names,
                # read here as latin-1: the same item size), and numpy reads it
                shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
            else:
                raise ParamsFileError(
                    f"{os.fspath(path)!r} could not be read as a fastgen params file: the "
                    f"member {info.filename!r} is .npy format {version[0]}.{version[1]}, "
                    f"which numpy does not read")
            header_size = fh.tell()
        claimed = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if claimed > info.file_size - header_size:
            raise ParamsFileError(
                f"{os.fspath(path)!r} could not be read as a fastgen params file: the "
                f"member {info.filename!r} claims shape {tuple(shape)} of {dtype} "
                f"({claimed} bytes) but holds {info.file_size - header_size} bytes")
