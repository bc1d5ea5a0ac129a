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

#: the ensembles' own choice of threads or not (the fixture below replaces it)
_POLICY, _CHOSEN = _ensemble._next_threads_timing, _ensemble._threads_chosen


@pytest.fixture(autouse=True)
def _threads_on_any_chunk(monkeypatch):
    """These tests run every chunk in threads, the first after a pickle included (the ensembles
    otherwise time both ways and keep the faster: _next_threads_timing)."""
    monkeypatch.setattr(_ensemble, "_threads_chosen", lambda timing: True)


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
        seen.setdefault(self.n_jobs, []).append(threading.current_thread().name.startswith("skonline-worker"))
        return part(self, k, method, X, y, kw)

    monkeypatch.setattr(OnlineEnsembleRegressor, "_prequential_part", spy)
    X, y = _data(n=200)
    OnlineEnsembleRegressor(_blas_free(), n_jobs=1).fit(X, y)
    _feed(OnlineEnsembleRegressor(_blas_free(), n_jobs=2), X, y, 50)
    assert set(seen[1]) == {False}
    assert set(seen[2]) == {True}


def _count_run_tasks(monkeypatch):
    """The list to which each call of the runner (``run_tasks``) appends its number of threads."""
    calls = []
    real = _ensemble.run_tasks
    monkeypatch.setattr(_ensemble, "run_tasks", lambda tasks, n: calls.append(n) or real(tasks, n))
    return calls


def _ways(cost, n_chunks):
    """The way (``'T'`` threads, ``'s'`` one after another) the ensemble's timing choses for each
    of ``n_chunks`` chunks whose seconds per row are ``cost(chunk, in_threads)``."""
    timing, ways = None, []
    for c in range(n_chunks):
        t = timing is not None and timing["threads"]
        ways.append("T" if t else "s")
        timing = _POLICY(timing, t, cost(c, t) * 100, 100)
    return "".join(ways)


def _stints(ways, letter):
    return [len(r) for r in ways.split("T" if letter == "s" else "s") if r]


def test_the_faster_way_is_kept_and_the_other_timed_less_and_less_often():
    k, lo, hi = _ensemble.THREADS_PROBE_CHUNKS, _ensemble.THREADS_PROBE_MIN, _ensemble.THREADS_PROBE_MAX
    assert (k, lo, hi) == (3, 8, 128)
    # threads twice as fast: the first chunk (it compiles: its time is not kept) and 3 timed chunks
    # one after another, 3 in threads; then threads, and one after another is timed again (3
    # chunks) after 8, 16, 32, ... chunks, at most 128
    ways = _ways(lambda c, t: 1.0 if t else 2.0, 1000)
    assert ways.startswith("ssss" + "TTT")
    assert _stints(ways, "T")[:7] == [3 + 8, 16, 32, 64, 128, 128, 128]
    assert set(_stints(ways, "s")) == {3, 4}
    # threads slower: one after another, threads timed (3 chunks) as rarely
    ways = _ways(lambda c, t: 2.0 if t else 1.0, 1000)
    assert ways.startswith("ssssTTTs")
    assert _stints(ways, "s")[:7] == [4, 16, 32, 64, 128, 128, 128]  # the first timing lost too
    assert set(_stints(ways, "T")) == {3}
    # the compile time of the first chunk is not kept; one slow chunk in a timing does not decide
    assert _ways(lambda c, t: 1e6 if c == 0 else (2.0 if t else 1.0), 300) == ways[:300]
    slow_first = _ways(lambda c, t: 50.0 if c == 4 else (1.0 if t else 2.0), 300)
    assert slow_first[4:15] == "TTT" + "T" * 8 and slow_first == _ways(lambda c, t: 1.0 if t else 2.0, 300)


def test_a_change_of_the_faster_way_is_followed():
    # threads faster for 300 chunks, then slower: within 3 chunks the way in use is slower than the
    # other was, which is timed at once, and kept
    ways = _ways(lambda c, t: (1.0 if t else 2.0) if c < 300 or c >= 600 else (3.0 if t else 2.0), 900)
    assert ways[300:310] == "TTT" + "s" * 7 and ways[310:400].count("T") <= 3 * 3  # after 8, 16, 32
    # then faster again: found at the next timing of threads (within THREADS_PROBE_MAX chunks)
    back = ways.index("TTTT", 600)
    assert back <= 600 + 128 and ways[back:].count("s") <= 3 * 4


