"""W12: out-of-core GDA through fastgen.dask on an on-disk array, against the read rate.

Writes an ``.npy`` array of ``--gb`` GB (``np.lib.format.open_memmap``, filled chunk
by chunk) and its labels, then, in one run:

1. reads the file once sequentially (64 MB ``readinto``): the plain read rate;
2. fits pooled and per-class GDA with :mod:`fastgen.dask` on
   ``da.from_array(memmap, chunks=...)`` (threaded scheduler);
3. fits both again by a sequential chunked merge in memory (``class_moments`` per chunk,
   ``merge_moments``) and reports the largest relative difference.

Before each pass the file's pages are dropped from the page cache (``drop_caches`` when
run as root, else ``posix_fadvise(DONTNEED)`` on the file, which needs no privileges),
so every pass reads the disk.  Peak RSS is that of the process tree (psutil when
available, else ``/proc``), sampled every 20 ms.  File-backed pages of the memmap count
towards RSS while mapped, and recent Dask versions copy a memmap passed to
``da.from_array`` into memory, so the default ``--source npy`` uses
``fastgen.dask.from_npy`` (each task reads its chunk into a fresh buffer);
``--source memmap`` (or ``both``) is for files that fit in memory.

Usage::

    python benchmarks/out_of_core.py --gb 2 [--dtype float32|float64] [--dir PATH]
        [--d 32] [--classes 10] [--chunk-mb 64] [--source npy|memmap|both] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time

import numpy as np

try:
    import psutil
except ImportError:  # pragma: no cover
    psutil = None


# --------------------------------------------------------------------------- memory


def _tree_rss(pid):
    if psutil is not None:
        try:
            p = psutil.Process(pid)
            procs = [p] + p.children(recursive=True)
        except psutil.NoSuchProcess:
            return 0
        total = 0
        for q in procs:
            try:
                total += q.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return total
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            pids += [int(c) for c in f.read().split()]
    except OSError:
        pass
    total = 0
    for q in pids:
        try:
            with open(f"/proc/{q}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
    return total


class PeakRSS:
    """Peak RSS of this process and its children while the context is open."""

    def __init__(self, interval=0.02):
        self.interval = interval
        self.peak = 0

    def __enter__(self):
        self._stop = threading.Event()
        self.peak = _tree_rss(os.getpid())

        def run():
            while not self._stop.is_set():
                self.peak = max(self.peak, _tree_rss(os.getpid()))
                self._stop.wait(self.interval)

        self._t = threading.Thread(target=run, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, _tree_rss(os.getpid()))


# --------------------------------------------------------------------------- files


def drop_cache(paths):
    """Evict the files' pages from the page cache; returns the method that worked."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return "drop_caches"
    except OSError:
        pass
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd) if os.access(p, os.W_OK) else None
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return "fadvise"


def write_data(directory, gb, dtype, d, K, chunk_rows, seed=0):
    """X (n, d) and y (n,) int8 as .npy files; written chunk by chunk."""
    itemsize = np.dtype(dtype).itemsize
    n = int(gb * 1e9) // (d * itemsize)
    xp, yp = os.path.join(directory, "X.npy"), os.path.join(directory, "y.npy")
    X = np.lib.format.open_memmap(xp, mode="w+", dtype=dtype, shape=(n, d))
    Y = np.lib.format.open_memmap(yp, mode="w+", dtype=np.int8, shape=(n,))
    rng = np.random.default_rng(seed)
    # one random base block, shifted per chunk: generating 32 GB of normals would
    # dominate the run, and the fit cost does not depend on the values
    base = rng.standard_normal((chunk_rows, d))
    ybase = rng.integers(0, K, chunk_rows).astype(np.int8)
    centres = rng.standard_normal((K, d)) * 3.0
    base += centres[ybase]
    for c, s in enumerate(range(0, n, chunk_rows)):
        e = min(n, s + chunk_rows)
        X[s:e] = base[: e - s] + 1e-3 * c
        Y[s:e] = np.roll(ybase, c)[: e - s]
    X.flush()
    Y.flush()
    del X, Y
    return xp, yp, n


def plain_read(path, block=64 << 20):
    buf = bytearray(block)
    total = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            k = f.readinto(buf)
            if not k:
                break
            total += k
    return total


