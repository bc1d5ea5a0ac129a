"""Scale-invariant learners: one model whatever the container, cheap rollback and finiteness
checks on wide sparse streams, and the O(d) bookkeeping of Algorithm 2 (issue 21)."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor
from skonline.linear_model import _scale_invariant as si
from skonline.linear_model import _scale_invariant_core as core
from skonline.utils import _scaling


def _sparse_stream(seed, n, d, density, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < density) * 10.0 ** rng.uniform(-2, 2, d)
    w = rng.standard_normal((d, n_classes))
    y = np.argmax(X @ w + 0.1 * rng.standard_normal((n, n_classes)), axis=1)
    y[:n_classes] = np.arange(n_classes)
    return X, y


# ------------------------------------------------------------------ one model, any container
@pytest.mark.parametrize("n_features", [20, 250])
@pytest.mark.parametrize("cls", [ScaleInvariantClassifier, ScaleInvariantRegressor])
def test_auto_invariance_from_the_shape_not_the_container(cls, n_features):
    X, y = _sparse_stream(0, 400, n_features, 0.2)
    if cls is ScaleInvariantRegressor:
        y = X @ np.random.default_rng(1).standard_normal(n_features)
    dense = cls().fit(X, y)
    csr = cls().fit(sp.csr_matrix(X), y)
    assert dense.invariance_ == csr.invariance_ == ("full" if n_features < 200 else "coordinate")
    f = "decision_function" if cls is ScaleInvariantClassifier else "predict"
    np.testing.assert_allclose(getattr(csr, f)(sp.csr_matrix(X)), getattr(dense, f)(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(getattr(csr, f)(X), getattr(dense, f)(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("invariance", ["full", "coordinate"])
def test_a_stream_mixing_containers_is_the_dense_stream(invariance):
    X, y = _sparse_stream(2, 600, 12, 0.3, n_classes=3)
    ref = ScaleInvariantClassifier(invariance=invariance)
    preq_ref = ref.partial_fit_decision_function(X, y, classes=[0, 1, 2])
    est = ScaleInvariantClassifier(invariance=invariance)
    preq = []
    for i, a in enumerate(range(0, 600, 150)):
        chunk = X[a:a + 150] if i % 2 else sp.csr_matrix(X[a:a + 150])
        kw = {"classes": [0, 1, 2]} if a == 0 else {}
        preq.append(est.partial_fit_decision_function(chunk, y[a:a + 150], **kw))
    np.testing.assert_allclose(np.concatenate(preq), preq_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-9, atol=1e-12)


def test_full_on_sparse_rows_is_densified_in_blocks(monkeypatch):
    # blocks of rows (a few rows each here) give the pass over the whole chunk, bit for bit
    X, y = _sparse_stream(3, 300, 8, 0.4)
    a = ScaleInvariantClassifier(invariance="full").fit(sp.csr_matrix(X), y)
    monkeypatch.setattr(_scaling, "DENSIFY_BYTES", 8 * 8 * 7)  # 7 rows per block (the shared rule)
    b = ScaleInvariantClassifier(invariance="full").fit(sp.csr_matrix(X), y)
    for k in ("pinv_", "neg_cum_grad_", "gamma_", "_pinv_h_"):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k))
    assert a.cumulative_loss_ == b.cumulative_loss_


# ------------------------------------------------------------------ finiteness check
def _weights_finite(h, s2, scale, alpha, t_next, intercept, units, cols):
    return si._coordinate_weights_finite(h, s2, scale, alpha, t_next, intercept, units, core.E_MAX, cols)


def _exact_finite(h, s2, scale, alpha, t_next, intercept, units):
    with np.errstate(all="ignore"):
        D = h.shape[1]
        s = s2 + (np.arange(D) == D - 1) * intercept
        E = np.minimum((h**2 + (np.arange(D) == D - 1) * intercept) / (2 * alpha * s), core.E_MAX)
        W = np.where(s > 0, np.exp(E) * h / s, 0.0) / (alpha * t_next * D)
        if units:
            n = scale.shape[0]
            W[:, :n] = np.where(scale > 0, W[:, :n] / np.where(scale > 0, scale, 1.0), W[:, :n])
        return bool(np.isfinite(W).all() and np.isfinite(h).all() and np.isfinite(s2).all()
                    and np.isfinite(scale).all())


def test_cheap_finiteness_check_agrees_with_evaluating_every_weight():
    """The check evaluates the exp only where its cheap bound fails; whatever it skips must be
    finite: on states around overflow (exponents up to past the clamp, |h| / s^2 up to 1e60,
    tiny scales) it agrees with the numpy weights."""
    rng = np.random.default_rng(0)
    disagree = 0
    n_inf = 0
    for trial in range(4000):
        D = 4
        s2 = 10.0 ** rng.uniform(-310, 5, D) * (rng.random(D) < 0.9)
        E = rng.uniform(0.0, 800.0, (2, D)) * (rng.random((2, D)) < 0.8)  # the exponent aimed at
        h = np.sqrt(2 * 1.5 * s2 * E) * np.where(rng.random((2, D)) < 0.5, -1.0, 1.0)
        h[:, s2 == 0] = 0.0
        scale = 10.0 ** rng.uniform(-320, 3, D - 1)
        intercept, units = bool(trial % 2), bool(trial % 3)
        t = float(rng.integers(1, 10**6))
        want = _exact_finite(h, s2, scale, 1.5, t, intercept, units)
        n_inf += not want
        got = _weights_finite(h, s2, scale, 1.5, t, intercept, units, np.zeros(0, dtype=np.int64))
        disagree += got != want
    assert 200 < n_inf < 3800  # both outcomes represented
    assert disagree == 0


def _exact_full_nonfinite(h, P, gamma, alpha, scale, units, intercept):
    """The NumPy weights of full invariance (``_linear_weights``, ``_coef_intercept``): what is
    non-finite first, ``coef`` before ``intercept``."""
    with np.errstate(all="ignore"):
        rho = np.einsum("kd,de,ke->k", h, P, h)
        eta = np.exp(np.minimum((rho - gamma) / (2 * alpha), core.E_MAX)) / alpha
        W = eta[:, None] * (h @ P)
        if not units:
            return None if np.isfinite(W).all() else "weights"
        n = scale.shape[0]
        if not np.isfinite(W[:, :n] / np.where(scale > 0, scale, 1.0)).all():
            return "coef"
        return "intercept" if intercept and not np.isfinite(W[:, n]).all() else None


def test_full_finiteness_bound_is_sound():
    """The compiled bound of full invariance's weights (and, in feature units, of coef_ and
    intercept_) says "finite" only when the NumPy weights are finite (otherwise the estimator
    evaluates them): on states around overflow (columns of very different sizes, subnormal scales,
    exponents past the clamp), and it says so on most states that are finite with room to spare."""
    rng = np.random.default_rng(1)
    counts = {None: 0, "weights": 0, "coef": 0, "intercept": 0}
    sure = 0
    for trial in range(3000):
        intercept, units = bool(trial % 2), bool(trial % 3)
        n = int(rng.integers(1, 6))
        D = n + intercept
        A = rng.standard_normal((D, D))
        c = 10.0 ** rng.uniform(-100, 100, D)  # columns of very different sizes
        focus = intercept and trial % 4 == 1  # the intercept's column alone can overflow
        if focus:
            c[:-1] *= 1e-150
        P = A @ A.T * c[:, None] * c[None, :]
        P = (P + P.T) / 2  # symmetric bit for bit, as the estimator keeps it
        h = rng.standard_normal((int(rng.integers(1, 4)), D)) * 10.0 ** rng.uniform(-100, 100, D)
        h[rng.random(h.shape) < 0.2] = 0.0
        gamma = np.abs(rng.standard_normal(h.shape[0])) * 10.0 ** rng.uniform(-5, 200)
        scale = 10.0 ** rng.uniform(-3 if focus else -320, 3, n) * (rng.random(n) < 0.9)
        alpha = 10.0 ** rng.uniform(0.1, 1)
        want = _exact_full_nonfinite(h, P, gamma, alpha, scale, units, intercept)
        counts[want] += 1
        if si._full_weights_surely_finite(h, P, gamma, alpha, core.E_MAX, scale, units):
            assert want is None, (trial, want)
            sure += 1
    assert min(counts.values()) > 50, counts  # every outcome represented
    assert sure > 0.5 * counts[None], (sure, counts)


@pytest.mark.parametrize("d", [10, 50, 123, 199])
def test_full_finiteness_bound_holds_on_ordinary_states(d, monkeypatch):
    """On an ordinary stream the bound settles every check: NumPy's weights are never computed."""
    rng = np.random.default_rng(d)
    X = rng.standard_normal((3 * d + 50, d)) * 10.0 ** rng.uniform(-3, 3, d)
    y = (X @ rng.standard_normal(d) > 0).astype(int)
    monkeypatch.setattr(ScaleInvariantClassifier, "_linear_weights",
                        lambda self: (_ for _ in ()).throw(AssertionError("numpy weights computed")))
    for predict_mode in ("linear", "online"):
        clf = ScaleInvariantClassifier(predict_mode=predict_mode)
        for a in range(0, X.shape[0], 100):
            clf.partial_fit(X[a:a + 100], y[a:a + 100], classes=[0, 1])
        assert clf.invariance_ == "full"


