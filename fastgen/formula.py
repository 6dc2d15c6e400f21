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
        checked = self._check_levels(frame)
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
        if not checked:
            self._refuse_unseen(caught)
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
        """Refuse levels of a categorical factor of one column that the fit lacks;
        whether every categorical factor was of one column (so checked)."""
        import re

        checked = True
        for factor, state in self.model_spec.factor_contrasts.items():
            names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", str(factor)))
            cols = [c for c in frame.columns if c in names or str(factor) == c]
            if len(cols) != 1:
                checked = False
                continue
            col = frame[cols[0]]
            levels = list(state.levels)
            known = set(levels)
            try:
                unseen = [v for v in col[col.notna()].unique() if v not in known]
            except TypeError:  # pragma: no cover - unhashable values
                checked = False
                continue
            if unseen:
                unseen = [v.item() if isinstance(v, np.generic) else v for v in unseen]
                raise ValueError(
                    f"exog: column {cols[0]!r} (the factor {factor}) has the level(s) "
                    f"{unseen[:5]!r} that the fit did not see (its levels: {levels!r}); "
                    f"statsmodels refuses them too: drop those rows, or map them to a "
                    f"level of the fit (mind the type: 3.0 is not '3.0')")
        return checked

    @staticmethod
    def _refuse_unseen(caught):
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
                raise ValueError(f"exog: a categorical factor has levels the fit did not "
                                 f"see ({text.split('.')[0]}); drop those rows or map "
                                 f"them to levels of the fit")


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


def _patsy_raw_terms(node, power_error):
    """The terms of formulaic's syntax tree ``node`` in the order patsy's evaluator
    produces them (``patsy.desc``, BSD-2-Clause), each a tuple of formulaic factors
    (duplicates dropped, first kept): ``a + b`` the left's then the right's; ``a:b``
    every left term with every right term, left-major; ``a*b`` as ``a + b + a:b``;
    ``a/b`` as ``a + (all of a's factors):b``; ``(…)**n`` the terms, then their
    products of degree 2, 3 … n (``_interaction(left, big)`` in turn).  ``-`` keeps
    the left's order (formulaic decides what is removed).  Returns None for an
    operator patsy lacks (formulaic's order is kept then)."""
    from formulaic.parser.types import Token

    def uniq(seq):
        out, seen = [], set()
        for x in seq:
            key = frozenset(f.expr for f in x) if isinstance(x, tuple) else x
            if key not in seen:
                seen.add(key)
                out.append(x)
        return out

    def term(factors):
        return tuple(uniq(list(factors)))

    def interaction(left, right):
        return uniq([term(lt + rt) for lt in left for rt in right])

    def ev(n):
        if isinstance(n, Token):
            if n.kind is Token.Kind.VALUE:  # 0, 1: the intercept, handled apart
                return []
            return [tuple(t.factors) for t in n.to_terms()]
        sym = n.operator.symbol
        args = n.args
        if len(args) == 1 and sym in ("+", "-"):
            return [] if sym == "-" else ev(args[0])
        if len(args) != 2:
            raise LookupError(sym)
        if sym == "**":
            power = args[1]
            try:
                k = int(str(power))
            except ValueError:
                raise power_error(str(power)) from None
            left = ev(args[0])
            out, big = list(left), left
            for _ in range(1, k):
                big = interaction(left, big)
                out += big
            return uniq(out)
        if sym == "+":
            return uniq(ev(args[0]) + ev(args[1]))
        if sym == "-":
            return ev(args[0])
        if sym == ":":
            return interaction(ev(args[0]), ev(args[1]))
        if sym == "*":
            left, right = ev(args[0]), ev(args[1])
            return uniq(left + right + interaction(left, right))
        if sym == "/":
            left, right = ev(args[0]), ev(args[1])
            combined = [term(f for t in left for f in t)]
            return uniq(left + interaction(combined, right))
        raise LookupError(sym)

    try:
        return ev(node)
    except LookupError:
        return None


def _boolean_factors(formula, data, context):
    """The ``I(…)`` factors of ``formula`` whose values are booleans (``I(age > 30)``):
    patsy codes them as categoricals of levels False, True (named ``[T.True]``),
    formulaic as numbers 0, 1 (the same column).  Evaluated as formulaic evaluates
    ``I``: the code with the data's columns and ``context``'s names."""
    formulaic = _formulaic()
    parser = formulaic.parser.DefaultFormulaParser(
        feature_flags=formulaic.parser.DefaultFormulaParser.FeatureFlags.TWOSIDED)
    try:
        terms = parser.get_terms(formula)
    except Exception:  # pragma: no cover - formulaic parsed it before
        return set()
    roots = [terms.lhs, terms.rhs] if hasattr(terms, "rhs") else [terms.root]
    found = set()
    names = {"np": np, "numpy": np, **dict(context or {})}
    for part in roots:
        for t in (part.root if hasattr(part, "root") else part):
            for f in t.factors:
                e = f.expr
                if not (e.startswith("I(") and e.endswith(")")):
                    continue
                try:
                    v = eval(e[2:-1], dict(names), {c: data[c] for c in data.columns
                                                    if isinstance(c, str)})
                except Exception:
                    continue
                if np.asarray(v).dtype == np.bool_:
                    found.add(e)
    return found


