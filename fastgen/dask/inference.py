"""Logistic inference on a Dask array: the inference pass of every row block
(:class:`fastgen.logistic.inference.InferenceData`), summed, then the finish of
:func:`fastgen.logistic_inference` (:func:`fastgen.logistic.inference.finish_inference`);
the separation check runs the exact test by passes over the blocks."""

from __future__ import annotations

import dataclasses

import dask
import numpy as np

from .._validation import check_sample_weight, check_X
from ..logistic.centring import centre, centred_params
from ..logistic.inference import (
    InferenceData,
    LogisticInference,
    PassSums,
    check_request,
    dependent_name,
    finish_inference,
    group_codes,
    is_dask_array,
    reference_coef,
    result_in_user_frame,
    stored_rounding,
    table_row_names,
)
from .blocks import (
    as_dask_vector,
    as_dask_X,
    in_rows,
    naming_first_nan,
    row_blocks,
    shift_over_blocks,
)
from .separation import separation_over_blocks

__all__ = ["logistic_inference", "summed_passes"]


def summed_passes(model, X, y, sample_weight, want_meat, groups, shift=None):
    """:class:`PassSums` over a Dask array's row blocks at the model's estimate, and X
    (checked); cluster score sums when ``groups`` are given; every block centred by
    ``shift`` (the model then holds the centred frame's intercepts)."""
    X = as_dask_X(X)
    yd = as_dask_vector(y, X, "y")
    wd = as_dask_vector(sample_weight, X, "sample_weight")
    B = reference_coef(model)
    classes = model.classes
    n_groups = 0
    codes_of_groups = None
    if groups is not None:
        labels = np.asarray(dask.compute(groups)[0]) if is_dask_array(groups) else groups
        codes_of_groups, n_groups = group_codes(labels, X.shape[0])
    blocks = row_blocks(X, yd, wd)
    offsets = np.concatenate([[0], np.cumsum(X.chunks[0])])

    def part(xb, yb, wb, lo, hi):
        xb = check_X(xb, allow_sparse=True)
        if shift is not None and xb.shape[0]:
            xb = centre(xb, shift)
        yb = np.asarray(yb)
        codes = np.searchsorted(classes, yb)
        if np.any(codes >= classes.shape[0]) or np.any(classes[np.minimum(
                codes, classes.shape[0] - 1)] != yb):
            raise ValueError(f"y has labels outside the model's classes {classes.tolist()}")
        codes = codes.astype(np.int32)
        w = check_sample_weight(wb, xb.shape[0])
        data = InferenceData(xb, model.fit_intercept)
        return data.sums(codes, w, B, classes.shape[0], want_meat,
                         codes_of_groups[lo:hi] if n_groups else None, n_groups)

    f = dask.delayed(in_rows, pure=True)
    parts = dask.compute(*[f(int(offsets[i]), part, xb, yb, wb, int(offsets[i]),
                             int(offsets[i + 1]))
                           for i, (xb, yb, wb) in enumerate(blocks)])
    sums = PassSums(
        loglik=sum(pt.loglik for pt in parts),
        score=sum(pt.score for pt in parts),
        information=sum(pt.information for pt in parts),
        meat=sum(pt.meat for pt in parts),
        max_abs_eta=max(pt.max_abs_eta for pt in parts),
        cluster_scores=sum(pt.cluster_scores for pt in parts) if n_groups else None,
        class_counts=sum(pt.class_counts for pt in parts),
        n_groups=n_groups,
    )
    return sums, X


@naming_first_nan
def logistic_inference(model, X, y, *, sample_weight=None, cov_type="nonrobust",
                       groups=None, ci="wald", alpha=0.05,
                       feature_names=None) -> LogisticInference:
    """:func:`fastgen.logistic_inference` on a Dask array (dense or CSR blocks).

    One pass over the blocks sums the log-likelihood, score, information and meat
    (cluster score sums too, for ``cov_type="cluster"``); the covariance, tests and
    likelihoods follow on the client exactly as in memory.  A large fitted |η| is
    checked by the exact separation test, by passes over the blocks
    (:func:`fastgen.dask.separation_over_blocks`).  Arguments as for
    :func:`fastgen.logistic_inference`; y, ``sample_weight`` and ``groups`` may be
    Dask or numpy arrays.  ``ci="profile"`` needs in-memory X (it refits the model).

    Returns
    -------
    LogisticInference
    """
    request = check_request(model, cov_type, ci, alpha)
    d = request.n_features
    names = table_row_names(X, d, model.fit_intercept,
                            model.feature_names if feature_names is None else feature_names)
    if ci == "profile":
        raise ValueError("ci='profile' needs in-memory X (it refits the model)")
    # the pass in the centred frame of the in-memory inference (one more pass for the
    # shift), the covariance mapped back to the user's intercept
    Xa = as_dask_X(X)
    shift = None
    if model.fit_intercept:
        shift = shift_over_blocks(Xa, row_blocks(Xa, as_dask_vector(y, Xa, "y"),
                                                 as_dask_vector(sample_weight, Xa,
                                                                "sample_weight")))
    model_c = centred_params(model, shift)
    sums, Xd = summed_passes(model_c, X, y, sample_weight, request.want_meat,
                             groups if request.cluster else None, shift)
    if Xd.shape[1] != d:
        raise ValueError(f"X has {Xd.shape[1]} features but the model was fitted with {d}")
    if request.cluster and groups is None:
        raise ValueError("cov_type='cluster' needs groups (one cluster label per row)")
    feats = tuple(names[1:] if model.fit_intercept else names)

    def confirm_separation():
        return separation_over_blocks(X, y, sample_weight, model.classes,
                                      model.fit_intercept, feats)

    result = finish_inference(model_c, request, sums, names, confirm_separation, shift,
                              None, stored_rounding(model, shift))
    if shift is not None:
        result = result_in_user_frame(result, model, request, shift)
    return dataclasses.replace(result, dep_name=dependent_name(y))
