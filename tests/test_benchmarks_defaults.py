"""benchmarks/defaults.py is importable and its protocol pieces work on tiny streams (a few seconds).

The benchmark itself is never run here."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("_bench_defaults", ROOT / "benchmarks" / "defaults.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_streams_are_fixed_prefixes(bench):
    s = bench.streams()
    assert len(s) == 20 and s["sea_abrupt"] == ("binary", "synthetic") and s["iris"][0] == "multiclass"
    a, b = bench.load_stream("reg_wild_row", 300), bench.load_stream("reg_wild_row", 5000)
    assert a.X.shape == (300, 5) and a.task == "regression"
    np.testing.assert_array_equal(a.X, b.X[:300])
    assert np.abs(b.X).max() > 1e5  # the wild row


def test_trivial_baseline_is_majority_so_far(bench):
    y = np.array([1, 0, 0, 1, 1, 1])
    pred, proba, _ = bench._trivial_pass(np.zeros((6, 1)), y, "binary", np.array([0, 1]))
    np.testing.assert_array_equal(pred, [0, 1, 0, 0, 0, 1])  # ties -> smallest label
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    pred, _, _ = bench._trivial_pass(np.zeros((3, 1)), np.array([2.0, 4.0, 9.0]), "regression", None)
    np.testing.assert_allclose(pred, [0.0, 2.0, 3.0])


def test_evaluate_on_a_tiny_stream(bench):
    # the baselines: river and Vowpal Wabbit (the bench extra; not installed by the test extras)
    pytest.importorskip("river")
    pytest.importorskip("vowpalwabbit")
    from sklearn.dummy import DummyClassifier

    class Majority(DummyClassifier):  # the trivial predictor as an online estimator
        def partial_fit_predict(self, X, y, classes=None):
            self._seen = np.concatenate([getattr(self, "_seen", np.empty(0, int)), y])
            out = np.empty(len(y), dtype=int)
            for i in range(len(y)):
                past = self._seen[: len(self._seen) - len(y) + i]
                out[i] = np.argmax(np.bincount(past, minlength=3)) if len(past) else 0
            self.classes_ = np.arange(3)
            return out

    r = bench.evaluate(Majority, "iris", max_rows=150, use_cache=False)
    assert r["n_rows"] == 150 and r["error"] is None
    assert r["metrics"]["accuracy"] == pytest.approx(r["baselines"]["trivial"]["accuracy"])
    assert set(r["baselines"]) == {"river", "vw", "sgd", "trivial"}
    v = r["verdict"]
    assert v["threshold"] == pytest.approx(max(r["baselines"]["river"]["accuracy"], v["value"]) - 0.03)

    def broken():
        raise RuntimeError("boom")

    r = bench.evaluate(broken, "iris", max_rows=150, use_cache=False, baselines=False)
    assert r["error"].startswith("RuntimeError: boom") and r["verdict"]["passed"] is False
