"""Sphinx helpers for fastgen's API reference.

* ``.. fastgen-group:: ID`` documents the names of one group of ``api_groups.GROUPS``
  (a summary table, then one autodoc entry per name); ``other`` groups take every name
  of a public module's ``__all__`` that no group lists.
* ``.. fastgen-fields:: fastgen.GDAParams`` renders the fields of a params dataclass as a
  table (field, annotation, meaning), the meaning taken from the docstring's
  ``Attributes`` section.  A field without an entry there is a build warning (an error
  under ``-W``), so every field of every params object stays documented.
* ``.. fastgen-kernels::`` documents the kernel entry points (``__all__`` of each module
  of ``api_groups.KERNEL_MODULES``).
* ``.. fastgen-if-exists:: dotted.name`` keeps its content only when the name can be
  imported at build time (with ``:else:`` text otherwise).

Everything is resolved through public import paths, never through the private modules
behind them.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import typing

import api_groups
from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

logger = logging.getLogger(__name__)

# Base classes whose members are not repeated on every estimator's page.
_SKLEARN_BASES = ("BaseEstimator", "ClassifierMixin", "TransformerMixin",
                  "LinearClassifierMixin", "ClassNamePrefixFeaturesOutMixin",
                  "_MetadataRequester", "_SetOutputMixin", "object")


def resolve(dotted: str):
    """Import ``a.b.c`` as attribute c of module a.b (or module a.b.c); None if absent."""
    try:
        return importlib.import_module(dotted)
    except ImportError:
        pass
    module, _, name = dotted.rpartition(".")
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return None
    return getattr(mod, name, None)


def is_params(obj) -> bool:
    return inspect.isclass(obj) and dataclasses.is_dataclass(obj)


def listed_names() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, names in api_groups.GROUPS.values():
        out.setdefault(module, set()).update(names)
    return out


def group_names(group: str) -> tuple[str, list[str]]:
    if group in api_groups.GROUPS:
        return api_groups.GROUPS[group]
    for module, rest in api_groups.MODULES.items():
        if rest == group:
            listed = listed_names().get(module, set())
            mod = importlib.import_module(module)
            public = list(getattr(mod, "__all__", []))
            return module, [n for n in public
                            if n not in listed and not api_groups.documented_elsewhere(module, n)]
    raise ValueError(f"unknown API group {group!r}")


def _insert(directive: SphinxDirective, lines: list[str]) -> list[nodes.Node]:
    node = nodes.container()
    node.document = directive.state.document
    content = StringList(lines, source=f"<{directive.name}>")
    directive.state.nested_parse(content, directive.content_offset, node)
    return node.children


def _entry(dotted: str, obj) -> list[str]:
    if inspect.ismodule(obj):
        return [f".. automodule:: {dotted}", ""]
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return [f".. autoexception:: {dotted}", ""]
    if is_params(obj):
        return [f".. autoclass:: {dotted}", "", f"   .. fastgen-fields:: {dotted}", ""]
    if inspect.isclass(obj):
        lines = [f".. autoclass:: {dotted}", "   :members:"]
        if any(b.__name__ in _SKLEARN_BASES for b in obj.__mro__[1:-1]):
            lines.append("   :inherited-members: " + ", ".join(_SKLEARN_BASES))
        return lines + [""]
    if callable(obj):
        return [f".. autofunction:: {dotted}", ""]
    return [f".. autodata:: {dotted}", "   :no-value:", ""]


class GroupDirective(SphinxDirective):
    """Summary table plus one autodoc entry per public name of a group."""

    required_arguments = 1
    option_spec = {"no-summary": directives.flag}

    def run(self):
        module, names = group_names(self.arguments[0])
        present = []
        for name in names:
            dotted = f"{module}.{name}"
            obj = resolve(dotted)
            if obj is None:
                if dotted not in api_groups.OPTIONAL:
                    logger.warning("public name %s listed in the API groups does not "
                                   "exist", dotted, location=self.get_location())
                continue
            present.append((dotted, obj))
        if not present:
            return [nodes.paragraph(text="(No further public names.)")]
        lines: list[str] = []
        if "no-summary" not in self.options:
            lines += [".. autosummary::", ""]
            lines += [f"   {dotted}" for dotted, _ in present]
            lines.append("")
        for dotted, obj in present:
            lines += _entry(dotted, obj)
        return _insert(self, lines)


def _annotation(tp) -> str:
    if isinstance(tp, str):
        text = tp
    else:
        text = typing_repr(tp)
    return text.replace("numpy.ndarray", "ndarray").replace("np.ndarray", "ndarray")


def typing_repr(tp) -> str:
    if isinstance(tp, type):
        return tp.__name__
    return re.sub(r"\b[\w.]+\.(\w+)", r"\1", str(tp))


def attribute_entries(obj) -> list[tuple[list[str], str, str]]:
    """(names, text, raw name) of each entry of the docstring's Attributes section."""
    from numpydoc.docscrape import NumpyDocString

    doc = NumpyDocString(inspect.getdoc(obj) or "")
    out = []
    for p in doc["Attributes"]:
        names = [n.strip() for n in p.name.split(",") if n.strip()]
        desc = " ".join(line.strip() for line in p.desc if line.strip())
        text = " — ".join(t for t in (p.type.strip(), desc) if t)
        out.append((names, text, p.name))
    return out


def _cell(text: str) -> str:
    return text if text else "\\ "


