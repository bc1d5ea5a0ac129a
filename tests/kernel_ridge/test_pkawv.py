"""PKAWV with Taylor and Nyström (KORS) projections, and the classifier built on it."""

import warnings

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils.estimator_checks import check_regressors_train

from skonline.kernel_ridge import KernelAWVRegressor, PKAWVClassifier, PKAWVRegressor

from _paper import paper


def _ball_stream(n=400, R=0.5, seed=0):
    """Spec check 7: x uniform in the R-ball of R^2, y = clip(sin(3x1)cos(2x2) + 0.2 eps, +-1)."""
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((n, 2))
    X = g / np.linalg.norm(g, axis=1, keepdims=True) * R * np.sqrt(rng.uniform(0, 1, (n, 1)))
    y = np.clip(np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1]) + 0.2 * rng.standard_normal(n), -1, 1)
    return X, y


# --------------------------------------------------------------------------- Taylor
def test_taylor_approaches_kernel_awv_as_the_degree_grows():
    """R = 0.5: max |dy| ~ 1e-3 (M=2), 5e-6 (M=4), 8e-9 (M=6), 7e-12 (M=8) in the spec's run."""
    X, y = _ball_stream()
    exact = paper(KernelAWVRegressor)
    ref = exact.partial_fit_predict(X, y)
    gaps = []
    for M in (2, 4, 6, 8):
        reg = paper(PKAWVRegressor, degree=M)
        gaps.append(np.abs(reg.partial_fit_predict(X, y) - ref).max())
        if M == 6:
            assert gaps[-1] < 1e-6
            assert abs(reg.cumulative_loss_ - exact.cumulative_loss_) < 1e-6 * exact.cumulative_loss_
    assert gaps[0] > 1e-4  # M = 2 really is an approximation here
    assert gaps[3] < 1e-9
    assert all(b < a / 10 for a, b in zip(gaps, gaps[1:]))


def test_taylor_regret_vs_kernel_awv_at_radius_one():
    """R = 1: M=2 is visibly worse than exact, M=8 matches (spec: 40.39 / 36.00 / 35.81 / 35.81)."""
    X, y = _ball_stream(R=1.0, seed=1)
    exact = paper(KernelAWVRegressor).fit(X, y).cumulative_loss_
    losses = [paper(PKAWVRegressor, degree=M).fit(X, y).cumulative_loss_ for M in (2, 4, 8)]
    assert abs(losses[2] - exact) < 1e-4 * exact
    assert abs(losses[1] - exact) < abs(losses[0] - exact)


def test_check_regressors_train_with_a_bandwidth_for_standardised_data():
    check_regressors_train("PKAWVRegressor", paper(PKAWVRegressor, sigma=4.0))


# --------------------------------------------------------------------------- Nyström
@pytest.mark.parametrize("algorithm", ["awv", "ridge"])
def test_nystrom_with_every_point_in_the_dictionary_equals_kernel_awv(algorithm):
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (150, 5))
    y = np.sin(X.sum(1)) + 0.1 * rng.standard_normal(150)
    reg = paper(PKAWVRegressor, features="nystrom", beta=1e12, algorithm=algorithm, random_state=0)
    p = reg.partial_fit_predict(X, y)
    assert reg.n_components_ == 150 and reg.n_skipped_components_ == 0
    ref = paper(KernelAWVRegressor, algorithm=algorithm).partial_fit_predict(X, y)
    np.testing.assert_allclose(p, ref, rtol=0, atol=1e-8)
    exact = paper(KernelAWVRegressor, algorithm=algorithm).fit(X, y)
    np.testing.assert_allclose(reg.predict(X[:20]), exact.predict(X[:20]), atol=1e-8)


