"""Streaming a dataset from disk, as the user guide (docs/user_guide/ecosystem.rst) shows it.

* A generator of chunks read with ``np.load(mmap_mode='r')`` (read-only arrays backed by files)
  through ``partial_fit_predict``: the same predictions and state as the same chunks in memory,
  and as ``fit`` on the whole array.
* A dask array over a memory-mapped file, streamed by dask-ml's ``Incremental``, and a plain
  loop over its blocks: the same model as ``fit`` on the whole array.
* A checkpoint written with joblib after every chunk and reloaded before the next one.
"""

from pathlib import Path

import numpy as np
import pytest

from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor
from skonline.utils import _test_instances as ti

from _ecosystem_helpers import (  # noqa: E402
    assert_same_state,
    dense_only,
    estimator_stream,
    learn,
    seeded,
)

CHUNKS = (70, 40, 90)
N = sum(CHUNKS)


def _slices():
    stops = np.cumsum(CHUNKS)
    return [slice(int(s - c), int(s)) for c, s in zip(CHUNKS, stops)]


def _write_chunks(folder, X, y):
    folder.mkdir()
    for k, sl in enumerate(_slices()):
        np.save(folder / f"X_{k:03d}.npy", X[sl])
        np.save(folder / f"y_{k:03d}.npy", y[sl])


def _chunks(folder):
    for x_path in sorted(Path(folder).glob("X_*.npy")):
        y_path = x_path.with_name(x_path.name.replace("X_", "y_"))
        yield np.load(x_path, mmap_mode="r"), np.load(y_path, mmap_mode="r")


SCALE_INVARIANT = [
    pytest.param(ScaleInvariantClassifier(), id="classifier-coordinate"),
    pytest.param(ScaleInvariantClassifier(invariance="full"), id="classifier-full"),
    pytest.param(ScaleInvariantRegressor(), id="regressor-coordinate"),
    pytest.param(ScaleInvariantRegressor(invariance="full"), id="regressor-full"),
]


# Chunks streamed from disk are read-only; skonline hands every validated input to the compiled
# code as a read-only view, so no second specialisation is compiled (test below). Only the
# reference family is streamed from disk here; every estimator is checked on chunks in memory.
@pytest.mark.parametrize("est", SCALE_INVARIANT)
def test_chunks_from_disk(est, tmp_path):
    X, y, first = estimator_stream(est, n_samples=N, only_classes=True)
    X = dense_only(X)
    _write_chunks(tmp_path / "stream", X, y)
    disk, memory = seeded(est), seeded(est)
    preds_disk, preds_memory = [], []
    for k, ((Xc, yc), sl) in enumerate(zip(_chunks(tmp_path / "stream"), _slices())):
        assert not Xc.flags.writeable
        kw = first if k == 0 else {}
        preds_disk.append(learn(disk, np.asarray(Xc), np.asarray(yc), **kw))
        preds_memory.append(learn(memory, X[sl], y[sl], **kw))
    np.testing.assert_array_equal(np.concatenate(preds_disk), np.concatenate(preds_memory))
    assert_same_state(disk, memory)
    assert disk.n_samples_seen_ == N
    assert_same_state(disk, seeded(est).fit(X, y, **first))


def test_read_only_chunks_do_not_recompile():
    from skonline.linear_model import _scale_invariant_core as core

    X, y, first = ti.test_stream(ScaleInvariantClassifier(), np.random.default_rng(7), n_samples=40)
    clf = ScaleInvariantClassifier()
    clf.partial_fit(X[:20], y[:20], **first)
    Xr = X[20:].copy()
    Xr.flags.writeable = False
    clf.partial_fit(Xr, y[20:])
    # the pass of the default invariance ('full'), compiled in this process by the fits above
    kinds = {sig[0].mutable for sig in core.full_pass.signatures}
    assert len(kinds) == 1, kinds


def test_checkpoint_after_every_chunk(tmp_path):
    joblib = pytest.importorskip("joblib")
    est = ScaleInvariantRegressor(invariance="full", loss="huber")
    X, y, _ = ti.test_stream(est, np.random.default_rng(5), n_samples=N)
    _write_chunks(tmp_path / "stream", X, y)
    path = tmp_path / "checkpoint.joblib"
    joblib.dump(ScaleInvariantRegressor(invariance="full", loss="huber"), path)
    for Xc, yc in _chunks(tmp_path / "stream"):
        model = joblib.load(path)
        model.partial_fit(np.asarray(Xc), np.asarray(yc))
        joblib.dump(model, path)
    assert_same_state(joblib.load(path), ScaleInvariantRegressor(invariance="full", loss="huber").fit(X, y))


def test_dask_array_over_a_memory_mapped_file(tmp_path):
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    pytest.importorskip("dask_ml")
    from dask_ml.wrappers import Incremental

    est = ScaleInvariantClassifier(invariance="full")
    X, y, first = ti.test_stream(est, np.random.default_rng(6), n_samples=N, n_classes=3)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    Xd = da.from_array(np.load(tmp_path / "X.npy", mmap_mode="r"), chunks=(60, -1))
    yd = da.from_array(np.load(tmp_path / "y.npy", mmap_mode="r"), chunks=(60,))
    assert Xd.numblocks == (4, 1)
    whole = ScaleInvariantClassifier(invariance="full").fit(X, y)
    with dask.config.set(scheduler="sync"):
        inc = Incremental(ScaleInvariantClassifier(invariance="full"), shuffle_blocks=False)
        inc.fit(Xd, yd, **first)
        loop = ScaleInvariantClassifier(invariance="full")
        for Xb, yb in zip(Xd.blocks, yd.blocks):
            Xc, yc = dask.compute(Xb, yb)
            loop.partial_fit(Xc, yc, **first)
        np.testing.assert_array_equal(inc.predict(Xd).compute(), whole.predict(X))
    assert_same_state(inc.estimator_, whole)
    assert_same_state(loop, whole)
