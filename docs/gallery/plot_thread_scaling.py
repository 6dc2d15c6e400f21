"""Plot thread scaling from a CSV with the columns workload,threads,seconds.

Left: speed-up over the run with the fewest threads, against the ideal line; right:
seconds per workload.  Works for any number of thread counts, so a CSV from a many-core
run (``benchmarks/compare.py --threads`` or ``measure_thread_scaling.py --threads
1,2,4,8,16``) gives the full picture; the committed ``thread_scaling.csv`` is 2-core data.

    python docs/gallery/plot_thread_scaling.py [CSV] [-o PNG] [--title TEXT]
"""

import argparse
import csv
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def read(path):
    data = defaultdict(dict)
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = {"workload", "threads", "seconds"} - set(reader.fieldnames or ())
        if missing:
            raise SystemExit(f"{path}: missing column(s) {sorted(missing)}")
        for row in reader:
            data[row["workload"]][int(row["threads"])] = float(row["seconds"])
    return data


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?", default=os.path.join(HERE, "thread_scaling.csv"))
    ap.add_argument("-o", "--output", default=os.path.join(HERE, "thread_scaling.png"))
    ap.add_argument("--title", default="fastgen thread scaling (2-core machine)")
    args = ap.parse_args(argv)
    data = read(args.csv)
    threads = sorted({t for d in data.values() for t in d})
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5.5))
    markers = "osD^vP*Xh<>"
    for i, (name, d) in enumerate(sorted(data.items())):
        ts = sorted(d)
        base = d[ts[0]] * ts[0]
        ax1.plot(ts, [base / d[t] for t in ts], marker=markers[i % len(markers)], label=name)
        ax2.plot(ts, [d[t] for t in ts], marker=markers[i % len(markers)], label=name)
    ax1.plot(threads, threads, color="0.5", ls="--", label="ideal")
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(threads, [str(t) for t in threads])
        ax.set_xlabel("NUMBA_NUM_THREADS")
        ax.grid(True, which="both", alpha=0.3)
    ax1.set_yscale("log", base=2)
    ax1.set_ylabel(f"speed-up over {threads[0]} thread(s)")
    ax2.set_yscale("log")
    ax2.set_ylabel("seconds (median of warm calls)")
    ax1.legend(fontsize=8, loc="upper left")
    fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.output, dpi=90)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
