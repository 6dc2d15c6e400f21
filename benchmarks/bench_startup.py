"""First-call latency in a fresh interpreter (W10), per model family, cold and warm.

As an asv suite: each ``track_`` runs ``python -c "import fastgen; fit_gda + predict on
tiny data"`` in a subprocess and returns its wall seconds: with the numba cache as it is
(warm; one untimed run fills it first), and with an empty cache (the package copied to a
temporary directory and NUMBA_CACHE_DIR pointed at an empty one), which is the compile
time a new installation pays once.

As a script, the cold-start table of every public model family::

    python -m benchmarks.bench_startup [--families gda_pooled,logistic] [--repeats 3]
                                       [--baseline /tmp/base] [--tree TREE]
                                       [--json out.json]

Each row runs the family's public calls on tiny data (500 × 5, CSR 500 × 50 for the
count models) in a fresh process: first with an empty cache (cold: what a new
installation, a container or a CI runner pays), then again on the cache that run filled
(warm).  The package is copied (without any ``__pycache__``) to a temporary directory
that goes first on PYTHONPATH, and NUMBA_CACHE_DIR points at an empty directory: numba
0.68 tries NUMBA_CACHE_DIR first, then ``__pycache__`` beside the source, then the user
cache directory, so the copy only makes sure no stale file of the source tree is read.
With ``--baseline TREE`` (a checkout holding ``fastgen/``, e.g. ``git worktree add
/tmp/base <commit>``) the baseline and this tree run alternately, family by family,
their order swapped each repeat; the table gives medians.

Every run records numba's compile events (``numba.core.event``, kind
``"numba:compile"``: one per dispatcher and signature compiled, never for a cache hit),
so the table also says how many kernels compiled, how long, and which dominate: a
kernel's own time is its compile minus the fastgen kernels compiled inside it (numba's
own overloads compiled inside it are counted as its time).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:  # run as ``python -m benchmarks.bench_startup`` or by asv
    from ._common import cold_startup_probe, startup_probe
except ImportError:  # pragma: no cover - run as a plain script
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import cold_startup_probe, startup_probe


class Startup:
    timeout = 600
    number = 1
    repeat = 1

    def track_first_call_warm_cache(self):
        return startup_probe(("pooled",), repeats=3)[0]

    track_first_call_warm_cache.unit = "seconds"

    def track_first_call_warm_cache_per_class(self):
        return startup_probe(("per_class",), repeats=3)[0]

    track_first_call_warm_cache_per_class.unit = "seconds"

    def track_python_numpy_scipy_import(self):
        return startup_probe(("pooled",), repeats=3)[3]

    track_python_numpy_scipy_import.unit = "seconds"

    def track_first_call_cold_cache(self):
        r = cold_startup_probe(("pooled", "per_class"))
        if not r["really_cold"]:
            raise RuntimeError(f"the cold-cache run was not cold: {r}")
        return r["cold_wall_s"]

    track_first_call_cold_cache.unit = "seconds"


# ------------------------------------------------------------------ the family table

#: Family -> its public calls, as steps (name, code).  Only public names that the
#: baseline has too.  Data: see ``_FAMILY_DATA``.
FAMILIES = {
    "gda_pooled": [("fit", "p = fg.fit_gda(X, y3, 'pooled')"),
                   ("predict_proba", "fg.predict_proba(p, X)")],
    "gda_per_class": [("fit", "p = fg.fit_gda(X, y3, 'per_class')"),
                      ("predict_proba", "fg.predict_proba(p, X)")],
    "gaussian_nb": [("fit", "p = fg.fit_gaussian_nb(X, y3)"),
                    ("predict_proba", "fg.predict_proba(p, X)")],
    "bernoulli_nb": [("fit", "p = fg.fit_bernoulli_nb(C, y3)"),
                     ("predict_proba", "fg.predict_proba(p, C)")],
    "multinomial_nb": [("fit", "p = fg.fit_multinomial_nb(C, y3)"),
                       ("predict_proba", "fg.predict_proba(p, C)")],
    "complement_nb": [("fit", "p = fg.fit_complement_nb(C, y3)"),
                      ("predict_proba", "fg.predict_proba(p, C)")],
    "categorical_nb": [("fit", "p = fg.fit_categorical_nb(Q, y3)"),
                       ("predict_proba", "fg.predict_proba(p, Q)")],
    "logistic": [("fit", "p = fg.fit_logistic(X, y2)"),
                 ("inference", "fg.logistic_inference(p, X, y2)")],
    "firth": [("fit", "p = fg.fit_logistic(X, y2, penalty='firth')"),
              ("inference", "fg.logistic_inference(p, X, y2)")],
    "predict_float32": [("fit", "p = fg.fit_gda(X32, y3, 'pooled')"),
                        ("predict", "fg.predict(p, X32)")],
}

#: Further first calls for ``--after-compile``: other shapes, dtypes and options than the
#: table's rows, which ``fastgen compile`` must have covered too.
MORE_CALLS = {
    "mixed_float32": [
        ("gnb", "p = fg.fit_gaussian_nb(X32, y3); fg.predict_log_proba(p, X32)"),
        ("qda", "p = fg.fit_gda(X32, y3, 'per_class', reg=0.1); fg.predict(p, X32)"),
        ("lda_lw", "p = fg.fit_gda(X32, y3, shrinkage='ledoit-wolf'); fg.predict(p, X32)"),
        ("logistic", "p = fg.fit_logistic(X32, y2); fg.logistic_inference(p, X32, y2)"),
        ("multinomial", "p = fg.fit_logistic(X32, y3); fg.predict_proba(p, X32)"),
        ("mnb_csr", "C32 = C.astype(np.float32); p = fg.fit_multinomial_nb(C32, y3); "
                    "fg.predict(p, C32)"),
    ],
    "mixed_float64": [
        ("wide_gda", "Xw = rng.standard_normal((n, 40)) + y3[:, None]; "
                     "p = fg.fit_gda(Xw, y3); "
                     "fg.predict_proba(p, Xw); fg.lda_transform(p, Xw)"),
        ("gnb_by4", "y5 = np.arange(n) % 5; Xw = rng.standard_normal((n, 20)) + y5[:, None]; "
                    "p = fg.fit_gaussian_nb(Xw, y5); fg.predict_proba(p, Xw)"),
        ("multinomial", "p = fg.fit_logistic(X, y3); "
                        "fg.logistic_inference(p, X, y3, cov_type='HC1')"),
        ("csr_int64", "C64 = C.copy(); C64.indices = C64.indices.astype(np.int64); "
                      "C64.indptr = C64.indptr.astype(np.int64); "
                      "p = fg.fit_bernoulli_nb(C64, y3); fg.predict_proba(p, C64)"),
        ("logistic_csr", "p = fg.fit_logistic(C, y2, l2=1.0); fg.predict_proba(p, C)"),
        ("weighted", "w = np.linspace(0.5, 2, n); p = fg.fit_gda(X, y3, 'diagonal', "
                     "sample_weight=w); fg.joint_log_likelihood(p, X)"),
        ("labels", "p = fg.fit_gda(X, y3.astype(np.int32)); "
                   "fg.fit_gaussian_nb(X, y2.astype(bool))"),
    ],
}

_FAMILY_DATA = r"""
rng = np.random.default_rng(0)
n, d = 500, 5
y3 = np.arange(n) % 3
X = rng.standard_normal((n, d)) + y3[:, None]
X32 = X.astype(np.float32)
y2 = (X[:, 0] + rng.standard_normal(n) > 1.0).astype(np.int64)
C = sp.random(n, 50, density=0.1, format="csr", random_state=0)
C.data = np.floor(C.data * 5.0) + 1.0
Q = sp.csr_matrix(rng.integers(0, 4, size=(n, 8)).astype(np.float64))
"""

# One fresh process: import, the steps of one family, every compile event recorded.
_FAMILY_SCRIPT = r"""
import time
t_start = time.perf_counter()
import json, os, sys
import numpy as np, scipy.sparse as sp
t_np = time.perf_counter()
import fastgen as fg
t_imp = time.perf_counter()
DATA

