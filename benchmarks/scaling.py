"""Strong scaling over thread counts for every workload W1–W9, and the W10 import split.

Driven by ``python benchmarks/compare.py --threads 1,2,4,...`` (see ``compare.py``).
For each workload the data are built once (seeded); then, for each thread count t:

* fastgen runs with ``numba.set_num_threads(t)`` and every BLAS / OpenMP pool loaded
  in the process (fastgen's and scikit-learn's alike) limited to t threads by
  threadpoolctl's ``threadpool_limits(t)``;
* the peer (scikit-learn) runs in the same process under the same limits;
* for the memory-bound workloads, a floor: one plain read of X's bytes (a sum of its
  64-bit words with a numba ``prange`` at t threads), measured on the same arrays in
  the same rounds, which gives the machine's read bandwidth at t threads and the share
  of it that fastgen reaches (``floor seconds / fastgen seconds``: fastgen has to read
  X at least once);
* one untimed warm-up call each, then ``repeats`` rounds that alternate fastgen, peer
  and floor; medians are reported.

Sizes at ``scale = 1`` are those of issue 16 (larger than ``compare.py``'s own, to give
many threads work: n is 4× compare.py's for W1 and W5, 5× for W8 (n = 1e6, d = 64), 2×
for W2 and W3; W9 at d = 32); ``scale`` multiplies
every workload's row count n (d and K stay), so ``scale = 0.05`` is a smoke run.

W10 does not depend on the thread count: fresh interpreters are timed as they start,
see :func:`w10_split`.
"""

from __future__ import annotations

import csv
import json
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

try:  # imported as benchmarks.scaling or run from the benchmarks directory
    from . import _common as common
    from . import compare_logistic as cl
    from . import compare_nb as cnb
except ImportError:
    import _common as common
    import compare_logistic as cl
    import compare_nb as cnb

K = 10

# Row counts at scale 1 (issue 16's table; W3b and W4 keep compare.py's sizes).
SIZES = {
    "W1": dict(n=4_000_000, d=16),
    "W2": dict(n=400_000, d=128),
    "W3": dict(n=400_000, d=128),
    "W3b": dict(n=1_000_000, d=16),
    "W4": dict(n=1_000_000, d=16),
    "W5": dict(n=4_000_000, d=16),
    "W6": dict(n=200_000, d=100_000, K=20, per_row=100),  # W7 uses the same data
    "W8": dict(n=1_000_000, d=64),
    "W9": dict(n=200_000, d=32, K=10),
}
WORKLOAD_IDS = ("W1", "W2", "W3", "W3b", "W4", "W5", "W6", "W7", "W8", "W9", "W10")
IMPLS = ("fastgen", "peer", "floor")
LOGISTIC_TOL = 1e-8


@dataclass
class Case:
    """One timed comparison: fastgen against its peer, on data built once.

    ``read`` lists the arrays whose bytes the memory floor reads (None: not memory
    bound, no floor)."""

    wid: str
    label: str
    fastgen: Callable[[], object]
    peer: Callable[[], object]
    peer_name: str
    read: list | None = None
    results: dict = field(default_factory=dict)  # threads -> {impl: (median, times)}
    read_bytes: int | None = None

    def __post_init__(self):
        if self.read is not None:
            self.read_bytes = sum(w.nbytes for w in _words(self.read))

    def drop_data(self):
        """Forget the closures and arrays (the results and byte count stay)."""
        self.fastgen = self.peer = None
        self.read = None


# ----------------------------------------------------------------------------- floor
def _read_kernel():
    import numba

    @numba.njit(parallel=True, nogil=True)
    def read_sum(words):
        """Sum of the 64-bit words (wrapping): every byte read once, nothing written."""
        n = words.shape[0]
        nb = 4096 if n >= 4096 * 64 else 1
        step = (n + nb - 1) // nb
        part = np.zeros(nb, dtype=np.uint64)
        for b in numba.prange(nb):
            lo = b * step
            hi = min(n, lo + step)
            s = np.uint64(0)
            for i in range(lo, hi):
                s += words[i]
            part[b] = s
        return part.sum()

    return read_sum


