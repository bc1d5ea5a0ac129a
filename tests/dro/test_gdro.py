"""GroupDROClassifier / GroupDRORegressor: the paper's examples, exact references, edge cases."""

import math
import pickle
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import clone

from skonline.dro import GroupDROClassifier, GroupDRORegressor
from skonline.dro import _gdro_core as core
from skonline.exceptions import HorizonExceededWarning

from _paper import paper

# --------------------------------------------------------------------------- Example 1
MU = np.r_[0.5, np.linspace(0.86, 1.0, 15)]


def _lmax(w):
    return np.max(w * w - 2 * MU * w + MU)


def _l5(w):
    return np.sort(w * w - 2 * MU * w + MU)[::-1][:5].mean()


# The paper's W = [0, 1] is the ball of radius 1/2 around 1/2: learn v = w - 1/2 from targets
# z - 1/2. The squared_error loss (v - z')^2 / 2 with loss_bound 1/2 is then exactly the paper's
# (w - z)^2 in [0, 1], with G = 2 (Assumptions 3 and 4 of the example).
EX1 = dict(loss="squared_error", radius=0.5, fit_intercept=False, loss_bound=0.5)


def _ex1_stream(T, seed):
    """Fresh samples, one of every group per block of 16 rows (the true SA setting)."""
    rng = np.random.default_rng(seed)
    g = np.tile(np.arange(16), T)
    y = (rng.random(g.size) < MU[g]).astype(float) - 0.5
    return np.ones((g.size, 1)), y, g


def _ex1_pools(n, seed):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(16), n)
    y = (rng.random(g.size) < MU[g]).astype(float) - 0.5
    return np.ones((g.size, 1)), y, g


@pytest.mark.parametrize("seed", [0, 1])
def test_example1_gdro_and_top5_solutions(seed):
    """GDRO solution 0.5 (value 0.25), AT5RO solution 0.8 (value 0.16); w_G < w_A."""
    T = 20000
    X, y, g = _ex1_stream(T, seed)
    smd = paper(GroupDRORegressor, sampling="stream", horizon=T, random_state=seed, **EX1).fit(X, y, groups=g)
    w = smd.coef_[0] + 0.5
    assert abs(w - 0.5) < 0.06 and _lmax(w) < 0.255
    assert smd.G_ == 2.0 and smd.n_iter_ == T and np.argmax(smd.q_) == 0
    smd_a = paper(GroupDRORegressor, sampling="stream", random_state=seed, **EX1).fit(X, y, groups=g)
    assert smd_a.anytime_ and _lmax(smd_a.coef_[0] + 0.5) < 0.2535
    top5 = paper(GroupDRORegressor, objective="top_k", k=5, sampling="stream", horizon=T,
                 random_state=seed, **EX1).fit(X, y, groups=g)
    wa = top5.coef_[0] + 0.5
    assert abs(wa - 0.8) < 0.05 and _l5(wa) < 0.162
    assert abs(top5.q_[0] - 0.2) < 0.02 and top5.q_.max() <= 0.2 + 1e-12
    assert w < wa
    Xp, yp, gp = _ex1_pools(4000, seed)
    online = paper(GroupDRORegressor, algorithm="online", horizon=T, random_state=seed, **EX1).fit(
        Xp, yp, groups=gp)
    assert _lmax(online.coef_[0] + 0.5) < 0.30
    dep = paper(GroupDRORegressor, objective="top_k", k=5, algorithm="depround", horizon=T,
                random_state=seed, **EX1).fit(Xp, yp, groups=gp)
    wd = dep.coef_[0] + 0.5
    assert abs(wd - 0.8) < 0.05 and _l5(wd) < 0.162
    assert dep.group_draws_.sum() == 5 * T
    any1 = paper(GroupDRORegressor, objective="top_k", k=5, algorithm="online", horizon=T,
                 random_state=seed, **EX1).fit(Xp, yp, groups=gp)
    assert any1.anytime_ and _l5(any1.coef_[0] + 0.5) < 0.165
    assert any1.group_draws_.sum() == T


