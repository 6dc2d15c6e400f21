"""A 2-D ``.npy`` file as a Dask array read chunk by chunk from disk."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np

__all__ = ["from_npy"]


class _NpyFile:
    """A 2-D C-order ``.npy`` file as an array-like whose ``__getitem__`` reads rows
    into a fresh buffer with ``pread`` (nothing stays mapped; picklable by path)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            major, _ = np.lib.format.read_magic(f)
            read = (np.lib.format.read_array_header_1_0 if major == 1
                    else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read(f)
            self.offset = f.tell()
        if fortran or len(shape) != 2 or dtype.hasobject:
            raise ValueError(f"{path} must hold a 2-D C-order numeric array")
        self.path, self.shape, self.dtype, self.ndim = str(path), shape, dtype, 2

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        start, stop, step = key[0].indices(self.shape[0])
        out = np.empty((max(0, stop - start), self.shape[1]), dtype=self.dtype)
        rowbytes = self.shape[1] * self.dtype.itemsize
        with open(self.path, "rb", buffering=0) as f:
            f.seek(self.offset + start * rowbytes)
            view, got = memoryview(out).cast("B"), 0
            while got < view.nbytes:
                k = f.readinto(view[got:])
                if not k:
                    raise ValueError(f"{self.path} is shorter than its header says")
                got += k
        if step != 1:
            out = out[::step]
        return out[(slice(None),) + key[1:]] if len(key) > 1 else out


def from_npy(path, chunk_rows: int):
    """A Dask array over a 2-D ``.npy`` file, read chunk by chunk from disk.

    Each task reads its ``chunk_rows`` rows into a fresh buffer, so memory holds only
    the chunks being processed.  (``da.from_array(np.load(path, mmap_mode="r"))``
    copies the whole memmap into memory in recent Dask versions, and the pages of a
    memmap count towards the process's RSS while mapped.)

    Parameters
    ----------
    path : str or path-like
        The file, as written by ``np.save`` or ``np.lib.format.open_memmap``.
    chunk_rows : int
        Rows per block (all columns in one block).

    Returns
    -------
    dask.array.Array
    """
    f = _NpyFile(path)
    return da.from_array(f, chunks=(int(chunk_rows), f.shape[1]), asarray=True, lock=False,
                         name=f"from_npy-{dask.base.tokenize(f.path, f.shape, f.dtype.str)}")

