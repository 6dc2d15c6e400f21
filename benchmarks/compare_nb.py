"""Naive Bayes side by side with scikit-learn: workloads W5, W6, W7 (and complement,
categorical without a target).

``run(repeats, quick)`` returns rows in the format of ``benchmarks/compare.py`` (which
imports it), each with ``ratio`` = sklearn seconds / fastgen seconds (above 1: fastgen
is faster).  Each function is called once before timing (JIT compilation excluded);
compile times are measured separately, in a fresh process with an empty numba cache.
``python benchmarks/compare_nb.py [--repeats N] [--quick]`` prints the table alone.

The count workloads (W6, W7, NB-C, and NB-K's CSR rows) run on every data set of
``--data`` (all by default, see :data:`DATASETS`): the class-shifted counts of
:func:`make_counts` and short documents with shared common words
(:func:`make_shared_zipf`, Zipf exponents 1.0, 1.1, 1.2 at 10, 30 and 100 draws per
row).  Each fit row also times the floor of :func:`read_write_floor` in the same
rounds: one read of the CSR arrays and one write of a fresh (K, d) table.
``--baseline PATH`` times a second fastgen (a checkout at PATH, e.g. the previous
commit) in a worker process, in the same alternating rounds as fastgen, scikit-learn
and the floor: ``python benchmarks/compare_nb.py --baseline /tmp/base --only W6,W7``.

Targets (reported, not asserted): W5 fit ≥ 20×, predict_proba ≥ 40×; W6 fit ≥ 8×,
predict_proba ≥ 3×; W7 fit and predict ≥ 5× (issue 33: on every data set); at 10
draws per row, the W6 and W7 fits at most 2× the floor.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

try:  # imported as benchmarks.compare_nb, or run as a script / by compare.py's fallback
    from . import _common
except ImportError:
    import _common
interleaved_medians = _common.interleaved_medians

WORKLOADS = ("W5", "W6", "W7", "NB-C", "NB-K", "NB-JIT")

#: The count data sets: "shifted" (:func:`make_counts`, the W6/W7 data) and
#: "zipf<exponent>-<draws>" (:func:`make_shared_zipf`).
DATASETS = ("shifted",) + tuple(f"zipf{e}-{m}" for e in ("1.0", "1.1", "1.2")
                                for m in (10, 30, 100))

SIZES = {
    # n, d, K for W5; n, d, K, stored values per row for W6/W7
    "full": {"W5": (1_000_000, 16, 10), "W6": (200_000, 100_000, 20, 100)},
    "small": {"W5": (100_000, 16, 10), "W6": (20_000, 10_000, 20, 100)},
}


def make_gaussian(n, d, K, seed=0):
    """Dense float64 data: K Gaussian classes with distinct means and scales."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    centers = rng.normal(scale=3.0, size=(K, d))
    scales = rng.uniform(0.5, 2.0, size=(K, d))
    X = centers[y] + scales[y] * rng.standard_normal((n, d))
    return np.ascontiguousarray(X), y