class Recorder:
    # One entry per compiled (dispatcher, signature); "own" excludes the fastgen
    # kernels compiled inside it.  Registered for numba's compile events as soon as
    # numba is imported (by the hook below), not before: importing numba here would
    # time it in processes that never need it.
    def __init__(self):
        self.stack, self.done, self.step = [], [], None
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        self.stack.append([f.__module__, f.__qualname__, str(ev.data["args"]),
                           time.perf_counter(), 0.0])
    def on_end(self, ev):
        mod, name, args, t0, inner = self.stack.pop()
        dt = time.perf_counter() - t0
        ours = mod.startswith("fastgen")
        if ours and self.stack:
            self.stack[-1][4] += dt
        self.done.append({"module": mod, "kernel": name, "args": args, "s": dt,
                          "own_s": dt - inner, "fastgen": ours,
                          "depth": len(self.stack), "step": self.step})

rec = Recorder()


def _listen():
    from numba.core import event

    listener = type("Listener", (event.Listener,), {
        "on_start": lambda self, ev: rec.on_start(ev),
        "on_end": lambda self, ev: rec.on_end(ev)})()
    event.register("numba:compile", listener)


class _AfterNumba:
    # meta path hook: runs _listen() once numba's own import has finished
    def find_spec(self, name, path=None, target=None):
        if name != "numba":
            return None
        import importlib.machinery
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None:
            return None
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            sys.meta_path.remove(hook)
            _listen()

        spec.loader.exec_module = exec_module
        return spec


