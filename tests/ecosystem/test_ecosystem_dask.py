"""dask interoperability.

* ``dask_ml.wrappers.Incremental`` streams the blocks of a dask array through ``partial_fit``, in
  order (``shuffle_blocks=False``), on the local scheduler and on a ``dask.distributed`` cluster
  (where the estimator travels to a worker and back by pickling): the fitted state and every
  prediction are bit-identical to a local ``partial_fit`` over the same blocks in the same order.
* ``GridSearchCV`` / ``cross_validate`` run on a ``LocalCluster`` through joblib's dask backend
  give the same selection and the same scores as the local run.

The cluster is in-process (``processes=False``: workers are threads, transport ``inproc://``, no
network). It has two single-threaded workers: joblib's dask backend sizes itself by the cluster's
total thread count and would run everything sequentially in the main thread with only one.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics import accuracy_score, mean_squared_error
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.utils import check_random_state

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
pytest.importorskip("dask_ml")
distributed = pytest.importorskip("distributed")
joblib = pytest.importorskip("joblib")

from dask_ml.wrappers import Incremental  # noqa: E402

from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor  # noqa: E402
from skonline.utils import _test_instances as ti  # noqa: E402

from _ecosystem_helpers import (  # noqa: E402
    assert_same_responses,
    assert_same_state,
    dense_only,
    estimator_params,
    estimator_stream,
    seeded,
)

#: uneven blocks of a few hundred rows
BLOCKS = (250, 150, 200)
N_ROWS = sum(BLOCKS)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None
    )
    client = distributed.Client(cluster, set_as_default=False)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.fixture(params=["sync", "distributed"])
def scheduler(request):
    """The scheduler that runs the Incremental graph: local, or the module's LocalCluster."""
    if request.param == "sync":
        return "sync"
    return request.getfixturevalue("client")


def _blocks(a):
    return da.from_array(a, chunks=(BLOCKS,) + a.shape[1:])


def _block_slices():
    stops = np.cumsum(BLOCKS)
    return [slice(int(stop - size), int(stop)) for size, stop in zip(BLOCKS, stops)]


def _local_partial_fit(est, X, y, first):
    for k, sl in enumerate(_block_slices()):
        est.partial_fit(X[sl], y[sl], **(first if k == 0 else {}))
    return est


def _check_incremental(est, X, y, first, scheduler):
    ref = _local_partial_fit(seeded(est), X, y, first)
    Xd, yd = _blocks(X), _blocks(y)
    assert Xd.numblocks[0] == len(BLOCKS)
    inc = Incremental(seeded(est), shuffle_blocks=False)
    with dask.config.set(scheduler=scheduler):
        if scheduler == "sync":
            inc.fit(Xd, yd, **first)  # dask-ml passes the fit keywords (classes) with every block
        else:  # the partial_fit calls ran as tasks on the cluster's workers
            with distributed.get_task_stream(scheduler) as ts:
                inc.fit(Xd, yd, **first)
            fit_tasks = [t for t in ts.data if "fit-" in str(t["key"])]
            assert len(fit_tasks) >= len(BLOCKS)
        assert inc.estimator_.n_samples_seen_ == N_ROWS
        assert_same_state(inc.estimator_, ref)
        assert_same_responses(inc.estimator_, ref, X)
        # ParallelPostFit predicts block by block: equal to local predictions on the same blocks
        for m in ("predict", "predict_proba", "transform"):
            if hasattr(ref, m):
                out = getattr(inc, m)(Xd)
                assert isinstance(out, da.Array), m
                local = np.concatenate([getattr(ref, m)(X[sl]) for sl in _block_slices()])
                np.testing.assert_array_equal(out.compute(), local, err_msg=m)
    return inc, ref


SCALE_INVARIANT = [
    pytest.param(ScaleInvariantClassifier(), id="classifier-coordinate"),
    pytest.param(ScaleInvariantClassifier(invariance="full"), id="classifier-full"),
    pytest.param(ScaleInvariantRegressor(), id="regressor-coordinate"),
    pytest.param(ScaleInvariantRegressor(invariance="full", loss="huber"), id="regressor-full"),
]


