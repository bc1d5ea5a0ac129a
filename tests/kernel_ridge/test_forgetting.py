"""The forgetting factor of the AWV family (AWVRegressor, PKAWVRegressor, PKAWVClassifier)."""

import hashlib
import json
import pickle
from pathlib import Path

import numba
import numpy as np
import pytest

from skonline.kernel_approximation import TaylorFeatures
from skonline.kernel_ridge import AWVRegressor, PKAWVClassifier, PKAWVRegressor

GOLDEN = Path(__file__).with_name("awv_golden_e2e17c1.json")


def _h(a):
    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()


#: the configurations of the golden file (every other parameter at its value of commit e2e17c1)
_GOLDEN_CONFIGS = {
    "awv": (AWVRegressor, dict(alpha=0.7, algorithm="awv", standardize=True), "y"),
    "awv_ridge_raw": (AWVRegressor, dict(alpha=2.0, algorithm="ridge", standardize=False), "y"),
    "pk_taylor": (PKAWVRegressor, dict(features="taylor", alpha=0.5, degree=3, sigma="auto", standardize=True), "y"),
    "pk_nystrom": (PKAWVRegressor, dict(features="nystrom", alpha=0.5, sigma=1.0, mu=0.1, beta=1.0, eps=0.5,
                                        max_components=2000, standardize=True, random_state=3), "y"),
    "pkc_taylor": (PKAWVClassifier, dict(features="taylor", alpha=1.0, degree=2, sigma="auto", standardize=True),
                   "yc"),
    "pkc_nystrom": (PKAWVClassifier, dict(features="nystrom", alpha=1.0, mu=0.5, beta=1.0, sigma="auto",
                                          standardize=True, random_state=4), "yc"),
}


def _golden_data():
    rng = np.random.default_rng(12345)
    n, d = 400, 3
    X = rng.standard_normal((n, d)) * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0]
    y = 5.0 + X @ [1.0, -0.5, 2.0] + np.sin(X[:, 0]) + 0.2 * rng.standard_normal(n)
    yc = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-1.0, 1.0])
    sw = rng.uniform(0.0, 2.0, n)
    return X, {"y": y, "yc": yc}, sw


@pytest.mark.parametrize("name", list(_GOLDEN_CONFIGS))
def test_forgetting_one_is_the_previous_implementation_bit_for_bit(name):
    """``forgetting=1.0`` runs exactly the operations of the code before the parameter existed: the
    SHA-256 of the prequential predictions, ``precision_`` and ``b_``, and the exact
    ``cumulative_loss_``, as computed at commit e2e17c1 (two chunks, sample weights; Taylor and
    Nyström maps, one and three heads). These are computed by skonline's compiled pass alone.
    ``predict`` goes through BLAS (matrix products in numpy), whose rounding depends on the library
    and the CPU (its hash held for one BLAS only): its values are compared to round-off."""
    golden = json.loads(GOLDEN.read_text())
    built = golden["_built_with"]  # the versions the hashes were computed with
    here = {"numba": numba.__version__.rsplit(".", 1)[0], "numpy": np.__version__.split(".")[0]}
    if any(here[k] != built[k] for k in here):
        pytest.skip(f"golden hashes computed with numba {built['numba']}, numpy {built['numpy']}; here {here}: "
                    "bit-for-bit equality holds within one build (the discounted-ridge tests check the values)")
    cls, params, target = _GOLDEN_CONFIGS[name]
    X, targets, sw = _golden_data()
    y = targets[target]
    est = cls(**params, forgetting=1.0)
    kw = {"classes": [0, 1, 2]} if cls is PKAWVClassifier else {}
    p1 = est.partial_fit_predict(X[:150], y[:150], sample_weight=sw[:150], **kw)
    p2 = est.partial_fit_predict(X[150:], y[150:], sample_weight=sw[150:])
    got = {"pred": _h(np.r_[p1, p2]), "precision": _h(est.precision_), "b": _h(est.b_),
           "loss": float(est.cumulative_loss_).hex()}
    assert got == {k: v for k, v in golden[name].items() if k != "next_values"}
    nxt = est.decision_function(X[:50]) if cls is PKAWVClassifier else est.predict(X[:50])
    np.testing.assert_allclose(nxt, golden[name]["next_values"], rtol=1e-9, atol=1e-12)


def _discounted_recurrence(V, Y, sw, alpha, gamma, awv=True):
    """The documented model in A-space, solved directly: before row t the state is
    ``A = gamma^t alpha I + sum_s gamma^(t-s) (R_s + gamma w_s v_s v_s')``, ``b = sum_s gamma^(t-s+1)
    w_s y_s v_s``, with ``R_s`` the regulariser refresh ``c e_k e_k'`` on ``q`` coordinates in turn.
    Returns the prequential predictions (n, heads), ``A`` and ``b`` at the end."""
    n, m = V.shape
    Y = Y.reshape(n, -1)
    A = alpha * np.eye(m)
    b = np.zeros((Y.shape[1], m))
    q = min(m, max(1, int(np.ceil(m * (1 - gamma)))))
    c = (1 - gamma) * alpha * m / q
    k = 0
    pred = np.zeros(Y.shape)
    for t in range(n):
        v = V[t]
        Aa = A + sw[t] * np.outer(v, v)
        pred[t] = np.linalg.solve(Aa if awv else A, b.T).T @ v
        A = gamma * Aa
        b = gamma * (b + sw[t] * Y[t][:, None] * v)
        for _ in range(q):
            A[k, k] += c
            k = (k + 1) % m
    return pred, A, b


