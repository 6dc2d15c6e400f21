"""Files replaced whole or not at all: :func:`atomic_write`, used by every file fastgen
writes (``save_params`` and the command line's outputs).

A writer that dies at any moment (an exception, SIGKILL, a full disk) leaves the target
as it was or as the complete new file, never a mixture.  The data go to a temporary
file in the target's directory (``.NAME.<random>.tmp``), which is flushed and fsync'ed
and then renamed onto the target with ``os.replace`` (atomic within a filesystem); the
directory is then fsync'ed where the platform allows, so that the rename itself is on
disk.  After an exception the temporary file is removed; after SIGKILL or a power cut
it may stay behind (the target is still whole), and can be deleted.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat

__all__ = ["atomic_write", "TEMP_SUFFIX"]

#: the suffix of the temporary files (``.NAME.<12 hex digits>.tmp``)
TEMP_SUFFIX = ".tmp"

_MODES = {"wb": "wb", "w": "w"}


def _fsync_dir(path):
    """fsync a directory so a rename in it is durable (not possible everywhere)."""
    try:
        fd = os.open(path or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # e.g. filesystems that do not fsync directories
        pass
    finally:
        os.close(fd)


def _create_temp(target):
    """Open a fresh temporary file beside ``target``; return (fd, path).

    Created with mode 0o666 less the umask, as ``open(target, "w")`` would create it.
    """
    folder, base = os.path.split(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = os.path.join(folder, f".{base}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target!r}")


@contextlib.contextmanager
def atomic_write(path, mode="wb", *, encoding=None, newline=None):
    """Context manager: a file object whose contents replace ``path`` in one step on exit.

    On a normal exit the file is flushed, fsync'ed and renamed onto ``path``; an
    exception inside the block leaves ``path`` untouched and removes the temporary file.
    An existing target keeps its permission bits; a symbolic link is written through
    (its target is replaced), as ``open`` would.  A target that exists but is not a
    regular file (``/dev/null``, a FIFO, ``/dev/stdout``) cannot be replaced and is
    opened and written directly.

    Parameters
    ----------
    path : str or os.PathLike
    mode : {"wb", "w"}
        Binary or text.
    encoding, newline : str, optional
        As for :func:`open`, text mode only.
    """
    if mode not in _MODES:
        raise ValueError(f"atomic_write mode must be 'wb' or 'w'; got {mode!r}")
    target = os.path.realpath(os.fspath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(target, mode, encoding=encoding, newline=newline) as f:
            yield f
        return
    fd, tmp = _create_temp(target)
    try:
        if st is not None:  # keep the target's permission bits
            if hasattr(os, "fchmod"):
                os.fchmod(fd, stat.S_IMODE(st.st_mode))
            else:
                os.chmod(tmp, stat.S_IMODE(st.st_mode))
        f = os.fdopen(fd, mode, encoding=encoding, newline=newline)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    try:
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(os.path.dirname(target))