@pytest.mark.parametrize("est", SCALE_INVARIANT)
def test_incremental_scale_invariant(est, scheduler):
    """Incremental over dask blocks equals local partial_fit over the same blocks, bit for bit."""
    if isinstance(est, ScaleInvariantClassifier):  # a three-class stream: one-vs-rest heads
        X, y, first = ti.test_stream(est, np.random.default_rng(1), n_samples=N_ROWS, n_classes=3)
    else:
        X, y, first = ti.test_stream(est, np.random.default_rng(1), n_samples=N_ROWS)
    inc, ref = _check_incremental(est, X, y, first, scheduler)
    assert inc.estimator_.coef_.shape == ref.coef_.shape
    np.testing.assert_array_equal(inc.estimator_.neg_cum_grad_, ref.neg_cum_grad_)
    with dask.config.set(scheduler=scheduler):  # blockwise predictions equal local ones on the same blocks
        # (not whole-array ones bit for bit: the product goes through BLAS, whose rounding may
        # depend on the shape: test_parallel_post_fit compares those to round-off)
        local = np.concatenate([ref.predict(X[sl]) for sl in _block_slices()])
        np.testing.assert_array_equal(inc.predict(_blocks(X)).compute(), local)
    # Incremental's score runs blockwise on the dask array (dask-ml's own metrics). Its "r2"
    # scorer fails on this dask version for scikit-learn's SGDRegressor too, so use the MSE.
    if isinstance(est, ScaleInvariantClassifier):
        scoring, expected = "accuracy", accuracy_score(y, ref.predict(X))
    else:
        scoring, expected = "neg_mean_squared_error", -mean_squared_error(y, ref.predict(X))
    inc.set_params(scoring=scoring)
    with dask.config.set(scheduler=scheduler):
        assert inc.score(_blocks(X), _blocks(y)) == pytest.approx(expected, rel=1e-12)


def test_incremental_block_order_matters():
    """The comparison above can fail: shuffled blocks give another (order-dependent) state."""
    est = ScaleInvariantClassifier()
    X, y, first = ti.test_stream(est, np.random.default_rng(1), n_samples=N_ROWS)
    order = list(range(len(BLOCKS)))
    check_random_state(0).shuffle(order)
    assert order != sorted(order)
    ref = _local_partial_fit(seeded(est), X, y, first)
    with dask.config.set(scheduler="sync"):
        shuffled = Incremental(seeded(est), shuffle_blocks=True, random_state=0).fit(
            _blocks(X), _blocks(y), **first
        )
    assert shuffled.estimator_.n_samples_seen_ == ref.n_samples_seen_
    assert not np.array_equal(shuffled.estimator_.neg_cum_grad_, ref.neg_cum_grad_)


@pytest.mark.parametrize("est", estimator_params(["classifier", "regressor"]))
def test_incremental_every_online_estimator(est, scheduler):
    """Every online classifier / regressor: Incremental over dask blocks equals local partial_fit."""
    X, y, first = estimator_stream(est, n_samples=N_ROWS, only_classes=True)
    _check_incremental(est, dense_only(X), y, first, scheduler)


@pytest.mark.parametrize("est", estimator_params(require=("fit",)))
def test_parallel_post_fit_every_estimator(est):
    """Every estimator: fitted in memory, predicting a dask array block by block (ParallelPostFit).

    Labels are identical. Real-valued outputs agree to 1e-12 relative, not bit for bit: several
    estimators compute a row's output with matrix products whose rounding depends on how many
    rows are in the batch (1-ulp differences between one call and three); the reference family
    is checked bit for bit above.
    """
    from dask_ml.wrappers import ParallelPostFit

    X, y, first = estimator_stream(est, n_samples=N_ROWS)
    X = dense_only(X)
    ppf = ParallelPostFit(seeded(est)).fit(X, y, **first)
    Xd = _blocks(X)
    with dask.config.set(scheduler="sync"):
        for m in ("predict", "predict_proba", "transform"):
            if not hasattr(ppf.estimator, m):
                continue
            out = getattr(ppf, m)(Xd)
            assert isinstance(out, da.Array), m
            out, whole = out.compute(), np.asarray(getattr(ppf.estimator, m)(X))
            if np.issubdtype(whole.dtype, np.floating):
                np.testing.assert_allclose(out, whole, rtol=1e-12, atol=1e-14, err_msg=m)
            else:
                np.testing.assert_array_equal(out, whole, err_msg=m)


