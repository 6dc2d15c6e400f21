"""Bitwise harness: every public fit and score on fixed data, saved and compared.

A restructure that moves code but not arithmetic must leave every result bit for bit
as it was.  ``run`` fits and scores every model family on fixed generated data
(dense and CSR, float32 and float64, weights) and writes every array and number of
every result to one ``.npz``; ``compare`` reads two such files and reports, per field,
the largest difference in units in the last place (ulp)::

    cd /tmp && PYTHONPATH=/path/to/base python -m bitwise run base.npz
    cd /tmp && PYTHONPATH=/path/to/head python -m bitwise run head.npz
    python benchmarks/bitwise.py compare base.npz head.npz

(copy this file next to the outputs, or call it by path: ``python
/path/to/benchmarks/bitwise.py run out.npz`` with ``PYTHONPATH`` naming the tree under
test).  Run it from a directory outside both trees, so that the ``fastgen`` imported
is the one ``PYTHONPATH`` names; the file records which one it was.
"""

import argparse
import dataclasses
import sys
import warnings

import numpy as np

SEED = 20261128


def _data():
    """Fixed data sets, generated from one seed (no file is read)."""
    rng = np.random.default_rng(SEED)
    n, d, K = 600, 6, 3
    y3 = rng.integers(0, K, n)
    centres = rng.normal(scale=0.6, size=(K, d))
    X = centres[y3] + rng.normal(size=(n, d)) @ np.diag(np.linspace(0.5, 3.0, d))
    X[:, 0] += 1000.0  # an offset column: centring must not change a bit
    w = rng.uniform(0.2, 3.0, n)
    y2 = (X[:, 1] + rng.logistic(size=n) > centres[:, 1].mean()).astype(np.int64)
    counts = rng.poisson(1.5, size=(n, 40)).astype(np.float64)
    counts[rng.random(counts.shape) < 0.5] = 0.0
    yc = rng.integers(0, 4, n)
    counts[yc == 1, :10] += rng.poisson(2.0, size=(int((yc == 1).sum()), 10))
    cats = rng.integers(0, 4, size=(n, 5))
    cats[:, 0] = np.minimum(cats[:, 0] + (yc == 2), 4)
    # small separated-ish data for Firth
    nf = 80
    Xf = rng.normal(size=(nf, 3))
    yf = (Xf[:, 0] + 0.5 * rng.normal(size=nf) > 0.3).astype(np.int64)
    yfm = np.digitize(Xf[:, 0] + rng.normal(size=nf), [-0.4, 0.5])
    labels = np.array(["a", "b", "c"])[y3]
    return dict(X=X, X32=X.astype(np.float32), y3=y3, labels=labels, y2=y2, w=w,
                counts=counts, yc=yc, cats=cats, Xf=Xf, yf=yf, yfm=yfm)


def _flatten(prefix, value, out):
    """Every array and number in ``value`` under dotted names."""
    if value is None or isinstance(value, (str, bool)):
        if isinstance(value, (str, bool)):
            out[prefix] = np.asarray(str(value))
        return
    if isinstance(value, (int, float, np.number)):
        out[prefix] = np.asarray(value)
        return
    if isinstance(value, np.ndarray):
        out[prefix] = np.array(value.astype(str) if value.dtype == object else value)
        return
    if hasattr(value, "to_numpy"):  # pandas
        out[prefix] = np.asarray(value.to_numpy())
        return
    if dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            if f.name in ("fit_data",):  # references to the inputs, not results
                continue
            _flatten(f"{prefix}.{f.name}", getattr(value, f.name), out)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}", v, out)
        return
    if isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            _flatten(f"{prefix}.{i}", v, out)
        return
    out[prefix] = np.asarray(str(value))


