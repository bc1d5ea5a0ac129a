"""Shared checks run on every public estimator found by ``skonline.utils.all_estimators()``.

* scikit-learn's ``parametrize_with_checks``;
* the five invariants of the streaming contract (``skonline/base.py``, module docstring): chunking
  invariance bit for bit, pickling mid-stream, atomic rejection of a bad chunk, pure predict,
  reproducibility;
* a bad-input battery that must raise a clear error and leave the estimator exactly as it was;
* edge inputs that must simply work.

What each estimator is checked with lives in ``skonline.utils._test_instances`` (as scikit-learn
keeps its own in its test instance generator): the parameter sets to check (``test_params``), a
small stream it accepts (``test_stream(est, rng, n_samples)`` -> ``(X, y, first_call_kwargs)``;
families whose inputs are not (X, y), loss matrices or groups, register theirs), the bad chunks of
its family, whether NaN is data for it and whether it is held to bounded inputs only.
"""

import os
import pickle
import re
import sys
import sysconfig

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.utils.estimator_checks import parametrize_with_checks

import skonline
from skonline.base import Chunk
from skonline.utils import _progress, all_estimators
from skonline.utils import _test_instances as ti

from _helpers import assert_same_state, learned_state

ESTIMATORS = all_estimators()

# the shared checks fit GroupDRO without groups (a single-group model) on purpose: its warning
# about a forgotten `groups` is expected there (tests/dro checks the warning itself)
pytestmark = pytest.mark.filterwarnings(r"ignore:GroupDRO\w+\.\w+ was called without groups:UserWarning")


def _test_instances():
    """Instances to check: every parameter set registered for the class (``ti.test_params``; the
    default construction unless a family registers more, e.g. both invariance modes)."""
    out = []
    for _, cls in ESTIMATORS:
        for params in ti.test_params(cls):
            out.append(cls(**params))
    return out


INSTANCES = _test_instances()
ONLINE = [e for e in INSTANCES if hasattr(e, "partial_fit")]


def _id(est):
    params = {k: v for k, v in est.get_params(deep=False).items() if k in ti.test_param_keys(type(est))}
    return type(est).__name__ + ("(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")" if params else "")


def _expected_failed_checks(est):
    return getattr(est, "_expected_failed_checks", lambda: {})()


