"""Scale-invariant linear learners (Kotłowski, ALT 2017): properties that must hold exactly."""

import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_regression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor

from _paper import paper

ALPHA = 1.5
GOLD_X = np.array([[1, 0], [2, -1], [-1, 3], [0.5, 0.5], [3, -2], [1, 1]], float)
GOLD_Y = np.array([1, -1, 1, 1, -1, 1])


def kappa(alpha):
    return math.exp(1.0 / (2.0 * (alpha - 9.0 / 8.0)))


# --------------------------------------------------------------------------- references (numpy)
def alg1_reference(X, g_of, alpha=ALPHA, intercept=False):
    """Algorithm 1 exactly as printed (eq. (5)); g_of(t, yhat) gives the loss derivative."""
    if intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    n, d = X.shape
    s2 = np.zeros(d)
    h = np.zeros(d)
    preds, gs = [], []
    for t in range(1, n + 1):
        x = X[t - 1]
        s2 = s2 + x * x
        w = np.zeros(d)
        m = s2 > 0
        eta = np.exp((h[m] ** 2 + x[m] ** 2) / (2 * alpha * s2[m])) / (alpha * t * d)
        w[m] = eta * h[m] / s2[m]
        p = float(w @ x)
        g = g_of(t - 1, p)
        h = h - g * x
        preds.append(p)
        gs.append(g)
    return np.array(preds), np.array(gs)


def alg2_reference(X, g_of, alpha=ALPHA):
    """Algorithm 2 as printed (eq. (7)), with a pseudo-inverse every round."""
    n, d = X.shape
    S = np.zeros((d, d))
    h = np.zeros(d)
    Gam = 0.0
    preds, gs = [], []
    for t in range(n):
        x = X[t]
        S = S + np.outer(x, x)
        P = np.linalg.pinv(S, hermitian=True)
        eta = math.exp((h @ P @ h - Gam) / (2 * alpha)) / alpha
        p = float(eta * x @ P @ h)
        g = g_of(t, p)
        h = h - g * x
        Gam += g * g * float(x @ P @ x)
        preds.append(p)
        gs.append(g)
    return np.array(preds), np.array(gs), h, Gam


def logistic_g(y):
    return lambda t, p: -y[t] / (1.0 + math.exp(y[t] * p))


# --------------------------------------------------------------------------- golden values
GOLD = {
    ("coordinate", "log_loss"): [0, 0.044251586798, 0.0335736920048, 0.00201750972744, -0.0381730282699,
                                 0.00637340697284],
    ("full", "log_loss"): [0, 0, 0.0654217988139, 0.047860822318, -0.0701987557944, 0.110542409075],
    ("coordinate", "hinge"): [0, 0.0930408283391, 0.0672152117388, 0.0108567870814, -0.0994051982754, 0.0371543613594],
    ("full", "hinge"): [0, 0, 0.0828357591159, 0.0703947759834, -0.10525834874, 0.180387143913],
}


@pytest.mark.parametrize("invariance,loss", list(GOLD))
def test_golden_values(invariance, loss):
    clf = paper(ScaleInvariantClassifier, loss, invariance=invariance, fit_intercept=False, potential_alpha=1.5)
    pred = clf.partial_fit_decision_function(GOLD_X, GOLD_Y, classes=[-1, 1])
    np.testing.assert_allclose(pred, GOLD[invariance, loss], rtol=0, atol=1e-10)


def test_golden_final_state():
    c1 = paper(ScaleInvariantClassifier, fit_intercept=False).fit(GOLD_X, GOLD_Y)
    np.testing.assert_allclose(c1.neg_cum_grad_[0], [-1.736948788699, 3.714953456006], atol=1e-10)
    np.testing.assert_allclose(c1.sum_sq_, [16.25, 15.25], atol=1e-12)
    assert c1.n_samples_seen_ == 6
    c2 = paper(ScaleInvariantClassifier, invariance="full", fit_intercept=False).fit(GOLD_X, GOLD_Y)
    np.testing.assert_allclose(c2.neg_cum_grad_[0], [-1.714611880659, 3.632277216268], atol=1e-10)
    np.testing.assert_allclose(c2.gamma_, [0.976875351833], atol=1e-10)
    np.testing.assert_allclose(
        c2.pinv_, [[0.099836333879, 0.063829787234], [0.063829787234, 0.106382978723]], atol=1e-10
    )


# --------------------------------------------------------------------------- agreement with the printed algorithms
def _sparse_heavy(rng, n, d):
    X = rng.standard_cauchy((n, d)) * (rng.random((n, d)) < 0.4)
    return X


