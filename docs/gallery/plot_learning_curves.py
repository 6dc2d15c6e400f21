"""Learning curves of generative classifiers and logistic regression.

Runs ``fastgen curve`` (the README's main job: Ng & Jordan's comparison on
scikit-learn's breast-cancer data, 50 random splits) and writes its plot beside this
script.  Needs the ``cli`` extra (matplotlib, scikit-learn).  About 4 s with compiled
kernels cached, 35 s on a first run (2 cores).

Run ``python docs/gallery/plot_learning_curves.py [DATASET]``, for example
``digits:3v8`` or ``wine``.
"""

import os
import sys

from fastgen.cli import main as fastgen_main

HERE = os.path.dirname(os.path.abspath(__file__))


def main(dataset="breast_cancer"):
    name = dataset.replace(":", "_")
    out = os.path.join(HERE, f"learning_curves_{name}.png")
    return fastgen_main(["curve", "--dataset", dataset, "--plot", out, "--no-progress"])


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
