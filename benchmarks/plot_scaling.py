"""Plot the scaling CSV written by ``compare.py --threads ... --out PATH.csv``.

Two panels, one line per workload (thread counts on a log2 axis):

* left: fastgen's strong-scaling speed-up, seconds at the fewest threads measured over
  seconds at t, with the ideal line (speed-up = t / fewest threads);
* right: fastgen's speed-up over its peer (peer seconds / fastgen seconds) at t threads.

Rows that are not measured at two thread counts or more (W10) are left out.

Usage::

    python benchmarks/plot_scaling.py results/scaling.csv [-o scaling.png] [--title T]
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict


def load(path):
    """{workload: {threads: {impl: seconds}}} from the CSV."""
    data = defaultdict(lambda: defaultdict(dict))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            data[row["workload"]][int(row["threads"])][row["impl"]] = float(row["seconds"])
    return data


def series(data):
    """Per workload (in file order): thread counts, strong-scaling factors of fastgen
    and speed-ups over the peer, for workloads with fastgen and peer at ≥ 2 counts."""
    out = {}
    for wl, by_t in data.items():
        ts = sorted(t for t, r in by_t.items() if "fastgen" in r and "peer" in r)
        if len(ts) < 2:
            continue
        base = by_t[ts[0]]["fastgen"]
        out[wl] = (ts, [base / by_t[t]["fastgen"] for t in ts],
                   [by_t[t]["peer"] / by_t[t]["fastgen"] for t in ts])
    return out


def short(label):
    """The workload's id and what it does, without the sizes."""
    for cut in (" n=", " CSR "):
        label = label.split(cut)[0]
    return label


def plot(data, png, title=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ser = series(data)
    if not ser:
        raise SystemExit("no workload measured at two thread counts or more")
    all_t = sorted({t for ts, _, _ in ser.values() for t in ts})
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 5.2))
    cmap = plt.get_cmap("tab20")
    for i, (wl, (ts, scale, speed)) in enumerate(ser.items()):
        c = cmap(i % 20)
        ax1.plot(ts, scale, "o-", color=c, label=short(wl))
        ax2.plot(ts, speed, "o-", color=c, label=short(wl))
    t0 = all_t[0]
    ax1.plot(all_t, [t / t0 for t in all_t], "k--", lw=1, label="ideal")
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xticks(all_t)
        ax.set_xticklabels([str(t) for t in all_t])
        ax.set_xlabel("threads")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.grid(True, which="both", alpha=0.3)
    ax1.set_ylabel(f"fastgen speed-up over {t0} thread{'s' if t0 > 1 else ''}")
    ax1.set_title("strong scaling")
    ax2.set_ylabel("speed-up over the peer (same thread count)")
    ax2.set_title("fastgen vs scikit-learn")
    ax2.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ax1.legend(fontsize=7, loc="upper left", handles=ax1.get_lines()[-1:])
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)
    return png


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="CSV from compare.py --threads ... --out")
    ap.add_argument("-o", "--output", help="PNG path (default: the CSV's path, .png)")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    png = args.output or (args.csv[:-4] if args.csv.endswith(".csv") else args.csv) + ".png"
    print(plot(load(args.csv), png, args.title))
    return 0


if __name__ == "__main__":
    sys.exit(main())
