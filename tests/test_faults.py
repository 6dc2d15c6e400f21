"""Faults of the process around fastgen: writers killed mid-save, forked children of a
parallel parent, and what importing fastgen does to a process.

Kills and forks run in subprocesses under a timeout, so a hang fails instead of stalling
the suite (after minutes: the bounds allow a loaded machine).  The list of faults and
the test covering each is in docs/reliability.rst.
"""

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastgen

# the package under test (PYTHONPATH may point at another checkout than this file's)
PKG_ROOT = str(Path(fastgen.__file__).resolve().parent.parent)
DOCS = Path(__file__).resolve().parent.parent / "docs"


def _python(code, *args, env_extra=None, unset=(), timeout=900, cwd=None):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", *unset)}
    env.update(PYTHONPATH=PKG_ROOT, **(env_extra or {}))
    res = subprocess.run([sys.executable, "-W", "error", "-c", code, *map(str, args)],
                         env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-4000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


def _temp_files(folder):
    return sorted(p.name for p in Path(folder).iterdir() if p.name.endswith(".tmp"))


# ------------------------------------------------------------- 1. writers killed mid-save
#
# One harness process per writer: it prepares an old and a new output, measures how long
# a complete write of the new one takes (T), then for each kill point restores the old
# output, forks a child that writes the new one over it and SIGKILLs the child: after T
# times a fraction, or from inside the child just before / just after the n-th
# os.replace.  After each kill the target must read back as the old output or the new
# one, complete.  Forking after fits also exercises item 3 (the parent's kernels ran in
# parallel).

_KILL_HARNESS = r"""
import hashlib, json, os, signal, sys, time
import numpy as np
import fastgen
from fastgen import cli

writer, folder = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
target = os.path.join(folder, "target.npz" if writer != "predict" else "target.csv")

def digest(path):
    # the content a reader sees, or "broken" when it cannot be read
    try:
        if path.endswith(".npz"):
            p = fastgen.load_params(path)
            h = hashlib.sha256()
            for f in ("means", "variances", "covariance", "classes"):
                if hasattr(p, f):
                    h.update(np.ascontiguousarray(getattr(p, f)).tobytes())
            return h.hexdigest()
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except Exception as exc:
        return "broken: " + type(exc).__name__

def csv_file(path, n, d, seed):
    r = np.random.default_rng(seed)
    X = r.standard_normal((n, d)) + np.arange(n)[:, None] % 3
    with open(path, "w") as f:
        f.write(",".join([f"x{j}" for j in range(d)] + ["y"]) + "\n")
        for i in range(n):
            f.write(",".join(f"{v:.6f}" for v in X[i]) + f",c{i % 3}\n")
    return path

if writer == "save_params":
    K, D = 4, 1_500_000  # ~100 MB of float64 tables
    new = fastgen.fit_gaussian_nb(rng.standard_normal((2 * K, D)), np.arange(2 * K) % K)
    old = fastgen.fit_gaussian_nb(rng.standard_normal((20, 30)), np.arange(20) % 2)
    def write_old():
        fastgen.save_params(target, old)
    def write_new(path=target):
        fastgen.save_params(path, new)
elif writer == "predict":
    data = csv_file(os.path.join(folder, "data.csv"), 20_000, 4, 1)
    model = os.path.join(folder, "model.npz")
    assert cli.main(["fit", "--model", "qda", data, "--target", "y", "-o", model]) == 0
    def write_old():
        with open(target, "w") as f:
            f.write("y\nold\n")
    def write_new(path=target):
        assert cli.main(["predict", model, data, "--proba", "-o", path]) == 0
else:  # fit: the params file and its sidecar
    old_data = csv_file(os.path.join(folder, "old.csv"), 300, 3, 2)
    data = csv_file(os.path.join(folder, "data.csv"), 20_000, 6, 3)
    def write_old():
        assert cli.main(["fit", "--model", "lda", old_data, "--target", "y",
                         "-o", target]) == 0
    def write_new(path=target):
        assert cli.main(["fit", "--model", "qda", data, "--target", "y", "-o", path]) == 0

sys.stdout = open(os.devnull, "w")  # the CLI's reports; results go to fd 1 at the end
scratch = os.path.join(folder, "scratch" + os.path.splitext(target)[1])
write_new(scratch)  # warm: every kernel loaded, and the new output's digest
t0 = time.perf_counter(); write_new(scratch); T = time.perf_counter() - t0
want_new = digest(scratch)
write_old(); want_old = digest(target)
leftover = sorted(f for f in os.listdir(folder) if f.endswith(".tmp"))

def run(kill):
    write_old()
    pid = os.fork()
    if pid == 0:  # the writer
        if kill[0] in ("before", "after"):
            real, calls = os.replace, [0]
            def replace(a, b, when=kill[0], n=kill[1]):
                calls[0] += 1
                if calls[0] == n and when == "before":
                    os.kill(os.getpid(), signal.SIGKILL)
                real(a, b)
                if calls[0] == n and when == "after":
                    os.kill(os.getpid(), signal.SIGKILL)
            os.replace = replace
        try:
            write_new()
        finally:
            os._exit(0)
    if kill[0] == "time":
        time.sleep(kill[1] * T)
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    got = digest(target)
    side = "none"
    if writer == "fit":  # the sidecar matches the params file, or the CLI ignores it
        import contextlib, io
        try:
            with open(target + ".json") as f:
                meta = json.load(f)
            with open(target, "rb") as f:
                matches = meta.get("params_sha256") == hashlib.sha256(f.read()).hexdigest()
        except (OSError, ValueError):
            matches = False
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = cli.main(["info", target])
        side = ("matches" if matches else
                "ignored" if rc == 0 and "ignoring" in err.getvalue() else
                f"used or failed (rc {rc}): {err.getvalue()[:200]}")
    for f in os.listdir(folder):
        if f.endswith(".tmp"):
            os.remove(os.path.join(folder, f))
    return {"kill": kill, "status": status, "got": "old" if got == want_old else
            "new" if got == want_new else got, "sidecar": side}

kills = [["time", f] for f in (0.1, 0.35, 0.6, 0.85)]
kills += [["before", 1], ["after", 1]] + ([["before", 2]] if writer == "fit" else [])
results = [run(k) for k in kills]
sys.stdout = sys.__stdout__
print(json.dumps({"T": T, "results": results, "leftover": leftover, "pid": os.getpid(),
                  "distinct": want_old != want_new}))
"""


@pytest.mark.parametrize("writer", ["save_params", "predict", "fit"])
def test_a_killed_writer_leaves_the_old_file_or_the_new_one(tmp_path, writer):
    out = _python(_KILL_HARNESS, writer, tmp_path, timeout=900,
                  env_extra={"NUMBA_NUM_THREADS": "2"})
    assert out["distinct"] and out["leftover"] == [], out  # a normal write leaves no temp
    for r in out["results"]:
        assert r["got"] in ("old", "new"), r  # never a torn or missing file
        assert r["sidecar"] in ("none", "matches", "ignored"), r
    by_kill = {tuple(r["kill"]): r["got"] for r in out["results"]}
    assert by_kill[("before", 1)] == "old" and by_kill[("after", 1)] == "new", by_kill
    if writer == "fit":  # killed between the params file and its sidecar
        stale = next(r for r in out["results"] if r["kill"] == ["before", 2])
        assert stale["got"] == "new" and stale["sidecar"] == "ignored", stale


class _Boom(Exception):
    pass


@pytest.mark.parametrize("error", [_Boom, KeyboardInterrupt])
@pytest.mark.parametrize("mode", ["wb", "w"])
@pytest.mark.parametrize("existing", [True, False])
def test_atomic_write_cleans_up_after_an_exception(tmp_path, error, mode, existing):
    from fastgen.io import atomic_write

    target = tmp_path / "out.bin"
    if existing:
        target.write_bytes(b"old contents")
    chunk = b"new" * 1000 if mode == "wb" else "new" * 1000
    with pytest.raises(error):
        with atomic_write(target, mode) as f:
            f.write(chunk)
            raise error()
    assert _temp_files(tmp_path) == []
    if existing:
        assert target.read_bytes() == b"old contents"
    else:
        assert not target.exists()


def test_save_params_failing_mid_write_keeps_the_old_file(tmp_path, monkeypatch):
    X = np.random.default_rng(0).standard_normal((40, 3))
    old = fastgen.fit_gaussian_nb(X, np.arange(40) % 2)
    new = fastgen.fit_gaussian_nb(X + 1.0, np.arange(40) % 2)
    path = tmp_path / "model.npz"
    fastgen.save_params(path, old)

    def savez(file, **arrays):  # writes part of the archive, then the disk is full
        file.write(b"PK\x03\x04" + b"\0" * 4096)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", savez)
    with pytest.raises(OSError):
        fastgen.save_params(path, new)
    monkeypatch.undo()
    assert fastgen.load_params(path) == old
    assert _temp_files(tmp_path) == []
    fastgen.save_params(path, new)
    assert fastgen.load_params(path) == new and _temp_files(tmp_path) == []


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644], ids=oct)
def test_atomic_write_keeps_permissions_and_writes_through_links(tmp_path, mode):
    from fastgen.io import atomic_write

    real = tmp_path / "real.csv"
    real.write_text("old")
    os.chmod(real, mode)
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    with atomic_write(link, "w", encoding="utf-8") as f:
        f.write("new")
    assert link.is_symlink() and real.read_text() == "new"
    assert stat.S_IMODE(os.stat(real).st_mode) == mode
    assert _temp_files(tmp_path) == []