@pytest.mark.parametrize("intercept", [False, True])
def test_alg1_matches_reference(intercept):
    rng = np.random.default_rng(3)
    X = _sparse_heavy(rng, 300, 6)
    y = np.where(X @ rng.standard_normal(6) + rng.standard_normal(300) > 0, 1, -1)
    ref, _ = alg1_reference(X, logistic_g(y.astype(float)), intercept=intercept)
    clf = paper(ScaleInvariantClassifier, fit_intercept=intercept, internal_scaling="none")
    got = clf.partial_fit_decision_function(X, y, classes=[-1, 1])
    np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-14)
    scaled = paper(ScaleInvariantClassifier, fit_intercept=intercept)
    scaled = scaled.partial_fit_decision_function(X, y, classes=[-1, 1])
    np.testing.assert_allclose(scaled, ref, rtol=1e-11, atol=1e-14)


def test_alg2_matches_pinv_reference_rank_deficient():
    rng = np.random.default_rng(4)
    B = rng.standard_normal((200, 3))
    X = np.hstack([B, B[:, :1] - 2 * B[:, 1:2], np.zeros((200, 1))])  # rank 3 in R^5
    y = np.where(B @ [1.0, -1.0, 0.5] + 0.5 * rng.standard_normal(200) > 0, 1, -1)
    ref, _, _, gam = alg2_reference(X, logistic_g(y.astype(float)))
    clf = paper(ScaleInvariantClassifier, invariance="full", fit_intercept=False)
    got = clf.partial_fit_decision_function(X, y, classes=[-1, 1])
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-10)
    assert clf.rank_[0] == 3
    np.testing.assert_allclose(clf.gamma_[0], gam, rtol=1e-9)


def test_first_prediction_zero_and_new_directions_predict_zero():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 5))
    y = rng.integers(0, 2, 30)
    p1 = paper(ScaleInvariantClassifier).partial_fit_decision_function(X, y, classes=[0, 1])
    assert p1[0] == 0.0
    p2 = paper(ScaleInvariantClassifier, invariance="full").partial_fit_decision_function(X, y, classes=[0, 1])
    assert np.all(p2[:6] == 0.0) and np.all(p2[6:] != 0.0)  # d + 1 = 6 new directions


def test_first_occurrence_contributes_nothing():
    # coordinate 1 appears for the first time at round 3: its value there does not change that
    # round's prediction (h is 0 for it), but it does change the next round's
    X = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 5.0], [1.0, 1.0]])
    X2 = X.copy()
    X2[2, 1] = -123.0
    y = np.array([1, 1, 1, 1])
    p = paper(ScaleInvariantClassifier, fit_intercept=False).partial_fit_decision_function(X, y, classes=[0, 1])
    q = paper(ScaleInvariantClassifier, fit_intercept=False).partial_fit_decision_function(X2, y, classes=[0, 1])
    assert np.array_equal(p[:3], q[:3]) and p[3] != q[3]


# --------------------------------------------------------------------------- invariances
def _multiclass_stream(rng, n=400, d=6, k=3, sparse_frac=0.5):
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < sparse_frac)
    y = np.argmax(X @ rng.standard_normal((d, k)) + 0.5 * rng.standard_normal((n, k)), axis=1)
    return X, y


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_coordinate_invariance_bit_exact_powers_of_two(intercept, sparse):
    rng = np.random.default_rng(1)
    X, y = _multiclass_stream(rng)
    a = rng.choice([-1.0, 1.0], X.shape[1]) * 2.0 ** rng.integers(-30, 31, X.shape[1])
    for scaling in ("first", "none"):
        outs = []
        for Xv in (X, X * a):
            Xv = sp.csr_matrix(Xv) if sparse else Xv
            clf = paper(ScaleInvariantClassifier, fit_intercept=intercept, internal_scaling=scaling)
            pieces = [clf.partial_fit_decision_function(Xv[:150], y[:150], classes=[0, 1, 2]),
                      clf.partial_fit_decision_function(Xv[150:], y[150:])]
            outs.append((np.vstack(pieces), clf))
        assert np.array_equal(outs[0][0], outs[1][0])
        # coef_ transforms exactly: coef(scaled) = coef(raw) / a, intercept unchanged
        np.testing.assert_allclose(outs[1][1].coef_, outs[0][1].coef_ / a, rtol=1e-15, atol=0)
        assert np.array_equal(outs[1][1].intercept_, outs[0][1].intercept_)
        conv = sp.csr_matrix if sparse else np.asarray
        assert np.array_equal(outs[0][1].predict(conv(X)), outs[1][1].predict(conv(X * a)))


