"""The terms of a formula as patsy (and so statsmodels, whose default engine is patsy)
orders and names them, for :mod:`fastgen.formula`, which materialises formulas with
formulaic: patsy's evaluation of the operators (:func:`patsy_raw_terms`), its
ordering of the columns (:func:`statsmodels_order`), its names of expressions as
written (:func:`names_as_written`, :func:`patsy_names`) and of boolean factors
(:func:`boolean_factors`).

Imports: numpy (formulaic, and patsy's token spacing when installed, on use) only.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

__all__ = ["formulaic_module", "patsy_raw_terms", "boolean_factors",
           "categorical_booleans", "statsmodels_order", "names_as_written",
           "contrast_labels", "patsy_names"]


def formulaic_module():
    try:
        import formulaic
        import formulaic.parser
    except ImportError as exc:
        raise ImportError(
            "fastgen.formula needs formulaic: pip install 'fastgen[formula]' (or "
            "pip install formulaic)") from exc
    return formulaic


def patsy_raw_terms(node, power_error):
    """The terms of formulaic's syntax tree ``node`` in the order patsy's evaluator
    produces them (``patsy.desc``, BSD-2-Clause), each a tuple of formulaic factors
    (duplicates dropped, first kept): ``a + b`` the left's then the right's; ``a:b``
    every left term with every right term, left-major; ``a*b`` as ``a + b + a:b``;
    ``a/b`` as ``a + (all of a's factors):b``; ``(…)**n`` the terms, then their
    products of degree 2, 3 … n (``_interaction(left, big)`` in turn); ``a - b``
    the left's without the right's (so ``- a + a`` puts ``a`` at the end).  Returns
    None for an operator patsy lacks (formulaic's order is kept then)."""
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
        if sym == "-":  # patsy removes them here: a later "+" adds them at its place
            gone = {frozenset(f.expr for f in t) for t in ev(args[1])}
            return [t for t in ev(args[0]) if frozenset(f.expr for f in t) not in gone]
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


def boolean_factors(formula, data, context):
    """The ``I(…)`` factors of ``formula`` whose values are booleans (``I(age > 30)``):
    patsy codes them as categoricals of levels False, True (named ``[T.True]``),
    formulaic as numbers 0, 1 (the same column).  Evaluated as formulaic evaluates
    ``I``: the code with the data's columns and ``context``'s names."""
    formulaic = formulaic_module()
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


#: How a boolean factor is made categorical for formulaic, as patsy takes it.
BOOLEAN_LEVELS = ", levels=[False, True])"


def categorical_booleans(formula, boolean):
    """``formula`` with each boolean factor (``I(age > 30)``, formulaic's text in
    ``boolean``) written ``C(I(age > 30), levels=[False, True])``: patsy codes such a
    factor as a categorical of levels False, True (``[T.True]``, or both levels in an
    interaction without its main effect), formulaic as the number 0 or 1."""
    if not boolean:
        return formula
    formulaic = formulaic_module()
    from formulaic.parser.types import Token

    parser = formulaic.parser.DefaultFormulaParser(
        feature_flags=formulaic.parser.DefaultFormulaParser.FeatureFlags.TWOSIDED)
    spans = []

    def walk(n):
        if isinstance(n, Token):
            if (n.kind is Token.Kind.PYTHON and n.token in boolean
                    and n.source_start is not None):
                spans.append((n.source_start, n.source_end + 1))
            return
        for a in n.args:
            walk(a)

    walk(parser.get_ast(formula))
    for start, end in sorted(set(spans), reverse=True):
        formula = formula[:start] + "C(" + formula[start:end] + BOOLEAN_LEVELS + formula[end:]
    return formula


def statsmodels_order(formula, data, context=None, boolean=()):
    """``formula`` as a formulaic ``Formula`` whose terms come in the order patsy (and
    so statsmodels, whose default engine is patsy) gives them.

    patsy first evaluates the formula into a list of terms (``patsy_raw_terms``:
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
    boolean : collection of str, optional
        The factors of boolean values (``I(age > 30)``), categorical for patsy.

    Returns
    -------
    formulaic.Formula
    """
    formulaic = formulaic_module()
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

    raw = patsy_raw_terms(ast, power_error)
    if raw is not None:  # formulaic's terms in patsy's order (unmatched ones last)
        rank, order = {}, {}
        for i, t in enumerate(raw):
            rank.setdefault(frozenset(f.expr for f in t), i)
            order.setdefault(frozenset(f.expr for f in t), [f.expr for f in t])
        key = {id(t): rank.get(frozenset(f.expr for f in t.factors), len(raw) + j)
               for j, t in enumerate(terms)}
        terms = sorted(terms, key=lambda t: key[id(t)])

        def patsy_factor_order(t):  # a:b or b:a: the factors as patsy met them
            exprs = order.get(frozenset(f.expr for f in t.factors))
            if exprs is None or t.degree < 2:
                return t
            pos = {e: i for i, e in enumerate(exprs)}
            factors = sorted(t.factors, key=lambda f: pos.get(f.expr, len(pos)))
            return type(t)(factors=factors, origin=getattr(t, "origin", None))

        terms = [patsy_factor_order(t) for t in terms]
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


def names_as_written(formula):
    """{formulaic's text of each Python factor: the text as written in ``formula``,
    spaced as patsy spaces it}: formulaic rewrites expressions (``.5`` → ``0.5``,
    ``1e-3`` → ``0.001``, quotes), patsy names the columns by the code as written,
    its tokens re-spaced (``patsy.tokens.normalize_token_spacing``, used when patsy is
    installed; else the text as written with its whitespace collapsed)."""
    formulaic = formulaic_module()
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


#: patsy's names of the first polynomial contrasts (formulaic's ``.L``, ``.Q``, ``.C``).
POLY_NAMES = {"L": "Linear", "Q": "Quadratic", "C": "Cubic"}


def contrast_labels(model_spec):
    """{formulaic's name of a factor's column: patsy's} for the contrasts whose
    labels differ: ``Poly`` (``C(x, Poly)[.L]`` → ``C(x, Poly).Linear``, ``[^4]`` →
    ``^4``) and ``Diff`` (formulaic labels each difference by its upper level,
    patsy by its lower one: ``[D.2.0]`` → ``[D.1.0]``)."""
    out = {}
    contrasts = getattr(model_spec, "factor_contrasts", None) or {}
    for factor, state in contrasts.items():
        kind = type(state.contrasts).__name__
        levels = [str(v) for v in state.levels]
        name = str(factor)
        if kind == "PolyContrasts":
            for short, full in POLY_NAMES.items():
                out[f"{name}[.{short}]"] = f"{name}.{full}"
            for k in range(4, len(levels) + 1):
                out[f"{name}[^{k}]"] = f"{name}^{k}"
        elif kind == "DiffContrasts" and getattr(state.contrasts, "backward", True):
            for lower, upper in zip(levels[:-1], levels[1:]):
                out[f"{name}[D.{upper}]"] = f"{name}[D.{lower}]"
    return out


def patsy_names(columns, formula, boolean=(), model_spec=None):
    """formulaic's column names as patsy spells them: each Python factor by its code
    as written (``names_as_written``); a factor of boolean values (``I(age > 30)``,
    which patsy codes as a categorical of levels False, True) suffixed ``[T.True]``;
    ``Poly`` and ``Diff`` contrasts' labels (``contrast_labels``); and the columns of
    ``bs(...)`` numbered from 0 (formulaic numbers them from 1)."""
    import re

    written = names_as_written(formula)
    pattern = None
    if written:
        pattern = re.compile("|".join(re.escape(k) for k in
                                      sorted(written, key=len, reverse=True)))
    labels = contrast_labels(model_spec)
    spline = re.compile(r"^(bs\(.*\))\[(\d+)\]$")

    wrapped = {f"C({b}{BOOLEAN_LEVELS}": b for b in boolean}

    def part_name(p):
        if p in boolean:
            return p + "[T.True]"
        for w, b in wrapped.items():  # categorical_booleans' factors: patsy's names
            if p.startswith(w + "["):
                return b + p[len(w):]
        if p in labels:
            return labels[p]
        m = spline.match(p)
        if m is not None:
            return f"{m.group(1)}[{int(m.group(2)) - 1}]"
        return p

    out = []
    for c in columns:
        parts = c.split(":") if c != "Intercept" else [c]
        if any(":" in b for b in boolean):  # pragma: no cover - a slice in the code
            parts = [c]
        c = ":".join(part_name(p) for p in parts)
        if pattern is not None:
            c = pattern.sub(lambda m: written[m.group(0)], c)
        out.append(c)
    return out
