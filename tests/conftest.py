"""Test configuration: the shared benchmark datasets serve as the loaders' data home."""

import os
import tempfile
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = _REPO.parent / "shared" / "datasets"

if "SKONLINE_DATA" not in os.environ and SHARED_DATA.is_dir():
    os.environ["SKONLINE_DATA"] = str(SHARED_DATA)

# numba's disk cache numbers a function's entries from its index file: two processes compiling two
# signatures (or two closure variants) of one function at the same moment can both take the same
# number, and one overwrites the other's code, which a later load then runs (seen once: GroupDRO's
# stream pass, classifier and regressor, compiled by the two workers of `pytest -n 2` over a stale
# cache, crashed). So each xdist worker keeps a cache of its own (under NUMBA_CACHE_DIR if set).
# Set before numba is imported: numba reads the variable once.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER:
    _base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(tempfile.gettempdir(), "skonline-tests-numba")
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(_base, _WORKER)


def _have_data():
    home = os.environ.get("SKONLINE_DATA")
    return bool(home) and Path(home, "magic04.npz").is_file()


requires_data = pytest.mark.skipif(
    not _have_data(), reason="benchmark datasets not available (set SKONLINE_DATA)"
)


@pytest.fixture(autouse=True)
def _restore_sklearn_config():
    """Every test starts from the same scikit-learn configuration. The tests that interrupt a call
    at every Python line also interrupt scikit-learn's own ``config_context`` (its ``_fit_context``
    sets ``skip_parameter_validation`` for nested calls) between setting and restoring, which would
    otherwise leave the configuration changed for the tests that follow in the same process (and
    skonline honours ``skip_parameter_validation``)."""
    import sklearn

    config = sklearn.get_config()
    yield
    sklearn.set_config(**config)