if "numba" in sys.modules:
    _listen()
else:
    hook = _AfterNumba()
    sys.meta_path.insert(0, hook)
steps = {}
for name, code in STEPS:
    rec.step = name
    a = time.perf_counter()
    exec(code)
    steps[name] = time.perf_counter() - a
t_end = time.perf_counter()
numba = sys.modules.get("numba")
print(json.dumps({"import_numpy": t_np - t_start, "import_fastgen": t_imp - t_np,
                  "steps": steps, "in_process_s": t_end - t_start,
                  "cpu_s": time.process_time(),
                  "compiles": rec.done, "fastgen_file": fg.__file__,
                  "numba_imported": numba is not None,
                  "numba_cache_dir": numba.config.CACHE_DIR if numba else None}))
"""


# scikit-learn's side of the table: a fresh process importing scikit-learn and fitting
# and scoring LDA and LogisticRegression on the same data (the same rows as the table's
# families), the cold first use the targets compare with.
_SKLEARN_SCRIPT = r"""
import time
t_start = time.perf_counter()
import json
import numpy as np, scipy.sparse as sp
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression
t_imp = time.perf_counter()
DATA
a = time.perf_counter()
lda = LinearDiscriminantAnalysis().fit(X, y3)
lda.predict_proba(X)
b = time.perf_counter()
lr = LogisticRegression().fit(X, y2)
lr.predict_proba(X)
c = time.perf_counter()
print(json.dumps({"import_fastgen": t_imp - t_start, "compiles": [],
                  "steps": {"lda": b - a, "logistic": c - b},
                  "in_process_s": c - t_start, "cpu_s": time.process_time()}))
