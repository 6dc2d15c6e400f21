"""The fastgen.cuda tests run the CUDA kernels in numba's CUDA simulator.

numba reads ``NUMBA_ENABLE_CUDASIM`` into its config when it is imported, and
``numba.cuda`` picks the simulator or the real driver when *it* is first imported.  The
rest of the suite imports numba (through fastgen) but never numba.cuda, so this conftest
sets the variable (unless the caller chose a value: ``NUMBA_ENABLE_CUDASIM=0`` runs these
tests on a real GPU), reloads numba's config and only then imports numba.cuda.  The
variable stays set for the session: numba reloads its config from the environment on
every compilation, and the simulator must stay selected.  It changes nothing for the
CPU kernels (subprocesses started by other tests inherit it, equally harmlessly).
"""

import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numba.core.config  # noqa: E402

numba.core.config.reload_config()

import pytest  # noqa: E402
from numba import cuda  # noqa: E402

SIMULATOR = bool(numba.core.config.ENABLE_CUDASIM)

if not SIMULATOR and not cuda.is_available():  # pragma: no cover - GPU machines only
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(autouse=True)
def few_threads(monkeypatch):
    """The simulator runs every CUDA thread as a Python thread: use few per block
    (results do not depend on the block size; test_determinism checks that)."""
    if SIMULATOR:
        import fastgen.cuda._api as api

        monkeypatch.setattr(api, "THREADS", 8)