# --------------------------------------------------------------------------- exact solver
def _epigraph_gdro(X, y, g, m, R):
    Xt = np.c_[X, np.ones(len(X))]
    s = 2 * y - 1
    n = np.bincount(g)

    def risks(w):
        return np.bincount(g, weights=np.logaddexp(0, -s * (Xt @ w))) / n

    cons = [{"type": "ineq", "fun": (lambda z, i=i: z[-1] - risks(z[:-1])[i])} for i in range(m)]
    cons.append({"type": "ineq", "fun": lambda z: R * R - z[:-1] @ z[:-1]})
    res = minimize(lambda z: z[-1], np.r_[np.zeros(Xt.shape[1]), 1.0],
                   jac=lambda z: np.r_[np.zeros(Xt.shape[1]), 1.0], constraints=cons,
                   method="SLSQP", options={"ftol": 1e-12, "maxiter": 500})
    if hasattr(res, "multipliers"):  # SLSQP reports its multipliers (recent scipy)
        return res.x[-1], np.asarray(res.multipliers[:m]), risks
    return res.x[-1], _kkt_multipliers(res.x, Xt, s, g, n, m, R, risks), risks


def _kkt_multipliers(z, Xt, s, g, n, m, R, risks, tol=1e-6):
    """The group multipliers from the KKT conditions at the epigraph solution ``z = (w, t)`` (for
    scipy without SLSQP's ``multipliers``): nonnegative lam_i on the active groups and mu on the
    ball with sum(lam) = 1 and sum_i lam_i grad risk_i(w) + 2 mu w = 0, by nonnegative least squares."""
    from scipy.optimize import nnls

    w, t = z[:-1], z[-1]
    p = 1.0 / (1.0 + np.exp(s * (Xt @ w)))  # d/dm log(1 + exp(-m)) = -sigmoid(-m), m = s x'w
    grads = np.array([-(Xt[g == i] * (s[g == i] * p[g == i])[:, None]).sum(0) / n[i] for i in range(m)])
    active = np.flatnonzero(t - risks(w) < tol)
    cols = [grads[i] for i in active] + ([2.0 * w] if R * R - w @ w < tol else [])
    A = np.vstack([np.array(cols).T, [1.0] * len(active) + [0.0] * (len(cols) - len(active))])
    b = np.r_[np.zeros(len(w)), 1.0]
    sol, _ = nnls(A, b)
    lam = np.zeros(m)
    lam[active] = sol[: len(active)]
    return lam


def test_gdro_matches_exact_saddle_point():
    """On fixed pools (P_i = empirical), w_bar reaches the epigraph optimum, q_bar its multipliers."""
    rng = np.random.default_rng(0)
    m, d, n, R = 5, 5, 200, 2.0
    X = rng.standard_normal((m * n, d))
    g = np.repeat(np.arange(m), n)
    Wt = rng.standard_normal((m, d))
    y = (np.einsum("ij,ij->i", X, Wt[g]) + 0.5 * rng.standard_normal(m * n) > 0).astype(int)
    opt, dual, risks = _epigraph_gdro(X, y, g, m, R)
    T = 100_000
    for kw, tol in [({}, 0.005), ({"anytime": True}, 0.003), ({"algorithm": "online"}, 0.003)]:
        params = dict(horizon=T * (m if kw.get("algorithm") == "online" else 1), **kw)
        clf = paper(GroupDROClassifier, radius=R, random_state=0, **params).fit(X, y, groups=g)
        w = np.r_[clf.coef_[0], clf.intercept_]
        gap = risks(w).max() - opt
        D, G = R / math.sqrt(2), clf.G_
        assert -1e-9 <= gap <= min(tol, 2 * math.sqrt(10 * (D * D * G * G + math.log(m)) / T))
        assert np.abs(clf.q_ - dual).sum() < 0.12
        # fit's group_risks_ are the exact empirical risks of the fitted model
        np.testing.assert_allclose(clf.group_risks_, risks(w), rtol=1e-10)
        assert clf.objective_value_ == pytest.approx(risks(w).max(), rel=1e-10)


# --------------------------------------------------------------------------- heterogeneous set
def _heterogeneous(d, m, rng, radius=0.2, p1=0.6):
    """The paper's heterogeneous construction: close classifiers, group 0 a noisy outlier."""
    w0 = rng.standard_normal(d)
    w0 /= np.linalg.norm(w0)
    V = rng.standard_normal((m, d))
    W = w0 + radius * V / np.linalg.norm(V, axis=1, keepdims=True)
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    p = np.r_[p1, rng.uniform(0.85, 0.95, m - 1)]

    def sample(n_per):
        g = np.repeat(np.arange(m), n_per)
        X = rng.standard_normal((g.size, d))
        y = np.einsum("ij,ij->i", X, W[g]) > 0
        y ^= rng.random(g.size) > p[g]
        return X, y.astype(int), g

    return sample


