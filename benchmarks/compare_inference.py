"""Side-by-side timings of fastgen's inference and Firth fits (W13, W14, W15).

``run(repeats, quick, sizes)`` returns rows in ``benchmarks/compare.py``'s dict format.
Timings are medians of interleaved repeats (``_common.interleaved_medians``) after one
untimed warm-up each, so JIT compilation is excluded.

* W13: binary, unpenalised: ``fit_logistic`` + ``logistic_inference`` vs statsmodels
  ``Logit(y, add_constant(X)).fit(disp=0)`` then ``.bse``/``.pvalues``; and
  ``logistic_inference`` alone against fastgen's fit (target ≤ 25 %).
* W14: multinomial: fit + inference vs ``MNLogit`` fit + ``.bse``.
* W15: Firth, binary: fit + Wald inference vs firthmodels (numba backend, warm);
  profile intervals reported separately.
* W16: Firth, multinomial (n = 1e5, d = 32, K = 5): fit + Wald inference against
  fastgen's own unpenalised multinomial fit + inference on the same data (target ≤ 3×
  its time; no Python peer fits this model).

Run standalone: ``python benchmarks/compare_inference.py [--repeats 3] [--small]
[--settle S [--settle-mode busy]] [--only W14,W15,W16]``.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

try:
    from benchmarks import _common
except ImportError:  # run as a script from benchmarks/
    import _common
interleaved_medians = _common.interleaved_medians

import fastgen  # noqa: E402  (after the _common import fallback above)

DEFAULT_SIZES = {"W13_n": 1_000_000, "W13_d": 64, "W14_n": 200_000, "W14_d": 16,
                 "W14_K": 5, "W15_n": 100_000, "W15_d": 32, "W16_n": 100_000,
                 "W16_d": 32, "W16_K": 5}
SMALL_SIZES = {"W13_n": 100_000, "W13_d": 32, "W14_n": 50_000, "W14_d": 16,
               "W14_K": 5, "W15_n": 20_000, "W15_d": 16, "W16_n": 20_000,
               "W16_d": 16, "W16_K": 5}


def _data(n, d, K, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, K)) / np.sqrt(d)
    eta = X @ W
    P = np.exp(eta - eta.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    y = (P.cumsum(1) < rng.random((n, 1))).sum(1)
    return X, np.minimum(y, K - 1)


def _row(name, fast, peer, peer_s, target, met, note=""):
    return {"workload": name, "fastgen_s": fast, "peer": peer, "peer_s": peer_s,
            "floor_s": None, "target": target, "met": met, "note": note}


WORKLOADS = ("W13", "W14", "W15", "W16")


def run(repeats: int = 3, quick: bool = False, sizes=None, only=WORKLOADS):
    """Rows in ``benchmarks/compare.py``'s format, with the issue's targets, for the
    workloads named in ``only``."""
    import statsmodels.api as sm

    s = dict(SMALL_SIZES if quick else DEFAULT_SIZES)
    s.update(sizes or {})
    judge = not quick and sizes is None
    rows = []

    if "W13" in only:
        rows += _w13(s, repeats, judge, sm)
    if "W14" in only:
        rows += _w14(s, repeats, judge, sm)
    if "W15" in only:
        try:
            import firthmodels  # noqa: F401  (W15's peer; an optional benchmark dependency)
        except ImportError:
            print("# W15 skipped: firthmodels is not installed", file=sys.stderr)
        else:
            rows += _w15(s, repeats, judge)
    if "W16" in only:
        rows += _w16(s, repeats, judge)
    return rows


def _w13(s, repeats, judge, sm):
    rows = []
    X, y = _data(s["W13_n"], s["W13_d"], 2, 0)
    Xc = sm.add_constant(X)
    fitted = fastgen.fit_logistic(X, y)

    def fg():
        m = fastgen.fit_logistic(X, y)
        return fastgen.logistic_inference(m, X, y).pvalues

    def fit_only():
        return fastgen.fit_logistic(X, y)

    def inf_only():
        return fastgen.logistic_inference(fitted, X, y).pvalues

    def smf():
        r = sm.Logit(y, Xc).fit(disp=0)
        return r.bse, r.pvalues

    (t_fg, _), (t_fit, _), (t_inf, _), (t_sm, _) = interleaved_medians(
        [fg, fit_only, inf_only, smf], repeats)
    tag = f"n={s['W13_n']:.0e} d={s['W13_d']}"
    rows.append(_row(f"W13 binary fit+inference {tag}", t_fg, "statsmodels Logit+bse",
                     t_sm, "≥5× statsmodels", (t_sm / t_fg >= 5) if judge else None))
    rows.append(_row(f"W13 logistic_inference alone {tag}", t_inf, "fastgen fit", t_fit,
                     "≤25% of fit", (t_inf <= 0.25 * t_fit) if judge else None))
    return rows


def _w14(s, repeats, judge, sm):
    rows = []
    X, y = _data(s["W14_n"], s["W14_d"], s["W14_K"], 1)
    Xc = sm.add_constant(X)

    def fg14():
        m = fastgen.fit_logistic(X, y)
        return fastgen.logistic_inference(m, X, y).bse

    def sm14():
        return sm.MNLogit(y, Xc).fit(disp=0).bse

    (t_fg, _), (t_sm, _) = interleaved_medians([fg14, sm14], repeats)
    tag = f"n={s['W14_n']:.0e} d={s['W14_d']} K={s['W14_K']}"
    rows.append(_row(f"W14 multinomial fit+inference {tag}", t_fg, "statsmodels MNLogit+bse",
                     t_sm, "≥10× statsmodels", (t_sm / t_fg >= 10) if judge else None))
    return rows


def _w15(s, repeats, judge):
    rows = []
    from firthmodels import FirthLogisticRegression

    X, y = _data(s["W15_n"], s["W15_d"], 2, 2)

    def fg15():
        m = fastgen.fit_logistic(X, y, penalty="firth")
        return fastgen.logistic_inference(m, X, y).bse, m.coef

    def fm15():
        f = FirthLogisticRegression(backend="numba").fit(X, y)
        return f.bse_, f.coef_

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (t_fg, _), (t_fm, _) = interleaved_medians([fg15, fm15], repeats)
        c_fg, c_fm = fg15()[1][0], fm15()[1]
    diff = float(np.max(np.abs(c_fg - c_fm)) / np.max(np.abs(c_fm)))
    tag = f"n={s['W15_n']:.0e} d={s['W15_d']}"
    rows.append(_row(f"W15 Firth fit+Wald {tag}", t_fg, "firthmodels (numba)", t_fm,
                     "≥3× firthmodels", (t_fm / t_fg >= 3) if judge else None,
                     f"max rel coef difference {diff:.1e} (firthmodels at its default "
                     f"gtol=xtol=1e-4)"))
    m = fastgen.fit_logistic(X, y, penalty="firth")
    import time

    t0 = time.perf_counter()
    fastgen.logistic_inference(m, X, y, ci="profile")
    t_prof = time.perf_counter() - t0
    rows.append(_row(f"W15 Firth profile CIs + LR p-values {tag}", t_prof, None, None,
                     "report", None, "one run, after the warm-up above"))
    return rows


def _w16(s, repeats, judge):
    X, y = _data(s["W16_n"], s["W16_d"], s["W16_K"], 3)

    def firth16():
        m = fastgen.fit_logistic(X, y, penalty="firth")
        return fastgen.logistic_inference(m, X, y).bse

    def mle16():
        m = fastgen.fit_logistic(X, y)
        return fastgen.logistic_inference(m, X, y).bse

    (t_firth, _), (t_mle, _) = interleaved_medians([firth16, mle16], repeats)
    ratio = t_firth / t_mle
    tag = f"n={s['W16_n']:.0e} d={s['W16_d']} K={s['W16_K']}"
    return [_row(f"W16 multinomial Firth fit+Wald {tag}", t_firth,
                 "fastgen unpenalised fit+inference", t_mle, "≤3× unpenalised",
                 (ratio <= 3.0) if judge else None,
                 f"Firth/unpenalised = {ratio:.2f} (medians of {repeats} interleaved "
                 f"repeats)")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--small", action="store_true")
    _common.add_settle_arguments(ap)
    ap.add_argument("--only", default=",".join(WORKLOADS), metavar="W13,W14,W15,W16",
                    help="run only these workloads")
    a = ap.parse_args(argv)
    only = tuple(w.strip().upper() for w in a.only.split(",") if w.strip())
    unknown = sorted(set(only) - set(WORKLOADS))
    if unknown or not only:
        ap.error(f"--only takes a comma-separated subset of {','.join(WORKLOADS)}")
    _common.apply_settle(ap, a)
    for r in run(a.repeats, a.small, only=only):
        ratio = (r["peer_s"] / r["fastgen_s"]) if r["peer_s"] else float("nan")
        print(f"{r['workload']:<52} fastgen {r['fastgen_s']:8.3f}s  peer "
              f"{(r['peer_s'] or float('nan')):8.3f}s  ratio {ratio:6.2f}  "
              f"target {r['target']}  met {r['met']}  {r['note']}")


if __name__ == "__main__":
    main()