def test_coordinate_invariance_arbitrary_factors():
    rng = np.random.default_rng(2)
    X, y = _multiclass_stream(rng, k=2)
    a = rng.choice([-1.0, 1.0], X.shape[1]) * 10.0 ** rng.uniform(-8, 8, X.shape[1])
    p0 = paper(ScaleInvariantClassifier).partial_fit_decision_function(X, y, classes=[0, 1])
    p1 = paper(ScaleInvariantClassifier).partial_fit_decision_function(X * a, y, classes=[0, 1])
    np.testing.assert_allclose(p1, p0, rtol=1e-9, atol=1e-300)


def test_full_invariance_invertible_maps():
    rng = np.random.default_rng(5)
    n, d = 400, 5
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) > 0, 1, 0)
    Q1, _ = np.linalg.qr(rng.standard_normal((d, d)))
    Q2, _ = np.linalg.qr(rng.standard_normal((d, d)))
    A = Q1 @ np.diag(np.logspace(0, 3, d)) @ Q2  # cond(A) = 1e3
    ref = paper(ScaleInvariantClassifier, invariance="full").partial_fit_decision_function(X, y, classes=[0, 1])
    got = paper(ScaleInvariantClassifier, invariance="full").partial_fit_decision_function(X @ A.T, y, classes=[0, 1])
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-9)
    # affine maps with the intercept: StandardScaler fitted on the data changes nothing
    Xs = StandardScaler().fit_transform(X * 37.0 + 5.0)
    got = paper(ScaleInvariantClassifier, invariance="full").partial_fit_decision_function(Xs, y, classes=[0, 1])
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-9)
    # injective maps: duplicated and combined columns
    Xi = np.hstack([X, X[:, :2], X @ rng.standard_normal((d, 2))])
    got = paper(ScaleInvariantClassifier, invariance="full").partial_fit_decision_function(Xi, y, classes=[0, 1])
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-9)


def test_full_internal_scaling_extreme_spread():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((300, 4))
    y = np.where(X.sum(1) + rng.standard_normal(300) > 0, 1, 0)
    a = 10.0 ** np.array([-50.0, 50.0, -20.0, 120.0])
    ref = paper(ScaleInvariantClassifier, invariance="full").partial_fit_decision_function(X, y, classes=[0, 1])
    got = paper(ScaleInvariantClassifier, invariance="full").partial_fit_decision_function(X * a, y, classes=[0, 1])
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("invariance", ["coordinate", "full"])
@pytest.mark.parametrize("loss", ["log_loss", "hinge"])
def test_label_flip_antisymmetry(invariance, loss):
    rng = np.random.default_rng(7)
    X = rng.standard_normal((200, 4))
    y = np.where(X[:, 0] + rng.standard_normal(200) > 0, 1, -1)
    p = paper(ScaleInvariantClassifier, loss, invariance=invariance).partial_fit_decision_function(
        X, y, classes=[-1, 1])
    q = paper(ScaleInvariantClassifier, loss, invariance=invariance).partial_fit_decision_function(
        X, -y, classes=[-1, 1])
    assert np.array_equal(p, -q)


def test_intercept_constant_value_irrelevant():
    # the intercept is the constant feature 1; any constant column gives the same predictions
    rng = np.random.default_rng(8)
    X = rng.standard_normal((200, 3))
    y = np.where(X[:, 0] > 0, 1, 0)
    for inv in ("coordinate", "full"):
        p = paper(ScaleInvariantClassifier, invariance=inv).partial_fit_decision_function(X, y, classes=[0, 1])
        Xc = np.hstack([X, np.full((200, 1), 37.5)])
        clf = paper(ScaleInvariantClassifier, invariance=inv, fit_intercept=False)
        q = clf.partial_fit_decision_function(Xc, y, classes=[0, 1])
        np.testing.assert_allclose(q, p, rtol=1e-12, atol=1e-15)


# --------------------------------------------------------------------------- prediction modes
@pytest.mark.parametrize("invariance", ["coordinate", "full"])
def test_online_predict_mode_is_next_round_prediction(invariance):
    rng = np.random.default_rng(9)
    X = rng.standard_normal((120, 4))
    y = np.where(X @ [1.0, -2.0, 0.5, 0.0] > 0, 1, 0)
    clf = paper(ScaleInvariantClassifier, invariance=invariance, predict_mode="online").fit(X[:100], y[:100])
    for i in range(100, 110):
        before = clf.decision_function(X[i : i + 1])
        during = clf.partial_fit_decision_function(X[i : i + 1], y[i : i + 1])
        # same formula, different summation order; Alg. 2's exponent is a difference of large terms
        np.testing.assert_allclose(before, during, rtol=1e-12 if invariance == "coordinate" else 1e-9, atol=1e-15)


