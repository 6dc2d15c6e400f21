"""Statistical inference for a fitted logistic regression: standard errors, Wald tests,
robust (sandwich) and cluster covariances, likelihood-ratio statistics, summary tables.

Names follow statsmodels' results objects (``params``, ``bse``, ``tvalues``, ``pvalues``,
``conf_int()``, ``cov_params``, ``llf``, ``llnull``, ``llr``, ``llr_pvalue``, ``aic``,
``bic``, ``prsquared``, ``nobs``, ``df_model``, ``df_resid``, ``summary()``), and so does
the layout: intercept first (as after ``statsmodels.api.add_constant``); binary params of
shape (p,); multinomial params of shape (p, K−1) against the first class, as MNLogit.

Everything follows from one pass over X at the optimum
(:func:`fastgen.kernels.inference.inference_pass`): the log-likelihood, the score, the
Fisher information ``I = X̃ᵀ diag(w π(1−π)) X̃`` (binary; the (K−1)p-square block
matrix for multinomial) and, for the sandwich, the meat ``Σ_i w_i s_i s_iᵀ`` of the
per-row scores.  Cluster sums take one more (serial, memory-bound) pass.

Modules, each importing only those above it:

* ``passes``      InferenceData (one pass over in-memory X) and PassSums (its sums);
* ``summary``     Summary: the tables as text, LaTeX and HTML;
* ``results``     LogisticInference, its intervals, summary and DataFrame, and its
  doors to the modules below, imported on use:
  ``hypotheses`` (t_test, wald_test, lr_test), ``prediction`` (get_prediction),
  ``margins`` (get_margeff);
* ``checks``      the request, cluster labels, row names, the separation check;
* ``optimum``     whether the model's coefficients are the estimate for the data given;
* ``covariance``  statsmodels' layout, the rank check, Wald, HC0/HC1 and cluster;
* ``api``         logistic_inference in steps and ``finish_inference``, the finish it
  shares with ``fastgen.dask.logistic_inference`` (sums over a Dask array's blocks).
"""

from .api import (
    InferenceSample,
    check_sample,
    dependent_name,
    finish_inference,
    is_dask_array,
    logistic_inference,
    result_in_user_frame,
)
from .checks import (
    MAX_INFERENCE_PARAMS,
    SEPARATION_ETA,
    InferenceRequest,
    check_request,
    group_codes,
    table_row_names,
)
from .hypotheses import ContrastResults, LRTestResults, lr_test
from .margins import MarginalEffects
from .optimum import OPTIMUM_DISTANCE, stored_rounding
from .passes import InferenceData, PassSums, reference_coef
from .prediction import PredictionResults
from .results import FitData, LogisticInference, labelled
from .summary import Summary, SummaryTable

__all__ = ["LogisticInference", "logistic_inference", "FitData", "labelled", "Summary",
           "SummaryTable", "dependent_name", "lr_test", "ContrastResults", "LRTestResults",
           "PredictionResults", "MarginalEffects", "MAX_INFERENCE_PARAMS",
           "SEPARATION_ETA", "InferenceData", "PassSums", "reference_coef",
           "InferenceRequest", "check_request", "InferenceSample", "check_sample",
           "group_codes", "table_row_names", "finish_inference",
           "is_dask_array", "result_in_user_frame", "OPTIMUM_DISTANCE", "stored_rounding"]