def test_atomic_write_to_a_device_writes_it_without_replacing_it():
    from fastgen.io import atomic_write

    before = os.stat(os.devnull)
    with atomic_write(os.devnull, "w") as f:
        f.write("discarded")
    after = os.stat(os.devnull)
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


# --------------------------------------------------- 3. fork after a parallel fit returns
#
# The parent fits on enough rows for the kernels to run on numba's OpenMP threads; then
# a fork-context Pool(2) maps tasks that call fastgen.  Before the fork handler, numba's
# guard killed every child ("fork() called from a process already using GNU OpenMP")
# and Pool.map never returned.

_FORK_SCRIPT = r"""
import json, multiprocessing as mp, os, sys, threading
import numba, numpy as np
import fastgen

task_kind = sys.argv[1]
rng = np.random.default_rng(0)
X = rng.standard_normal((20_000, 8)) + (np.arange(20_000) % 3)[:, None]
y = np.arange(20_000) % 3
parent = fastgen.fit_gda(X, y, covariance="per_class")  # parallel, in the parent
assert numba.get_num_threads() == 2, numba.get_num_threads()

def results(i):
    Xi = X[i * 1000:] if task_kind != "predict_proba" else X
    if task_kind in ("fit_gda", "nested_fork", "thread", "raised_threads"):
        return fastgen.fit_gda(Xi, y[i * 1000:], covariance="per_class").means.tolist()
    if task_kind == "fit_gaussian_nb":  # kernels the parent never loaded
        return fastgen.fit_gaussian_nb(Xi, y[i * 1000:]).variances.tolist()
    return fastgen.predict_proba(parent, Xi)[::997].tolist()

def task(i):
    if task_kind == "raised_threads":
        numba.set_num_threads(2)  # fastgen's calls stay on one thread in this child
    if task_kind == "thread":  # a thread started in the child
        box = []
        t = threading.Thread(target=lambda: box.append(results(i)))
        t.start(); t.join()
        return box[0]
    if task_kind == "nested_fork":  # the child forks again
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(w, json.dumps(results(i)).encode()); os._exit(0)
        os.close(w)
        data = b""
        while chunk := os.read(r, 1 << 16):
            data += chunk
        os.waitpid(pid, 0)
        return json.loads(data)
    return results(i)

with mp.get_context("fork").Pool(2) as pool:
    got = pool.map_async(task, range(4)).get(timeout=600)
want = [results(i) for i in range(4)]  # the parent, on its own threads
print(json.dumps({"same": got == want, "threads_after": numba.get_num_threads(),
                  "parent_again": fastgen.fit_gda(X, y, covariance="per_class") == parent}))
"""


