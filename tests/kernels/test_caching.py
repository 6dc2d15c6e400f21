"""numba's on-disk cache: a read-only install and corrupted cache files.

Each test runs a fresh interpreter on a copy of the ``fastgen`` package whose kernels
have never been compiled, and exercises one small kernel path (a pooled GDA fit on 50×3
data), so a cold run compiles only a few kernels.

*Read-only package.*  The copy is made read-only, and HOME/XDG_CACHE_HOME point at a
read-only directory, so numba has nowhere to write: without fastgen's fallback numba
raises ``RuntimeError: cannot cache function ...: no locator available`` at import.
Running as root, ``chmod`` does not stop writes; the interpreter is then started with
every capability dropped (``setpriv --bounding-set=-all``), under which root is bound by
file permissions like any user.  The test checks that writing really fails.

*Corrupted cache.*  After a run has filled the cache, every index (.nbi) and data (.nbc)
file is truncated or garbled, or has 64 bytes overwritten inside; the next run must
still import, fit and give the same result (numba recompiles and rewrites the entry).
"""

import glob
import json
import os
import re
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastgen

# the checkout whose package is under test (PYTHONPATH may name another than this file's)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(fastgen.__file__)))


@pytest.fixture(scope="module", autouse=True)
def _kernels_whatever_the_size():
    """The processes these tests start compile and load kernels on small data: they
    take the kernels' path (FASTGEN_SMALL_VALUES=0), not the numpy passes."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FASTGEN_SMALL_VALUES", "0")
        yield

_SCRIPT = r"""
import json, os, sys
target = os.environ["FASTGEN_PROBE_TARGET"]
try:
    open(os.path.join(target, "probe-write"), "w").close()
    writable = True
except OSError:
    writable = False
import numpy as np
import fastgen
assert os.path.dirname(fastgen.__file__) == target, fastgen.__file__
rng = np.random.default_rng(0)
X = rng.standard_normal((50, 3))
y = np.arange(50) % 2
p = fastgen.fit_gda(X, y)
json.dump({"writable": writable, "cache_dir": os.environ.get("NUMBA_CACHE_DIR", ""),
           "means": p.means.tolist(), "covariance": p.covariance.tolist()}, sys.stdout)
"""


def _expected():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3))
    return fastgen.fit_gda(X, np.arange(50) % 2)


def _copy_package(dest):
    shutil.copytree(os.path.join(ROOT, "fastgen"), os.path.join(dest, "fastgen"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return os.path.join(dest, "fastgen")


def _make_read_only(path):
    for dirpath, _dirnames, filenames in os.walk(path):
        for name in filenames:
            p = os.path.join(dirpath, name)
            os.chmod(p, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        os.chmod(dirpath, 0o555)


def _make_writable(path):
    for dirpath, _dirnames, filenames in os.walk(path):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o644)


def _unprivileged_prefix():
    """Command prefix under which file permissions bind (empty unless running as root)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot make a directory read-only")
    return [setpriv, "--bounding-set=-all", "--inh-caps=-all"]


def _run(pkg_parent, target, env_extra, prefix=(), with_stderr=False):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "HOME", "XDG_CACHE_HOME")}
    env.update(env_extra, PYTHONPATH=pkg_parent, FASTGEN_PROBE_TARGET=target)
    res = subprocess.run([*prefix, sys.executable, "-W", "error", "-c", _SCRIPT], env=env,
                         cwd=pkg_parent, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    *debug, last = res.stdout.strip().splitlines()  # NUMBA_DEBUG_CACHE prints on stdout
    out = json.loads(last)
    return (out, res.stderr + "\n".join(debug)) if with_stderr else out


def _check_result(out):
    want = _expected()
    np.testing.assert_allclose(out["means"], want.means, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out["covariance"], want.covariance, rtol=1e-13, atol=1e-15)


@pytest.fixture(scope="module")
def read_only_setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("ro")
    parent = base / "site"
    parent.mkdir()
    pkg = _copy_package(str(parent))
    home = base / "home"
    home.mkdir()
    tmp = base / "tmp"  # where the fallback cache goes (cleaned with tmp_path)
    tmp.mkdir()
    _make_read_only(pkg)
    os.chmod(home, 0o555)
    os.chmod(parent, 0o555)
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "TMPDIR": str(tmp)}
    yield str(parent), pkg, env, str(tmp)
    _make_writable(str(base))


