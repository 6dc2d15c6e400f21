"""docs/guide/processes.rst says which modules of its own ``import fastgen`` loads, and
how many: a fresh interpreter checks the sentence, list and count alike, so that the
page cannot drift from the package again (it said two while there were seven)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guide" / "processes.rst"
_NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}

_SCRIPT = """
import json, sys
before = set(sys.modules)
import fastgen
new = sorted(set(sys.modules) - before)
print(json.dumps({"own": [m for m in new if m == "fastgen" or m.startswith("fastgen.")],
                  "numba": "numba" in sys.modules}))
"""


def _statement():
    """(count, modules) of the page's sentence "It imports N modules of its own (...)"."""
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(r"It imports (\w+) modules? of its own\s*\((.*?)\)\s+and no "
                      r"third-party module", text, re.S)
    assert found, "the sentence on what import fastgen loads is gone from processes.rst"
    count, listing = found.groups()
    return _NUMBERS[count], re.findall(r"``(fastgen(?:\.[\w]+)*)``", listing)


def test_the_processes_page_names_the_modules_import_fastgen_loads():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    count, named = _statement()
    assert sorted(named) == got["own"], (named, got["own"])
    assert count == len(got["own"]) == len(named)
    assert not got["numba"]  # "not even numba"
