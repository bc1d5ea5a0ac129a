"""Behaviour of KernelSelectionClassifier / KernelSelectionRegressor (OKS, OKS++, IOKS)."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from skonline.kernel_selection import KernelSelectionClassifier, KernelSelectionRegressor
from skonline.kernel_selection._core import ioks_constants

from _paper import paper

ALGOS = ["oks", "oks++", "ioks"]
BACKENDS = [None, 64]


def _c5_data(seed, T):
    """The spec's C5 problem: a sum of 30 Gaussian bumps of bandwidth 0.5 in [-1, 1]^3."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (T, 3))
    c = rng.uniform(-1, 1, (30, 3))
    a = rng.standard_normal(30)
    F = (a * np.exp(-((X[:, None, :] - c[None]) ** 2).sum(-1) / (2 * 0.5**2))).sum(1)
    y_clf = np.where(F >= np.median(F), 1, -1)
    y_reg = (F - F.min()) / (F.max() - F.min())
    return X, y_clf, y_reg


def _horizon(algo, T):
    return None if algo == "oks++" else T


# ------------------------------------------------------------------------- concentration (C5)
@pytest.mark.parametrize("n_components, T", [(None, 4000), (400, 10000)])
def test_okspp_concentrates_on_the_right_bandwidth(n_components, T):
    amr = {a: [] for a in ALGOS}
    al = {"oks++": [], "ioks": []}
    hits = 0
    for seed in (100, 101, 102):
        X, yc, yr = _c5_data(seed, T)
        for algo in ALGOS:
            clf = paper(
                KernelSelectionClassifier, algo, n_components=n_components, horizon=_horizon(algo, T), random_state=seed
            ).fit(X, yc)
            amr[algo].append(clf.mistake_rate_)
            assert clf.mistake_rate_ < 0.30
            if algo == "oks++":
                hits += clf.selected_sigma_ == 0.5 and clf.q_.max() > 0.9
        for algo in al:
            reg = paper(
                KernelSelectionRegressor, algo, n_components=n_components, horizon=_horizon(algo, T), random_state=seed
            ).fit(X, yr)
            al[algo].append(reg.average_loss_)
    assert hits >= 2
    assert np.mean(amr["oks++"]) < min(np.mean(amr["oks"]), np.mean(amr["ioks"]))
    assert np.mean(al["oks++"]) < np.mean(al["ioks"])


# ------------------------------------------------------------------------- invariants (C4)
def _exact_norms(est):
    out = []
    for k, s in enumerate(est.sigmas_):
        V, a = est.support_vectors(kernel=k)
        if len(a) == 0:
            out.append(0.0)
            continue
        D2 = ((V[:, None, :] - V[None]) ** 2).sum(-1)
        out.append(float(np.sqrt(max(a @ np.exp(-D2 / (2 * s * s)) @ a, 0.0))))
    return np.array(out)


