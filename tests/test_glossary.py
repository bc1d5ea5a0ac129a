"""One name per concept: the glossary of parameter names in CONTRIBUTING.md against the estimators.

CONTRIBUTING.md, "Glossary of parameter names", lists every public constructor parameter name of
skonline's estimators with one meaning and one type, and the retired names with what replaced them.
These tests check, over ``skonline.utils.all_estimators()``:

* every constructor parameter name is in the glossary (a new name must be added there, where a
  clash with an existing meaning shows);
* the type words of a parameter's docstring entry (the first line of its Parameters entry, before
  ``default=``) are among those of its glossary row, and every word of a row is used by some
  estimator (so the rows stay exact);
* a retired name appears only as a deprecated alias: default ``'deprecated'`` on exactly the
  estimators its row names, declared in the class's ``_renamed_params`` table with its new name.
"""

import inspect
import pathlib
import re

import pytest

from skonline.utils._deprecation import DEPRECATED
from skonline.utils._discovery import all_estimators

#: the docstring parser (the docs extra): the README's test command installs it
NumpyDocString = pytest.importorskip("numpydoc.docscrape").NumpyDocString

CONTRIBUTING = pathlib.Path(__file__).resolve().parents[1] / "CONTRIBUTING.md"

#: the type words a glossary row or a docstring type may use: (pattern, word)
TYPE_WORDS = [
    (r"'[^']*'|\bstr\b", "str"),
    (r"\bfloat\b|\bnp\.nan\b|\bnumerical value\b", "float"),
    (r"\bint\b", "int"),
    (r"\bbool\b", "bool"),
    (r"\bNone\b", "None"),
    (r"\btuple\b", "tuple"),
    (r"\blist\b", "list"),
    (r"\bdict\b", "dict"),
    (r"\barray-like\b", "array-like"),
    (r"\bdtype\b", "dtype"),
    (r"\bRandomState\b", "RandomState"),
    (r"\bGenerator\b", "Generator"),
    (r"\bpandas\.NA\b", "pandas.NA"),
    (r"\bestimator\b|\btransformer\b|\brule\b|\bKernelSelection\w+", "estimator"),
]


def type_words(text):
    """The type words of a type description (``"float or 'auto'"`` -> {'float', 'str'}); a
    docstring's ``default=None`` counts as ``None`` (numpydoc's ``int, default=None``)."""
    m = re.search(r",?\s*default\s*[=:]\s*(.*)$", text)
    kind, default = (text[: m.start()], m.group(1).strip()) if m else (text, "")
    words = {word for pattern, word in TYPE_WORDS if re.search(pattern, kind)}
    return words | {"None"} if default == "None" else words


def _section(text, title, level="##"):
    start = text.index(f"{level} {title}\n")
    end = text.find(f"\n{level} ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def _table(text):
    """Rows of the first Markdown table in ``text``, as lists of cells (header and rule skipped)."""
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in rows[2:]]


def _names(cell):
    return re.findall(r"`([^`]+)`", cell)


def read_glossary(path=CONTRIBUTING):
    """(current, retired): ``{name: (type, meaning)}`` and ``[(old, {estimators}, new)]``."""
    section = _section(path.read_text(encoding="utf-8"), "Glossary of parameter names")
    current_part, _, retired_part = section.partition("### Retired names")
    current = {}
    for name, typ, meaning in _table(current_part):
        (name,) = _names(name)
        assert name not in current, f"the glossary lists {name!r} twice: one meaning per name"
        current[name] = (typ, meaning)
    retired = []
    for old, where, new in _table(retired_part):
        (old,), (new,) = _names(old), _names(new)
        retired.append((old, set(_names(where)), new))
    return current, retired


def _parameters():
    """(estimator name, class, parameter name, default, docstring type or None) for every
    constructor parameter of every public estimator."""
    out = []
    for name, cls in all_estimators():
        doc = NumpyDocString(inspect.getdoc(cls) or "")
        types = {}
        for p in doc["Parameters"]:
            for n in p.name.split(","):
                types[n.strip()] = p.type
        for pname, par in inspect.signature(cls.__init__).parameters.items():
            if pname == "self" or par.kind in (par.VAR_KEYWORD, par.VAR_POSITIONAL):
                continue
            out.append((name, cls, pname, par.default, types.get(pname)))
    return out


GLOSSARY = read_glossary()
PARAMETERS = _parameters()


def _is_deprecated(default):
    return isinstance(default, str) and default == DEPRECATED


def test_the_glossary_is_read():
    current, retired = GLOSSARY
    assert len(current) > 80 and len(retired) >= 9
    assert type_words(current["alpha"][0]) == {"float", "str"}
    assert type_words("{'mixture', 'best', 'sampled'}, default='mixture'") == {"str"}
    assert len(PARAMETERS) > 250


def test_every_parameter_name_is_in_the_glossary():
    current, _ = GLOSSARY
    missing = sorted({(p, est) for est, _, p, default, _ in PARAMETERS
                      if not _is_deprecated(default) and p not in current})
    assert not missing, (
        "parameters missing from CONTRIBUTING.md's glossary (add each with its one meaning, or "
        f"use the existing name of the same concept): {missing}"
    )


def test_docstring_types_agree_with_the_glossary():
    current, _ = GLOSSARY
    used = {name: set() for name in current}
    for est, _, p, default, doc_type in PARAMETERS:
        assert doc_type is not None, f"{est}: parameter {p!r} has no entry in the docstring's Parameters"
        words = type_words(doc_type)
        assert words, f"{est}.{p}: no type word in {doc_type!r}"
        if _is_deprecated(default):
            continue
        allowed = type_words(current[p][0])
        assert words <= allowed, (
            f"{est}.{p}: the docstring says {doc_type!r} ({sorted(words)}), the glossary "
            f"{current[p][0]!r} ({sorted(allowed)})"
        )
        used[p] |= words
    stale = {p: sorted(type_words(current[p][0]) - used[p]) for p in current
             if used[p] and type_words(current[p][0]) - used[p]}
    assert not stale, f"glossary type words no estimator uses: {stale}"
    unused = sorted(p for p in current if not used[p])
    assert not unused, f"glossary names no estimator has: {unused}"


def test_retired_names_are_only_deprecated_aliases():
    current, retired = GLOSSARY
    rows = {}
    for old, where, new in retired:
        assert new in current, f"{old} -> {new}: the new name is not in the glossary"
        for est in where:
            rows[(est, old)] = new
    seen = set()
    for est, cls, p, default, _ in PARAMETERS:
        renamed = getattr(cls, "_renamed_params", {})
        if (est, p) in rows:
            assert _is_deprecated(default), f"{est}.{p} is retired: its default must be 'deprecated'"
            assert renamed.get(p) == rows[(est, p)], f"{est}._renamed_params must map {p!r} to {rows[(est, p)]!r}"
            assert rows[(est, p)] in inspect.signature(cls.__init__).parameters, (est, p)
            seen.add((est, p))
        elif _is_deprecated(default):
            pytest.fail(f"{est}.{p} defaults to 'deprecated' but the glossary does not retire it")
        elif p in renamed:
            pytest.fail(f"{est}._renamed_params retires {p!r} but it is a live parameter")
    assert seen == set(rows), f"retired rows naming no such deprecated parameter: {set(rows) - seen}"
