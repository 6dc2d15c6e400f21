"""Save and load fitted params as ``.npz`` files, without pickle.

The file holds one array per dataclass field plus a small JSON header naming the params
type, the format version and each field's kind (array, int, float, bool, str or None),
so that loading rebuilds exactly the object that was saved: same dtypes, same values,
bit for bit.
"""

from __future__ import annotations

import dataclasses
import json
import os
import zipfile

import numpy as np

from ._params import PARAMS_TYPES, FittedParams

__all__ = ["save_params", "load_params"]

_FORMAT = "fastgen-params"
_VERSION = 1
_HEADER = "__fastgen__"


class _NotParams(ValueError):
    """A file that was read but is not (a readable version of) a fastgen params file."""


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


def save_params(path, params) -> None:
    """Write ``params`` to ``path`` (an ``.npz`` file; numpy adds the suffix if missing)."""
    if not isinstance(params, FittedParams) or not dataclasses.is_dataclass(params):
        raise ValueError(
            f"params must be a fitted fastgen params object; got {type(params).__name__}"
        )
    arrays, kinds = {}, {}
    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        kind = _kind(value)
        kinds[f.name] = kind
        if kind == "array":
            arrays[f.name] = value
        elif kind != "none":
            arrays[f.name] = np.asarray(value)
    header = {"format": _FORMAT, "version": _VERSION, "type": type(params).__name__,
              "fields": kinds}
    arrays[_HEADER] = np.asarray(json.dumps(header))
    np.savez(path, **arrays)


def _register_all_params():
    """Import every module that defines a params type (``import fastgen`` imports them
    only on first use), so that :data:`PARAMS_TYPES` knows them all."""
    from . import gda, logistic, naive_bayes  # noqa: F401


def load_params(path):
    """Read params written by :func:`save_params`.

    Raises ``ValueError`` for a missing, truncated or foreign file.
    """
    if not os.path.exists(path):
        raise ValueError(f"params file {os.fspath(path)!r} does not exist")
    try:
        with open(path, "rb") as fh:  # closed even when np.load fails half-way
            loaded = np.load(fh, allow_pickle=False)
            if not isinstance(loaded, np.lib.npyio.NpzFile):
                raise _NotParams(f"{os.fspath(path)!r} is not a fastgen params file (it "
                                 f"holds a single .npy array)")
            data = loaded
            if _HEADER not in data.files:
                raise _NotParams(
                    f"{os.fspath(path)!r} is not a fastgen params file (no fastgen header)"
                )
            header = json.loads(str(data[_HEADER][()]))
            if header.get("format") != _FORMAT:
                raise _NotParams(f"{os.fspath(path)!r} is not a fastgen params file")
            if header.get("version", 0) > _VERSION:
                raise _NotParams(
                    f"{os.fspath(path)!r} was written by a newer fastgen (format version "
                    f"{header['version']}); upgrade fastgen to read it"
                )
            _register_all_params()
            cls = PARAMS_TYPES.get(header.get("type"))
            if cls is None:
                raise _NotParams(f"{os.fspath(path)!r} holds unknown params type "
                                 f"{header.get('type')!r}")
            values = {}
            for name, kind in header["fields"].items():
                if kind == "none":
                    values[name] = None
                    continue
                if name not in data.files:
                    raise _NotParams(f"{os.fspath(path)!r} lacks the field {name!r}")
                arr = data[name]
                if kind == "array":
                    values[name] = arr
                else:
                    values[name] = {"int": int, "float": float, "bool": bool,
                                    "str": str}[kind](arr[()])
    except _NotParams:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, KeyError, ValueError, TypeError,
            AttributeError) as exc:
        # ValueError: np.load refusing pickled data, a malformed .npy member, or bad JSON
        raise ValueError(f"{os.fspath(path)!r} could not be read as a fastgen params file: "
                         f"{exc}") from None
    expected = {f.name for f in dataclasses.fields(cls)}
    if set(values) != expected:
        raise ValueError(f"{os.fspath(path)!r} does not match the fields of {cls.__name__}")
    return cls(**values)