# --------------------------------------------------------------------------- run


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gb", type=float, required=True)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--d", type=int, default=32)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--chunk-mb", type=float, default=64.0)
    ap.add_argument("--source", choices=["memmap", "npy", "both"], default="npy")
    ap.add_argument("--keep", action="store_true", help="keep the data files")
    args = ap.parse_args(argv)

    import dask
    import dask.array as da

    import fastgen
    import fastgen.dask as fd

    directory = tempfile.mkdtemp(prefix="fastgen_w12_", dir=args.dir)
    itemsize = np.dtype(args.dtype).itemsize
    chunk_rows = max(1, int(args.chunk_mb * 2**20) // (args.d * itemsize))
    need = args.gb * 1e9 * 1.02
    free = shutil.disk_usage(directory).free
    if free < need:
        sys.exit(f"not enough disk in {directory}: {free / 1e9:.1f} GB free, "
                 f"{need / 1e9:.1f} GB needed")
    try:
        t = time.perf_counter()
        xp, yp, n = write_data(directory, args.gb, args.dtype, args.d, args.classes,
                               chunk_rows)
        t_write = time.perf_counter() - t
        size = os.path.getsize(xp)
        print(f"wrote {size / 1e9:.2f} GB ({n} rows x {args.d} {args.dtype}, "
              f"{args.classes} classes) in {t_write:.1f} s; chunk {chunk_rows} rows "
              f"({args.chunk_mb:g} MB); RAM {_ram_gb():.1f} GB", flush=True)
        # warm the kernels on a small slice so compile time is not counted
        small = np.load(xp, mmap_mode="r")[:2000]
        ys = np.load(yp)[:2000]
        for cov in ("pooled", "per_class"):
            fd.fit_gda(da.from_array(np.array(small), chunks=(1000, args.d)), ys, cov)
        del small
        y = np.load(yp, mmap_mode="r")

        rows = []
        how = drop_cache([xp, yp])
        t = time.perf_counter()
        with PeakRSS() as mem:
            nbytes = plain_read(xp)
        t_read = time.perf_counter() - t
        rate = nbytes / t_read
        rows.append(("plain sequential read", t_read, nbytes / t_read, mem.peak))
        print(f"cache drop: {how}; plain read {t_read:.1f} s, {rate / 1e9:.2f} GB/s, "
              f"peak RSS {mem.peak / 2**30:.2f} GiB", flush=True)

        fits = {}
        sources = ("memmap", "npy") if args.source == "both" else (args.source,)
        for source, cov in [(s, c) for s in sources for c in ("pooled", "per_class")]:
            drop_cache([xp, yp])
            if source == "memmap":
                src = np.load(xp, mmap_mode="r")
                Xd = da.from_array(src, chunks=(chunk_rows, args.d))
            else:
                src = None
                Xd = fd.from_npy(xp, chunk_rows)
            yd = da.from_array(y, chunks=(chunk_rows,))
            t = time.perf_counter()
            with PeakRSS() as mem, dask.config.set(scheduler="threads"):
                fits[cov] = fd.fit_gda(Xd, yd, cov)
            dt = time.perf_counter() - t
            del Xd, src
            rows.append((f"fastgen.dask fit_gda {cov}, {source}", dt, size / dt, mem.peak))
            print(f"{cov} ({source}): {dt:.1f} s, {size / dt / 1e9:.2f} GB/s "
                  f"({100 * size / dt / rate:.0f}% of read), peak RSS "
                  f"{mem.peak / 2**30:.2f} GiB", flush=True)

        # reference: sequential chunked merge in memory (one read for both kinds)
        drop_cache([xp, yp])
        X = np.load(xp, mmap_mode="r")
        t = time.perf_counter()
        mp = mc = None
        for s in range(0, n, chunk_rows):
            xb, yb = np.array(X[s:s + chunk_rows]), np.array(y[s:s + chunk_rows])
            a = fastgen.class_moments(xb, yb, kind="pooled")
            b = fastgen.class_moments(xb, yb, kind="per_class")
            mp = a if mp is None else fastgen.merge_moments(mp, a)
            mc = b if mc is None else fastgen.merge_moments(mc, b)
        t_ref = time.perf_counter() - t
        del X
        diffs = {}
        for cov, m in (("pooled", mp), ("per_class", mc)):
            ref = fastgen.gda_from_moments(m, cov)
            diffs[cov] = max(_rel(ref.means.astype(np.float64),
                                  fits[cov].means.astype(np.float64)),
                             _rel(ref.covariance.astype(np.float64),
                                  fits[cov].covariance.astype(np.float64)))
        print(f"reference chunked merge (both kinds) {t_ref:.1f} s; max relative "
              f"difference pooled {diffs['pooled']:.1e}, per_class "
              f"{diffs['per_class']:.1e}", flush=True)

        print()
        print(f"| W12, {size / 1e9:.1f} GB {args.dtype}, n={n}, d={args.d}, "
              f"K={args.classes} | wall s | GB/s | % of read | "
              f"peak RSS GiB |")
        print("|---|---|---|---|---|")
        for name, sec, r, peak in rows:
            print(f"| {name} | {sec:.1f} | {r / 1e9:.2f} | {100 * r / rate:.0f}% | "
                  f"{peak / 2**30:.2f} |")
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


def _ram_gb():
    if psutil is not None:
        return psutil.virtual_memory().total / 1e9
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9


if __name__ == "__main__":
    main()
