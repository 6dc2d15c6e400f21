"""Scoring a Dask array block by block with the in-memory scoring functions."""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import scoring
from .._validation import check_feature_names
from .blocks import as_dask_X, in_rows

__all__ = ["joint_log_likelihood", "predict_log_proba", "predict_proba", "predict"]


def _score_block(X, params, fn, block_info=None):
    start = block_info[0]["array-location"][0][0] if block_info else 0
    return in_rows(start, fn, params, X)


def _check_params_X(params, X):
    """X as a Dask array of the params' width, and the params its blocks are scored
    with: a Dask array has no column names, so params fitted with names warn once here
    (as :func:`fastgen.predict` does for an array) and the blocks go without them."""
    X = as_dask_X(X)
    if X.shape[1] != params.n_features_in:
        raise ValueError(f"X has {X.shape[1]} features but the params were fitted with "
                         f"{params.n_features_in}")
    if getattr(params, "feature_names", None) is not None:
        check_feature_names(params.feature_names, None, type(params).__name__)
        params = dataclasses.replace(params, feature_names=None)
    return X, params


def _map_scores(params, X, fn):
    X, params = _check_params_X(params, X)
    K = params.classes.shape[0]
    dt = np.dtype(params.dtype)
    return X.map_blocks(_score_block, params, fn, dtype=dt, chunks=(X.chunks[0], (K,)),
                        meta=np.empty((0, 0), dtype=dt))


# The four scoring functions mirror fastgen.scoring's (and fastgen.cuda's) by name, kept
# separate on purpose: each is a public function of this module; the work is _map_scores.
def joint_log_likelihood(params, X):
    """log p(x, y=k) of every row of a Dask array, as a Dask array (n, K), block by block
    (:func:`dask.array.map_blocks` of :func:`fastgen.joint_log_likelihood`)."""
    return _map_scores(params, X, scoring.joint_log_likelihood)


def predict_log_proba(params, X):
    """log p(y=k | x) of every row of a Dask array, as a lazy Dask array (n, K)."""
    return _map_scores(params, X, scoring.predict_log_proba)


def predict_proba(params, X):
    """p(y=k | x) of every row of a Dask array, as a lazy Dask array (n, K)."""
    return _map_scores(params, X, scoring.predict_proba)


def predict(params, X):
    """The most probable label of every row of a Dask array, as a lazy Dask array (n,)."""
    X, params = _check_params_X(params, X)
    dt = params.classes.dtype
    return X.map_blocks(_score_block, params, scoring.predict, dtype=dt, drop_axis=1,
                        chunks=(X.chunks[0],), meta=np.empty((0,), dtype=dt))