@pytest.mark.parametrize("task_kind", ["fit_gda", "fit_gaussian_nb", "predict_proba",
                                       "thread", "raised_threads", "nested_fork"])
def test_fork_pool_after_a_parallel_fit_returns(task_kind):
    out = _python(_FORK_SCRIPT, task_kind, timeout=900,
                  env_extra={"NUMBA_NUM_THREADS": "2"})
    # the children give bitwise what the parent computes on two threads (the work split
    # never depends on the thread count), and the parent keeps its threads
    assert out == {"same": True, "threads_after": 2, "parent_again": True}


# ------------------------------------------------ 5. what import and a first call change

_SNAPSHOT = r"""
import json, os, signal, sys, threading, warnings
if sys.argv[1] == "numba_first":  # a caller that uses numba itself
    import numba, numba.core.caching, numba.core.compiler
    from numba.np.ufunc import parallel

def numba_state():
    if "numba" not in sys.modules:
        return None
    import numba
    from numba.core import caching, compiler, config
    from numba.np.ufunc import parallel
    methods = {f"{c.__name__}.{m}": id(vars(c)[m]) for c in (caching.IndexDataCacheFile,
               caching.Cache, compiler.CompileResult) for m in vars(c)}
    conf = {k: repr(getattr(config, k)) for k in dir(config) if k.isupper()}
    return {"methods": methods, "config": conf, "layer": parallel._is_initialized}

def snapshot():
    return {"env": dict(os.environ), "filters": [repr(f) for f in warnings.filters],
            "signals": {s.name: repr(signal.getsignal(s)) for s in signal.Signals
                        if s not in (signal.SIGKILL, signal.SIGSTOP)},
            "modules": sorted(sys.modules), "threads": threading.active_count(),
            "tasks": len(os.listdir("/proc/self/task")), "numba": numba_state(),
            "excepthook": repr(sys.excepthook), "recursion": sys.getrecursionlimit()}

before = snapshot()
import fastgen
after = snapshot()
print(json.dumps({"before": before, "after": after}))
"""


