"""The package's layout rules, read from its imports with ``ast``.

The layers and the arrows allowed between them are written down once, here; the
internals page of the docs includes this block verbatim, so the rule and its
documentation cannot drift.  Every import counts, also one inside a function, and so
does a module named by a string in a module that loads modules by name
(``importlib.import_module``, ``__import__``).
"""

import ast
import pathlib
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "fastgen"

# layers-begin
# Each group lists module prefixes; a module belongs to the first group it matches.
LAYERS = {
    # Numba kernels: arrays in, arrays out.  Import nothing of fastgen outside themselves.
    "kernels": ("fastgen.kernels",),
    # What every layer above leans on: input checks, the params base class, process set-up,
    # warnings and logging.  Private modules of the root, importing only the kernels.
    "base": ("fastgen._validation", "fastgen._params", "fastgen._runtime", "fastgen._log",
             "fastgen._warn", "fastgen._atomic", "fastgen._public", "fastgen._version"),
    # Device kernels and checks: a provider like the kernels, for the same statistics.
    "cuda": ("fastgen.cuda",),
    # Sufficient statistics, the one seam between data and the generative models.
    "stats": ("fastgen.stats",),
    # Model families: params, fits, scoring.  They read X only through the statistics
    # (GDA, naive Bayes) or through their data protocol and passes (logistic).
    "models": ("fastgen.gda", "fastgen.naive_bayes", "fastgen.logistic"),
    # Adapters to other ecosystems: they call the models, never the other way round.
    "adapters": ("fastgen.sklearn", "fastgen.dask", "fastgen.cli", "fastgen.formula"),
}
# The rest of the root is the public face (``__init__``, ``__main__``, ``scoring``,
# ``io``, ``datasets``, ``compile``): it may import every layer.
# The package root itself (``import fastgen``, ``from fastgen import fit_gda``): the
# public face, which re-exports every layer, so only adapters may import it.
ROOT_PACKAGE = "fastgen"
# What each group may not import (besides the rules for every module below).
FORBIDDEN = {
    "kernels": ("fastgen",),  # anything outside fastgen.kernels
    "base": (ROOT_PACKAGE,) + LAYERS["cuda"] + LAYERS["stats"] + LAYERS["models"]
    + LAYERS["adapters"],
    "cuda": (ROOT_PACKAGE,) + LAYERS["stats"] + LAYERS["models"] + LAYERS["adapters"],
    "stats": (ROOT_PACKAGE,) + LAYERS["models"] + LAYERS["adapters"],
    "models": (ROOT_PACKAGE,) + LAYERS["adapters"],
}
# For every module: no import circle, and no name starting with "_" taken from a module
# of another package (package-internal modules such as ``_validation`` may be imported,
# their private names may not).  A module longer than MAX_LINES lines is reported (a
# ModuleSizeWarning in the test summary), not refused: split a module where its
# responsibilities part, not where a line count falls.
MAX_LINES = 600
# layers-end


def _modules():
    mods = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _package(mod):
    return mod if MODULES[mod].name == "__init__.py" else mod.rpartition(".")[0]


def _imports(mod):
    """(target module, imported name or None, line) for every fastgen import in ``mod``."""
    tree = ast.parse(MODULES[mod].read_text(), filename=str(MODULES[mod]))
    out = []
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package(mod).split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in MODULES:
                    out.append((full, None, node.lineno))
                    aliases[alias.asname or alias.name] = full
                else:
                    out.append((target, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out.append((alias.name, None, node.lineno))
                if alias.asname and alias.name in MODULES:
                    aliases[alias.asname] = alias.name
    # private attributes of an imported module: ``from .. import x as m; m._y``
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases):
            out.append((aliases[node.value.id], node.attr, node.lineno))
    out += _loads_by_name(tree)
    return [t for t in out if t[0] == "fastgen" or t[0].startswith("fastgen.")]


def _loads_by_name(tree):
    """(module, None, line) for each string naming a fastgen module, in a module that
    loads modules by name: the name may reach ``import_module`` through a table."""
    loaders = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        getattr(node.func, "attr", None) in ("import_module", "__import__")
        or getattr(node.func, "id", None) in ("import_module", "__import__"))]
    if not loaders:
        return []
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return [(node.value, None, node.lineno) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings
            and (node.value == "fastgen" or node.value.startswith("fastgen."))
            and node.value.isascii() and all(p.isidentifier()
                                             for p in node.value.split("."))]


IMPORTS = {mod: _imports(mod) for mod in MODULES}


def _group(mod):
    for name, prefixes in LAYERS.items():
        if any(mod == p or mod.startswith(p + ".") for p in prefixes):
            return name
    return None


def _matches(target, prefixes):
    """``target`` is one of ``prefixes`` or inside one (the root package: itself only)."""
    return any(target == p or (p != ROOT_PACKAGE and target.startswith(p + "."))
               for p in prefixes)