def _cases(fg, D):
    """(name, thunk) for every fit and score."""
    import scipy.sparse as sp

    X, X32, w = D["X"], D["X32"], D["w"]
    Xs = sp.csr_matrix(D["counts"])
    cases = []

    def fit_and_score(name, fit, Xscore):
        def run():
            params = fit()
            out = {"params": params}
            for f in ("joint_log_likelihood", "predict_log_proba", "predict_proba",
                      "predict"):
                out[f] = getattr(fg, f)(params, Xscore)
            return out
        cases.append((name, run))

    for cov in ("pooled", "per_class", "diagonal", "pooled_diagonal"):
        fit_and_score(f"gda_{cov}", lambda cov=cov: fg.fit_gda(X, D["labels"], cov),
                      X)
        fit_and_score(f"gda_{cov}_w32", lambda cov=cov: fg.fit_gda(
            X32, D["y3"], cov, sample_weight=w), X32)
    fit_and_score("gda_per_class_reg_unbiased", lambda: fg.fit_gda(
        X, D["y3"], "per_class", reg=0.1, unbiased=True, priors=[0.2, 0.3, 0.5]), X)
    fit_and_score("gda_pooled_lw", lambda: fg.fit_gda(
        X, D["y3"], shrinkage="ledoit-wolf"), X)
    fit_and_score("gda_per_class_lw", lambda: fg.fit_gda(
        X, D["y3"], "per_class", shrinkage="ledoit-wolf"), X)
    fit_and_score("gda_pooled_oas", lambda: fg.fit_gda(X, D["y3"], shrinkage="oas"), X)
    cases.append(("linear_discriminant", lambda: fg.linear_discriminant(
        fg.fit_gda(X, D["y3"]))))
    cases.append(("lda_transform", lambda: fg.lda_transform(fg.fit_gda(X, D["y3"]), X)))
    cases.append(("gda_from_moments", lambda: fg.gda_from_moments(fg.merge_moments(
        fg.class_moments(X[:300], D["y3"][:300], kind="per_class"),
        fg.class_moments(X[300:], D["y3"][300:], kind="per_class")),
        covariance="per_class")))

    fit_and_score("gaussian_nb", lambda: fg.fit_gaussian_nb(X, D["labels"]), X)
    fit_and_score("gaussian_nb_w32", lambda: fg.fit_gaussian_nb(
        X32, D["y3"], sample_weight=w), X32)
    counts = D["counts"]
    for model in ("multinomial", "bernoulli", "complement"):
        fit = getattr(fg, f"fit_{model}_nb")
        fit_and_score(f"{model}_nb", lambda fit=fit: fit(counts, D["yc"]), counts)
        fit_and_score(f"{model}_nb_csr", lambda fit=fit: fit(Xs, D["yc"]), Xs)
        fit_and_score(f"{model}_nb_csr_w", lambda fit=fit: fit(
            Xs, D["yc"], sample_weight=w, alpha=0.5), Xs)
        cases.append((f"{model}_nb_counts", lambda model=model: fg.nb_from_counts(
            fg.merge_counts(fg.nb_counts(counts[:250], D["yc"][:250], model),
                            fg.nb_counts(Xs[250:], D["yc"][250:], model)))))
    fit_and_score("complement_nb_norm", lambda: fg.fit_complement_nb(
        counts, D["yc"], norm=True), counts)
    fit_and_score("categorical_nb", lambda: fg.fit_categorical_nb(D["cats"], D["yc"]),
                  D["cats"])
    fit_and_score("categorical_nb_w", lambda: fg.fit_categorical_nb(
        D["cats"], D["yc"], sample_weight=w, alpha=0.3, min_categories=6), D["cats"])

    fit_and_score("logistic", lambda: fg.fit_logistic(X, D["y2"]), X)
    fit_and_score("logistic_w32", lambda: fg.fit_logistic(X32, D["y2"], sample_weight=w),
                  X32)
    fit_and_score("logistic_ridge", lambda: fg.fit_logistic(X, D["y2"], l2=3.0), X)
    fit_and_score("logistic_multinomial", lambda: fg.fit_logistic(X, D["labels"]), X)
    fit_and_score("logistic_multinomial_ridge_w", lambda: fg.fit_logistic(
        X, D["y3"], l2=1.0, sample_weight=w), X)
    fit_and_score("logistic_csr", lambda: fg.fit_logistic(Xs, D["yc"] > 1, l2=0.5), Xs)
    fit_and_score("logistic_csr_multinomial", lambda: fg.fit_logistic(
        Xs, D["yc"], l2=0.5), Xs)
    fit_and_score("logistic_no_intercept", lambda: fg.fit_logistic(
        X[:, 1:], D["y2"], fit_intercept=False), X[:, 1:])
    Xf = D["Xf"]
    fit_and_score("firth", lambda: fg.fit_logistic(Xf, D["yf"], penalty="firth"), Xf)
    fit_and_score("firth_w", lambda: fg.fit_logistic(
        Xf, D["yf"], penalty="firth", sample_weight=w[:len(Xf)]), Xf)
    fit_and_score("flic", lambda: fg.fit_logistic(
        Xf, D["yf"], penalty="firth", correction="flic"), Xf)
    fit_and_score("flac", lambda: fg.fit_logistic(
        Xf, D["yf"], penalty="firth", correction="flac"), Xf)
    fit_and_score("firth_multinomial", lambda: fg.fit_logistic(
        Xf, D["yfm"], penalty="firth"), Xf)

    def inference(name, fit, Xi, y, **kw):
        def run():
            res = fg.logistic_inference(fit(), Xi, y, **kw)
            out = {"result": res, "conf_int": res.conf_int()}
            for f in ("llr", "llr_pvalue", "aic", "bic", "prsquared"):
                out[f] = getattr(res, f)
            return out
        cases.append((f"inference_{name}", run))

    inference("plain", lambda: fg.fit_logistic(X, D["y2"]), X, D["y2"])
    inference("hc1_w", lambda: fg.fit_logistic(X, D["y2"], sample_weight=w), X, D["y2"],
              sample_weight=w, cov_type="HC1")
    inference("cluster", lambda: fg.fit_logistic(X, D["y2"]), X, D["y2"],
              cov_type="cluster", groups=D["yc"])
    inference("multinomial", lambda: fg.fit_logistic(X, D["y3"]), X, D["y3"])
    inference("csr", lambda: fg.fit_logistic(Xs, D["yc"] > 1), Xs, D["yc"] > 1)
    inference("profile", lambda: fg.fit_logistic(Xf, D["yf"]), Xf, D["yf"], ci="profile")
    inference("firth_profile", lambda: fg.fit_logistic(Xf, D["yf"], penalty="firth"), Xf,
              D["yf"], ci="profile")

    def start(y):
        return fg.fit_logistic(X, y, max_iter=1)

    cases.append(("irls_step", lambda: fg.irls_step(start(D["y2"]), X, D["y2"])))
    cases.append(("irls_step_ridge_w", lambda: fg.irls_step(
        start(D["y2"]), X, D["y2"], l2=2.0, sample_weight=w)))
    cases.append(("irls_step_multinomial", lambda: fg.irls_step(
        start(D["y3"]), X, D["y3"])))
    cases.append(("detect_separation", lambda: fg.detect_separation(Xf, D["yf"])))
    cases.append(("class_moments", lambda: fg.class_moments(
        X32, D["y3"], kind="pooled", sample_weight=w)))
    return cases