@pytest.mark.parametrize("invariance", ["coordinate", "full"])
def test_linear_predict_mode_uses_coef(invariance):
    rng = np.random.default_rng(10)
    X, y = _multiclass_stream(rng, k=3)
    clf = paper(ScaleInvariantClassifier, invariance=invariance).fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), X @ clf.coef_.T + clf.intercept_, rtol=1e-12)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(clf.classes_[np.argmax(proba, axis=1)], clf.predict(X))


# --------------------------------------------------------------------------- potentials and regret bounds
def _adversarial_regressor(invariance, X, alpha=ALPHA, intercept=False):
    """Absolute loss with y = -1e-300 realises the adversary g_t = sign(yhat_t) (+1 at 0)."""
    y = np.full(X.shape[0], -1e-300)
    reg = paper(ScaleInvariantRegressor, invariance=invariance, potential_alpha=alpha, fit_intercept=intercept)
    p = reg.partial_fit_predict(X, y)
    g = np.where(p - y > 0, 1.0, -1.0)
    return reg, p, g


def _coordwise_worst_regret_slack(G_yhat, h, s, alpha, d, T):
    """max over u of [sum g yhat + h'u - Thm 3.4 bound(u)] coordinate by coordinate (1-D maximisations)."""
    from scipy.optimize import minimize_scalar

    total = G_yhat - kappa(alpha) * (1 + math.log(T))
    for hi, si in zip(h, s):
        if si == 0:
            continue

        def neg(v):  # v = |u_i| s_i >= 0, u_i with the sign of h_i
            return -(v * abs(hi) / si - v * math.sqrt(alpha * math.log1p(alpha * d * d * T * T * v * v)))

        best = minimize_scalar(neg, bounds=(0, 1e6), method="bounded")
        total += max(0.0, -best.fun)
    return total


@pytest.mark.parametrize("alpha", [1.2, 1.5, 2.0])
def test_alg1_regret_bound_adversarial_and_random(alpha):
    rng = np.random.default_rng(11)
    T, d = 400, 5
    X = rng.standard_cauchy((T, d)) * (rng.random((T, d)) < 0.6)
    # adversarial g_t = sign(yhat_t): the regret against 0 is large but still <= kappa (1 + log T)
    reg, p, g = _adversarial_regressor("coordinate", X, alpha)
    assert np.sum(g * p) >= 0
    assert np.sum(g * p) <= kappa(alpha) * (1 + math.log(T))
    h = -(g[:, None] * X).sum(0)
    s = np.sqrt((X**2).sum(0))
    assert _coordwise_worst_regret_slack(np.sum(g * p), h, s, alpha, d, T) <= 0
    # random labels, logistic loss
    y = rng.choice([-1, 1], T)
    clf = paper(ScaleInvariantClassifier, potential_alpha=alpha, fit_intercept=False)
    p = clf.partial_fit_decision_function(X, y, classes=[-1, 1])
    g = -y / (1 + np.exp(y * p))
    h = -(g[:, None] * X).sum(0)
    assert _coordwise_worst_regret_slack(np.sum(g * p), h, s, alpha, d, T) <= 0


def test_alg1_potential_lemma_every_round():
    # Lemma 3.3: g w_i x_i + psi_t(h_t,i, s_t,i) <= psi_{t-1}(h_{t-1,i}, s_{t-1,i}) + kappa/(t d)
    rng = np.random.default_rng(12)
    T, d = 150, 3
    X = rng.standard_cauchy((T, d)) * (rng.random((T, d)) < 0.7)
    a = ALPHA
    reg, p, g = _adversarial_regressor("coordinate", X)
    h = np.zeros(d)
    s2 = np.zeros(d)
    psi_prev = np.zeros(d)
    for t in range(1, T + 1):
        x = X[t - 1]
        s2n = s2 + x * x
        w = np.zeros(d)
        m = s2n > 0
        w[m] = np.exp((h[m] ** 2 + x[m] ** 2) / (2 * a * s2n[m])) / (a * t * d) * h[m] / s2n[m]
        hn = h - g[t - 1] * x
        psi = np.zeros(d)
        psi[m] = np.exp(hn[m] ** 2 / (2 * a * s2n[m])) / (t * d)
        lhs = g[t - 1] * w * x + psi
        rhs = psi_prev + kappa(a) / (t * d)
        assert np.all(lhs <= rhs * (1 + 1e-9) + 1e-15)
        assert abs(float(w @ x) - p[t - 1]) <= 1e-9 * max(1.0, abs(p[t - 1]))
        h, s2, psi_prev = hn, s2n, psi


