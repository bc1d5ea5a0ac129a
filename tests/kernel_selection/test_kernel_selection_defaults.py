"""The default bandwidths (sigmas='auto'), on data as it comes (no paper settings here)."""

import numpy as np
import pytest

from skonline.kernel_selection import KernelSelectionClassifier, KernelSelectionRegressor


def test_auto_sigmas_two_kernels_for_classifier_three_for_regressor():
    X = np.random.default_rng(0).standard_normal((20, 9))
    clf = KernelSelectionClassifier(random_state=0).fit(X, (X[:, 0] > 0).astype(int))
    np.testing.assert_allclose(clf.sigmas_, 3.0 * np.array([2**-0.5, 2**0.5]))
    reg = KernelSelectionRegressor(random_state=0).fit(X, X[:, 0])
    np.testing.assert_allclose(reg.sigmas_, 3.0 * np.array([0.5, 1.0, 2.0]))


@pytest.mark.parametrize("name", ["wine", "breast_cancer", "digits"])
def test_auto_sigmas_classifier_reason_short_tables(name):
    """The measured reason for two kernels: on short raw tables two kernels make no more online
    mistakes than three (full feedback: every kernel learns every row, so a kernel costs its
    evaluation and step on every row), on average over three row orders within one row, and
    fewer than the one bandwidth sqrt(d)."""
    import sklearn.datasets as skd

    X, y = getattr(skd, f"load_{name}")(return_X_y=True)
    d = X.shape[1]
    mistakes = np.zeros(3)
    for seed in range(3):
        p = np.random.default_rng(seed).permutation(y.shape[0])
        for i, sigmas in enumerate(("auto", np.sqrt(d) * np.array([0.5, 1.0, 2.0]), [np.sqrt(d)])):
            clf = KernelSelectionClassifier(sigmas=sigmas, random_state=0)
            for a in range(0, y.shape[0], 100):
                clf.partial_fit(X[p][a:a + 100], y[p][a:a + 100], classes=np.unique(y))
            mistakes[i] += clf.n_mistakes_
    assert mistakes[0] <= mistakes[1] + 3, mistakes / 3
    assert mistakes[0] <= mistakes[2] + 3, mistakes / 3


def test_linear_component_on_linear_target():
    """linear='auto' (standardize=True) adds a linear model the kernels correct: on a linear
    target (benchmarks/defaults.py's reg_wild_row kind) it beats the kernels alone."""
    rng = np.random.default_rng(105)
    X = rng.standard_normal((1500, 5))
    y = 10.0 + X @ rng.standard_normal(5) + 0.5 * rng.standard_normal(1500)
    maes = []
    for linear in ("auto", False):
        reg = KernelSelectionRegressor(linear=linear, random_state=0)
        pred = np.concatenate([reg.partial_fit_predict(X[a:a + 100], y[a:a + 100]) for a in range(0, 1500, 100)])
        maes.append(np.mean(np.abs(pred - y)))
    assert maes[0] < 0.85 * maes[1], maes
    assert hasattr(reg, "linear_coef_") is False


def test_linear_component_off_for_paper_settings_and_chunk_invariant():
    X = np.random.default_rng(0).uniform(-1, 1, (300, 4))
    y = (X[:, 0] * X[:, 1] > X[:, 2]).astype(int)
    paper = KernelSelectionClassifier(standardize=False, random_state=0).fit(X, y)
    assert not hasattr(paper, "linear_coef_")
    a = KernelSelectionClassifier(random_state=0).fit(X, y)
    b = KernelSelectionClassifier(random_state=0)
    for s in range(0, 300, 37):
        b.partial_fit(X[s:s + 37], y[s:s + 37], classes=[0, 1])
    np.testing.assert_array_equal(a.linear_coef_, b.linear_coef_)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_short_multiclass_warning_names_sigmas():
    """Under bandit feedback each kernel learns only the rows it is sampled for: on a short
    multiclass stream the warning names the one-bandwidth way out. With full feedback (the
    default) every kernel learns every row: no warning."""
    import warnings

    import sklearn.datasets as skd

    X, y = skd.load_wine(return_X_y=True)
    with pytest.warns(UserWarning, match=r"sigmas=\[sqrt\(n_features\)\]"):
        KernelSelectionClassifier(feedback="bandit", random_state=0).partial_fit(X[:100], y[:100], classes=np.unique(y))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KernelSelectionClassifier(random_state=0).partial_fit(X[:100], y[:100], classes=np.unique(y))
        KernelSelectionClassifier(feedback="bandit", sigmas=[3.6], random_state=0).partial_fit(
            X[:100], y[:100], classes=np.unique(y))
        KernelSelectionClassifier(feedback="bandit", random_state=0).partial_fit(X[:100], y[:100] > 0,
                                                                                 classes=[False, True])