@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("n_components", BACKENDS)
@pytest.mark.parametrize("task", ["clf", "reg"])
def test_runtime_invariants(algo, n_components, task):
    X, yc, yr = _c5_data(7, 240)
    if task == "clf":
        est = paper(KernelSelectionClassifier, algo, n_components=n_components, horizon=_horizon(algo, 240),
                    radius=15.0 if algo == "oks" else "auto", random_state=0)
        y, kw = yc, {"classes": [-1, 1]}
    else:
        est = paper(KernelSelectionRegressor, algo, n_components=n_components, horizon=_horizon(algo, 240),
                    radius=1.0 if algo == "oks" else "auto", random_state=0)
        y, kw = yr, {}
    U = 15.0 if task == "clf" else 1.0
    K = len(est.sigmas)
    for t in range(240):
        est.partial_fit(X[t : t + 1], y[t : t + 1], **(kw if t == 0 else {}))
        p, q = est.p_, est.q_
        assert abs(p.sum() - 1) < 1e-12 and abs(q.sum() - 1) < 1e-12
        assert np.all(p >= est.delta_ / K * (1 - 1e-12))
        if n_components is None:
            assert np.all(est.norms_ <= U * (1 + 1e-9))
            if t % 60 == 59:  # the tracked norm is the exact RKHS norm
                np.testing.assert_allclose(est.norms_, _exact_norms(est), rtol=1e-8, atol=1e-10)
        else:
            assert np.all(np.abs(est.coef_) <= U / np.sqrt(n_components) * (1 + 1e-15))
    if algo == "ioks":
        # Theorem 4.1's schedule: eta at most e^(1/(2 ln 2)) eta_1 and < (3/4) log2 T increases
        c = est._constants()
        _, eta0, ups = ioks_constants(240.0, K, c["radius"], c["G1"], 1.0, 8.0)
        n_incr = np.round(np.log(est.eta_ / eta0) / np.log(ups))
        assert np.all(n_incr < 0.75 * np.log2(240))
        assert np.all(est.eta_ <= np.exp(1 / (2 * np.log(2))) * eta0 * (1 + 1e-12))


# ------------------------------------------------------------------------- streaming
@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("n_components", BACKENDS)
@pytest.mark.parametrize("horizon", [None, 300])
def test_chunk_invariance_across_doublings(algo, n_components, horizon):
    """fit == partial_fit over chunks, past several doublings of the horizon, random draws included."""
    X, yc, _ = _c5_data(3, 700)
    ref = paper(KernelSelectionClassifier, algo, n_components=n_components, horizon=horizon, random_state=5)
    pred_ref = clone(ref).partial_fit_predict(X, yc, classes=[-1, 1])
    full = clone(ref).fit(X, yc)
    assert full.horizon_ == (None if algo == "oks++" else (1024 if horizon is None else 1200))
    est = clone(ref)
    preds = []
    for a, b in [(0, 1), (1, 127), (127, 129), (129, 400), (400, 401), (401, 700)]:
        preds.append(est.partial_fit_predict(X[a:b], yc[a:b], **({"classes": [-1, 1]} if a == 0 else {})))
        if a == 127:  # pickle mid-stream, continue from the copy
            est = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(np.concatenate(preds), pred_ref)
    for k in vars(full):
        if k.endswith("_") and k != "classes_":
            va, vb = getattr(full, k), getattr(est, k)
            if isinstance(va, np.ndarray):
                np.testing.assert_array_equal(va, vb, err_msg=k)
    assert full._rng_.bit_generator.state == est._rng_.bit_generator.state


def test_sampling_stream_does_not_depend_on_n_components():
    X, yc, _ = _c5_data(4, 300)
    states = [
        paper(KernelSelectionClassifier, n_components=D, random_state=3).fit(X, yc)._rng_.bit_generator.state
        for D in (8, 64, 100)
    ]
    assert states[0] == states[1] == states[2]


