"""The ensembles with no arguments (issue 22): the default experts, exact prequential aggregation
with skonline experts, the charge of experts that give labels only, and the online calibration
of decision classifiers (skonline.utils._calibration)."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression, Perceptron, SGDRegressor
from sklearn.model_selection import GridSearchCV, KFold

from skonline.experts import (
    PCS,
    FixedShare,
    OnlineEnsembleClassifier,
    OnlineEnsembleRegressor,
    default_estimators,
)
from skonline.kernel_ridge import PKAWVClassifier
from skonline.linear_model import ScaleInvariantClassifier
from skonline.utils import _calibration
from skonline.utils._jit import njit


def _classification(n=600, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    if n_classes == 2:
        y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.standard_normal(n) > 0.5).astype(int)
    else:
        y = np.argmax(X[:, :n_classes] + 0.3 * rng.standard_normal((n, n_classes)), axis=1)
    return X, y


def _regression(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    return X, 5.0 + X[:, 0] + np.sin(2.0 * X[:, 1]) + 0.1 * rng.standard_normal(n)


# --------------------------------------------------------------------------- the default experts
@pytest.mark.parametrize("cls", [OnlineEnsembleClassifier, OnlineEnsembleRegressor])
def test_no_arguments_resolves_the_default_experts_into_fitted_attributes(cls):
    ens = cls(random_state=0)
    assert ens.get_params()["estimators"] is None
    X, y = _classification() if cls is OnlineEnsembleClassifier else _regression()
    ens.fit(X, y)
    task = "classifier" if cls is OnlineEnsembleClassifier else "regressor"
    names = [name for name, _ in default_estimators(task)]
    assert ens.expert_names_ == names
    assert list(ens.named_estimators_) == names
    assert [type(e) for e in ens.estimators_] == [type(e) for _, e in default_estimators(task)]
    assert ens.estimators is None  # the parameter is never changed
    assert ens.weights_.shape == (len(names),)
    # seeded experts: one integer each from random_state; None leaves them unseeded
    seeds = [e.random_state for e in ens.estimators_ if "random_state" in e.get_params()]
    assert all(isinstance(s, int) for s in seeds) and len(set(seeds)) == len(seeds)
    assert all(e.random_state is None for _, e in default_estimators(task) if "random_state" in e.get_params())


@pytest.mark.parametrize("chunks", [[1] * 5 + [17, 3, 575], [250, 1, 349], [600]])
@pytest.mark.parametrize("cls", [OnlineEnsembleClassifier, OnlineEnsembleRegressor])
def test_default_ensemble_is_exactly_prequential_and_chunk_invariant(cls, chunks):
    X, y = _classification(n_classes=3) if cls is OnlineEnsembleClassifier else _regression()
    kw = {"classes": [0, 1, 2]} if cls is OnlineEnsembleClassifier else {}
    method = "partial_fit_predict_proba" if cls is OnlineEnsembleClassifier else "partial_fit_predict"
    ref = cls(random_state=0)
    expected = getattr(ref, method)(X, y, **kw)
    ens, out, i = cls(random_state=0), [], 0
    for k, c in enumerate(chunks):
        if k == 1:  # pickled mid-stream
            ens = pickle.loads(pickle.dumps(ens))
        out.append(getattr(ens, method)(X[i:i + c], y[i:i + c], **(kw if k == 0 else {})))
        i += c
    np.testing.assert_array_equal(np.concatenate(out), expected)
    np.testing.assert_array_equal(ens.weights_, ref.weights_)
    # each row's prediction is made before the row is learned: a changed target at row t changes
    # nothing before t
    t = 400
    y2 = y.copy()
    y2[t] = (y2[t] + 1) % 3 if cls is OnlineEnsembleClassifier else y2[t] + 50.0
    other = getattr(cls(random_state=0), method)(X, y2, **kw)
    np.testing.assert_array_equal(other[:t + 1], expected[:t + 1])
    assert not np.array_equal(other[t + 1:], expected[t + 1:])


def test_default_experts_are_never_changed_in_place():
    """skonline experts learn on their own working copy, which replaces them in the ensemble's: the
    committed ensemble's experts are untouched by a call, including one that fails."""
    X, y = _classification()
    ens = OnlineEnsembleClassifier(random_state=0).fit(X[:300], y[:300])
    before = [pickle.dumps(e) for e in ens.estimators_]
    experts = list(ens.estimators_)
    with pytest.raises(ValueError):
        ens.partial_fit(np.vstack([X[300:310], [[np.nan] * 4]]), np.r_[y[300:310], 0])
    ens.partial_fit(X[300:], y[300:])
    assert [pickle.dumps(e) for e in experts] == before
    assert all(a is not b for a, b in zip(experts, ens.estimators_))