# --------------------------------------------------------------------------- joblib's dask backend
def _on_cluster(client, fn):
    """Run ``fn()`` under joblib's dask backend; return its result and the cluster's task stream."""
    with distributed.get_task_stream(client) as ts, joblib.parallel_backend("dask", client=client):
        out = fn()
    return out, ts.data


def _cv_keys(results):
    return [k for k in results if "test_" in k or "train_" in k or k.startswith("rank_")]


GRIDS = [
    pytest.param(
        ScaleInvariantClassifier(),
        {"invariance": ["coordinate", "full"], "potential_alpha": [1.2, 1.5, 4.0], "loss": ["log_loss", "hinge"]},
        make_classification(n_samples=240, n_features=5, n_informative=3, random_state=0),
        id="classifier",
    ),
    pytest.param(
        ScaleInvariantRegressor(),
        {"invariance": ["coordinate", "full"], "potential_alpha": [1.2, 3.0], "loss": ["absolute_error", "huber"]},
        make_regression(n_samples=240, n_features=5, noise=5.0, random_state=0),
        id="regressor",
    ),
]


@pytest.mark.parametrize("est, grid, data", GRIDS)
def test_grid_search_on_dask_cluster(client, est, grid, data):
    """GridSearchCV through joblib's dask backend: same best_params_ and cv_results_ as locally."""
    X, y = data
    local = GridSearchCV(est, grid, cv=3, n_jobs=1, return_train_score=True).fit(X, y)
    remote, tasks = _on_cluster(
        client, lambda: GridSearchCV(est, grid, cv=3, n_jobs=2, return_train_score=True).fit(X, y)
    )
    assert tasks and all(t["status"] == "OK" for t in tasks)  # the fits ran on the cluster
    assert {t["worker"] for t in tasks} <= set(client.scheduler_info()["workers"])
    assert remote.best_params_ == local.best_params_
    assert remote.best_index_ == local.best_index_
    assert remote.best_score_ == local.best_score_
    assert remote.cv_results_["params"] == local.cv_results_["params"]
    keys = _cv_keys(local.cv_results_)
    assert "mean_test_score" in keys and "split2_test_score" in keys
    for k in keys:
        np.testing.assert_array_equal(remote.cv_results_[k], local.cv_results_[k], err_msg=k)
    assert_same_state(remote.best_estimator_, local.best_estimator_)
    # the scores are not all equal, so the selection is a real one
    assert np.unique(local.cv_results_["mean_test_score"]).size > 1


@pytest.mark.parametrize("est", estimator_params(["classifier", "regressor"], require=("fit",)))
def test_cross_validate_on_dask_cluster(client, est):
    """Every classifier / regressor: folds fitted on cluster workers equal the local ones."""
    X, y, first = estimator_stream(est, n_samples=90, only_classes=True)
    est = seeded(est)
    cv = KFold(3)

    def run(n_jobs):
        return cross_validate(est, X, y, cv=cv, n_jobs=n_jobs, return_estimator=True)

    local = run(1)
    remote, tasks = _on_cluster(client, lambda: run(2))
    assert tasks
    np.testing.assert_array_equal(remote["test_score"], local["test_score"])
    for a, b in zip(remote["estimator"], local["estimator"]):
        assert_same_state(a, b)


def test_scorer_runs_on_worker(client):
    """Negative control for the task-stream check: without the dask backend nothing reaches the cluster."""
    X, y = make_classification(n_samples=60, random_state=0)
    with distributed.get_task_stream(client) as ts:
        s = cross_validate(ScaleInvariantClassifier(), X, y, cv=KFold(3), n_jobs=1, scoring="accuracy")
    assert not ts.data
    local = clone(ScaleInvariantClassifier()).fit(X[20:], y[20:])
    assert s["test_score"][0] == accuracy_score(y[:20], local.predict(X[:20]))