def statsmodels_order(formula, data, context=None, boolean=()):
    """``formula`` as a formulaic ``Formula`` whose terms come in the order patsy (and
    so statsmodels, whose default engine is patsy) gives them.

    patsy first evaluates the formula into a list of terms (:func:`_patsy_raw_terms`:
    ``(a + b + c)**2`` gives ``a, b, c, a:b, a:c, b:c``), then orders the columns
    (``patsy.build._make_subterm_infos``): the terms are put in buckets by the set of
    their numerical factors, the buckets in order of their first term, the bucket
    without numerical factors (the intercept and the terms of categorical factors
    only) first, and the terms of each bucket by degree (a stable sort).  formulaic's
    own parse gives the same set of terms in another order, so its terms are
    reordered so.

    Parameters
    ----------
    formula : str
    data : pandas.DataFrame
        Data to materialise the formula on (which factors are categorical).
    context : mapping, optional
        Names the formula may use besides the data's columns.
    """
    formulaic = _formulaic()
    flags = formulaic.parser.DefaultFormulaParser.FeatureFlags.TWOSIDED
    mm = formulaic.model_matrix(formula, data, context=context)
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
    ast = parser.get_ast(formula)
    if getattr(getattr(ast, "operator", None), "symbol", None) == "~":
        ast = ast.args[1]

    def power_error(text):
        return ValueError(f"formula: the power in '**{text}' must be a whole number; "
                          f"got {text!r}")

    raw = _patsy_raw_terms(ast, power_error)
    if raw is not None:  # formulaic's terms in patsy's order (unmatched ones last)
        rank = {}
        for i, t in enumerate(raw):
            rank.setdefault(frozenset(f.expr for f in t), i)
        key = {id(t): rank.get(frozenset(f.expr for f in t.factors), len(raw) + j)
               for j, t in enumerate(terms)}
        terms = sorted(terms, key=lambda t: key[id(t)])
    categorical = list(rhs.model_spec.factor_contrasts.keys())
    categorical += [f for t in terms for f in t.factors if f.expr in boolean]

    def all_categorical(term):
        return all(f in categorical for f in term.factors)

    buckets = defaultdict(list)  # dicts keep the order of the first term
    for t in terms:
        if t.degree == 0 or all_categorical(t):
            buckets[()].append(t)
        else:
            buckets[frozenset(f for f in t.factors if f not in categorical)].append(t)
    first = buckets.pop((), [])
    ordered = sorted(first, key=lambda t: t.degree)
    for group in buckets.values():
        ordered += sorted(group, key=lambda t: t.degree)
    rhs_ordered = formulaic.Formula(ordered, _ordering="none")
    if lhs_formula is None:
        return rhs_ordered
    return formulaic.Formula(lhs=formulaic.Formula(lhs_formula, _ordering="none"),
                             rhs=rhs_ordered, _ordering="none")


def _as_written(formula):
    """{formulaic's text of each Python factor: the text as written in ``formula``,
    spaced as patsy spaces it}: formulaic rewrites expressions (``.5`` → ``0.5``,
    ``1e-3`` → ``0.001``, quotes), patsy names the columns by the code as written,
    its tokens re-spaced (``patsy.tokens.normalize_token_spacing``, used when patsy is
    installed; else the text as written with its whitespace collapsed)."""
    formulaic = _formulaic()
    from formulaic.parser.types import Token

    try:
        from patsy.tokens import normalize_token_spacing
    except ImportError:  # pragma: no cover - patsy comes with statsmodels
        def normalize_token_spacing(code):
            return " ".join(code.split())

    parser = formulaic.parser.DefaultFormulaParser(
        feature_flags=formulaic.parser.DefaultFormulaParser.FeatureFlags.TWOSIDED)
    out = {}

    def walk(n):
        if isinstance(n, Token):
            if (n.kind is Token.Kind.PYTHON and n.source is not None
                    and n.source_start is not None):
                text = n.source[n.source_start:n.source_end + 1]
                try:
                    out[n.token] = normalize_token_spacing(text)
                except Exception:  # pragma: no cover - patsy's tokenizer refuses it
                    out[n.token] = " ".join(text.split())
            return
        for a in n.args:
            walk(a)

    try:
        walk(parser.get_ast(formula))
    except Exception:  # pragma: no cover - formulaic parsed it before
        return {}
    return {k: v for k, v in out.items() if k != v}


def _patsy_names(columns, formula, boolean=()):
    """formulaic's column names as patsy spells them: each Python factor by its code
    as written (:func:`_as_written`), and a factor of boolean values (``I(age > 30)``,
    which patsy codes as a categorical of levels False, True) suffixed ``[T.True]``."""
    import re

    written = _as_written(formula)
    pattern = None
    if written:
        pattern = re.compile("|".join(re.escape(k) for k in
                                      sorted(written, key=len, reverse=True)))
    out = []
    for c in columns:
        parts = c.split(":") if c != "Intercept" else [c]
        if any(":" in b for b in boolean):  # pragma: no cover - a slice in the code
            parts = [c]
        parts = [p + "[T.True]" if p in boolean else p for p in parts]
        c = ":".join(parts)
        if pattern is not None:
            c = pattern.sub(lambda m: written[m.group(0)], c)
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


def _fit(formula, data, kw, multinomial, context):
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
    boolean = _boolean_factors(formula, frame, context)
    ordered = statsmodels_order(formula, frame, context=context, boolean=boolean)
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
    names = tuple(_patsy_names(columns, formula, boolean))
    design = FormulaDesign(formula, rhs.model_spec, tuple(columns), fit_intercept,
                           context=context, fit_index=data.index[kept])
    from .logistic.inference import labelled

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
