"""``import fastgen`` imports little; every public name still resolves on first use.

Run in fresh interpreters: the test process itself has imported everything already.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import fastgen

ROOT = str(Path(fastgen.__file__).resolve().parent.parent)

# Modules a plain ``import fastgen`` must leave alone: what only some first calls need.
HEAVY = ("scipy.linalg", "scipy.sparse", "threadpoolctl", "fastgen.kernels.blas",
         "fastgen.naive_bayes", "fastgen.logistic", "fastgen.gda", "fastgen.io",
         "numba.cuda")


def _run(code):
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                         text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_fastgen_leaves_heavy_modules_unimported():
    loaded = _run(
        "import json, sys, numpy, fastgen\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    assert loaded == []


def test_every_public_name_resolves_and_is_listed():
    res = _run(
        "import json, fastgen\n"
        "names = {n: getattr(fastgen, n).__module__ for n in fastgen.__all__\n"
        "         if hasattr(getattr(fastgen, n), '__module__')}\n"
        "print(json.dumps({'names': names, 'dir': dir(fastgen),\n"
        "                  'all': list(fastgen.__all__)}))"
    )
    assert set(res["all"]) <= set(res["dir"])
    assert all(m.startswith("fastgen") for m in res["names"].values())
    # the same objects as the defining modules' (checked in this process)
    for name in fastgen.__all__:
        obj = getattr(fastgen, name)
        mod = sys.modules[getattr(obj, "__module__", "fastgen")]
        assert getattr(mod, name, obj) is obj


def test_star_import_and_submodule_attributes():
    res = _run(
        "import json, fastgen\n"
        "ns = {}\n"
        "exec('from fastgen import *', ns)\n"
        "print(json.dumps({'star': sorted(k for k in ns if not k.startswith('__')),\n"
        "                  'gda': fastgen.gda.fit_gda is fastgen.fit_gda,\n"
        "                  'stats': fastgen.stats.nb_counts is fastgen.nb_counts}))"
    )
    assert res["star"] == sorted(fastgen.__all__)
    assert res["gda"] and res["stats"]


def test_unknown_attribute_still_raises():
    try:
        fastgen.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("fastgen.no_such_name did not raise AttributeError")


def test_load_params_of_a_type_not_imported_yet(tmp_path):
    """load_params must know every params type even if its module was never imported."""
    path = tmp_path / "nb.npz"
    X = [[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]]
    params = fastgen.fit_multinomial_nb(X, [0, 1, 1])
    fastgen.save_params(path, params)
    res = _run(
        "import json, sys, fastgen\n"
        f"p = fastgen.load_params({str(path)!r})\n"
        "print(json.dumps([type(p).__name__, 'fastgen.naive_bayes' in sys.modules]))"
    )
    assert res == ["MultinomialNBParams", True]


_KERNEL_ONLY = (
    "import json, os, sys\n"
    "os.environ.pop('OMP_WAIT_POLICY', None)\n"
    "import fastgen.kernels\n"
    "bare = {'omp': os.environ.get('OMP_WAIT_POLICY'), 'numba': 'numba' in sys.modules}\n"
    "import fastgen.kernels.MODULE\n"
    "from numba.core import caching, compiler\n"
    "print(json.dumps({'bare': bare, 'omp': os.environ.get('OMP_WAIT_POLICY'),\n"
    "    'modules': sorted(m for m in sys.modules if m.startswith('fastgen')),\n"
    "    'cache_wrap': caching.IndexDataCacheFile._load_index.__module__,\n"
    "    'rebuild': compiler.CompileResult._rebuild.__func__.__module__}))"
)


@pytest.mark.parametrize("module", ["labels", "sparse", "moments", "checked"])
def test_a_kernel_module_configures_numba_without_the_core(module):
    """Importing a kernel module applies the kernels' numba set-up (items 1 to 5 of
    fastgen._runtime's list) by itself, and imports no fastgen module outside
    ``fastgen.kernels`` besides what ``import fastgen`` loads: not the validation layer,
    the logger or a model.  Importing the ``fastgen.kernels`` package alone sets nothing
    and does not import numba."""
    res = _run(_KERNEL_ONLY.replace("MODULE", module))
    assert res["bare"] == {"omp": None, "numba": False}
    assert res["omp"] == "PASSIVE"
    assert res["cache_wrap"] == res["rebuild"] == "fastgen.kernels._cache"
    outside = [m for m in res["modules"]
               if not m.startswith("fastgen.kernels")
               and m not in ("fastgen", "fastgen._public", "fastgen._runtime")]
    assert outside == []
