"""Sphinx configuration for skonline.

Build (warnings as errors)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Three things are generated at build time, all under git-ignored folders:

* ``docs/generated/api/``: the API reference. One page per public subpackage of skonline that
  imports, listing its ``__all__`` with autosummary (stubs are generated next to it). Nothing is
  listed by hand: a new name in any ``__all__`` shows up without editing the docs.
* ``docs/generated/families.inc``: the table of families on the front page, linking to the
  user-guide and API pages that exist.
* ``docs/auto_examples/``: the sphinx-gallery built from ``examples/`` (one subsection per
  ``examples/<family>/`` folder with a ``README.txt``; picked up automatically).
"""

import importlib
import inspect
import logging
import os
import pkgutil
import re
import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# document the working tree (skonline is not necessarily installed)
if (ROOT / "skonline").is_dir() and str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

import skonline  # noqa: E402

# -- project -----------------------------------------------------------------------------------

project = "skonline"
author = "the skonline developers"
copyright = "2024-2025, the skonline developers"
release = skonline.__version__
version = ".".join(release.split(".")[:2])

# -- general -----------------------------------------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax 3 shipped with the docs (_static/mathjax/) instead of loaded from a CDN: the maths
    # renders offline (issue 23); the package sets mathjax_path to its local copy
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "mdtables",  # docs/_ext/mdtables.py: benchmark results (Markdown) included at build time
]
sys.path.insert(0, str(DOCS / "_ext"))

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
default_role = "literal"
pygments_style = "sphinx"

# -- autodoc / autosummary / numpydoc ---------------------------------------------------------

# autosummary_generate: the list of pages is set below, after the API pages are written
autosummary_generate_overwrite = True
autosummary_imported_members = False
autodoc_typehints = "none"  # numpydoc renders the types from the docstrings
autodoc_member_order = "groupwise"
autodoc_inherit_docstrings = True

# The class template (_templates/autosummary/class.rst) documents members with autodoc;
# numpydoc must then not list them a second time (the usual source of "duplicate object
# description" warnings).
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
# numpydoc's docstring validation is off: its checks (See Also, summary length, ...) are stricter
# than the project's conventions and would turn into build errors under -W.
numpydoc_validation_checks = set()

# -- sphinx-gallery ----------------------------------------------------------------------------

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # every examples/**/plot_*.py is executed; subsections (one per examples/<family>/ with a
    # README.txt) are picked up automatically, in sphinx-gallery's default order
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "doc_module": ("skonline",),
    "reference_url": {"skonline": None},
    "backreferences_dir": "generated/backreferences",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "show_memory": False,
    "min_reported_time": 0,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
}

# -- HTML --------------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"skonline {release}"
html_static_path = []
html_theme_options = {
    "navbar_end": ["navbar-icon-links"],
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "navigation_with_keys": False,
}
html_sidebars = {"index": [], "getting_started": []}
html_show_sourcelink = False

# -- API reference generated from __all__ -----------------------------------------------------

# Preferred order; any other public subpackage found in skonline/ is appended after these.
API_ORDER = [
    "linear_model",
    "experts",
    "kernel_approximation",
    "kernel_selection",
    "kernel_ridge",
    "dro",
    "preprocessing",
    "pipeline",
    "evaluation",
    "datasets",
    "utils",
    "losses",
    "plotting",
    "exceptions",
]
# public modules that are not part of the user-facing API
API_SKIP = {"base", "tests"}

# The families shown on the front page (when their subpackage or user-guide page exists),
# described by the first paragraph of the subpackage's docstring; these blurbs are the fallback.
FAMILIES = {
    "linear_model": "Scale-invariant linear learners: no learning rate, no feature scaling.",
    "experts": "Expert aggregation rules, ensembles of online learners, matrix prediction.",
    "kernel_approximation": "Explicit kernel feature maps (random Fourier, Taylor, online "
    "Nyström), as transformers.",
    "kernel_selection": "Online kernel selection under bandit feedback.",
    "kernel_ridge": "Online kernel ridge regression: AWV, kernel AWV and PKAWV.",
    "dro": "Group distributionally robust online learners.",
    "evaluation": "Progressive (prequential) validation and regret comparators.",
}

