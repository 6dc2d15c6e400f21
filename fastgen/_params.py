"""The base class of every fitted-parameter dataclass.

A params object is a frozen dataclass whose fields are numpy arrays or plain scalars
(int, float, bool, str), plus ``feature_names``: the column names of the data frame it
was fitted on (a tuple of str), or None.  It hands over the tables of its scoring
formula (:meth:`FittedParams.scoring_tables`) to its family's scorer
(``params.scorer``, :mod:`fastgen._scorer`), which validates X once and picks the host
or device kernels; the public functions in :mod:`fastgen.scoring` call the scorer.

Every params object is checked when it is built, whatever built it (a fit,
:func:`dataclasses.replace`, :func:`fastgen.load_params`, a direct call): shapes that
agree with the number of classes and features, float dtypes, finite values where the
model needs them, and sorted distinct classes.  A failure is a ValueError naming the
field, so that nothing inconsistent reaches a kernel.  Two params objects compare equal
(``==``) when their fields hold equal values; they are not hashable.

Subclasses name their ``scorer``, implement ``scoring_tables()`` and
``_check_fields`` (their own checks), and may add ``_check_derived``.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import numbers

import numpy as np

from ._scorer import Scorer
from ._validation import stored_feature_names, writeable_view

__all__ = ["FittedParams", "FieldChecker", "register_params", "PARAMS_TYPES",
           "kernel_view", "attach_feature_names", "derived_from_checked_input",
           "history_slack"]

def history_slack(scale, dtype) -> float:
    """How far an EM history of params in ``dtype`` may fall between two entries of
    size up to ``scale`` and still count as monotone: 16 ε(dtype)·scale, and at least
    1e-9·scale.  The params are rounded to ``dtype`` (float32: ε ≈ 1.2e-7) after each
    M-step and scored in it, which moves ℓ by about ε·|ℓ| (each row's score moves by
    ε times its size); the float64 sum of n row scores rounds by up to n·ε₆₄·|ℓ|, which
    1e-9 covers to n ≈ 4·10⁶.  A real fall (an edited history, a broken M-step) is
    larger."""
    return max(16.0 * float(np.finfo(dtype).eps), 1e-9) * float(scale)


# name -> class, for load_params.
PARAMS_TYPES: dict[str, type] = {}

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# label dtypes that save without pickle and sort: bool, numbers, strings, dates
_LABEL_KINDS = "biufUSmM"
# set while a builder constructs params from statistics it has checked itself
_DERIVED = contextvars.ContextVar("fastgen_params_derived", default=False)


@contextlib.contextmanager
def derived_from_checked_input():
    """Within this block, params skip the scans of their array values (shapes, dtypes
    and classes are still checked).

    For builders whose tables are computed from input they have validated (a fit's
    counts, checked user counts): their values are right by construction, and a scan of
    a (K, d) table with d = 1e5 features costs a few per cent of the fit.
    """
    token = _DERIVED.set(True)
    try:
        yield
    finally:
        _DERIVED.reset(token)


def register_params(cls):
    """Class decorator (outside ``@dataclass``): make a params dataclass known to
    save/load and give it :class:`FittedParams`' value equality (the dataclass's own
    ``__eq__`` compares arrays with ``==``, whose truth value numpy cannot tell)."""
    cls.__eq__ = FittedParams.__eq__
    cls.__hash__ = FittedParams.__hash__
    PARAMS_TYPES[cls.__name__] = cls
    return cls


def _same(a, b) -> bool:
    """Whether two field values are equal: arrays by shape, dtype and values (NaN equal
    to NaN, strings of any width), scalars by type and value."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) \
                or a.shape != b.shape:
            return False
        if a.dtype != b.dtype and not (a.dtype.kind == b.dtype.kind and a.dtype.kind in "US"):
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


def _shared_with_a_writer(a: np.ndarray) -> bool:
    """Whether memory of read-only ``a`` can still be written through another object:
    an array it views that is writeable, or a mutable Python buffer under it."""
    base = a.base
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return True
        base = base.base
    return isinstance(base, bytearray) or (isinstance(base, memoryview)
                                           and not base.readonly)


def _own(a: np.ndarray) -> np.ndarray:
    """``a`` if no one else can write it and it is C-contiguous, else a read-only copy."""
    if a.flags.writeable or not a.flags.c_contiguous or _shared_with_a_writer(a):
        a = np.array(a, order="C")  # a copy
        a.flags.writeable = False
    return a