@pytest.fixture(scope="module")
def het_data():
    sample = _heterogeneous(30, 20, np.random.default_rng(3))
    return sample(3000), sample(1500)


def test_q_concentrates_on_hardest_group(het_data):
    (Xtr, ytr, gtr), (Xte, yte, gte) = het_data
    T = 15000
    risk = {}
    for name, kw in [("erm", dict(eta_scale=0.0)), ("smd", {}), ("online", dict(algorithm="online")),
                     ("top3", dict(objective="top_k", k=3)),
                     ("top3_dep", dict(objective="top_k", k=3, algorithm="depround"))]:
        clf = paper(GroupDROClassifier, radius=5.0, horizon=T, random_state=0, **kw).fit(Xtr, ytr, groups=gtr)
        risk[name] = clf.group_risk(Xte, yte, gte)[1]
        if name == "erm":
            np.testing.assert_allclose(clf.q_, 1 / 20, rtol=1e-12)
        elif not name.startswith("top3"):
            assert np.argmax(clf.q_) == 0 and clf.q_[0] >= 0.25  # > 5x uniform on the outlier
        else:
            assert np.argmax(clf.q_) == 0 and clf.q_.max() <= 1 / 3 + 1e-12
    for name in ("smd", "online"):
        assert risk[name].max() <= risk["erm"].max() - 0.05
    top3 = {k: np.sort(v)[-3:].mean() for k, v in risk.items()}
    assert top3["top3"] <= top3["erm"] - 0.01 and top3["top3_dep"] <= top3["erm"] - 0.01
    # GDRO buys the outlier's risk with the others'; the top-k average sits in between
    assert risk["smd"][0] < risk["top3"][0]
    assert risk["top3"][1:].mean() < risk["smd"][1:].mean()


# --------------------------------------------------------------------------- equivalences
def _blobs(seed=0, n=600, m=4, d=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    g = rng.integers(0, m, n)
    w = rng.standard_normal((m, d))
    y = (np.einsum("ij,ij->i", X, w[g]) + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y, g


def _same_fit(a, b):
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    np.testing.assert_array_equal(a.q_, b.q_)
    np.testing.assert_array_equal(a.q_last_, b.q_last_)


@pytest.mark.parametrize("sampling", ["pool", "stream"])
def test_k1_top_k_reproduces_gdro(sampling):
    X, y, g = _blobs()
    kw = dict(random_state=5, sampling=sampling, horizon=1000, eta_scale=20)
    _same_fit(paper(GroupDROClassifier, objective="top_k", k=1, **kw).fit(X, y, groups=g),
              paper(GroupDROClassifier, **kw).fit(X, y, groups=g))
    # DepRound with k = 1 draws i with probability q_i: Alg. 6 is Alg. 2, same step sizes
    _same_fit(paper(GroupDROClassifier, objective="top_k", k=1, algorithm="depround", **kw).fit(X, y, groups=g),
              paper(GroupDROClassifier, algorithm="online", **kw).fit(X, y, groups=g))
    # Alg. 7 with k = 1 is Online(1)_a
    kw.pop("horizon")
    _same_fit(paper(GroupDROClassifier, objective="top_k", k=1, algorithm="online", **kw).fit(X, y, groups=g),
              paper(GroupDROClassifier, algorithm="online", anytime=True, **kw).fit(X, y, groups=g))


def test_k_equal_m_keeps_q_uniform_and_float_k():
    X, y, g = _blobs(m=4)
    for alg in ("smd", "depround", "online"):
        clf = paper(GroupDROClassifier, objective="top_k", k=4, algorithm=alg, horizon=300,
                    random_state=0, eta_scale=50).fit(X, y, groups=g)
        np.testing.assert_allclose(clf.q_, 0.25, rtol=1e-14)
        np.testing.assert_allclose(clf.q_last_, 0.25, rtol=1e-14)
    clf = paper(GroupDROClassifier, objective="top_k", k=0.5, horizon=10).fit(X, y, groups=g)
    assert clf.k_ == 2
    clf = paper(GroupDROClassifier, objective="top_k", k=0.3, horizon=10).fit(X, y, groups=g)
    assert clf.k_ == 2  # ceil(0.3 * 4)


def _reference_sgd(X, y, R, anytime, T=None, fi=True):
    """Projected averaged SGD on the absolute loss: what every algorithm is with one group."""
    D = R / math.sqrt(2)
    w = np.zeros(X.shape[1] + fi)
    ws = np.zeros_like(w)
    asum = 0.0
    x2max = 0.0
    for t, (x, yy) in enumerate(zip(X, y), 1):
        xt = np.r_[x, 1.0] if fi else x
        x2max = max(x2max, xt @ xt)
        G = math.sqrt(x2max)
        a = 1 / math.sqrt(t) if anytime else 1.0
        ws += a * w
        asum += a
        eta = D * math.sqrt(2 / t) / G if anytime else D * D * math.sqrt(8 / (5 * T * D * D * G * G))
        w = w - eta * np.sign(w @ xt - yy) * xt
        nw = np.linalg.norm(w)
        if nw > R:
            w *= R / nw
    return ws / asum


@pytest.mark.parametrize("anytime", [False, True])
def test_single_group_is_projected_averaged_sgd(anytime):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 4)) * [1, 2, 3, 4]
    y = X @ [1.0, -1, 0.5, 0.2] + rng.standard_normal(300)
    reg = paper(GroupDRORegressor, sampling="stream", radius=3.0, anytime=anytime,
                horizon=None if anytime else 300).fit(X, y)
    ref = _reference_sgd(X, y, 3.0, anytime, T=300)
    np.testing.assert_allclose(np.r_[reg.coef_, reg.intercept_], ref, rtol=1e-12, atol=1e-14)
    assert reg.n_groups_ == 1 and reg.q_.tolist() == [1.0]
    # the anytime weights are 1/sqrt(t), i.e. proportional to eta_t: sum eta_j w_j / sum eta_j
    if anytime:
        assert reg.eta_w_ == pytest.approx(3 / math.sqrt(2) * math.sqrt(2 / 300) / reg.G_, rel=1e-12)


