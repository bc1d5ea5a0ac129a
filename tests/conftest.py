"""Test configuration: the shared benchmark datasets serve as the loaders' data home."""

import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = _REPO.parent / "shared" / "datasets"

if "SKONLINE_DATA" not in os.environ and SHARED_DATA.is_dir():
    os.environ["SKONLINE_DATA"] = str(SHARED_DATA)

# The xdist workers share one numba disk cache (numba's default place: the installed package's
# __pycache__, or NUMBA_CACHE_DIR), so that each compiled function is compiled once for the suite,
# not once per worker: GroupDRO's passes take 10-20 s each to compile cold on a 2-core machine,
# and a cache per worker doubled that part of the suite. Two workers compiling two signatures of
# one function at once can still take the same entry number in numba's index; skonline's cache
# (skonline.utils._jit._Cache) detects an entry overwritten that way from its seal and compiles
# it again (tests/test_compile_cache.py), which it did not yet do when the workers had a cache each.


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