@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("n_components", BACKENDS)
def test_sparse_input_equals_dense(algo, n_components):
    X, yc, _ = _c5_data(5, 300)
    X[np.abs(X) < 0.4] = 0.0
    a = paper(KernelSelectionClassifier, algo, n_components=n_components, random_state=0)
    pa = clone(a).partial_fit_decision_function(X, yc, classes=[-1, 1])
    pb = clone(a).partial_fit_decision_function(sp.csr_matrix(X), yc, classes=[-1, 1])
    np.testing.assert_allclose(pb, pa, rtol=1e-12, atol=1e-13)
    fa, fb = clone(a).fit(X, yc), clone(a).fit(sp.csr_matrix(X), yc)
    np.testing.assert_allclose(fb.decision_function(sp.csr_matrix(X)), fa.decision_function(X), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n_components", BACKENDS)
def test_prequential_prediction_is_the_hypothesis_value(n_components):
    """With one kernel, the pass's prediction for a row equals decision_function before learning it."""
    X, yc, yr = _c5_data(6, 200)
    for est, y in [(paper(KernelSelectionClassifier, sigmas=(0.7,), n_components=n_components), yc),
                   (paper(KernelSelectionRegressor, sigmas=(0.7,), n_components=n_components), yr)]:
        est.set_params(random_state=0).fit(X[:150], y[:150])
        for t in range(150, 160):
            before = (est.decision_function(X[t : t + 1]) if hasattr(est, "decision_function")
                      else est.predict(X[t : t + 1]))
            raw = (est.partial_fit_decision_function(X[t : t + 1], y[t : t + 1])
                   if hasattr(est, "decision_function") else est.partial_fit_predict(X[t : t + 1], y[t : t + 1]))
            np.testing.assert_allclose(raw, before, rtol=1e-12, atol=1e-14)


def test_rf_decision_matches_explicit_features():
    X, yc, _ = _c5_data(8, 400)
    clf = paper(KernelSelectionClassifier, n_components=50, random_state=0, aggregation="mixture").fit(X, yc)
    maps = clf.random_features_
    f = sum(clf.q_[k] * maps.transform_kernel(X, k) @ clf.coef_[k] for k in range(6))
    np.testing.assert_allclose(clf.decision_function(X), f, rtol=1e-10, atol=1e-12)
    clf.set_params(aggregation="best")
    k = clf.selected_kernel_
    np.testing.assert_allclose(clf.decision_function(X), maps.transform_kernel(X, k) @ clf.coef_[k], rtol=1e-10)


def test_exact_decision_matches_support_vectors():
    X, yc, _ = _c5_data(9, 300)
    clf = paper(KernelSelectionClassifier, random_state=0).fit(X, yc)
    V, a = clf.support_vectors()
    s = clf.selected_sigma_
    f = np.exp(-((X[:, None] - V[None]) ** 2).sum(-1) / (2 * s * s)) @ a
    np.testing.assert_allclose(clf.decision_function(X), f, rtol=1e-10, atol=1e-12)
    assert clf.n_support_.sum() <= 300


def test_loss_conventions():
    """The paper's square loss (f - y)^2 is what is accumulated; a decision of exactly 0 predicts
    classes_[0] (scikit-learn's rule, shared by every skonline classifier)."""
    X, yc, yr = _c5_data(10, 300)
    reg = paper(KernelSelectionRegressor, random_state=0)
    pred = reg.partial_fit_predict(X, yr)
    np.testing.assert_allclose(reg.cumulative_loss_, np.sum((pred - yr) ** 2), rtol=1e-12)
    reg = paper(KernelSelectionRegressor, "ioks", loss="absolute_error", random_state=0)
    pred = reg.partial_fit_predict(X, yr)
    np.testing.assert_allclose(reg.average_loss_, np.mean(np.abs(pred - yr)), rtol=1e-12)
    clf = paper(KernelSelectionClassifier, random_state=0)
    dec = clf.partial_fit_decision_function(X, yc, classes=[-1, 1])
    assert dec[0] == 0.0  # no support vector yet: f = 0, predicted classes_[0] = -1
    np.testing.assert_allclose(clf.cumulative_loss_, np.sum(np.logaddexp(0, -yc * dec)), rtol=1e-12)
    assert clf.n_mistakes_ == np.sum(np.where(dec > 0, 1, -1) != yc)


def test_exploration_constant_knob():
    X, yc, _ = _c5_data(11, 2000)
    theory = paper(KernelSelectionClassifier, n_components=64, random_state=0).fit(X, yc)
    code = paper(KernelSelectionClassifier, n_components=64, random_state=0, exploration_constant=1.0).fit(X, yc)
    # a = (G C0)^(1/3) (U K)^(2/3) = 90^(2/3) ~ 20.1 versus 1: delta_t is ~20 times smaller
    a = 90 ** (2 / 3)
    C = theory._C_[0]
    assert theory.delta_ == pytest.approx(a / (2 * max(a, 2 * C ** (1 / 3))), rel=1e-12)
    C1 = code._C_[0]
    assert code.delta_ == pytest.approx(1 / (4 * C1 ** (1 / 3)), rel=1e-12)
    assert code.delta_ < theory.delta_ / 5


def test_multiclass_one_vs_rest():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (1500, 2))
    y = np.digitize(X[:, 0] + 0.5 * np.sin(3 * X[:, 1]), [-0.4, 0.4])
    clf = paper(KernelSelectionClassifier, n_components=64, random_state=0).fit(X, y)
    assert clf.q_.shape == (3, 6) and clf.selected_kernel_.shape == (3,)
    np.testing.assert_allclose(clf.q_.sum(axis=1), 1.0)
    assert clf.decision_function(X).shape == (1500, 3)
    assert clf.predict_proba(X).shape == (1500, 3)
    assert clf.mistake_rate_ < 0.25 and clf.score(X, y) > 0.8


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared_hinge"])
def test_ioks_never_nan_with_accepted_losses(loss):
    """Losses far above loss_bound = 1 (U = 15, adversarial labels): finite distributions."""
    rng = np.random.default_rng(12)
    X = rng.uniform(-1, 1, (1500, 2))
    y = np.where(rng.random(1500) < 0.5, 1, -1)
    y[750:] = -np.sign(X[750:, 0] + 1e-9).astype(int)  # flips the concept half-way
    for D in BACKENDS:
        clf = paper(KernelSelectionClassifier, "ioks", loss=loss, n_components=D, radius=15.0, horizon=1500,
                    random_state=0).fit(X, y)
        assert np.all(np.isfinite(clf.q_)) and np.all(clf.q_ > 0) and abs(clf.q_.sum() - 1) < 1e-12
        assert np.all(np.isfinite(clf.eta_))
    reg = paper(KernelSelectionRegressor, "ioks", loss="squared", n_components=32, random_state=0)
    with pytest.warns(UserWarning, match="exceed the radius"):
        reg.fit(X, 5.0 * X[:, 0])
    assert np.all(np.isfinite(reg.q_))