def test_alg2_potential_lemma_and_corrected_bound():
    rng = np.random.default_rng(13)
    T, d = 300, 4
    X = rng.standard_t(2, (T, d))
    a = ALPHA
    reg, p, g = _adversarial_regressor("full", X)
    # per round: g_t yhat_t + psi_t <= psi_{t-1}, psi_t = exp((h'S^+h - Gamma)/(2 alpha)), psi_0 = 1
    S = np.zeros((d, d))
    h = np.zeros(d)
    Gam = 0.0
    psi_prev = 1.0
    for t in range(T):
        x = X[t]
        S += np.outer(x, x)
        P = np.linalg.pinv(S, hermitian=True)
        h = h - g[t] * x
        Gam += g[t] ** 2 * float(x @ P @ x)
        psi = math.exp((h @ P @ h - Gam) / (2 * a))
        assert g[t] * p[t] + psi <= psi_prev * (1 + 1e-9)
        psi_prev = psi
    np.testing.assert_allclose(reg.gamma_[0], Gam, rtol=1e-8)
    # corrected Theorem 4.5 against the worst comparator of each S-norm B
    rho = float(h @ np.linalg.pinv(S, hermitian=True) @ h)
    for B in [0.1, 1.0, 10.0, 100.0, 1e4]:
        regret = np.sum(g * p) + B * math.sqrt(rho)
        bound = B * math.sqrt(a * math.log1p(a * B * B) + Gam) + 1
        assert regret <= bound


def test_alg2_bound_random_logistic():
    rng = np.random.default_rng(14)
    T, d = 2000, 5
    X = rng.standard_normal((T, d)) * 10.0 ** rng.uniform(-2, 2, d)
    y = np.where(X @ (rng.standard_normal(d) / np.abs(X).mean(0)) + rng.standard_normal(T) > 0, 1, -1)
    clf = paper(ScaleInvariantClassifier, invariance="full", fit_intercept=False)
    p = clf.partial_fit_decision_function(X, y, classes=[-1, 1])
    g = -y / (1 + np.exp(y * p))
    h = -(g[:, None] * X).sum(0)
    S = X.T @ X
    rho = float(h @ np.linalg.solve(S, h))
    Gam = clf.gamma_[0]
    # Lemma 4.4 bound on Gamma_T
    lam = min(np.linalg.eigvalsh(X[: t + 1].T @ X[: t + 1])[-min(t + 1, d):].min() for t in range(d - 1, T, 97))
    r = d
    assert Gam <= r + (1 + r) * r / 2 * math.log1p(2 * (X**2).sum() / ((1 + r) * r * lam))
    for B in [0.5, 5.0, 50.0]:
        assert np.sum(g * p) + B * math.sqrt(rho) <= B * math.sqrt(ALPHA * math.log1p(ALPHA * B * B) + Gam) + 1


def test_thm42_lower_bound_adversary():
    """App. C adversary (d = 4, T = 60): Alg. 2 predicts 0 throughout, Gamma_T = T/2, regret = B sqrt(T/2)."""
    d, T, delta = 4, 60, 1.0
    rng = np.random.default_rng(15)
    reg = paper(ScaleInvariantRegressor, loss="huber", epsilon=delta, invariance="full", fit_intercept=False)
    S = np.zeros((d, d))
    h = np.zeros(d)
    for t in range(T):
        if t < d:
            x = np.eye(d)[t]
            g = 1 / math.sqrt(2)
        else:
            Sinv = np.linalg.inv(S)
            v = Sinv @ h
            z = rng.standard_normal(d)
            z -= v * (v @ z) / (v @ v)
            x = z / math.sqrt(z @ Sinv @ z)
            g = 1.0
        # huber derivative clip(yhat - y)/delta = g at yhat = 0
        p = reg.partial_fit_predict(x[None, :], np.array([-g * delta]))
        assert abs(p[0]) < 1e-9
        S += np.outer(x, x)
        h -= g * x
        np.testing.assert_allclose(h @ np.linalg.pinv(S, hermitian=True) @ h, (t + 1) / 2, rtol=1e-6)
    np.testing.assert_allclose(reg.gamma_[0], T / 2, rtol=1e-6)
    B = 3.0
    u = B * math.sqrt(2 / T) * np.linalg.solve(S, h)
    np.testing.assert_allclose(math.sqrt(u @ S @ u), B, rtol=1e-6)
    np.testing.assert_allclose(h @ u, B * math.sqrt(T / 2), rtol=1e-6)  # regret, since every yhat = 0