class FieldChecker:
    """The construction checks of one params object: each method checks one field,
    stores its normalised value (read-only arrays, plain Python scalars) and raises a
    ValueError naming the class and the field.

    ``K`` is the number of classes; ``d`` is set by :meth:`table` (or by the caller).
    Shapes are tuples of ints or of the names ``"K"``, ``"d"``, so that a message shows
    both the meaning and the numbers: "must have shape (K, d) = (3, 4); got (1, 4)".
    """

    def __init__(self, params):
        self.params = params
        self.owner = type(params).__name__
        self.K = None
        self.d = None

    def fail(self, field, problem):
        raise ValueError(f"{self.owner}.{field} {problem}")

    def _set(self, field, value):
        object.__setattr__(self.params, field, value)
        return value

    # ---- arrays
    def _as_array(self, field):
        a = getattr(self.params, field)
        if isinstance(a, np.ndarray):
            return a
        if a is None or isinstance(a, (str, bytes)):
            self.fail(field, f"must be a numpy array; got {a!r}")
        try:
            a = np.array(a)  # a copy: never a view of the caller's object
        except (TypeError, ValueError) as exc:
            self.fail(field, f"must be a numpy array: {exc}")
        if a.dtype == object:
            self.fail(field, "must not be an object array")
        a.flags.writeable = False
        return self._set(field, a)

    def _shape(self, spec):
        sizes = {"K": self.K, "d": self.d}
        return tuple(sizes[s] if isinstance(s, str) else s for s in spec)

    def array(self, field, shape, dtype="float", values=None):
        """Check an array field and return it.

        ``shape``: see the class docstring (None: any length); ``dtype``: a numpy dtype,
        "float" (float32 or float64) or "int" (integers, stored as int64); ``values``:
        None, "finite", "nonneg" (finite, ≥ 0), "positive" (finite, > 0) or "log" (a
        log-probability: no NaN, no +inf; −inf allowed), not scanned inside
        :func:`derived_from_checked_input`.
        """
        a = self._as_array(field)
        want = self._shape(shape)
        if a.ndim != len(want) or any(w is not None and n != w
                                      for n, w in zip(a.shape, want)):
            def show(dims):
                return "(" + ", ".join("n" if s is None else str(s) for s in dims) + \
                    ("," if len(dims) == 1 else "") + ")"

            named = "" if all(isinstance(s, int) for s in shape) else f"{show(shape)} = "
            shown = show(want)
            self.fail(field, f"must have shape {named}{shown}; got {a.shape}")
        if dtype == "float":
            if a.dtype not in _FLOATS:
                self.fail(field, f"must have dtype float32 or float64; got {a.dtype}")
        elif dtype == "int":
            if a.dtype.kind not in "iu":
                self.fail(field, f"must hold integers; got dtype {a.dtype}")
            if a.dtype != np.int64:
                if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
                    self.fail(field, "has entries beyond the range of int64")
                a = a.astype(np.int64)
                a.flags.writeable = False
                self._set(field, a)
        elif a.dtype != dtype:
            self.fail(field, f"must have dtype {np.dtype(dtype)} (that of the model's "
                             f"tables); got {a.dtype}")
        if values is not None and a.size and not _DERIVED.get():
            self._values(field, a, values)
        return a

    def _values(self, field, a, values):
        # min/max reductions: no temporaries; NaN propagates and fails every test
        hi = a.max()
        lo = -np.inf if values == "log" else a.min()
        ok = {"finite": lo > -np.inf and hi < np.inf, "nonneg": lo >= 0 and hi < np.inf,
              "positive": lo > 0 and hi < np.inf, "log": hi < np.inf}[values]
        if ok:
            return
        want = {"finite": "finite", "nonneg": "finite and non-negative",
                "positive": "finite and positive",
                "log": "log-probabilities (no NaN or +inf)"}[values]
        with np.errstate(invalid="ignore"):
            bad = {"finite": ~np.isfinite(a), "nonneg": ~(np.isfinite(a) & (a >= 0)),
                   "positive": ~(np.isfinite(a) & (a > 0)),
                   "log": np.isnan(a) | (a == np.inf)}[values]
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = idx[0] if len(idx) == 1 else idx
        self.fail(field, f"must be {want}; entry {where} is {a[idx]!r}")

    def table(self, field, values=None):
        """The (K, d) table that fixes the model's feature count and dtype; sets ``d``."""
        a = self._as_array(field)
        if a.ndim != 2 or a.shape[0] != self.K or a.shape[1] < 1:
            self.fail(field, f"must have shape (K, d) with K = {self.K} classes and "
                             f"d ≥ 1 features; got {a.shape}")
        if self.d is None:
            self.d = int(a.shape[1])
        return self.array(field, ("K", "d"), "float", values)

    def probabilities(self, field, dtype="float"):
        """A (K,) probability vector: finite, ≥ 0, summing to one."""
        p = self.array(field, ("K",), dtype, "nonneg")
        total = float(p.sum(dtype=np.float64))
        if not abs(total - 1.0) <= 1e-6 + 16 * self.K * np.finfo(p.dtype).eps:
            self.fail(field, f"must sum to 1; they sum to {total:.10g}")
        return p

    # ---- scalars
    def real(self, field, *, low=None, finite=True, optional=False):
        v = getattr(self.params, field)
        if v is None and optional:
            return None
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            self.fail(field, f"must be a real number; got {v!r}")
        v = float(v)
        if finite and not np.isfinite(v):
            self.fail(field, f"must be finite; got {v!r}")
        if low is not None and not v >= low:
            self.fail(field, f"must be >= {low}; got {v!r}")
        return self._set(field, v)

    def integer(self, field, *, low=None):
        v = getattr(self.params, field)
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            self.fail(field, f"must be an integer; got {v!r}")
        v = int(v)
        if low is not None and v < low:
            self.fail(field, f"must be >= {low}; got {v!r}")
        return self._set(field, v)

    def boolean(self, field):
        v = getattr(self.params, field)
        if not isinstance(v, (bool, np.bool_)):
            self.fail(field, f"must be True or False; got {v!r}")
        return self._set(field, bool(v))

    def choice(self, field, options):
        v = getattr(self.params, field)
        if not isinstance(v, str) or v not in options:
            self.fail(field, f"must be one of {tuple(options)}; got {v!r}")
        return self._set(field, str(v))

    def string(self, field):
        v = getattr(self.params, field)
        if not isinstance(v, str):
            self.fail(field, f"must be a str; got {v!r}")
        return self._set(field, str(v))

    def em_record(self):
        """The record of an EM fit (:mod:`fastgen._em`, :mod:`fastgen.gda.em`):
        ``n_iter``, ``converged``, ``log_likelihood_history`` and ``history_monotone``
        all None (a fit without EM), or an integer ≥ 0, a bool, a finite float64 array
        of ``n_iter + 1`` entries and a bool.  ``history_monotone`` True (EM whose
        M-step maximises: the objective cannot decrease) holds the history to never
        decreasing beyond the rounding of the params' dtype
        (:func:`history_slack`: 16 ε·max|ℓ|, at least 1e-9·max|ℓ|), so a
        damaged or edited history fails; False
        (a regularised M-step: ``reg``, shrinkage, ``unbiased``, a variance floor) lets
        it dip."""
        fields = ("n_iter", "converged", "log_likelihood_history", "history_monotone")
        given = [getattr(self.params, f) is not None for f in fields]
        if not any(given):
            return
        if not all(given):
            missing = [f for f, g in zip(fields, given) if not g]
            self.fail(missing[0], f"must be set with the other fields of the EM record "
                                  f"({', '.join(fields)}): all or none")
        n_iter = self.integer("n_iter", low=0)
        self.boolean("converged")
        monotone = self.boolean("history_monotone")
        hist = self.array("log_likelihood_history", (n_iter + 1,), np.float64, "finite")
        if not monotone:
            return
        slack = history_slack(np.max(np.abs(hist), initial=1.0),
                              getattr(self.params, "dtype", np.float64))
        drops = np.flatnonzero(np.diff(hist) < -slack)
        if drops.size:
            at = int(drops[0]) + 1
            self.fail("log_likelihood_history", f"must never decrease (EM, "
                                                f"history_monotone=True); entry {at} is "
                                                f"below entry {at - 1} (a damaged or "
                                                f"edited file)")

    # ---- what every params object has
    def classes(self, min_classes=1):
        c = self._as_array("classes")
        if c.ndim != 1 or c.shape[0] < min_classes:
            self.fail("classes", f"must be a 1-D array of at least {min_classes} labels; "
                                 f"got shape {c.shape}")
        if c.dtype.kind not in _LABEL_KINDS:
            self.fail("classes", f"must hold numbers, strings or dates; got dtype {c.dtype}")
        if c.dtype.kind == "f" and not np.all(np.isfinite(c)):
            self.fail("classes", "must be finite")
        if c.shape[0] > 1 and not np.all(c[1:] > c[:-1]):
            self.fail("classes", f"must be sorted and distinct (as np.unique returns "
                                 f"them); got {c.tolist()}")
        self.K = int(c.shape[0])
        return c

    def feature_names(self):
        names = stored_feature_names(getattr(self.params, "feature_names", None),
                                     self.params.n_features_in, self.owner)
        return self._set("feature_names", names) if names is not None else None


