"""fastgen against scikit-learn and against floor references, side by side, in one run.

Every workload builds its data once (seeded), then times fastgen, the peer
(scikit-learn) and a floor reference (the BLAS operation the computation cannot beat)
on the same arrays in this one process: one untimed warm-up call each (so JIT
compilation and cache loading are excluded), then ``--repeats`` (≥ 5) timed rounds that
alternate fastgen, peer and floor (so load from other processes on a shared machine
hits all three alike); the table shows medians, the JSON every timing.
The workloads and targets are those of the design card (§6) and issue 3.

Usage::

    python benchmarks/compare.py                  # all workloads, full sizes
    python benchmarks/compare.py --quick          # sizes / 10, for a smoke run
    python benchmarks/compare.py --only W1,W3b    # a subset (ids as in the table)
    python benchmarks/compare.py --only W4,W7,W15 # companions run only the ids named
    python benchmarks/compare.py --json out.json  # also write the raw numbers

    # strong scaling: every workload W1-W9 and the W10 import split, per thread count
    python benchmarks/compare.py --threads 1,2,4,8,16 --out results/scaling.csv
    python benchmarks/compare.py --threads 1,4 --workloads W1,W5 --scale 0.1
    python benchmarks/plot_scaling.py results/scaling.csv   # -> results/scaling.png

Without ``--threads`` the report is the default table below (the main table of
``docs/performance.rst``); with it, ``scaling.py`` measures each workload at each thread
count (numba's ``set_num_threads`` and threadpoolctl's ``threadpool_limits`` for every
BLAS/OpenMP pool, fastgen and scikit-learn alike) with a memory floor (a parallel read of X) for the
memory-bound ones, and writes a markdown table and a CSV (workload,threads,impl,seconds).

Row format
----------
Every workload (here and in the optional companion modules ``compare_nb.py``,
``compare_logistic.py`` and ``compare_inference.py`` (W13-W15), each exposing
``run(repeats: int, quick: bool) -> list[dict]``, and, to be run in part by ``--only``,
a tuple ``WORKLOADS`` of the ids that ``run(..., only=ids)`` accepts)
reports rows as dicts with these keys:

``workload`` : str
    Starts with the workload id (``"W1"``, ``"W3b"``, ...), then a short description
    with the sizes, e.g. ``"W1 pooled fit n=1e6 d=16 K=10"``.
``fastgen_s`` : float
    fastgen's median seconds (or the measured value in ``unit``, see below).
``peer`` : str or None
    What fastgen is compared with, e.g. ``"sklearn LDA(lsqr).fit"``.
``peer_s`` : float or None
    The peer's median seconds on the same data.
``floor_s`` : float or None
    Seconds of the floor reference (the table shows fastgen_s / floor_s).
``target`` : str
    The target in words, e.g. ``"≥10× sklearn, ≤1.5× floor"``.
``met`` : bool or None
    Whether the target is met in this run (None: nothing to judge, report only).
``note`` : str
    What the floor is, how it was measured, anything a reader needs.

Optional keys: ``unit`` (default ``"s"``; e.g. ``"% of X"`` for memory rows, which then
hold that unit in ``fastgen_s`` / ``peer_s`` / ``floor_s``), ``floor`` (a short name
of the floor reference), ``fastgen_times`` / ``peer_times`` / ``floor_times`` (every
timed repeat) and ``extra`` (a dict of raw numbers for the JSON file).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import platform
import sys
import time

import numpy as np

try:  # run as a script (python benchmarks/compare.py) or imported as benchmarks.compare
    from . import _common as common
    from . import scaling
except ImportError:
    import _common as common
    import scaling

make_data = common.make_data
interleaved = common.interleaved_medians

WORKLOAD_IDS = ("W1", "W2", "W3", "W3b", "W4", "W10", "W11")
EXTRA_MODULES = ("compare_nb", "compare_logistic", "compare_inference")
SCALING_IDS = scaling.WORKLOAD_IDS
REQUIRED_KEYS = frozenset({"workload", "fastgen_s", "peer", "peer_s", "floor_s", "target",
                           "met", "note"})
K = 10


def _sz(n, quick):
    return max(n // 10, 1000) if quick else n


def _fmt_n(n):
    if n >= 1000 and n % 1000 == 0:
        m = f"{n:.0e}".replace("e+0", "e")
        return m if float(m) == n else f"{n // 1000}k"
    return str(n)


def _row(workload, fg, peer, pr, fl, target, met, note, **extra):
    row = {
        "workload": workload,
        "fastgen_s": fg[0] if isinstance(fg, tuple) else fg,
        "peer": peer,
        "peer_s": pr[0] if isinstance(pr, tuple) else pr,
        "floor_s": fl[0] if isinstance(fl, tuple) else fl,
        "target": target,
        "met": met,
        "note": note,
    }
    for key, v in (("fastgen_times", fg), ("peer_times", pr), ("floor_times", fl)):
        if isinstance(v, tuple):
            row[key] = v[1]
    row.update(extra)
    return row


def _ratio(a, b):
    return a / b if (a is not None and b) else None


# ----------------------------------------------------------------------------- W1, W2
def w1(repeats, quick):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA

    import fastgen

    n, d = _sz(1_000_000, quick), 16
    X, y = make_data(n, d, K)
    fg, pr, fl = interleaved([lambda: fastgen.fit_gda(X, y, "pooled"),
                              lambda: LDA(solver="lsqr").fit(X, y),
                              lambda: X.T @ X], repeats)
    met = _ratio(pr[0], fg[0]) >= 10 and _ratio(fg[0], fl[0]) <= 1.5
    return [_row(f"W1 pooled fit n={_fmt_n(n)} d={d} K={K}", fg, "sklearn LDA(lsqr).fit", pr,
                 fl, "≥10× sklearn, ≤1.5× floor", met,
                 "floor: numpy X.T @ X (SYRK)", floor="X.T@X")]


def w2(repeats, quick):
    from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as QDA

    import fastgen

    n, d = _sz(200_000, quick), 128
    X, y = make_data(n, d, K)
    fg, pr, fl = interleaved([lambda: fastgen.fit_gda(X, y, "per_class"),
                              lambda: QDA().fit(X, y),
                              lambda: X.T @ X], repeats)
    met = _ratio(pr[0], fg[0]) >= 10 and _ratio(fg[0], fl[0]) <= 2.0
    return [_row(f"W2 per_class fit n={_fmt_n(n)} d={d} K={K}", fg, "sklearn QDA().fit", pr,
                 fl, "≥10× sklearn, ≤2× floor", met,
                 "floor: numpy X.T @ X (SYRK)", floor="X.T@X")]


# ----------------------------------------------------------------------------- W3, W3b
def _w3(wid, n, d, repeats, target_speedup):
    from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as QDA

    import fastgen

    X, y = make_data(n, d, K)
    params = fastgen.fit_gda(X, y, "per_class")
    qda = QDA().fit(X, y)
    # GEMM rate on a square product of the same shape class: (n, d) @ (d, d)
    B = np.ascontiguousarray(np.linalg.cholesky(np.cov(X[: min(n, 10 * d)].T)).T)
    fg, pr, gemm = interleaved([lambda: fastgen.predict_proba(params, X),
                                lambda: qda.predict_proba(X),
                                lambda: X @ B], repeats)
    rate = 2.0 * n * d * d / gemm[0]
    floor = K * n * d * d / rate  # = K · t_gemm / 2
    speed = _ratio(pr[0], fg[0])
    met = speed >= target_speedup
    return [_row(
        f"{wid} per_class predict_proba n={_fmt_n(n)} d={d} K={K}", fg,
        "sklearn QDA.predict_proba", pr, floor,
        f"≥{target_speedup:g}× sklearn" + (" (aim ≤1.2× floor)" if wid == "W3" else ""),
        met,
        f"floor = K·n·d² flops / R, R = 2·n·d²/t((n,d)@(d,d)) = {rate / 1e9:.1f} GFLOP/s "
        f"measured in this run (t = {gemm[0]:.4f} s)",
        floor="K·n·d²/R", extra={"gemm_s": gemm[0], "gemm_times": gemm[1],
                                 "gemm_gflops": rate / 1e9},
    )]


def w3(repeats, quick):
    return _w3("W3", _sz(200_000, quick), 128, repeats, 2)


def w3b(repeats, quick):
    return _w3("W3b", _sz(1_000_000, quick), 16, repeats, 8)


# ----------------------------------------------------------------------------- W4
def w4(repeats, quick):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA

    import fastgen

    n, d = _sz(1_000_000, quick), 16
    X, y = make_data(n, d, K)
    params = fastgen.fit_gda(X, y, "pooled")
    lda = LDA(solver="lsqr").fit(X, y)
    W = np.ascontiguousarray(lda.coef_.T)
    fg, pr, fl = interleaved([lambda: fastgen.predict_proba(params, X),
                              lambda: lda.predict_proba(X),
                              lambda: X @ W], repeats)
    met = _ratio(fg[0], fl[0]) <= 1.5
    return [_row(f"W4 pooled predict_proba n={_fmt_n(n)} d={d} K={K}", fg,
                 "sklearn LDA.predict_proba", pr, fl, "≤1.5× floor", met,
                 "floor: numpy X @ W, W (d, K)", floor="X@W")]


# ----------------------------------------------------------------------------- W10
def w10(repeats, quick):
    wall, walls, info, base = common.startup_probe(("pooled",), repeats)
    ph = info["fit_predict"]["pooled"]
    rows = [_row(
        "W10 fresh process, warm cache: import + fit_gda + predict (tiny)", (wall, walls),
        None, None, base, "≤1.0 s", wall <= 1.0,
        f"wall of `python -c` (subprocess); floor: `python -c \"import numpy, "
        f"scipy.linalg\"`; in-process: import numpy {info['import_numpy']:.3f} s, import "
        f"fastgen {info['import_fastgen']:.3f} s, fit {ph[0]:.3f} s, predict {ph[1]:.3f} s",
        floor="python + numpy + scipy import", extra={"phases": info},
    )]
    cold = common.cold_startup_probe(("pooled",))
    cph = cold["cold_phases"]
    cp = cph["fit_predict"]["pooled"]
    where = ("beside the source (__pycache__)" if cold["index_files_beside_source"]
             else "in NUMBA_CACHE_DIR")
    rows.append(_row(
        "W10c fresh process, cold cache: same script, compile included",
        cold["cold_wall_s"], None, None, None, "report", None,
        f"cold verified: {cold['really_cold']} (package copy imported, 0 cache files "
        f"before, {cold['index_files_beside_source'] + cold['index_files_in_numba_cache_dir']}"
        f" index files after, written {where}); import fastgen {cph['import_fastgen']:.2f} s,"
        f" fit {cp[0]:.2f} s, predict {cp[1]:.2f} s; the same copy's next run took "
        f"{cold['warm_after_cold_wall_s']:.2f} s",
        extra=cold,
    ))
    return rows


# ----------------------------------------------------------------------------- W11
def w11(repeats, quick):
    rows = []
    gb = 1 << 30
    cases = [("pooled", 16), ("pooled", 128), ("per_class", 128)]
    for cov, d in cases:
        n = (gb // (8 * d)) // (10 if quick else 1)
        fg = common.peak_memory_probe("fastgen", n, d, K, cov)
        try:
            sk = common.peak_memory_probe("sklearn", n, d, K, cov)
        except Exception as exc:  # out of memory or similar: report, do not fail
            sk = {"error": str(exc)[-300:]}
        pct = 100.0 * fg["extra_bytes"] / fg["x_bytes"]
        sk_pct = 100.0 * sk["extra_bytes"] / sk["x_bytes"] if "extra_bytes" in sk else None
        peer = "sklearn " + ("LDA(lsqr)" if cov == "pooled" else "QDA") + ".fit"
        rows.append(_row(
            f"W11 peak extra memory, {cov} fit, X {fg['x_bytes'] / gb:.2f} GiB "
            f"(n={n} d={d})", pct, peer, sk_pct, 0.0, "≤5% of X", pct <= 5.0,
            f"VmHWM after fit − RSS before (HWM reset: {fg['hwm_reset']}), fresh process; "
            f"fastgen {fg['extra_bytes'] / 2**20:.0f} MiB"
            + (f", sklearn {sk['extra_bytes'] / 2**20:.0f} MiB" if sk_pct is not None
               else "") + f"; y (int64) is {fg['y_bytes'] / 2**20:.0f} MiB",
            unit="% of X", extra={"fastgen": fg, "sklearn": sk},
        ))
    return rows


WORKLOADS = {"W1": w1, "W2": w2, "W3": w3, "W3b": w3b, "W4": w4, "W10": w10, "W11": w11}


# ----------------------------------------------------------------------------- report
def environment():
    import numba
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    cpu = platform.processor() or "?"
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    simd = [f for f in ("avx512f", "avx2", "fma") if f in flags]
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "not yet initialised"
    pools = [{k: p.get(k) for k in ("user_api", "internal_api", "version", "num_threads",
                                    "architecture", "threading_layer", "filepath")}
             for p in threadpool_info()]
    env_vars = {k: os.environ[k] for k in sorted(os.environ)
                if k.startswith(("NUMBA_", "OMP_", "OPENBLAS_", "MKL_"))}
    return {
        "cpu": cpu, "simd": simd, "cores": os.cpu_count(), "python": platform.python_version(),
        "numpy": np.__version__, "scipy": scipy.__version__, "numba": numba.__version__,
        "sklearn": sklearn.__version__, "numba_threading_layer": layer,
        "numba_num_threads": numba.get_num_threads(), "threadpools": pools, "env": env_vars,
        "loadavg_end": os.getloadavg(),
    }


def _f(v, unit="s"):
    if v is None:
        return "—"
    if unit != "s":
        return f"{v:.1f}"
    return f"{v:.3g}" if v >= 0.001 else f"{v * 1e3:.3g} ms"


def env_lines(env):
    """The report's header: CPU, versions, thread pools, load average, environment."""
    out = []
    out.append(f"CPU: {env['cpu']} ({env['cores']} cores; {', '.join(env['simd'])}) · "
               f"Python {env['python']} · numpy {env['numpy']} · scipy {env['scipy']} · "
               f"numba {env['numba']} (threading layer {env['numba_threading_layer']}, "
               f"{env['numba_num_threads']} threads) · scikit-learn {env['sklearn']}")
    pools = "; ".join(f"{p['internal_api']} {p['version']} ({p['num_threads']} threads, "
                      f"{p['architecture']}, {os.path.basename(p['filepath'] or '')})"
                      for p in env["threadpools"])
    out.append(f"Thread pools: {pools}")
    start, end = env.get("loadavg_start"), env["loadavg_end"]
    out.append((f"Load average (1 min) at start {start[0]:.2f}, " if start else
                "Load average (1 min) ") + f"at end {end[0]:.2f} "
               "(above 0 means other processes shared the cores during the run)")
    if env["env"]:
        out.append("Environment: " + " ".join(f"{k}={v}" for k, v in env["env"].items()))
    if common.SETTLE_S > 0:
        out.append(f"Pause before each timed call: {common.SETTLE_S:g} s (--settle, "
                   f"{common.SETTLE_MODE})")
    return out