def test_timing_decides_threads_in_the_ensemble(monkeypatch):
    monkeypatch.setattr(_ensemble, "THREADS_MIN_SECONDS", np.inf)  # every chunk timed (even compiling)
    seen = []

    def spy(timing, in_threads, seconds, n_rows):
        seen.append(in_threads)
        return _POLICY(timing, in_threads, seconds, n_rows)

    monkeypatch.setattr(_ensemble, "_next_threads_timing", spy)
    monkeypatch.setattr(_ensemble, "_threads_chosen", _CHOSEN)
    calls = _count_run_tasks(monkeypatch)
    X, y = _data(n=500)
    est = OnlineEnsembleRegressor(_blas_free(), n_jobs=2)
    _feed(est, X, y, 50)
    assert seen[:7] == [False] * 4 + [True] * 3 and len(seen) == 10
    assert calls == [2] * sum(seen)
    # one thread: nothing is timed, nothing runs in threads
    seen.clear()
    calls.clear()
    one = OnlineEnsembleRegressor(_blas_free(), n_jobs=1)
    _feed(one, X, y, 50)
    assert seen == calls == [] and not hasattr(one, "_threads_timing")
    # timings are not state: a pickle carries none (its first chunk runs one after another)
    assert not hasattr(pickle.loads(pickle.dumps(est)), "_threads_timing")


def test_costly_chunks_run_in_threads_untimed(monkeypatch):
    monkeypatch.undo()  # the ensemble's own choice (not the fixture's)
    monkeypatch.setattr(_ensemble, "THREADS_MIN_SECONDS", 0.0)
    calls = _count_run_tasks(monkeypatch)
    X, y = _data(n=200)
    est = OnlineEnsembleRegressor(_blas_free(), n_jobs=2)
    _feed(est, X, y, 50)
    assert calls == [2] * 4 and not hasattr(est, "_threads_timing")


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


def _slow_and_trigger(log, interrupt):
    """Eight tasks of which the second calls ``interrupt`` (the others take 0.3 s each)."""

    def slow():
        log.append("start")
        time.sleep(0.3)
        log.append("end")

    def trigger():
        log.append("start")
        interrupt()
        log.append("end")

    return [slow, trigger] + [slow] * 6


def _assert_waited_and_gave_up(log):
    assert log.count("start") == log.count("end")  # every task that started has ended
    assert log.count("start") < 8  # some were given up
    # the pool goes on serving
    assert _threads.run_tasks([lambda: 1, lambda: 2], 2) == [1, 2]


class _InterruptibleResults(_threads.queue.SimpleQueue):
    """The runner's queue of results, raising ``KeyboardInterrupt`` in the caller's wait once
    ``interrupted`` is set: an interrupt that lands in the wait, every time."""

    interrupted = threading.Event()

    def get(self, *args, **kwargs):
        got = super().get(*args, **kwargs)
        if self.interrupted.is_set() and threading.current_thread() is threading.main_thread():
            self.interrupted.clear()
            raise KeyboardInterrupt
        return got


def test_runner_waits_for_running_tasks_when_interrupted(monkeypatch):
    """A Ctrl-C of the caller while tasks run: the interrupt propagates only once every task that
    started has ended (the tasks not started are given up). The interrupt is made to land in the
    caller's wait for results, deterministically (the next test sends a real one)."""
    log = []
    _threads._pool(2)  # the pool's own queue stays a plain one
    _InterruptibleResults.interrupted.clear()
    monkeypatch.setattr(_threads.queue, "SimpleQueue", _InterruptibleResults)
    with pytest.raises(KeyboardInterrupt):
        _threads.run_tasks(_slow_and_trigger(log, _InterruptibleResults.interrupted.set), 2)
    monkeypatch.undo()
    _assert_waited_and_gave_up(log)


def test_runner_waits_for_running_tasks_after_a_real_interrupt():
    """The same with a real interrupt of the main thread (what a Ctrl-C does: its next bytecode
    raises). The interpreter may hand a pending interrupt to Python code that the main thread runs
    for something else (a finalizer during a garbage collection), where it is reported and dropped,
    not raised: so the runner is given five chances to see one (a runner that swallowed the
    interrupt would fail all five)."""
    for _ in range(5):
        log = []
        try:
            _threads.run_tasks(_slow_and_trigger(log, _thread.interrupt_main), 2)
        except KeyboardInterrupt:
            _assert_waited_and_gave_up(log)
            return
        assert log.count("start") == log.count("end") == 8
    pytest.fail("run_tasks never raised the KeyboardInterrupt of its caller")


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
    """The common checks' interrupt test (a KeyboardInterrupt at every Python line of skonline, the
    tests and the standard library, whose locks and queues the thread pool runs) with the experts
    in threads: the ensemble is exactly as before the call or as after it, and
    goes on learning as if never interrupted."""
    from test_common import _assert_atomic_under_interrupts

    X, y = _data(n=120)
    e = OnlineEnsembleRegressor(_blas_free(), n_jobs=2, random_state=0).fit(X[:40], y[:40])
    _assert_atomic_under_interrupts(
        e, lambda f: f.partial_fit(X[40:80], y[40:80]), lambda f: f.partial_fit(X[80:], y[80:]), every_frame="stdlib")