def test_step_size_formulas():
    T, m, k, D, G = 1000, 8, 3, 2.0, 5.0
    c = core.step_constants
    base = math.sqrt(8 / (5 * T * (D * D * G * G + math.log(m))))
    assert c(core.SMD, False, T, D, G, m, 1) == pytest.approx((D * D * base, math.log(m) * base), rel=1e-14)
    basek = math.sqrt(8 / (5 * T * (D * D * G * G + math.log(m / k))))
    assert c(core.SMD, False, T, D, G, m, k) == pytest.approx((D * D * basek, math.log(m / k) * basek), rel=1e-14)
    any_ = math.sqrt(2 / (D * D * G * G + math.log(m)))
    assert c(core.SMD, True, T, D, G, m, 1) == pytest.approx((D * D * any_, math.log(m) * any_), rel=1e-14)
    assert c(core.SMD_UNIFORM, False, T, D, G, m, 1) == pytest.approx(
        (D * D * base / m, math.log(m) * base / m), rel=1e-14)
    assert c(core.ONLINE, False, T, D, G, m, 1) == pytest.approx(
        (2 * D / (G * math.sqrt(5 * T)), math.sqrt(math.log(m) / (m * T))), rel=1e-14)
    assert c(core.ONLINE, True, T, D, G, m, k) == pytest.approx((D / G, math.sqrt(math.log(m) / m)), rel=1e-14)
    assert c(core.DEPROUND, False, T, D, G, m, k) == pytest.approx(
        (2 * D / (G * math.sqrt(5 * T)), math.sqrt(k * math.log(m) / (m * T))), rel=1e-14)
    # the estimator reports them (gamma = eta_q / 2), scaled by the knobs
    X, y, g = _blobs(m=8)
    clf = paper(GroupDROClassifier, algorithm="online", horizon=50, eta_scale=3.0, step_scale=0.5,
                radius=2 * math.sqrt(2)).fit(X, y, groups=g)
    cw, cq = c(core.ONLINE, False, 50, 2.0, clf.G_, 8, 1)
    assert clf.eta_w_ == pytest.approx(0.5 * cw) and clf.eta_q_ == pytest.approx(3 * cq)
    assert clf.gamma_ == pytest.approx(clf.eta_q_ / 2)


