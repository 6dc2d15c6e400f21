"""The learning-curve plot of ``fastgen curve --plot`` (matplotlib, Agg backend)."""

from __future__ import annotations

import os

import numpy as np

from ..io import atomic_write
from .errors import CLIError

__all__ = ["check_plot_possible", "plot_curves"]


def check_plot_possible(path):
    """Fail early (before the experiment) if matplotlib is missing or the folder is."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CLIError("--plot needs matplotlib: pip install 'fastgen[cli]'") from None
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise CLIError(f"cannot write the plot {path!r}: directory {parent!r} does not exist")


def plot_curves(path, sizes, mean, se, labels, title, n, d, splits):
    """Draw mean test error ± standard error against m (log scale) into a PNG file.

    Parameters
    ----------
    path : str
    sizes : list of int
        The training-set sizes m.
    mean, se : ndarray (n_models, n_sizes)
        From :func:`fastgen.cli.curve.summarise`.
    labels : list of str
        One per model.
    title : str
    n, d, splits : int
        For the title.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    m = np.asarray(sizes, dtype=float)
    for i, lab in enumerate(labels):
        mu, s = mean[i], np.nan_to_num(se[i])
        line, = ax.plot(m, mu, marker="o", markersize=3, label=lab)
        ax.fill_between(m, mu - s, mu + s, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xscale("log")
    ax.set_xticks(m, [str(v) for v in sizes])
    ax.minorticks_off()
    ax.set_xlabel("training set size m")
    ax.set_ylabel("test error")
    ax.set_title(f"{title} (n={n}, d={d}): mean test error ± s.e. over {splits} splits")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    try:
        with atomic_write(path) as fh:  # whole or not at all
            fig.savefig(fh, format="png")
    except OSError as exc:
        raise CLIError(f"cannot write the plot {path!r}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)