def test_regret_slope_sublinear():
    rng = np.random.default_rng(16)
    T, d = 40000, 10
    w = rng.standard_normal(d)
    X = rng.standard_normal((T, d))
    y = np.where(rng.random(T) < 1 / (1 + np.exp(-X @ w)), 1, -1)
    from sklearn.linear_model import LogisticRegression

    for inv in ("coordinate", "full"):
        clf = paper(ScaleInvariantClassifier, invariance=inv, fit_intercept=False)
        p = clf.partial_fit_decision_function(X, y, classes=[-1, 1])
        losses = np.logaddexp(0, -y * p)
        regrets = []
        for n in (1000, 40000):
            u = LogisticRegression(C=1e6, fit_intercept=False, max_iter=1000).fit(X[:n], y[:n]).coef_[0]
            regrets.append(losses[:n].sum() - np.logaddexp(0, -y[:n] * (X[:n] @ u)).sum())
        slope = math.log(regrets[1] / regrets[0]) / math.log(40)
        assert 0 < slope <= 0.65, (inv, regrets, slope)


# --------------------------------------------------------------------------- API
@pytest.mark.parametrize("loss", ["squared_error", "squared"])
def test_squared_loss_rejected_with_reason(loss):
    with pytest.raises(ValueError, match="not Lipschitz.*huber"):
        paper(ScaleInvariantRegressor, loss=loss).fit(np.ones((3, 2)), np.ones(3))
    with pytest.raises(ValueError, match="not Lipschitz"):
        paper(ScaleInvariantClassifier, loss="squared_hinge").fit(np.eye(3), [0, 1, 0])


def test_alpha_must_exceed_nine_eighths():
    with pytest.raises(ValueError, match="alpha"):
        paper(ScaleInvariantClassifier, potential_alpha=1.125).fit(np.eye(3), [0, 1, 0])


def test_regressors_train_check_with_valid_alpha():
    # scikit-learn's check_regressors_train sets alpha=0.01 (an invalid value here); same check, valid alpha
    X, y = make_regression(n_samples=200, n_features=10, noise=1.0, random_state=0)
    X = StandardScaler().fit_transform(X)
    y = StandardScaler().fit_transform(y[:, None])[:, 0]
    for inv in ("coordinate", "full"):
        reg = paper(ScaleInvariantRegressor, invariance=inv, loss="huber", epsilon=1.0)
        with pytest.raises(ValueError):
            reg.fit(X, y[:-1])
        reg.fit(X.tolist(), y.tolist())
        # one pass over 200 rows; the full variant learns quickly, the coordinate one is conservative
        # early (its prior factor 1 / (alpha t d)), so it gets a few epochs of the same stream
        if inv == "coordinate":
            for _ in range(9):
                reg.partial_fit(X, y)
        assert reg.predict(X).shape == y.shape
        assert reg.score(X, y) > 0.5


def test_pipeline_gridsearch_and_pickle():
    rng = np.random.default_rng(17)
    X = rng.standard_normal((300, 4)) * [1, 10, 100, 1000]
    y = np.where(X @ [1, 0.1, 0.01, 0.001] > 0, 1, 0)
    pipe = make_pipeline(StandardScaler(), paper(ScaleInvariantClassifier))
    search = GridSearchCV(pipe, {"scaleinvariantclassifier__invariance": ["coordinate", "full"],
                                 "scaleinvariantclassifier__potential_alpha": [1.2, 2.0]}, cv=3)
    search.fit(X, y)
    assert search.best_params_["scaleinvariantclassifier__invariance"] == "full"
    assert search.best_score_ > 0.85
    clf = pickle.loads(pickle.dumps(search.best_estimator_))
    np.testing.assert_array_equal(clf.predict(X), search.predict(X))


def test_metrics_attributes():
    rng = np.random.default_rng(18)
    X = rng.standard_normal((100, 3))
    y = rng.integers(0, 2, 100)
    clf = paper(ScaleInvariantClassifier)
    pred = clf.partial_fit_predict(X, y, classes=[0, 1])
    assert clf.n_mistakes_ == int(np.sum(pred != y))
    assert clf.mistake_rate_ == clf.n_mistakes_ / 100
    dec = clone(clf).partial_fit_decision_function(X, y, classes=[0, 1])
    np.testing.assert_allclose(clf.cumulative_loss_, np.logaddexp(0, -(2 * y - 1) * dec).sum(), rtol=1e-12)
    assert clf.n_samples_seen_ == 100


def test_overflow_clamped_with_warning_not_nan():
    # a perfectly sign-aligned stream drives the potential's exponent past the clamp
    X = np.ones((6000, 1))
    # unreachable target: the gradient sign never flips (1e300, not 1e305: the cumulative absolute
    # loss of 6000 rows of 1e305 overflows float64, and a chunk that makes it inf is rejected)
    y = np.full(6000, 1e300)
    reg = paper(ScaleInvariantRegressor, fit_intercept=False)
    with pytest.warns(RuntimeWarning, match="clamped"):
        p = reg.partial_fit_predict(X, y)
    assert np.all(np.isfinite(p)) and np.isfinite(reg.coef_).all()