@pytest.mark.parametrize("sparse", [False, True])
def test_weights_beyond_float64_in_feature_units_are_rejected_for_sparse_rows_too(sparse):
    """A column of subnormal values: its weight in feature units (coef_) overflows, which the
    CSR pass's running bound must notice as the dense check does (issue 11's rejection)."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((200, 3000)) * (rng.random((200, 3000)) < 0.01)
    X[:, 7] = 1e-310 * rng.standard_normal(200)
    y = (X[:, 7] > 0).astype(int)
    clf = ScaleInvariantClassifier(invariance="coordinate").partial_fit(X[:100], y[:100], classes=[0, 1])
    with pytest.raises(FloatingPointError, match="coef_"):
        ScaleInvariantClassifier(invariance="coordinate").fit(X, y)
    with pytest.raises(FloatingPointError, match="coef_"):
        clf.partial_fit(sp.csr_matrix(X[100:]) if sparse else X[100:], y[100:])


def test_derived_state_reads_the_resolved_invariance(monkeypatch):
    # invariance='auto' resolved to 'coordinate' (many columns): the compiled check, not the
    # numpy weights of every column
    X, y = _sparse_stream(4, 200, 300, 0.05)
    monkeypatch.setattr(ScaleInvariantClassifier, "_linear_weights",
                        lambda self: (_ for _ in ()).throw(AssertionError("numpy weights computed")))
    clf = ScaleInvariantClassifier().fit(sp.csr_matrix(X), y)
    assert clf.invariance_ == "coordinate"
    clf.partial_fit(X[:50], y[:50])


# ------------------------------------------------------------------ rollback on wide sparse streams
@pytest.mark.parametrize("position", [10, 99])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_rejected_sparse_chunk_changes_nothing(position, n_classes):
    """A chunk with fewer non-zeros than columns is rolled back from the entries the pass logged
    (not from a copy of the state); the row is located, and continuing equals never failing."""
    X, y = _sparse_stream(5, 300, 5000, 0.002, n_classes)
    Xs = sp.csr_matrix(X)
    classes = np.arange(n_classes)
    est = ScaleInvariantClassifier().partial_fit(Xs[:100], y[:100], classes=classes)
    assert est.invariance_ == "coordinate"
    before = pickle.dumps(est)
    w = np.ones(100)
    w[position] = 1e305
    # the row itself (state) or the next one (its prediction) is named
    with pytest.raises(FloatingPointError, match=f"Row ({position}|{position + 1}) "):
        est.partial_fit(Xs[100:200], y[100:200], sample_weight=w)
    assert pickle.dumps(est) == before
    est.partial_fit(Xs[100:], y[100:])
    ref = ScaleInvariantClassifier().partial_fit(Xs[:100], y[:100], classes=classes).partial_fit(Xs[100:], y[100:])
    assert pickle.dumps(est) == pickle.dumps(ref)


def test_pickle_holds_no_bookkeeping():
    X, y = _sparse_stream(6, 200, 3000, 0.003)
    est = ScaleInvariantClassifier().partial_fit(sp.csr_matrix(X[:100]), y[:100], classes=[0, 1])
    est.partial_fit(sp.csr_matrix(X[100:]), y[100:])
    assert "_to_check" not in est.__getstate__() and "_to_check" not in vars(est)


def _chunks(Xs, y, size):
    return [(Xs[a:a + size], y[a:a + size]) for a in range(0, Xs.shape[0], size)]


@pytest.mark.parametrize("size, by_columns", [(25, True), (200, False)])
def test_recycled_working_copies_learn_the_same_model(size, by_columns, monkeypatch):
    """The per-column arrays of a wide sparse stream are copied into the previous call's spares in
    the columns that call wrote only (skonline.utils._recycle), or in full when it wrote more than
    1 column in FULL_COPY_SHARE (200-row chunks here: about 1 in 5): the spares are really reused
    (the arrays alternate between two buffers), and the model equals the one learned with full
    copies (spares disabled), bit for bit, in every call."""
    from skonline.utils import _recycle

    calls = []
    copy_columns = _recycle.copy_columns
    monkeypatch.setattr(_recycle, "copy_columns", lambda *a: calls.append(a[2].shape[0]) or copy_columns(*a))
    X, y = _sparse_stream(8, 600, 20000, 0.001, 3)
    Xs = sp.csr_matrix(X)
    chunks = _chunks(Xs, y, size)
    est = ScaleInvariantClassifier()
    ref = ScaleInvariantClassifier()
    buffers = set()
    for k, (Xc, yc) in enumerate(chunks):
        est.partial_fit(Xc, yc, classes=np.arange(3))
        buffers.add(est.neg_cum_grad_.__array_interface__["data"][0])
        _recycle.take(ref)  # no spares for the reference: full copies
        ref.partial_fit(Xc, yc, classes=np.arange(3))
        for name in ("sum_sq_", "neg_cum_grad_", "scale_"):
            np.testing.assert_array_equal(getattr(est, name), getattr(ref, name), err_msg=f"call {k}")
        np.testing.assert_array_equal(est.decision_function(Xc), ref.decision_function(Xc))
    assert est.invariance_ == "coordinate"
    assert len(buffers) == 2  # ping-pong between the committed arrays and the spares
    assert pickle.dumps(est) == pickle.dumps(ref)
    assert bool(calls) == by_columns
    assert all(0 < m * _recycle.FULL_COPY_SHARE <= 20001 for m in calls)


def test_spares_never_overwrite_arrays_someone_still_holds():
    """An array of the state a call replaced is reused by the next call only if nothing else holds
    it: a user's reference (or a predict still running on the old state) keeps it unchanged."""
    X, y = _sparse_stream(9, 300, 20000, 0.001)
    Xs = sp.csr_matrix(X)
    est = ScaleInvariantClassifier().partial_fit(Xs[:100], y[:100], classes=[0, 1])
    held = est.neg_cum_grad_
    frozen = held.copy()
    est.partial_fit(Xs[100:200], y[100:200])
    est.partial_fit(Xs[200:], y[200:])
    np.testing.assert_array_equal(held, frozen)
    assert held is not est.neg_cum_grad_
    ref = ScaleInvariantClassifier().fit(Xs, y)
    np.testing.assert_array_equal(est.neg_cum_grad_, ref.neg_cum_grad_)