_READ_SUM = None


def _words(arrays):
    """Each array's buffer as contiguous uint64 words (a trailing odd 4-byte word of
    an int32 array is left out)."""
    out = []
    for a in arrays:
        flat = np.ascontiguousarray(a).reshape(-1)
        raw = flat.view(np.uint8)
        m = (raw.shape[0] // 8) * 8
        out.append(raw[:m].view(np.uint64))
    return out


def read_floor(arrays):
    """A callable that reads every byte of ``arrays`` once, in parallel."""
    global _READ_SUM
    if _READ_SUM is None:
        _READ_SUM = _read_kernel()
    words = _words(arrays)

    def run():
        s = 0
        for w in words:
            s += int(_READ_SUM(w))
        return s

    return run


# ----------------------------------------------------------------------------- threads
@contextmanager
def thread_count(t):
    """numba at t threads and every threadpoolctl-visible pool limited to t."""
    import numba
    from threadpoolctl import threadpool_limits

    prev = numba.get_num_threads()
    numba.set_num_threads(t)
    try:
        with threadpool_limits(limits=t):
            yield
    finally:
        numba.set_num_threads(prev)


def pools_now():
    """(internal_api, num_threads) of every pool threadpoolctl sees, plus numba's."""
    import numba
    from threadpoolctl import threadpool_info

    return ([f"{p['internal_api']}={p['num_threads']}" for p in threadpool_info()]
            + [f"numba={numba.get_num_threads()}"])


def check_threads(threads):
    """Thread counts must be ≥ 1 and at most numba's pool size (NUMBA_NUM_THREADS)."""
    import numba

    top = numba.config.NUMBA_NUM_THREADS
    bad = [t for t in threads if t < 1 or t > top]
    if bad:
        raise ValueError(f"thread counts {bad} outside 1..{top} (numba's pool has {top} "
                         f"threads on this machine; set NUMBA_NUM_THREADS to run more)")


# ----------------------------------------------------------------------------- workloads
def _n(wid, scale, floor=2000):
    return max(int(round(SIZES[wid]["n"] * scale)), floor)


def _fmt_n(n):
    return f"{n:.0e}".replace("e+0", "e") if float(f"{n:.0e}") == n else f"{n}"


def _quiet(fn):
    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    return run


def gda_cases(wid, scale):
    """W1 (pooled fit), W2 (per-class fit), W3 / W3b (per-class predict_proba),
    W4 (pooled predict_proba) against scikit-learn's LDA(lsqr) / QDA."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA
    from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as QDA

    import fastgen

    n, d = _n(wid, scale), SIZES[wid]["d"]
    X, y = common.make_data(n, d, K)
    dims = f"n={_fmt_n(n)} d={d} K={K}"
    if wid == "W1":
        yield Case(wid, f"W1 pooled fit {dims}", lambda: fastgen.fit_gda(X, y, "pooled"),
                   lambda: LDA(solver="lsqr").fit(X, y), "sklearn LDA(lsqr).fit", [X])
    elif wid == "W2":
        yield Case(wid, f"W2 per-class fit {dims}",
                   lambda: fastgen.fit_gda(X, y, "per_class"), lambda: QDA().fit(X, y),
                   "sklearn QDA.fit")
    elif wid in ("W3", "W3b"):
        p = fastgen.fit_gda(X, y, "per_class")
        q = QDA().fit(X, y)
        yield Case(wid, f"{wid} per-class predict_proba {dims}",
                   lambda: fastgen.predict_proba(p, X), lambda: q.predict_proba(X),
                   "sklearn QDA.predict_proba")
    elif wid == "W4":
        p = fastgen.fit_gda(X, y, "pooled")
        q = LDA(solver="lsqr").fit(X, y)
        yield Case(wid, f"W4 pooled predict_proba {dims}",
                   lambda: fastgen.predict_proba(p, X), lambda: q.predict_proba(X),
                   "sklearn LDA.predict_proba", [X])


def _nb_cases(wid, fit, sk_class, score, dims, X, y, read):
    """The two naive Bayes cases of workload ``wid``: ``fit(X, y)`` against
    ``sk_class().fit(X, y)``, then ``fastgen.<score>`` of that fit against the fitted
    estimator's ``<score>`` method (``score`` is "predict_proba" or "predict")."""
    import fastgen

    name = sk_class.__name__
    yield Case(wid, f"{wid} {name} fit {dims}", lambda: fit(X, y),
               lambda: sk_class().fit(X, y), f"sklearn {name}.fit", read)
    p = fit(X, y)
    est = sk_class().fit(X, y)
    fg_score, sk_score = getattr(fastgen, score), getattr(est, score)
    yield Case(wid, f"{wid} {name} {score} {dims}", lambda: fg_score(p, X),
               lambda: sk_score(X), f"sklearn {name}.{score}", read)


def w5_cases(scale):
    """W5: Gaussian naive Bayes fit and predict_proba (dense, memory bound)."""
    from sklearn.naive_bayes import GaussianNB

    import fastgen

    n, d = _n("W5", scale), SIZES["W5"]["d"]
    X, y = cnb.make_gaussian(n, d, K)
    dims = f"n={_fmt_n(n)} d={d} K={K}"
    yield from _nb_cases("W5", fastgen.fit_gaussian_nb, GaussianNB, "predict_proba", dims,
                         X, y, [X])


def w67_cases(wids, scale):
    """W6 (multinomial NB fit, predict_proba) and W7 (Bernoulli NB fit, predict) on one
    CSR count matrix; the floor reads its data, indices and indptr."""
    from sklearn.naive_bayes import BernoulliNB, MultinomialNB

    import fastgen

    s = SIZES["W6"]
    n = _n("W6", scale)
    Xs, y = cnb.make_counts(n, s["d"], s["K"], s["per_row"])
    arrays = [Xs.data, Xs.indices, Xs.indptr]
    dims = f"CSR n={_fmt_n(n)} d={_fmt_n(s['d'])} K={s['K']} nnz={Xs.nnz / 1e6:.2g}M"
    if "W6" in wids:
        yield from _nb_cases("W6", fastgen.fit_multinomial_nb, MultinomialNB,
                             "predict_proba", dims, Xs, y, arrays)
    if "W7" in wids:
        yield from _nb_cases("W7", fastgen.fit_bernoulli_nb, BernoulliNB, "predict", dims,
                             Xs, y, arrays)


def logistic_cases(wid, scale):
    """W8 (binary) and W9 (multinomial) logistic fit, l2 = 1, against scikit-learn's
    newton-cholesky at C = 1 and the same tolerance."""
    from sklearn.linear_model import LogisticRegression

    import fastgen

    n = _n(wid, scale)
    s = SIZES[wid]
    if wid == "W8":
        X, y = cl.binary_data(n, s["d"])
        label = f"W8 binary logistic fit n={_fmt_n(n)} d={s['d']}"
    else:
        X, y = cl.multinomial_data(n, s["d"], s["K"])
        label = f"W9 multinomial logistic fit n={_fmt_n(n)} d={s['d']} K={s['K']}"
    peer = _quiet(lambda: LogisticRegression(solver="newton-cholesky", C=1.0,
                                             tol=LOGISTIC_TOL, max_iter=100).fit(X, y))
    yield Case(wid, label, _quiet(lambda: fastgen.fit_logistic(X, y, l2=1.0,
                                                               tol=LOGISTIC_TOL)),
               peer, "sklearn LogisticRegression(newton-cholesky).fit")


def cases(wids, scale):
    """Every selected case, one data set at a time (each generator frees its data when
    it moves on)."""
    for wid in ("W1", "W2", "W3", "W3b", "W4"):
        if wid in wids:
            yield from gda_cases(wid, scale)
    if "W5" in wids:
        yield from w5_cases(scale)
    if "W6" in wids or "W7" in wids:
        yield from w67_cases(wids, scale)
    for wid in ("W8", "W9"):
        if wid in wids:
            yield from logistic_cases(wid, scale)


def measure(case, threads, repeats, progress=None):
    """Fill ``case.results`` for every thread count (interleaved medians)."""
    floor = read_floor(case.read) if case.read else None
    for t in threads:
        fns = [case.fastgen, case.peer] + ([floor] if floor else [])
        with thread_count(t):
            res = common.interleaved_medians(fns, repeats)
            pools = pools_now()
        case.results[t] = dict(zip(IMPLS, res))
        case.results[t]["pools"] = pools
        if progress:
            progress(case, t)


# ----------------------------------------------------------------------------- W10
IMPORT_AFTER_NUMPY = r"""
import json, time
import numpy
t0 = time.perf_counter()
import MODULE
print(json.dumps(time.perf_counter() - t0))
"""


#: What a process pays before its first call of any numba-compiled function runs, cached
#: or not: numba loads its typing and lowering registries on the first dispatch
#: (``BaseContext.refresh``), not at ``import numba``; loading them imports numba's
#: numpy implementations, whose BLAS check imports ``scipy.linalg.cython_blas`` and with
#: it the ``scipy.linalg`` package.
NUMBA_FIRST_DISPATCH = ("import numpy, numba\n"
                        "from numba.core.registry import cpu_target\n"
                        "cpu_target.target_context.refresh()")


def _import_seconds(module):
    _, out = common._run_python(IMPORT_AFTER_NUMPY.replace("MODULE", module))
    return json.loads(out.strip().splitlines()[-1])


def w10_split(repeats):
    """Import costs after numpy and fresh-process walls, alternated in one run.

    Returns a dict of medians (and every timing): ``import_numba``, ``import_fastgen``
    and ``import_scipy_linalg`` (each in a fresh interpreter, timed inside it after
    ``import numpy``), ``fresh_fastgen`` (wall of ``python -c`` that imports fastgen and
    runs a first ``fit_gda`` + ``predict_proba`` + ``predict`` on tiny data, numba cache
    already warm), ``fresh_numpy_numba`` (wall of ``python -c "import numpy, numba"``)
    and ``fresh_numba_dispatch`` (the same plus numba's first-dispatch set-up,
    :data:`NUMBA_FIRST_DISPATCH`: the floor of any process whose first call runs
    numba-compiled code).
    """
    script = common._script(("pooled",))
    probes = {
        "import_numba": lambda: _import_seconds("numba"),
        "import_fastgen": lambda: _import_seconds("fastgen"),
        "import_scipy_linalg": lambda: _import_seconds("scipy.linalg"),
        "fresh_fastgen": lambda: common._run_python(script)[0],
        "fresh_numpy_numba": lambda: common._run_python("import numpy, numba")[0],
        "fresh_numba_dispatch": lambda: common._run_python(NUMBA_FIRST_DISPATCH)[0],
    }
    for fn in probes.values():  # warm-up: fills the cache, pages the files in
        fn()
    times = {k: [] for k in probes}
    for _ in range(repeats):
        for k, fn in probes.items():
            times[k].append(fn())
    out = {k: {"median": statistics.median(v), "times": v} for k, v in times.items()}
    _, last = common._run_python(script)
    out["phases"] = json.loads(last.strip().splitlines()[-1])
    return out


# ----------------------------------------------------------------------------- output
def records(case_list):
    """CSV rows: workload label, threads, impl (fastgen | peer | floor), median s."""
    rows = []
    for c in case_list:
        for t, res in c.results.items():
            for impl in IMPLS:
                if impl in res:
                    rows.append({"workload": c.label, "threads": t, "impl": impl,
                                 "seconds": res[impl][0]})
    return rows


def w10_records(w10, threads_default):
    """W10 in the CSV's format: fastgen = the fastgen side, floor = the numba baseline
    (threads: the default numba pool of a fresh process)."""
    return [
        {"workload": "W10 import after numpy", "threads": threads_default,
         "impl": "fastgen", "seconds": w10["import_fastgen"]["median"]},
        {"workload": "W10 import after numpy", "threads": threads_default,
         "impl": "floor", "seconds": w10["import_numba"]["median"]},
        {"workload": "W10 fresh process", "threads": threads_default,
         "impl": "fastgen", "seconds": w10["fresh_fastgen"]["median"]},
        {"workload": "W10 fresh process", "threads": threads_default,
         "impl": "floor", "seconds": w10["fresh_numpy_numba"]["median"]},
        {"workload": "W10 fresh process vs numba's first dispatch",
         "threads": threads_default, "impl": "fastgen",
         "seconds": w10["fresh_fastgen"]["median"]},
        {"workload": "W10 fresh process vs numba's first dispatch",
         "threads": threads_default, "impl": "floor",
         "seconds": w10["fresh_numba_dispatch"]["median"]},
    ]


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["workload", "threads", "impl", "seconds"])
        w.writeheader()
        for r in rows:
            w.writerow({**r, "seconds": f"{r['seconds']:.6g}"})


