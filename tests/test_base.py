"""The streaming contract itself (skonline/base.py), on a toy estimator."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from skonline.base import OnlineRegressorMixin, make_generator, raise_if_nonfinite, running_sum
from skonline.utils import all_estimators


class NoisyMean(OnlineRegressorMixin, BaseEstimator):
    """Predicts the running mean of y plus a random jitter; fails on demand (for the tests)."""

    _parameter_constraints = {"jitter": [float], "random_state": ["random_state"]}

    def __init__(self, jitter=0.1, random_state=None):
        self.jitter = jitter
        self.random_state = random_state

    def _allocate(self, chunk):
        self.sum_ = np.zeros(1)

    def _learn(self, chunk):
        u = self._draw(chunk.n_samples, 1)[:, 0]
        out = np.empty(chunk.n_samples)
        for i, yi in enumerate(chunk.y):
            t = self.n_samples_seen_ + i
            out[i] = (self.sum_[0] / t if t else 0.0) + self.jitter * u[i]
            self.sum_[0] += yi
            if yi == 13.0:
                raise_if_nonfinite(i, what="toy state")
        return out

    def predict(self, X):
        return np.full(len(X), self.sum_[0] / self.n_samples_seen_)


def test_rejected_pass_restores_everything_including_the_generator():
    X = np.ones((10, 2))
    y = np.arange(10.0)
    a = NoisyMean(random_state=0)
    a.partial_fit(X[:5], y[:5])
    before = (a.sum_.copy(), a.n_samples_seen_, a._rng_.bit_generator.state)
    y_bad = y[5:].copy()
    y_bad[3] = 13.0
    with pytest.raises(FloatingPointError, match="Row 3"):
        a.partial_fit(X[5:], y_bad)
    assert np.array_equal(a.sum_, before[0]) and a.n_samples_seen_ == before[1]
    assert a._rng_.bit_generator.state == before[2]
    b = NoisyMean(random_state=0).fit(X[:5], y[:5])
    np.testing.assert_array_equal(a.partial_fit_predict(X[5:], y[5:]), b.partial_fit_predict(X[5:], y[5:]))


def test_params_revalidated_after_set_params():
    X = np.ones((4, 2))
    y = np.ones(4)
    est = NoisyMean().fit(X, y)
    est.set_params(jitter="loud")
    with pytest.raises(ValueError, match="jitter"):
        est.partial_fit(X, y)


def test_fit_resets_and_random_state_kinds():
    X = np.ones((6, 1))
    y = np.arange(6.0)
    e = NoisyMean(random_state=np.random.RandomState(3))
    e.fit(X, y)
    e.fit(X, y)
    assert e.n_samples_seen_ == 6
    g = make_generator(np.random.default_rng(5))
    assert isinstance(g, np.random.Generator)
    with pytest.raises(ValueError, match="random_state"):
        make_generator("seed")


def test_running_sum_is_chunking_invariant():
    rng = np.random.default_rng(0)
    v = rng.standard_normal(1001) * 10.0 ** rng.uniform(-8, 8, 1001)
    whole = running_sum(0.0, v)
    parts = 0.0
    for a in range(0, 1001, 37):
        parts = running_sum(parts, v[a : a + 37])
    assert whole == parts
    seq = 0.0
    for x in v:  # the left-to-right loop it stands for (np.sum, pairwise, differs on this data)
        seq += x
    assert whole == seq
    assert running_sum(2.5, np.empty(0)) == 2.5


def test_all_estimators_discovers_without_a_hand_list():
    names = dict(all_estimators())
    assert "ScaleInvariantClassifier" in names and "ScaleInvariantRegressor" in names
    assert all(n[0] != "_" for n in names)
    clf = dict(all_estimators(type_filter="classifier"))
    assert "ScaleInvariantRegressor" not in clf
    with pytest.raises(ValueError, match="type_filter"):
        all_estimators(type_filter="cluster")


def test_state_scalar_reads_a_length_one_state_array_after_a_fit_check():
    from sklearn.base import BaseEstimator
    from sklearn.exceptions import NotFittedError

    from skonline.base import state_scalar

    class Model(BaseEstimator):
        eta_ = state_scalar("_eta_", float, "Learning rate.")
        n_ = state_scalar("_n_", int, "Count.")

        def fit(self):
            self._eta_ = np.array([0.25])
            self._n_ = np.array([3], dtype=np.int64)
            return self

    m = Model()
    with pytest.raises(NotFittedError):
        _ = m.eta_
    assert not hasattr(m, "n_")
    m.fit()
    assert m.eta_ == 0.25 and type(m.eta_) is float
    assert m.n_ == 3 and type(m.n_) is int
    assert Model.eta_.__doc__ == "Learning rate."


def test_a_two_column_target_names_the_multioutput_wrapper():
    """A 2-D target is refused with a pointer to scikit-learn's MultiOutput wrappers, which work:
    their partial_fit learns each column with a copy of the estimator (issue 23)."""
    from sklearn.multioutput import MultiOutputClassifier, MultiOutputRegressor

    from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3))
    Y = np.c_[X[:, 0], X[:, 1] - X[:, 2]]
    for est in (ScaleInvariantRegressor(), ScaleInvariantRegressor().fit(X, Y[:, 0])):
        with pytest.raises(ValueError, match=r"y has 2 columns.*MultiOutputRegressor\(ScaleInvariantRegressor\(\)\)"):
            est.partial_fit(X, Y)
    with pytest.raises(ValueError, match=r"MultiOutputClassifier\(ScaleInvariantClassifier\(\)\)"):
        ScaleInvariantClassifier().fit(X, (Y > 0).astype(int))
    multi = MultiOutputRegressor(ScaleInvariantRegressor())
    multi.partial_fit(X[:25], Y[:25])
    multi.partial_fit(X[25:], Y[25:])
    assert multi.predict(X).shape == (50, 2)
    clf = MultiOutputClassifier(ScaleInvariantClassifier())
    clf.partial_fit(X, (Y > 0).astype(int), classes=[[0, 1], [0, 1]])
    assert clf.predict(X).shape == (50, 2)


def test_warnings_name_the_users_line():
    """A warning given deep inside a call points at the user's line, not skonline's (issue 23)."""
    from skonline.kernel_selection import KernelSelectionRegressor

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    with pytest.warns(UserWarning, match="reached the budget") as record:
        KernelSelectionRegressor(n_components=None, max_support=10).fit(X, X[:, 0])  # the user's line
    assert record[0].filename == __file__


def test_skip_parameter_validation_is_honoured(monkeypatch):
    """Like scikit-learn's estimators, the parameter constraints are not checked under
    ``set_config(skip_parameter_validation=True)`` (and are checked again once it is off)."""
    import sklearn

    from skonline.linear_model import ScaleInvariantRegressor

    calls = []
    monkeypatch.setattr(ScaleInvariantRegressor, "_validate_params", lambda self: calls.append(1))
    X = np.arange(12.0).reshape(6, 2)
    y = np.arange(6.0)
    est = ScaleInvariantRegressor()
    with sklearn.config_context(skip_parameter_validation=True):
        est.fit(X, y)
        est.partial_fit(X, y)
    assert calls == []
    est.partial_fit(X, y)
    assert calls == [1]
    est.partial_fit(X, y)  # unchanged parameters: validated once
    assert calls == [1]


class _ManyArrays(OnlineRegressorMixin, BaseEstimator):
    """A toy state of many small arrays, a large one and float scalars (for nonfinite_state)."""

    _parameter_constraints = {}

    def _allocate(self, chunk):
        for i in range(6):
            setattr(self, f"small{i}_", np.ones(3 + i))
        self.big_ = np.ones(5000)
        self.scalar_ = 1.0
        self.counts_ = np.ones(4, dtype=np.int64)
        self.narrow_ = np.ones(3, dtype=np.float32)

    def _learn(self, chunk):
        return np.zeros(chunk.n_samples)


@pytest.mark.parametrize("bad", ["small0_", "small3_", "small5_", "big_", "scalar_", "narrow_", None])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nonfinite_state_names_the_first_bad_attribute(bad, value):
    """The small float64 arrays are checked together (one pass over their concatenation): the name
    is still that of the first attribute holding a NaN or an inf, in attribute order, whichever
    kind of value holds it, and a finite state gives None."""
    from skonline.base import nonfinite_state

    est = _ManyArrays().partial_fit(np.ones((2, 1)), np.ones(2))
    assert nonfinite_state(est) is None
    if bad is None:
        return
    if bad == "scalar_":
        est.scalar_ = value
    else:
        getattr(est, bad)[-1] = value
    assert nonfinite_state(est) == bad
    est.small4_[0] = np.nan  # a later small array: the first in attribute order is still named
    expected = bad if bad in ("small0_", "small3_") else "small4_"
    assert nonfinite_state(est) == expected
    est.small4_[0] = 1.0
    est.counts_[0] = 2**62  # integer state is not checked
    assert nonfinite_state(est) == bad


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (3, 5), (17, 33), (5, 64)])
def test_compiled_finiteness_scan_finds_every_bad_entry(shape):
    """The compiled scan of large arrays (a branch-free sum of ``v - v``, vectorised): a NaN, +inf
    or -inf at any position is found, in C-ordered arrays and strided views; extreme finite values
    (the largest and smallest doubles, subnormals, -0.0) are not reported."""
    from skonline._atomic import _all_finite_2d

    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    a.flat[::3] = np.finfo(np.float64).max
    a.flat[1::3] = -np.finfo(np.float64).max
    a.flat[2::5] = 5e-324
    a.flat[::7] = -0.0
    assert _all_finite_2d(a)
    # every entry the largest double: a sum reordered across the subtraction, (sum v) - (sum v),
    # would overflow to inf - inf; the scan must not report it
    assert _all_finite_2d(np.full(shape, np.finfo(np.float64).max))
    assert _all_finite_2d(np.full((shape[0], 1000), -np.finfo(np.float64).max))
    wide = np.zeros((shape[0], 2 * shape[1]))
    view = wide[:, ::2]  # strided, as a growth buffer's used block
    view[...] = a
    assert _all_finite_2d(view)
    for bad in (np.nan, np.inf, -np.inf):
        for pos in range(a.size):
            b = a.copy()
            b.flat[pos] = bad
            assert not _all_finite_2d(b), (bad, pos)
            view[...] = b
            assert not _all_finite_2d(view), (bad, pos)


@pytest.mark.parametrize("bad", [None, np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("shape", [(100, 10), (1, 1), (700, 10)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stream_finiteness_check_is_scikit_learns(bad, shape, dtype):
    """The stream fast path's finiteness check (a compiled scan first, for float64 chunks)
    raises exactly what scikit-learn's assert_all_finite raises, and nothing under
    ``assume_finite=True``, as scikit-learn does."""
    import sklearn
    from sklearn.utils import assert_all_finite

    from skonline.utils.validation import _assert_finite

    a = np.ones(shape, dtype=dtype)
    if bad is not None:
        a.flat[a.size // 2] = bad

    def outcome(check):
        try:
            check()
        except ValueError as exc:
            return str(exc)
        return None

    ours = outcome(lambda: _assert_finite(a, "X", NoisyMean()))
    theirs = outcome(lambda: assert_all_finite(a, input_name="X", estimator_name="NoisyMean"))
    assert ours == theirs
    assert (ours is None) == (bad is None)
    with sklearn.config_context(assume_finite=True):
        assert outcome(lambda: _assert_finite(a, "X", NoisyMean())) is None


@pytest.mark.parametrize("layout", ["1d", "C", "F", "strided", "0d", "empty"])
def test_finiteness_dispatch_agrees_with_numpy(layout):
    """``_all_finite`` (contiguous arrays scanned as one row, others as they are) says what
    ``np.isfinite(a).all()`` says, for a NaN, +inf or -inf at every position, whatever the layout."""
    from skonline._atomic import _all_finite

    rng = np.random.default_rng(1)
    base = {"1d": rng.standard_normal(23), "C": rng.standard_normal((7, 6)),
            "F": np.asfortranarray(rng.standard_normal((7, 6))),
            "strided": rng.standard_normal((7, 12))[:, ::2], "0d": np.array(1.5),
            "empty": np.zeros((0, 4))}[layout]
    assert _all_finite(base)
    for bad in (np.nan, np.inf, -np.inf):
        for pos in np.ndindex(base.shape):
            a = base.copy(order="K") if layout != "strided" else base
            keep = a[pos]
            a[pos] = bad
            assert not _all_finite(a), (bad, pos)
            a[pos] = keep
    assert _all_finite(base)


@pytest.mark.parametrize("kind", ["int64", "float64", "int32", "str", "mixed"])
def test_label_positions_is_searchsorted_and_isin(kind):
    """``label_positions``: each value's position in the sorted labels, and the mask of the values
    that are not labels (None when all are), the same from the compiled search (int64 and
    float64 labels of the values' dtype) as from NumPy's searchsorted and isin."""
    from skonline.utils.validation import label_positions

    rng = np.random.default_rng(2)
    labels = np.array([-7, -2, 0, 3, 4, 11, 40])
    values = rng.choice(np.arange(-10, 45), size=400)
    if kind == "float64":
        labels, values = labels.astype(float), values.astype(float)
        values[::37] = np.nan
        values[5] = 3.5
    elif kind == "int32":
        values = values.astype(np.int32)
    elif kind == "str":
        labels, values = labels.astype(str), values.astype(str)
        labels.sort()
    for v in (values, values[np.isin(values, labels)], values[:1], values[:0]):
        idx, missing = label_positions(labels, v)
        expected = ~np.isin(v, labels)
        if expected.any():
            np.testing.assert_array_equal(missing, expected)
        else:
            assert missing is None
        assert idx.dtype == np.int64 and idx.shape == v.shape
        found = ~expected
        np.testing.assert_array_equal(idx[found], np.searchsorted(labels, v[found]))
        assert ((idx >= 0) & (idx < labels.shape[0])).all()
    if kind in ("int64", "float64"):  # the compiled search itself: all found, or the first missing
        from skonline.utils.validation import _sorted_positions

        idx = np.empty(values.shape[0], dtype=np.int64)
        inside = values[np.isin(values, labels)]
        assert _sorted_positions(labels, inside, idx[:inside.shape[0]]) == -1
        np.testing.assert_array_equal(idx[:inside.shape[0]], np.searchsorted(labels, inside))
        first = int(np.flatnonzero(~np.isin(values, labels))[0])
        assert _sorted_positions(labels, values, idx) == first
    if kind == "mixed":  # strings against numbers: all missing
        idx, missing = label_positions(labels, np.array(["a", "b"]))
        assert missing.tolist() == [True, True]