def test_interrupted_call_leaves_no_spare_behind():
    """A call that fails after writing into a spare leaves none behind: the next call copies the
    state in full and learns exactly what it would have learned without the failed call."""
    from skonline.utils import _recycle

    X, y = _sparse_stream(10, 300, 20000, 0.001)
    Xs = sp.csr_matrix(X)
    est = ScaleInvariantClassifier().partial_fit(Xs[:100], y[:100], classes=[0, 1])
    est.partial_fit(Xs[100:150], y[100:150])
    assert _recycle._SPARES.get(est)
    w = np.ones(50)
    w[10] = 1e305
    with pytest.raises(FloatingPointError):
        est.partial_fit(Xs[150:200], y[150:200], sample_weight=w)
    assert not _recycle._SPARES.get(est)
    est.partial_fit(Xs[150:], y[150:])
    ref = ScaleInvariantClassifier().partial_fit(Xs[:100], y[:100], classes=[0, 1])
    ref.partial_fit(Xs[100:150], y[100:150]).partial_fit(Xs[150:], y[150:])
    assert pickle.dumps(est) == pickle.dumps(ref)


# ------------------------------------------------------------------ Algorithm 2 bookkeeping
def test_full_pass_keeps_p_symmetric_and_p_h_up_to_date():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((2500, 9)) @ rng.standard_normal((9, 9))
    y = (X[:, 0] + 0.3 * rng.standard_normal(2500) > 0).astype(int)
    for n in (1024, 1500, 2500):  # at a refresh, after 476 incremental updates, and at the end
        est = ScaleInvariantClassifier(invariance="full").fit(X[:n], y[:n])
        np.testing.assert_array_equal(est.pinv_, est.pinv_.T)
        np.testing.assert_allclose(est._pinv_h_, est.neg_cum_grad_ @ est.pinv_, rtol=1e-9,
                                   atol=1e-9 * np.abs(est._pinv_h_).max())
    # chunks that cross the refresh positions: the same state bit for bit
    b = clone(est)
    for a in range(0, 2500, 333):
        b.partial_fit(X[a:a + 333], y[a:a + 333], classes=[0, 1])
    for k in ("pinv_", "_pinv_h_", "neg_cum_grad_", "gamma_"):
        np.testing.assert_array_equal(getattr(b, k), getattr(est, k))


