"""The ``fastgen`` command line.

``fastgen demo``: fit pooled (LDA) and per-class (QDA) Gaussian discriminant analysis on
the bundled iris data and print the parameters, training accuracy and confusion tables.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

__all__ = ["main"]


def _confusion(y_true, y_pred, classes):
    idx = {c: i for i, c in enumerate(classes)}
    C = np.zeros((len(classes), len(classes)), dtype=int)
    for t, p in zip(y_true, y_pred):
        C[idx[t], idx[p]] += 1
    return C


def _print_table(rows, header, out):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(str(h).rjust(w) for h, w in zip(header, widths))
    print(line, file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for r in rows:
        print("  ".join(str(v).rjust(w) for v, w in zip(r, widths)), file=out)


def _demo(args, out=sys.stdout):
    import fastgen
    from fastgen.datasets import load_iris

    X, y, names = load_iris()
    print(f"Fisher's iris: {X.shape[0]} flowers, {X.shape[1]} features "
          f"({', '.join(names)})\n", file=out)
    np.set_printoptions(precision=4, suppress=True, linewidth=100)
    for cov, title in (("pooled", "pooled covariance (LDA)"),
                       ("per_class", "per-class covariance (QDA)")):
        params = fastgen.fit_gda(X, y, covariance=cov)
        pred = fastgen.predict(params, X)
        acc = float(np.mean(pred == y))
        print(f"== Gaussian discriminant analysis, {title} ==", file=out)
        print("priors: " + ", ".join(f"{c}={p:.4f}" for c, p in
                                    zip(params.classes, params.priors)), file=out)
        print("class means:", file=out)
        _print_table([[c, *(f"{v:.4f}" for v in m)] for c, m in
                      zip(params.classes, params.means)], ["class", *names], out)
        if cov == "pooled":
            print("pooled covariance Σ:", file=out)
            print(params.covariance, file=out)
            W, b = fastgen.linear_discriminant(params)
            print("linear discriminant w_k = Σ⁻¹μ_k (columns) and "
                  "b_k = -½μ_kᵀΣ⁻¹μ_k + log p_k:", file=out)
            _print_table([[c, *(f"{v:.3f}" for v in W[:, k]), f"{b[k]:.3f}"]
                          for k, c in enumerate(params.classes)],
                         ["class", *names, "b"], out)
        else:
            print("log|Σ_k|: " + ", ".join(f"{c}={v:.4f}" for c, v in
                                           zip(params.classes, params.log_det)), file=out)
        print(f"training accuracy: {acc:.4f} ({int(round(acc * len(y)))}/{len(y)})",
              file=out)
        C = _confusion(y, pred, params.classes)
        print("confusion table (rows: true class, columns: predicted):", file=out)
        _print_table([[c, *C[i]] for i, c in enumerate(params.classes)],
                     ["true \\ pred", *params.classes], out)
        print(file=out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fastgen",
        description="Generative classifiers (GDA, naive Bayes) and IRLS logistic regression.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="fit LDA and QDA on the bundled iris data and report")
    p.set_defaults(func=_demo)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return args.func(args)