# ------------------------------------------------------------------------- parameter errors
@pytest.mark.parametrize(
    "est, match",
    [
        (KernelSelectionClassifier("oks++", loss="hinge"), "not smooth"),
        (KernelSelectionRegressor("oks++", loss="absolute"), "not smooth"),
        (KernelSelectionClassifier("ioks", radius=None), "radius=None"),
        (KernelSelectionClassifier(sigmas=(1.0, -2.0)), "sigmas"),
        (KernelSelectionClassifier(sigmas=()), "sigmas"),
    ],
)
def test_bad_parameters_raise_before_any_state(est, match):
    X, yc, yr = _c5_data(13, 20)
    y = yr if isinstance(est, KernelSelectionRegressor) else yc
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)
    assert not [k for k in vars(est) if k.endswith("_")]


def test_oks_divergence_is_reported_not_stored():
    """OKS has no projection (P11): a non-finite prediction rejects the chunk, state unchanged."""
    X = np.zeros((400, 1))
    y = np.full(400, 1e300)
    reg = paper(KernelSelectionRegressor, "oks", sigmas=(1.0,), horizon=400, random_state=0)
    reg.partial_fit(X[:1], np.ones(1))
    before = pickle.dumps(reg)
    with pytest.raises(FloatingPointError, match="no projection"):
        reg.partial_fit(X, y)
    assert pickle.dumps(reg) == before


