"""The summary of a logistic inference, as statsmodels lays it out: a :class:`Summary`
of :class:`SummaryTable` objects, printed as text (``str``), LaTeX or HTML (and shown
as HTML in notebooks).

Imports: numpy only.
"""

from __future__ import annotations

import html
from datetime import datetime

import numpy as np

__all__ = ["Summary", "SummaryTable", "build_summary"]

WIDTH = 78


class SummaryTable:
    """One table of a :class:`Summary`.

    Attributes
    ----------
    kind : {"info", "params"}
        ``"info"``: the model's facts in two columns of (label, value) pairs;
        ``"params"``: a coefficient table, ``header`` then ``data`` rows (one block
        per equation for a multinomial model).
    title : str
        The centred title line (the first table only), else "".
    header : list of str
        Column headings of a params table (the first is the row-name column).
    data : list of list
        Rows of cells: strings for an info table; a name then numbers for a params
        table (``None`` starts a new block whose label is the row's name).
    """

    def __init__(self, kind, title="", header=None, data=None, blocks=None):
        self.kind = kind
        self.title = title
        self.header = list(header or [])
        self.data = [list(r) for r in (data or [])]
        self.blocks = blocks  # params tables: [(label or None, rows)]

    # ------------------------------------------------------------------ text
    def as_text(self):
        """The table as text, in the layout of statsmodels' summary."""
        if self.kind == "info":
            lines = [self.title.center(WIDTH)] if self.title else []
            lines.append("=" * WIDTH)
            for a, b, c, e in self.data:
                lines.append(f"{a:<17}{b:>21}   {c:<20}{e:>17}")
            lines.append("=" * WIDTH)
            return "\n".join(lines)
        names = [r[0] for _, rows in self.blocks for r in rows]
        nw = max(12, max(len(n) for n in names) + 1)
        head = " " * nw + "".join(h.rjust(w) for h, w in zip(self.header[1:], self._widths()))
        lines = []
        for label, rows in self.blocks:
            lines.append(head if label is None else label.ljust(nw) + head[nw:])
            lines.append("-" * len(head))
            for r in rows:
                lines.append(r[0][:nw - 1].ljust(nw) + "".join(
                    _cell(v, w, kind) for v, w, kind in zip(r[1:], self._widths(),
                                                            self._kinds())))
        lines.append("=" * max(WIDTH, len(head)))
        return "\n".join(lines)

    def _widths(self):
        return [10, 11, 11, 11, 12, 12, 10][:len(self.header) - 1]

    def _kinds(self):
        return ["num", "num", "num", "p", "num", "num", "p10"][:len(self.header) - 1]

    # ------------------------------------------------------------------ html / latex
    def _cells(self):
        """(header row or None, [(block label or None, rows of str)])."""
        if self.kind == "info":
            return None, [(None, [[a, b, c, e] for a, b, c, e in self.data])]
        out = []
        for label, rows in self.blocks:
            out.append((label, [[r[0]] + [_cell(v, 0, k).strip() for v, k in
                                          zip(r[1:], self._kinds())] for r in rows]))
        return [""] + self.header[1:], out

    def as_html(self):
        """The table as an HTML ``<table class="simpletable">``."""
        head, blocks = self._cells()
        e = html.escape
        out = ['<table class="simpletable">']
        if self.title:
            out.append(f"<caption>{e(self.title)}</caption>")
        ncol = len(head) if head else 4
        for label, rows in blocks:
            if label is not None:
                out.append(f'<tr><th colspan="{ncol}">{e(label)}</th></tr>')
            if head:
                out.append("<tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr>")
            for r in rows:
                if self.kind == "info":
                    out.append(f"<tr><th>{e(r[0])}</th><td>{e(r[1])}</td>"
                               f"<th>{e(r[2])}</th><td>{e(r[3])}</td></tr>")
                else:
                    out.append(f"<tr><th>{e(r[0])}</th>"
                               + "".join(f"<td>{e(c)}</td>" for c in r[1:]) + "</tr>")
        out.append("</table>")
        return "\n".join(out)

    def as_latex_tabular(self):
        """The table as a LaTeX ``tabular`` environment."""
        head, blocks = self._cells()
        ncol = len(head) if head else 4
        cols = "l" + "r" * (ncol - 1) if head else "lrlr"
        out = [f"\\begin{{tabular}}{{{cols}}}", "\\hline"]
        if self.title:
            out.append(f"\\multicolumn{{{ncol}}}{{c}}{{{_tex(self.title)}}} \\\\ \\hline")
        for label, rows in blocks:
            if label is not None:
                out.append(f"\\multicolumn{{{ncol}}}{{l}}{{{_tex(label)}}} \\\\")
            if head:
                out.append(" & ".join(_tex(h) for h in head) + " \\\\ \\hline")
            for r in rows:
                out.append(" & ".join(_tex(c) for c in r) + " \\\\")
            out.append("\\hline")
        out.append("\\end{tabular}")
        return "\n".join(out)

    def __str__(self):
        return self.as_text()


def _tex(s):
    s = str(s)
    for a, b in [("\\", "\\textbackslash{}"), ("&", "\\&"), ("%", "\\%"), ("$", "\\$"),
                 ("#", "\\#"), ("_", "\\_"), ("{", "\\{"), ("}", "\\}"), ("~", "\\~{}"),
                 ("^", "\\^{}"), ("[", "{[}"), ("]", "{]}"), ("|", "$|$"),
                 (">", "$>$"), ("<", "$<$")]:
        s = s.replace(a, b)
    return s


