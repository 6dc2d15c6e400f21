"""The documentation builds without warnings (through ``python -m fastgen docs``),
documents every public name, has no broken internal links, and the Python blocks of the
README and of every page run as written.

Both run in subprocesses: Sphinx imports the package with its own settings, and the
code blocks must work in a fresh interpreter as a reader would run them.
"""

import importlib
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
import api_groups  # noqa: E402

sys.path.remove(str(DOCS / "_ext"))


def _env():
    env = dict(os.environ)
    # tests/cuda/conftest.py switches numba's CUDA simulator on for the whole process when
    # that directory is collected; a reader's script runs without it (the GPU blocks would
    # otherwise run full size in the simulator)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture(scope="module")
def docs_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("docs-cache")


def _fastgen_docs(cache, *extra):
    return subprocess.run(
        [sys.executable, "-m", "fastgen", "docs", "--dir", str(cache), *extra],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def built_site(docs_cache):
    # the site as `python -m fastgen docs` builds it, Sphinx warnings as errors
    res = _fastgen_docs(docs_cache, "--strict")
    assert res.returncode == 0, f"sphinx -W failed:\n{res.stdout}\n{res.stderr}"
    index = Path(res.stdout.strip().splitlines()[-1])
    assert index.name == "index.html" and index.is_file(), res.stdout
    return index.parent


def test_docs_build_with_warnings_as_errors(built_site):
    for page in ["index", "api/sklearn", "api/kernels", "api/cuda", "guide/discriminant",
                 "guide/inference", "performance", "internals", "gallery/index"]:
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


def test_cross_references_to_fastgen_names_resolve(built_site):
    """Every :func:/:class:/... reference of a page to a ``fastgen`` name points to a
    documented object (Sphinx leaves an unresolved one as plain text, silently)."""
    documented = _documented(built_site)
    broken = []
    for page in sorted(DOCS.rglob("*.rst")):
        if "_build" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r":(?:py:)?(?:func|class|mod|data|meth|exc|attr):`~?([^`<]+?)`",
                             text):
            target = m.group(1).strip()
            if target.startswith("fastgen") and target not in documented:
                broken.append(f"{page.relative_to(DOCS)}: {target}")
    assert not broken, broken


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
    assert len(readme_python_blocks()) >= 3


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


# Every page of the site whose ``.. code-block:: python`` blocks run as written, in
# order, in one namespace per page.  A block with the option ``:class: needs-gpu`` needs a
# CUDA GPU: it runs only where numba.cuda finds one.
RUN_GUIDE_PAGES = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.rst")
                         if "_build" not in p.parts and ".. code-block:: python" in
                         p.read_text(encoding="utf-8"))

# every page of the guide (docs/guide/), one per task; each has runnable code
GUIDE_PAGES = ["start", "discriminant", "naive_bayes", "logistic", "inference", "statsmodels",
               "streaming", "gpu", "cli", "inputs", "kernels", "processes",
               "incomplete_data", "unlabeled_rows"]


def rst_python_blocks(text):
    """The python code blocks of an rst text, as (code, needs_gpu) pairs."""
    blocks = []
    pattern = r"^\.\. code-block:: python\n((?:   :.*\n)*)\n((?:^(?:   .*)?\n)+)"
    for m in re.finditer(pattern, text, flags=re.M):
        options = [o.strip() for o in m.group(1).splitlines()]
        assert all(o.startswith((":class:", ":caption:", ":emphasize-lines:"))
                   for o in options), options
        lines = m.group(2).splitlines()
        code = "\n".join(line[3:] for line in lines).strip() + "\n"
        blocks.append((code, any("needs-gpu" in o for o in options if o.startswith(":class:"))))
    return blocks


def test_rst_python_blocks_are_all_found():
    """Every ``code-block:: python`` directive of the site is collected (none skipped
    because of an option the extractor does not know)."""
    for page in RUN_GUIDE_PAGES:
        text = (DOCS / page).read_text(encoding="utf-8")
        assert len(rst_python_blocks(text)) == text.count(".. code-block:: python"), page


