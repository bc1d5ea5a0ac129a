"""joblib interoperability, for every estimator with ``partial_fit`` that ``all_estimators()`` finds.

* ``joblib.dump`` / ``joblib.load`` mid-stream (after a first chunk), plain, compressed or
  memory-mapped copy-on-write, then continuing the stream equals never stopping, bit for bit.
* A model loaded read-only (``mmap_mode='r'``) predicts exactly, and continues to learn (the
  streaming contract copies read-only state arrays before a pass). Both run on the scale-invariant
  learners only: read-only arrays make numba compile another specialization of each pass.
"""

import numpy as np
import pytest

joblib = pytest.importorskip("joblib")

from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor  # noqa: E402

from _ecosystem_helpers import (  # noqa: E402
    assert_same_responses,
    assert_same_state,
    estimator_params,
    estimator_stream,
    learn,
    seeded,
    sub,
)

FIRST = slice(0, 25)
REST = slice(25, None)
ONLINE = estimator_params()


def _first_chunk(est):
    X, y, first = estimator_stream(est, n_samples=60)
    a = seeded(est)
    a.partial_fit(X[FIRST], sub(y, FIRST), **first)
    return a, X, y


def _dump_load(est, tmp_path, *, compress=0, mmap_mode=None):
    path = tmp_path / "model.joblib"
    joblib.dump(est, path, compress=compress)
    return joblib.load(path, mmap_mode=mmap_mode)


@pytest.mark.parametrize("how", ["plain", "compressed", "mmap-copy-on-write"])
@pytest.mark.parametrize("est", ONLINE)
def test_dump_load_mid_stream(est, how, tmp_path):
    a, X, y = _first_chunk(est)
    b = _dump_load(
        a, tmp_path, compress=3 if how == "compressed" else 0,
        mmap_mode="c" if how == "mmap-copy-on-write" else None,
    )
    assert type(b) is type(a)
    assert_same_state(a, b)
    assert_same_responses(a, b, X)
    # continue both: the reloaded one equals the one that never stopped
    pa = learn(a, X[REST], sub(y, REST))
    pb = learn(b, X[REST], sub(y, REST))
    if pa is not None:
        np.testing.assert_array_equal(pa, pb)
    assert_same_state(a, b)
    assert_same_responses(a, b, X)
    assert a.n_samples_seen_ == X.shape[0]


SCALE_INVARIANT = [
    pytest.param(ScaleInvariantClassifier(), id="classifier-coordinate"),
    pytest.param(ScaleInvariantClassifier(invariance="full"), id="classifier-full"),
    pytest.param(ScaleInvariantClassifier(invariance="full", predict_mode="online"), id="classifier-full-online"),
    pytest.param(ScaleInvariantRegressor(), id="regressor-coordinate"),
    pytest.param(ScaleInvariantRegressor(invariance="full"), id="regressor-full"),
]


# Read-only state makes numba compile a read-only specialization of every prediction pass (about
# 40 s over all estimators on a cold cache), so this runs on the reference family only.
@pytest.mark.parametrize("est", SCALE_INVARIANT)
def test_read_only_mmap_predicts(est, tmp_path):
    """Loaded read-only (the state is read-only memmaps): predicts exactly, and writes nothing."""
    a, X, y = _first_chunk(est)
    b = _dump_load(a, tmp_path, mmap_mode="r")
    assert not any(v.flags.writeable for v in vars(b).values() if isinstance(v, np.memmap))
    assert_same_responses(a, b, X)
    assert_same_state(a, b)


@pytest.mark.parametrize("est", SCALE_INVARIANT)
def test_read_only_mmap_continue(est, tmp_path):
    a, X, y = _first_chunk(est)
    b = _dump_load(a, tmp_path, mmap_mode="r")
    np.testing.assert_array_equal(learn(b, X[REST], y[REST]), learn(a, X[REST], y[REST]))
    assert_same_state(a, b)