def test_nystrom_embedding_equals_the_papers_dual_system():
    """Algorithm 2 of the paper, solved directly at every round on the same dictionary sequence:
    alpha_t = (K_tm' K_tm + l K_mm)^{-1} K_tm' (y_1..y_{t-1}, 0), y_t = k_D(x_t)' alpha_t."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (300, 2))
    y = np.cos(3 * X[:, 0]) * X[:, 1] + 0.1 * rng.standard_normal(300)
    lam = 0.5
    reg = paper(PKAWVRegressor, features="nystrom", alpha=lam, mu=0.05, random_state=1)
    p = reg.partial_fit_predict(X, y)
    idx = reg.component_indices_
    assert 20 < len(idx) < 150
    K = rbf_kernel(X, gamma=0.5)
    for t in range(300):
        D = idx[idx <= t]
        if len(D) == 0:
            assert p[t] == 0.0
            continue
        Ktm = K[: t + 1][:, D]
        H = Ktm.T @ Ktm + lam * K[np.ix_(D, D)]
        a = np.linalg.lstsq(H, Ktm.T @ np.r_[y[:t], 0.0], rcond=1e-14)[0]
        np.testing.assert_allclose(p[t], K[t, D] @ a, atol=1e-7)


def test_nystrom_chunking_across_buffer_growth_is_bitwise():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (600, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2
    a = paper(PKAWVRegressor, features="nystrom", mu=0.05, random_state=3)
    pa = a.partial_fit_predict(X, y)
    assert a.n_components_ > 40 and a._hist_XT_.shape[1] == 1024
    b = paper(PKAWVRegressor, features="nystrom", mu=0.05, random_state=3)
    pb = np.concatenate([b.partial_fit_predict(X[s], y[s]) for s in (slice(0, 1), slice(1, 256),
                                                                      slice(256, 257), slice(257, 600))])
    np.testing.assert_array_equal(pa, pb)
    for k in ("_precision_", "_Phi_hist_", "_chol_t_", "_kors_inv_", "_b_"):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k))


def test_nystrom_dictionary_matches_the_transformer():
    """PKAWV-Nyström and OnlineNystroem run the same KORS on the same draws."""
    from skonline.kernel_approximation import OnlineNystroem

    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (400, 3))
    y = X[:, 0]
    reg = paper(PKAWVRegressor, features="nystrom", mu=0.1, random_state=7).fit(X, y)
    nys = OnlineNystroem(mu=0.1, random_state=7).fit(X)
    np.testing.assert_array_equal(reg.component_indices_, nys.component_indices_)
    np.testing.assert_array_equal(reg.component_probabilities_, nys.component_probabilities_)


# --------------------------------------------------------------------------- classifier
def test_classifier_heads_are_regressors_on_plus_minus_one_targets():
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, (300, 2))
    labels = np.array(["a", "b", "c"])
    y = labels[(np.arctan2(X[:, 1], X[:, 0]) > 0).astype(int) + (X[:, 0] > 0.3)]
    for features in ("taylor", "nystrom"):
        clf = paper(PKAWVClassifier, features=features, degree=4, random_state=0)
        dec = clf.partial_fit_decision_function(X, y, classes=labels)
        assert dec.shape == (300, 3)
        for k, c in enumerate(labels):
            reg = paper(PKAWVRegressor, features=features, degree=4, random_state=0)
            np.testing.assert_allclose(dec[:, k], reg.partial_fit_predict(X, np.where(y == c, 1.0, -1.0)),
                                       rtol=1e-12, atol=1e-14)
        assert clf.n_mistakes_ == np.sum(labels[np.argmax(dec, 1)] != y)


def test_classifier_awv_and_ridge_decide_identically():
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, (500, 2))
    y = (X[:, 0] ** 2 + X[:, 1] ** 2 < 0.5).astype(int)
    a = paper(PKAWVClassifier, degree=4, sigma=0.5)
    b = paper(PKAWVClassifier, degree=4, sigma=0.5, algorithm="ridge")
    np.testing.assert_array_equal(a.partial_fit_predict(X, y, classes=[0, 1]),
                                  b.partial_fit_predict(X, y, classes=[0, 1]))
    da, db = a.decision_function(X), b.decision_function(X)
    np.testing.assert_array_equal(np.sign(da), np.sign(db))
    assert np.all(np.abs(da) <= np.abs(db) + 1e-15)  # AWV shrinks towards 0
    assert a.mistake_rate_ < 0.1


def test_parameters_are_validated():
    X = np.zeros((3, 2))
    y = np.zeros(3)
    for bad in ({"features": "fourier"}, {"alpha": 0.0}, {"degree": -1}, {"kors_weighting": "p"},
                {"prediction_bound": -1.0}, {"algorithm": "krr"}):
        with pytest.raises(ValueError):
            paper(PKAWVRegressor, **bad).fit(X, y)


def test_warns_when_the_taylor_basis_is_huge():
    import warnings

    reg = paper(PKAWVRegressor, degree=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # raised before the 12341 x 12341 matrix is allocated
        with pytest.raises(UserWarning, match="12341 Taylor features"):
            reg.fit(np.zeros((2, 40)), np.zeros(2))
    assert not hasattr(reg, "n_samples_seen_")


@pytest.mark.parametrize("make", [
    lambda: paper(PKAWVRegressor, features="nystrom", mu=0.05, random_state=0),
    lambda: paper(KernelAWVRegressor, alpha=1e-4),  # L^{-1} y overflows only when sqrt(alpha) < 1
])
def test_a_chunk_failing_mid_pass_after_buffer_growth_changes_nothing(make):
    """The cheap snapshot of the growing buffers restores exactly, even after a reallocation."""
    import pickle

    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, (400, 3))
    y = np.sin(2 * X[:, 0])
    est = make().fit(X[:250], y[:250])
    before = pickle.dumps(est)
    bad = y[250:].copy()
    bad[60:] = 1e308  # b overflows: a non-finite prediction well after the growth past 256 rows
    with pytest.raises(FloatingPointError, match="non-finite"):
        est.partial_fit(X[250:], bad)
    assert pickle.dumps(est) == before
    ref = pickle.loads(before)
    np.testing.assert_array_equal(est.partial_fit_predict(X[250:], y[250:]), ref.partial_fit_predict(X[250:], y[250:]))
    assert pickle.dumps(est) == pickle.dumps(ref)


# --------------------------------------------------------------------------- budget (issue 11)
def _array_shapes(est):
    return {k: v.shape for k, v in vars(est).items() if isinstance(v, np.ndarray)}


@pytest.mark.parametrize("Est", [PKAWVRegressor, PKAWVClassifier])
def test_nystrom_budget_freezes_the_dictionary_and_memory(Est):
    rng = np.random.default_rng(11)
    n = 4000
    X = rng.uniform(-1, 1, (n, 5))
    y = np.sin(X.sum(1)) + 0.1 * rng.standard_normal(n)
    if Est is PKAWVClassifier:
        y = (y > 0).astype(int)
    est = paper(Est, features="nystrom", sigma=0.5, mu=1e-3, max_components=50, random_state=0)
    kw = {"classes": [0, 1]} if Est is PKAWVClassifier else {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a frozen dictionary is the designed steady state: no warning
        est.partial_fit(X[:500], y[:500], **kw)
    assert est.n_components_ == 50
    shapes = _array_shapes(est)
    t_hist = int(est._n_history_[0])
    for s in range(500, n, 700):
        est.partial_fit(X[s : s + 700], y[s : s + 700])
        assert _array_shapes(est) == shapes  # nothing grows past the budget
    assert est.n_components_ == 50 and int(est._n_history_[0]) == t_hist
    assert est.n_rows_after_budget_ == n - int(np.max(est.component_indices_)) - 1 and est.n_samples_seen_ == n
    # the same stream in one call gives the same model, and learning goes on on the frozen map
    ref = paper(Est, features="nystrom", sigma=0.5, mu=1e-3, max_components=50, random_state=0)
    ref.fit(X, y, **kw)
    np.testing.assert_array_equal(ref.coef_, est.coef_)
    early = paper(Est, features="nystrom", sigma=0.5, mu=1e-3, max_components=50, random_state=0)
    early.fit(X[:1000], y[:1000], **kw)
    assert not np.array_equal(ref.coef_, early.coef_)


def test_nystrom_pickle_holds_only_the_used_blocks():
    import pickle

    rng = np.random.default_rng(12)
    X = rng.uniform(-1, 1, (700, 5))
    y = np.sin(X.sum(1))
    reg = paper(PKAWVRegressor, features="nystrom", sigma=0.5, mu=1e-2, random_state=0).fit(X[:600], y[:600])
    t, m = int(reg._n_history_[0]), reg.n_components_
    used = 8 * (t * (5 + 1 + m) + m * (3 * m + 5 + 1 + 3))
    held = sum(v.nbytes for v in vars(reg).values() if isinstance(v, np.ndarray))
    blob = pickle.dumps(reg)
    assert held > 1.5 * used and len(blob) < used + 20_000
    back = pickle.loads(blob)
    assert _array_shapes(back) == _array_shapes(reg)
    np.testing.assert_array_equal(back.partial_fit_predict(X[600:], y[600:]), reg.partial_fit_predict(X[600:], y[600:]))