def markdown(rows, env):
    out = env_lines(env)
    out.append("")
    out.append("| workload | fastgen s | peer | peer s | speed-up | floor s | fastgen/floor "
               "| target | met? |")
    out.append("|---|---:|---|---:|---:|---:|---:|---|:-:|")
    notes = []
    for r in rows:
        unit = r.get("unit", "s")
        sp = _ratio(r["peer_s"], r["fastgen_s"]) if unit == "s" else None
        fr = _ratio(r["fastgen_s"], r["floor_s"]) if unit == "s" else None
        met = {True: "yes", False: "**no**", None: "—"}[r["met"]]
        wl = r["workload"]
        if r.get("note"):
            notes.append(r["note"])
            wl += f" [{len(notes)}]"
        if unit != "s":
            wl += f" ({unit})"
        out.append(f"| {wl} | {_f(r['fastgen_s'], unit)} | {r['peer'] or '—'} | "
                   f"{_f(r['peer_s'], unit)} | {f'{sp:.1f}×' if sp else '—'} | "
                   f"{_f(r['floor_s'], unit)} | {f'{fr:.2f}×' if fr else '—'} | "
                   f"{r['target']} | {met} |")
    out.append("")
    for i, note in enumerate(notes, 1):
        out.append(f"[{i}] {note}")
    out.append("")
    out.append("Times are medians of warm repeats (one untimed warm-up call first); "
               "speed-up = peer s / fastgen s; fastgen/floor = fastgen s / floor s. "
               "Memory rows are in % of X.nbytes (peak RSS over the RSS before the fit).")
    return "\n".join(out)