def test_a_new_direction_recomputes_p_h():
    # the second half of the stream opens a new column: the pass recomputes P h after it
    rng = np.random.default_rng(8)
    X = rng.standard_normal((400, 5))
    X[:200, 4] = 0.0
    y = (X.sum(1) > 0).astype(int)
    est = ScaleInvariantClassifier(invariance="full").fit(X, y)
    assert est.rank_[0] == 6
    np.testing.assert_allclose(est._pinv_h_, est.neg_cum_grad_ @ est.pinv_, rtol=1e-10, atol=1e-12)


def test_warnings_unchanged_by_the_container():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    for data in (X, sp.csr_matrix(X)):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            ScaleInvariantClassifier().fit(data, y)
        assert sum("nearly collinear" in str(w.message) for w in rec) == 1


def test_fit_after_partial_fit_leaves_no_stale_spare():
    """``fit`` starts from fresh arrays: the arrays it replaced are not behind in the columns it
    wrote only, so the next call must not refresh them in those columns only."""
    X, y = _sparse_stream(11, 400, 20000, 0.001)
    Xs = sp.csr_matrix(X)
    est = ScaleInvariantClassifier().partial_fit(Xs[:100], y[:100], classes=[0, 1])
    est.partial_fit(Xs[100:200], y[100:200])
    est.fit(Xs[200:300], y[200:300])
    est.partial_fit(Xs[300:], y[300:])
    ref = ScaleInvariantClassifier().fit(Xs[200:300], y[200:300]).partial_fit(Xs[300:], y[300:])
    assert pickle.dumps(est) == pickle.dumps(ref)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_one_head_dense_pass_is_the_general_pass_bit_for_bit(fit_intercept):
    """Algorithm 1 on dense rows with one head (binary classification, regression) computes each
    coordinate's internal value, s^2 and term in one loop; the general loops (several heads) give
    every head the same bits: two identical heads match a single one exactly, prediction by
    prediction and in the state (features of a few scales, late first values: the scale is set
    mid-stream)."""
    rng = np.random.default_rng(11)
    n, d = 600, 37
    X = rng.standard_normal((n, d)) * np.exp(3 * rng.standard_normal(d))
    X[:150, 5] = 0.0  # a feature whose scale is set mid-stream
    y = np.where(X @ rng.standard_normal(d) > 0, 1.0, -1.0)
    loss = si.get_loss("log_loss")
    D = d + 1 if fit_intercept else d

    def run(H):
        s2, h, scale = np.zeros(D), np.zeros((H, D)), np.zeros(d)
        out, clamped, acc = np.zeros((n, H)), np.zeros(1, dtype=np.int64), np.zeros(1)
        Y = np.repeat(y[:, None], H, axis=1)
        status = core.coordinate_pass_dense(X, Y, np.ones(n), 0, fit_intercept, True, 1.0, loss.record(0.1),
                                            loss.lipschitz_constant(0.1), s2, h, scale, out, clamped, acc)
        assert status == -1
        return out, h, s2, scale

    one, two = run(1), run(2)
    np.testing.assert_array_equal(two[0][:, 0], two[0][:, 1])
    np.testing.assert_array_equal(one[0][:, 0], two[0][:, 0])
    np.testing.assert_array_equal(one[1][0], two[1][0])
    np.testing.assert_array_equal(one[2], two[2])
    np.testing.assert_array_equal(one[3], two[3])
