"""Atomic updates (issue 20): real Ctrl-Cs, and predictions in another thread, during partial_fit.

tests/test_common.py interrupts one call of every estimator at each of its Python lines in turn
(``sys.settrace``); here the signal is real and lands wherever the interpreter is when it comes,
numba's compiled passes and their calls back into Python included. The child process learns a
stream chunk by chunk and, after every interrupted call, checks that the model is exactly as before
the call or exactly as after it (pickle bytes); it then repeats an interrupted call and, at the
end, compares its model with one that learned the same stream without interruption.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

_CHILD = textwrap.dedent(
    """
    import json, pickle, signal, sys, warnings
    import numpy as np
    from skonline.kernel_approximation import OnlineNystroem
    from skonline.kernel_ridge import KernelAWVRegressor, PKAWVRegressor
    from skonline.kernel_selection import KernelSelectionRegressor

    warnings.simplefilter("ignore")
    armed = [False]

    def on_sigint(signum, frame):  # a Ctrl-C inside partial_fit; one per call at most
        if armed[0]:
            armed[0] = False
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 3))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2]
    models = {
        "KernelAWVRegressor": (KernelAWVRegressor(max_rows=400), True),
        "OnlineNystroem": (OnlineNystroem(random_state=0), False),
        "KernelSelectionRegressor": (KernelSelectionRegressor(random_state=0), True),
        "PKAWVRegressor": (PKAWVRegressor(features="nystrom", random_state=0), True),
    }
    # compile everything before the parent starts to send signals: the whole stream once, so that
    # the paths a model takes later (a budget reached, a switch of representation) are compiled
    # too (a compilation interrupted at every signal would never finish)
    for est, supervised in models.values():
        warm = pickle.loads(pickle.dumps(est))
        for start in range(0, X.shape[0], 5):
            warm.partial_fit(X[start:start + 5], y[start:start + 5] if supervised else None)
    print("ready", flush=True)
    report = {}
    for name, (est, supervised) in models.items():
        ref = pickle.loads(pickle.dumps(est))
        counts = {"interrupted": 0, "before": 0, "after": 0, "neither": 0}
        for start in range(0, X.shape[0], 5):
            Xc, yc = X[start:start + 5], (y[start:start + 5] if supervised else None)
            ref.partial_fit(Xc, yc)
            after = pickle.dumps(ref)
            retry = False
            while True:
                before = pickle.dumps(est)
                try:
                    armed[0] = not retry  # one interrupt per chunk at most: the retry always ends
                    est.partial_fit(Xc, yc)
                    armed[0] = False
                except KeyboardInterrupt:
                    armed[0] = False
                    counts["interrupted"] += 1
                    got = pickle.dumps(est)
                    outcome = "before" if got == before else "after" if got == after else "neither"
                    counts[outcome] += 1
                    if outcome == "before":
                        retry = True
                        continue  # the call did not happen: make it again
                    if outcome == "neither":
                        est = pickle.loads(after)  # record the damage, go on from the right state
                break
        counts["same_model_at_the_end"] = pickle.dumps(est) == pickle.dumps(ref)
        report[name] = counts
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent may still be sending
    print(json.dumps(report), flush=True)
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name != "posix", reason="POSIX signals")
def test_real_sigints_during_partial_fit_of_growing_models(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        rnd = np.random.default_rng(1)
        sent = 0
        deadline = time.monotonic() + 300  # the child takes ~20 s; never hang the suite
        while child.poll() is None and time.monotonic() < deadline:
            time.sleep(rnd.uniform(0.0002, 0.002))
            try:
                child.send_signal(signal.SIGINT)
                sent += 1
            except ProcessLookupError:
                break
        if child.poll() is None:
            child.kill()
            pytest.fail("the child did not finish its stream within 300 s of SIGINTs")
        out = child.stdout.read()
    finally:
        if child.poll() is None:
            child.kill()
    assert child.wait() == 0, out
    report = json.loads(out.strip().splitlines()[-1])
    for name, counts in report.items():
        assert counts["neither"] == 0, (name, counts)  # never a half-applied call
        assert counts["same_model_at_the_end"], (name, counts)
        assert counts["interrupted"] >= 3, (name, counts, sent)  # the signals did land in the calls
    assert sum(counts["interrupted"] for counts in report.values()) >= 50, (report, sent)


def _concurrent_predictions(est, X, y, Xq, chunk=5):
    """Learn ``X`` chunk by chunk while another thread predicts ``Xq`` again and again; return the
    predictions of the reader and those of every state the learner went through."""
    import pickle
    import threading

    ref = pickle.loads(pickle.dumps(est))
    states = [ref.predict(Xq)]
    for start in range(0, X.shape[0], chunk):
        ref.partial_fit(X[start:start + chunk], y[start:start + chunk])
        states.append(ref.predict(Xq))
    seen, errors, done = [], [], threading.Event()

    def reader():
        while not done.is_set():
            try:
                seen.append(est.predict(Xq))
            except Exception as exc:  # a half-built estimator: AttributeError, IndexError, ...
                errors.append(repr(exc))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for start in range(0, X.shape[0], chunk):
            est.partial_fit(X[start:start + chunk], y[start:start + chunk])
    finally:
        done.set()
        thread.join()
        sys.setswitchinterval(interval)
    return seen, errors, np.array(states)


@pytest.mark.parametrize("name", ["KernelSelectionRegressor", "KernelAWVRegressor", "pipeline"])
def test_predict_in_another_thread_sees_the_state_before_or_after_a_call(name):
    """A predict running while partial_fit learns in another thread returns the predictions of a
    state the learner went through (before or after a call), never a mix, and never raises."""
    from skonline.kernel_ridge import KernelAWVRegressor
    from skonline.kernel_selection import KernelSelectionRegressor
    from skonline.pipeline import make_online_pipeline
    from skonline.preprocessing import OnlineStandardScaler

    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 3)) * [1.0, 10.0, 0.1] + [0.0, 5.0, 1.0]
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1] + X[:, 2]
    est = {
        "KernelSelectionRegressor": lambda: KernelSelectionRegressor(random_state=0),
        "KernelAWVRegressor": lambda: KernelAWVRegressor(),
        "pipeline": lambda: make_online_pipeline(OnlineStandardScaler(), KernelAWVRegressor(standardize=False)),
    }[name]()
    est.partial_fit(X[:20], y[:20])
    seen, errors, states = _concurrent_predictions(est, X[20:], y[20:], X[:50])
    assert not errors, errors[:3]
    assert len(seen) >= 10  # the reader did run during the calls
    for p in seen:  # each equals the predictions of one of the states (to BLAS rounding)
        gap = np.abs(states - p).max(axis=1)
        assert gap.min() <= 1e-9 * (1.0 + np.abs(p).max()), gap.min()