GENERATED = DOCS / "generated"
API_DIR = GENERATED / "api"


def _write_if_changed(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    path.write_text(text, encoding="utf-8")


def _import_failed(fullname, exc):
    """A subpackage that exists but does not import: a warning (an error under -W), no page."""
    from sphinx.util import logging as sphinx_logging

    sphinx_logging.getLogger("skonline.docs").warning(
        "%s exists but cannot be imported (%s: %s); its API page is left out.",
        fullname, type(exc).__name__, exc,
    )


def _public_subpackages():
    names = list(API_ORDER)
    for info in pkgutil.iter_modules(skonline.__path__):
        if info.ispkg and not info.name.startswith("_") and info.name not in API_SKIP:
            if info.name not in names:
                names.append(info.name)
    modules = []
    for name in names:
        fullname = f"skonline.{name}"
        try:
            module = importlib.import_module(fullname)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (exc.name == fullname or fullname.startswith(exc.name + ".")):
                continue  # the subpackage does not exist (yet): skip it
            _import_failed(fullname, exc)  # it exists but imports something missing
            continue
        except Exception as exc:  # noqa: BLE001 - any error while importing is reported
            _import_failed(fullname, exc)
            continue
        modules.append((name, module))
    return modules


def _kind(obj):
    """'class', 'function' or 'data' (numba-compiled functions count as functions)."""
    if inspect.isclass(obj):
        return "class"
    if inspect.isroutine(obj) or hasattr(obj, "py_func"):
        return "function"
    return "data"


def _summary_line(module):
    doc = inspect.getdoc(module) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


def _api_page(name, module):
    fullname = module.__name__
    public = [n for n in getattr(module, "__all__", []) if hasattr(module, n)]
    title = f":mod:`{fullname}`"
    lines = [
        f".. _api_{name}:",
        "",
        title,
        "=" * len(title),
        "",
        f".. automodule:: {fullname}",
        "   :no-members:",
        "   :no-inherited-members:",
        "",
        f".. currentmodule:: {fullname}",
        "",
    ]
    groups = {"class": [], "function": [], "data": []}
    for n in public:
        groups[_kind(getattr(module, n))].append(n)
    headings = {"class": "Classes", "function": "Functions", "data": "Other objects"}
    for kind in ("class", "function", "data"):
        if not groups[kind]:
            continue
        lines += [
            headings[kind],
            "-" * len(headings[kind]),
            "",
            ".. autosummary::",
            "   :toctree: .",
            f"   :template: autosummary/{kind}.rst",
            "",
        ]
        lines += [f"   {n}" for n in groups[kind]]
        lines.append("")
    if not public:
        lines += ["This subpackage has no public names yet.", ""]
    return "\n".join(lines), [f"{fullname}.{n}" for n in public]


def generate_api_reference():
    """Write docs/generated/api/{index,<subpackage>}.rst; remove pages and stubs now stale."""
    modules = _public_subpackages()
    expected = {"index.rst"}
    rows = []
    for name, module in modules:
        text, objects = _api_page(name, module)
        _write_if_changed(API_DIR / f"{name}.rst", text)
        expected.add(f"{name}.rst")
        expected.update(f"{obj}.rst" for obj in objects)
        rows.append((name, module))
    index = [
        ".. _api_reference:",
        "",
        "API reference",
        "=============",
        "",
        "Generated from the ``__all__`` of each public subpackage of skonline.",
        "",
        ".. list-table::",
        "   :widths: 30 70",
        "",
    ]
    for name, module in rows:
        index += [f"   * - :ref:`skonline.{name} <api_{name}>`", f"     - {_summary_line(module)}".rstrip()]
    index += ["", ".. toctree::", "   :hidden:", "   :maxdepth: 2", ""]
    index += [f"   {name}" for name, _ in rows]
    _write_if_changed(API_DIR / "index.rst", "\n".join(index) + "\n")
    for path in API_DIR.glob("*.rst"):
        if path.name not in expected:
            path.unlink()
    return dict(modules)


def generate_families(api_modules):
    """The table of families on the front page, linking to the pages that exist."""
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 22 52 13 13", ""]
    lines += ["   * - Family", "     - What it offers", "     - Guide", "     - API"]
    guide_dir = DOCS / "user_guide"
    for name, blurb in FAMILIES.items():
        has_guide = (guide_dir / f"{name}.rst").is_file()
        has_api = name in api_modules
        if not (has_guide or has_api):
            continue
        if has_api:
            blurb = _summary_line(api_modules[name]) or blurb
        lines += [
            f"   * - ``skonline.{name}``",
            f"     - {blurb}",
            f"     - :doc:`guide </user_guide/{name}>`" if has_guide else "     -",
            f"     - :ref:`API <api_{name}>`" if has_api else "     -",
        ]
    _write_if_changed(GENERATED / "families.inc", "\n".join(lines) + "\n")


with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    _API_MODULES = generate_api_reference()
generate_families(_API_MODULES)

# Stubs are generated for the autosummary directives of every page, listed here rather than
# taken from the environment: in an incremental build the environment does not know yet the API
# pages just written for a new subpackage, and their stubs would be missing.
autosummary_generate = sorted(
    path.relative_to(DOCS).as_posix()
    for path in DOCS.rglob("*.rst")
    if path.relative_to(DOCS).parts[0] not in {"_build", "_templates", "auto_examples"}
)


# -- docstring problems in other engineers' modules --------------------------------------------

_PARAM_LINE = re.compile(r"^(\s*\**[A-Za-z_][\w, *]*) : (.+)$")
_TRAILING_UNDERSCORE = re.compile(r"(?<![\\`\w])([A-Za-z]\w*[A-Za-z0-9])_(?=[\s,)\]}]|$)")


def _escape_attribute_names_in_types(app, what, name, obj, options, lines):
    """Type specs such as ``ndarray of shape (n_features_in_,)`` name an attribute.

    In reST, ``word_`` is a hyperlink reference, so docutils reports 'Unknown target name'.
    scikit-learn writes such names in backticks; where a docstring does not, escape the trailing
    underscore in the type part of ``name : type`` lines (only there), so it renders as written.
    """
    for k, line in enumerate(lines):
        m = _PARAM_LINE.match(line)
        if m and "`" not in m.group(2):
            lines[k] = m.group(1) + " : " + _TRAILING_UNDERSCORE.sub(r"\1\\_", m.group(2))


# Known, reported problems in module docstrings of other engineers; each entry is
# (substring of the warning location, substring of the message). Remove an entry once the
# docstring is fixed.
KNOWN_DOCSTRING_WARNINGS = [
    # Methods inherited from scikit-learn (score, get_metadata_routing, set_*_request,
    # set_output, ...) are documented on every estimator page; their docstrings point to
    # labels and glossary terms of scikit-learn's own documentation, which do not exist here.
    ("docstring of sklearn.", "undefined label:"),
    ("docstring of sklearn.", "term not in glossary:"),
    # skonline/kernel_ridge/_pkawv.py: PKAWVClassifier and PKAWVRegressor have no blank line
    # between "See Also" and "References" (the References block is appended to the See Also
    # text), so numpydoc cannot parse the docstrings and autodoc leaves the two pages empty.
    ("", "error while formatting signature for skonline.kernel_ridge.PKAWV"),
    ("kernel_ridge.rst", "failed to import object skonline.kernel_ridge.PKAWV"),
]


from docutils.nodes import Node  # noqa: E402
from sphinx.util.logging import get_node_location  # noqa: E402


class _KnownDocstringWarnings(logging.Filter):
    def filter(self, record):
        location = getattr(record, "location", None)
        if isinstance(location, Node):
            location = get_node_location(location)
        location = str(location or "")
        message = record.getMessage()
        return not any(loc in location and msg in message for loc, msg in KNOWN_DOCSTRING_WARNINGS)


def setup(app):
    # before numpydoc (priority 500) turns the sections into reST
    app.connect("autodoc-process-docstring", _escape_attribute_names_in_types, priority=100)
    for handler in logging.getLogger("sphinx").handlers:
        handler.filters.insert(0, _KnownDocstringWarnings())
