"""Logistic regression from formulas, as ``statsmodels.formula.api.logit`` and
``mnlogit``: ``fastgen.formula.logit("affair ~ age + C(religious)", data)`` fits
(:func:`fastgen.fit_logistic`) and returns the inference
(:func:`fastgen.logistic_inference`) with terms named and ordered as statsmodels names
and orders them.

Formulas are parsed and materialised by formulaic (the optional extra
``fastgen[formula]``), the engine statsmodels 0.15 supports beside patsy.  statsmodels
still defaults to patsy, whose term order differs from formulaic's: patsy expands the
operators in its own order (``(a + b + c)**2``: the main effects, then the products)
and then puts the intercept and the terms of categorical factors only first (by
degree), then the others grouped by their numerical factors (by degree within a
group).  :func:`statsmodels_order` (``fastgen.formula.order``) reorders formulaic's
terms so, and the columns are named as patsy names them (``Intercept``,
``C(religious)[T.2.0]``, ``C(religious)[T.2.0]:age``, ``np.log(age + .5)`` as written,
``I(age > 30)[T.True]``): those of a statsmodels fit of the same formula.  The
formula's other names (functions, arrays, constants, modules) are looked up in the
caller's frame, as statsmodels' ``eval_env``.

Rows with a missing value in any variable of the formula are dropped, as statsmodels
drops them; ``sample_weight`` and ``groups`` given per row of ``data`` are subset
alike.  The result keeps the design (:class:`FormulaDesign`), so that
``get_prediction(new_data)`` and ``predict(new_data)`` take data frames of the same
variables and transform them the same way (the same categories, the same
stateful transforms): a category level the fit did not see is refused, a row with a
missing value is dropped by ``get_prediction`` and predicted NaN by ``predict``
(statsmodels' conventions), and rows keep the data's index.

Imports: numpy, ``fastgen.formula.order`` (pandas and formulaic on use), and
fastgen's public names.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .order import (
    boolean_factors,
    categorical_booleans,
    formulaic_module,
    patsy_names,
    statsmodels_order,
)

__all__ = ["logit", "mnlogit", "FormulaDesign", "statsmodels_order"]

#: Keywords that go to :func:`fastgen.fit_logistic`, and to
#: :func:`fastgen.logistic_inference` (``sample_weight`` goes to both).
FIT_KEYWORDS = ("l2", "max_iter", "tol", "init", "penalty", "correction")
INFERENCE_KEYWORDS = ("cov_type", "groups", "ci", "alpha")


@dataclasses.dataclass(frozen=True)
class FormulaDesign:
    """The right-hand side of a fitted formula: turns data into the model's columns.

    Attributes
    ----------
    formula : str
        The formula as given.
    model_spec : formulaic.ModelSpec
        formulaic's specification of the right-hand side (categories, stateful
        transforms), fixed at the fit.
    column_names : tuple of str
        The columns of the design, the intercept (``Intercept``) included.
    fit_intercept : bool
        Whether the design has an intercept column (fitted as the model's intercept).
    context : dict or None
        The names besides the data's columns that the formula was evaluated with
        (``eval_env``), used again for new data.
    fit_index : pandas.Index or None
        The labels of the fitted rows (the data's index, rows with missing values
        dropped): the rows of ``get_prediction()`` on the fitted data.
    """

    formula: str
    model_spec: object
    column_names: tuple
    fit_intercept: bool
    context: dict = dataclasses.field(default=None, repr=False, compare=False)
    fit_index: object = dataclasses.field(default=None, repr=False, compare=False)

    def exog(self, data, *, keep_missing=False):
        """The design's columns of ``data`` (a DataFrame of the formula's variables)
        without the intercept, in the fitted order: a float64 DataFrame indexed as
        ``data``.

        Rows with a missing value in a variable of the formula (or a missing value
        made by a transform, e.g. ``np.log`` of 0) are dropped, as statsmodels drops
        them, or kept as rows of NaN (``keep_missing=True``, for ``predict``).

        Raises
        ------
        ValueError
            For a category level (or a level of another type, e.g. the string
            ``"3.0"`` for a float column) that the fit did not see, naming the column
            and the levels: formulaic would code it silently as the reference level.
        """
        import warnings

        import pandas as pd

        if isinstance(data, dict):
            data = pd.DataFrame(data)
        if not isinstance(data, pd.DataFrame):
            raise ValueError(f"exog must be a pandas DataFrame of the formula's variables "
                             f"(a formula fit); got {type(data).__name__}")
        frame = _object_strings(data)
        unchecked = self._check_levels(frame)
        labels = frame.index
        frame = frame.copy(deep=False)
        frame.index = pd.RangeIndex(frame.shape[0])
        present = [v for v in self.model_spec.required_variables if v in frame.columns]
        missing = np.array(frame[present].isna().any(axis=1)) if present else \
            np.zeros(frame.shape[0], dtype=bool)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mm = self.model_spec.get_model_matrix(frame, output="pandas",
                                                  context=self.context,
                                                  na_action="ignore")
        if unchecked:
            self._refuse_unseen(caught, unchecked)
        for w in caught:  # the others: not about levels, not ours to hide
            if not _level_warning(w):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        cols = [c for c in self.column_names if not (self.fit_intercept and c == "Intercept")]
        X = mm[cols].astype(np.float64)
        missing = missing | ~np.isfinite(X.to_numpy()).all(axis=1)
        X.index = labels
        if keep_missing:
            X.loc[missing] = np.nan
            return X
        return X.loc[~missing]

    def _check_levels(self, frame):
        """Refuse levels of a categorical factor of one column (``x``, ``C(x)``,
        ``C(x, …)``) that the fit lacks; the names of the other categorical factors
        (not checked here: formulaic's warning tells of theirs)."""
        import re

        unchecked = []
        for factor, state in self.model_spec.factor_contrasts.items():
            expr = str(factor)
            m = re.fullmatch(r"C\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:,.*)?\)", expr, re.S)
            name = m.group(1) if m else expr
            cols = [c for c in frame.columns if c == name]
            if len(cols) != 1:
                unchecked.append(expr)
                continue
            col = frame[cols[0]]
            levels = list(state.levels)
            known = set(levels)
            try:
                unseen = [v for v in col[col.notna()].unique() if v not in known]
            except TypeError:  # pragma: no cover - unhashable values
                unchecked.append(expr)
                continue
            if unseen:
                unseen = [v.item() if isinstance(v, np.generic) else v for v in unseen]
                raise ValueError(
                    f"exog: column {cols[0]!r} (the factor {factor}) has the level(s) "
                    f"{unseen[:5]!r} that the fit did not see (its levels: {levels!r}); "
                    f"statsmodels refuses them too: drop those rows, or map them to a "
                    f"level of the fit (mind the type: 3.0 is not '3.0')")
        return unchecked

    @staticmethod
    def _refuse_unseen(caught, factors):
        """A level warning of formulaic's (unseen levels cast to NaN, which it would
        code as the reference level) not explained by missing values: refuse it."""
        for w in caught:
            if not _level_warning(w):
                continue
            text = str(w.message)
            inner = text[text.find("{") + 1:text.rfind("}")] if "{" in text else ""
            levels = [v.strip() for v in inner.split(",") if v.strip()]
            if any(not any(na in v for na in ("nan", "None", "<NA>", "NaT"))
                   for v in levels):
                raise ValueError(
                    f"exog: a categorical factor ({', '.join(factors)}) has levels the "
                    f"fit did not see (formulaic: {text.split(' They are')[0]}); "
                    f"statsmodels refuses them too: drop those rows or map them to "
                    f"levels of the fit")


def _level_warning(w):
    """Whether the caught warning ``w`` is formulaic's (or pandas') about categories
    outside the fitted levels."""
    text = str(w.message)
    return ("outside of the nominated levels" in text
            or "not in that dtype's categories" in text)


def _object_strings(data):
    """``data`` as patsy (and so statsmodels) reads it: pandas string columns as object
    columns (what statsmodels does before materialising, so categories come out
    alike) and boolean columns as categories ``[False, True]`` (patsy's
    ``flag[T.True]``, where formulaic would take them as numbers); the caller's frame
    is not modified."""
    import pandas as pd

    def convert(col):
        dt = col.dtype
        if isinstance(dt, pd.StringDtype):
            return col.astype(object)
        if pd.api.types.is_bool_dtype(dt):
            return pd.Categorical(col, categories=[False, True])
        return None

    changed = {c: convert(data[c]) for c in data.columns}
    changed = {c: v for c, v in changed.items() if v is not None}
    if not changed:
        return data
    data = data.copy(deep=False)
    for c, v in changed.items():
        data[c] = v
    return data


def _per_row(value, name, data, kept):
    """A per-row keyword (``sample_weight``, ``groups``): a column name of ``data``, or
    one value per row of ``data``, subset to the rows the formula kept."""
    if value is None:
        return None
    if isinstance(value, str):
        if value not in data.columns:
            raise ValueError(f"{name}={value!r} is not a column of data; pass a column "
                             f"name or one value per row of data")
        return data[value].to_numpy()[kept]
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.shape[0] != data.shape[0]:
        raise ValueError(f"{name} must have one value per row of data ({data.shape[0]} "
                         f"rows, before rows with missing values are dropped); got shape "
                         f"{arr.shape}")
    return arr[kept]


def _fit(formula, data, kw, multinomial, context):
    import pandas as pd

    import fastgen

    formulaic = formulaic_module()
    if not isinstance(formula, str) or "~" not in formula:
        raise ValueError(f"formula must be a string 'y ~ terms'; got {formula!r}")
    if isinstance(data, dict):
        data = pd.DataFrame(data)
    if not isinstance(data, pd.DataFrame):
        raise ValueError(f"data must be a pandas DataFrame (or a dict of columns); got "
                         f"{type(data).__name__}")
    if "fit_intercept" in kw:
        raise ValueError("fit_intercept: the formula says whether there is an intercept "
                         "(add '- 1' or '0 +' to drop it)")
    unknown = set(kw) - set(FIT_KEYWORDS) - set(INFERENCE_KEYWORDS) - {"sample_weight"}
    if unknown:
        raise ValueError(f"unknown keyword(s) {sorted(unknown)}: the formula functions "
                         f"take those of fit_logistic {list(FIT_KEYWORDS)}, of "
                         f"logistic_inference {list(INFERENCE_KEYWORDS)} and sample_weight")
    frame = _object_strings(data).copy(deep=False)
    frame.index = pd.RangeIndex(frame.shape[0])  # rows kept are positions
    try:
        boolean = boolean_factors(formula, frame, context)
        ordered = statsmodels_order(categorical_booleans(formula, boolean), frame,
                                    context=context)
    except formulaic.errors.FormulaSyntaxError as exc:
        raise ValueError(
            f"formula {formula!r}: {str(exc).splitlines()[0]} (formulaic's syntax: "
            f"arithmetic and comparisons of variables go inside I(), e.g. "
            f"I(age > 30), I(a + b))") from exc
    mm = formulaic.model_matrix(ordered, frame, na_action="drop", output="pandas",
                                context=context)
    lhs, rhs = mm.lhs, mm.rhs
    kept = np.asarray(rhs.index, dtype=np.intp)
    columns = [str(c) for c in rhs.columns]
    fit_intercept = "Intercept" in columns
    if fit_intercept and columns[0] != "Intercept":  # pragma: no cover - the order puts it first
        raise ValueError("the formula's intercept is not its first column")
    dep_name = str(formula.split("~", 1)[0].strip())
    if dep_name in frame.columns:  # a plain column: its own labels (str, float, ...)
        y = frame[dep_name].to_numpy()[kept]
    elif lhs.shape[1] == 1:
        y = lhs.iloc[:, 0].to_numpy()
    else:  # a categorical left side: one indicator column per level
        labels = np.array([str(c) for c in lhs.columns], dtype=object)
        y = labels[np.argmax(lhs.to_numpy(), axis=1)]
    n_classes = np.unique(y).shape[0]
    if not multinomial and n_classes > 2:
        raise ValueError(f"logit needs a binary left side; {dep_name!r} has {n_classes} "
                         f"values: use fastgen.formula.mnlogit")
    X = rhs.drop(columns=["Intercept"]) if fit_intercept else rhs
    X = X.astype(np.float64)
    w = _per_row(kw.get("sample_weight"), "sample_weight", frame, kept)
    fit_kw = {k: kw[k] for k in FIT_KEYWORDS if k in kw}
    inf_kw = {k: kw[k] for k in INFERENCE_KEYWORDS if k in kw}
    if "groups" in inf_kw:
        inf_kw["groups"] = _per_row(inf_kw["groups"], "groups", frame, kept)
    model = fastgen.fit_logistic(X, y, fit_intercept=fit_intercept, sample_weight=w,
                                 **fit_kw)
    res = fastgen.logistic_inference(model, X, y, sample_weight=w, **inf_kw)
    names = tuple(patsy_names(columns, formula, boolean, rhs.model_spec))
    import re

    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", formula))
    used = {k: v for k, v in (context or {}).items() if k in words}  # not all globals
    design = FormulaDesign(formula, rhs.model_spec, tuple(columns), fit_intercept,
                           context=used, fit_index=data.index[kept])
    from ..logistic.inference import labelled

    res = dataclasses.replace(res, feature_names=names, dep_name=dep_name, design=design,
                              params=np.asarray(res.params), bse=np.asarray(res.bse),
                              tvalues=np.asarray(res.tvalues),
                              pvalues=np.asarray(res.pvalues))
    return labelled(res)


def _caller_names(eval_env, depth=2):
    """The names a formula may use besides the data's columns, as patsy's
    ``EvalEnvironment.capture(eval_env)``: the locals over the globals of the frame
    ``eval_env`` levels above the caller of :func:`logit` / :func:`mnlogit` (0: that
    caller), or the mapping given."""
    import sys

    if eval_env is None:
        return {}
    if isinstance(eval_env, dict):
        return dict(eval_env)
    if isinstance(eval_env, bool) or not isinstance(eval_env, int) or eval_env < 0:
        raise ValueError(f"eval_env must be a frame depth (0: the caller) or a dict of "
                         f"names; got {eval_env!r}")
    try:
        frame = sys._getframe(depth + eval_env)
    except ValueError:
        raise ValueError(f"eval_env={eval_env} is deeper than the call stack; pass a "
                         f"smaller depth or a dict of names") from None
    try:
        return {**frame.f_globals, **frame.f_locals}
    finally:
        del frame


def logit(formula, data, *, eval_env=0, **kw):
    """Binary logistic regression from a formula, as ``statsmodels.formula.api.logit``.

    Parameters
    ----------
    formula : str
        ``"y ~ terms"`` in formulaic's (Wilkinson) syntax: ``C(x)`` for a categorical
        variable, ``a:b`` and ``a*b`` for interactions, ``- 1`` to drop the intercept,
        ``np.log(x)`` and other functions of the variables.
    data : pandas.DataFrame
        The variables; rows with a missing value in any of the formula's are dropped.
    eval_env : int or dict, default 0
        Where the formula's other names (functions, arrays, constants, modules such as
        ``numpy``) are looked up, as statsmodels' ``eval_env``: the local and global
        names of the calling frame (0), of a frame further up (1, 2, …), or a dict;
        the data's columns come first.  Kept for the new data of ``predict`` and
        ``get_prediction``.
    **kw
        What :func:`fastgen.fit_logistic` takes (``penalty="firth"``, ``correction``,
        ``l2``, ``max_iter``, ``tol``, ``init``), what
        :func:`fastgen.logistic_inference` takes (``cov_type``, ``groups``, ``ci``,
        ``alpha``) and ``sample_weight``; ``sample_weight`` and ``groups`` may name a
        column of ``data``.

    Returns
    -------
    fastgen.LogisticInference
        Labelled by term (pandas ``params``, ``bse``, ... indexed ``Intercept``,
        ``C(x)[T.b]``, ...), ``dep_name`` the formula's left side, and ``design`` the
        :class:`FormulaDesign` that new data go through.

    Raises
    ------
    ImportError
        Without formulaic.
    ValueError
        For a left side with more than two values (use :func:`mnlogit`), unknown
        keywords, and whatever the fit and the inference refuse.
    """
    return _fit(formula, data, kw, multinomial=False, context=_caller_names(eval_env))


def mnlogit(formula, data, *, eval_env=0, **kw):
    """Multinomial logistic regression from a formula, as
    ``statsmodels.formula.api.mnlogit``: coefficients of each class against the first
    (sorted) class.  Arguments and result as for :func:`logit`."""
    return _fit(formula, data, kw, multinomial=True, context=_caller_names(eval_env))