def _extra_rows(name, repeats, quick, only=()):
    """The rows of companion module ``name`` (None if it cannot be imported).

    With ``only`` (workload ids), a companion that lists its ids in ``WORKLOADS`` runs
    just those (none of them: nothing at all); the rows are filtered by their first
    word in any case.
    """
    try:
        if __package__:
            mod = importlib.import_module(f".{name}", __package__)
        else:
            mod = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[-1] == name:
            return None
        raise
    kwargs = {}
    ids = getattr(mod, "WORKLOADS", None)
    if only and ids is not None:
        wanted = {w.lower() for w in only}
        kwargs["only"] = tuple(w for w in ids if w.lower() in wanted)
        if not kwargs["only"]:
            return []
    try:
        rows = list(mod.run(repeats, quick, **kwargs))
    except Exception as exc:  # a companion's failure must not lose the other rows
        print(f"# {name}.run failed: {exc!r}", file=sys.stderr)
        return []
    good = [r for r in rows if isinstance(r, dict) and REQUIRED_KEYS <= r.keys()]
    if len(good) < len(rows):
        print(f"# {name}: {len(rows) - len(good)} row(s) skipped, not dicts with keys "
              f"{sorted(REQUIRED_KEYS)}", file=sys.stderr)
    return good


def _progress(name, rows, seconds):
    """One line per finished row on stderr, so a long run shows results as it goes."""
    print(f"# {name} done in {seconds:.1f} s", file=sys.stderr, flush=True)
    for r in rows:
        print(f"#   {r['workload']}: fastgen {r['fastgen_s']}, peer {r['peer_s']}, "
              f"floor {r['floor_s']}, met {r['met']}", file=sys.stderr, flush=True)


