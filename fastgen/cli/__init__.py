"""The ``fastgen`` command line (``fastgen = fastgen.cli:main``, ``python -m fastgen``).

Modules
-------
main
    The argument parser, :func:`main` and the one-line error reporting.
commands
    The commands ``demo``, ``curve``, ``fit``, ``predict``, ``info`` and ``compile``:
    read the parsed arguments, call the pieces below, print.
models
    The one model registry shared by ``curve`` and ``fit`` (each command's defaults are
    written in its entries), and :func:`feature_kind`, which picks the naive Bayes model.
curve
    The learning-curve experiment: :func:`run_curve`, its random splits and process pool;
    no argparse.
csvio
    CSV parsing, :func:`load_csv` and the named data sets (:func:`load_dataset`).
plot
    The learning-curve PNG (matplotlib).
docs
    ``fastgen docs``: build the documentation of a source checkout once, into a cache.
errors
    :class:`CLIError`, a user mistake.

This package is an adapter: it imports fastgen's public names only (``fastgen``,
``fastgen.datasets``), never a kernel or a private name of the model layer, and nothing
from the other adapters (``fastgen.sklearn``, ``fastgen.dask``).  scikit-learn (named
data sets), matplotlib (``--plot``), tqdm (progress bar) and threadpoolctl are imported
only where used.
"""

from .csvio import load_csv, load_dataset, read_csv
from .curve import run_curve, summarise
from .errors import CLIError
from .main import build_parser, main
from .models import feature_kind

__all__ = ["main", "build_parser", "run_curve", "summarise", "load_csv", "load_dataset",
           "read_csv", "feature_kind", "CLIError"]