@parametrize_with_checks(INSTANCES, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------- helpers
def _stream(est, seed=0, n=60):
    rng = np.random.default_rng(seed)
    return ti.test_stream(est, rng, n_samples=n)


def _responses(est, X):
    out = {}
    for m in ("predict", "decision_function", "predict_proba", "transform"):
        if hasattr(est, m):
            out[m] = getattr(est, m)(X)
    return out


def _chunks(n, sizes):
    i = 0
    for s in sizes:
        if i >= n:
            break
        yield slice(i, min(n, i + s))
        i += s
    if i < n:
        yield slice(i, n)


def _sub(a, sl):
    return None if a is None else a[sl]


def _pfp(est, X, y, **kw):
    """partial_fit_predict where the estimator predicts; otherwise partial_fit (returns None)."""
    if hasattr(est, "partial_fit_predict"):
        return np.asarray(est.partial_fit_predict(X, y, **kw))
    est.partial_fit(X, y, **kw)
    return None


# --------------------------------------------------------------------------- invariants
@pytest.mark.parametrize("est", ONLINE, ids=_id)
def test_chunking_invariance(est):
    """Invariant 1: fit equals partial_fit over any chunking, bit for bit."""
    if getattr(est, "_chunk_dependent", False):
        pytest.skip("documented exception: chunk protocol of online experts")
    X, y, first = _stream(est)
    ref = clone(est).set_params(**_rs(est))
    pred_ref = _pfp(ref, X, y, **first)
    full = clone(ref).fit(X, y, **first)
    assert_same_state(ref, full)
    for sizes in ([1] * 7 + [13, 2], [30, 30], [59, 1]):
        e = clone(ref)
        preds = []
        for k, sl in enumerate(_chunks(X.shape[0], sizes)):
            preds.append(_pfp(e, X[sl], _sub(y, sl), **(first if k == 0 else {})))
        if pred_ref is not None:
            np.testing.assert_array_equal(np.concatenate(preds), pred_ref)
        assert_same_state(e, ref)


def _rs(est):
    return {"random_state": 0} if "random_state" in est.get_params() else {}


@pytest.mark.parametrize("est", ONLINE, ids=_id)
def test_pickle_mid_stream(est):
    """Invariant 2: pickling mid-stream and continuing equals never stopping. (And ``dir()`` of a
    fitted estimator works: scikit-learn's ``__dir__`` probes every attribute with ``hasattr``, as
    dask-ml does, so a property that is not available must raise AttributeError.)"""
    X, y, first = _stream(est)
    a = clone(est).set_params(**_rs(est))
    a.partial_fit(X[:25], _sub(y, slice(0, 25)), **first)
    dir(a)
    b = pickle.loads(pickle.dumps(a))
    pa = _pfp(a, X[25:], _sub(y, slice(25, None)))
    pb = _pfp(b, X[25:], _sub(y, slice(25, None)))
    np.testing.assert_array_equal(pa, pb)
    assert_same_state(a, b)


@pytest.mark.parametrize("est", ONLINE, ids=_id)
def test_pure_prediction_and_reproducibility(est):
    """Invariants 4 and 5: predicting changes nothing; same random_state, same result."""
    X, y, first = _stream(est)
    a = clone(est).set_params(**_rs(est)).fit(X, y, **first)
    before = pickle.dumps(learned_state(a))
    r1 = _responses(a, X)
    r2 = _responses(a, X)
    assert pickle.dumps(learned_state(a)) == before
    for k in r1:
        np.testing.assert_array_equal(r1[k], r2[k])
    b = clone(est).set_params(**_rs(est)).fit(X, y, **first)
    assert_same_state(a, b)


def _bad_chunks(est, X, y):
    """(description, X, y, kwargs) chunks that must be rejected after a good first chunk."""
    Xn = X.copy()
    Xn[3, 0] = np.nan
    Xi = X.copy()
    Xi[5, -1] = np.inf
    bad = [] if ti.allows_nan(est) else [("nan in X", Xn, y, {})]
    bad += [
        ("inf in X", Xi, y, {}),
        ("wrong n_features", X[:, :-1], y, {}),
        ("empty chunk", X[:0], _sub(y, slice(0, 0)), {}),
    ]
    if y is not None:
        bad.append(("X and y lengths differ", X, y[:-1], {}))
        if is_classifier(est):
            yb = y.copy()
            yb[7] = 999
            bad.append(("label outside classes", X, yb, {}))
        elif np.issubdtype(np.asarray(y).dtype, np.floating):
            yn = y.copy()
            yn[2] = np.nan
            bad.append(("nan in y", X, yn, {}))
    return bad + ti.extra_bad_chunks(est, X, y)


@pytest.mark.parametrize("est", ONLINE, ids=_id)
def test_bad_input_changes_nothing(est):
    """Invariant 3 and the bad-input battery: clear error, estimator exactly as it was."""
    X, y, first = _stream(est)
    e = clone(est).set_params(**_rs(est))
    e.partial_fit(X[:30], _sub(y, slice(0, 30)), **first)
    before = pickle.dumps(e)
    ref = pickle.loads(before)
    for what, Xb, yb, kw in _bad_chunks(e, X[30:], _sub(y, slice(30, None))):
        with pytest.raises((ValueError, TypeError, FloatingPointError)) as info:
            e.partial_fit(Xb, yb, **kw)
        assert str(info.value), what
        assert_same_state(e, ref)
        assert pickle.dumps(e) == before, what
    # and a rejected first chunk leaves an unfitted estimator unfitted
    fresh = clone(est)
    Xn = X.copy()
    Xn[0, 0] = np.inf
    with pytest.raises(ValueError):
        fresh.partial_fit(Xn, y, **first)
    assert learned_state(fresh) == {}
    # learning continues exactly as if the bad chunks never came
    np.testing.assert_array_equal(
        _pfp(e, X[30:], _sub(y, slice(30, None))), _pfp(ref, X[30:], _sub(y, slice(30, None)))
    )
    assert_same_state(e, ref)


@pytest.mark.parametrize("est", ONLINE, ids=_id)
def test_edge_inputs(est):
    """A single row, constant and all-zero features, and values near 1e-150 and 1e150 just work."""
    X, y, first = _stream(est)
    e = clone(est).set_params(**_rs(est))
    e.partial_fit(X[:1], _sub(y, slice(0, 1)), **first)
    e.partial_fit(X[1:2], _sub(y, slice(1, 2)))
    for Xe in (np.zeros_like(X), np.ones_like(X), X * 1e-150, X * 1e150):
        if ti.bounded_inputs(est) and np.abs(Xe).max() > 1e6:
            continue
        e2 = clone(est).set_params(**_rs(est))
        p = _pfp(e2, Xe, y, **first)
        if p is not None:
            assert np.all(np.isfinite(np.asarray(p, dtype=float)))
        for r in _responses(e2, Xe).values():
            assert np.all(np.isfinite(np.asarray(r, dtype=float)))


# --------------------------------------------------------------------------- interruptions
#: the files whose lines the interrupt checks count by default: skonline's own and the tests'
_OWN_CODE = (os.path.dirname(os.path.abspath(skonline.__file__)), os.path.dirname(os.path.abspath(__file__)))
#: the standard library's folder (``every_frame='stdlib'``)
_STDLIB = sysconfig.get_paths()["stdlib"]


class _InterruptAt:
    """A trace function raising ``KeyboardInterrupt`` at the k-th line event: what a Ctrl-C does at
    the next bytecode boundary. ``every_frame``: True, in any Python frame (skonline's,
    scikit-learn's, numpy's, the standard library's); ``'stdlib'``, in skonline's, the tests' and
    the standard library's (not the installed packages'); False, in skonline's and the tests' only.

    Library code holds none of skonline's state (a call learns on a working copy that one line of
    skonline's commits), so an interrupt inside a library function reaches skonline's frames as one
    at the line that called it; the libraries' lines (about 3 in 4 of an ensemble's call with a
    scikit-learn expert, 5 in 6 of a column transformer's) only made each check replay more, and the
    replays grow with the square of the lines. The checks interrupt every line of skonline's code
    for every class, every line of every frame for one estimator, and the standard library's lines
    too for the ensemble with its experts in threads (its pool runs the standard library's locks and
    queues)."""

    def __init__(self, k, every_frame=True):
        self.k = k
        self.lines = 0
        self.every_frame = every_frame

    def __call__(self, frame, event, arg):  # global tracer: each new frame gets the local one
        name = frame.f_code.co_filename
        if self.every_frame is True or name.startswith(_OWN_CODE):
            return self._local
        if self.every_frame == "stdlib" and name.startswith(_STDLIB) and "-packages" not in name:
            return self._local
        return None

    def _local(self, frame, event, arg):
        if event == "line":
            self.lines += 1
            if self.lines == self.k:
                sys.settrace(None)
                raise KeyboardInterrupt
        return self._local


def _call_interrupted_at(call, k, every_frame=True):
    """Run ``call()`` with a ``KeyboardInterrupt`` at its k-th Python line; False if it has fewer."""
    trace = _InterruptAt(k, every_frame)
    sys.settrace(trace)
    try:
        call()
    except KeyboardInterrupt:
        pass
    finally:
        sys.settrace(None)
    return trace.lines >= k


def _assert_atomic_under_interrupts(est, call, then, make=None, every_frame=True):
    """Interrupt ``call(e)`` (on a fresh copy ``e`` of ``est``, or ``make()``) at each of its Python
    lines in turn (``every_frame``: see :class:`_InterruptAt`): ``e`` must be exactly as before the
    call or exactly as after it (pickle bytes), and go on learning: ``then(e)`` (after the call is
    repeated if it did not happen) ends as it does for an estimator never interrupted."""
    before = pickle.dumps(pickle.loads(pickle.dumps(est)))  # the bytes of a loaded estimator
    if make is None:
        def make():
            return pickle.loads(before)
    ref = make()
    call(ref)
    after = pickle.dumps(ref)
    then(ref)
    final = pickle.dumps(ref)
    assert after != before
    outcomes = set()
    k = 0
    while True:
        k += 1
        e = make()
        assert pickle.dumps(e) == before
        fired = _call_interrupted_at(lambda: call(e), k, every_frame)
        got = pickle.dumps(e)
        assert got in (before, after), f"interrupted at its line event {k}, the call left a state between"
        outcomes.add(got == after)
        if k % 64 == 1 or not fired:
            if got == before:
                call(e)
            then(e)
            assert pickle.dumps(e) == final, f"after an interrupt at line event {k}, learning went on differently"
        if not fired:
            break
    assert k > (100 if every_frame is True else 20) and outcomes == {False, True}


#: one instance per class (the interrupt checks replay a call once per Python line it runs)
ONE_PER_CLASS = list({type(e): e for e in ONLINE[::-1]}.values())[::-1]


@pytest.mark.parametrize("est", ONE_PER_CLASS, ids=_id)
def test_partial_fit_interrupted_at_any_line_is_all_or_nothing(est):
    """Atomic updates: a KeyboardInterrupt at any Python line of a partial_fit leaves the estimator
    exactly as before the call or exactly as after it, and learning goes on correctly (issue 20)."""
    X, y, first = _stream(est, n=40)
    e = clone(est).set_params(**_rs(est))
    e.partial_fit(X[:20], _sub(y, slice(0, 20)), **first)
    chunk, rest = slice(20, 30), slice(30, 40)
    _assert_atomic_under_interrupts(
        e, lambda f: f.partial_fit(X[chunk], _sub(y, chunk)), lambda f: f.partial_fit(X[rest], _sub(y, rest)),
        every_frame=type(est).__name__ == "ScaleInvariantClassifier",  # one class in every frame too
    )


def test_partial_fit_interrupted_with_recycled_state_is_all_or_nothing():
    """The same where the working copy reuses the previous call's arrays (skonline.utils._recycle:
    scale-invariant Algorithm 1 on a wide sparse stream): the estimator is made by its calls, not
    loaded from a pickle, so that it holds spares when the interrupted call starts."""
    import scipy.sparse as sp

    from skonline.linear_model import ScaleInvariantClassifier
    from skonline.utils import _recycle

    rng = np.random.default_rng(3)
    X = sp.random(40, 3000, density=0.01, format="csr", random_state=4) * 10.0
    y = rng.integers(0, 2, 40)

    def make():
        e = ScaleInvariantClassifier().partial_fit(X[:10], y[:10], classes=[0, 1])
        e.partial_fit(X[10:20], y[10:20])
        assert _recycle._SPARES.get(e)
        return e

    _assert_atomic_under_interrupts(
        make(), lambda f: f.partial_fit(X[20:30], y[20:30]), lambda f: f.partial_fit(X[30:], y[30:]), make=make
    )


#: fit runs partial_fit's code from an empty state: checked on a growing model, the pipeline, and
#: the estimators (one configuration per class) that fit without partial_fit
_FIT_INTERRUPTED = list({type(e): e for e in INSTANCES[::-1] if not hasattr(e, "partial_fit")}.values())[::-1] + [
    e for e in ONE_PER_CLASS if type(e).__name__ in ("KernelAWVRegressor", "OnlinePipeline")
]


@pytest.mark.parametrize("est", _FIT_INTERRUPTED, ids=_id)
def test_fit_interrupted_at_any_line_is_all_or_nothing(est):
    """The same for ``fit`` on a fitted estimator: a growing model, the online pipeline, the fixed
    feature maps (their ``fit`` draws or sets up the map) and GroupDRO's pooled fit."""
    if ti.test_stream_key(est) is not None:
        X, y, first = _stream(est, n=40)
        X_new, y_new = X[20:], y[20:]
    else:  # a data-independent map: it changes with the number of features
        X, y, first = np.random.default_rng(0).standard_normal((40, 4)), None, {}
        X_new, y_new = X[20:, :3], None
    e = clone(est).set_params(**_rs(est)).fit(X[:20], _sub(y, slice(0, 20)), **first)
    _assert_atomic_under_interrupts(
        e, lambda f: f.fit(X_new, y_new, **first), lambda f: f.fit(X[:20], _sub(y, slice(0, 20)), **first),
        every_frame=False,
    )


# --------------------------------------------------------------------------- display
@pytest.mark.parametrize("est", INSTANCES, ids=_id)
def test_html_repr(est):
    """Every estimator displays in Jupyter (``estimator_html_repr`` parses the numpydoc docstring),
    on its own, fitted, and inside a pipeline (issue 12)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer
    from sklearn.utils import estimator_html_repr

    html = estimator_html_repr(est)
    assert type(est).__name__ in html
    assert type(est).__name__ in estimator_html_repr(make_pipeline(FunctionTransformer(), clone(est)))


# --------------------------------------------------------------------------- random_state
RANDOM = [e for e in INSTANCES if "random_state" in e.get_params(deep=False)]


@pytest.mark.parametrize("est", RANDOM, ids=_id)
@pytest.mark.parametrize(
    "random_state",
    [None, 0, np.random.RandomState(0), np.random.default_rng(0)],
    ids=["None", "int", "RandomState", "Generator"],
)
def test_random_state_kinds(est, random_state):
    """Every estimator with ``random_state`` accepts an int, None, a RandomState and a Generator,
    and ``clone`` keeps it (issue 12)."""
    import copy

    if hasattr(est, "partial_fit") or ti.test_stream_key(est) is not None:
        X, y, first = _stream(est)
    else:
        X, y, first = np.random.default_rng(0).standard_normal((60, 4)), None, {}
    e = clone(est).set_params(random_state=copy.deepcopy(random_state))
    c = clone(e)
    assert type(c.random_state) is type(random_state)
    for m in (e, c):
        _pfp(m, X, y, **first) if hasattr(m, "partial_fit") else m.fit(X, y)
    if random_state is not None:  # a clone starts from the same seed / generator state
        for m, v in _responses(e, X).items():
            np.testing.assert_array_equal(v, _responses(c, X)[m], err_msg=m)


# --------------------------------------------------------------------------- ties
CLASSIFIERS = [e for e in ONLINE if is_classifier(e) and not hasattr(e, "steps")]  # a pipeline: its final step


@pytest.mark.parametrize("est", CLASSIFIERS, ids=_id)
def test_tie_rule(est):
    """One rule for a decision of exactly 0, scikit-learn's: ``> 0`` -> classes_[1], else
    classes_[0]; in predict, in the prequential predictions and in n_mistakes_ (issue 12)."""
    X, y, first = _stream(est)
    e = clone(est).set_params(**_rs(est))
    e.partial_fit(X, y, **first)
    if not hasattr(e, "decision_function"):  # mixes probabilities: a tie is the first class
        flat = np.full((3, e.classes_.shape[0]), 1.0 / e.classes_.shape[0])
        assert (e._response(flat, "predict") == e.classes_[0]).all()
        return
    zeros = np.zeros((3, 1))
    assert (e._labels_from_decision(zeros) == e.classes_[0]).all()
    assert (e._labels_from_decision(zeros.ravel()) == e.classes_[0]).all()
    before = e.n_mistakes_
    e._update_metrics(Chunk(3, y_index=np.array([0, 1, 1])), zeros)
    assert e.n_mistakes_ == before + 2
    if hasattr(e, "_raw_decision"):  # predict on decisions of exactly 0
        e._raw_decision = lambda X_: np.zeros((X_.shape[0], 1))
        assert (e.predict(X[:3]) == e.classes_[0]).all()
    if hasattr(est, "partial_fit_decision_function"):  # prequential: the same rule
        a = clone(est).set_params(**_rs(est))
        b = clone(a)
        dec = a.partial_fit_decision_function(X, y, **first)
        pred = b.partial_fit_predict(X, y, **first)
        np.testing.assert_array_equal(pred, np.where(dec > 0, a.classes_[1], a.classes_[0]))
        assert b.n_mistakes_ == np.count_nonzero(pred != y)


# --------------------------------------------------------------------------- dtypes
TRANSFORMERS = [e for e in INSTANCES if hasattr(e, "transform")]


@pytest.mark.parametrize("est", TRANSFORMERS, ids=_id)
def test_transformers_preserve_float32(est):
    """float32 in, float32 out (as RBFSampler), computed in float64; float64 stays float64 (issue 12)."""
    assert est.__sklearn_tags__().transformer_tags.preserves_dtype == ["float64", "float32"]
    if hasattr(est, "partial_fit"):
        X, y, first = _stream(est)
    else:
        X, y, first = np.random.default_rng(0).standard_normal((60, 4)), None, {}
    e = clone(est).set_params(**_rs(est)).fit(X, y, **first)
    Z64 = e.transform(X)
    Z32 = e.transform(X.astype(np.float32))
    assert Z64.dtype == np.float64 and Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, e.transform(X.astype(np.float32).astype(np.float64)).astype(np.float32))
    np.testing.assert_allclose(Z32, Z64, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------- sample_weight
# an online pipeline hands sample_weight to its final step (tests/test_pipeline.py)
_STEPS = [e for e in ONLINE if hasattr(e, "steps")]
WEIGHTED = [e for e in ONLINE if getattr(e, "_supports_sample_weight", False) and e not in _STEPS]
UNWEIGHTED = [e for e in ONLINE if not getattr(e, "_supports_sample_weight", False) and e not in _STEPS]


@pytest.mark.parametrize("est", UNWEIGHTED, ids=_id)
def test_sample_weight_unsupported_is_a_clear_error(est):
    X, y, first = _stream(est)
    e = clone(est).set_params(**_rs(est))
    with pytest.raises(TypeError, match=f"{type(est).__name__} does not support sample_weight"):
        e.fit(X, y, sample_weight=np.ones(X.shape[0]), **first)
    assert not hasattr(e, "n_samples_seen_")


@pytest.mark.parametrize("est", WEIGHTED, ids=_id)
def test_sample_weight_contract(est):
    """Ones equal no weights bit for bit; weights keep chunking invariance; bad weights are
    rejected before any state change; sample_weight is routable (issue 12)."""
    import sklearn

    X, y, first = _stream(est)
    n = X.shape[0]
    ref = clone(est).set_params(**_rs(est))
    a = clone(ref).fit(X, y, **first)
    b = clone(ref).fit(X, y, sample_weight=np.ones(n), **first)
    assert_same_state(a, b)
    w = np.random.default_rng(1).uniform(0, 3, n)
    w[::7] = 0.0
    full = clone(ref)
    pred_full = _pfp(full, X, y, sample_weight=w, **first)
    if not getattr(est, "_chunk_dependent", False):
        e = clone(ref)
        preds = [_pfp(e, X[sl], y[sl], sample_weight=w[sl], **(first if k == 0 else {}))
                 for k, sl in enumerate(_chunks(n, [1] * 5 + [13, 2, 30]))]
        assert_same_state(e, full)
        if pred_full is not None:
            np.testing.assert_array_equal(np.concatenate(preds), pred_full)
    for bad, match in [(w[:-1], "shape"), (np.where(np.arange(n) == 3, np.nan, w), "finite"),
                       (-w - 1, "non-negative")]:
        e = pickle.loads(pickle.dumps(full))
        before = pickle.dumps(e)
        with pytest.raises(ValueError, match=match):
            e.partial_fit(X, y, sample_weight=bad)
        assert pickle.dumps(e) == before
    with pytest.raises(ValueError, match="non-zero"):
        clone(ref).fit(X, y, sample_weight=np.zeros(n), **first)
    with sklearn.config_context(enable_metadata_routing=True):
        routing = clone(ref).set_fit_request(sample_weight=True).set_partial_fit_request(sample_weight=True)
        requests = routing.get_metadata_routing()
        assert requests.fit.requests["sample_weight"] is True
        assert requests.partial_fit.requests["sample_weight"] is True


# --------------------------------------------------------------------------- progress (issue 23)
_PROGRESS_LINE = re.compile(
    r"^\[(?P<name>\w+)\] (epoch \S+ \| )?rows (?P<rows>[\d,]+) \| [\d,]+ rows/s \(last (?P<last>[\d,]+) rows\)"
    r"( \| [a-z ]+ \S+)*$"
)


def _check_progress(lines, name):
    """Every line is in the shared format, names the estimator, and its rate is over the rows
    learned since the previous line (of one call starting from no rows)."""
    assert lines
    before = 0
    for line in lines:
        m = _PROGRESS_LINE.match(line)
        assert m and m["name"] == name, line
        rows, last = (int(m[k].replace(",", "")) for k in ("rows", "last"))
        assert last == rows - before > 0, lines
        before = rows


def test_every_online_estimator_takes_verbose():
    """``verbose=0`` (quiet) on every estimator that learns from a stream; the online pipeline keeps
    scikit-learn's boolean ``verbose``."""
    missing = [type(e).__name__ for e in ONLINE if e.get_params(deep=False).get("verbose", None) is None]
    assert not missing
    assert all(e.get_params(deep=False)["verbose"] in (0, False) for e in ONLINE)


@pytest.mark.parametrize("est", [e for e in ONE_PER_CLASS if not hasattr(e, "steps")], ids=_id)
def test_verbose_prints_the_shared_format_and_changes_nothing(est, capsys, monkeypatch):
    """verbose=2 learns in blocks of rows (7 here) and prints one line per block in the shared
    format; the model, its predictions and the prequential outputs are those of verbose=0 bit for
    bit (fit and partial_fit)."""
    monkeypatch.setattr(_progress, "BLOCK_ROWS", (25, 7))
    X, y, first = _stream(est)
    quiet = clone(est).set_params(**_rs(est))
    loud = clone(quiet).set_params(verbose=2)
    pred_quiet, pred_loud = _pfp(quiet, X, y, **first), _pfp(loud, X, y, **first)
    if pred_quiet is not None:
        np.testing.assert_array_equal(pred_loud, pred_quiet)
    assert_same_state(loud, quiet)
    lines = capsys.readouterr().out.splitlines()
    # an ensemble whose experts follow the chunk protocol learns the chunk in one block
    one_block = getattr(est, "_chunk_dependent", False) and hasattr(est, "estimators")
    n_lines = 1 if one_block else -(-X.shape[0] // 7)
    assert len(lines) == n_lines, lines
    _check_progress(lines, type(est).__name__)
    quiet.fit(X, y, **first)
    loud.fit(X, y, **first)
    assert_same_state(loud, quiet)
    for k, v in _responses(quiet, X).items():
        np.testing.assert_array_equal(_responses(loud, X)[k], v, err_msg=k)
    _check_progress(capsys.readouterr().out.splitlines(), type(est).__name__)
    quiet.partial_fit(X[:5], _sub(y, slice(0, 5)))
    assert capsys.readouterr().out == ""  # quiet by default


# --------------------------------------------------------------------------- CSR and dense rows
# One model for the same rows whatever their container (issue 21): every estimator that takes rows
# of numeric features accepts CSR, and the same rows as CSR or dense give the same model and the
# same outputs (to round-off); a stream may mix both. Not feature rows: the expert rules and matrix
# prediction (rows of expert losses, loss matrices) and the estimators that take tables of raw
# columns (encoders, imputer, column transformer: they refuse CSR with a clear TypeError).
def _feature_rows(est):
    from skonline.experts._rules import _BaseRule

    other = ("_matrix", "_encoders", "_imputer", "_column_transformer")
    return not isinstance(est, _BaseRule) and type(est).__module__.rsplit(".", 1)[-1] not in other


ROWS = [e for e in INSTANCES if _feature_rows(e)]


def _sparse_stream(est):
    """A stream of the estimator with about half of its feature values zero (dense ndarray)."""
    if ti.test_stream_key(est) is not None:
        X, y, first = _stream(est)
    else:
        X, y, first = np.random.default_rng(0).standard_normal((60, 4)), None, {}
    X = np.where(np.random.default_rng(1).random(X.shape) < 0.5, 0.0, X)
    return np.ascontiguousarray(X), y, first


def _outputs(est, X):
    import scipy.sparse as sp

    return {k: (v.toarray() if sp.issparse(v) else np.asarray(v, dtype=float)) for k, v in _responses(est, X).items()}


def _assert_outputs_close(a, b):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-12, atol=1e-12, err_msg=k)


@pytest.fixture(params=["narrow", "wide"])
def row_width(request, monkeypatch):
    """'wide': the container rule's width threshold lowered to 2 features and its densified blocks
    to 7 rows of 4 features, so the small streams take the wide path (CSR rows, densified block by
    block for the dense algorithms)."""
    from skonline.utils import _scaling

    if request.param == "wide":
        monkeypatch.setattr(_scaling, "WIDE_FEATURES", 2)
        monkeypatch.setattr(_scaling, "DENSIFY_BYTES", 7 * 8 * 4)
    return request.param


@pytest.mark.parametrize("est", ROWS, ids=_id)
def test_csr_and_dense_rows_give_one_model(est, row_width):
    """The same rows as CSR or dense: the same prequential outputs and the same outputs (fitted on
    either, asked on either), to round-off (issue 21)."""
    import scipy.sparse as sp

    X, y, first = _sparse_stream(est)
    Xs = sp.csr_matrix(X)
    ref = clone(est).set_params(**_rs(est))
    a, b = clone(ref), clone(ref)
    if hasattr(est, "partial_fit"):
        pa, pb = _pfp(a, X, y, **first), _pfp(b, Xs, y, **first)
        if pa is not None and pa.dtype.kind == "f":
            np.testing.assert_allclose(pa, pb, rtol=1e-12, atol=1e-12)
        elif pa is not None:  # labels
            np.testing.assert_array_equal(pa, pb)
    else:
        a.fit(X, y, **first)
        b.fit(Xs, y, **first)
    out = _outputs(a, X)
    _assert_outputs_close(out, _outputs(b, Xs))
    _assert_outputs_close(out, _outputs(b, X))
    _assert_outputs_close(out, _outputs(a, Xs))


@pytest.mark.parametrize("est", [e for e in ROWS if hasattr(e, "partial_fit")], ids=_id)
def test_stream_mixing_csr_and_dense_rows(est, row_width):
    """A stream whose chunks come dense, then CSR, then dense learns what the dense stream learns
    (one rule for every estimator: the container is decided from the width of the stream)."""
    import scipy.sparse as sp

    X, y, first = _sparse_stream(est)
    ref = clone(est).set_params(**_rs(est))
    a, b = clone(ref), clone(ref)
    for k, sl in enumerate(_chunks(X.shape[0], [20, 25])):
        kw = first if k == 0 else {}
        a.partial_fit(X[sl], _sub(y, sl), **kw)
        b.partial_fit(sp.csr_matrix(X[sl]) if k == 1 else X[sl], _sub(y, sl), **kw)
    _assert_outputs_close(_outputs(a, X), _outputs(b, X))
