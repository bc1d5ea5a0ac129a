"""pytest hooks for the doctests collected from the package (``--pyargs skonline``).

A docstring example may show an optional library at work (a pandas DataFrame through
:class:`~skonline.compose.OnlineColumnTransformer`). The README's test command installs those
libraries; where one is missing (``.ci/run --oldest`` installs the ``test`` extra only), the
examples that import it are skipped, as the tests skip with ``pytest.importorskip``.
"""

import importlib.util
import re

import pytest

_IMPORT = re.compile(r"^\s*(?:import|from)\s+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)


def _missing_imports(dtest):
    """Top-level modules a doctest imports that are not installed."""
    names = {m for ex in dtest.examples for m in _IMPORT.findall(ex.source)}
    return sorted(m for m in names if importlib.util.find_spec(m) is None)


def pytest_collection_modifyitems(config, items):
    for item in items:
        dtest = getattr(item, "dtest", None)  # a DoctestItem
        if dtest is None:
            continue
        missing = _missing_imports(dtest)
        if missing:
            item.add_marker(pytest.mark.skip(reason=f"the example imports {', '.join(missing)}, not installed"))
