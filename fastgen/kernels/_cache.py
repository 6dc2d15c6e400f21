"""numba's on-disk cache for the kernels: a writable location, entries checked before
numba loads them (damaged or misplaced ones are misses), a bounded wait for the save
lock, and parallel start-up hooks kept when cached code is loaded.

Items 2 to 4 of the process set-up listed in :mod:`fastgen._runtime`, applied by
:func:`fastgen.kernels._setup.configure_numba` before the first kernel is decorated.
Each function is idempotent and may be called again (tests do).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import stat
import struct
import sys

from ._notice import RuntimeSetupWarning, logger, warn_at_caller

__all__ = [
    "TESTED_NUMBA",
    "LOCK_WAIT_SECONDS",
    "cache_enabled",
    "ensure_writable_cache",
    "tolerate_corrupt_cache",
    "keep_parallel_init_on_cache_load",
]


# ------------------------------------------------------------------ cache location

# this directory: numba stores the kernels' cache in its __pycache__ by default
_KERNELS = os.path.dirname(os.path.abspath(__file__))


def _writable_dir(path: str) -> bool:
    """True if ``path`` exists or can be created, and a file can be written in it
    (what numba's ``ensure_cache_path`` checks)."""
    import tempfile

    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
        return True
    except OSError:
        return False


def _user_wide_cache_dir() -> str:
    from numba.misc.appdirs import user_cache_dir  # light: no compiler import

    return user_cache_dir(appname="numba", appauthor=False)


def _private_temp_dir() -> str | None:
    """A per-user directory under the temp dir that only this user owns and can write."""
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else None
    base = os.path.join(tempfile.gettempdir(), f"fastgen-numba-cache-{uid}")
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        st = os.stat(base)
        if (uid is None or st.st_uid == uid) and _writable_dir(base):
            return base
    except OSError:
        pass
    try:  # the predictable name is taken by someone else: a fresh private directory
        return tempfile.mkdtemp(prefix="fastgen-numba-cache-")
    except OSError:
        return None


def ensure_writable_cache() -> str | None:
    """Set ``NUMBA_CACHE_DIR`` to a private temp directory if numba has nowhere to write.

    Returns the directory chosen, or None when numba's own choice works (or nothing
    writable exists at all, in which case numba's error is left to speak).
    """
    if _writable_dir(os.path.join(_KERNELS, "__pycache__")):
        return None
    user_dir = os.environ.get("NUMBA_CACHE_DIR", "")
    if user_dir and _writable_dir(user_dir):
        return None
    if not user_dir:
        try:
            if _writable_dir(_user_wide_cache_dir()):
                return None
        except Exception:  # noqa: BLE001 - appdirs failing means "not usable"
            pass
    path = _private_temp_dir()
    if path is None:
        return None
    os.environ["NUMBA_CACHE_DIR"] = path
    config = sys.modules.get("numba.core.config")
    if config is not None:  # numba already imported: it read the variable at import
        config.CACHE_DIR = path
    return path


# ----------------------------------------------------------------- damaged cache files
#
# numba unpickles the index (.nbi) and data (.nbc) files and hands the compiled code to
# LLVM without checking them: a damaged file (a full disk, a killed process on a
# filesystem without atomic rename, a copied tree, a bad sector) raises from the first
# call of its kernel, or crashes the process inside LLVM, and an entry copied over
# another kernel's reaches numba's dispatcher with the wrong signature.  fastgen writes
# its own kernels' files inside an envelope (:func:`_sealed`): a header naming the entry
# (kind, fastgen and numba versions, the kernel's index name, which holds its qualified
# name; for data, the data file and the full signature key) and a BLAKE2b digest of
# that name and the whole payload, with the payload's exact length.  The envelope is
# checked (:func:`_opened`) before numba unpickles or links anything: a damaged or
# misplaced entry is a cache miss, recompiled and rewritten.  Other libraries' cache
# files are untouched.

#: numba versions (major, minor), inclusive, on which the cache-file wrap was tested:
#: the wrapped methods and their behaviour are the same from 0.60 to 0.68.
TESTED_NUMBA = ((0, 60), (0, 68))

_PATCHED = False

# The envelope: this magic, the lengths of the name and the payload (<IQ), the digest,
# the name (JSON), the payload.  Files without it (numba's own layout, or written by an
# older fastgen) are misses.
_MAGIC = b"fastgen-numba-cache-3\n"
_LENGTHS = struct.Struct("<IQ")
_DIGEST_SIZE = 32
_HEAD = len(_MAGIC) + _LENGTHS.size + _DIGEST_SIZE

#: Seconds a save waits for another process's lock on a cache directory before it
#: gives up and leaves the entry unsaved (a stopped job or a hung notebook holding it).
LOCK_WAIT_SECONDS = 10.0

#: The largest cache file read (bytes); a larger one is a damaged entry (a miss).
MAX_ENTRY_BYTES = 1 << 30

_reported = False
_stuck_locks = set()  # cache directories whose lock timed out: later saves do not wait
_unwritable = set()  # cache directories a save failed in: reported once


class _Stale(Exception):
    """An entry of another fastgen or numba version, or without fastgen's envelope: a
    quiet miss, like numba's own stale entries."""


def _numba_minor(version: str) -> tuple[int, int] | None:
    try:
        major, minor = version.split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return None


def _is_fastgen_cache(cache_file) -> bool:
    import hashlib

    path = os.path.abspath(getattr(cache_file, "_cache_path", ""))
    if path == os.path.join(_KERNELS, "__pycache__"):
        return True
    # numba names user-provided and user-wide cache subdirectories <dir>_<sha1(dir)>
    tag = "kernels_" + hashlib.sha1(_KERNELS.encode()).hexdigest()
    return os.path.basename(path) == tag


@functools.lru_cache(maxsize=1)
def _fastgen_version() -> str:
    """fastgen's version, read as ``fastgen._version`` reads it (the kernels import
    nothing of fastgen outside themselves)."""
    from importlib import metadata

    try:
        return metadata.version("fastgen")
    except metadata.PackageNotFoundError:  # a source tree on PYTHONPATH
        return "source tree " + os.path.dirname(_KERNELS)


def _entry_name(cache_file, *extra) -> dict:
    """What a cache file holds: the kind, versions and the kernel's index name
    (``<module>.<qualname>-<line>.pyXY.nbi``), plus the data file and key for data."""
    import numba

    name = {"fastgen": _fastgen_version(), "numba": numba.__version__,
            "index": os.path.basename(cache_file._index_path)}
    if extra:
        data_name, key = extra
        name.update(kind="data", data=data_name, key=repr(key))
    else:
        name["kind"] = "index"
    return name


def _digest(lengths: bytes, name: bytes, payload) -> bytes:
    import hashlib

    h = hashlib.blake2b(digest_size=_DIGEST_SIZE)
    for part in (lengths, name, payload):
        h.update(part)
    return h.digest()


def _sealed(payload: bytes, name: dict) -> bytes:
    """``payload`` in fastgen's envelope, bound to the entry ``name``."""
    ident = json.dumps(name, sort_keys=True).encode()
    lengths = _LENGTHS.pack(len(ident), len(payload))
    return b"".join((_MAGIC, lengths, _digest(lengths, ident, payload), ident, payload))


def _opened(raw: bytes, name: dict):
    """The payload of a sealed file, after checking that it is whole, undamaged and the
    entry ``name``: a ValueError when damaged or misplaced, :class:`_Stale` for another
    version's entry or a file without the envelope."""
    if not raw.startswith(_MAGIC):
        raise _Stale("no fastgen envelope")
    if len(raw) < _HEAD:
        raise ValueError(f"a truncated envelope ({len(raw)} bytes)")
    lengths = raw[len(_MAGIC):len(_MAGIC) + _LENGTHS.size]
    n_ident, n_payload = _LENGTHS.unpack(lengths)
    if len(raw) != _HEAD + n_ident + n_payload:
        raise ValueError(f"{len(raw)} bytes where its envelope says "
                         f"{_HEAD + n_ident + n_payload}")
    view = memoryview(raw)
    ident = view[_HEAD:_HEAD + n_ident]
    payload = view[_HEAD + n_ident:]
    if _digest(lengths, ident, payload) != raw[_HEAD - _DIGEST_SIZE:_HEAD]:
        raise ValueError("the envelope's digest does not match the content")
    stored = json.loads(bytes(ident))
    if stored.get("fastgen") != name["fastgen"] or stored.get("numba") != name["numba"]:
        raise _Stale("another version's entry")
    if stored != name:
        what = stored.get("data") or stored.get("index")
        raise ValueError(f"it holds the entry {what!r}, not {name.get('data') or name['index']!r}"
                         + (" (another signature)" if what == name.get("data") else ""))
    return payload


def _read_sealed(path, name):
    """The payload of the sealed file ``path``; FileNotFoundError passes through.

    Only a regular file of at most :data:`MAX_ENTRY_BYTES` is read: a FIFO would block
    the fit (it is never opened), a link to ``/dev/zero`` be read without end; either
    is a ValueError, a damaged entry (a miss, rewritten by the save)."""
    _check_entry(path, os.stat(path))  # before opening: opening a FIFO blocks
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        _check_entry(path, st)  # what was opened, should the path have been swapped
        raw = f.read(st.st_size + 1)
    return _opened(raw, name)


def _check_entry(path, st) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise ValueError("not a regular file")
    if st.st_size > MAX_ENTRY_BYTES:
        raise ValueError(f"{st.st_size} bytes, more than the {MAX_ENTRY_BYTES} a cache "
                         f"entry may hold")


def _report_bad_entry(where, exc) -> None:
    """Log the first unreadable cache entry of the process at WARNING, later ones at
    DEBUG."""
    global _reported
    level = logging.DEBUG if _reported else logging.WARNING
    _reported = True
    logger().log(
        level, "fastgen: unreadable numba cache entry %s (%s: %s); the kernel is "
        "recompiled and the entry rewritten where the cache is writable%s", where,
        type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "",
        "" if level == logging.DEBUG else " (further ones are logged at DEBUG)")


def _report_unwritable(path, exc) -> None:
    """Log once per cache directory that a kernel could not be saved in it (the
    kernel is compiled and used all the same; numba's own save would raise)."""
    if path in _unwritable:
        return
    _unwritable.add(path)
    logger().warning(
        "fastgen: cannot write to the numba cache %s (%s: %s); kernels are compiled "
        "without being saved there", path, type(exc).__name__,
        exc.strerror or str(exc).splitlines()[0] if str(exc) else "")


@contextlib.contextmanager
def _cache_dir_lock(path):
    """Hold an exclusive lock shared with other processes on the cache directory
    ``path`` (``flock`` of ``.fastgen-save.lock`` in it).  Yields True when held, or
    where flock or the lock file is unavailable (numba's own behaviour: save
    unlocked); False when another process held it for :data:`LOCK_WAIT_SECONDS` (the
    caller then does not save, and later saves to ``path`` do not wait)."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield True
        return
    try:
        fd = os.open(os.path.join(path, ".fastgen-save.lock"), os.O_RDWR | os.O_CREAT,
                     0o666)
    except OSError:
        yield True
        return
    try:
        yield _flock_within(fcntl, fd, path)
    finally:
        os.close(fd)  # releases the lock


def _flock_within(fcntl, fd, path) -> bool:
    """Take the lock on ``fd``, waiting at most :data:`LOCK_WAIT_SECONDS` (none for a
    directory whose lock timed out before); True when held or when locks are
    unavailable."""
    import time

    wait = 0.0 if path in _stuck_locks else LOCK_WAIT_SECONDS
    deadline = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                break
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 0.2)
        except OSError:  # e.g. a network file system without locks
            return True
    if path not in _stuck_locks:
        _stuck_locks.add(path)
        logger().warning(
            "fastgen: another process has held the numba cache lock %s for %g s (a "
            "stopped job or a hung notebook?); kernels compiled here are not saved to "
            "that cache until it is released", os.path.join(path, ".fastgen-save.lock"),
            wait)
    return False


def _unsupported_reason(numba_module, caching_module) -> str | None:
    """Why the wrap cannot be applied here, or None when it can."""
    version = getattr(numba_module, "__version__", "")
    minor = _numba_minor(version)
    lo, hi = TESTED_NUMBA
    if minor is None or not lo <= minor <= hi:
        return (f"numba {version} is outside the versions fastgen's cache-file wrap was "
                f"tested with ({lo[0]}.{lo[1]} to {hi[0]}.{hi[1]})")
    cls = getattr(caching_module, "IndexDataCacheFile", None)
    needs = ("load", "save", "_load_index", "_save_index", "_data_path", "_data_name",
             "_dump", "_open_for_write")
    if cls is None or not all(callable(getattr(cls, name, None)) for name in needs):
        return (f"numba {version} lacks IndexDataCacheFile.load/save/_load_index/"
                "_save_index, which fastgen's cache-file wrap needs")
    cache = getattr(caching_module, "Cache", None)
    if cache is None or not all(callable(getattr(cache, name, None))
                                for name in ("load_overload", "save_overload")):
        return (f"numba {version} lacks Cache.load_overload/save_overload, which "
                "fastgen's cache-file wrap needs")
    return None


def cache_enabled() -> bool:
    """Whether fastgen's kernels use numba's on-disk cache: only where the cache-file
    wrap is in place (:func:`tolerate_corrupt_cache`), so that no unchecked entry can
    reach LLVM.  Elsewhere the kernels compile in every process."""
    return tolerate_corrupt_cache()


def tolerate_corrupt_cache() -> bool:
    """Make numba check fastgen's cache entries before it loads them (idempotent).

    Returns True when the wrap is in place.  On a numba version outside
    :data:`TESTED_NUMBA` (or without the private methods) nothing is changed and one
    :class:`RuntimeSetupWarning` says so: fastgen's kernels are then compiled in every
    process, without numba's on-disk cache (:func:`cache_enabled`), since numba's own
    loading would hand a damaged entry to LLVM.
    """
    global _PATCHED
    if _PATCHED is not False:  # decided already: applied (True) or declined (None)
        return bool(_PATCHED)
    import numba
    from numba.core import caching

    reason = _unsupported_reason(numba, caching)
    if reason is not None:
        _PATCHED = None  # decided: warn once per process, not once per call
        warn_at_caller(f"{reason}; fastgen's kernels are compiled in every process, "
                       "without numba's on-disk cache (which would load a damaged "
                       "cache file unchecked)", RuntimeSetupWarning)
        return False
    cls = caching.IndexDataCacheFile
    load, save = cls.load, cls.save
    load_index, save_index = cls._load_index, cls._save_index
    load_overload = caching.Cache.load_overload
    save_overload = caching.Cache.save_overload

    def _load_index(self):
        if not _is_fastgen_cache(self):
            return load_index(self)
        import pickle

        try:
            payload = _read_sealed(self._index_path, _entry_name(self))
            stamp, overloads = pickle.loads(payload)
        except FileNotFoundError:
            return {}
        except _Stale:
            return {}  # the save rewrites it
        except Exception as exc:  # noqa: BLE001 - damaged or misplaced: a miss
            _report_bad_entry(self._index_path, exc)
            return {}
        caching._cache_log("[cache] index loaded from %r", self._index_path)
        return overloads if stamp == self._source_stamp else {}

    def _save_index(self, overloads):
        if not _is_fastgen_cache(self):
            return save_index(self, overloads)
        payload = self._dump((self._source_stamp, overloads))
        with self._open_for_write(self._index_path) as f:
            f.write(_sealed(payload, _entry_name(self)))
        caching._cache_log("[cache] index saved to %r", self._index_path)
        return None

    def _load(self, key):
        if not _is_fastgen_cache(self):
            return load(self, key)
        import pickle

        data_name = self._load_index().get(key)
        if data_name is None:
            return None
        path = self._data_path(data_name)
        try:
            data = pickle.loads(_read_sealed(path, _entry_name(self, data_name, key)))
        except OSError:  # numba's own miss (a file gone)
            return None
        except _Stale:
            return None
        except Exception as exc:  # noqa: BLE001 - damaged or misplaced: a miss
            _report_bad_entry(path, exc)
            return None
        caching._cache_log("[cache] data loaded from %r", path)
        return data

    def _save(self, key, data):
        if not _is_fastgen_cache(self):
            return save(self, key, data)
        with _cache_dir_lock(self._cache_path) as locked:
            if not locked:
                return None  # compiled, not saved
            overloads = self._load_index()
            data_name = overloads.get(key)
            if data_name is None:  # numba's choice: the first free number
                existing = set(overloads.values())
                number = 1
                while self._data_name(number) in existing:
                    number += 1
                data_name = overloads[key] = self._data_name(number)
                self._save_index(overloads)
            path = self._data_path(data_name)
            sealed = _sealed(self._dump(data), _entry_name(self, data_name, key))
            with self._open_for_write(path) as f:
                f.write(sealed)
            caching._cache_log("[cache] data saved to %r", path)
        return None

    def _load_overload(self, sig, target_context):
        try:
            return load_overload(self, sig, target_context)
        except Exception as exc:  # noqa: BLE001 - e.g. LLVM cannot parse the code
            cache_file = getattr(self, "_cache_file", None)
            if not _is_fastgen_cache(cache_file):
                raise
            name = getattr(getattr(self, "_py_func", None), "__qualname__", "?")
            _report_bad_entry(f"of {name} in {getattr(cache_file, '_cache_path', '?')}",
                              exc)
            return None  # a miss: numba compiles, then save_overload rewrites the entry

    def _save_overload(self, sig, data):
        try:
            return save_overload(self, sig, data)
        except OSError as exc:  # a full disk, EFBIG, an entry that is a directory ...
            cache_file = getattr(self, "_cache_file", None)
            if not _is_fastgen_cache(cache_file):
                raise
            _report_unwritable(getattr(cache_file, "_cache_path", "?"), exc)
            return None  # compiled, not saved: as when the save lock is stuck

    cls._load_index, cls._save_index = _load_index, _save_index
    cls.load, cls.save = _load, _save
    caching.Cache.load_overload = _load_overload
    caching.Cache.save_overload = _save_overload
    _PATCHED = True
    return True


# ------------------------------------------- parallel kernels inside cached user code
#
# A fastgen kernel compiled with ``parallel=True`` carries a "reload init" hook that
# starts numba's threading layer (and registers its scheduling symbols with LLVM) when
# the kernel is loaded.  A function that calls the kernel inherits the hook when it is
# linked, so that its own cache entry starts the threading layer too.  numba (0.68)
# drops the hooks of a function *loaded from the cache*: a user's
# ``@njit(cache=True)`` function compiled in a process where the fastgen kernel came
# from fastgen's cache is saved without the hook, and the next process that loads it
# runs the parallel loop with no threading layer: a segfault (numba issues #8578,
# #9938).  Two repairs, both at cache-load time, no cost at import:
#
# * a rebuilt library keeps the hooks it was saved with, so code linked against it
#   inherits them (the user's cache entry is then complete);
# * an entry saved without the hook (by an unpatched process) whose object code calls
#   numba's parallel scheduler gets the threading layer started before it is linked.

# The parfor scheduler entry (do_scheduling_signed / _unsigned) every parallel loop calls.
_PARFOR_SYMBOL = b"do_scheduling_"
_REBUILD_PATCHED = False
_NUMBA_REBUILD = None  # numba's own CompileResult._rebuild, once patched


def _calls_parallel_scheduler(libdata) -> bool:
    """True if a serialized numba library's object code calls the parfor scheduler
    (one scan of the object code)."""
    try:
        _, kind, data = libdata
        blob = data[0] if kind == "object" else data
        return isinstance(blob, (bytes, bytearray)) and _PARFOR_SYMBOL in blob
    except (TypeError, ValueError, IndexError):
        return False


def keep_parallel_init_on_cache_load() -> None:
    """Make numba's cache load keep parallel-backend init hooks (idempotent; only on
    the numba versions in :data:`TESTED_NUMBA`)."""
    global _REBUILD_PATCHED, _NUMBA_REBUILD
    if _REBUILD_PATCHED:
        return
    import numba
    from numba.core.compiler import CompileResult

    minor = _numba_minor(getattr(numba, "__version__", ""))
    lo, hi = TESTED_NUMBA
    if (minor is None or not lo <= minor <= hi
            or not hasattr(getattr(CompileResult, "_rebuild", None), "__func__")):
        # another numba: leave its cache loading alone (tolerate_corrupt_cache warns
        # once about untested versions already)
        _REBUILD_PATCHED = None
        return

    _NUMBA_REBUILD = rebuild = CompileResult._rebuild.__func__

    def _rebuild(cls, target_context, libdata, fndesc, env, signature, objectmode,
                 lifted, typeann, reload_init, referenced_envs):
        if not reload_init and _calls_parallel_scheduler(libdata):
            from numba.np.ufunc.parallel import _launch_threads

            _launch_threads()
        cr = rebuild(cls, target_context, libdata, fndesc, env, signature, objectmode,
                     lifted, typeann, reload_init, referenced_envs)
        if reload_init:
            cr.library._reload_init.update(reload_init)
        return cr

    CompileResult._rebuild = classmethod(_rebuild)
    _REBUILD_PATCHED = True