def run(path):
    """Run every case and save the results to ``path``."""
    import fastgen as fg

    D = _data()
    out = {"__fastgen__": np.asarray(fg.__file__)}
    failed = []
    for name, thunk in _cases(fg, D):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                value = thunk()
            except Exception as exc:  # recorded: a case that raises must raise on both
                value = f"raised {type(exc).__name__}: {exc}"
                failed.append(name)
        _flatten(name, value, out)
    np.savez(path, **out)
    print(f"{len(out) - 1} fields from {fg.__file__} -> {path}")
    if failed:
        print("raised:", ", ".join(failed))


def _ulps(a, b):
    """Largest difference in ulps of a's dtype (inf where only one is NaN/inf)."""
    a = np.asarray(a, dtype=np.float64) if a.dtype.kind in "iub" else a
    b = np.asarray(b, dtype=a.dtype) if b.dtype.kind in "iub" else b
    if a.shape != b.shape:
        return np.inf
    if a.size == 0:
        return 0.0
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if same.all():
        return 0.0
    dt = np.result_type(a.dtype, b.dtype)
    if not np.isfinite(a[~same]).all() or not np.isfinite(b[~same]).all():
        return np.inf
    spacing = np.spacing(np.maximum(np.abs(a[~same]), np.abs(b[~same])).astype(dt))
    return float(np.max(np.abs(a[~same].astype(np.float64) - b[~same]) / spacing))


def compare(path_a, path_b):
    """Print every field that differs; return the number of such fields."""
    a, b = np.load(path_a), np.load(path_b)
    print(f"a: {a['__fastgen__']}\nb: {b['__fastgen__']}")
    names = sorted((set(a.files) | set(b.files)) - {"__fastgen__"})
    differ = 0
    for name in names:
        if name not in a.files or name not in b.files:
            print(f"{name}: only in {'a' if name in a.files else 'b'}")
            differ += 1
            continue
        x, y = a[name], b[name]
        if x.dtype.kind in "fciub" and y.dtype.kind in "fciub":
            if x.dtype.kind == "c":
                u = max(_ulps(x.real, y.real), _ulps(x.imag, y.imag))
            else:
                u = _ulps(x, y)
            if u:
                print(f"{name}: {u:.3g} ulp")
                differ += 1
        elif x.shape != y.shape or not np.array_equal(x, y):
            print(f"{name}: differs ({x!r} vs {y!r})"[:300])
            differ += 1
    print(f"{len(names)} fields, {differ} differ")
    return differ


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("run").add_argument("out")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = parser.parse_args(argv)
    if args.cmd == "run":
        run(args.out)
        return 0
    return 1 if compare(args.a, args.b) else 0


if __name__ == "__main__":
    sys.exit(main())
