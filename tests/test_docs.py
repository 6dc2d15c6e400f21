"""The documentation builds without warnings, documents every public name, and the
README's Python blocks run as written.

Both run in subprocesses: Sphinx imports the package with its own settings, and the
README blocks must work in a fresh interpreter as a reader would run them.
"""

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
import api_groups  # noqa: E402

sys.path.remove(str(DOCS / "_ext"))


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    res = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(DOCS), str(out)],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, f"sphinx -W failed:\n{res.stdout}\n{res.stderr}"
    return out


def test_docs_build_with_warnings_as_errors(built_site):
    for page in ["index", "api/sklearn", "api/kernels", "guide/rank", "gallery/index"]:
        assert (built_site / f"{page}.html").is_file(), page


def _documented(site):
    from sphinx.util.inventory import InventoryFile

    inv = InventoryFile.loads((site / "objects.inv").read_bytes(), uri="")
    names = set()
    for role in ("py:function", "py:class", "py:exception", "py:data", "py:attribute",
                 "py:module", "py:method"):
        names.update(inv.data.get(role, {}))
    return names


def test_every_public_name_is_in_the_api_reference(built_site):
    documented = _documented(built_site)
    expected = set()
    for module in list(api_groups.MODULES) + api_groups.KERNEL_MODULES:
        mod = importlib.import_module(module)
        expected.update(f"{module}.{name}" for name in mod.__all__
                        if not api_groups.documented_elsewhere(module, name))
    for module, names in api_groups.GROUPS.values():
        mod = importlib.import_module(module)
        expected.update(f"{module}.{n}" for n in names if hasattr(mod, n))
    missing = sorted(expected - documented)
    assert not missing, f"public names missing from the API reference: {missing}"


def test_every_params_field_is_in_its_table(built_site):
    import dataclasses

    import fastgen

    checked = 0
    for name in fastgen.__all__:
        obj = getattr(fastgen, name)
        if isinstance(obj, type) and dataclasses.is_dataclass(obj):
            page = next(p for p in (built_site / "api").glob("*.html")
                        if f'id="fastgen.{name}"' in p.read_text())
            html = page.read_text()
            section = html[html.index(f'id="fastgen.{name}"'):]
            for f in dataclasses.fields(obj):
                assert f"<span class=\"pre\">{f.name}</span>" in section, (name, f.name)
            checked += 1
    assert checked >= 9


def readme_python_blocks():
    # blocks fenced ```python-cuda need a CUDA GPU and are not run here
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_readme_code_blocks_are_labelled():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    fences = re.findall(r"^```(.*)$", text, flags=re.M)
    openers = fences[0::2]
    assert all(f.strip() for f in openers), "every README code block names its language"
    assert len(readme_python_blocks()) >= 4


def test_readme_python_blocks_run(tmp_path):
    blocks = readme_python_blocks()
    runner = "\n".join([
        "import sys",
        "blocks = " + repr(blocks),
        "ns = {'__name__': '__main__'}",
        "for i, code in enumerate(blocks):",
        "    try:",
        "        exec(compile(code, f'README.md python block {i + 1}', 'exec'), ns)",
        "    except BaseException:",
        "        print(f'--- README python block {i + 1} failed:\\n{code}', file=sys.stderr)",
        "        raise",
    ])
    res = subprocess.run([sys.executable, "-W", "error", "-c", runner], cwd=tmp_path,
                         env=_env(), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-5000:]
    assert (tmp_path / "model.npz").is_file()


# guide pages whose ``.. code-block:: python`` blocks run as written, in order, in one
# namespace per page
RUN_GUIDE_PAGES = ["guide/units.rst"]


def rst_python_blocks(text):
    blocks = []
    for m in re.finditer(r"^\.\. code-block:: python\n\n((?:^(?:   .*)?\n)+)", text, flags=re.M):
        lines = m.group(1).splitlines()
        blocks.append("\n".join(line[3:] for line in lines).strip() + "\n")
    return blocks


@pytest.mark.parametrize("page", RUN_GUIDE_PAGES)
def test_guide_python_blocks_run(page, tmp_path):
    blocks = rst_python_blocks((DOCS / page).read_text(encoding="utf-8"))
    assert blocks, page
    runner = "\n".join([
        "blocks = " + repr(blocks),
        "ns = {'__name__': '__main__'}",
        "for i, code in enumerate(blocks):",
        f"    exec(compile(code, '{page} python block ' + str(i + 1), 'exec'), ns)",
    ])
    res = subprocess.run([sys.executable, "-W", "error", "-c", runner], cwd=tmp_path,
                         env=_env(), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-5000:]