"""


def sklearn_probe(runs=2):
    """scikit-learn's LDA + LogisticRegression script in fresh processes (its import
    time as ``import_fastgen``, the table's column): the first run (cold: a first use
    after installation, modules compiled to bytecode already) and the later ones; each
    with the 1-minute load before."""
    code = _SKLEARN_SCRIPT.replace("DATA", _FAMILY_DATA)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = []
    for _ in range(runs):
        load = os.getloadavg()[0]
        r = _run(code, env, tempfile.gettempdir())
        r["load"] = load
        out.append(r)
    return {"cold": out[0], "warm": out[1:]}


def family_script(family):
    """The probe's source for ``family`` (a key of :data:`FAMILIES` or
    :data:`MORE_CALLS`)."""
    steps = FAMILIES[family] if family in FAMILIES else MORE_CALLS[family]
    return _FAMILY_SCRIPT.replace("DATA", _FAMILY_DATA).replace("STEPS", repr(steps))


def _run(code, env, cwd, timeout=900):
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"probe failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_s"] = wall
    out["stderr"] = proc.stderr
    return out


def probe_family(tree, family, *, warm_runs=1):
    """Cold run (empty cache, fresh copy of ``tree``'s package), then ``warm_runs`` runs
    on the cache it filled.  Returns {"cold": run, "warm": [runs]}; each run is the
    probe's dict plus ``wall_s`` (the process's wall time) and ``load`` (1-minute load
    average just before)."""
    tmp = Path(tempfile.mkdtemp(prefix="fastgen-family-"))
    try:
        pkg = tmp / "pkg"
        shutil.copytree(Path(tree) / "fastgen", pkg / "fastgen",
                        ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc",
                                                      "*.pyc"))
        cache = tmp / "numba-cache"
        cache.mkdir()
        env = {k: v for k, v in os.environ.items()
               if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "FASTGEN_LOG_LEVEL",
                            "FASTGEN_QUIET")}
        env.update(PYTHONPATH=str(pkg), NUMBA_CACHE_DIR=str(cache))
        code = family_script(family)
        runs = []
        for _ in range(1 + warm_runs):
            load = os.getloadavg()[0]
            r = _run(code, env, str(tmp))
            r["load"] = load
            if not Path(r["fastgen_file"]).resolve().is_relative_to(pkg):
                raise RuntimeError(f"the probe imported {r['fastgen_file']}, not the copy")
            runs.append(r)
        if runs[0]["compiles"] and not any(cache.rglob("*.nbi")):
            # the cache it compiled into is not the one given: not a cold-cache run
            raise RuntimeError("the cold run compiled but wrote no cache index")
        return {"cold": runs[0], "warm": runs[1:]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def kernel_table(run, top=5):
    """The fastgen kernels compiled in ``run``, by own compile seconds (summed over
    their signatures): list of (kernel, own seconds, number of signatures)."""
    agg = {}
    for c in run["compiles"]:
        if not c["fastgen"]:
            continue
        key = f"{c['module'].rsplit('.', 1)[-1]}.{c['kernel']}"
        s, k = agg.get(key, (0.0, 0))
        agg[key] = (s + c["own_s"], k + 1)
    rows = sorted(((k, s, m) for k, (s, m) in agg.items()), key=lambda r: -r[1])
    return rows[:top] if top else rows


def compile_seconds(run):
    """Seconds inside top-level compile events, and the number of fastgen signatures
    compiled."""
    total = sum(c["s"] for c in run["compiles"] if c["depth"] == 0)
    return total, sum(1 for c in run["compiles"] if c["fastgen"])


def run_table(families, repeats=3, baseline=None, tree=None, log=print, dump=None):
    """Probe every family ``repeats`` times (trees alternating); returns the raw runs:
    {tree label: {family: [probe_family results]}}, also written to the path ``dump``
    after every probe when given."""
    here = Path(tree or Path(__file__).resolve().parent.parent)
    trees = [("this", here)] + ([("baseline", Path(baseline))] if baseline else [])
    raw = {label: {f: [] for f in families} for label, _ in trees}
    raw["scikit-learn"] = {"lda_logistic": []}
    for rep in range(repeats):
        order = trees if rep % 2 == 0 else trees[::-1]
        r = sklearn_probe()
        raw["scikit-learn"]["lda_logistic"].append(r)
        log(f"[{rep + 1}/{repeats}] scikit-learn LDA + LogisticRegression cold "
            f"{r['cold']['wall_s']:6.2f} s  warm {r['warm'][0]['wall_s']:5.2f} s  load "
            f"{r['cold']['load']:.1f}")
        for family in families:
            for label, path in order:
                r = probe_family(path, family)
                raw[label][family].append(r)
                if dump:
                    Path(dump).write_text(json.dumps(raw))
                cs, nk = compile_seconds(r["cold"])
                log(f"[{rep + 1}/{repeats}] {family:<16} {label:<8} cold "
                    f"{r['cold']['wall_s']:6.2f} s (compile {cs:5.2f} s, {nk} "
                    f"signatures)  warm {r['warm'][0]['wall_s']:5.2f} s  load "
                    f"{r['cold']['load']:.1f}")
    return raw


def summarise(raw):
    """Medians per tree and family: rows of dicts (cold and warm wall, the cold run's
    steps, compile seconds, signatures, warm compiles, top kernels)."""
    rows = []
    for label, fams in raw.items():
        for family, runs in fams.items():
            if not runs:
                continue
            colds = [r["cold"] for r in runs]
            warms = [w for r in runs for w in r["warm"]]
            med = statistics.median
            steps = {k: med(c["steps"][k] for c in colds) for k in colds[0]["steps"]}
            agg = {}
            for c in colds:
                for k, s, m in kernel_table(c, top=0):
                    agg.setdefault(k, []).append((s, m))
            top = sorted(((k, med(s for s, _ in v), v[0][1]) for k, v in agg.items()),
                         key=lambda r: -r[1])[:5]
            rows.append({
                "tree": label, "family": family, "n": len(runs),
                "cold_s": med(c["wall_s"] for c in colds),
                # CPU seconds of the process: less sensitive to a loaded machine
                "cold_cpu_s": (med(c["cpu_s"] for c in colds)
                               if all("cpu_s" in c for c in colds) else None),
                "warm_s": med(w["wall_s"] for w in warms),
                "warm_cpu_s": (med(w["cpu_s"] for w in warms)
                               if all("cpu_s" in w for w in warms) else None),
                "cold_steps": steps,
                "compile_s": med(compile_seconds(c)[0] for c in colds),
                "signatures": med(compile_seconds(c)[1] for c in colds),
                "warm_compiles": max(compile_seconds(w)[1] for w in warms),
                # whether a warm process imported numba (None: not recorded)
                "numba": (any(w["numba_imported"] for w in warms)
                          if all("numba_imported" in w for w in warms) else None),
                "import_s": med(c["import_fastgen"] for c in colds),
                "load": [c["load"] for c in colds],
                "top": top,
            })
    return rows


def format_table(rows):
    """A markdown table of :func:`summarise`'s rows, then the top kernels per family."""
    out = ["| family | tree | cold s (steps) | cold CPU s | warm s | warm CPU s | "
           "compile s | signatures | warm compiles | numba imported |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        steps = ", ".join(f"{k} {v:.1f}" for k, v in r["cold_steps"].items())
        cpu = "" if r["cold_cpu_s"] is None else f"{r['cold_cpu_s']:.2f}"
        wcpu = "" if r.get("warm_cpu_s") is None else f"{r['warm_cpu_s']:.2f}"
        numba = {None: "", True: "yes", False: "no"}[r.get("numba")]
        out.append(f"| {r['family']} | {r['tree']} | {r['cold_s']:.2f} ({steps}) | {cpu} | "
                   f"{r['warm_s']:.2f} | {wcpu} | {r['compile_s']:.1f} | "
                   f"{r['signatures']:g} | {r['warm_compiles']} | {numba} |")
    out.append("")
    for r in rows:
        tops = "; ".join(f"{k} {s:.1f} s" + (f" ×{m}" if m > 1 else "")
                         for k, s, m in r["top"])
        out.append(f"- {r['family']} ({r['tree']}): {tops}")
    return "\n".join(out)


def target_line(rows):
    """The cold-start target (the larger of 2 s and 1.5× scikit-learn's cold LDA +
    LogisticRegression script, same run) and the rows of this tree above it."""
    sk = [r["cold_s"] for r in rows if r["tree"] == "scikit-learn"]
    if not sk:
        return "no scikit-learn row"
    target = max(2.0, 1.5 * sk[0])
    ours = [r for r in rows if r["tree"] == "this"]
    over = [f"{r['family']} {r['cold_s']:.2f} s" for r in ours if r["cold_s"] > target]
    slow = [f"{r['family']} {r['warm_s']:.2f} s" for r in ours if r["warm_s"] > 1.0]
    return (f"target: cold ≤ {target:.2f} s (max of 2 s and 1.5 × scikit-learn's "
            f"{sk[0]:.2f} s); warm ≤ 1.0 s; over the cold target: {over or 'none'}; "
            f"over the warm target: {slow or 'none'}")


def after_compile(tree=None, jobs=None, log=print):
    """``fastgen compile`` (every family and dtype) into an empty cache, then every
    family of :data:`FAMILIES` and :data:`MORE_CALLS` in a fresh process on that cache.

    Returns {"compile_wall_s", "compile_stdout", "runs": {family: probe dict}}; a run
    whose ``compiles`` is not empty found a kernel ``fastgen compile`` missed.
    """
    here = Path(tree or Path(__file__).resolve().parent.parent)
    tmp = Path(tempfile.mkdtemp(prefix="fastgen-after-compile-"))
    try:
        pkg = tmp / "pkg"
        shutil.copytree(here / "fastgen", pkg / "fastgen",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        cache = tmp / "numba-cache"
        cache.mkdir()
        env = {k: v for k, v in os.environ.items()
               if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
        env.update(PYTHONPATH=str(pkg), NUMBA_CACHE_DIR=str(cache))
        cmd = [sys.executable, "-m", "fastgen", "compile", "--no-progress"]
        if jobs:
            cmd += ["--jobs", str(jobs)]
        t0 = time.perf_counter()
        res = subprocess.run(cmd, env=env, cwd=str(tmp), capture_output=True, text=True,
                             timeout=3600)
        wall = time.perf_counter() - t0
        if res.returncode != 0:
            raise RuntimeError(f"fastgen compile failed:\n{res.stderr[-4000:]}")
        log(f"fastgen compile: {wall:.0f} s\n{res.stdout}")
        runs = {}
        # the kernels' path for the tiny data too (they would take the numpy passes)
        env_kernels = dict(env, FASTGEN_SMALL_VALUES="0")
        for family in [*FAMILIES, *MORE_CALLS]:
            r = _run(family_script(family), env_kernels, str(tmp))
            runs[family] = r
            log(f"{family:<16} {r['wall_s']:5.2f} s, compiled: "
                f"{[c['kernel'] for c in r['compiles'] if c['fastgen']]}")
        return {"compile_wall_s": wall, "compile_stdout": res.stdout, "runs": runs}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Cold- and warm-cache first use of "
                                     "every fastgen model family in fresh processes.")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help="comma-separated, from: " + ", ".join(FAMILIES))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", metavar="TREE",
                        help="a checkout holding fastgen/ to run alternately")
    parser.add_argument("--tree", metavar="TREE",
                        help="the checkout to measure (default: the one holding this file)")
    parser.add_argument("--json", metavar="PATH", help="write the raw runs here")
    parser.add_argument("--after-compile", action="store_true",
                        help="instead: run 'fastgen compile' into an empty cache, then "
                             "check that every family's first calls compile nothing")
    parser.add_argument("--jobs", type=int, help="--after-compile: fastgen compile --jobs")
    args = parser.parse_args(argv)
    if args.after_compile:
        out = after_compile(tree=args.tree, jobs=args.jobs,
                            log=lambda s: print(s, file=sys.stderr, flush=True))
        if args.json:
            Path(args.json).write_text(json.dumps(out))
        missed = {f: [c["kernel"] for c in r["compiles"] if c["fastgen"]]
                  for f, r in out["runs"].items()}
        print(json.dumps({f: k for f, k in missed.items() if k} or "nothing compiled"))
        return
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = set(families) - set(FAMILIES)
    if unknown:
        parser.error(f"unknown families {sorted(unknown)}")
    t0 = time.perf_counter()
    load0 = os.getloadavg()
    raw = run_table(families, args.repeats, args.baseline, tree=args.tree,
                    log=lambda s: print(s, file=sys.stderr, flush=True), dump=args.json)
    rows = summarise(raw)
    print(format_table(rows))
    print("\n" + target_line(rows))
    print(f"\n{os.cpu_count()} cores; load average before {load0[0]:.1f}/{load0[1]:.1f}/"
          f"{load0[2]:.1f}, after {'/'.join(f'{v:.1f}' for v in os.getloadavg())}; "
          f"{time.perf_counter() - t0:.0f} s in all")


if __name__ == "__main__":
    main()
