"""Sphinx configuration of fastgen's documentation.

Build: ``python -m fastgen docs`` (once, into a cache, rebuilt when the sources change;
``--strict`` turns warnings into errors, as ``tests/test_docs.py`` builds it), or by hand
``python -m sphinx -b html docs docs/_build/html``.  Nothing is computed at build time: the
gallery's figures are PNGs made by the scripts beside them (``docs/gallery/*.py``).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))
sys.path.insert(0, os.path.dirname(HERE))  # the checkout's fastgen, not an installed one

import fastgen  # noqa: E402

project = "fastgen"
author = "the fastgen developers"
copyright = "the fastgen developers"
release = fastgen.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "fastgen_docs",
]

exclude_patterns = ["_build", "gallery/*.py", "gallery/*.csv"]
templates_path = []
root_doc = "index"

# autodoc / autosummary: no stub files are generated (pages list the names themselves)
autosummary_generate = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # numpydoc docstrings carry the types
autodoc_inherit_docstrings = True

# numpydoc: the params tables come from the fastgen-fields directive, class member
# tables would repeat autodoc's members
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_static_path = []
html_title = f"fastgen {release}"
html_theme_options = {
    "description": "Numba-compiled generative classifiers",
    "fixed_sidebar": True,
    "page_width": "1100px",
    "sidebar_width": "240px",
}