@pytest.mark.parametrize("sparse_input", [False, True])
def test_chunk_invariance_with_precomputed_projections(sparse_input):
    """Many features: the shared-base projections are computed by BLAS in blocks aligned on the
    stream positions; any chunking still gives the same result bit for bit."""
    rng = np.random.default_rng(21)
    X = rng.uniform(-1, 1, (900, 64))
    X[rng.random(X.shape) < 0.5] = 0.0
    y = np.where(X[:, :3].sum(1) > 0, 1, -1)
    Xin = sp.csr_matrix(X) if sparse_input else X
    ref = paper(KernelSelectionClassifier, n_components=40, random_state=2)
    full = clone(ref).fit(Xin, y)
    pred_ref = clone(ref).partial_fit_decision_function(Xin, y, classes=[-1, 1])
    for cuts in ([0, 1, 255, 257, 600, 900], [0, 300, 301, 900], [0, 900]):
        est = clone(ref)
        preds = [est.partial_fit_decision_function(Xin[a:b], y[a:b], **({"classes": [-1, 1]} if a == 0 else {}))
                 for a, b in zip(cuts[:-1], cuts[1:])]
        np.testing.assert_array_equal(np.concatenate(preds), pred_ref)
        np.testing.assert_array_equal(est.coef_, full.coef_)
        np.testing.assert_array_equal(est.q_, full.q_)
    dense = clone(ref).partial_fit_decision_function(X, y, classes=[-1, 1])
    # different summation orders (scipy per row, BLAS blocks) only: rounding-level differences
    np.testing.assert_allclose(pred_ref, dense, rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------- budget (issue 11)
@pytest.mark.parametrize("algo", ["oks", "oks++", "ioks"])
def test_exact_support_budget_keeps_memory_flat(algo):
    """Exact expansions stored every support row (10.8 s per 10k rows at 160k rows): with
    max_support the store stops at the budget, rounds past it make no new support vector."""
    rng = np.random.default_rng(21)
    n = 3000
    X = rng.uniform(-1, 1, (n, 4))
    y = np.where(np.sin(3 * X[:, 0]) + X[:, 1] > 0, 1, -1)
    kw = {"horizon": n} if algo != "oks++" else {}
    est = paper(KernelSelectionClassifier, algo, max_support=50, random_state=0, **kw)
    with pytest.warns(UserWarning, match="max_support=50"):
        est.partial_fit(X[:300], y[:300], classes=[-1, 1])
    shapes = {k: v.shape for k, v in vars(est).items() if isinstance(v, np.ndarray)}
    assert est._store_.shape[0] == 50
    for s in range(300, n, 500):
        est.partial_fit(X[s : s + 500], y[s : s + 500])
        assert {k: v.shape for k, v in vars(est).items() if isinstance(v, np.ndarray)} == shapes
    assert int(est._nstore_[0]) == 50 and est.n_dropped_steps_ > 0
    assert np.all(est.n_support_ <= 50)
    with pytest.warns(UserWarning, match="max_support=50"):
        ref = paper(KernelSelectionClassifier, algo, max_support=50, random_state=0, **kw).fit(X, y)
    np.testing.assert_array_equal(ref.q_, est.q_)
    np.testing.assert_array_equal(ref.decision_function(X[:100]), est.decision_function(X[:100]))
    # below the budget nothing changes
    a = paper(KernelSelectionClassifier, algo, max_support=None, random_state=0, **kw).fit(X[:500], y[:500])
    b = paper(KernelSelectionClassifier, algo, random_state=0, **kw).fit(X[:500], y[:500])
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_exact_pickle_holds_only_the_used_support():
    rng = np.random.default_rng(22)
    X = rng.uniform(-1, 1, (700, 4))
    y = np.where(X[:, 0] > 0, 1, -1)
    est = paper(KernelSelectionClassifier, "oks++", random_state=0).fit(X[:520], y[:520])
    assert est._store_.shape[0] == 1024  # capacity: a power of two above the rows seen
    n, m = int(est._nstore_[0]), int(est.n_support_.max())
    blob = pickle.dumps(est)
    assert len(blob) < 8 * n * 4 + 16 * est.n_support_.size * m + 20_000
    back = pickle.loads(blob)
    assert back._store_.shape == est._store_.shape
    np.testing.assert_array_equal(back.partial_fit_decision_function(X[520:], y[520:]),
                                  est.partial_fit_decision_function(X[520:], y[520:]))


def test_loss_names_are_scikit_learns_with_old_aliases():
    """Default loss names are scikit-learn's; the earlier names are aliases giving the same model."""
    assert paper(KernelSelectionClassifier).loss == "log_loss"
    assert paper(KernelSelectionRegressor).loss == "squared_error"
    X, yc, yr = _c5_data(10, 120)
    for Est, pairs, y, kw in [
        (KernelSelectionClassifier, [("log_loss", "logistic")], yc, {"classes": [-1, 1]}),
        (KernelSelectionRegressor, [("squared_error", "squared"), ("absolute_error", "absolute")], yr, {}),
    ]:
        for new, old in pairs:
            a = paper(Est, "ioks", loss=new, random_state=0)
            b = paper(Est, "ioks", loss=old, random_state=0)
            np.testing.assert_array_equal(a.partial_fit_predict(X, y, **kw), b.partial_fit_predict(X, y, **kw))
            assert a.cumulative_loss_ == b.cumulative_loss_


@pytest.mark.parametrize("algorithm", ["oks", "oks++", "ioks"])
@pytest.mark.parametrize("n_components", [None, 16])
def test_sample_weight_multiplies_the_loss(algorithm, n_components):
    """A weight multiplies the row's loss and derivative (issue 12)."""
    X, yc, yr = _c5_data(10, 80)
    w = np.random.default_rng(3).uniform(0, 2, 80)
    reg = paper(KernelSelectionRegressor, algorithm, n_components=n_components, radius=5.0, random_state=0)
    pred = reg.partial_fit_predict(X, yr, sample_weight=w)
    np.testing.assert_allclose(reg.cumulative_loss_, np.sum(w * (pred - yr) ** 2), rtol=1e-12)
    # weight 0: the hypotheses and the loss estimates do not move
    est = paper(KernelSelectionClassifier, algorithm, n_components=n_components, random_state=0)
    est.partial_fit(X[:40], yc[:40], classes=[-1, 1])
    before = est.decision_function(X), est.loss_estimates_.copy(), est.cumulative_loss_
    est.partial_fit(X[40:], yc[40:], sample_weight=np.zeros(40))
    np.testing.assert_array_equal(est.decision_function(X), before[0])
    np.testing.assert_array_equal(est.loss_estimates_, before[1])
    assert est.cumulative_loss_ == before[2]



@pytest.mark.parametrize("n_components", [None, 8])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_public_state_is_attributes_and_held_arrays_keep_their_values(n_components, n_classes):
    """Documented state is plain attributes in the documented shape; a call replaces them, so an
    array taken from the estimator (``qs.append(est.q_)``) keeps its values (issue 13)."""
    X, _, yr = _c5_data(11, 90)
    y = np.minimum((yr * n_classes).astype(int), n_classes - 1)
    est = paper(KernelSelectionClassifier, "oks++", n_components=n_components, random_state=0)
    est.partial_fit(X[:30], y[:30], classes=np.arange(n_classes))
    names = ["q_", "p_", "loss_estimates_", "kernel_counts_", "step_sizes_", "sigmas_",
             "coef_" if n_components else "n_support_"]
    assert set(names) <= set(vars(est))
    K = est.sigmas_.shape[0]
    shape = (K,) if n_classes == 2 else (n_classes, K)
    assert all(getattr(est, n).shape[: len(shape)] == shape for n in names if n != "sigmas_")
    held = {n: getattr(est, n) for n in names}
    saved = {n: a.copy() for n, a in held.items()}
    est.partial_fit(X[30:], y[30:])
    for n in names:
        np.testing.assert_array_equal(held[n], saved[n], err_msg=n)
    assert not np.array_equal(est.loss_estimates_, saved["loss_estimates_"])
    with pytest.raises(AttributeError, match="exists only"):
        getattr(est, "n_support_" if n_components else "coef_")
