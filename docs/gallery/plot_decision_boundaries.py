"""Decision boundaries and covariance ellipses of LDA, QDA and Gaussian naive Bayes.

Three Gaussian classes in 2-D with different covariances.  Each panel shows the fitted
model's predicted regions, its 1- and 2-standard-deviation covariance ellipses per class
(the pooled ellipse for LDA, each class's own for QDA, axis-aligned ones for naive
Bayes) and the training points.

Run ``python docs/gallery/plot_decision_boundaries.py`` (writes the PNG beside it).
"""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import Ellipse  # noqa: E402

import fastgen  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
COLORS = ["#1f77b4", "#d62728", "#2ca02c"]


def make_data(seed=0, n_per_class=150):
    rng = np.random.default_rng(seed)
    means = [(-2.0, 0.0), (1.5, 1.5), (1.0, -2.0)]
    covs = [[[1.0, 0.8], [0.8, 1.0]], [[0.4, -0.2], [-0.2, 1.4]], [[1.8, 0.0], [0.0, 0.3]]]
    X = np.vstack([rng.multivariate_normal(m, c, n_per_class) for m, c in zip(means, covs)])
    y = np.repeat(np.array(["a", "b", "c"]), n_per_class)
    return X, y


def class_covariances(p):
    """(K, 2, 2) covariance of each class under the fitted model."""
    K = p.classes.shape[0]
    if p.covariance_type == "pooled":
        return np.repeat(p.covariance[None], K, axis=0)
    if p.covariance_type == "per_class":
        return p.covariance
    if p.covariance_type == "diagonal":
        return np.stack([np.diag(v) for v in p.covariance])
    return np.repeat(np.diag(p.covariance)[None], K, axis=0)  # pooled_diagonal


def ellipse(ax, mean, cov, n_std, color):
    vals, vecs = np.linalg.eigh(cov)
    angle = np.degrees(np.arctan2(vecs[1, 1], vecs[0, 1]))
    w, h = 2 * n_std * np.sqrt(vals[::-1])
    ax.add_patch(Ellipse(mean, w, h, angle=angle, fill=False, lw=1.6 if n_std == 1 else 1.0,
                         ls="-" if n_std == 1 else "--", color=color))


OUT = os.path.join(HERE, "decision_boundaries.png")


def main(out=OUT):
    X, y = make_data()
    models = [
        ("LDA: fit_gda(X, y)  (pooled)", fastgen.fit_gda(X, y, "pooled")),
        ("QDA: fit_gda(X, y, \"per_class\")", fastgen.fit_gda(X, y, "per_class")),
        ("Gaussian NB: fit_gda(X, y, \"diagonal\")", fastgen.fit_gda(X, y, "diagonal")),
    ]
    lo, hi = X.min(axis=0) - 1.0, X.max(axis=0) + 1.0
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 300), np.linspace(lo[1], hi[1], 300))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    codes = np.searchsorted(np.unique(y), y)
    fig, axes = plt.subplots(1, 3, figsize=(15, 5), sharex=True, sharey=True)
    for ax, (title, p) in zip(axes, models):
        proba = fastgen.predict_proba(p, grid)
        region = proba.argmax(axis=1).reshape(gx.shape)
        ax.contourf(gx, gy, region, levels=[-0.5, 0.5, 1.5, 2.5],
                    colors=[c + "33" for c in COLORS])
        ax.contour(gx, gy, proba.max(axis=1).reshape(gx.shape), levels=[0.5, 0.9],
                   colors="0.4", linewidths=0.6, linestyles=":")
        ax.contour(gx, gy, region, levels=[0.5, 1.5], colors="k", linewidths=1.2)
        for k, cov in enumerate(class_covariances(p)):
            for n_std in (1, 2):
                ellipse(ax, p.means[k], cov, n_std, COLORS[k])
            ax.plot(*p.means[k], marker="x", color="k", ms=8, mew=2)
        ax.scatter(X[:, 0], X[:, 1], c=[COLORS[c] for c in codes], s=8, alpha=0.6, lw=0)
        err = np.mean(fastgen.predict(p, X) != y)
        ax.set_title(f"{title}\ntraining error {err:.3f}", fontsize=11)
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_aspect("equal")
    fig.suptitle("Decision regions (black), posterior contours 0.5/0.9 (dotted) and "
                 "1σ/2σ covariance ellipses", fontsize=12)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