def test_every_guide_page_exists_and_runs_code():
    pages = {p.stem for p in (DOCS / "guide").glob("*.rst")}
    assert pages == set(GUIDE_PAGES), pages ^ set(GUIDE_PAGES)
    for page in GUIDE_PAGES:
        if page != "processes":  # process set-up: environment variables, no code
            assert f"guide/{page}.rst" in RUN_GUIDE_PAGES, page


@pytest.mark.parametrize("page", RUN_GUIDE_PAGES)
def test_guide_python_blocks_run(page, tmp_path):
    blocks = rst_python_blocks((DOCS / page).read_text(encoding="utf-8"))
    assert blocks, page
    slug = re.sub(r"\W", "_", page.removesuffix(".rst"))
    runner = "\n".join([
        "import os",
        "import sys",
        "blocks = " + repr(blocks),
        "gpu = False",
        "if any(g for _, g in blocks):",
        "    try:",
        "        from numba import config, cuda",
        "        gpu = cuda.is_available() and not config.ENABLE_CUDASIM",
        "    except Exception:",
        "        gpu = False",
        "ns = {'__name__': '__main__'}",
        "for i, (code, needs_gpu) in enumerate(blocks):",
        "    if needs_gpu and not gpu:",
        "        print(f'skipped block {i + 1}: needs a CUDA GPU')",
        "        continue",
        # each block runs from a file of its own, as a reader's script would: numba's
        # cache=True needs the source file of the functions it caches
        f"    path = os.path.abspath({slug!r} + f'_block{{i + 1}}.py')",
        "    with open(path, 'w', encoding='utf-8') as fh:",
        "        fh.write(code)",
        "    try:",
        "        exec(compile(code, path, 'exec'), ns)",
        "    except BaseException:",
        f"        print('--- {page} python block', i + 1, 'failed:', code, file=sys.stderr)",
        "        raise",
    ])
    res = subprocess.run([sys.executable, "-W", "error", "-c", runner], cwd=tmp_path,
                         env=_env(), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-5000:]


def test_docs_command_reuses_its_build(tmp_path, monkeypatch, capsys):
    """``fastgen docs`` builds once per state of the sources: a second run prints the
    same index page without building, a change of the sources builds anew and removes
    the older build (and nothing else in the cache directory)."""
    import argparse

    from fastgen.cli import docs as docs_cli

    builds = []

    def fake_build(out, *, strict=False):
        builds.append((out.name, strict))
        out.mkdir(parents=True, exist_ok=True)
        (out / "index.html").write_text("<html></html>")

    digest = ["0123456789abcdef"]
    monkeypatch.setattr(docs_cli, "build_docs", fake_build)
    monkeypatch.setattr(docs_cli, "source_digest", lambda: digest[0])
    (tmp_path / "mine").mkdir()  # not a build: left alone
    args = argparse.Namespace(dir=str(tmp_path), open=False, rebuild=False, strict=True)

    printed = []
    for state in ["0123456789abcdef", "0123456789abcdef", "fedcba9876543210"]:
        digest[0] = state
        assert docs_cli.run(args) == 0
        printed.append(capsys.readouterr())
    assert builds == [("0123456789abcdef", True), ("fedcba9876543210", True)]
    assert [Path(p.out.strip()) for p in printed] == [
        tmp_path / d / "index.html" for d in ["0123456789abcdef"] * 2 + ["fedcba9876543210"]]
    assert "up to date" in printed[1].err and "building" in printed[2].err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fedcba9876543210", "mine"]

    args.rebuild = True
    docs_cli.run(args)
    assert len(builds) == 3