def test_every_public_reader_reads_one_committed_state():
    """predict, transform, ... of every estimator go through skonline.base.reads_state (or the
    online pipeline's equivalent), so that a call in another thread never mixes two states."""
    import inspect

    from skonline.utils import all_estimators

    missing = []
    for name, cls in all_estimators():
        for method in ("predict", "predict_proba", "predict_log_proba", "decision_function", "transform",
                       "score_samples", "inverse_transform"):
            attr = inspect.getattr_static(cls, method, None)
            if attr is None:
                continue
            fn = getattr(attr, "fn", attr)  # an available_if descriptor holds the function
            if not getattr(fn, "reads_committed_state", False):
                missing.append(f"{name}.{method}")
    assert not missing, missing


def test_two_threads_changing_one_estimator_at_once_lose_nothing_silently():
    """Two partial_fit calls on one estimator at the same time: one commits, the other raises (its
    chunk was not learned, and it says so) instead of silently replacing the first one's work."""
    import threading

    from skonline.base import commit
    from skonline.linear_model import ScaleInvariantRegressor

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 3)), rng.standard_normal(40)
    est = ScaleInvariantRegressor().fit(X[:20], y[:20])
    base = est.__dict__
    work = est._working_copy()
    other = threading.Thread(target=est.partial_fit, args=(X[20:30], y[20:30]))
    other.start()
    other.join()  # ... another thread's call committed meanwhile
    assert est.n_samples_seen_ == 30
    with pytest.raises(RuntimeError, match="another call"):
        commit([est], [work.__dict__], [base])
    assert est.n_samples_seen_ == 30
