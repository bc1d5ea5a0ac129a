"""Regression tests for issue 11 ("Crashes and silent poisoning", other faults, input safety).

Each example of the issue is a test here: a hostile or extreme chunk must either be learned with a
finite state, or be rejected with a clear error that leaves the estimator exactly as it was.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from skonline.kernel_approximation import MultiBandwidthFourierFeatures, RandomFourierFeatures
from skonline.kernel_selection import KernelSelectionRegressor, OnlineKernelSelector
from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor
from skonline.utils import _test_instances as ti
from skonline.utils.validation import canonical_csr, check_sparse_structure

from _helpers import assert_same_state


def _data(n=20, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[X < 0] = 0.0
    return X, rng.standard_normal(n)


# --------------------------------------------------------------------------- malformed CSR
def _bad_int64_index(A):
    A.indices = A.indices.astype(np.int64)
    A.indices[5] = 10**9  # the example


def _negative_index(A):
    A.indices[5] = -1


def _indptr_decreasing(A):
    A.indptr[3] = A.indptr[5] + 1


def _indptr_short(A):
    A.indptr = A.indptr[:-1]


def _indptr_start(A):
    A.indptr = A.indptr + 1


def _nnz_mismatch(A):
    A.indptr[-1] = A.indptr[-1] - 1


def _float_indices(A):
    A.indices = A.indices.astype(np.float64)


def _data_too_long(A):
    A.data = np.concatenate([A.data, [1.0]])


MALFORMED = {
    "index_1e9_int64": (_bad_int64_index, "out of range"),
    "negative_index": (_negative_index, "out of range"),
    "indptr_decreasing": (_indptr_decreasing, "non-decreasing"),
    "indptr_short": (_indptr_short, "indptr has length"),
    "indptr_not_zero": (_indptr_start, r"indptr\[0\]"),
    "nnz_mismatch": (_nnz_mismatch, "must be equal"),
    "float_indices": (_float_indices, "integer dtype"),
    "data_too_long": (_data_too_long, "must be equal"),
}

SPARSE_ONLINE = [
    ScaleInvariantRegressor(),
    ScaleInvariantClassifier(),
    KernelSelectionRegressor(),
    KernelSelectionRegressor(n_components=8),
    OnlineKernelSelector(),
]


def _targets(est, y):
    return (y > 0).astype(int) if isinstance(est, ScaleInvariantClassifier) else y


@pytest.mark.parametrize("case", list(MALFORMED))
@pytest.mark.parametrize("est", SPARSE_ONLINE, ids=lambda e: repr(e))
def test_malformed_csr_rejected_before_any_state_change(est, case):
    X, y = _data()
    y = _targets(est, y)
    kw = {"classes": [0, 1]} if isinstance(est, ScaleInvariantClassifier) else {}
    est = est.__class__(**est.get_params()).partial_fit(X, y, **kw)
    before = pickle.dumps(est)
    A = sp.csr_matrix(X)
    corrupt, match = MALFORMED[case]
    corrupt(A)
    with pytest.raises(ValueError, match=match):
        est.partial_fit(A, y)
    assert pickle.dumps(est) == before
    method = est.predict if hasattr(est, "predict") else est.transform
    with pytest.raises(ValueError, match=match):
        method(A)
    assert pickle.dumps(est) == before


@pytest.mark.parametrize("case", list(MALFORMED))
@pytest.mark.parametrize("cls", [RandomFourierFeatures, MultiBandwidthFourierFeatures])
def test_malformed_csr_rejected_by_random_features(cls, case):
    X, _ = _data()
    A = sp.csr_matrix(X)
    corrupt, match = MALFORMED[case]
    corrupt(A)
    with pytest.raises(ValueError, match=match):
        cls(random_state=0).fit(A)
    tr = cls(random_state=0).fit(X)
    with pytest.raises(ValueError, match=match):
        tr.transform(A)


def test_malformed_coo_and_csc_rejected():
    X, y = _data()
    A = sp.coo_matrix(X)
    A.col[3] = 7
    with pytest.raises(ValueError, match="out of range"):
        ScaleInvariantRegressor().fit(A, y)
    C = sp.csc_matrix(X)
    C.indices[2] = 99
    with pytest.raises(ValueError, match="out of range for 20 rows"):
        ScaleInvariantRegressor().fit(C, y)


@pytest.mark.parametrize("est", [ScaleInvariantRegressor(), KernelSelectionRegressor(n_components=8, random_state=0)],
                         ids=repr)
def test_unsorted_and_duplicate_indices_mean_the_dense_matrix(est):
    """Unsorted or duplicate column indices are allowed: they mean what ``toarray()`` means."""
    X, y = _data()
    A = sp.csr_matrix(X)
    row0 = slice(A.indptr[0], A.indptr[1])
    A.indices[row0] = A.indices[row0][::-1].copy()
    A.data[row0] = A.data[row0][::-1].copy()
    # a duplicate: split the first entry of row 2 into two halves
    i = A.indptr[2]
    data = np.insert(A.data, i, A.data[i] / 2)
    data[i + 1] /= 2
    indices = np.insert(A.indices, i, A.indices[i])
    indptr = A.indptr.copy()
    indptr[3:] += 1
    B = sp.csr_matrix((data, indices, indptr), shape=A.shape)
    np.testing.assert_allclose(B.toarray(), X)
    snapshot = (B.data.copy(), B.indices.copy(), B.indptr.copy())
    a = est.__class__(**est.get_params()).fit(B, y)
    b = est.__class__(**est.get_params()).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-12, atol=1e-12)
    # the caller's matrix is not modified
    for u, v in zip(snapshot, (B.data, B.indices, B.indptr)):
        np.testing.assert_array_equal(u, v)


def test_canonical_csr_does_not_trust_stale_flags():
    X, _ = _data()
    A = sp.csr_matrix(X)
    assert A.has_canonical_format
    row0 = slice(A.indptr[0], A.indptr[1])
    A.indices[row0] = A.indices[row0][::-1].copy()
    A.data[row0] = A.data[row0][::-1].copy()
    B = canonical_csr(A)
    assert B is not A
    np.testing.assert_array_equal(B.toarray(), X)
    assert np.all(np.diff(B.indices[B.indptr[0]:B.indptr[1]]) > 0)
    check_sparse_structure(B)


# --------------------------------------------------------------------------- non-finite states
from skonline.kernel_ridge import AWVRegressor, KernelAWVRegressor, PKAWVRegressor  # noqa: E402


def _stream(n=10, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal(n)


def _all_finite(est):
    for k, v in vars(est).items():
        if k in getattr(est, "_nonfinite_state_ok", ()):
            continue
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            assert np.isfinite(v).all(), k
        elif isinstance(v, float):
            assert np.isfinite(v), k


def _assert_rejected(est, X, y, match="non-finite", **kw):
    before = pickle.dumps(est)
    with pytest.raises(FloatingPointError, match=match):
        est.partial_fit(X, y, **kw)
    assert pickle.dumps(est) == before


@pytest.mark.parametrize("algorithm", ["awv", "ridge"])
def test_awv_rows_of_1e9_never_leave_a_nan_precision(algorithm):
    """Issue 11: two rows of 1e9 made ``_precision_`` NaN without rejection; every later clean
    chunk was then rejected, blaming the clean chunk."""
    X, y = _stream()
    reg = AWVRegressor(algorithm=algorithm).partial_fit(X, y)
    big = np.where(np.random.default_rng(1).random((2, 4)) < 0.5, 1e9, -1e9)
    try:
        reg.partial_fit(big, np.random.default_rng(1).standard_normal(2))
    except FloatingPointError as exc:
        assert "Row " in str(exc)
    _all_finite(reg)
    reg.partial_fit(X, y)  # a clean chunk is learned, never blamed
    _all_finite(reg)
    assert np.isfinite(reg.predict(X)).all()


@pytest.mark.parametrize("predict_mode", ["linear", "online"])
def test_scale_invariant_full_extreme_row_rejected_with_row_index(predict_mode):
    X, y = _stream()
    reg = ScaleInvariantRegressor(invariance="full", predict_mode=predict_mode).partial_fit(X, y)
    bad = np.vstack([X[:3], [[-1e20, 0, 0, 0]]])
    _assert_rejected(reg, bad, y[:4], match="Row 3 ")
    _all_finite(reg)
    assert np.isfinite(reg.coef_).all()


@pytest.mark.parametrize("algorithm", ["oks", "oks++", "ioks"])
@pytest.mark.parametrize("n_components", [None, 8])
def test_kernel_selection_huge_targets_rejected_not_zerodivision(algorithm, n_components):
    X, y = _stream()
    reg = KernelSelectionRegressor(algorithm=algorithm, n_components=n_components, random_state=0)
    reg.partial_fit(X, y)
    _assert_rejected(reg, X, y * 1e154)
    _all_finite(reg)


@pytest.mark.parametrize("cls", [AWVRegressor, KernelAWVRegressor, PKAWVRegressor])
@pytest.mark.parametrize("scale", [1e154, 1e200])
def test_cumulative_loss_never_becomes_inf(cls, scale):
    """A chunk whose squared loss overflows float64 is rejected (the loss is part of the state)."""
    X, y = _stream()
    reg = cls().partial_fit(X, y)
    _assert_rejected(reg, X, y * scale, match=r"Row \d+ of this chunk.*cumulative_loss_")
    assert np.isfinite(reg.cumulative_loss_)


@pytest.mark.parametrize("invariance", ["coordinate", "full"])
@pytest.mark.parametrize("predict_mode", ["linear", "online"])
def test_scale_invariant_predict_on_huge_rows_raises_not_nan(invariance, predict_mode):
    X, y = _stream()
    reg = ScaleInvariantRegressor(invariance=invariance, predict_mode=predict_mode).fit(X, y)
    clf = ScaleInvariantClassifier(invariance=invariance, predict_mode=predict_mode).fit(X, y > 0)
    Xbig = X * 1e155
    for est, method in ((reg, reg.predict), (clf, clf.predict), (clf, clf.decision_function)):
        before = pickle.dumps(est)
        try:
            out = method(Xbig)
        except ValueError as exc:
            assert "Row " in str(exc) and "non-finite" in str(exc)
        else:
            assert np.isfinite(np.asarray(out, dtype=float)).all()
        assert pickle.dumps(est) == before


@pytest.mark.parametrize("est", [ScaleInvariantRegressor(), AWVRegressor(), KernelSelectionRegressor()],
                         ids=repr)
def test_complex_targets_rejected_on_every_call(est):
    X, y = _stream()
    with pytest.raises(ValueError, match="Complex"):
        est.__class__(**est.get_params()).partial_fit(X, y + 1j)
    est = est.__class__(**est.get_params()).partial_fit(X, y)
    before = pickle.dumps(est)
    with pytest.raises(ValueError, match="Complex"):
        est.partial_fit(X, y + 1j)
    with pytest.raises(ValueError, match="Complex"):
        est.partial_fit(X, list(y + 1j))
    assert pickle.dumps(est) == before


def test_complex_labels_rejected_for_classifiers():
    X, y = _stream()
    clf = ScaleInvariantClassifier().partial_fit(X, (y > 0).astype(int), classes=[0, 1])
    with pytest.raises(ValueError, match="Complex"):
        clf.partial_fit(X, (y > 0).astype(complex))


@pytest.mark.parametrize("invariance", ["coordinate", "full"])
@pytest.mark.parametrize("scale", [1e-310, 3.5e-323])
def test_scale_invariant_subnormal_data_no_overflow_message(invariance, scale):
    """Issue 11: subnormal features gave an 'overflow' rejection (1 / scale overflowed inside the
    pass). The online algorithm is scale invariant: it learns tiny data like unit data."""
    X, y = _stream(n=30)
    ref = ScaleInvariantClassifier(invariance=invariance, predict_mode="online")
    tiny = ScaleInvariantClassifier(invariance=invariance, predict_mode="online")
    Xt = X * scale  # subnormal: few significant bits left at 3.5e-323
    d_ref = ref.partial_fit_decision_function(Xt / scale, y > 0, classes=[False, True])
    d_tiny = tiny.partial_fit_decision_function(Xt, y > 0, classes=[False, True])
    assert np.isfinite(d_tiny).all()
    if scale > 1e-320:
        np.testing.assert_allclose(d_tiny, d_ref, rtol=1e-6, atol=1e-9)
    _all_finite(tiny)
    # predict_mode='linear' needs coef_ in feature units (~1/scale): not representable, so a
    # clear rejection that names coef_ and the way out, not an "overflow"
    lin = ScaleInvariantClassifier(invariance=invariance)
    try:
        lin.partial_fit(X * scale, y > 0, classes=[False, True])
    except FloatingPointError as exc:
        assert "coef_" in str(exc) and "'online'" in str(exc) and "overflow" not in str(exc)
        assert not hasattr(lin, "n_samples_seen_")
    else:
        assert np.isfinite(lin.coef_).all() and np.isfinite(lin.decision_function(X * scale)).all()


# --------------------------------------------------------------------------- read-only state
def _online_instances():
    from sklearn.base import clone
    from test_common import ONLINE

    return [clone(e) for e in ONLINE]


@pytest.mark.parametrize(
    "est",
    [e for e in _online_instances() if type(e).__name__.startswith("OnlineEnsemble")]
    + [ScaleInvariantRegressor(), AWVRegressor()],
    ids=lambda e: type(e).__name__,
)
def test_models_loaded_with_mmap_mode_r_keep_learning(est, tmp_path):
    """Issue 11: an ensemble loaded with ``joblib.load(..., mmap_mode='r')`` raised a numba
    TypingError on the first partial_fit (its rule's arrays were read-only memory maps)."""
    joblib = pytest.importorskip("joblib")
    X, y, kw = ti.test_stream(est, np.random.default_rng(0), n_samples=2000)
    ref = pickle.loads(pickle.dumps(est.partial_fit(X[:1000], y[:1000], **kw)))
    path = tmp_path / "model.joblib"
    joblib.dump(est, path)
    loaded = joblib.load(path, mmap_mode="r")
    loaded.partial_fit(X[1000:], y[1000:])
    ref.partial_fit(X[1000:], y[1000:])
    np.testing.assert_array_equal(loaded.predict(X[:50]), ref.predict(X[:50]))


# --------------------------------------------------------------------------- Ctrl-C
def _gdro_stream(**params):
    from skonline.dro import GroupDROClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 3))
    y = (X[:, 0] > 0).astype(int)
    g = rng.integers(0, 3, 3000)
    clf = GroupDROClassifier(random_state=0, sampling="stream", **params)
    clf.partial_fit(X[:100], y[:100], groups=g[:100], classes=[0, 1])
    return clf, X, y, g


