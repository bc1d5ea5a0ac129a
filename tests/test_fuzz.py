"""Hypothesis fuzzing of every online estimator with hostile chunks (issue 11, "Acceptance").

For every estimator found by ``skonline.utils.all_estimators()`` (every configuration listed in its
``skonline.utils._test_instances.test_params``), starting from a model fitted on a clean prefix of
its stream (``test_stream``):

* extreme finite floats (scales 1e-300 .. 1e300, subnormals, one huge row, one huge column, mixed
  per-entry exponents, huge targets for regressors);
* bad chunks (NaN or inf at a random place, wrong width, empty, X/y length mismatch, labels outside
  ``classes``, complex X or y, strings);
* malformed sparse input, for estimators whose tags accept sparse input (out-of-range or negative
  indices, broken ``indptr``, length mismatches, float indices); unsorted or duplicate indices are
  valid and must mean what ``toarray()`` means.

The contract checked on every example: no crash; a chunk is either learned, leaving every float
array and scalar of the state finite (and its prequential outputs and predictions finite, or
``predict`` raising a clear error), or rejected with a ``ValueError`` / ``TypeError`` /
``FloatingPointError`` that has a message, leaving the estimator exactly as it was (same pickle),
so that a clean chunk afterwards is learned exactly as if the bad one never came.

Estimators whose algorithms cannot represent inputs beyond a documented bound (class attribute
``bounded_inputs``: AWV on raw features, the expert rules and PCSP on bounded losses) are held to
the same contract: they may reject extreme inputs, never return NaN.

Runs deterministically (``derandomize=True``) with few examples per estimator, so that CI stays fast.
"""

import os
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone, is_classifier, is_regressor
from test_common import ONLINE, _id, _rs

from skonline.base import nonfinite_state
from skonline.utils import _test_instances as ti

REJECT = (ValueError, TypeError, FloatingPointError)
N_PREFIX, N_CHUNK = 20, 20

FUZZ = settings(
    max_examples=int(os.environ.get("SKONLINE_FUZZ_EXAMPLES", 6)),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)



def _nonfinite(e):
    """``nonfinite_state`` of an estimator, or of every fitted step of an online pipeline."""
    if hasattr(e, "steps"):
        for name, step in e.steps:
            if hasattr(step, "_state_keys") and step._is_initialized():
                what = nonfinite_state(step)
                if what is not None:
                    return f"{name}.{what}"
        return None
    return nonfinite_state(e)

def _setup(est):
    X, y, first = ti.test_stream(est, np.random.default_rng(0), n_samples=N_PREFIX + 2 * N_CHUNK)
    e = clone(est).set_params(**_rs(est))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.partial_fit(X[:N_PREFIX], None if y is None else y[:N_PREFIX], **first)
    cut = slice(N_PREFIX, N_PREFIX + N_CHUNK)
    clean = slice(N_PREFIX + N_CHUNK, None)
    return e, X[cut], None if y is None else y[cut], X[clean], None if y is None else y[clean]


def _finite(a):
    a = np.asarray(a)
    return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())


def _responses_finite_or_clear(e, X):
    for m in ("predict", "decision_function", "predict_proba", "transform"):
        if not hasattr(e, m):
            continue
        before = pickle.dumps(e)
        try:
            out = getattr(e, m)(X)
        except (ValueError, FloatingPointError) as exc:
            assert str(exc), m
        else:
            assert _finite(out), f"{m} returned NaN or inf without an error"
        assert pickle.dumps(e) == before, f"{m} changed the estimator"


def _learn(e, X, y):
    if hasattr(e, "partial_fit_predict"):
        return e.partial_fit_predict(X, y)
    e.partial_fit(X, y)
    return None


