"""Logistic regression from formulas, as ``statsmodels.formula.api.logit`` and
``mnlogit``: ``fastgen.formula.logit("affair ~ age + C(religious)", data)`` fits
(:func:`fastgen.fit_logistic`) and returns the inference
(:func:`fastgen.logistic_inference`) with terms named and ordered as statsmodels names
and orders them.

Formulas are parsed and materialised by formulaic (the optional extra
``fastgen[formula]``), the engine statsmodels 0.15 supports beside patsy.  statsmodels
still defaults to patsy, whose term order differs from formulaic's: the intercept, then
the terms made of categorical factors only (by degree), then the others grouped by their
numerical factors (by degree within a group).  :func:`statsmodels_order` reorders the
formula so (statsmodels' own ``legacy`` ordering of formulaic formulas, transcribed), so
the columns and their names (``Intercept``, ``C(religious)[T.2.0]``,
``C(religious)[T.2.0]:age``) are those of a statsmodels fit of the same formula.

Rows with a missing value in any variable of the formula are dropped, as statsmodels
drops them; ``sample_weight`` and ``groups`` given per row of ``data`` are subset
alike.  The result keeps the design (:class:`FormulaDesign`), so that
``get_prediction(new_data)`` and ``predict(new_data)`` take data frames of the same
variables and transform them the same way (the same categories, the same
stateful transforms).

Imports: pandas and formulaic (on use), and fastgen's public names.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import numpy as np

__all__ = ["logit", "mnlogit", "FormulaDesign", "statsmodels_order"]

#: Keywords that go to :func:`fastgen.fit_logistic`, and to
#: :func:`fastgen.logistic_inference` (``sample_weight`` goes to both).
FIT_KEYWORDS = ("l2", "max_iter", "tol", "init", "penalty", "correction")
INFERENCE_KEYWORDS = ("cov_type", "groups", "ci", "alpha")


def _formulaic():
    try:
        import formulaic
        import formulaic.parser
    except ImportError as exc:
        raise ImportError(
            "fastgen.formula needs formulaic: pip install 'fastgen[formula]' (or "
            "pip install formulaic)") from exc
    return formulaic


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
    """

    formula: str
    model_spec: object
    column_names: tuple
    fit_intercept: bool

    def exog(self, data):
        """The design's columns of ``data`` (a DataFrame of the formula's variables)
        without the intercept, in the fitted order: a float64 DataFrame.  Rows with a
        missing value are dropped (the index says which remain)."""
        import pandas as pd

        if not isinstance(data, pd.DataFrame):
            data = pd.DataFrame(data)
        mm = self.model_spec.get_model_matrix(_object_strings(data), output="pandas")
        cols = [c for c in self.column_names if not (self.fit_intercept and c == "Intercept")]
        return mm[cols].astype(np.float64)


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


def statsmodels_order(formula, data):
    """``formula`` as a formulaic ``Formula`` whose terms come in the order patsy (and
    so statsmodels) gives them: the intercept; the terms of categorical factors only,
    by degree; then the others, grouped by their numerical factors in order of first
    appearance, by degree within a group.

    A transcription of statsmodels' ``FormulaManager._legacy_orderer`` (BSD-3-Clause).
    """
    formulaic = _formulaic()
    flags = formulaic.parser.DefaultFormulaParser.FeatureFlags.TWOSIDED
    mm = formulaic.model_matrix(formula, data)
    parser = formulaic.parser.DefaultFormulaParser(feature_flags=flags)
    parsed = formulaic.Formula(formula, _parser=parser, _ordering="none")
    if isinstance(mm, formulaic.ModelMatrices):
        rhs, rhs_formula, lhs_formula = mm.rhs, parsed.rhs, parsed.lhs
    else:
        rhs, rhs_formula, lhs_formula = mm, parsed, None
    include_intercept = any(t.degree == 0 and str(t) == "1" for t in rhs_formula)
    parser = formulaic.parser.DefaultFormulaParser(feature_flags=flags,
                                                   include_intercept=include_intercept)
    terms = list(parser.get_terms(str(rhs_formula)).root)
    categorical = list(rhs.model_spec.factor_contrasts.keys())

    def all_categorical(term):
        return all(f in categorical for f in term.factors)

    intercept = [t for t in terms if t.degree == 0]
    rest = [t for t in terms if t.degree != 0]
    cats = sorted([t for t in rest if all_categorical(t)], key=lambda t: t.degree)
    rest = [t for t in rest if not all_categorical(t)]
    groups = defaultdict(list)
    for t in rest:
        numeric = tuple(sorted(f for f in t.factors if f not in categorical))
        groups[numeric].append(t)
    others = [t for group in groups.values() for t in sorted(group, key=lambda t: t.degree)]
    rhs_ordered = formulaic.Formula(intercept + cats + others, _ordering="none")
    if lhs_formula is None:
        return rhs_ordered
    return formulaic.Formula(lhs=formulaic.Formula(lhs_formula, _ordering="none"),
                             rhs=rhs_ordered, _ordering="none")


def _patsy_names(columns, formula):
    """formulaic's column names as patsy spells them: patsy keeps the formula's
    double-quoted string literals as written (``Treatment("none")``), formulaic
    writes them single-quoted."""
    import re

    literals = re.findall(r'"([^"\\]*)"', formula)
    out = []
    for c in columns:
        for lit in literals:
            c = c.replace(f"'{lit}'", f'"{lit}"')
        out.append(c)
    return out


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


def _fit(formula, data, kw, multinomial):
    import pandas as pd

    import fastgen

    formulaic = _formulaic()
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
    ordered = statsmodels_order(formula, frame)
    mm = formulaic.model_matrix(ordered, frame, na_action="drop", output="pandas")
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
    names = tuple(_patsy_names(columns, formula))
    design = FormulaDesign(formula, rhs.model_spec, tuple(columns), fit_intercept)
    from .logistic.inference import labelled

    res = dataclasses.replace(res, feature_names=names, dep_name=dep_name, design=design,
                              params=np.asarray(res.params), bse=np.asarray(res.bse),
                              tvalues=np.asarray(res.tvalues),
                              pvalues=np.asarray(res.pvalues))
    return labelled(res)


def logit(formula, data, **kw):
    """Binary logistic regression from a formula, as ``statsmodels.formula.api.logit``.

    Parameters
    ----------
    formula : str
        ``"y ~ terms"`` in formulaic's (Wilkinson) syntax: ``C(x)`` for a categorical
        variable, ``a:b`` and ``a*b`` for interactions, ``- 1`` to drop the intercept,
        ``np.log(x)`` and other functions of the variables.
    data : pandas.DataFrame
        The variables; rows with a missing value in any of the formula's are dropped.
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
    return _fit(formula, data, kw, multinomial=False)


def mnlogit(formula, data, **kw):
    """Multinomial logistic regression from a formula, as
    ``statsmodels.formula.api.mnlogit``: coefficients of each class against the first
    (sorted) class.  Arguments and result as for :func:`logit`."""
    return _fit(formula, data, kw, multinomial=True)