def test_default_expert_notes_are_silent():
    """The default experts' notes about their own settings (here: kernel selection's advice for a
    short multiclass stream, which a user of the ensemble cannot act on) are not shown; the ensemble's
    own warnings are."""
    X, y = _classification(n=150, n_classes=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OnlineEnsembleClassifier(random_state=0).partial_fit(X, y, classes=[0, 1, 2])
    from skonline.kernel_selection import KernelSelectionClassifier

    with pytest.warns(UserWarning, match="short multiclass stream"):
        OnlineEnsembleClassifier([("ks", KernelSelectionClassifier(feedback="bandit", random_state=0))]).partial_fit(
            X, y, classes=[0, 1, 2])


def test_grid_search_over_estimators_and_the_default_rule():
    X, y = _regression(n=300)
    grid = {"estimators": [None, [("sgd", SGDRegressor(random_state=0))]], "rule__eta": [0.5, "adaptive"]}
    gs = GridSearchCV(OnlineEnsembleRegressor(random_state=0), grid, cv=KFold(3)).fit(X, y)
    assert set(gs.best_params_) == {"estimators", "rule__eta"}
    assert isinstance(gs.best_estimator_.rule, FixedShare)
    c = clone(OnlineEnsembleRegressor(rule=PCS(), random_state=1))
    assert c.estimators is None and c.random_state == 1 and isinstance(c.rule, PCS)
    ens = OnlineEnsembleRegressor().set_params(estimators=[("sgd", SGDRegressor())], sgd__alpha=0.1)
    assert ens.estimators[0][1].alpha == 0.1


# --------------------------------------------------------------------------- labels-only experts
def test_an_expert_without_probabilities_keeps_the_weight_it_earns():
    """A better expert that gives labels only is charged the probability its own mistake rate earns:
    the log loss hands the weight to it, not to a worse expert with probabilities (a one-hot row
    would cost it -log(1e-15) = 34.5 per mistake)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 3))
    y = (X[:, 0] + 0.4 * rng.standard_normal(3000) > 0).astype(int)  # ~13 % Bayes error
    good = FrozenEstimator(Perceptron(random_state=0).fit(X, y))  # labels only, ~85 % accurate
    worse = FrozenEstimator(LogisticRegression().fit(X, rng.permutation(y)))  # probabilities, ~50 %
    assert not hasattr(good, "predict_proba")
    ens = OnlineEnsembleClassifier([("good", good), ("worse", worse)], rule=FixedShare(eta="adaptive"))
    proba = ens.partial_fit_predict_proba(X, y, classes=[0, 1])
    assert ens.weights_[0] > 0.95
    assert np.mean(proba[1000:].argmax(axis=1) == good.predict(X[1000:])) > 0.99
    # its probabilities: the predicted class gets 1 - (smoothed mistake rate so far)
    m, r = ens._label_counts_[0]
    assert r == 3000 and m == np.sum(good.predict(X) != y)
    p = ens.predict_proba(X[:5])
    assert np.all(p.max(axis=1) <= 1.0) and np.all(p.sum(axis=1) == pytest.approx(1.0))


# --------------------------------------------------------------------------- calibration
def _reference_calibration(D, yi, w):
    """Row by row in plain Python: the temperature's Newton step on the log loss."""
    a, curv, sq, cnt = _calibration.A_INIT, 0.0, 0.0, 0.0
    out = []
    for r in range(D.shape[0]):
        s = np.sqrt(sq / cnt) if cnt > 0 and sq > 0 else 1.0
        z = D[r] / s
        if D.shape[1] == 1:
            p1 = 1.0 / (1.0 + np.exp(-a * z[0]))
            p = np.array([1.0 - p1, p1])
            g = (p1 - (yi[r] == 1)) * z[0]
            h = p1 * (1.0 - p1) * z[0] ** 2
        else:
            e = np.exp(a * z - np.max(a * z))
            p = e / e.sum()
            g = np.sum((p - (np.arange(len(p)) == yi[r])) * z)
            h = max(np.sum(p * z * z) - np.sum(p * z) ** 2, 0.0)
        out.append(p)
        curv = _calibration.FORGET ** w[r] * curv + w[r] * h
        a = min(max(a - w[r] * g / (_calibration.PRIOR + curv), _calibration.A_MIN), _calibration.A_MAX)
        sq += w[r] * np.mean(D[r] ** 2)
        cnt += w[r]
    return np.array(out), a


@pytest.mark.parametrize("heads", [1, 3])
def test_calibration_pass_equals_its_definition(heads):
    rng = np.random.default_rng(heads)
    D = 3.0 * rng.standard_normal((400, heads))
    yi = (D[:, 0] + rng.standard_normal(400) > 0).astype(np.int64) if heads == 1 else np.argmax(
        D + 2.0 * rng.standard_normal((400, heads)), axis=1)
    w = rng.uniform(0, 2, 400)
    values = np.array([_calibration.A_INIT, 0.0, 0.0, 0.0])
    out = np.empty((400, max(heads, 2)))
    _calibration.calibrate_pass(D, yi, w, _calibration._record(values), out)
    ref, a = _reference_calibration(D, yi, w)
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)
    assert values[0] == pytest.approx(a, rel=1e-10)
    # it learned something: the temperature moved from its start and the probabilities beat 0.5
    assert values[0] != _calibration.A_INIT
    ll = -np.mean(np.log(out[np.arange(400), yi]))
    assert ll < -np.log(1.0 / max(heads, 2))