# --------------------------------------------------------------------------- weighted GDRO
def test_weighted_budgets():
    rng = np.random.default_rng(0)
    n_i = np.array([4000, 2000, 1000, 400])
    g = np.repeat(np.arange(4), n_i)
    X = rng.standard_normal((g.size, 3))
    y = (X[:, 0] + 0.5 * g * X[:, 1] > 0).astype(int)
    smdr = paper(GroupDROClassifier, objective="weighted", random_state=0).fit(X, y, groups=g)
    np.testing.assert_allclose(smdr.weights_, n_i / n_i.max())
    assert smdr.n_iter_ == 4000
    # budgets met in expectation: draws ~ Binomial(n_1, p_i), mean n_i
    p = n_i / n_i.max()
    assert smdr.group_draws_[0] == n_i[0]
    assert np.all(np.abs(smdr.group_draws_ - n_i) <= 4 * np.sqrt(n_i[0] * p * (1 - p)))
    mp = paper(GroupDROClassifier, objective="weighted", algorithm="mirror_prox", random_state=0).fit(X, y, groups=g)
    nm = n_i.min()
    np.testing.assert_allclose(mp.weights_, (1 / math.sqrt(nm) + 1) / (1 / math.sqrt(nm) + np.sqrt(nm / n_i)))
    assert mp.weights_[-1] == pytest.approx(1.0)
    T = nm // 2
    assert mp.n_iter_ == T
    np.testing.assert_array_equal(mp.batch_sizes_, n_i // nm)
    np.testing.assert_array_equal(mp.group_draws_, 2 * T * (n_i // nm))  # the budget, exactly
    np.testing.assert_array_equal(mp.n_pool_wraps_, 0)
    assert not hasattr(smdr, "partial_fit") and not hasattr(mp, "partial_fit_predict")
    # equal group sizes: p = 1, SMDr samples every group every round
    geq = np.repeat(np.arange(4), 300)
    eq = paper(GroupDROClassifier, objective="weighted", random_state=0).fit(X[:1200], y[:1200], groups=geq)
    np.testing.assert_array_equal(eq.weights_, 1.0)
    np.testing.assert_array_equal(eq.group_draws_, 300)


# --------------------------------------------------------------------------- errors
def _pickled(est):
    return pickle.dumps(est)


def test_errors_change_nothing():
    X, y, g = _blobs(m=3)
    clf = paper(GroupDROClassifier, algorithm="online", random_state=0)
    clf.partial_fit(X[:100], y[:100], groups=g[:100], classes=[0, 1])
    before = _pickled(clf)
    bad = [
        ({"groups": np.full(50, 9)}, "not one of the groups"),
        ({"groups": g[:49]}, "one label per row"),
        ({}, "groups is required"),
        ({"groups": g[100:150], "group_labels": [0, 1]}, "differs from the groups"),
    ]
    for kw, msg in bad:
        with pytest.raises(ValueError, match=msg):
            clf.partial_fit(X[100:150], y[100:150], **kw)
        assert _pickled(clf) == before
    # a group declared in fit without any row cannot be sampled
    fitted = paper(GroupDROClassifier, random_state=0).fit(X, y, groups=g)
    before = _pickled(fitted)
    with pytest.raises(ValueError, match="has no samples"):
        fitted.fit(X, y, groups=g, group_labels=[0, 1, 2, 3])
    assert _pickled(fitted) == before
    fresh = paper(GroupDROClassifier)
    with pytest.raises(ValueError, match="has no samples"):
        fresh.fit(X, y, groups=g, group_labels=[0, 1, 2, 3])
    assert not hasattr(fresh, "coef_")
    # ... but a stream may declare a group that has not arrived yet
    s = paper(GroupDROClassifier, sampling="stream", horizon=100).fit(X, y, groups=g, group_labels=[0, 1, 2, 3])
    assert s.n_groups_ == 4 and s.n_iter_ == 0 and np.isnan(s.group_risks_).all()
    with pytest.raises(ValueError, match="exceeds the number of groups"):
        paper(GroupDROClassifier, objective="top_k", k=4).fit(X, y, groups=g)
    with pytest.raises(ValueError, match="not available for objective"):
        paper(GroupDROClassifier, algorithm="depround").fit(X, y, groups=g)
    with pytest.raises(ValueError, match="no anytime version"):
        paper(GroupDROClassifier, objective="top_k", algorithm="depround", anytime=True).fit(X, y, groups=g)
    with pytest.raises(ValueError, match="needs the horizon"):
        paper(GroupDROClassifier, objective="top_k", algorithm="depround").partial_fit(X, y, groups=g, classes=[0, 1])
    with pytest.raises(ValueError, match="no fixed-step version"):
        paper(GroupDROClassifier, objective="top_k", algorithm="online", anytime=False).fit(X, y, groups=g)
    with pytest.raises(ValueError, match="not smooth"):
        paper(GroupDROClassifier, "hinge", objective="weighted", algorithm="mirror_prox").fit(X, y, groups=g)
    with pytest.raises(ValueError, match="NaN"):
        paper(GroupDROClassifier).fit(X, y, groups=np.r_[np.nan, g[1:]])


def test_horizon_warning_when_streaming_past_T():
    X, y, g = _blobs(m=1)
    clf = paper(GroupDROClassifier, sampling="stream", horizon=100)
    with pytest.warns(HorizonExceededWarning, match="exceed the horizon"):
        clf.partial_fit(X[:300], y[:300], classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.partial_fit(X[300:], y[300:])  # warned once, when crossing T


# --------------------------------------------------------------------------- streaming with groups
STREAM_PARAMS = [
    dict(),
    dict(algorithm="smd_uniform"),
    dict(algorithm="online"),
    dict(objective="top_k", k=2, horizon=400),
    dict(objective="top_k", k=2, algorithm="depround", horizon=400),
    dict(objective="top_k", k=3, algorithm="online"),
]


def _state_bytes(est):
    keep = {k: v for k, v in vars(est).items() if k.endswith("_")}
    keep["_rng_"] = est._rng_.bit_generator.state
    return [(k, pickle.dumps(keep[k])) for k in sorted(keep)]


def _chunks(n, sizes):
    i = 0
    for s in sizes:
        if i >= n:
            return
        yield slice(i, min(n, i + s))
        i += s
    if i < n:
        yield slice(i, n)


@pytest.mark.parametrize("params", STREAM_PARAMS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "smd")
def test_streaming_invariants_with_groups(params):
    """The shared checks' invariants with per-chunk groups (test_common passes kwargs only once)."""
    X, y, g = _blobs(seed=2, n=400, m=4)
    est = paper(GroupDROClassifier, sampling="stream", random_state=0, max_buffer=16, eta_scale=30, **params)
    first = dict(classes=[0, 1], group_labels=[0, 1, 2, 3])
    ref = clone(est)
    pred = ref.partial_fit_predict(X, y, groups=g, **first)
    assert ref.n_iter_ > 20
    full = clone(est).fit(X, y, groups=g, **first)
    assert _state_bytes(full) == _state_bytes(ref)
    sizes_rng = np.random.default_rng(0)
    for sizes in ([1] * 7 + [13, 2], [200, 200], list(sizes_rng.integers(1, 40, 30))):
        e = clone(est)
        preds = [e.partial_fit_predict(X[sl], y[sl], groups=g[sl], **(first if j == 0 else {}))
                 for j, sl in enumerate(_chunks(len(X), sizes))]
        np.testing.assert_array_equal(np.concatenate(preds), pred)
        assert _state_bytes(e) == _state_bytes(ref)
    # pickle mid-stream
    a = clone(est)
    a.partial_fit(X[:150], y[:150], groups=g[:150], **first)
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.partial_fit_predict(X[150:], y[150:], groups=g[150:]),
                                  b.partial_fit_predict(X[150:], y[150:], groups=g[150:]))
    assert _state_bytes(a) == _state_bytes(b)
    # rejected chunks change nothing; learning continues as if they never came
    c = clone(est)
    c.partial_fit(X[:150], y[:150], groups=g[:150], **first)
    before = pickle.dumps(c)
    Xn = X[150:].copy()
    Xn[5, 1] = np.nan
    for Xb, kw in [(X[150:], {"groups": np.r_[g[150:-1], 7]}), (X[150:], {"groups": g[151:]}),
                   (X[150:], {}), (Xn, {"groups": g[150:]})]:
        with pytest.raises(ValueError):
            c.partial_fit(Xb, y[150:], **kw)
        assert pickle.dumps(c) == before
    c.partial_fit(X[150:], y[150:], groups=g[150:])
    assert _state_bytes(c) == _state_bytes(ref)
    # never a sample twice: draws per group <= rows of that group
    assert np.all(ref.group_draws_ <= np.bincount(g, minlength=4))
    spr = {"smd": 4, "smd_uniform": 1, "online": 1, "depround": 2}[params.get("algorithm", "smd")]
    if params.get("objective") == "top_k" and params.get("algorithm", "smd") == "smd":
        spr = 4
    assert ref.group_draws_.sum() == spr * ref.n_iter_


def test_pending_group_waits_and_is_not_redrawn():
    X, y, g = _blobs(seed=4, n=300, m=3)
    first = dict(classes=[0, 1], group_labels=[0, 1, 2])
    for seed in range(20):  # a seed whose first draw is not the first row's group
        est = paper(GroupDROClassifier, algorithm="online", random_state=seed, max_buffer=5)
        est.partial_fit(X[:1], y[:1], groups=[0], **first)
        if est._n_pending_[0] > 0 and est._pending_groups_[0] != 0:
            break
    pending = int(est._pending_groups_[0])
    assert est.n_iter_ == 0
    rows = np.flatnonzero(g != pending)[:40]
    est.partial_fit(X[rows], y[rows], groups=g[rows])
    assert est.n_iter_ == 0 and int(est._pending_groups_[0]) == pending  # waits; never redrawn
    assert est._buffer_length_[pending] == 0 and np.all(est._buffer_length_ <= 5)  # capped, oldest dropped
    assert est._uniforms_length_[0] == 16  # queued coins: m * max_buffer + 1 at most
    row = np.flatnonzero(g == pending)[:1]
    est.partial_fit(X[row], y[row], groups=g[row])
    # the round runs, then the backlog is served with the queued coins
    assert est.n_iter_ >= 1 and est.group_draws_[pending] == 1
    assert est.group_draws_.sum() == est.n_iter_


# --------------------------------------------------------------------------- misc API
def test_multiclass_regressor_history_and_group_risk():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((900, 3))
    y = np.argmax(X @ rng.standard_normal((3, 3)), axis=1)
    g = rng.integers(0, 3, 900)
    clf = paper(GroupDROClassifier, random_state=0, n_epochs=3, record_every=100).fit(X, y, groups=g)
    assert clf.coef_.shape == (3, 3) and clf.intercept_.shape == (3,)
    assert clf.score(X, y) > 0.8
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    T = clf.n_iter_
    assert clf.history_coef_.shape == (T // 100, 3, 4) and clf.history_iter_[-1] == T // 100 * 100
    if T % 100 == 0:
        np.testing.assert_allclose(clf.history_coef_[-1][:, :3], clf.coef_)
        np.testing.assert_allclose(clf.history_q_[-1], clf.q_)
    labels, risks = clf.group_risk(X, y, g)
    np.testing.assert_allclose(risks, clf.group_risks_, rtol=1e-12)
    assert labels.tolist() == [0, 1, 2]
    yr = X @ [1.0, 2.0, -1.0] + 0.1 * rng.standard_normal(900)
    reg = paper(GroupDRORegressor, random_state=0, n_epochs=5).fit(X, yr, groups=g)
    assert reg.coef_.shape == (3,) and reg.intercept_.shape == (1,)
    assert reg.score(X, yr) > 0.9
    sq = paper(GroupDRORegressor, "squared_error", random_state=0, n_epochs=5, step_scale=20).fit(X, yr, groups=g)
    assert sq.score(X, yr) > 0.9
    # string group labels, pandas-free
    gs = np.array(["a", "b", "c"])[g]
    clf2 = paper(GroupDROClassifier, random_state=0).fit(X, y, groups=gs)
    assert clf2.groups_.tolist() == ["a", "b", "c"]


@pytest.mark.parametrize("algorithm", ["online", "smd_uniform"])
def test_q_stays_normalised_with_large_steps_and_raw_losses(algorithm):
    """Sparse q-updates renormalise incrementally: the error must not compound (Z < 1 amplifies
    it), even when unbounded raw losses and a large eta_q give huge multiplicative factors."""
    X, y, g = _blobs(seed=3, n=3000, m=6)
    clf = paper(GroupDROClassifier, algorithm=algorithm, eta_scale=300.0, radius=3.0, horizon=20000,
                random_state=0).fit(X * 5, y, groups=g)
    assert abs(clf.q_.sum() - 1) < 1e-12 and abs(clf.q_last_.sum() - 1) < 1e-12
    np.testing.assert_allclose(clf._q_linear_, np.exp(clf._log_q_), rtol=1e-9, atol=1e-300)


# ---------------------------------------------------------------- issue 12
def _two_groups(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = (X[:, 0] > 0).astype(int)
    g = (X[:, 1] > 0).astype(int)
    return X, y, g


def test_generator_random_state_is_accepted_and_cloned():
    X, y, g = _two_groups()
    a = paper(GroupDROClassifier, random_state=np.random.default_rng(0)).fit(X, y, groups=g)
    b = clone(paper(GroupDROClassifier, random_state=np.random.default_rng(0))).fit(X, y, groups=g)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_undeclared_group_in_fit_has_a_fit_message():
    X, y, g = _two_groups()
    with pytest.raises(ValueError, match="not in group_labels") as info:
        paper(GroupDROClassifier, random_state=0).fit(X, y, groups=g, group_labels=[0])
    assert "partial_fit" not in str(info.value)
    est = paper(GroupDROClassifier, random_state=0, sampling="stream")
    est.partial_fit(X[:10], y[:10], groups=np.zeros(10, dtype=int), classes=[0, 1])
    with pytest.raises(ValueError, match="first call to partial_fit"):
        est.partial_fit(X, y, groups=g)


@pytest.mark.parametrize("Est", [GroupDROClassifier, GroupDRORegressor])
def test_fitting_without_groups_warns_once(Est):
    X, y, g = _two_groups()
    kw = {"classes": [0, 1]} if Est is GroupDROClassifier else {}
    with pytest.warns(UserWarning, match="without groups") as rec:
        paper(Est, random_state=0).fit(X, y)
    msgs = [str(w.message) for w in rec if "without groups" in str(w.message)]
    assert len(msgs) == 1 and "metadata routing" in msgs[0] and "groups" in msgs[0]
    est = paper(Est, random_state=0, sampling="stream")
    with pytest.warns(UserWarning, match="partial_fit was called without groups"):
        est.partial_fit(X[:40], y[:40], **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # only the first call warns
        est.partial_fit(X[40:], y[40:])
        paper(Est, random_state=0).fit(X, y, groups=g)  # with groups: no warning


@pytest.mark.parametrize("Est", [GroupDROClassifier, GroupDRORegressor])
def test_sample_weight_multiplies_the_loss(Est):
    """sample_weight multiplies each row's loss (issue 12): the prequential loss is sum w l, and
    group risks after fit are weighted means."""
    X, y, g = _two_groups(n=200)
    if Est is GroupDRORegressor:
        y = X[:, 0] + 0.1 * X[:, 2]
    w = np.random.default_rng(5).uniform(0, 2, 200)
    kw = {"classes": [0, 1]} if Est is GroupDROClassifier else {}
    est = paper(Est, random_state=0, sampling="stream")
    pred_dec = (est.partial_fit_decision_function if Est is GroupDROClassifier
                else est.partial_fit_predict)(X, y, groups=g, sample_weight=w, **kw)
    from skonline.losses import get_loss
    loss = get_loss(est.loss)
    target = np.where(y == 1, 1.0, -1.0) if Est is GroupDROClassifier else y
    per_row = loss.value(target, np.asarray(pred_dec, dtype=float))
    assert est.cumulative_loss_ == pytest.approx(np.sum(w * per_row), rel=1e-10)
    fitted = paper(Est, random_state=0).fit(X, y, groups=g, sample_weight=w)
    raw = fitted.decision_function(X) if Est is GroupDROClassifier else fitted.predict(X)
    vals = loss.value(target, raw)
    expected = [np.sum((w * vals)[g == k]) / np.sum(w[g == k]) for k in (0, 1)]
    np.testing.assert_allclose(fitted.group_risks_, expected, rtol=1e-10)
    # weights change the model; uniform weights do not
    same = paper(Est, random_state=0).fit(X, y, groups=g, sample_weight=np.ones(200))
    np.testing.assert_array_equal(same.coef_, paper(Est, random_state=0).fit(X, y, groups=g).coef_)
    assert not np.array_equal(fitted.coef_, same.coef_)