def _check_chunk(e, X, y, Xclean, yclean, *, must_reject=False):
    """The contract for one hostile chunk (see the module docstring)."""
    before = pickle.dumps(e)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = _learn(e, X, y)
        except REJECT as exc:
            assert str(exc), "an error without a message"
            assert pickle.dumps(e) == before, "a rejected chunk changed the estimator"
            if not must_reject:  # extreme rows: predicting them is finite or a clear error too
                _responses_finite_or_clear(e, X)
            ref = pickle.loads(before)
            try:
                a = _learn(e, Xclean, yclean)
            except REJECT:
                assert pickle.dumps(e) == before
                return
            b = _learn(ref, Xclean, yclean)
            if a is not None:
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
            assert pickle.dumps(e) == pickle.dumps(ref), "the rejected chunk left a trace"
            return
        assert not must_reject, "a malformed chunk was accepted"
        assert _nonfinite(e) is None, f"non-finite state: {_nonfinite(e)}"
        if out is not None:
            assert _finite(out), "prequential outputs NaN or inf"
        _responses_finite_or_clear(e, X)
        # the model is not poisoned: a clean chunk is learned or cleanly rejected
        mid = pickle.dumps(e)
        try:
            _learn(e, Xclean, yclean)
        except REJECT as exc:
            assert str(exc) and pickle.dumps(e) == mid
        else:
            assert _nonfinite(e) is None
            _responses_finite_or_clear(e, Xclean)


# --------------------------------------------------------------------------- extreme floats
_SUBNORMAL = st.sampled_from([5e-324, 3.5e-323, 1e-310, 2.2e-308])
_SCALE = st.one_of(st.integers(-300, 300).map(lambda k: 10.0 ** k), _SUBNORMAL)


@st.composite
def _extreme(draw, X, y, regressor):
    X = np.array(X, dtype=np.float64)
    y = None if y is None else np.array(y)
    n, d = X.shape
    kind = draw(st.sampled_from(["all", "row", "column", "mixed", "sign", "target"]))
    s = draw(_SCALE)
    if kind == "all":
        X = X * s
    elif kind == "row":
        X[draw(st.integers(0, n - 1))] *= s
    elif kind == "column":
        X[:, draw(st.integers(0, d - 1))] *= s
    elif kind == "mixed":
        exps = draw(st.lists(st.integers(-300, 300), min_size=n * d, max_size=n * d))
        X = X * (10.0 ** np.array(exps, dtype=np.float64)).reshape(n, d)
    elif kind == "sign":
        X = np.where(X >= 0, s, -s) * np.abs(np.sign(X))
    elif kind == "target" and regressor and y is not None and y.dtype.kind == "f":
        y = y * s
    else:
        X = X * s
    return X, y


@pytest.mark.parametrize("est", ONLINE, ids=_id)
def test_fuzz_extreme_floats(est):
    e0, X, y, Xc, yc = _setup(est)
    state0 = pickle.dumps(e0)

    @FUZZ
    @given(data=st.data())
    def run(data):
        e = pickle.loads(state0)
        Xe, ye = data.draw(_extreme(X, y, is_regressor(est)))
        _check_chunk(e, Xe, ye, Xc, yc)

    run()


# --------------------------------------------------------------------------- bad chunks
def _bad_kinds(est, y):
    kinds = ["inf", "wrong_width", "empty", "complex_X"]
    if not est.__sklearn_tags__().input_tags.string:  # the encoders take strings: categories
        kinds.append("strings")
    if not ti.allows_nan(est):
        kinds.append("nan")
    if y is not None:
        kinds += ["length", "complex_y"]
        if is_classifier(est):
            kinds.append("label")
        elif np.asarray(y).dtype.kind == "f":
            kinds.append("nan_y")
    return kinds


@st.composite
def _bad(draw, est, X, y):
    X = np.array(X, dtype=np.float64)
    y = None if y is None else np.array(y)
    n, d = X.shape
    kind = draw(st.sampled_from(_bad_kinds(est, y)))
    i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))
    if kind == "nan":
        X[i, j] = np.nan
    elif kind == "inf":
        X[i, j] = draw(st.sampled_from([np.inf, -np.inf]))
    elif kind == "wrong_width":
        k = draw(st.sampled_from([-1, 1, 3]))
        X = X[:, : d + k] if k < 0 else np.hstack([X, np.ones((n, k))])
    elif kind == "empty":
        X = X[:0]
        y = None if y is None else y[:0]
    elif kind == "complex_X":
        X = X.astype(complex)
        X[i, j] += 1j
    elif kind == "strings":
        X = X.astype(object)
        X[i, j] = "a"
    elif kind == "length":
        y = y[: draw(st.integers(0, n - 1))] if draw(st.booleans()) else np.concatenate([y, y[:1]])
    elif kind == "complex_y":
        y = y.astype(complex)
        y[i] += 1j
    elif kind == "label":
        y = y.copy()
        y[i] = 999
    elif kind == "nan_y":
        y = y.copy()
        y[i] = np.nan
    return kind, X, y