def test_calibrated_probabilities_of_a_regression_classifier():
    """PKAWVClassifier (square loss on +-1 targets) gives probabilities: calibrated online, the
    same under any chunking, the predicted class the most probable, a fair log loss."""
    X, y = _classification(n=1500)
    clf = PKAWVClassifier(random_state=0)
    proba = clf.partial_fit_predict_proba(X, y, classes=[0, 1])
    chunked = clone(clf)
    parts = [chunked.partial_fit_predict_proba(X[i:i + 70], y[i:i + 70], classes=[0, 1]) for i in range(0, 1500, 70)]
    np.testing.assert_array_equal(np.vstack(parts), proba)
    np.testing.assert_array_equal(chunked._calibration_, clf._calibration_)
    dec = PKAWVClassifier(random_state=0).partial_fit_decision_function(X, y, classes=[0, 1])
    np.testing.assert_array_equal(proba.argmax(axis=1), (dec > 0).astype(int))
    np.testing.assert_array_equal(clf.predict_proba(X).argmax(axis=1), clf.predict(X) == 1)
    ll = -np.mean(np.log(proba[500:][np.arange(1000), y[500:]]))
    err = np.mean(proba[500:].argmax(axis=1) != y[500:])
    # calibrated enough: about the log loss of a calibrated forecaster with this error rate, far
    # from what its labels alone would cost
    assert ll < -(err * np.log(err) + (1 - err) * np.log(1 - err)) + 0.05
    # pure predict_proba
    state = clf._calibration_.copy()
    clf.predict_proba(X)
    np.testing.assert_array_equal(clf._calibration_, state)
    # log-loss learners keep their sigmoid (no calibrator)
    si = ScaleInvariantClassifier().fit(X, y)
    assert not hasattr(si, "_calibration_")
    hinge = ScaleInvariantClassifier(loss="hinge").fit(X, y)
    assert hinge.predict_proba(X).shape == (1500, 2)


def test_calibration_runs_in_compiled_code():
    # a compiled caller sees the same pass (no Python object mode)
    @njit
    def call(D, yi, w, state, out):
        _calibration.calibrate_pass(D, yi, w, state, out)
        return out.sum()

    D = np.ones((3, 1))
    out = np.empty((3, 2))
    assert call(D, np.array([1, 0, 1]), np.ones(3), _calibration._record(np.array([1.0, 0, 0, 0])), out) == 3.0


def test_wide_streams_leave_out_the_experts_whose_cost_grows_with_the_columns():
    """On a wide CSR stream (2^18 columns, a few non-zeros per row) the default regressor runs:
    the linear AWV expert (a d x d matrix: 512 GiB here) and GroupDRO (dense rows) are left out,
    and each remaining expert keeps the seed it has on a narrow stream."""
    import scipy.sparse as sp

    from skonline.experts import OnlineEnsembleRegressor, default_estimators

    rng = np.random.default_rng(0)
    X = sp.random(200, 2**18, density=20 / 2**18, format="csr", random_state=rng)
    y = rng.standard_normal(200)
    ens = OnlineEnsembleRegressor(random_state=0).fit(X, y)
    assert ens.expert_names_ == ["linear", "kernel_selection", "pkawv"]
    assert np.isfinite(ens.predict(X[:5])).all()
    narrow = dict(default_estimators("regressor", random_state=0, n_features=10))
    wide = dict(default_estimators("regressor", random_state=0, n_features=2**18))
    assert list(narrow) == ["linear", "dro", "awv", "kernel_selection", "pkawv"]
    for name, est in wide.items():
        assert est.get_params() == narrow[name].get_params()
    assert [n for n, _ in default_estimators("classifier", n_features=5_000)] == ["linear", "kernel_selection", "pkawv"]
    assert [n for n, _ in default_estimators("regressor", n_features=200)][2] == "awv"
    assert "awv" not in dict(default_estimators("regressor", n_features=201))