class FieldsDirective(SphinxDirective):
    """Table of the fields of a params dataclass, each with its documented meaning."""

    required_arguments = 1

    def run(self):
        dotted = self.arguments[0]
        obj = resolve(dotted)
        if not is_params(obj):
            logger.warning("%s is not a dataclass", dotted, location=self.get_location())
            return []
        entries = attribute_entries(obj)
        described = {}
        for names, text, _ in entries:
            for n in names:
                described[n] = text
        try:
            hints = typing.get_type_hints(obj)
        except Exception:  # pragma: no cover - unusual annotations: show them as written
            hints = {}
        fields = dataclasses.fields(obj)
        field_names = {f.name for f in fields}
        rows = []
        for f in fields:
            text = described.get(f.name)
            if text is None and f"{obj.__name__}.{f.name}" not in api_groups.FIELD_NOTES:
                logger.warning("field %s of %s has no entry in the docstring's Attributes "
                               "section", f.name, dotted, location=self.get_location())
            if text is None:
                text = ""
            note = (api_groups.FIELD_NOTES.get(f"{obj.__name__}.{f.name}")
                    or api_groups.FIELD_NOTES.get(f.name))
            if note and not re.search(r"[a-z]{3}", re.sub(r"ndarray|float|int|bool|str|"
                                                          r"None|or", "", text)):
                text = f"{text} — {note}" if text else note
            rows.append((f.name, _annotation(hints.get(f.name, f.type)), text))
        lines = [".. list-table:: Fields", "   :header-rows: 1", "   :widths: 18 18 64", "",
                 "   * - field", "     - annotation", "     - meaning"]
        for name, ann, text in rows:
            lines += [f"   * - ``{name}``", f"     - ``{ann}``", f"     - {_cell(text)}"]
        lines.append("")
        extra = [raw + (" " + text if text else "")
                 for names, text, raw in entries if not set(names) & field_names]
        if extra:
            lines += [" ".join(extra), ""]
        return _insert(self, lines)


class KernelsDirective(SphinxDirective):
    """The public kernels of each module in api_groups.KERNEL_MODULES."""

    def run(self):
        lines: list[str] = []
        for module in api_groups.KERNEL_MODULES:
            mod = importlib.import_module(module)
            lines += [module, "~" * len(module), "", f".. automodule:: {module}", ""]
            for name in getattr(mod, "__all__", []):
                obj = getattr(mod, name)
                kind = ("autoclass" if isinstance(obj, type) else
                        "autofunction" if callable(obj) else "autodata")
                lines += [f".. {kind}:: {module}.{name}", ""]
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source="<fastgen-kernels>"),
                                 node)
        return node.children


class IfExistsDirective(SphinxDirective):
    """Content kept only when the dotted name exists when the docs are built."""

    required_arguments = 1
    has_content = True
    option_spec = {"else": directives.unchanged}

    def run(self):
        if resolve(self.arguments[0]) is not None:
            return _insert(self, list(self.content))
        other = self.options.get("else")
        return _insert(self, [other]) if other else []


def _drop_params_attributes(app, what, name, obj, options, lines):
    """Remove the Attributes section of params dataclasses: fastgen-fields shows it."""
    if what != "class" or not is_params(obj):
        return
    out, skipping, i = [], False, 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        header = bool(line.strip()) and re.fullmatch(r"\s*-{3,}\s*", nxt) is not None
        if header:
            skipping = line.strip() == "Attributes"
            if skipping:
                i += 2
                continue
        if not skipping:
            out.append(line)
        i += 1
    lines[:] = out


_LITERAL = re.compile(r"(``.+?``|`[^`]+`_?)")
_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=[\s.,;:)\]]|$)")


def _escape_text(segment: str) -> str:
    segment = segment.replace("|", "\\|")
    return _TRAILING_UNDERSCORE.sub("\\\\_", segment)


def _escape_line(line: str) -> str:
    parts = _LITERAL.split(line)
    return "".join(p if i % 2 else _escape_text(p) for i, p in enumerate(parts))


def _plain_text_docstring(app, what, name, obj, options, lines):
    """Docstrings write formulas as plain text: |x| (an absolute value, not an rst
    substitution) and names such as ``coef_`` (not a hyperlink target).  Escape both
    outside literals, literal blocks and directives, before numpydoc parses the text."""
    out, protected_indent = [], None
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if protected_indent is not None:
            if not stripped or indent > protected_indent:
                out.append(line)
                continue
            protected_indent = None
        if stripped.startswith(".. ") or stripped.endswith("::"):
            protected_indent = indent
            out.append(line if stripped.startswith("..") else _escape_line(line))
            continue
        out.append(_escape_line(line))
    lines[:] = out


def _skip_member(app, what, name, obj, skip, options):
    """Hide scikit-learn's generated metadata-routing methods (set_fit_request, ...):
    their docstrings refer to scikit-learn's own pages."""
    if re.fullmatch(r"set_\w+_request|get_metadata_routing", name):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
    app.add_directive("fastgen-group", GroupDirective)
    app.add_directive("fastgen-fields", FieldsDirective)
    app.add_directive("fastgen-kernels", KernelsDirective)
    app.add_directive("fastgen-if-exists", IfExistsDirective)
    # before numpydoc (priority 500) parses the docstring
    app.connect("autodoc-process-docstring", _drop_params_attributes, priority=100)
    app.connect("autodoc-process-docstring", _plain_text_docstring, priority=110)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
