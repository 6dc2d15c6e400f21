"""Small data sets shipped inside the package (no network needed)."""

from __future__ import annotations

import csv
from importlib import resources

import numpy as np

__all__ = ["load_iris"]


def load_iris():
    """Fisher's iris data (150 flowers, 4 measurements in cm, 3 species).

    Returns
    -------
    X : ndarray (150, 4) float64
    y : ndarray (150,) of str, the species
    feature_names : list of str
    """
    with resources.files("fastgen").joinpath("data/iris.csv").open("r") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    X = np.array([[float(v) for v in r[:-1]] for r in body])
    y = np.array([r[-1] for r in body])
    return X, y, header[:-1]