def _stdlib(name):
    return name.split(".")[0] in sys.stdlib_module_names


@pytest.mark.parametrize("caller", ["plain", "numba_first"])
def test_import_fastgen_changes_nothing_in_the_process(caller):
    """A process that imports fastgen and never calls it is left as it was: environment,
    warnings filters, signal handlers, threads, numba's configuration, cache classes and
    threading layer; the only new modules are fastgen's own few, none of which runs
    anything at import (and no third-party module: not numba)."""
    got = _python(_SNAPSHOT, caller, unset=("OMP_WAIT_POLICY",))
    before, after = got["before"], got["after"]
    new = sorted(set(after["modules"]) - set(before["modules"]))
    assert [m for m in new if m.startswith("fastgen")] == [
        "fastgen", "fastgen._public", "fastgen._runtime", "fastgen.kernels",
        "fastgen.kernels._cache", "fastgen.kernels._notice", "fastgen.kernels._setup"]
    assert [m for m in new if not m.startswith("fastgen") and not _stdlib(m)] == []
    for key in ("env", "filters", "signals", "threads", "tasks", "numba", "excepthook",
                "recursion"):
        assert before[key] == after[key], key


_FIRST_CALL = r"""
import json, os
from numba.core import caching, compiler  # the caller's own numba, before fastgen
classes = (caching.IndexDataCacheFile, caching.Cache, compiler.CompileResult)
watched = [(c, m, vars(c)[m]) for c in classes for m in list(vars(c))]
env = dict(os.environ)
import numpy as np
import fastgen
from fastgen.kernels import _setup
# above the small-data threshold: a call that runs a kernel (small inputs need none)
fastgen.fit_gda(np.random.default_rng(0).standard_normal((40_000, 3)), np.arange(40_000) % 2)
print(json.dumps({
    "env": sorted(k for k in os.environ if env.get(k) != os.environ[k]),
    "patched": sorted(f"{c.__name__}.{m}" for c, m, v in watched if vars(c).get(m) is not v),
    "fork_handler": _setup._FORK_HANDLER,
}))
"""


def test_the_processes_page_lists_what_a_first_call_changes():
    """Everything a first call sets process-wide (environment variables, wrapped numba
    methods, the fork handler) is named on docs/guide/processes.rst, the one place
    that documents it."""
    got = _python(_FIRST_CALL, unset=("OMP_WAIT_POLICY",))
    page = (DOCS / "guide" / "processes.rst").read_text(encoding="utf-8")
    assert "OMP_WAIT_POLICY" in got["env"], got  # set only when the caller has not
    assert got["patched"], got
    for name in got["env"] + got["patched"]:
        assert name in page, name
    assert got["fork_handler"] and "register_at_fork" in page
    for expected in ("OPENBLAS_THREAD_TIMEOUT", "NUMBA_CACHE_DIR", "NUMBA_THREADING_LAYER",
                     "fork", "spawn", "forkserver", "threading layer", "logger ``fastgen``"):
        assert expected in page, expected