@pytest.mark.parametrize("gamma", [0.9, 0.6])  # q = 1 and q = ceil(4 * 0.4) = 2 refreshes per row
@pytest.mark.parametrize("algorithm", ["awv", "ridge"])
def test_awv_with_forgetting_is_the_discounted_ridge_solve(gamma, algorithm):
    rng = np.random.default_rng(1)
    n, d = 70, 4
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + 0.2 * rng.standard_normal(n)
    sw = rng.uniform(0.0, 2.0, n)
    reg = AWVRegressor(alpha=1.5, forgetting=gamma, algorithm=algorithm, standardize=False)
    pred = reg.partial_fit_predict(X, y, sample_weight=sw)
    ref, A, b = _discounted_recurrence(X, y, sw, 1.5, gamma, awv=algorithm == "awv")
    np.testing.assert_allclose(pred, ref[:, 0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(reg.precision_, np.linalg.inv(A), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(reg.b_, b[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(reg.coef_, np.linalg.solve(A, b[0]), rtol=1e-10, atol=1e-12)
    # predict is the next round
    nxt = reg.predict(X[:5])
    for i in range(5):
        step = pickle.loads(pickle.dumps(reg)).partial_fit_predict(X[i : i + 1], y[i : i + 1])
        np.testing.assert_allclose(nxt[i], step[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("Est", [PKAWVRegressor, PKAWVClassifier])
def test_pkawv_taylor_with_forgetting_is_the_discounted_ridge_solve(Est):
    rng = np.random.default_rng(2)
    n, d = 60, 2
    X = rng.uniform(-1, 1, (n, d))
    yc = (X[:, 0] * X[:, 1] > 0).astype(int) + (X[:, 0] > 0.5)
    y = yc.astype(float) if Est is PKAWVRegressor else yc
    sw = rng.uniform(0.5, 1.5, n)
    est = Est(features="taylor", degree=3, sigma=0.8, alpha=0.3, forgetting=0.8, standardize=False)
    kw = {"classes": [0, 1, 2]} if Est is PKAWVClassifier else {}
    est.partial_fit(X[:25], y[:25], sample_weight=sw[:25], **kw)
    est.partial_fit(X[25:], y[25:], sample_weight=sw[25:])
    V = TaylorFeatures(degree=3, sigma=0.8).fit(X).transform(X)
    Y = y.astype(float) if Est is PKAWVRegressor else np.where(yc[:, None] == np.arange(3), 1.0, -1.0)
    _, A, b = _discounted_recurrence(V, Y, sw, 0.3, 0.8)
    np.testing.assert_allclose(est.precision_, np.linalg.inv(A), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(np.atleast_2d(est.b_), b, rtol=1e-10, atol=1e-12)


def test_nystrom_with_forgetting_is_a_discounted_ridge_with_a_bounded_diagonal_regulariser():
    """``A = R + sum_s gamma^(t-s) w_s phi(x_s) phi(x_s)'`` in the final embedding (past rows are
    re-projected on every insertion with their discounted weights), ``R`` diagonal near alpha."""
    rng = np.random.default_rng(3)
    n, gamma, alpha = 300, 0.97, 0.5
    X = rng.uniform(-1, 1, (n, 2))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    sw = rng.uniform(0.5, 1.5, n)
    # beta=1: a dictionary of moderate size, whose embedding the reference below inverts to 1e-9
    est = PKAWVRegressor(features="nystrom", sigma=0.5, alpha=alpha, mu=0.05, beta=1.0, forgetting=gamma,
                         standardize=False, random_state=0)
    for sl in np.array_split(np.arange(n), 7):
        est.partial_fit(X[sl], y[sl], sample_weight=sw[sl])
    m = est.n_components_
    assert m > 10
    Phi = est._embed(X)
    decay = sw * gamma ** (n - np.arange(n))
    R = np.linalg.inv(est.precision_) - (Phi * decay[:, None]).T @ Phi
    off = R - np.diag(np.diag(R))
    assert np.abs(off).max() < 1e-8
    assert np.all(np.diag(R) > 0.5 * alpha) and np.all(np.diag(R) < 1.6 * alpha)
    np.testing.assert_allclose(est.b_, (Phi * decay[:, None]).T @ y, rtol=1e-9, atol=1e-11)


_MAKERS = {
    "awv": lambda: AWVRegressor(forgetting=0.95),
    "awv_transformer": lambda: AWVRegressor(forgetting=0.9, transformer=TaylorFeatures(degree=2)),
    "pk_taylor": lambda: PKAWVRegressor(features="taylor", forgetting=0.9),
    "pk_nystrom": lambda: PKAWVRegressor(features="nystrom", forgetting=0.9, sigma=0.7, random_state=0),
    "pkc_taylor": lambda: PKAWVClassifier(features="taylor", forgetting=0.7),
    "pkc_nystrom": lambda: PKAWVClassifier(features="nystrom", forgetting=0.9, sigma=0.7, random_state=0),
}


def _stream(n=400, d=3, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + np.sin(2 * X[:, 0])
    return X, y


def _fit_chunks(est, X, y, bounds):
    classifier = isinstance(est, PKAWVClassifier)
    target = (y > 0).astype(int) + (y > 1) if classifier else y
    out = []
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        kw = {"classes": [0, 1, 2]} if classifier and i == 0 else {}
        out.append(est.partial_fit_predict(X[a:b], target[a:b], **kw))
    return np.concatenate(out)


def _state(est):
    return {k: np.copy(v) for k, v in vars(est).items() if k.endswith("_") and isinstance(v, np.ndarray)}


@pytest.mark.parametrize("name", list(_MAKERS))
def test_forgetting_is_chunk_invariant_and_pickles_mid_stream(name):
    X, y = _stream()
    one = _MAKERS[name]()
    p_one = _fit_chunks(one, X, y, [0, 400])
    many = _MAKERS[name]()
    p_many = _fit_chunks(many, X, y, [0, 1, 37, 38, 150, 290, 400])
    np.testing.assert_array_equal(p_one, p_many)
    s1, s2 = _state(one), _state(many)
    assert s1.keys() == s2.keys()
    for k in s1:
        np.testing.assert_array_equal(s1[k], s2[k], err_msg=k)
    # pickle after 170 rows, continue: the same as never stopping
    first = _MAKERS[name]()
    p_a = _fit_chunks(first, X, y, [0, 170])
    resumed = pickle.loads(pickle.dumps(first))
    classifier = isinstance(resumed, PKAWVClassifier)
    target = (y > 0).astype(int) + (y > 1) if classifier else y
    p_b = resumed.partial_fit_predict(X[170:], target[170:])
    np.testing.assert_array_equal(np.r_[p_a, p_b], p_one)
    np.testing.assert_array_equal(resumed.precision_, one.precision_)


@pytest.mark.parametrize("Est, params", [
    (AWVRegressor, {}),
    (PKAWVRegressor, {"features": "taylor", "degree": 2}),
    (PKAWVClassifier, {"features": "taylor", "degree": 2}),
])
def test_forgetting_stays_finite_on_a_million_constant_rows(Est, params):
    """No covariance windup: one direction excited for 1e6 rows, the others never; plain
    exponential forgetting would give ``A^{-1} ~ gamma^{-t} / alpha`` there (overflow after a few
    ten thousand rows at gamma=0.99)."""
    n, gamma, alpha = 1_000_000, 0.99, 1.0
    X = np.tile([0.3, -0.2], (n, 1))
    y = np.ones(n) if Est is not PKAWVClassifier else (np.arange(n) % 2)
    est = Est(alpha=alpha, forgetting=gamma, standardize=False, **params)
    kw = {"classes": [0, 1]} if Est is PKAWVClassifier else {}
    for sl in np.array_split(np.arange(n), 4):
        est.partial_fit(X[sl], y[sl], **kw)
        kw = {}
    P = est.precision_
    assert np.all(np.isfinite(P)) and np.all(np.isfinite(est.b_))
    eig = np.linalg.eigvalsh(P)
    assert eig.min() > 0
    assert eig.max() < 1.0 / (0.58 * alpha)  # the regulariser stays above 0.58 alpha
    assert np.all(np.isfinite(est.predict(np.array([[0.3, -0.2], [5.0, 5.0]]))))


def test_forgetting_tracks_a_switched_linear_target():
    rng = np.random.default_rng(5)
    n, d = 4000, 5
    X = rng.standard_normal((n, d))
    w1, w2 = rng.standard_normal(d), rng.standard_normal(d)
    y = np.where(np.arange(n) < n // 2, X @ w1, X @ w2) + 0.1 * rng.standard_normal(n)
    tail = slice(3 * n // 4, n)
    err = {}
    for gamma in (1.0, 0.99):
        pred = AWVRegressor(forgetting=gamma, standardize=False).partial_fit_predict(X, y)
        err[gamma] = np.mean((pred[tail] - y[tail]) ** 2)
    assert err[0.99] < 0.03  # noise variance 0.01 (+ the estimation error of a ~100-row window)
    assert err[1.0] > 20 * err[0.99]  # the whole-history ridge stays between the two concepts


@pytest.mark.parametrize("Est", [AWVRegressor, PKAWVRegressor, PKAWVClassifier])
@pytest.mark.parametrize("value", [0.0, -0.5, 1.01])
def test_forgetting_is_validated(Est, value):
    X, y = _stream(20)
    kw = {"classes": [0, 1]} if Est is PKAWVClassifier else {}
    with pytest.raises(ValueError, match="forgetting"):
        Est(forgetting=value).partial_fit(X, (y > 0).astype(int) if kw else y, **kw)
