"""Learning curves of multinomial naive Bayes with and without unlabelled rows.

Nigam, McCallum, Thrun & Mitchell (2000): when labels are few, EM over unlabelled
documents raises the accuracy of a naive Bayes text classifier.  Two data sets, no
download:

* **digits**: scikit-learn's bundled handwritten digits (1797 rows, 64 pixels of
  intensity 0-16, 10 classes), the intensities taken as counts;
* **topics**: generated documents, a bag of ``LENGTH`` words each from a vocabulary of
  ``VOCAB`` words; class k draws its words from 0.85 × a background distribution shared
  by all classes + 0.15 × its own topic (both Dirichlet(0.1) draws), so that most words
  say little about the class, as in text.

For m labelled rows per class, drawn ``REPEATS`` times from the training pool, the rest
of the pool is the unlabelled set; accuracy is measured on a held-out test set, for
the labelled-only fit and for EM with λ = 1 and λ = 0.1.  Prints a table (mean accuracy
and its standard error over the repeats, EM iterations, seconds per EM fit) and writes
the figure.

Usage::

    python benchmarks/unlabeled_curve.py [-o docs/guide/unlabeled_curve.png] [--repeats 10]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import fastgen

#: labelled rows per class of each data set (digits: 125 rows per class in the pool)
LABELLED_PER_CLASS = {"digits": (1, 2, 3, 5, 10, 20, 50),
                      "topics": (1, 2, 5, 10, 20, 50, 100, 200, 400)}
VOCAB, LENGTH, N_TOPIC_CLASSES, BACKGROUND = 2000, 25, 5, 0.85
WEIGHTS = (1.0, 0.1)


def digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X.astype(np.float64), y


def topics(seed=0, n=6000):
    rng = np.random.default_rng(seed)
    background = rng.dirichlet(np.full(VOCAB, 0.1))
    theta = BACKGROUND * background + (1.0 - BACKGROUND) * rng.dirichlet(
        np.full(VOCAB, 0.1), N_TOPIC_CLASSES)
    y = rng.integers(0, N_TOPIC_CLASSES, n)
    X = np.stack([rng.multinomial(LENGTH, theta[k]) for k in y]).astype(np.float64)
    return X, y


def split(y, seed, test_fraction=0.3):
    """(pool, test) row indices, stratified."""
    rng = np.random.default_rng(seed)
    pool, test = [], []
    for k in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == k))
        cut = int(round(test_fraction * rows.shape[0]))
        test.append(rows[:cut])
        pool.append(rows[cut:])
    return np.concatenate(pool), np.concatenate(test)


def curve(X, y, sizes, repeats, seed=0):
    """{m: ({method: [accuracies]}, median EM iterations, median seconds, unlabelled
    rows)} for m labelled rows per class in ``sizes``."""
    pool, test = split(y, seed)
    rng = np.random.default_rng(seed + 1)
    out = {}
    for m in sizes:
        rows = {"labelled only": [], **{f"EM λ={lam:g}": [] for lam in WEIGHTS}}
        iters, secs = [], []
        for _ in range(repeats):
            lab = np.concatenate([rng.choice(pool[y[pool] == k], m, replace=False)
                                  for k in np.unique(y)])
            unl = np.setdiff1d(pool, lab)
            p = fastgen.fit_multinomial_nb(X[lab], y[lab], alpha=0.1)
            rows["labelled only"].append(np.mean(fastgen.predict(p, X[test]) == y[test]))
            for lam in WEIGHTS:
                t0 = time.perf_counter()
                q = fastgen.fit_multinomial_nb(X[lab], y[lab], alpha=0.1, unlabeled=X[unl],
                                               unlabeled_weight=lam)
                secs.append(time.perf_counter() - t0)
                iters.append(q.n_iter)
                rows[f"EM λ={lam:g}"].append(
                    np.mean(fastgen.predict(q, X[test]) == y[test]))
        out[m] = (rows, float(np.median(iters)), float(np.median(secs)), len(unl))
    return out


def report(name, result):
    print(f"\n{name}: accuracy on the test set (mean ± s.e.), median EM iterations and "
          f"seconds per EM fit")
    print("| labelled/class | unlabelled | labelled only | EM λ=1 | EM λ=0.1 | iters | s |")
    print("|---|---|---|---|---|---|---|")
    for m, (rows, it, sec, n_unl) in result.items():
        cells = []
        for key in ("labelled only", "EM λ=1", "EM λ=0.1"):
            a = np.asarray(rows[key])
            cells.append(f"{a.mean():.3f} ± {a.std(ddof=1) / np.sqrt(a.size):.3f}")
        print(f"| {m} | {n_unl} | " + " | ".join(cells) + f" | {it:g} | {sec:.3f} |")


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5.2 * len(results), 3.8))
    styles = {"labelled only": ("k", "o", "-"), "EM λ=1": ("C0", "s", "-"),
              "EM λ=0.1": ("C1", "^", "--")}
    for ax, (name, result) in zip(np.atleast_1d(axes), results.items()):
        ms = list(result)
        for key, (color, marker, line) in styles.items():
            acc = np.array([np.mean(result[m][0][key]) for m in ms])
            se = np.array([np.std(result[m][0][key], ddof=1)
                           / np.sqrt(len(result[m][0][key])) for m in ms])
            ax.errorbar(ms, acc, yerr=se, color=color, marker=marker, linestyle=line,
                        capsize=2, label=key)
        ax.set_xscale("log")
        ax.set_xticks(ms, [str(m) for m in ms])
        ax.set_xlabel("labelled rows per class")
        ax.set_ylabel("test accuracy")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    fig.suptitle("Multinomial naive Bayes: labelled rows alone vs EM over the unlabelled rest")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", default="docs/guide/unlabeled_curve.png")
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args(argv)
    results = {}
    for key, name, (X, y) in (
            ("digits", "digits (scikit-learn, pixels as counts)", digits()),
            ("topics", f"topic documents (V={VOCAB}, {LENGTH} words)", topics())):
        results[name] = curve(X, y, LABELLED_PER_CLASS[key], args.repeats)
        report(name, results[name])
    plot(results, args.out)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