def test_import_and_first_call_with_read_only_package(read_only_setup):
    parent, pkg, env, tmp = read_only_setup
    prefix = _unprivileged_prefix()
    out = _run(parent, pkg, env, prefix)
    assert not out["writable"], "the package copy is still writable: the test proves nothing"
    _check_result(out)
    # the kernels were cached in a private directory under TMPDIR, not nowhere
    assert out["cache_dir"].startswith(tmp), out["cache_dir"]
    assert glob.glob(os.path.join(out["cache_dir"], "*", "*.nbi"))
    # and a second process loads them from there
    _check_result(_run(parent, pkg, env, prefix))


def test_corrupted_cache_files_are_recompiled(read_only_setup):
    parent, pkg, env, tmp = read_only_setup
    prefix = _unprivileged_prefix()
    out = _run(parent, pkg, env, prefix)  # fills the cache (or reuses it)
    files = sorted(glob.glob(os.path.join(out["cache_dir"], "*", "*.nb[ic]")))
    assert any(f.endswith(".nbi") for f in files) and any(f.endswith(".nbc") for f in files)
    # a quarter of the files, on the kernels this call uses (each recompile costs ~1 s)
    for i, f in enumerate(files[::4]):
        with open(f, "rb") as fh:
            data = fh.read()
        with open(f, "wb") as fh:
            if f.endswith(".nbi"):  # truncated pickle, or garbage after the version
                fh.write(data[: len(data) // 2] if i % 2 else b"\x80\x04garbage" * 4)
            else:  # truncated, or byte-reversed, compiled code
                fh.write(data[: len(data) // 3] if i % 2 else data[::-1])
    _check_result(_run(parent, pkg, env, prefix))
    # the rewritten cache is sound again
    _check_result(_run(parent, pkg, env, prefix))


_DAMAGE = {"a quarter in": 0.25, "half-way": 0.5, "three quarters in": 0.75}


@pytest.mark.parametrize("where", list(_DAMAGE))
def test_bytes_overwritten_inside_cache_data_are_recompiled(tmp_path, read_only_setup,
                                                            where):
    """64 bytes overwritten inside data (.nbc) files the fit loads: bitcode that LLVM
    cannot parse ("LLVM bitcode parsing error" at the first call before), or machine
    code that would load and run.  The fit succeeds with the right answer, one message
    is logged, the entries are rewritten, and the next process loads them without a
    word.  (The data files the fit does not load hold helper kernels linked into the
    others: never loaded on their own.)"""
    parent, pkg, env, tmp = read_only_setup
    prefix = _unprivileged_prefix()
    debug = dict(env, NUMBA_DEBUG_CACHE="1")  # numba names the data files it loads
    out, err = _run(parent, pkg, debug, prefix, with_stderr=True)
    if "data loaded from" not in err:  # the run filled the fixture's cache: again
        out, err = _run(parent, pkg, debug, prefix, with_stderr=True)
    private = tmp_path / "cache"  # a copy: the fixture's cache stays sound for the others
    shutil.copytree(out["cache_dir"], private)
    loaded = sorted(set(re.findall(r"data loaded from '[^']*/(kernels_\w+/[^'/]+\.nbc)'",
                                   err)))
    # the small (serial) kernels among them: each recompiles in about a second, where
    # the parallel moments kernel takes tens of seconds on a busy machine
    damaged = [os.path.join(private, f) for f in loaded
               if os.path.getsize(os.path.join(private, f)) < 150_000]
    assert len(damaged) >= 2, (loaded, err[-2000:])
    before = {}
    for f in damaged:
        size = os.path.getsize(f)
        with open(f, "r+b") as fh:
            fh.seek(min(int(size * _DAMAGE[where]), size - 64))
            fh.write(bytes(range(0xC0, 0x100)))
        with open(f, "rb") as fh:
            before[f] = fh.read()
    env = dict(env, NUMBA_CACHE_DIR=str(private))
    got, err = _run(parent, pkg, env, prefix, with_stderr=True)
    _check_result(got)
    assert got["cache_dir"] == str(private)
    messages = [line for line in err.splitlines() if "unreadable numba cache entry" in line]
    assert len(messages) == 1, err  # warned once, not once per entry
    for f in damaged:  # rewritten in place
        with open(f, "rb") as fh:
            assert fh.read() != before[f], f
    got, err = _run(parent, pkg, env, prefix, with_stderr=True)
    _check_result(got)
    assert "unreadable" not in err, err


def test_corrupted_in_tree_cache(tmp_path, read_only_setup):
    """The usual case: a writable package whose own __pycache__ holds a corrupt index.

    The cache files of the read-only test are copied in (same sources, same names), so
    only the corrupted kernels compile here."""
    parent, ro_pkg, ro_env, tmp = read_only_setup
    pkg = _copy_package(str(tmp_path))
    cache = os.path.join(pkg, "kernels", "__pycache__")
    os.makedirs(cache, exist_ok=True)
    for f in glob.glob(os.path.join(tmp, "fastgen-numba-cache-*", "kernels_*", "*.nb[ic]")):
        shutil.copy(f, cache)
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / ".cache")}
    out = _run(str(tmp_path), pkg, env)
    assert out["cache_dir"] == ""  # numba's own choice (kernels/__pycache__) was kept
    files = sorted(glob.glob(os.path.join(cache, "*.nbi")))
    assert files
    for f in files[::3]:
        with open(f, "r+b") as fh:
            fh.truncate(max(1, os.path.getsize(f) // 2))
    _check_result(_run(str(tmp_path), pkg, env))


_UNTESTED_NUMBA = r"""
import json, sys, warnings
import numba
from numba.core import caching

cls = caching.IndexDataCacheFile
if sys.argv[1] == "version":
    numba.__version__ = "0.99.0"
else:  # a numba release that renamed the private method
    del cls._load_index
before = dict(vars(cls))
with warnings.catch_warnings(record=True) as rec:
    warnings.simplefilter("always")
    import fastgen
    from fastgen.kernels import _cache
    again = _cache.tolerate_corrupt_cache()  # a second call decides nothing new
    ok = True
    if sys.argv[1] == "version":  # the kernels still compile and run, uncached
        import numpy as np
        X = np.random.default_rng(0).standard_normal((50, 3))
        ok = bool(np.isfinite(fastgen.fit_gda(X, np.arange(50) % 2).covariance).all())
        try:  # and there is no cache to fill ahead of time: one clear error
            fastgen.compile(["gda"], ["float64"], jobs=1, progress=False)
            ok = False
        except RuntimeError as exc:
            ok = ok and "nothing to compile ahead of time" in str(exc)
import glob, os
cached = glob.glob(os.path.join(os.environ["NUMBA_CACHE_DIR"], "**", "*.nb[ic]"),
                   recursive=True)
json.dump({"warnings": [[w.category.__name__, str(w.message)] for w in rec],
           "untouched": dict(vars(cls)) == before, "again": again, "ok": ok,
           "cached": cached}, sys.stdout)
"""


@pytest.mark.parametrize("case", ["version", "missing_method"])
def test_untested_numba_falls_back_with_one_warning(tmp_path, case):
    """On a numba the cache-file wrap was not tested with, ``import fastgen`` works,
    warns once with RuntimeSetupWarning and leaves numba's cache classes alone; the
    kernels then compile without numba's on-disk cache, whose unchecked entries could
    reach LLVM, and fits still work."""
    env = dict(os.environ, PYTHONPATH=ROOT, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", _UNTESTED_NUMBA, case], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert [w[0] for w in got["warnings"]] == ["RuntimeSetupWarning"], got["warnings"]
    assert ("0.99.0" if case == "version" else "_load_index") in got["warnings"][0][1]
    assert "without numba's on-disk cache" in got["warnings"][0][1]
    assert got["untouched"] and got["again"] is False and got["ok"]
    assert got["cached"] == []


def test_tested_numba_gets_the_wrap():
    """The numba installed here is inside TESTED_NUMBA (the suite turns warnings into
    errors, so it must not warn) and the wrap is in place."""
    import numba
    from numba.core import caching

    from fastgen.kernels import _cache

    assert _cache._unsupported_reason(numba, caching) is None
    assert _cache.tolerate_corrupt_cache() is True
    assert caching.IndexDataCacheFile._load_index.__module__ == "fastgen.kernels._cache"


# ------------------------------------------------- entries checked before numba loads them


def _loaded_small_entries(parent, pkg, env, prefix, tmp_path):
    """A private copy of a filled cache and the small data files the probe loads, each
    with its index (each recompiles in about a second)."""
    debug = dict(env, NUMBA_DEBUG_CACHE="1")  # numba names the files it loads
    out, err = _run(parent, pkg, debug, prefix, with_stderr=True)
    if "data loaded from" not in err:  # the run filled the fixture's cache: again
        out, err = _run(parent, pkg, debug, prefix, with_stderr=True)
    private = tmp_path / "cache"
    shutil.copytree(out["cache_dir"], private)
    loaded = sorted(set(re.findall(r"data loaded from '[^']*/(kernels_\w+/[^'/]+\.nbc)'",
                                   err)))
    small = [os.path.join(private, f) for f in loaded
             if os.path.getsize(os.path.join(private, f)) < 150_000]
    assert len(small) >= 2, (loaded, err[-2000:])
    with_index = []
    for f in small:
        with_index += [f, re.sub(r"\.\d+\.nbc$", ".nbi", f)]
    return str(private), with_index


def _read_bytes(path):
    with open(path, "rb") as fh:
        return fh.read()


def _damage(path, rng, how):
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    if how == "issue 43":  # 48 to 64 bytes overwritten in the middle, one byte appended
        n = rng.randint(48, 64)
        at = len(data) // 2 - n // 2
    else:  # anywhere, any length
        n = rng.randint(1, 64)
        at = rng.randrange(0, len(data) - n)
    data[at:at + n] = bytes(rng.randrange(256) for _ in range(n))
    if how == "issue 43" or rng.random() < 0.5:
        data += bytes([rng.randrange(256)])
    with open(path, "wb") as fh:
        fh.write(bytes(data))


def _check_recompiled_once(parent, pkg, env, prefix, private, caught_by):
    env = dict(env, NUMBA_CACHE_DIR=private)
    got, err = _run(parent, pkg, env, prefix, with_stderr=True)
    _check_result(got)
    messages = [line for line in err.splitlines() if "unreadable numba cache entry" in line]
    assert len(messages) == 1, err  # once per process
    assert re.search(caught_by, messages[0]), messages  # found before numba or LLVM read it
    got, err = _run(parent, pkg, env, prefix, with_stderr=True)  # rewritten: sound again
    _check_result(got)
    assert "unreadable" not in err, err


_ENVELOPE = r"envelope"


@pytest.mark.parametrize("how", ["issue 43", "random offsets and lengths"])
def test_damaged_entries_never_reach_llvm(tmp_path, read_only_setup, how):
    """Bytes overwritten inside the data files of the kernels a fit loads, and a byte
    appended (which hid the old trailing checksum: SIGSEGV, or SIGABRT from an LLVM
    assertion); or damage at random offsets and lengths, with or without an appended
    byte, in the data file of one kernel and the index of the next: the envelope's
    check finds it before numba unpickles or LLVM parses anything, the fit succeeds
    with the right answer, one message is logged, the entries are rewritten."""
    import random

    parent, pkg, env, _tmp = read_only_setup
    prefix = _unprivileged_prefix()
    private, files = _loaded_small_entries(parent, pkg, env, prefix, tmp_path)
    rng = random.Random(43)
    for i, (data, index) in enumerate(zip(files[::2], files[1::2])):
        _damage(index if how != "issue 43" and i % 2 else data, rng, how)
    _check_recompiled_once(parent, pkg, env, prefix, private, _ENVELOPE)


def test_entries_swapped_between_kernels_are_misses(tmp_path, read_only_setup):
    """Valid entries copied over other kernels' (their index and first data file, in a
    rotation): each is bound to its kernel, so none reaches numba's dispatcher (a
    TypeError such as 'expected 2 arguments, got 3' before)."""
    parent, pkg, env, _tmp = read_only_setup
    prefix = _unprivileged_prefix()
    private, files = _loaded_small_entries(parent, pkg, env, prefix, tmp_path)
    pairs = list(zip(files[::2], files[1::2]))  # (data, index) per kernel
    contents = [tuple(_read_bytes(f) for f in pair) for pair in pairs]
    for pair, content in zip(pairs, contents[1:] + contents[:1]):
        for f, data in zip(pair, content):
            with open(f, "wb") as fh:
                fh.write(data)
    _check_recompiled_once(parent, pkg, env, prefix, private, "it holds the entry")


_STUCK_LOCK = r"""
import json, sys
import numpy as np
from fastgen.kernels import _cache
_cache.LOCK_WAIT_SECONDS = 0.2  # the bound, small for the test
from fastgen.kernels.labels import first_nonfinite, int_label_codes  # two small kernels
present, codes = int_label_codes(np.array([5, 3, 5, 9]), 3, 7)
json.dump({"codes": codes.tolist(), "first": first_nonfinite(np.array([1.0, np.nan]))},
          sys.stdout)
"""


def test_a_stuck_save_lock_does_not_hang_the_first_fit(tmp_path):
    """Another process holds ``.fastgen-save.lock`` (here: this one, by flock on its own
    descriptor) while a fresh process compiles kernels: it waits a bounded time,
    compiles without saving and says so once, not once per kernel (flock has no
    timeout: the first fit hung forever before).  Two small kernels stand for a fit's,
    which save the same way, to keep the compile short."""
    import fcntl
    import hashlib

    cache = tmp_path / "numba-cache"
    kernels = os.path.join(ROOT, "fastgen", "kernels")
    folder = cache / ("kernels_" + hashlib.sha1(kernels.encode()).hexdigest())
    folder.mkdir(parents=True)
    fd = os.open(folder / ".fastgen-save.lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.update(PYTHONPATH=ROOT, NUMBA_CACHE_DIR=str(cache))
        res = subprocess.run([sys.executable, "-W", "error", "-c", _STUCK_LOCK], env=env,
                             capture_output=True, text=True, timeout=600)
    finally:
        os.close(fd)
    assert res.returncode == 0, res.stderr[-3000:]
    assert json.loads(res.stdout) == {"codes": [1, 0, 1, 2], "first": 1}
    lines = [line for line in res.stderr.splitlines() if "cache lock" in line]
    assert len(lines) == 1 and "not saved" in lines[0], res.stderr
    assert not glob.glob(str(folder / "*.nbc"))  # compiled, not saved


def _small_kernels(cache, preexec_fn=None, timeout=600):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=ROOT, NUMBA_CACHE_DIR=str(cache))
    return subprocess.run([sys.executable, "-W", "error", "-c", _STUCK_LOCK], env=env,
                          capture_output=True, text=True, timeout=timeout,
                          preexec_fn=preexec_fn)


@pytest.fixture(scope="module")
def filled_cache(tmp_path_factory):
    """A numba cache holding the two small kernels, filled once: tests copy it."""
    cache = tmp_path_factory.mktemp("filled") / "numba-cache"
    assert _small_kernels(cache).returncode == 0
    return cache


def _copy_of(filled_cache, tmp_path):
    return shutil.copytree(filled_cache, tmp_path / "numba-cache", symlinks=True)


def _no_file_writes():
    """In the child: every write to a file fails with EFBIG (a full disk's stand-in)."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


@pytest.mark.parametrize("how", ["file-size limit", "entries are directories"])
def test_a_cache_that_cannot_be_written_compiles_without_saving(tmp_path, filled_cache,
                                                                how):
    """Saving a kernel fails (EFBIG under a file-size limit, standing in for a full
    disk; or a directory where its entry goes): the kernels are compiled and used, one
    warning says the cache cannot be written (a raw OSError ended the fit before)."""
    if how == "file-size limit":
        res = _small_kernels(tmp_path / "numba-cache", _no_file_writes)
    else:
        cache = _copy_of(filled_cache, tmp_path)
        entries = glob.glob(str(cache / "*" / "*.nbc"))
        assert len(entries) >= 2, entries
        for f in entries:  # loading one is a miss, saving it fails
            os.remove(f)
            os.mkdir(f)
        res = _small_kernels(cache)
    assert res.returncode == 0, res.stderr[-3000:]
    assert json.loads(res.stdout) == {"codes": [1, 0, 1, 2], "first": 1}
    lines = [line for line in res.stderr.splitlines()
             if "cannot write to the numba cache" in line]
    assert len(lines) == 1, res.stderr  # once per cache directory, not once per kernel
    assert "Traceback" not in res.stderr, res.stderr


@pytest.mark.parametrize("entry, kind", [("nbi", "fifo"), ("nbc", "fifo"),
                                         ("nbi", "link to /dev/zero"),
                                         ("nbc", "huge sparse file")])
def test_cache_entries_that_are_special_files_are_misses(tmp_path, filled_cache, kind,
                                                         entry):
    """An index or data file that is a FIFO (opening it blocked the fit forever), a link
    to ``/dev/zero`` (read without end) or a file larger than any entry: never opened
    or read, a miss; the fit succeeds and the entry is rewritten as a file."""
    from fastgen.kernels import _cache

    cache = _copy_of(filled_cache, tmp_path)
    entries = sorted(glob.glob(str(cache / "*" / f"*.{entry}")))
    assert len(entries) >= 2, entries
    for f in entries:
        os.remove(f)
        if kind == "fifo":
            os.mkfifo(f)
        elif kind == "link to /dev/zero":
            os.symlink("/dev/zero", f)
        else:
            with open(f, "wb") as fh:
                fh.truncate(_cache.MAX_ENTRY_BYTES + 1)
    res = _small_kernels(cache, timeout=900)  # a timeout is the hang
    assert res.returncode == 0, res.stderr[-3000:]
    assert json.loads(res.stdout) == {"codes": [1, 0, 1, 2], "first": 1}
    lines = [line for line in res.stderr.splitlines() if "numba cache entry" in line]
    assert len(lines) == 1, res.stderr
    assert all(stat.S_ISREG(os.lstat(f).st_mode) for f in entries)  # rewritten


# ------------------------------------------------------ the envelope, property-tested

_NAME = {"fastgen": "1.0", "numba": "0.68.1", "index": "moments.k-10.py311.nbi",
         "kind": "data", "data": "moments.k-10.py311.1.nbc", "key": "(float64,)"}


@settings(max_examples=300, deadline=None)
@given(payload=st.binary(min_size=1, max_size=300), data=st.data())
def test_any_damage_to_a_sealed_entry_is_caught(payload, data):
    """Bytes overwritten at any offset and length, bytes appended or cut: never the
    payload back (so nothing damaged is unpickled or linked)."""
    from fastgen.kernels._cache import _opened, _sealed, _Stale

    sealed = _sealed(payload, _NAME)
    assert bytes(_opened(sealed, _NAME)) == payload
    raw = bytearray(sealed)
    at = data.draw(st.integers(0, len(raw) - 1), label="offset")
    n = data.draw(st.integers(1, min(64, len(raw) - at)), label="length")
    new = data.draw(st.binary(min_size=n, max_size=n), label="bytes")
    raw[at:at + n] = new
    raw += data.draw(st.binary(max_size=2), label="appended")
    raw = raw[:len(raw) - data.draw(st.integers(0, 2), label="cut")]
    if bytes(raw) == sealed:
        return
    with pytest.raises((ValueError, _Stale)):
        _opened(bytes(raw), _NAME)


@pytest.mark.parametrize("field, value", [("index", "moments.other-99.py311.nbi"),
                                          ("data", "moments.k-10.py311.2.nbc"),
                                          ("key", "(float32,)"), ("kind", "index")])
def test_an_entry_of_another_kernel_or_signature_is_refused(field, value):
    from fastgen.kernels._cache import _opened, _sealed

    with pytest.raises(ValueError, match="it holds the entry"):
        _opened(_sealed(b"payload", dict(_NAME, **{field: value})), _NAME)


@pytest.mark.parametrize("field", ["fastgen", "numba"])
def test_another_versions_entry_is_a_quiet_miss(field):
    from fastgen.kernels._cache import _opened, _sealed, _Stale

    with pytest.raises(_Stale):
        _opened(_sealed(b"payload", dict(_NAME, **{field: "9.9"})), _NAME)
    with pytest.raises(_Stale):  # numba's own layout, or an older fastgen's
        _opened(b"\x80\x05K\x01.", _NAME)