def _fmt(v, width=10):
    v = float(v)
    s = f"{v:.4g}" if abs(v) >= 1e4 or (v != 0 and abs(v) < 1e-3) else f"{v:.4f}"
    return s.rjust(width)


def _cell(v, width, kind):
    if kind == "p":
        return f"{float(v):{width}.3f}"
    if kind == "p10":
        return f"{float(v):{width}.3f}"
    return _fmt(v, width)


class Summary:
    """A results summary: tables and notes, printed as statsmodels prints its own.

    ``str(summary)`` (or :meth:`as_text`) is the text table; :meth:`as_html` and
    :meth:`as_latex` render the same tables, and notebooks show the HTML
    (``_repr_html_``).

    Attributes
    ----------
    tables : list of SummaryTable
        The model's facts (``tables[0]``) and the coefficient table (``tables[1]``).
    extra_txt : list of str
        Notes printed below the tables.
    """

    def __init__(self, tables, extra_txt=()):
        self.tables = list(tables)
        self.extra_txt = list(extra_txt)

    def as_text(self):
        """The summary as text."""
        return "\n".join([t.as_text() for t in self.tables] + self.extra_txt)

    def as_html(self):
        """The summary as HTML: one table per :class:`SummaryTable`, then the notes."""
        notes = "".join(f"<br/>{html.escape(s)}" for s in self.extra_txt)
        return "\n".join(t.as_html() for t in self.tables) + notes

    def as_latex(self):
        """The summary as LaTeX: a ``table`` environment of ``tabular`` blocks."""
        body = "\n".join(t.as_latex_tabular() for t in self.tables)
        notes = "".join(f"\n\n{_tex(s)}" for s in self.extra_txt)
        return "\\begin{table}\n\\centering\n" + body + notes + "\n\\end{table}"

    def __str__(self):
        return self.as_text()

    def __repr__(self):
        return self.as_text()

    def __contains__(self, text):
        return text in self.as_text()

    def _repr_html_(self):
        return self.as_html()


#: The note under a FLIC fit's table: its intercept's p-value is not 2Φ(−|z|).
FLIC_NOTE = ("FLIC (logistf's convention): the intercept's P>|z| is the Wald test of "
             "the intercept refitted with the slopes' linear predictor as an offset "
             "(se (sum w p(1-p))^-1/2), not 2*Phi(-|z|) of the z shown, which uses the "
             "intercept's std err in the full design; the slopes' rows are Firth's.")


def build_summary(res, alpha, title, yname, odds_ratios):
    """The :class:`Summary` of a :class:`~fastgen.LogisticInference` ``res``."""
    if title is None:
        title = ("Firth Logistic Regression Results" if res.method == "Firth" else
                 ("MNLogit Regression Results" if res.multinomial
                  else "Logit Regression Results"))
    now = datetime.now()
    left = [
        ("Dep. Variable:", str(res.dep_name if yname is None else yname)),
        ("Model:", "MNLogit" if res.multinomial else "Logit"),
        ("Method:", res.method),
        ("Date:", now.strftime("%a, %d %b %Y")),
        ("Time:", now.strftime("%H:%M:%S")),
        ("converged:", str(bool(res.converged))),
        ("Covariance Type:", res.cov_type),
    ]
    right = [
        ("No. Observations:", f"{res.nobs:g}"),
        ("Df Residuals:", f"{res.df_resid:g}"),
        ("Df Model:", f"{res.df_model:g}"),
        ("Pseudo R-squ.:", f"{res.prsquared:.4g}"),
        ("Log-Likelihood:", f"{res.llf:.5g}"),
        ("LL-Null:", f"{res.llnull:.5g}"),
        ("LLR p-value:", f"{res.llr_pvalue:.4g}"),
    ]
    info = SummaryTable("info", title, data=[[a, b, c, e] for (a, b), (c, e)
                                            in zip(left, right, strict=True)])
    a = res.interval_alpha(alpha)
    ci = np.asarray(res.conf_int_array(a))
    par, bse = np.asarray(res.params), np.asarray(res.bse)
    z, pv = np.asarray(res.tvalues), np.asarray(res.pvalues)
    header = ["", "coef", "std err", "z", "P>|z|", f"[{a / 2:.3f}", f"{1 - a / 2:.3f}]"]
    if odds_ratios:
        header[1] = "odds ratio"
        par, ci = np.exp(par), np.exp(ci)
    lr = res.lr_pvalues if not res.multinomial else None
    if lr is not None:
        header.append("P>|LR|")
    names = list(res.feature_names)

    def rows(k):
        out = []
        for j, nm in enumerate(names):
            idx = (j,) if k is None else (j, k)
            r = [nm, par[idx], bse[idx], z[idx], pv[idx], ci[idx + (0,)], ci[idx + (1,)]]
            if lr is not None:
                r.append(lr[j])
            out.append(r)
        return out

    if res.multinomial:
        blocks = [(f"y={res.classes[k + 1]}", rows(k)) for k in range(par.shape[1])]
    else:
        blocks = [(None, rows(None))]
    params = SummaryTable("params", header=header, blocks=blocks,
                          data=[r for _, b in blocks for r in b])
    notes = []
    if odds_ratios:
        notes.append("Odds ratios: exp(coef) and exp of the interval bounds; std err, z "
                     "and P>|z| are those of the coefficients.")
    if res.ci == "profile":
        notes.append("Confidence intervals: profile likelihood.")
    if res.method == "Firth":
        notes.append("Penalised log-likelihoods (Jeffreys prior, Firth 1993).")
    if res.method == "FLIC" and res.fit_intercept:
        notes.append(FLIC_NOTE)
    return Summary([info, params], notes)