def make_counts(n, d, K, stored_per_row, seed=0):
    """CSR integer counts with about ``stored_per_row`` stored values per row.

    Each row draws 1.55 × stored_per_row columns from a Zipf-like (1/rank^1.1) column
    distribution, shifted per class; repeated columns are summed into counts (at
    d = 100 000 about a third of the draws repeat, leaving ~stored_per_row distinct
    columns)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    per_row = int(round(1.55 * stored_per_row))
    p = 1.0 / np.arange(1, d + 1) ** 1.1
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    cols = np.searchsorted(cdf, rng.random(n * per_row)).astype(np.int64)
    shift = (np.repeat(y, per_row) * (d // (7 * K) + 1)) % d
    cols = (cols + shift) % d
    rows = np.repeat(np.arange(n), per_row)
    X = sp.csr_matrix((np.ones(n * per_row), (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X, y


def make_shared_zipf(n, d, K, draws, exponent=1.1, seed=0):
    """CSR binary data shaped like short documents whose common words are common to
    every class: each row draws ``draws`` columns from one Zipf-like distribution
    (1/rank^exponent, the same for all classes), repeats merged (``sum_duplicates``),
    every stored value set to 1.  Labels uniform in 0..K-1, int32 indices.  At d =
    100 000 and exponent 1.1, 10 draws leave ~9.1 stored values per row, 30 ~24 and
    100 ~69."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    p = 1.0 / np.arange(1, d + 1) ** exponent
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    indptr = np.zeros(n + 1, dtype=np.int64)
    parts = []
    step = max(1, (1 << 22) // draws)  # rows per batch: bounded temporaries
    for r0 in range(0, n, step):
        r1 = min(n, r0 + step)
        cols = np.searchsorted(cdf, rng.random((r1 - r0, draws))).astype(np.int32)
        cols.sort(axis=1)
        keep = np.ones(cols.shape, dtype=bool)
        keep[:, 1:] = cols[:, 1:] != cols[:, :-1]
        parts.append(cols[keep])
        indptr[r0 + 1:r1 + 1] = keep.sum(axis=1)
    np.cumsum(indptr, out=indptr)
    indices = np.concatenate(parts)
    X = sp.csr_matrix((np.ones(indices.shape[0]), indices, indptr.astype(np.int32)),
                      shape=(n, d))
    X.has_canonical_format = True
    return X, y


def make_dataset(name, quick=False):
    """The count data set ``name`` of :data:`DATASETS`: (X, y, description)."""
    n, d, K, per_row = SIZES["small" if quick else "full"]["W6"]
    if name == "shifted":
        X, y = make_counts(n, d, K, per_row)
        what = "class-shifted"
    elif name.startswith("zipf") and name.count("-") == 1:
        exponent, draws = name[4:].split("-")
        X, y = make_shared_zipf(n, d, K, int(draws), float(exponent))
        what = f"shared Zipf {exponent}, {draws} draws/row"
    else:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(DATASETS)}")
    dims = f"CSR n={n // 1000}k d={d // 1000}k K={K} nnz={X.nnz / 1e6:.1f}M {what}"
    return X, y, dims