def log_normalised(check, field, table, axis, dtype):
    """Fail unless logsumexp of ``table`` along ``axis`` is 0 (each slice a probability
    distribution, to the rounding of ``dtype``): −∞ entries count as zero mass."""
    t = np.asarray(table, dtype=np.float64)
    if t.size == 0:
        return
    top = np.max(t, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(t - top), axis=axis))
    width = t.shape[axis]
    tol = 8.0 * np.finfo(dtype).eps * (width + float(np.max(np.abs(t[np.isfinite(t)]),
                                                             initial=1.0)))
    bad = ~(np.abs(total) <= tol)
    if np.any(bad):
        at = np.argwhere(bad)[0]
        check.fail(field, f"must be log-probabilities summing to one; at {tuple(at.tolist())} "
                          f"they sum to exp({float(total[tuple(at)]):.6g}) (a damaged or "
                          f"edited file)")


def recomputed(check, field, have, want, dtype, source):
    """Fail unless the stored table ``have`` is ``want`` (recomputed in float64 from the
    primary fields named by ``source``) to the rounding of ``dtype``: the cast to
    ``dtype`` (ε/2 of each entry) and float64 sums of a row (its width times ε₆₄);
    equal infinities (log 0) match."""
    have = np.asarray(have, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if have.shape != want.shape:
        check.fail(field, f"must have the shape {want.shape} of {source}")
    width = want.shape[-1] if want.ndim else 1
    aw = np.abs(want)
    tol = 2.0 * np.finfo(dtype).eps * aw + 16.0 * np.finfo(np.float64).eps * (
        width + 1) * np.maximum(aw, 1.0)
    with np.errstate(invalid="ignore"):
        bad = ~((have == want) | (np.abs(have - want) <= tol))
    if np.any(bad):
        at = tuple(np.argwhere(bad)[0].tolist())
        check.fail(field, f"must be recomputed from {source}; at {at} it holds "
                          f"{have[at]:.17g}, they give {want[at]:.17g} (a damaged or "
                          f"edited file: save the params again)")


class FittedParams:
    """Mixin for frozen parameter dataclasses."""

    #: the model family's :class:`~fastgen._scorer.Scorer`: it scores X with the
    #: tables of :meth:`scoring_tables`
    scorer: Scorer

    @property
    def accepts_sparse(self) -> bool:
        """Whether scoring accepts scipy CSR input (that of the family's scorer)."""
        return self.scorer.accepts_sparse

    #: whether the params carry an EM record (``n_iter``, ``converged``,
    #: ``log_likelihood_history``; see :meth:`FieldChecker.em_record`)
    _records_em: bool = False

    #: name of the (K, d) array field that fixes the model's width and dtype: its last
    #: axis has one entry per feature, its dtype is the one scoring computes in
    _feature_table: str

    @property
    def n_features_in(self) -> int:
        """Number of features d: the last axis of the ``_feature_table`` field."""
        return int(getattr(self, self._feature_table).shape[-1])

    @property
    def dtype(self) -> np.dtype:
        """The floating dtype scoring computes in (that of the fitted parameters)."""
        return getattr(self, self._feature_table).dtype

    def __post_init__(self):
        self._check_arrays()
        check = FieldChecker(self)
        check.classes()
        self._check_fields(check)
        if self._records_em:
            check.em_record()
        check.feature_names()

    def _check_fields(self, check: FieldChecker):
        """Check the model's own fields (shapes, dtypes, values): each subclass."""
        raise NotImplementedError  # pragma: no cover - every params type defines it

    def check_consistency(self):
        """Check the derived tables against the primary fields they come from, to a
        tolerance of the params' dtype, and raise a ValueError naming the field.

        A fit builds each table from the others, so this holds for every fitted model;
        :func:`fastgen.load_params` calls it, because a file can pair tables that do not
        belong together (an edited ``log_det``, a Cholesky factor of another
        covariance).  The construction checks (:meth:`_check_fields`) see one field at
        a time and stay cheap; this costs about as much as scoring a few rows.
        """
        self._check_derived(FieldChecker(self))

    def _check_derived(self, check: FieldChecker):
        """The cross-field checks of :meth:`check_consistency` (none by default)."""

    def __eq__(self, other):
        """Equal fields (arrays by shape, dtype and values; feature names included)."""
        if type(other) is not type(self):
            return NotImplemented
        return all(_same(getattr(self, f.name), getattr(other, f.name))
                   for f in dataclasses.fields(self))

    def __getstate__(self):
        """The fields only, for pickle and :mod:`copy`: cached scoring tables are rebuilt
        on first use."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def __setstate__(self, state):
        """Unpickling (and ``copy.copy``/``deepcopy``) builds through the same checks as
        the constructor; a field missing from an older pickle takes its default."""
        for f in dataclasses.fields(self):
            if f.name in state:
                value = state[f.name]
            elif f.default is not dataclasses.MISSING:
                value = f.default
            else:
                raise ValueError(f"{type(self).__name__} state lacks the field {f.name!r}")
            if isinstance(value, np.ndarray) and value.base is None and value.flags.writeable:
                value.flags.writeable = False  # fresh from the pickle: kept, not copied
            object.__setattr__(self, f.name, value)
        self.__post_init__()

    def __hash__(self):
        raise TypeError(
            f"unhashable type: {type(self).__name__!r} (params hold numpy arrays and "
            f"compare by value; key a dict by id(params) instead)"
        )

    @property
    def n_classes(self) -> int:
        return int(self.classes.shape[0])

    def scoring_tables(self):
        """``(kind, tables)``: the float64 tables of the scoring formula, for the
        family's scorer (``self.scorer``, host or device kernels); see
        :mod:`fastgen._scorer`."""
        raise NotImplementedError  # pragma: no cover - every params type defines it

    def _check_arrays(self):
        """Reject object arrays (params must round-trip through npz without pickle) and
        make every array field read-only memory that the params object owns.

        Scoring tables derived from the fields are cached on the object at its first
        use, so a field edited in place would be silently ignored: in-place writes
        raise instead, and :func:`dataclasses.replace` (a new object, new caches) is the
        way to change a model.  An array someone else can write is copied first: a
        writeable one, and a read-only view of memory that is writeable elsewhere (the
        caller's array, or a mutable buffer); so is a non-contiguous one.  The caller's
        array stays writeable.  An array no one else can write (a fit's fresh result
        handed over read-only, a read-only memmap) is kept as it is: the copies are of
        the parameters, K×d sized, never of the data, and fits pay none.

        numba compiles a separate specialisation of a kernel for read-only arrays:
        fields and the tables derived from them reach kernels through
        :func:`kernel_view` (a writeable-flagged alias, no copy), so every kernel keeps
        one specialisation per dtype.
        """
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, np.ndarray):
                continue
            if v.dtype == object:
                raise ValueError(f"{type(self).__name__}.{f.name} must not be an object array")
            owned = _own(v)
            if owned is not v:
                object.__setattr__(self, f.name, owned)


def attach_feature_names(params, names):
    """``params`` with ``feature_names`` set to ``names`` (checked), in place.

    For a params object its builder has just made and not yet returned (no one else
    holds it), as a fit does after the solver has built its result; ``None`` leaves it
    unchanged.
    """
    if names is not None:
        object.__setattr__(params, "feature_names", names)
        FieldChecker(params).feature_names()
    return params


def kernel_view(*arrays):
    """Writeable-flagged aliases (no copy) of read-only arrays, for kernel calls.

    Kernels never write their table arguments; the alias keeps numba at one
    specialisation per dtype (see :meth:`FittedParams._check_arrays`).  Non-arrays pass
    through.  One argument gives one result, several a tuple.
    """
    out = tuple(writeable_view(a) if isinstance(a, np.ndarray) else a for a in arrays)
    return out[0] if len(out) == 1 else out
