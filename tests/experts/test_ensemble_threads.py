"""The experts of an online ensemble learn side by side in threads (``n_jobs``).

skonline's compiled passes release the GIL, and each expert learns on its own working copy, so
threads never change the result: any ``n_jobs`` gives what one thread gives. The runner
(:mod:`skonline.utils._threads`) waits for every task before it raises, so a failing or
interrupted chunk leaves the ensemble exactly as it was.
"""

import _thread
import pickle
import threading
import time

import numpy as np
import pytest
import sklearn

from skonline.experts import OnlineEnsembleClassifier, OnlineEnsembleRegressor, _ensemble
from skonline.kernel_ridge import KernelAWVRegressor, PKAWVRegressor
from skonline.linear_model import ScaleInvariantRegressor
from skonline.utils import _threads


@pytest.fixture(autouse=True)
def _threads_on_any_chunk(monkeypatch):
    """These tests run threads on chunks of any cost (the ensembles otherwise use them only for
    chunks whose experts took THREADS_MIN_SECONDS together on the previous chunk)."""
    monkeypatch.setattr(_ensemble, "THREADS_MIN_SECONDS", 0.0)


def _data(n=600, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.array([1.0, 10.0, 0.1, 1.0, 3.0, 1.0])[:d]
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1] - X[:, 2] ** 2 + 0.1 * rng.standard_normal(n)
    return X, y


def _feed(est, X, y, size, **first):
    out = []
    for a in range(0, X.shape[0], size):
        out.append(est.partial_fit_predict(X[a:a + size], y[a:a + size], **(first if a == 0 else {})))
    return np.concatenate(out)


def _blas_free():
    """Experts whose passes are skonline's compiled code only (no BLAS): comparable bit for bit."""
    return [("pkawv", PKAWVRegressor(features="nystrom", random_state=0)),
            ("si", ScaleInvariantRegressor(invariance="coordinate")),
            ("kawv", KernelAWVRegressor())]


@pytest.mark.parametrize("size", [600, 37])
def test_threads_give_the_same_bits(size):
    X, y = _data()
    one = OnlineEnsembleRegressor(_blas_free(), n_jobs=1, random_state=0)
    two = OnlineEnsembleRegressor(_blas_free(), n_jobs=2, random_state=0)
    many = OnlineEnsembleRegressor(_blas_free(), n_jobs=-1, random_state=0)
    ref = _feed(one, X, y, size)
    np.testing.assert_array_equal(_feed(two, X, y, size), ref)
    np.testing.assert_array_equal(_feed(many, X, y, size), ref)
    np.testing.assert_array_equal(two.predict(X), one.predict(X))
    # the pickles too: the timings that order the threads are not state and are not pickled
    assert pickle.dumps(two.set_params(n_jobs=1)) == pickle.dumps(one)


@pytest.mark.parametrize("task", ["classifier", "regressor"])
def test_default_ensemble_same_result_in_threads(task):
    X, y = _data(n=500)
    kw = {}
    if task == "classifier":
        y = (y > np.median(y)).astype(int)
        kw = {"classes": [0, 1]}
    cls = OnlineEnsembleClassifier if task == "classifier" else OnlineEnsembleRegressor
    ref = _feed(cls(random_state=0, n_jobs=1), X, y, 50, **kw)
    got = _feed(cls(random_state=0, n_jobs=2), X, y, 50, **kw)
    # the default experts include BLAS calls (numpy @): bit equality is not promised across them
    if task == "classifier":
        assert np.mean(got == ref) > 0.995
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)


def test_experts_do_run_in_worker_threads(monkeypatch):
    seen = {}
    part = OnlineEnsembleRegressor._prequential_part

    def spy(self, k, method, X, y, kw):
        seen.setdefault(self.n_jobs, set()).add(threading.current_thread().name.startswith("skonline-worker"))
        return part(self, k, method, X, y, kw)

    monkeypatch.setattr(OnlineEnsembleRegressor, "_prequential_part", spy)
    X, y = _data(n=200)
    OnlineEnsembleRegressor(_blas_free(), n_jobs=1).fit(X, y)
    _feed(OnlineEnsembleRegressor(_blas_free(), n_jobs=2), X, y, 50)
    assert seen[1] == {False}
    assert seen[2] == {True}


def test_threads_only_for_chunks_that_cost_enough(monkeypatch):
    monkeypatch.setattr(_ensemble, "THREADS_MIN_SECONDS", 1e9)
    calls = []
    real = _ensemble.run_tasks
    monkeypatch.setattr(_ensemble, "run_tasks", lambda tasks, n: calls.append(n) or real(tasks, n))
    X, y = _data(n=200)
    _feed(OnlineEnsembleRegressor(_blas_free(), n_jobs=2), X, y, 50)
    assert calls == []
    monkeypatch.setattr(_ensemble, "THREADS_MIN_SECONDS", 1e-12)
    _feed(OnlineEnsembleRegressor(_blas_free(), n_jobs=2), X, y, 50)
    assert calls == [2, 2, 2]  # the first chunk in the caller (no timing yet), then in threads