@pytest.mark.parametrize("est", ONLINE, ids=_id)
def test_fuzz_bad_chunks_rejected_and_nothing_changes(est):
    e0, X, y, Xc, yc = _setup(est)
    state0 = pickle.dumps(e0)

    @FUZZ
    @given(data=st.data())
    def run(data):
        e = pickle.loads(state0)
        kind, Xb, yb = data.draw(_bad(est, X, y))
        _check_chunk(e, Xb, yb, Xc, yc, must_reject=True)

    run()


# --------------------------------------------------------------------------- malformed sparse
def _accepts_sparse(est):
    try:
        return bool(est.__sklearn_tags__().input_tags.sparse)
    except AttributeError:
        return False


SPARSE = [e for e in ONLINE if _accepts_sparse(e)]


@st.composite
def _malformed(draw, X):
    X = np.array(X, dtype=np.float64)
    X[np.abs(X) < 0.5] = 0.0  # some structure
    A = sp.csr_matrix(X)
    n, d = A.shape
    nnz = A.nnz
    kind = draw(st.sampled_from([
        "index_high", "index_negative", "index_int64_huge", "indptr_decrease", "indptr_short",
        "indptr_long", "indptr_start", "indptr_end", "data_short", "float_indices", "unsorted",
        "duplicate",
    ]))
    k = draw(st.integers(0, max(nnz - 1, 0)))
    r = draw(st.integers(1, n - 1))
    if kind == "index_high":
        A.indices[k] = draw(st.integers(d, d + 1000))
    elif kind == "index_negative":
        A.indices[k] = draw(st.integers(-(2**31), -1))
    elif kind == "index_int64_huge":
        A.indices = A.indices.astype(np.int64)
        A.indices[k] = draw(st.integers(2**31, 2**62))
    elif kind == "indptr_decrease":
        A.indptr[r] = A.indptr[r - 1] - draw(st.integers(1, 5))
    elif kind == "indptr_short":
        A.indptr = A.indptr[:-1]
    elif kind == "indptr_long":
        A.indptr = np.append(A.indptr, A.indptr[-1])
    elif kind == "indptr_start":
        A.indptr = A.indptr + draw(st.integers(1, 3))
    elif kind == "indptr_end":
        A.indptr[-1] += draw(st.sampled_from([-1, 1, 1000]))
    elif kind == "data_short":
        A.data = A.data[:-1]
    elif kind == "float_indices":
        A.indices = A.indices.astype(np.float64)
    elif kind in ("unsorted", "duplicate"):
        rows = [i for i in range(n) if A.indptr[i + 1] - A.indptr[i] >= 2]
        if not rows:
            return "valid", A, X
        i = draw(st.sampled_from(rows))
        a, b = A.indptr[i], A.indptr[i + 1]
        if kind == "unsorted":
            A.indices[a:b] = A.indices[a:b][::-1].copy()
            A.data[a:b] = A.data[a:b][::-1].copy()
            return "valid", A, X
        data = np.insert(A.data, a, A.data[a] / 2)
        data[a + 1] /= 2
        indices = np.insert(A.indices, a, A.indices[a])
        indptr = A.indptr.copy()
        indptr[i + 1:] += 1
        return "valid", sp.csr_matrix((data, indices, indptr), shape=(n, d)), X
    return kind, A, X


@pytest.mark.skipif(not SPARSE, reason="no estimator accepts sparse input")
@pytest.mark.parametrize("est", SPARSE, ids=_id)
def test_fuzz_malformed_sparse_rejected_before_any_state_change(est):
    e0, X, y, Xc, yc = _setup(est)
    state0 = pickle.dumps(e0)

    @FUZZ
    @given(data=st.data())
    def run(data):
        kind, A, Xd = data.draw(_malformed(X))
        e = pickle.loads(state0)
        if kind == "valid":  # unsorted / duplicate indices: the same as the dense matrix
            ref = pickle.loads(state0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a, b = _learn(e, A, y), _learn(ref, Xd, y)
            if a is not None:
                np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                           rtol=1e-9, atol=1e-12)
            return
        _check_chunk(e, A, y, Xc, yc, must_reject=True)
        for m in ("predict", "decision_function", "transform"):
            if hasattr(e, m):
                with pytest.raises(ValueError, match="Malformed sparse input"):
                    getattr(e, m)(A)

    run()
