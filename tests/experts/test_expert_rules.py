"""Expert-aggregation rules: exact agreement with plain-numpy references, the bounds of Theorems 1
to 4 of Lu & Zhang against every comparator with at most S - 1 switches, reductions, sleeping
experts, edge cases and bad input."""

import math
import pickle

import numpy as np
import pytest
from scipy.optimize import minimize

from skonline.evaluation import best_switching_sequence, path_length
from skonline.experts import (
    BOA,
    OCS,
    PCS,
    AdaHedge,
    ClippedHedge,
    FixedShare,
    Hedge,
    MLPoly,
    OCSPlus,
)

import _experts_reference as ref

ALL_RULES = [Hedge, FixedShare, ClippedHedge, PCS, OCS, OCSPlus, MLPoly, BOA, AdaHedge]
CLIPPED = [ClippedHedge, PCS, OCS, OCSPlus]


# ----------------------------------------------------------------------------- sequences
def _sequences(T=240, K=4, seed=0):
    """Random, abrupt switches, small losses, slowly moving, adversarial alternating leader."""
    rng = np.random.default_rng(seed)
    out = {"uniform": rng.uniform(size=(T, K))}
    best = np.repeat(rng.permutation(K)[:3], T // 3 + 1)[:T]
    mu = np.full((T, K), 0.5)
    mu[np.arange(T), best] = 0.2
    out["switching"] = (rng.uniform(size=(T, K)) < mu).astype(float)
    small = (rng.uniform(size=(T, K)) < 0.5).astype(float)
    small[np.arange(T), best] = (rng.uniform(size=T) < 0.02).astype(float)
    out["small_loss"] = small
    t = np.arange(T)[:, None]
    out["smooth"] = 0.5 + 0.4 * np.sin(2 * np.pi * t / (T / 2) + rng.uniform(0, 2 * np.pi, K))
    alt = np.zeros((T, K))
    alt[np.arange(T), (np.arange(T) // 2) % K] = 1.0  # the leader is hit every other pair of rounds
    alt[:, 0] = 0.5
    out["adversarial"] = alt
    return out


def _learner(W, L):
    return float(np.sum(W * L))


def _c(K, T, S):
    return S * math.log(K * T / S)


# ----------------------------------------------------------------------------- comparator DP
def test_switching_dp_matches_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(15):
        T, K = int(rng.integers(1, 8)), int(rng.integers(1, 4))
        L = rng.uniform(size=(T, K))
        for S in (1, 2, 3):
            loss, path = best_switching_sequence(L, S)
            assert loss == pytest.approx(ref.best_switching_bruteforce(L, S), abs=1e-12)
            assert np.sum(path[1:] != path[:-1]) <= S - 1
            assert L[np.arange(T), path].sum() == pytest.approx(loss, abs=1e-12)


# ----------------------------------------------------------------------------- exact references
@pytest.mark.parametrize("name", ["uniform", "switching", "smooth"])
def test_rules_equal_numpy_references(name):
    L = _sequences()[name]
    T, K = L.shape
    S = 3
    g = S / (T * K)
    kw = dict(horizon=T, n_segments=S)
    np.testing.assert_allclose(Hedge(eta=0.3, horizon=T).partial_fit_predict(L), ref.hedge(L, 0.3), atol=1e-12)
    np.testing.assert_allclose(
        ClippedHedge(eta=0.3, **kw).partial_fit_predict(L), ref.clipped(L, 0.3, g), atol=1e-12
    )
    np.testing.assert_allclose(
        PCS(eta=0.4, **kw).partial_fit_predict(L), ref.clipped(L, 0.4, g, prod=True), atol=1e-12
    )
    np.testing.assert_allclose(OCS(eta=2.0, **kw).partial_fit_predict(L), ref.ocs(L, 2.0, g), atol=1e-12)
    rule = OCSPlus(**kw)
    W_plus, starts = ref.ocs_plus(L, T, S)
    np.testing.assert_allclose(rule.partial_fit_predict(L), W_plus, atol=1e-12)
    assert rule.epoch_starts_.tolist() == starts
    np.testing.assert_allclose(
        FixedShare(eta=0.5, share_rate=0.02, horizon=T).partial_fit_predict(L), ref.fixed_share(L, 0.5, 0.02),
        atol=1e-12,
    )
    np.testing.assert_allclose(MLPoly().partial_fit_predict(L), ref.opera_mlpol(L), atol=1e-12)
    np.testing.assert_allclose(BOA().partial_fit_predict(L), ref.opera_boa(L), atol=1e-12)
    np.testing.assert_allclose(AdaHedge().partial_fit_predict(L), ref.adahedge(L), atol=1e-12)


def test_loss_bound_is_an_affine_map():
    """Same weights for losses in [lo, hi] with loss_bound=(lo, hi) as for the [0, 1] losses."""
    L = _sequences()["uniform"]
    for cls in ALL_RULES:
        a = cls().partial_fit_predict(L)
        b = cls(loss_bound=(-3.0, 5.0)).partial_fit_predict(-3.0 + 8.0 * L)
        np.testing.assert_allclose(a, b, atol=1e-12, err_msg=cls.__name__)


def test_default_tunings_follow_the_paper():
    T, K, S = 500, 5, 3
    L = np.random.default_rng(0).uniform(size=(T, K))
    c = _c(K, T, S)
    assert ClippedHedge(n_segments=S, horizon=T).fit(L).eta_ == pytest.approx(math.sqrt(c / T))
    assert PCS(n_segments=S, horizon=T).fit(L).eta_ == pytest.approx(min(0.5, math.sqrt(c / T)))
    assert PCS(n_segments=S, horizon=T, l2_bound=20.0).fit(L).eta_ == pytest.approx(min(0.5, math.sqrt(c / 20)))
    assert OCS(n_segments=S, horizon=T).fit(L).eta_ == pytest.approx(math.sqrt(c / T))
    assert OCS(n_segments=S, horizon=T, path_length_bound=4.0).fit(L).eta_ == pytest.approx(math.sqrt(c / 4))
    assert Hedge(horizon=T).fit(L).eta_ == pytest.approx(math.sqrt(8 * math.log(K) / T))
    r = ClippedHedge(n_segments=S, horizon=T).fit(L)
    assert r.min_weight_ == pytest.approx(S / (T * K))
    fs = FixedShare(n_segments=S, horizon=T).fit(L)
    a = S / T
    cfs = math.log(K) + (S - 1) * math.log((K - 1) / a) - (T - S) * math.log1p(-a)
    assert fs.share_rate_ == pytest.approx(a) and fs.eta_ == pytest.approx(math.sqrt(8 * cfs / T))


# ----------------------------------------------------------------------------- Lemma P / Prop. 1
def test_clipped_step_is_the_mirror_step_of_eq12():
    """One ClippedHedge update equals argmin_{clipped simplex} <w, eta l> + KL(w || w_t) (SLSQP)."""
    rng = np.random.default_rng(5)
    K, T, eta = 5, 40, 1.3
    L = rng.uniform(size=(T, K))
    W = ClippedHedge(eta=eta, horizon=T).partial_fit_predict(L)
    g = 1 / (T * K)
    for t in (0, 7, 20):
        wt, l = W[t], L[t]
        def obj(x):
            return x @ (eta * l) + np.sum(x * np.log(np.maximum(x, 1e-300) / wt)) - x.sum() + wt.sum()

        res = minimize(
            obj, np.full(K, 1 / K), method="SLSQP", bounds=[(g, 1)] * K,
            jac=lambda x: eta * l + np.log(np.maximum(x, 1e-300) / wt),
            constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1}], options={"ftol": 1e-15, "maxiter": 500},
        )
        np.testing.assert_allclose(W[t + 1], res.x, atol=1e-6)


# ----------------------------------------------------------------------------- reductions
def test_reductions_with_zero_floor():
    L = _sequences()["uniform"]
    T, K = L.shape
    np.testing.assert_allclose(
        ClippedHedge(eta=0.7, min_weight=0.0, horizon=T).partial_fit_predict(L),
        Hedge(eta=0.7, horizon=T).partial_fit_predict(L), atol=1e-13,
    )
    np.testing.assert_allclose(
        PCS(eta=0.4, min_weight=0.0, horizon=T).partial_fit_predict(L), ref.clipped(L, 0.4, 0.0, prod=True), atol=1e-13
    )
    # OCS with gamma = 0 is optimistic Hedge: w_t ∝ exp(-eta (sum_{s<t} l_s + l_{t-1}))
    eta = 1.7
    cum = np.vstack([np.zeros(K), np.cumsum(L, axis=0)[:-1]])
    prev = np.vstack([np.zeros(K), L[:-1]])
    x = -eta * (cum + prev)
    opt = np.exp(x - x.max(axis=1, keepdims=True))
    opt /= opt.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(OCS(eta=eta, min_weight=0.0, horizon=T).partial_fit_predict(L), opt, atol=1e-12)


def test_ocs_plus_epochs():
    T, K, S = 300, 4, 2
    c = _c(K, T, S)
    # constant losses: P_1 = ||l_1||_inf^2 <= 1, so eta_1^2 P_1 <= c and it never halves
    L = np.tile([0.2, 0.9, 0.5, 0.3], (T, 1))
    r = OCSPlus(n_segments=S, horizon=T).fit(L)
    assert r.epoch_ == 1 and r.epoch_starts_.tolist() == [1] and r.eta_ == pytest.approx(math.sqrt(c))
    # a rough sequence: eta_m = sqrt(c) / 2^(m-1), and OCS+ equals OCS(eta=sqrt(c)) up to the first halving
    L = _sequences(T=T, K=K)["uniform"]
    r = OCSPlus(n_segments=S, horizon=T)
    W = r.partial_fit_predict(L)
    assert r.epoch_ > 2
    assert r.eta_ == pytest.approx(math.sqrt(c) / 2 ** (r.epoch_ - 1))
    assert len(r.epoch_starts_) == r.epoch_
    first = r.epoch_starts_[1] - 1  # rounds before the first new epoch (0-based index of its first row)
    W_ocs = OCS(eta=math.sqrt(c), n_segments=S, horizon=T).partial_fit_predict(L)
    np.testing.assert_allclose(W[:first], W_ocs[:first], atol=1e-13)
    assert not np.allclose(W[first], W_ocs[first])


# ----------------------------------------------------------------------------- theorem bounds
def _check_bounds(L, S):
    """Theorems 1-4 against every comparator with <= S - 1 switches (the DP maximises the regret
    minus the comparator-dependent part of the bound). Returns the ratios regret / bound."""
    T, K = L.shape
    c = _c(K, T, S)
    kw = dict(n_segments=S, horizon=T)
    _, best = best_switching_sequence(L, S)
    best_loss = L[np.arange(T), best].sum()
    ratios = {}
    # Theorem 1: ClippedHedge, any eta > 0
    for eta in (math.sqrt(c / T), 0.05, 1.0):
        W = ClippedHedge(eta=eta, **kw).partial_fit_predict(L)
        tr = _learner(W, L) - best_loss
        bound = eta * T + c / eta + S
        assert tr <= bound + 1e-9, ("Thm 1", eta, tr, bound)
        ratios[("thm1", eta)] = tr / bound
    # Theorem 2: PCS, eta in (0, 1/2]; every comparator: DP on l + eta l^2
    for eta in (0.02, 0.1, 0.5):
        W = PCS(eta=eta, **kw).partial_fit_predict(L)
        worst = _learner(W, L) - best_switching_sequence(L + eta * L**2, S)[0]
        assert worst <= c / eta + 1.5 * S + 1e-9, ("Thm 2", eta, worst)
        ratios[("thm2", eta)] = worst / (c / eta + 1.5 * S)
    # Theorem 3: OCS, any eta > 0 (the oracle tuning, a small and a large one)
    P = path_length(L)
    for eta in (math.sqrt(c / max(P, 1e-12)), 0.3, 3.0):
        W = OCS(eta=eta, **kw).partial_fit_predict(L)
        tr = _learner(W, L) - best_loss
        bound = eta * P + c / eta + S
        assert tr <= bound + 1e-9, ("Thm 3", eta, tr, bound)
        ratios[("thm3", eta)] = tr / bound
    # Theorem 4 (explicit form from its proof, eq. 51): OCS+ with m* epochs
    r = OCSPlus(**kw)
    W = r.partial_fit_predict(L)
    m_star = int(np.sum(r.epoch_starts_ <= T))
    tr = _learner(W, L) - best_loss
    bound = 2 ** (m_star + 1) * math.sqrt(c) + S
    assert tr <= bound + 1e-9, ("Thm 4", tr, bound)
    if m_star > 1:
        assert tr <= 8 * math.sqrt(P * c) + S + 1e-9
    ratios["thm4"] = tr / bound
    return ratios


@pytest.mark.parametrize("seed", [0, 1])
def test_theorem_bounds_hold(seed):
    worst = {}
    for _name, L in _sequences(T=240, K=4, seed=seed).items():
        for S in (1, 2, 4):
            for k, v in _check_bounds(L, S).items():
                worst[k] = max(worst.get(k, -np.inf), v)
    # the bounds are not vacuous here: some configuration comes within a factor ~6 of each
    assert max(v for k, v in worst.items() if k[0] == "thm1") > 0.15
    assert max(v for k, v in worst.items() if k[0] == "thm2") > 0.15
    assert max(v for k, v in worst.items() if k[0] == "thm3") > 0.15


def test_theorem_bounds_random_small_instances():
    rng = np.random.default_rng(7)
    for _ in range(12):
        T, K = int(rng.integers(5, 120)), int(rng.integers(2, 7))
        L = rng.uniform(size=(T, K)) ** rng.uniform(0.2, 4.0)
        S = int(rng.integers(1, min(T, 6) + 1))
        _check_bounds(L, S)


def test_the_bound_check_can_fail():
    """Hedge (no clipping) breaks Theorem 1's bound on an abrupt switch: the check has teeth."""
    T, K, S = 300, 2, 2
    L = np.vstack([np.tile([0.0, 1.0], (T // 2, 1)), np.tile([1.0, 0.0], (T // 2, 1))])
    c = _c(K, T, S)
    eta = math.sqrt(c / T)
    tr = _learner(Hedge(eta=eta, horizon=T).partial_fit_predict(L), L) - best_switching_sequence(L, S)[0]
    assert tr > eta * T + c / eta + S
    tr_clip = _learner(ClippedHedge(eta=eta, n_segments=S, horizon=T).partial_fit_predict(L), L)
    assert tr_clip - best_switching_sequence(L, S)[0] <= eta * T + c / eta + S


def test_fixed_share_and_hedge_bounds():
    """Fixed Share is a Bayesian mixture over switching sequences: for a comparator with m switches,
    TR <= (log K + m log((K-1)/alpha) + (T-1-m) log(1/(1-alpha))) / eta + eta T / 8."""
    for name, L in _sequences(T=240, K=4).items():
        T, K = L.shape
        for S in (1, 2, 4):
            for eta, alpha in ((0.3, 0.01), (1.0, 0.05), (3.0, 0.2)):
                W = FixedShare(eta=eta, share_rate=alpha, horizon=T).partial_fit_predict(L)
                lw = _learner(W, L)
                for m in range(S):
                    cost = math.log(K) + m * math.log((K - 1) / alpha) - (T - 1 - m) * math.log1p(-alpha)
                    tr = lw - best_switching_sequence(L, m + 1)[0]
                    assert tr <= cost / eta + eta * T / 8 + 1e-9, (name, S, eta, alpha, m)
            W = Hedge(horizon=T).partial_fit_predict(L)
            assert _learner(W, L) - L.sum(axis=0).min() <= math.sqrt(T * math.log(K) / 2) + 1e-9


def test_adahedge_bound():
    for _name, L in _sequences(T=240, K=4).items():
        T, K = L.shape
        r = AdaHedge()
        W = r.partial_fit_predict(L)
        regret = _learner(W, L) - L.sum(axis=0).min()
        assert regret <= 2 * r.mixability_gap_ + 1e-9
        assert regret <= math.sqrt(T * math.log(K)) + 4 / 3 * math.log(K) + 2


def test_interval_bounds_with_general_floor():
    """Spec Sec. 3.5: for every interval I and expert i, with floor beta / K,
    ClippedHedge: regret_I <= eta |I| + log(K / beta) / eta + beta |I|."""
    rng = np.random.default_rng(3)
    T, K = 200, 5
    L = _sequences(T=T, K=K)["switching"]
    for beta in (0.01, 0.1, 0.5):
        eta = 0.4
        W = ClippedHedge(eta=eta, min_weight=beta / K, horizon=T).partial_fit_predict(L)
        lh = np.sum(W * L, axis=1)
        for _ in range(200):
            p, q = sorted(rng.integers(0, T, 2))
            q += 1
            reg = (lh[p:q, None] - L[p:q]).sum(axis=0).max()
            assert reg <= eta * (q - p) + math.log(K / beta) / eta + beta * (q - p) + 1e-9


def test_doubling_horizon_bound():
    """horizon=None: on each doubling period (T_{k-1}, T_k] the period's Theorem 1 bound holds, so
    the tracking regret is at most the sum of the per-period bounds."""
    rng = np.random.default_rng(11)
    K, S, T = 3, 2, 500
    p = np.where(np.arange(T)[:, None] < 260, [0.2, 0.6, 0.6], [0.6, 0.6, 0.2])
    L = (rng.uniform(size=(T, K)) < p).astype(float)
    W = ClippedHedge(n_segments=S).partial_fit_predict(L)
    bound, lo = 0.0, 0
    Tk = S
    while lo < T:
        hi = min(Tk, T)
        c = S * math.log(K * Tk / S)
        eta = math.sqrt(c / Tk)
        n = hi - lo
        # every comparator restricted to the period has <= S segments
        bound += eta * n + c / eta + S * n / Tk
        lo, Tk = hi, 2 * Tk
    assert _learner(W, L) - best_switching_sequence(L, S)[0] <= bound


# ----------------------------------------------------------------------------- invariants
@pytest.mark.parametrize("cls", CLIPPED)
def test_weights_stay_in_the_clipped_simplex(cls):
    rng = np.random.default_rng(2)
    T, K = 400, 6
    cases = [
        rng.uniform(size=(T, K)),
        np.zeros((T, K)),
        np.ones((T, K)),
        np.where(rng.uniform(size=(T, K)) < 0.5, 0.0, 1.0),
    ]
    for L in cases:
        for params in ({}, {"n_segments": 3, "horizon": T}, {"horizon": 10**8, "n_segments": 1}):
            if cls is OCS:
                params = {**params, "eta": 1e3}
            r = cls(**params)
            W = r.partial_fit_predict(L)
            g = (params.get("n_segments", 1)) / (params.get("horizon", T) * K) if "horizon" in params else None
            assert np.all(np.abs(W.sum(axis=1) - 1) <= 1e-12)
            if g is not None:
                assert W.min() >= g - 1e-15
            assert r.weights_.min() >= r.min_weight_ - 1e-15


def test_k_equals_one_and_s_equals_t():
    L = np.random.default_rng(0).uniform(size=(50, 1))
    for cls in ALL_RULES:
        r = cls()
        W = r.partial_fit_predict(L)
        np.testing.assert_array_equal(W, 1.0)
        assert r.cumulative_loss_ == pytest.approx(L.sum())
        assert np.sum(W * L) - best_switching_sequence(L, 3)[0] == pytest.approx(0.0, abs=1e-12)
    L = np.random.default_rng(1).uniform(size=(20, 4))
    for cls in CLIPPED:
        W = cls(n_segments=20, horizon=20).partial_fit_predict(L)
        np.testing.assert_allclose(W, 0.25, rtol=1e-15)


def test_horizon_exceeded_warns_and_continues():
    L = np.random.default_rng(0).uniform(size=(30, 3))
    r = PCS(horizon=20)
    with pytest.warns(UserWarning, match="more rounds than horizon"):
        r.fit(L)
    assert r.n_samples_seen_ == 30


def test_eta_checks():
    L = np.random.default_rng(0).uniform(size=(10, 3))
    with pytest.raises(ValueError, match="eta"):
        PCS(eta=1.0).fit(L)
    with pytest.warns(UserWarning, match="eta <= 1/2"):
        PCS(eta=0.8).fit(L)
    with pytest.raises(ValueError, match="n_segments"):
        ClippedHedge(n_segments=5, horizon=3).fit(L)
    with pytest.raises(ValueError, match="min_weight"):
        ClippedHedge(min_weight=0.5).fit(L)


# ----------------------------------------------------------------------------- sleeping experts
@pytest.mark.parametrize("cls", ALL_RULES)
def test_sleeping_experts(cls):
    rng = np.random.default_rng(4)
    T, K = 120, 4
    L = rng.uniform(size=(T, K))
    asleep = rng.uniform(size=(T, K)) < 0.3
    asleep[asleep.all(axis=1), 0] = False
    Ls = np.where(asleep, np.nan, L)
    r = cls()
    W = r.partial_fit_predict(Ls)
    # asleep experts get no weight; the played weights are a distribution over the awake ones
    assert np.all(W[asleep] == 0)
    np.testing.assert_allclose(W.sum(axis=1), 1, atol=1e-12)
    lh = np.nansum(W * Ls, axis=1)
    assert r.cumulative_loss_ == pytest.approx(lh.sum(), rel=1e-12)
    np.testing.assert_allclose(r.expert_cumulative_losses_, np.nansum(Ls, axis=0), rtol=1e-12)
    # the reduction: same as the rule run on the losses with asleep experts charged l_hat,
    # the played weights being the full weights renormalised over the awake experts
    Li = np.where(asleep, lh[:, None], L)
    Wi = cls().partial_fit_predict(Li)
    Wr = np.where(asleep, 0.0, Wi)
    s = Wr.sum(axis=1, keepdims=True)
    if cls is MLPoly:  # opera: uniform over the awake experts when none has a positive weight
        n_awake = (~asleep).sum(axis=1, keepdims=True)
        Wr = np.where(s > 0, Wr / np.where(s > 0, s, 1), (~asleep) / n_awake)
    else:
        Wr = Wr / s
    np.testing.assert_allclose(W, Wr, atol=1e-12)


def test_sleeping_pcs_bound_on_imputed_losses():
    """Theorem 2 holds for the imputed loss matrix (sleeping regret)."""
    rng = np.random.default_rng(9)
    T, K, S, eta = 200, 4, 2, 0.3
    L = _sequences(T=T, K=K)["small_loss"]
    asleep = rng.uniform(size=(T, K)) < 0.25
    asleep[:, 1] = False
    Ls = np.where(asleep, np.nan, L)
    W = PCS(eta=eta, n_segments=S, horizon=T).partial_fit_predict(Ls)
    lh = np.nansum(W * Ls, axis=1)
    Li = np.where(asleep, lh[:, None], L)
    worst = lh.sum() - best_switching_sequence(Li + eta * Li**2, S)[0]
    assert worst <= _c(K, T, S) / eta + 1.5 * S


def test_opera_mlpol_with_sleeping_experts():
    rng = np.random.default_rng(6)
    L = rng.uniform(size=(150, 5))
    L[rng.uniform(size=L.shape) < 0.3] = np.nan
    L[np.isnan(L).all(axis=1), 2] = 0.5
    np.testing.assert_allclose(MLPoly().partial_fit_predict(L), ref.opera_mlpol(L), atol=1e-12)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("cls", ALL_RULES)
def test_bad_input_is_rejected_and_changes_nothing(cls):
    rng = np.random.default_rng(0)
    L = rng.uniform(size=(30, 4))
    r = cls().partial_fit(L[:10])
    before = pickle.dumps(r)
    bad = L[10:].copy()
    bad[5, 2] = 1.5
    with pytest.raises(ValueError, match=r"outside the declared range \(0, 1\)"):
        r.partial_fit(bad)
    with pytest.raises(ValueError, match="expecting 4 features"):
        r.partial_fit(L[10:, :3])
    nan_row = L[10:].copy()
    nan_row[2] = np.nan
    with pytest.raises(ValueError, match="every expert is asleep"):
        r.partial_fit(nan_row)
    inf = L[10:].copy()
    inf[0, 0] = np.inf
    with pytest.raises(ValueError):
        r.partial_fit(inf)
    assert pickle.dumps(r) == before
    # and learning goes on as if nothing happened
    a = pickle.loads(before).partial_fit_predict(L[10:])
    np.testing.assert_array_equal(r.partial_fit_predict(L[10:]), a)


def test_predict_aggregates_expert_predictions():
    L = np.tile([0.9, 0.1, 0.5], (50, 1))
    r = Hedge().fit(L)
    P = np.array([[1.0, 2.0, 3.0], [np.nan, 2.0, 4.0]])
    w = r.weights_
    np.testing.assert_allclose(r.predict(P)[0], P[0] @ w)
    np.testing.assert_allclose(r.predict(P)[1], (2 * w[1] + 4 * w[2]) / (w[1] + w[2]))