def test_nested_ensemble_runs_its_experts_in_the_worker():
    X, y = _data(n=300)

    def make(n_jobs):
        inner = OnlineEnsembleRegressor(_blas_free()[:2], n_jobs=n_jobs)
        return OnlineEnsembleRegressor([("inner", inner), ("kawv", KernelAWVRegressor())], n_jobs=n_jobs)

    np.testing.assert_array_equal(_feed(make(2), X, y, 40), _feed(make(1), X, y, 40))


def test_a_failing_expert_rejects_the_chunk_and_changes_nothing():
    X, y = _data(n=200)
    ens = OnlineEnsembleRegressor(_blas_free(), n_jobs=2).fit(X[:100], y[:100])
    before = pickle.dumps(ens)
    bad = X[100:150].copy()
    with pytest.raises(ValueError):
        ens.partial_fit(bad[:, :3], y[100:150])  # wrong width: every expert refuses
    assert pickle.dumps(ens) == before


# --------------------------------------------------------------------------- the runner
def test_runner_keeps_the_order_and_raises_the_first_error_after_all_ended():
    ended = []

    def task(i, fail=False):
        def run():
            ended.append(i)
            if fail:
                raise ValueError(f"task {i}")
            return i * i
        return run

    assert _threads.run_tasks([task(i) for i in range(5)], 2) == [0, 1, 4, 9, 16]
    ended.clear()
    with pytest.raises(ValueError, match="task 1"):
        _threads.run_tasks([task(0), task(1, True), task(2, True), task(3)], 2)
    assert sorted(ended) == [0, 1, 2, 3]


def test_runner_waits_for_running_tasks_when_interrupted():
    """A Ctrl-C of the caller while tasks run: the interrupt propagates only once every task that
    started has ended (the tasks not started are given up)."""
    log = []

    def slow():
        log.append("start")
        time.sleep(0.3)
        log.append("end")

    def trigger():
        log.append("start")
        _thread.interrupt_main()  # what a Ctrl-C does: the caller's next bytecode raises
        log.append("end")

    with pytest.raises(KeyboardInterrupt):
        _threads.run_tasks([slow, trigger] + [slow] * 6, 2)
    assert log.count("start") == log.count("end")
    assert log.count("start") < 8  # some were given up
    # the pool goes on serving
    assert _threads.run_tasks([lambda: 1, lambda: 2], 2) == [1, 2]


def test_runner_gives_tasks_the_callers_configuration():
    with sklearn.config_context(assume_finite=True):
        got = _threads.run_tasks([lambda: sklearn.get_config()["assume_finite"]] * 3, 2)
    assert got == [True, True, True]


def test_runner_makes_a_new_pool_in_a_forked_child(monkeypatch):
    pool = _threads._pool(2)
    assert _threads._pool(2) is pool
    monkeypatch.setattr(_threads.os, "getpid", lambda: -1)  # as in a child made by fork
    child = _threads._pool(2)
    assert child is not pool
    assert _threads.run_tasks([lambda: 1, lambda: 2], 2) == [1, 2]


@pytest.mark.parametrize("n_jobs, expected", [(None, "cpus"), (-1, "cpus"), (1, 1), (3, 3), (10, 4)])
def test_effective_threads(n_jobs, expected):
    cpus = _threads.available_cpus()
    want = min(cpus, 4) if expected == "cpus" else expected
    assert _threads.effective_n_threads(n_jobs, 4) == want


def test_n_jobs_is_validated():
    X, y = _data(n=20)
    with pytest.raises(ValueError, match="n_jobs"):
        OnlineEnsembleRegressor(_blas_free(), n_jobs=0).fit(X, y)


def test_an_expert_refusing_a_row_in_a_thread_sleeps_on_it_as_in_one_thread():
    from skonline.exceptions import DataAdviceWarning
    from skonline.kernel_ridge import AWVRegressor

    X, y = _data(n=120)
    X[57, 0] = 1e12  # the full-invariance learner refuses this row

    def make(n_jobs):
        return OnlineEnsembleRegressor([("si", ScaleInvariantRegressor(invariance="full")), ("awv", AWVRegressor())],
                                       n_jobs=n_jobs, random_state=0)

    with pytest.warns(DataAdviceWarning, match="expert 'si' refused 1 row"):
        two = _feed(make(2), X, y, 40)
    with pytest.warns(DataAdviceWarning, match="expert 'si' refused 1 row"):
        one = _feed(make(1), X, y, 40)
    np.testing.assert_array_equal(two, one)


def test_threaded_partial_fit_interrupted_at_any_line_is_all_or_nothing():
    """The common checks' interrupt test (a KeyboardInterrupt at every Python line of the caller)
    with the experts in threads: the ensemble is exactly as before the call or as after it, and
    goes on learning as if never interrupted."""
    from test_common import _assert_atomic_under_interrupts

    X, y = _data(n=120)
    e = OnlineEnsembleRegressor(_blas_free(), n_jobs=2, random_state=0).fit(X[:40], y[:40])
    _assert_atomic_under_interrupts(
        e, lambda f: f.partial_fit(X[40:80], y[40:80]), lambda f: f.partial_fit(X[80:], y[80:]))