def _s(v):
    return "—" if v is None else (f"{v:.3g}" if v >= 0.001 else f"{v * 1e3:.3g} ms")


def markdown(case_list, threads, w10, env_lines, scale, repeats, note=""):
    t0 = min(threads)
    out = list(env_lines)
    out.append(f"Threads: {', '.join(map(str, threads))} · scale {scale:g} (sizes × scale "
               f"of issue 16's) · medians of {repeats} interleaved repeats after one "
               f"untimed warm-up")
    if note:
        out += ["", note]
    out += ["", "Speed-up over the peer (strong-scaling factor of fastgen vs "
            f"{t0} thread{'s' if t0 > 1 else ''} in brackets; % of the read bandwidth "
            "where memory bound):", ""]
    out.append("| workload | peer | " + " | ".join(f"{t} thr" for t in threads) + " |")
    out.append("|---|---|" + "---:|" * len(threads))
    for c in case_list:
        base = c.results[t0]["fastgen"][0]
        cells = []
        for t in threads:
            r = c.results[t]
            cell = f"{r['peer'][0] / r['fastgen'][0]:.1f}× ({base / r['fastgen'][0]:.2f}×)"
            if "floor" in r:
                cell += f", {100 * r['floor'][0] / r['fastgen'][0]:.0f} % BW"
            cells.append(cell)
        out.append(f"| {c.label} | {c.peer_name} | " + " | ".join(cells) + " |")
    out += ["", "Every number:", ""]
    out.append("| workload | threads | fastgen s | peer s | speed-up vs peer | fastgen "
               "scaling | peer scaling | read floor s | read GB/s | % of read BW |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in case_list:
        fb, pb = c.results[t0]["fastgen"][0], c.results[t0]["peer"][0]
        for t in threads:
            r = c.results[t]
            f, p = r["fastgen"][0], r["peer"][0]
            fl = r["floor"][0] if "floor" in r else None
            gbs = f"{c.read_bytes / fl / 1e9:.1f}" if fl else "—"
            pct = f"{100 * fl / f:.0f} %" if fl else "—"
            out.append(f"| {c.label} | {t} | {_s(f)} | {_s(p)} | {p / f:.1f}× | "
                       f"{fb / f:.2f}× | {pb / p:.2f}× | {_s(fl)} | {gbs} | {pct} |")
    out += ["", "Speed-up vs peer = peer s / fastgen s at the same thread count; scaling = "
            f"seconds at {t0} thread(s) / seconds at t; read floor = one parallel pass "
            "summing X's 64-bit words at t threads (for CSR: data, indices and indptr), "
            "so % of read BW = floor s / fastgen s (fastgen reads X at least once). "
            "Workloads without a floor are compute bound (d = 64 or 128: Gram / GEMM "
            "work grows with d² per row)."]
    pools = {t: c.results[t]["pools"] for c in case_list[:1] for t in threads}
    if pools:
        out += ["", "Pools seen inside the limits (first workload): "
                + "; ".join(f"{t} thr: {', '.join(p)}" for t, p in pools.items())]
    if w10:
        m = {k: v["median"] for k, v in w10.items() if isinstance(v, dict) and "median" in v}
        ph = w10["phases"]
        fp = ph["fit_predict"]["pooled"]
        out += ["", "W10, fresh interpreters alternated in this run (medians of "
                f"{len(w10['import_numba']['times'])}):", ""]
        out.append("| measure | seconds | target |")
        out.append("|---|---:|---|")
        out.append(f"| `import numba` after numpy | {m['import_numba']:.3f} | |")
        out.append(f"| `import fastgen` after numpy | {m['import_fastgen']:.3f} | |")
        out.append(f"| difference (fastgen − numba) | "
                   f"{m['import_fastgen'] - m['import_numba']:.3f} | ≤ 0.15 |")
        out.append(f"| `import scipy.linalg` after numpy (for reference) | "
                   f"{m['import_scipy_linalg']:.3f} | |")
        out.append(f"| fresh process: import fastgen + first fit_gda + predict (warm "
                   f"cache), wall | {m['fresh_fastgen']:.3f} | |")
        out.append(f"| `python -c \"import numpy, numba\"`, wall | "
                   f"{m['fresh_numpy_numba']:.3f} | |")
        out.append(f"| difference | {m['fresh_fastgen'] - m['fresh_numpy_numba']:.3f} | "
                   f"≤ 0.4 |")
        out.append(f"| floor: `import numpy, numba` + numba's first-dispatch set-up "
                   f"(registries, which import scipy.linalg), wall | "
                   f"{m['fresh_numba_dispatch']:.3f} | |")
        out.append(f"| fresh process − that floor (fastgen's own first-call cost) | "
                   f"{m['fresh_fastgen'] - m['fresh_numba_dispatch']:.3f} | |")
        out += ["", f"Inside the fresh fastgen process (last run): import numpy "
                f"{ph['import_numpy']:.3f} s, import fastgen {ph['import_fastgen']:.3f} s, "
                f"first fit {fp[0]:.3f} s, first predict_proba + predict {fp[1]:.3f} s."]
    return "\n".join(out)


def run(wids, threads, scale, repeats, progress=None):
    """Measure the selected workloads at every thread count; return the cases (with
    their results) and the W10 dict (None when W10 is not selected)."""
    check_threads(threads)
    read_floor([np.zeros(8)])()  # compile the floor kernel, start numba's pool
    done = []
    for c in cases(wids, scale):
        measure(c, threads, repeats, progress)
        c.drop_data()
        done.append(c)
    w10 = w10_split(repeats) if "W10" in wids else None
    return done, w10


def _progress(case, t):
    r = case.results[t]
    fl = f", floor {r['floor'][0]:.4g}" if "floor" in r else ""
    print(f"# {case.label} @ {t} thr: fastgen {r['fastgen'][0]:.4g} s, peer "
          f"{r['peer'][0]:.4g} s{fl}", file=sys.stderr, flush=True)


def main_threads(args, env_lines_fn):
    """``compare.py --threads`` entry point (``args`` from compare.py's parser)."""
    threads = sorted({int(t) for t in args.threads.split(",") if t.strip()})
    wanted = [w.strip() for w in (args.workloads or "").split(",") if w.strip()]
    known = {w.lower(): w for w in WORKLOAD_IDS}
    unknown = [w for w in wanted if w.lower() not in known]
    if unknown:
        raise SystemExit(f"unknown workload(s) {unknown}; choose from {list(WORKLOAD_IDS)}")
    wids = [known[w.lower()] for w in wanted] if wanted else list(WORKLOAD_IDS)
    import fastgen  # noqa: F401  (imported before anything is timed)

    t_start = time.perf_counter()
    done, w10 = run(wids, threads, args.scale, args.repeats, _progress)
    md = markdown(done, threads, w10, env_lines_fn(), args.scale, args.repeats,
                  args.note or "")
    print(md)
    print(f"\n(total {time.perf_counter() - t_start:.0f} s)", file=sys.stderr)
    if args.out:
        import numba

        rows = records(done)
        if w10:
            rows += w10_records(w10, numba.config.NUMBA_NUM_THREADS)
        write_csv(args.out, rows)
        md_path = args.out[:-4] + ".md" if args.out.endswith(".csv") else args.out + ".md"
        with open(md_path, "w") as f:
            f.write(md + "\n")
    return 0