def test_docs_digest_follows_the_sources(tmp_path, monkeypatch):
    """The cache key changes with any file of docs/ or any .py file of the package, and
    not with build output or caches."""
    from fastgen.cli import docs as docs_cli

    root = tmp_path / "checkout"
    for rel, text in [("docs/conf.py", "x = 1\n"), ("docs/index.rst", "a\n"),
                      ("fastgen/__init__.py", '"""doc"""\n')]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    monkeypatch.setattr(docs_cli, "_checkout_root", lambda: root)
    first = docs_cli.source_digest()
    for rel in ["docs/_build/html/index.html", "fastgen/__pycache__/x.pyc",
                "fastgen/data/iris.csv"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("ignored")
        assert docs_cli.source_digest() == first, rel
    seen = {first}
    for rel in ["docs/index.rst", "fastgen/__init__.py", "docs/guide/new.rst"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("changed\n")
        digest = docs_cli.source_digest()
        assert digest not in seen, rel
        seen.add(digest)


def test_docs_command_names_a_missing_source_tree(tmp_path):
    """Outside a source checkout (no docs/conf.py beside the package) the command fails
    in one line that says where the sources come from."""
    from fastgen.cli import docs as docs_cli
    from fastgen.cli.errors import CLIError

    fake = tmp_path / "site-packages" / "fastgen"
    fake.mkdir(parents=True)
    import fastgen

    real = fastgen.__file__
    try:
        fastgen.__file__ = str(fake / "__init__.py")
        with pytest.raises(CLIError, match="source checkout"):
            docs_cli.docs_source()
    finally:
        fastgen.__file__ = real


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key) and not (tag == "link" and key == "href"
                                       and attrs.get("rel") == "search"):
                self.links.append(attrs[key])


def _parse(path, cache):
    if path not in cache:
        parser = _Links()
        parser.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = parser
    return cache[path]


def test_no_broken_internal_links(built_site):
    """Every relative link and image of the built site points to a file that exists,
    and every #fragment to an id on that page."""
    cache, broken, checked = {}, [], 0
    for page in sorted(built_site.rglob("*.html")):
        for link in _parse(page, cache).links:
            parsed = urlsplit(link)
            if parsed.scheme or parsed.netloc or link.startswith("javascript:"):
                continue
            target = (page.parent / unquote(parsed.path)).resolve() if parsed.path else page
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.is_file():
                broken.append(f"{page.relative_to(built_site)}: {link}")
            elif parsed.fragment and target.suffix == ".html" \
                    and unquote(parsed.fragment) not in _parse(target, cache).ids:
                broken.append(f"{page.relative_to(built_site)}: {link} (no such anchor)")
    assert checked > 500, checked
    assert not broken, "broken links:\n" + "\n".join(broken[:50])


def _github_anchor(heading):
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return slug.replace(" ", "-")


def test_readme_links_resolve():
    """The README's relative links point to files of the checkout, its #anchors to its
    own headings; it links every guide page and the performance and internals pages."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    anchors = {_github_anchor(h) for h in re.findall(r"^#+ (.*)$", text, flags=re.M)}
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    for link in links:
        if re.match(r"^[a-z]+:", link):
            continue
        path, _, fragment = link.partition("#")
        if path:
            assert (ROOT / path).exists(), link
        else:
            assert fragment in anchors, link
    for page in GUIDE_PAGES:
        assert f"docs/guide/{page}.rst" in links, page
    assert "docs/performance.rst" in links and "docs/internals.rst" in links


def test_readme_and_ci_run_the_same_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = 'pip install -e ".[test]" && python -m pytest'
    assert f"```bash\n{command}\n```" in readme
    assert f"\n{command}\n" in ci


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 260


WORKLOADS = ["W1", "W2", "W3", "W3b", "W4", "W5", "W6", "W7", "W8", "W9", "W10", "W11",
             "W12", "W13", "W14", "W15"]


@pytest.mark.parametrize("page", ["performance.rst", "internals.rst"])
def test_every_workload_is_defined_and_reported(page):
    """The internals page defines every benchmark workload, and the performance page
    reports a current figure for each."""
    text = (DOCS / page).read_text(encoding="utf-8")
    missing = [w for w in WORKLOADS if not re.search(rf"(?<![\w.]){w}(?![\w.])", text)]
    assert not missing, missing
