"""skonline.utils._jit: the options every core is compiled with, and helpers without a Python entry."""

import numba
import numpy as np
import pytest

from skonline.kernel_selection._core import _dot
from skonline.utils._jit import JIT_OPTIONS, _Cache, compiled_only, njit
from skonline.utils._projections import exp_nonpos


@compiled_only
def _twice(x):
    return 2.0 * x


@njit
def _caller(x):
    return _twice(x) + 1.0


@numba.njit
def _exp_nonpos(x):
    return exp_nonpos(x)


def test_compiled_only_runs_from_compiled_code_and_refuses_python():
    assert _caller(3.0) == 7.0
    # a call from Python would crash the interpreter (no CPython wrapper): it is refused first
    with pytest.raises(TypeError, match="without a Python entry point"):
        _twice(3.0)
    with pytest.raises(TypeError, match="compiled code"):
        _dot(np.ones(2), np.ones(2), 2)
    assert _exp_nonpos(0.0) == 1.0 and _exp_nonpos(-1.0) == pytest.approx(np.exp(-1.0), rel=1e-15)


def test_compiled_only_keeps_options_and_the_disk_cache():
    assert _twice.targetoptions["no_cpython_wrapper"] and _twice.targetoptions["no_cfunc_wrapper"]
    assert _dot.targetoptions["fastmath"] == {"reassoc", "contract"}  # its own options are kept
    assert JIT_OPTIONS["cache"] and _twice._cache is not None
    assert isinstance(_twice._cache, _Cache)  # skonline's disk cache (see the cache tests below)


def test_the_test_workers_share_one_numba_cache():
    # tests/conftest.py: each function is compiled once for the suite; skonline's cache recompiles
    # an entry that two workers' concurrent compiles overwrote (tests/test_compile_cache.py)
    import os

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        pytest.skip("not an xdist worker")
    assert not numba.config.CACHE_DIR.endswith(os.sep + worker)
