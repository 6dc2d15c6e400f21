"""The compile line names the family of the call, not of the function it went through.

Firth's penalised likelihood compiles kernels of its own (the curvature pass, its packed
products) but is reached through ``fit_logistic(penalty="firth")``; its fits are then
scored and given to ``logistic_inference``.  Each such call is announced as "Firth
logistic regression", a family of its own: a process that compiled plain logistic
regression first still says when Firth's kernels compile, and the reverse.

The family is read from the call stack where numba's compile event fires.  Real calls
(small inputs: nothing compiles, the Python frames are those of a compiling call) are
traced, and at every frame inside them the listener's reading of the stack is taken.
"""

import logging
import sys
import types

import numpy as np
import pytest

import fastgen
from fastgen import _log
from fastgen._public import LAZY

FIRTH, LOGISTIC = "Firth logistic regression", "logistic regression"


def _families_seen(call):
    """The families the compile listener would name at every fastgen frame that runs
    inside a public call during ``call()`` (frames of the data passes, where kernels
    are dispatched, and every other one below the public function)."""
    seen = set()

    def profile(frame, event, arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("fastgen.") or module.startswith("fastgen._log"):
            return
        caller = _log._public_caller(frame)
        # class bodies (LogisticParams...) run at import, outside any call: no kernel
        if caller is not None and caller[0] in LAZY and caller[0][:1].islower():
            seen.add(caller[1])

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))
    y = (X[:, 0] + rng.standard_normal(80) > 0).astype(np.int64)
    y3 = (np.arange(80) % 3).astype(np.int64)
    return X, y, y3


@pytest.mark.parametrize("kw", [dict(penalty="firth"),
                                dict(penalty="firth", correction="flic"),
                                dict(penalty="firth", correction="flac")])
def test_firth_fits_inference_and_scoring_are_firths(data, kw):
    X, y, _ = data
    assert _families_seen(lambda: fastgen.fit_logistic(X, y, **kw)) == {FIRTH}
    p = fastgen.fit_logistic(X, y, **kw)
    assert p.solver in ("firth", "flic", "flac")
    assert _families_seen(lambda: fastgen.logistic_inference(p, X, y)) == {FIRTH}
    for score in (fastgen.predict_proba, fastgen.predict, fastgen.predict_log_proba,
                  fastgen.joint_log_likelihood):
        assert _families_seen(lambda s=score: s(p, X)) == {FIRTH}, score.__name__


def test_firth_multinomial_and_profile_intervals_are_firths(data):
    X, y, y3 = data
    assert _families_seen(lambda: fastgen.fit_logistic(X, y3, penalty="firth")) == {FIRTH}
    p = fastgen.fit_logistic(X, y, penalty="firth")
    seen = _families_seen(lambda: fastgen.logistic_inference(p, X, y, ci="profile"))
    assert seen == {FIRTH}


def test_plain_logistic_stays_logistic(data):
    X, y, y3 = data
    for labels in (y, y3):
        assert _families_seen(lambda lab=labels: fastgen.fit_logistic(X, lab)) == {LOGISTIC}
    p = fastgen.fit_logistic(X, y)
    assert _families_seen(lambda: fastgen.logistic_inference(p, X, y)) == {LOGISTIC}
    assert _families_seen(lambda: fastgen.predict_proba(p, X)) == {LOGISTIC}
    # irls_step is a plain Newton step, whatever fit it starts from
    q = fastgen.fit_logistic(X, y, penalty="firth")
    assert _families_seen(lambda: fastgen.irls_step(q, X, y)) == {LOGISTIC}


def test_adapters_name_the_family_of_the_fastgen_call_they_make(data):
    """scikit-learn's method names (``predict_proba``) are public names too: the family
    comes from the fastgen call underneath."""
    sk = pytest.importorskip("fastgen.sklearn")
    X, y, _ = data
    firth = sk.FirthLogisticRegression()
    assert _families_seen(lambda: firth.fit(X, y)) == {FIRTH}
    assert _families_seen(lambda: firth.predict_proba(X)) == {FIRTH}
    plain = sk.LogisticRegression().fit(X, y)
    assert _families_seen(lambda: plain.predict_proba(X)) == {LOGISTIC}
    gda = sk.LinearDiscriminantAnalysis().fit(X, y)
    assert _families_seen(lambda: gda.predict_proba(X)) == {"GDA"}


