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


@pytest.mark.parametrize("name", ["wine", "breast_cancer"])
def test_auto_sigmas_classifier_reason_short_tables(name):
    """The measured reason for two kernels: on short raw tables, three kernels share the rows
    (bandit feedback) and make more online mistakes (benchmarks/defaults.py)."""
    import sklearn.datasets as skd

    X, y = getattr(skd, f"load_{name}")(return_X_y=True)
    d = X.shape[1]
    for seed in range(3):
        p = np.random.default_rng(seed).permutation(y.shape[0])
        rates = []
        for sigmas in ("auto", np.sqrt(d) * np.array([0.5, 1.0, 2.0])):
            clf = KernelSelectionClassifier(sigmas=sigmas, random_state=0)
            for a in range(0, y.shape[0], 100):
                clf.partial_fit(X[p][a:a + 100], y[p][a:a + 100], classes=np.unique(y))
            rates.append(clf.mistake_rate_)
        assert rates[0] < rates[1], (seed, rates)