def test_verbose_prints_progress_and_changes_nothing(capsys):
    rng = np.random.default_rng(19)
    X = rng.standard_normal((25_000, 3))
    y = np.where(X[:, 0] > 0, 1, 0)
    quiet = paper(ScaleInvariantClassifier).partial_fit_decision_function(X, y, classes=[0, 1])
    loud = paper(ScaleInvariantClassifier, verbose=2)
    out = loud.partial_fit_decision_function(X, y, classes=[0, 1])
    assert np.array_equal(out, quiet)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3 and lines[-1].startswith("[ScaleInvariantClassifier] rows 25,000 | ")
    assert "rows/s (last 5,000 rows) | online loss " in lines[-1] and "| mistake rate " in lines[-1]


# --------------------------------------------------------------------------- rank decisions (issue 11)
def test_full_small_new_directions_match_the_exact_algorithm():
    """Directions of relative size 1e-5 are new directions: the rank test acted on squared norms
    (1e-10 on ||x_perp||^2 / ||x||^2) and dropped them, one prediction came out with the wrong sign
    and the stream mapped by an invertible A gave other predictions."""
    d = 1e-5
    X = np.array([[1, 1], [1, 1 + d], [1, 1 - d], [1, 1 + 2 * d], [1, 1 - 3 * d], [1, 1 + d]], float)
    y = np.array([1, -1, 1, -1, 1, -1])
    ref, _, _, _ = alg2_reference(X, logistic_g(y.astype(float)))
    clf = paper(ScaleInvariantClassifier, invariance="full", fit_intercept=False)
    got = clf.partial_fit_decision_function(X, y, classes=[-1, 1])
    assert clf.rank_[0] == 2
    # the pinv reference itself carries ~1e-6 of rounding here (cond(S) ~ 1e11; row 1 is 0 exactly)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=2e-6)
    assert got[1] == 0.0 and np.array_equal(np.sign(got[2:]), np.sign(ref[2:]))
    A = np.array([[2.0, 1.0], [-1.0, 3.0]])
    gotA = paper(ScaleInvariantClassifier, invariance="full", fit_intercept=False).partial_fit_decision_function(
        X @ A.T, y, classes=[-1, 1])
    assert np.max(np.abs(gotA - got)) <= 1e-6 * np.max(np.abs(got))


@pytest.mark.parametrize("seed, d", [(2, 30), (4, 40)])
def test_full_invariance_lognormal_column_scales(seed, d):
    """Columns with log-normal scales (sigma 2) under an invertible map: decisions moved by up to
    0.2 (relative) when small new directions were dropped; now within 1e-6."""
    rng = np.random.default_rng(seed)
    n = 300
    scales = np.exp(2 * rng.standard_normal(d))
    Z = rng.standard_normal((n, d))
    X = Z * scales
    y = np.where(Z @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) > 0, 1, 0)
    Q1, _ = np.linalg.qr(rng.standard_normal((d, d)))
    Q2, _ = np.linalg.qr(rng.standard_normal((d, d)))
    A = Q1 @ np.diag(np.logspace(0, 1, d)) @ Q2
    ref = paper(ScaleInvariantClassifier, invariance="full").partial_fit_decision_function(X, y, classes=[0, 1])
    got = paper(ScaleInvariantClassifier, invariance="full").partial_fit_decision_function(X @ A.T, y, classes=[0, 1])
    assert np.max(np.abs(got - ref)) <= 1e-6 * np.max(np.abs(ref))