def test_layers():
    bad = []
    for mod in MODULES:
        group = _group(mod)
        if group not in FORBIDDEN:
            continue
        for target, _, line in IMPORTS[mod]:
            if group == "kernels":
                wrong = not _matches(target, LAYERS["kernels"])
            else:
                wrong = _matches(target, FORBIDDEN[group])
            if wrong:
                bad.append(f"{mod}:{line} ({group}) imports {target}")
    assert not bad, "imports against the layers:\n" + "\n".join(sorted(set(bad)))


def test_no_private_names_across_packages():
    bad = []
    for mod in MODULES:
        for target, name, line in IMPORTS[mod]:
            if (name and name.startswith("_") and not name.startswith("__")
                    and target in MODULES and _package(target) != _package(mod)):
                bad.append(f"{mod}:{line} takes {target}.{name}")
    assert not bad, "private names across packages:\n" + "\n".join(sorted(set(bad)))


def _cycles():
    """Strongly connected components with more than one module (Tarjan)."""
    graph = {m: sorted({t for t, _, _ in IMPORTS[m] if t in MODULES and t != m})
             for m in MODULES}
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    found = _cycles()
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


class ModuleSizeWarning(UserWarning):
    """A module longer than MAX_LINES: worth a look, not a failure."""


def report_long_modules(modules):
    """Warn (ModuleSizeWarning) for each module of ``modules`` over MAX_LINES lines.

    The suite turns warnings into errors; this one category is let through by a filter
    local to this call, so that pytest lists it in its warnings summary and the run
    still passes.  (A skip would read as a test not run, a print is lost unless pytest
    runs with ``-s``, and a filter for it in the pytest configuration would have to name
    this test module's import path.)"""
    long = {}
    for mod in sorted(modules):
        lines = len(modules[mod].read_text().splitlines())
        if lines > MAX_LINES:
            long[mod] = lines
    with warnings.catch_warnings():
        warnings.simplefilter("always", ModuleSizeWarning)
        for mod, lines in long.items():
            warnings.warn(f"{mod} has {lines} lines (more than {MAX_LINES}): does it have "
                          f"one job?", ModuleSizeWarning, stacklevel=2)
    return long


def test_module_size():
    """Long modules are reported, never failed (see report_long_modules)."""
    long = report_long_modules(MODULES)
    assert set(long) <= set(MODULES)


def test_checker_sees_violations(tmp_path):
    """The checker itself: a circle, layer arrows (plain, through the root package,
    inside a function, by name through importlib) and a private name it must find."""
    src = {
        "fastgen.kernels.a": "from fastgen.gda import x\n",
        "fastgen.p.b": "from fastgen.p import c\nfrom fastgen.q.d import _hidden\n",
        "fastgen.p.c": "from fastgen.p import b\n",
        "fastgen.cuda.e": "def f():\n    import fastgen\n    return fastgen.fit_gda\n",
        "fastgen.stats.f": "from .. import class_moments\n",
        "fastgen.gda.g": "import importlib\nimportlib.import_module('fastgen.dask')\n",
        "fastgen.logistic.h": ('"""Loads fastgen.sklearn lazily."""\n'
                               'import importlib\nTABLE = {"dask": "fastgen.dask"}\n'
                               'def load(k):\n    return importlib.import_module(TABLE[k])\n'),
        "fastgen.naive_bayes.i": "from fastgen import _validation\n",
    }
    saved = dict(IMPORTS), dict(MODULES)
    probe = tmp_path / "probe.py"
    try:
        for mod in [*src, "fastgen.q.d"]:
            MODULES[mod] = probe
        IMPORTS["fastgen.q.d"] = []
        for mod, text in src.items():
            probe.write_text(text)
            IMPORTS[mod] = _imports(mod)
        assert any("fastgen.p.b" in c for c in _cycles())
        with pytest.raises(AssertionError) as caught:
            test_layers()
        found = str(caught.value)
        for mod in ("fastgen.kernels.a", "fastgen.cuda.e:2", "fastgen.stats.f:1",
                    "fastgen.gda.g:2", "fastgen.logistic.h:3"):
            assert f"{mod}" in found, mod
        assert "fastgen.logistic.h:1" not in found  # a docstring loads nothing
        assert "fastgen.naive_bayes.i" not in found  # a module of the root, not the root
        assert _group("fastgen.stats.f") == "stats"
        probe.write_text("x = 1\n" * (MAX_LINES + 1))
        with pytest.warns(ModuleSizeWarning, match=f"fastgen.p.b has {MAX_LINES + 1} lines"):
            assert report_long_modules({"fastgen.p.b": probe}) == {"fastgen.p.b": MAX_LINES + 1}
        probe.write_text("x = 1\n" * MAX_LINES)
        assert report_long_modules({"fastgen.p.b": probe}) == {}
        with pytest.raises(AssertionError, match="_hidden"):
            test_no_private_names_across_packages()
    finally:
        IMPORTS.clear()
        IMPORTS.update(saved[0])
        MODULES.clear()
        MODULES.update(saved[1])