def read_write_floor():
    """The floor of a CSR naive Bayes fit, as a callable ``floor(X, K)``: one parallel
    read of X's three arrays (``indptr``, ``indices``, ``data``) and one parallel write
    of a fresh (K, d) float64 table (``np.empty``, as fastgen's fits allocate theirs),
    in one numba region.  What any fit must do: read the data once, write its result
    once."""
    import numba

    @numba.njit(parallel=True, nogil=True)
    def read_write(indptr, indices, data, out):
        K, d = out.shape
        flat = out.reshape(-1)
        nnz = indices.shape[0]
        n1 = indptr.shape[0]
        items = 64
        for b in numba.prange(items):
            s = 0.0
            for p in range(nnz * b // items, nnz * (b + 1) // items):
                s += indices[p] + data[p]
            for i in range(n1 * b // items, n1 * (b + 1) // items):
                s += indptr[i]
            for q in range(K * d * b // items, K * d * (b + 1) // items):
                flat[q] = s
        return out

    def floor(X, K):
        return read_write(X.indptr, X.indices, X.data, np.empty((K, X.shape[1])))

    return floor


_COMPILE_SCRIPT = r"""
import json, time, numpy as np, scipy.sparse as sp
t0 = time.perf_counter(); import fastgen as fg; t_import = time.perf_counter() - t0
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 4)); y = np.arange(200) % 3
C = sp.random(200, 50, density=0.1, format="csr", random_state=0) * 5
C.data = np.floor(C.data) + 1
out = {"import": t_import}
def first(name, f):
    t0 = time.perf_counter(); f(); out[name] = time.perf_counter() - t0
first("gaussian fit", lambda: fg.fit_gaussian_nb(X, y))
g = fg.fit_gaussian_nb(X, y)
first("gaussian predict_proba", lambda: fg.predict_proba(g, X))
first("multinomial fit (CSR)", lambda: fg.fit_multinomial_nb(C, y))
m = fg.fit_multinomial_nb(C, y)
first("multinomial predict_proba (CSR)", lambda: fg.predict_proba(m, C))
first("bernoulli fit + predict (CSR)",
      lambda: fg.predict(fg.fit_bernoulli_nb(C, y), C))
print(json.dumps(out))
"""


def compile_times():
    """First-call seconds of each kernel in a fresh process with an empty numba cache
    (so compilation is included), as a dict name -> seconds."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        res = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT], env=env,
                             capture_output=True, text=True, timeout=600, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def _row(workload, fast, peer_name, peer, target=None, note="", floor=None,
         floor_target=None, baseline=None):
    ratio = peer[0] / fast[0] if peer else None
    met = None
    words = []
    if target:
        words.append(f"≥{target:g}× sklearn")
        met = ratio >= target
    if floor_target and floor:
        words.append(f"≤{floor_target:g}× floor")
        met = (met is not False) and fast[0] <= floor_target * floor[0]
    row = {
        "workload": workload,
        "fastgen_s": fast[0],
        "peer": peer_name,
        "peer_s": peer[0] if peer else None,
        "floor_s": floor[0] if floor else None,
        "target": ", ".join(words) if words else "report only",
        "met": met,
        "note": note,
        "ratio": ratio,
        "fastgen_times": fast[1],
        "peer_times": peer[1] if peer else None,
    }
    if floor:
        what = "one read of X's CSR arrays + one write of a fresh (K, d) table"
        row.update(floor=what, floor_times=floor[1],
                   note=f"floor: {what} (read_write_floor)" + (f"; {note}" if note else ""))
    if baseline:
        row.update(baseline_s=baseline[0], baseline_times=baseline[1])
    return row


class _Seconds(float):
    """The seconds a callable measured itself (the baseline worker, without the pipe)."""


def _rounds(fns, repeats, warmup=1):
    """:func:`_common.interleaved_medians`, the order of the callables reversed every
    other round, and a callable returning :class:`_Seconds` timed by its own report.
    Returns [(median seconds, all timings), ...] in the order of ``fns``."""
    for fn in fns:
        for _ in range(warmup):
            fn()
    times = [[] for _ in fns]
    for r in range(repeats):
        idx = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for i in idx:
            _common.settle()
            t0 = time.perf_counter()
            got = fns[i]()
            t = time.perf_counter() - t0
            times[i].append(float(got) if isinstance(got, _Seconds) else t)
    return [(statistics.median(t), t) for t in times]


def count_task(fg, X, y, model, what):
    """fastgen's callable for a count workload: ``fit_<model>_nb(X, y)`` (``what`` =
    "fit") or ``fg.<what>(params, X)`` of that fit."""
    fit = getattr(fg, f"fit_{model}_nb")
    if what == "fit":
        return lambda: fit(X, y)
    p = fit(X, y)
    score = getattr(fg, what)
    return lambda: score(p, X)


class BaselineWorker:
    """Another fastgen (a checkout at ``path``) timed in a worker process that runs this
    file with ``--serve``: the same data sets, built from the same seeds."""

    def __init__(self, path, quick=False):
        path = os.path.abspath(path)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [path] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        cmd = [sys.executable, os.path.abspath(__file__), "--serve"] + (
            ["--quick"] if quick else [])
        self.proc = subprocess.Popen(cmd, env=env, cwd=path, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.fastgen_file = self._ask(["hello"])
        if not os.path.abspath(self.fastgen_file).startswith(path + os.sep):
            self.close()
            raise RuntimeError(f"the baseline worker imported fastgen from "
                               f"{self.fastgen_file}, not from {path}")

    def _ask(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the baseline worker exited")
        return json.loads(line)

    def task(self, dataset, model, what):
        """A callable timing one call of the task in the worker (returns _Seconds)."""
        return lambda: _Seconds(self._ask(["time", dataset, model, what]))

    def drop(self, dataset):
        self._ask(["drop", dataset])

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


def serve(quick=False):
    """The baseline worker's loop (``--serve``): JSON requests on stdin, one answer
    per line on stdout."""
    import fastgen as fg

    data, tasks = {}, {}
    for line in sys.stdin:
        msg = json.loads(line)
        if msg[0] == "hello":
            answer = fg.__file__
        elif msg[0] == "drop":
            data.pop(msg[1], None)
            tasks = {k: v for k, v in tasks.items() if k[0] != msg[1]}
            answer = True
        else:
            _, name, model, what = msg
            if name not in data:
                data[name] = make_dataset(name, quick)[:2]
            key = (name, model, what)
            if key not in tasks:
                tasks[key] = count_task(fg, *data[name], model, what)
            t0 = time.perf_counter()
            tasks[key]()
            answer = time.perf_counter() - t0
        print(json.dumps(answer), flush=True)


def run(repeats: int = 5, quick: bool = False, compile: bool = True, only=WORKLOADS,
        data=DATASETS, baseline=None):
    """Time fastgen against scikit-learn on W5–W7, complement and categorical NB.

    Parameters
    ----------
    repeats : int
        Timed calls per function (medians reported), after one untimed warm-up call
        each; fastgen and scikit-learn calls alternate.
    quick : bool
        A tenth of the rows (a smoke run); the targets are judged on full sizes.
    compile : bool
        Also report first-call (compile) seconds from a fresh process with an empty
        numba cache, as rows with no peer.
    only : sequence of str
        The workloads to run, from :data:`WORKLOADS` (``NB-JIT``: the compile rows,
        also only with ``compile``).
    data : sequence of str
        The count data sets (of :data:`DATASETS`) for W6, W7, NB-C and NB-K's CSR rows.
    baseline : str, optional
        Path of another fastgen checkout, timed in the same rounds (``baseline_s``).

    Returns
    -------
    list of dict
        Rows in the format of ``benchmarks/compare.py`` (workload, fastgen_s, peer,
        peer_s, floor_s, target, met, note, plus ``ratio`` = peer_s / fastgen_s, every
        timing, and with ``baseline`` its seconds).
    """
    from sklearn import naive_bayes as sknb

    import fastgen as fg

    cfg = SIZES["small" if quick else "full"]
    rows = []
    size_note = " (quick sizes: target not judged)" if quick else ""
    worker = BaselineWorker(baseline, quick) if baseline else None

    def pair(wid, what, fast, slow, peer_name, target=None, note="", floor=None,
             floor_target=None, base=None):
        fns = [fast] + ([slow] if slow else []) + ([floor] if floor else []) + (
            [base] if base else [])
        res = _rounds(fns, repeats)
        f = res.pop(0)
        s = res.pop(0) if slow else None
        fl = res.pop(0) if floor else None
        b = res.pop(0) if base else None
        rows.append(_row(f"{wid} {what}", f, peer_name, s, None if quick else target,
                         note + size_note, fl, None if quick else floor_target, b))

    def fit_and_score(wid, model, sk_class, dims, data, fit_target, scores, peer_data=None,
                      floor=None, floor_target=None, dataset=None):
        """Time fastgen's ``model`` fit against ``sk_class().fit`` (and the floor), then
        each (score, target) of ``scores``: ``fastgen.<score>`` of that fit against the
        estimator's method.  scikit-learn gets ``peer_data`` where it needs another
        encoding of ``data``; the baseline worker (if any) runs the same calls on
        ``dataset``."""
        X, y = data
        Xp, yp = data if peer_data is None else peer_data
        name = sk_class.__name__
        base = (lambda what: worker.task(dataset, model, what)) if (
            worker and dataset) else (lambda what: None)
        pair(wid, f"{name} fit {dims}", count_task(fg, X, y, model, "fit"),
             lambda: sk_class().fit(Xp, yp), f"sklearn {name}.fit", fit_target,
             floor=floor, floor_target=floor_target, base=base("fit"))
        est = sk_class().fit(Xp, yp)
        for score, target in scores:
            sk_score = getattr(est, score)
            pair(wid, f"{name} {score} {dims}", count_task(fg, X, y, model, score),
                 lambda f=sk_score: f(Xp), f"sklearn {name}.{score}", target,
                 base=base(score))

    only = {w.upper() for w in only}
    unknown = only - set(WORKLOADS)
    if unknown:
        raise ValueError(f"unknown workloads {sorted(unknown)}; known: {WORKLOADS}")
    unknown = set(data) - set(DATASETS)
    if unknown:
        raise ValueError(f"unknown data sets {sorted(unknown)}; known: {DATASETS}")

    if "W5" in only:
        n, d, K = cfg["W5"]
        X, y = make_gaussian(n, d, K)
        fit_and_score("W5", "gaussian", sknb.GaussianNB, f"n={n:.0e} d={d} K={K}",
                      (X, y), 20, [("predict_proba", 40)])

    K = cfg["W6"][2]
    floor_fn = read_write_floor() if only & {"W6", "W7", "NB-K"} else None
    for name in data if only & {"W6", "W7", "NB-C", "NB-K"} else ():
        Xs, y, dims = make_dataset(name, quick)
        floor = (lambda X=Xs: floor_fn(X, K)) if floor_fn else None
        # the fixed part of the fit: judged on the shortest rows
        cap = 2 if name.endswith("-10") else None
        kw = {"floor": floor, "floor_target": cap, "dataset": name}
        if "W6" in only:
            fit_and_score("W6", "multinomial", sknb.MultinomialNB, dims, (Xs, y), 8,
                          [("predict_proba", 3)], **kw)
        if "W7" in only:
            fit_and_score("W7", "bernoulli", sknb.BernoulliNB, dims, (Xs, y), 5,
                          [("predict", 5), ("predict_proba", None)], **kw)
        if "NB-C" in only:
            fit_and_score("NB-C", "complement", sknb.ComplementNB, dims, (Xs, y), None,
                          [("predict_proba", None)], dataset=name)
        if "NB-K" in only:
            # no scikit-learn peer on CSR (CategoricalNB densifies): against the floor
            pair("NB-K", f"CategoricalNB fit {dims}",
                 count_task(fg, Xs, y, "categorical", "fit"), None, None, floor=floor,
                 note="scikit-learn's CategoricalNB takes no sparse input; timed "
                      "against the floor alone",
                 base=worker.task(name, "categorical", "fit") if worker else None)
        if worker:
            worker.drop(name)
        del Xs, y

    if "NB-K" in only:
        # Categorical: scikit-learn needs dense integer codes; 20 features, 8 categories.
        rng = np.random.default_rng(1)
        n5 = cfg["W5"][0] // 4
        Xc = rng.integers(0, 8, size=(n5, 20))
        yc = (Xc[:, 0] + rng.integers(0, 3, n5)) % 5
        fit_and_score("NB-K", "categorical", sknb.CategoricalNB,
                      f"n={n5 // 1000}k d=20 K=5, 8 categories", (Xc.astype(np.float64), yc),
                      None, [("predict_proba", None)], peer_data=(Xc, yc))

    if worker:
        worker.close()
    if compile and "NB-JIT" in only:
        for name, sec in compile_times().items():
            rows.append({
                "workload": f"NB-JIT first call: {name}", "fastgen_s": sec, "peer": None,
                "peer_s": None, "floor_s": None, "target": "report only", "met": None,
                "note": "fresh process, empty numba cache: compile included (excluded "
                        "from every timing above)",
            })
    return rows


def format_table(rows):
    base = any("baseline_s" in r for r in rows)
    head = f"{'workload':<96}{'fastgen s':>11}{'sklearn s':>11}{'ratio':>9}{'floor s':>10}"
    head += f"{'×floor':>8}" + (f"{'base s':>10}{'new/base':>9}" if base else "")
    lines = [head + "  target"]
    for r in rows:
        peer, fl, fg_s = r["peer_s"], r["floor_s"], r["fastgen_s"]
        line = f"{r['workload']:<96}{fg_s:>11.4f}"
        line += f"{peer:>11.4f}{peer / fg_s:>8.1f}x" if peer else f"{'':>20}"
        line += f"{fl:>10.4f}{fg_s / fl:>7.2f}x" if fl else f"{'':>18}"
        if base:
            b = r.get("baseline_s")
            line += f"{b:>10.4f}{fg_s / b:>8.2f}x" if b else f"{'':>19}"
        met = {True: " (met)", False: " (NOT met)", None: ""}[r["met"]]
        lines.append(f"{line}  {r['target']}{met}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a tenth of the rows")
    parser.add_argument("--no-compile", action="store_true",
                        help="skip the fresh-process compile-time probe")
    parser.add_argument("--only", default=",".join(WORKLOADS), metavar="W5,W7,...",
                        help=f"run only these workloads (of {','.join(WORKLOADS)})")
    parser.add_argument("--data", default=",".join(DATASETS), metavar="shifted,zipf1.1-10",
                        help=f"count data sets for W6, W7, NB-C, NB-K (of "
                             f"{','.join(DATASETS)})")
    parser.add_argument("--baseline", metavar="PATH",
                        help="also time the fastgen checkout at PATH, in a worker process, "
                             "in the same rounds")
    parser.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    _common.add_settle_arguments(parser)
    args = parser.parse_args(argv)
    if args.serve:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            serve(args.quick)
        return
    _common.apply_settle(parser, args)
    only = tuple(w.strip().upper() for w in args.only.split(",") if w.strip())
    if not only or set(only) - set(WORKLOADS):
        parser.error(f"--only takes a comma-separated subset of {','.join(WORKLOADS)}")
    data = tuple(d.strip() for d in args.data.split(",") if d.strip())
    if not data or set(data) - set(DATASETS):
        parser.error(f"--data takes a comma-separated subset of {','.join(DATASETS)}")
    load = os.getloadavg()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = run(args.repeats, args.quick, compile=not args.no_compile, only=only,
                   data=data, baseline=args.baseline)
    print(f"load average (1 min) at start {load[0]:.2f}, at end {os.getloadavg()[0]:.2f}")
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load_start": load, "load_end": os.getloadavg(), "rows": rows}, f,
                      indent=1, default=float)


if __name__ == "__main__":
    main()