def _main_cuda(args):
    try:
        from . import compare_cuda
    except ImportError:
        import compare_cuda
    load_start = os.getloadavg()
    rows = compare_cuda.run(args.repeats, args.quick)
    env = environment()
    env["loadavg_start"] = load_start
    print(markdown(rows, env))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "quick": args.quick, "repeats": args.repeats,
                       "device": "cuda", "rows": rows}, f, indent=2, default=float)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="sizes / 10")
    ap.add_argument("--only", default="", help="comma-separated workload ids, e.g. W1,W3b")
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats (≥ 5)")
    common.add_settle_arguments(ap)
    ap.add_argument("--json", metavar="PATH", help="write the rows and environment as JSON")
    ap.add_argument("--no-extra", action="store_true",
                    help="skip compare_nb.py / compare_logistic.py / compare_inference.py")
    sc = ap.add_argument_group(
        "scaling", "with --threads: every workload W1-W9 (and the W10 import split) at "
        "each thread count instead of the default table; see benchmarks/scaling.py")
    sc.add_argument("--threads", metavar="1,2,4,...",
                    help="comma-separated thread counts (numba and every BLAS/OpenMP pool)")
    sc.add_argument("--workloads", default="", metavar="W1,W5,...",
                    help=f"with --threads: a subset of {','.join(SCALING_IDS)}")
    sc.add_argument("--scale", type=float, default=1.0,
                    help="with --threads: row counts × scale; 1 = issue 16's sizes (4× "
                         "compare.py's for W1, W5, W8; 2× for W2, W3)")
    sc.add_argument("--out", metavar="PATH.csv",
                    help="with --threads: write workload,threads,impl,seconds to PATH.csv "
                         "and the markdown table to PATH.md")
    sc.add_argument("--note", default="", help="with --threads: a line for the markdown")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="cuda: the GPU workloads of compare_cuda.py (X on the GPU)")
    args = ap.parse_args(argv)
    common.apply_settle(ap, args)
    if args.device == "cuda":
        return _main_cuda(args)
    if args.threads:
        if args.repeats < 3:
            ap.error("--repeats must be at least 3 with --threads")
        load_start = os.getloadavg()

        def header():
            env = environment()
            env["loadavg_start"] = load_start
            return env_lines(env)

        return scaling.main_threads(args, header)
    if args.workloads or args.out or args.scale != 1.0:
        ap.error("--workloads, --scale and --out go with --threads")
    if args.repeats < 5 and not args.quick:
        ap.error("--repeats must be at least 5 (medians of ≥ 5 warm repeats)")
    only = [w.strip() for w in args.only.split(",") if w.strip()]
    known = {w.lower(): w for w in WORKLOAD_IDS}
    own = [known[w.lower()] for w in only if w.lower() in known] if only else list(WORKLOADS)
    others = [w for w in only if w.lower() not in known]

    import fastgen  # noqa: F401  (import before timing anything)

    rows = []
    load_start = os.getloadavg()
    t_start = time.perf_counter()
    for wid in own:
        t0 = time.perf_counter()
        new = WORKLOADS[wid](args.repeats, args.quick)
        rows.extend(new)
        _progress(wid, new, time.perf_counter() - t0)
        gc.collect()
    if not args.no_extra and (not only or others):
        for name in EXTRA_MODULES:
            t0 = time.perf_counter()
            new = _extra_rows(name, args.repeats, args.quick, others)
            if new is None:
                continue
            if others:
                keep = {w.lower() for w in others}
                new = [r for r in new if r["workload"].split()[0].lower() in keep]
            rows.extend(new)
            _progress(name, new, time.perf_counter() - t0)
            gc.collect()
    env = environment()
    env["loadavg_start"] = load_start
    print(markdown(rows, env))
    print(f"\n(total {time.perf_counter() - t_start:.0f} s)", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "quick": args.quick, "repeats": args.repeats,
                       "rows": rows}, f, indent=2, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