# ---------------------------------------------------------------- sample_weight (issue 12)
@pytest.mark.parametrize("invariance", ["coordinate", "full"])
def test_sample_weight_scales_the_loss_derivative(invariance):
    import sklearn
    from sklearn.model_selection import KFold, cross_validate

    from skonline.linear_model import ScaleInvariantRegressor

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = X @ [1.0, -2.0, 0.5]
    reg = paper(ScaleInvariantRegressor, invariance=invariance).fit(X[:20], y[:20])
    h, loss = reg.neg_cum_grad_.copy(), reg.cumulative_loss_
    reg.partial_fit(X[20:25], y[20:25], sample_weight=np.zeros(5))  # weight 0: h does not move
    np.testing.assert_array_equal(reg.neg_cum_grad_, h)
    assert reg.cumulative_loss_ == loss
    # ... but the row enters the feature statistics (documented: not the same as dropping it)
    # a weight w multiplies the derivative: h moves by -w g x for the absolute loss (|g| = 1)
    one = paper(ScaleInvariantRegressor, invariance=invariance, internal_scaling="none").fit(X[:20], y[:20])
    two = paper(ScaleInvariantRegressor, invariance=invariance, internal_scaling="none").fit(X[:20], y[:20])
    h0 = one.neg_cum_grad_.copy()
    one.partial_fit(X[20:21], y[20:21])
    two.partial_fit(X[20:21], y[20:21], sample_weight=[2.5])
    np.testing.assert_allclose(two.neg_cum_grad_ - h0, 2.5 * (one.neg_cum_grad_ - h0), rtol=1e-12)
    # routed through cross_validate
    w = rng.uniform(0.5, 2, 40)
    with sklearn.config_context(enable_metadata_routing=True):
        est = paper(ScaleInvariantRegressor, invariance=invariance).set_fit_request(sample_weight=True)
        est.set_score_request(sample_weight=False)
        res = cross_validate(est, X, y, cv=KFold(2), params={"sample_weight": w}, return_estimator=True)
    ref = paper(ScaleInvariantRegressor, invariance=invariance).fit(X[20:], y[20:], sample_weight=w[20:])
    np.testing.assert_array_equal(res["estimator"][0].coef_, ref.coef_)



def test_full_near_duplicate_columns_do_not_break_the_pseudo_inverse():
    # two columns equal for 300 rows, then apart by 1e-9 (as ailerons' standardised columns are):
    # at the old rank_tol=1e-10 that tiny difference counted as a new direction, its 1 / ratio^2
    # term blew up the pseudo-inverse, and the chunk was rejected; the default treats it as in
    # the span and keeps learning
    rng = np.random.default_rng(0)
    n, d = 600, 6
    X = rng.standard_normal((n, d))
    X[:, 5] = X[:, 4]
    X[300:, 5] += 1e-9 * rng.standard_normal(n - 300)
    y = X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n)
    with pytest.raises(FloatingPointError):
        paper(ScaleInvariantRegressor, invariance="full", rank_tol=1e-10).fit(X, y)
    est = paper(ScaleInvariantRegressor, invariance="full").fit(X, y)
    assert est.rank_[0] == d  # the d - 1 distinct columns and the intercept
    assert np.all(np.isfinite(est.pinv_))
    assert np.mean(np.abs(est.predict(X[-100:]) - y[-100:])) < 0.5


# ---------------------------------------------------------------- collinearity warning (issue 10)
def _collinear(record):
    return [w for w in record if "nearly collinear" in str(w.message)]


@pytest.mark.parametrize("chunk", [None, 100, 37])
def test_collinear_warning_fires_once_on_breast_cancer(chunk):
    import warnings

    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    clf = paper(ScaleInvariantClassifier, invariance="full")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        if chunk is None:
            clf.fit(X, y)
        else:
            for s in range(0, X.shape[0], chunk):
                clf.partial_fit(X[s:s + chunk], y[s:s + chunk], classes=[0, 1])
    assert len(_collinear(rec)) == 1
    assert "invariance='full'" in str(_collinear(rec)[0].message)


@pytest.mark.parametrize("loader", ["load_wine", "load_iris", "load_digits"])
def test_collinear_warning_silent_on_other_tables(loader):
    import warnings

    import sklearn.datasets

    X, y = getattr(sklearn.datasets, loader)(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paper(ScaleInvariantClassifier, invariance="full").fit(X, y)


def test_collinear_factor_is_invariant_and_matches_a_regression():
    # VIF_j = 1 / (1 - R_j^2) read from the learned state: unchanged by rescaling and shifting the
    # features, and equal to the one of an ordinary least-squares fit of column j on the others
    rng = np.random.default_rng(3)
    n = 120
    X = rng.standard_normal((n, 4))
    X = np.hstack([X, X[:, :1] + 0.05 * rng.standard_normal((n, 1))])
    y = (X[:, 1] > 0).astype(int)
    a = paper(ScaleInvariantClassifier, invariance="full").fit(X, y)
    b = paper(ScaleInvariantClassifier, invariance="full").fit(X * [1e3, 2.0, 1e-2, 5.0, 7.0] + 11.0, y)
    vif_a, j = a._max_vif()
    vif_b, jb = b._max_vif()
    assert j == jb and vif_b == pytest.approx(vif_a, rel=1e-6)
    others = np.hstack([np.delete(X, j, axis=1), np.ones((n, 1))])
    coef = np.linalg.lstsq(others, X[:, j], rcond=None)[0]
    r2 = 1.0 - np.sum((X[:, j] - others @ coef) ** 2) / np.sum((X[:, j] - X[:, j].mean()) ** 2)
    assert vif_a == pytest.approx(1.0 / (1.0 - r2), rel=1e-6)