def test_statistics_routes_name_their_family(data):
    X, y, _ = data
    m = fastgen.class_moments(X, y, kind="diagonal")
    assert _families_seen(lambda: fastgen.gaussian_nb_from_moments(m)) == {
        "Gaussian naive Bayes"}
    nb = fastgen.fit_gaussian_nb(X, y)
    assert _families_seen(lambda: fastgen.predict_proba(nb, X)) == {"Gaussian naive Bayes"}


# ----------------------------------------------------------- one line per family

def _event(cache="/numba/cache"):
    py_func = types.SimpleNamespace(__module__="fastgen.kernels.firth")
    dispatcher = types.SimpleNamespace(py_func=py_func,
                                       _cache=types.SimpleNamespace(_cache_path=cache))
    return types.SimpleNamespace(data={"dispatcher": dispatcher})


_API = """
def fit_logistic(X, y, penalty=None, correction=None):
    _log._on_compile_start(ev)

def logistic_inference(model, X, y):
    _log._on_compile_start(ev)

def predict_proba(params, X):
    _log._on_compile_start(ev)
"""


class LogisticParams:  # stands for fastgen's (the family is read from the type's name)
    def __init__(self, solver):
        self.solver = solver


@pytest.fixture
def api(monkeypatch):
    monkeypatch.setattr(_log, "_announced", set())
    namespace = {"__name__": "fastgen.logistic.api", "_log": _log, "ev": _event()}
    exec(compile(_API, "<fastgen api>", "exec"), namespace)
    return types.SimpleNamespace(**namespace)


def _lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "fastgen"]


def _line(name, family):
    return _log.compile_message(name, family, "/numba/cache")


@pytest.mark.parametrize("first", ["logistic", "firth"])
def test_logistic_and_firth_each_get_their_line_in_either_order(api, caplog, first):
    calls = {"logistic": [lambda: api.fit_logistic(1, 2),
                          lambda: api.logistic_inference(LogisticParams("newton-cholesky"),
                                                         1, 2)],
             "firth": [lambda: api.fit_logistic(1, 2, penalty="firth"),
                       lambda: api.predict_proba(LogisticParams("flic"), 1),
                       lambda: api.logistic_inference(LogisticParams("flac"), 1, 2)]}
    second = "firth" if first == "logistic" else "logistic"
    with caplog.at_level(logging.INFO, logger="fastgen"):
        for call in calls[first] + calls[second]:
            call()
    expected = {"logistic": _line("fit_logistic", LOGISTIC),
                "firth": _line("fit_logistic", FIRTH)}
    assert _lines(caplog) == [expected[first], expected[second]]
    assert "compiling kernels for Firth logistic regression (fit_logistic)" in expected["firth"]


def test_scoring_a_firth_fit_first_names_firth(api, caplog):
    with caplog.at_level(logging.INFO, logger="fastgen"):
        api.predict_proba(LogisticParams("firth"), 1)
        api.fit_logistic(1, 2, penalty="firth")  # the same family: no second line
        api.predict_proba(LogisticParams("newton-cg"), 1)
    assert _lines(caplog) == [_line("predict_proba", FIRTH),
                              _line("predict_proba", LOGISTIC)]


@pytest.mark.parametrize("name, arguments, family", [
    ("fit_logistic", {}, LOGISTIC),
    ("fit_logistic", {"penalty": None}, LOGISTIC),
    ("fit_logistic", {"penalty": "firth", "correction": "flac"}, FIRTH),
    ("fit_logistic", {"penalty": np.array(["firth"])}, LOGISTIC),  # refused later
    ("logistic_inference", {"model": LogisticParams("firth")}, FIRTH),
    ("logistic_inference", {"model": LogisticParams("newton-cholesky")}, LOGISTIC),
    ("logistic_inference", {"model": None}, LOGISTIC),
    ("predict", {"params": LogisticParams("flic")}, FIRTH),
    ("predict", {"params": object()}, None),
    ("irls_step", {"params": LogisticParams("firth")}, LOGISTIC),
    ("gaussian_nb_from_moments", {}, "Gaussian naive Bayes"),
    ("fit_gda", {}, "GDA"),
])
def test_call_family(name, arguments, family):
    assert _log.call_family(name, arguments) == family
