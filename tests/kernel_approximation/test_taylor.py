"""TaylorFeatures: the paper's Taylor basis of the Gaussian kernel (Jézéquel et al. 2019, eq. 6)."""

import math

import numpy as np
import pytest
from scipy.special import comb
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import PolynomialFeatures

from skonline.kernel_approximation import TaylorFeatures


def _ball(rng, n, d, R):
    """n points uniform in the Euclidean ball of radius R."""
    g = rng.standard_normal((n, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    return g * R * rng.uniform(0, 1, (n, 1)) ** (1.0 / d)


def _truncated_kernel(X, Y, sigma, M):
    ip = X @ Y.T / sigma**2
    nx = (X**2).sum(1)[:, None]
    ny = (Y**2).sum(1)[None, :]
    return np.exp(-(nx + ny) / (2 * sigma**2)) * sum(ip**j / math.factorial(j) for j in range(M + 1))


@pytest.mark.parametrize("d, M", [(1, 0), (1, 7), (2, 4), (3, 3), (5, 2), (8, 3)])
def test_count_and_order_match_polynomial_features(d, M):
    X = np.random.default_rng(0).uniform(-1, 1, (4, d))
    tf = TaylorFeatures(degree=M).fit(X)
    assert tf.n_output_features_ == comb(M + d, d, exact=True)
    pf = PolynomialFeatures(M).fit(X)
    np.testing.assert_array_equal(tf.powers_, pf.powers_)
    np.testing.assert_array_equal(tf.get_feature_names_out(), pf.get_feature_names_out())
    assert tf.transform(X).shape == (4, tf.n_output_features_)


@pytest.mark.parametrize("d, M, sigma", [(2, 4, 1.0), (3, 3, 0.7), (5, 2, 2.0), (1, 12, 0.5), (4, 6, 1.3)])
def test_reproduces_the_truncated_gaussian_kernel_exactly(d, M, sigma):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1.5, 1.5, (30, d))
    Y = rng.uniform(-1.5, 1.5, (20, d))
    tf = TaylorFeatures(degree=M, sigma=sigma).fit(X)
    G = tf.transform(X) @ tf.transform(Y).T
    T = _truncated_kernel(X, Y, sigma, M)
    np.testing.assert_allclose(G, T, rtol=1e-12, atol=1e-15)


def test_each_feature_is_the_paper_formula():
    """g_k(x) = exp(-||x||^2/2s^2) prod_i (x_i/s)^{k_i} / sqrt(k_i!), term by term."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-2, 2, (7, 3))
    sigma = 0.8
    tf = TaylorFeatures(degree=5, sigma=sigma).fit(X)
    F = tf.transform(X)
    z = X / sigma
    for f, k in enumerate(tf.powers_):
        ref = np.exp(-(z**2).sum(1) / 2) * np.prod(
            [z[:, i] ** k[i] / math.sqrt(math.factorial(k[i])) for i in range(3)], axis=0
        )
        np.testing.assert_allclose(F[:, f], ref, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("d, M, R", [(2, 4, 0.5), (5, 3, 0.5), (3, 8, 1.0), (1, 10, 1.0), (4, 5, 1.5)])
def test_approaches_the_gaussian_kernel_within_lemma_13(d, M, R):
    """max |F F' - K| <= (R/sigma)^(2M+2) / (M+1)! in the R-ball, non-increasing in M."""
    rng = np.random.default_rng(3)
    X = _ball(rng, 200, d, R)
    K = rbf_kernel(X, gamma=0.5)
    errors = []
    for m in range(M + 1):
        F = TaylorFeatures(degree=m).fit_transform(X)
        err = np.abs(F @ F.T - K).max()
        errors.append(err)
        assert err <= R ** (2 * m + 2) / math.factorial(m + 1) * (1 + 1e-9) + 1e-15
        assert np.all((F * F).sum(1) <= 1 + 1e-15)  # k_M(x, x) = P[Poisson(||x||^2) <= M] <= 1
    assert all(b <= a + 1e-15 for a, b in zip(errors, errors[1:]))


def test_sigma_is_a_rescaling_of_the_inputs():
    X = np.random.default_rng(4).uniform(-3, 3, (10, 3))
    a = TaylorFeatures(degree=4, sigma=2.5).fit_transform(X)
    b = TaylorFeatures(degree=4, sigma=1.0).fit_transform(X / 2.5)
    np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-300)


def test_far_from_the_origin_the_log_domain_path_is_exact():
    """||z||^2/2 > 700 rows: exp(-||z||^2/2) underflows, high-degree features do not."""
    x = np.array([[40.0], [-41.0], [0.0]])
    M = 80
    F = TaylorFeatures(degree=M).fit_transform(x)
    assert np.all(np.isfinite(F))
    for i, xi in enumerate(x[:, 0]):
        for k in range(M + 1):
            if xi == 0.0:
                ref = 1.0 if k == 0 else 0.0
            else:
                log_ref = k * math.log(abs(xi)) - 0.5 * math.lgamma(k + 1) - xi * xi / 2
                ref = math.copysign(math.exp(log_ref), xi**k if k % 2 else 1.0) if log_ref > -745 else 0.0
            np.testing.assert_allclose(F[i, k], ref, rtol=1e-11, atol=1e-320)
    assert F[0, 80] > 1e-290  # representable, and not lost to the underflow of exp(-800)


def test_huge_and_tiny_inputs_are_finite():
    X = np.array([[1e150, -2.0], [1e-150, 1e-150], [3e200, 1e300]])
    F = TaylorFeatures(degree=3).fit_transform(X)
    assert np.all(np.isfinite(F))
    np.testing.assert_array_equal(F[[0, 2]], 0.0)
    assert F[1, 0] == 1.0


def test_transform_checks_the_input():
    tf = TaylorFeatures().fit(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="features"):
        tf.transform(np.zeros((3, 3)))
    with pytest.raises(ValueError):
        tf.transform(np.array([[np.nan, 0.0]]))


def test_set_output_pandas():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"a": [0.1, 0.2], "b": [0.3, -0.1]})
    out = TaylorFeatures(degree=2).set_output(transform="pandas").fit_transform(X)
    assert list(out.columns) == ["1", "a", "b", "a^2", "a b", "b^2"]


def test_warns_when_the_basis_is_huge():
    with pytest.warns(UserWarning, match="output features"):
        TaylorFeatures(degree=4).fit(np.zeros((1, 40)))


@pytest.mark.parametrize("d", [1000, 2**18])
def test_too_many_taylor_features_are_refused_before_building_anything(d):
    """Degree 2 on 1,000 columns is 501,501 features (tables of 3.7 GiB); on 2^18 sparse columns
    3.4e10: refused at once with the sizes and what to use instead, not a hang or an OOM kill."""
    import time

    import scipy.sparse as sp

    X = sp.random(3, d, density=0.01, format="csr", random_state=0) if d > 4096 else np.zeros((2, d))
    t = time.perf_counter()
    est = TaylorFeatures()
    with pytest.raises(ValueError, match=r"output features, whose multi-index tables alone would take"):
        est.fit(X)
    assert time.perf_counter() - t < 5.0
    assert not hasattr(est, "powers_")
    TaylorFeatures().fit(np.zeros((2, 200)))  # 20,301 outputs: built as before