def test_the_reliability_page_names_existing_tests():
    """docs/reliability.rst lists faults with the test covering each: every test it
    names exists."""
    page = (DOCS / "reliability.rst").read_text(encoding="utf-8")
    named = re.findall(r"``(tests/[\w/]+\.py)::(\w+)", page)
    assert len(named) >= 10
    tests_root = Path(__file__).resolve().parent.parent
    for path, name in named:
        source = (tests_root / path).read_text(encoding="utf-8")
        assert re.search(rf"^(async )?def {name}\(", source, flags=re.M), (path, name)



# ------------------------------------------------------------------ JIT switched off

_JIT_OFF = r"""
import json, os, sys
import numpy as np
import scipy.sparse as sp
import fastgen
from fastgen.io import save_params

X = np.random.default_rng(0).standard_normal((30, 3)); y = np.arange(30) % 2
out = {}
calls = {
    "fit_gda": lambda: fastgen.fit_gda(X, y),
    "fit_logistic": lambda: fastgen.fit_logistic(X, y),
    "fit_gaussian_nb": lambda: fastgen.fit_gaussian_nb(X, y),
    "fit_multinomial_nb": lambda: fastgen.fit_multinomial_nb(sp.csr_matrix(abs(X)), y),
    "class_moments": lambda: fastgen.class_moments(X, y),
    "detect_separation": lambda: fastgen.detect_separation(X, y),
    "predict": lambda: fastgen.predict(fastgen.load_params(sys.argv[1]), X),
    "load_params": lambda: fastgen.load_params(sys.argv[1]).n_classes,
}
for name, call in calls.items():
    try:
        out[name] = ["ok", repr(call())[:40]]
    except Exception as exc:
        out[name] = [type(exc).__name__, str(exc), isinstance(exc, RuntimeError)]
print(json.dumps(out))
"""


def test_the_jit_switched_off_stops_at_the_first_kernel_call(tmp_path):
    """NUMBA_DISABLE_JIT=1: every call that needs a kernel raises one clear error
    (a RuntimeError saying how to debug a kernel), never numba's raw TypeError;
    calls that need no kernel work, small inputs (numpy passes) included; the command
    line says it in one line."""
    X = np.random.default_rng(0).standard_normal((30, 3))
    model = tmp_path / "m.npz"
    fastgen.save_params(model, fastgen.fit_gda(X, np.arange(30) % 2),
                        feature_names=["a", "b", "c"], target_name="y")
    # small inputs take numpy passes and need no kernel: with the JIT off they work
    small = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=PKG_ROOT)
    small.pop("FASTGEN_SMALL_VALUES", None)
    proc = subprocess.run([sys.executable, "-c", _JIT_OFF, str(model)], env=small,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert all(v[0] == "ok" for v in json.loads(proc.stdout).values()), proc.stdout
    # the kernels' path (FASTGEN_SMALL_VALUES=0), as inputs above the threshold take it
    env = dict(small, FASTGEN_SMALL_VALUES="0")
    proc = subprocess.run([sys.executable, "-c", _JIT_OFF, str(model)], env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out.pop("load_params") == ["ok", "2"]
    for name, (cls, message, is_runtime) in out.items():
        assert cls == "JITDisabledError" and is_runtime, (name, cls, message)
        assert "NUMBA_DISABLE_JIT" in message and "py_func" in message, message
    data = tmp_path / "d.csv"
    data.write_text("a,b,c\n1,2,3\n")
    for args in (["predict", str(model), str(data)],
                 ["fit", "--model", "lda", str(data), "--target", "c", "-o",
                  str(tmp_path / "p")],
                 ["compile", "--family", "gda", "--jobs", "1", "--no-progress"]):
        proc = subprocess.run([sys.executable, "-m", "fastgen", *args], env=env,
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode in (1, 2) and proc.stdout == "", proc.stderr
        assert proc.stderr.startswith("fastgen: error: fastgen's kernels need numba's "
                                      "JIT") and proc.stderr.count("\n") == 1


def test_a_kernels_python_source_runs_as_the_message_says():
    """The debugging route the JIT-disabled error names: ``kernel.py_func`` runs the
    kernel's Python source, with the same result."""
    from fastgen.kernels.labels import first_nonfinite, int_label_codes

    a = np.array([1.0, 2.0, np.nan, np.inf])
    assert first_nonfinite.py_func(a) == first_nonfinite(a) == 2
    y = np.array([5, 3, 5, 9])
    for got, want in zip(int_label_codes.py_func(y, 3, 7), int_label_codes(y, 3, 7)):
        np.testing.assert_array_equal(got, want)