def test_gdro_keyboard_interrupt_inside_the_compiled_pass_is_a_keyboard_interrupt(monkeypatch):
    """Issue 11: Ctrl-C during GroupDRO's partial_fit surfaced as SystemError. numba calls back
    into Python while boxing the pass's returned arrays; an interrupt landing there makes the
    dispatcher return with the exception set (SystemError, the KeyboardInterrupt as its cause)."""
    from skonline.dro import _gdro

    clf, X, y, g = _gdro_stream()
    before = pickle.dumps(clf)
    real_for = _gdro.core.stream_pass_for  # the compiled pass of a configuration

    def interrupted_for(*variant):
        real = real_for(*variant)

        def interrupted(*args):
            real(*args)  # the state is changed in place, then the interrupt arrives
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as exc:
                raise SystemError(
                    "CPUDispatcher(<function stream_pass>) returned a result with an exception set"
                ) from exc

        return interrupted

    monkeypatch.setattr(_gdro.core, "stream_pass_for", interrupted_for)
    with pytest.raises(KeyboardInterrupt):
        clf.partial_fit(X, y, groups=g)
    assert pickle.dumps(clf) == before


def test_gdro_keyboard_interrupt_in_a_draw_propagates_and_changes_nothing(monkeypatch):
    clf, X, y, g = _gdro_stream(algorithm="online")  # draws uniforms for every row
    before = pickle.dumps(clf)

    class Interrupting:
        def __init__(self, rng):
            self.rng = rng

        def random(self, *a, **k):
            raise KeyboardInterrupt

        def __getattr__(self, name):
            return getattr(self.rng, name)

    rng = clf._rng_
    real_copy = type(clf)._working_copy

    def copy_then_patch(self, reset=False, state=None):  # the working copy draws from a patched generator
        work = real_copy(self, reset, state)
        work._rng_ = Interrupting(work._rng_)
        return work

    monkeypatch.setattr(type(clf), "_working_copy", copy_then_patch)
    with pytest.raises(KeyboardInterrupt):
        clf.partial_fit(X, y, groups=g)
    monkeypatch.undo()
    assert clf._rng_ is rng
    assert pickle.dumps(clf) == before


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="POSIX timers")
def test_gdro_real_sigint_during_partial_fit_is_a_keyboard_interrupt():
    import random
    import signal

    clf, X, y, g = _gdro_stream()
    old = signal.signal(signal.SIGALRM, signal.default_int_handler)
    rnd = random.Random(0)
    try:
        for _ in range(40):
            in_call = False
            try:
                # armed inside the try: on a loaded machine the timer can expire before the next line
                signal.setitimer(signal.ITIMER_REAL, rnd.uniform(0.001, 0.03))
                while True:
                    before = pickle.dumps(clf)
                    in_call = True
                    clf.partial_fit(X, y, groups=g)
                    in_call = False
            except KeyboardInterrupt:
                if in_call:  # unchanged, or the call had just completed when the signal came
                    done = pickle.loads(before)
                    done.partial_fit(X, y, groups=g)
                    # compared attribute by attribute: when the signal lands just after the call
                    # completed, the state is the completed one but the attribute order of the
                    # instance may differ from a freshly unpickled one (so may its pickle bytes)
                    try:
                        assert_same_state(clf, pickle.loads(before))
                    except AssertionError:
                        assert_same_state(clf, done)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_awv_predict_on_huge_rows_raises_not_nan():
    X, y = _stream()
    reg = AWVRegressor(standardize=False).fit(X, y)  # standardised rows would be clipped
    with pytest.raises(ValueError, match=r"Row \d+ of X gives non-finite predictions"):
        reg.predict(X * 1e155)
    assert np.isfinite(reg.predict(X)).all()
