"""river interoperability.

skonline estimators run inside river through ``river.compat.convert_sklearn_to_river`` and
``river.evaluate.progressive_val_score`` (predict each row, then learn it), on river's bundled
datasets (shipped inside the river package: nothing is downloaded). river's dict rows are turned
into a numpy array in the same feature order and run through skonline's own
``progressive_validation`` / ``partial_fit_predict``.

What holds exactly: the state learned row by row through river is bit-identical to skonline's
(chunk invariance), river's predictions are bit-identical to a predict-then-learn loop in numpy,
and for classifiers they are bit-identical to ``partial_fit_predict`` when
``predict_mode='online'`` (the algorithm's prequential prediction). river calls ``predict`` between
rows, which recomputes the online prediction outside the compiled pass, so for regressors it agrees
with ``partial_fit_predict`` to rounding (the strict-xfail test below documents the gap).
"""

import itertools
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.metrics import accuracy_score, log_loss, mean_absolute_error

river = pytest.importorskip("river")

from river import compat, datasets, evaluate, metrics, stream  # noqa: E402

from skonline.evaluation import progressive_validation  # noqa: E402
from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor  # noqa: E402

from _ecosystem_helpers import (  # noqa: E402
    assert_same_state,
    dense_only,
    estimator_params,
    estimator_stream,
    seeded,
)

PHISHING_CLASSES = [False, True]

# river hands over lists (learn_one) or DataFrames (learn_many) consistently: a feature-name
# mismatch warning would mean the wrapper and the estimator disagree on the columns
pytestmark = pytest.mark.filterwarnings(
    "error:X has feature names", "error:X does not have valid feature names"
)


def _rows(dataset):
    """river's dict rows as a float array, columns in the order of the first row's keys."""
    names, xs, ys = None, [], []
    for x, y in dataset:
        if names is None:
            names = list(x)
        assert list(x) == names  # same features, same order, in every row
        xs.append([x[k] for k in names])
        ys.append(y)
    return np.array(xs, dtype=np.float64), np.array(ys), names


@pytest.fixture(scope="module")
def phishing():
    return _rows(datasets.Phishing())


@pytest.fixture(scope="module")
def trump():
    return _rows(datasets.TrumpApproval())


@pytest.mark.parametrize("name", ["Phishing", "TrumpApproval"])
def test_datasets_are_bundled(name):
    """The datasets are files inside the installed river package (no download)."""
    ds = getattr(datasets, name)()
    path = Path(ds.path)
    assert path.is_file()
    assert Path(river.__file__).parent in path.parents
    X, y, names = _rows(ds)
    assert X.shape == (ds.n_samples, ds.n_features) and len(names) == ds.n_features
    assert np.all(np.isfinite(X))


def _river_run(dataset, model, metric):
    """progressive_val_score's metric, and the per-row predictions of the same protocol."""
    steps = list(evaluate.iter_progressive_val_score(dataset, model, metric, yield_predictions=True))
    return metric, [s["Prediction"] for s in steps]


def _river_model(est, classes=None):
    return compat.convert_sklearn_to_river(est, classes=classes)


CLASSIFIERS = [
    pytest.param(dict(invariance="coordinate", predict_mode="online"), id="coordinate"),
    pytest.param(dict(invariance="full", predict_mode="online"), id="full"),
]


@pytest.mark.parametrize("params", CLASSIFIERS)
def test_phishing_accuracy(phishing, params):
    """progressive_val_score(Accuracy) equals skonline's progressive_validation, exactly."""
    X, y, _ = phishing
    est = ScaleInvariantClassifier(**params)
    metric = evaluate.progressive_val_score(
        datasets.Phishing(), _river_model(est, PHISHING_CLASSES), metrics.Accuracy()
    )
    model = _river_model(est, PHISHING_CLASSES)
    _, preds = _river_run(datasets.Phishing(), model, metrics.Accuracy())
    res = progressive_validation(
        est, X, y, metrics={"accuracy": accuracy_score}, fit_params={"classes": PHISHING_CLASSES},
        chunk_size=500,
    )
    np.testing.assert_array_equal(np.array(preds), res.predictions)
    assert metric.get() == res.final["accuracy"]
    assert_same_state(model.estimator, res.estimator)
    assert res.final["accuracy"] > 0.5  # a real learning curve, not a constant


@pytest.mark.parametrize("params", CLASSIFIERS)
def test_phishing_log_loss(phishing, params):
    """progressive_val_score(LogLoss) uses predict_proba; it agrees with partial_fit_predict_proba."""
    X, y, _ = phishing
    est = ScaleInvariantClassifier(**params)
    metric, preds = _river_run(
        datasets.Phishing(), _river_model(est, PHISHING_CLASSES), metrics.LogLoss()
    )
    proba_true = np.array([p[True] for p in preds])
    res = progressive_validation(
        est, X, y, metrics={"log_loss": lambda t, p: log_loss(t, p, labels=PHISHING_CLASSES)},
        response_method="predict_proba", fit_params={"classes": PHISHING_CLASSES},
    )
    np.testing.assert_allclose(proba_true, res.predictions[:, 1], rtol=1e-9, atol=1e-15)
    assert metric.get() == pytest.approx(res.final["log_loss"], rel=1e-9)


# the raw targets (standardize=False): the tolerances below are those of the paper's learner
REGRESSORS = [
    pytest.param(dict(invariance="coordinate", predict_mode="online", standardize=False), id="coordinate"),
    pytest.param(dict(invariance="full", predict_mode="online", standardize=False), id="full"),
]


def _predict_then_learn(est, X, y, fallback, **kw):
    """What river's protocol computes, in numpy: predict each row, then partial_fit it."""
    preds = []
    for i in range(X.shape[0]):
        try:
            preds.append(est.predict(X[i : i + 1])[0])
        except NotFittedError:
            preds.append(fallback)
        est.partial_fit(X[i : i + 1], y[i : i + 1], **kw)
    return np.array(preds)


@pytest.mark.parametrize("params", REGRESSORS)
def test_trump_approval_mae(trump, params):
    """progressive_val_score(MAE) on TrumpApproval equals skonline's, row by row."""
    X, y, _ = trump
    est = ScaleInvariantRegressor(**params)
    model = _river_model(est)
    metric, preds = _river_run(datasets.TrumpApproval(), model, metrics.MAE())
    preds = np.array(preds, dtype=np.float64)
    # river's protocol, replayed in numpy: identical
    loop = ScaleInvariantRegressor(**params)
    np.testing.assert_array_equal(preds, _predict_then_learn(loop, X, y, 0.0))
    # skonline's own progressive validation: the same state, the same predictions up to rounding
    res = progressive_validation(est, X, y, metrics={"mae": mean_absolute_error})
    assert_same_state(model.estimator, res.estimator)
    assert_same_state(loop, res.estimator)
    # 'full': predict() recomputes w_t(x_t) in its own compiled function. Since the rank test keeps
    # directions down to 1e-10 of a row's norm (issue 11; it used to drop those below ~1e-5),
    # TrumpApproval's pseudo-inverse is ill-conditioned and the two algebraically equal computations
    # differ by up to 2.6e-2 relative (3.6e-5 with the old test): rounding, amplified. A known limit
    # of Algorithm 2's pseudo-inverse update (a square-root form would remove it).
    rtol = 1e-12 if params.get("invariance", "coordinate") == "coordinate" else 5e-2
    np.testing.assert_allclose(preds, res.predictions, rtol=rtol, atol=1e-12)
    assert metric.get() == pytest.approx(res.final["mae"], rel=rtol)
    assert res.final["mae"] < 0.25 * np.mean(np.abs(y))  # it learns: far better than predicting 0


@pytest.mark.xfail(
    strict=True,
    reason=(
        "predict() with predict_mode='online' recomputes the prequential prediction w_t(x_t) in "
        "a separate compiled function (coordinate_predict_online / full_predict_online), not in "
        "the pass that partial_fit_predict uses, so river's predict-then-learn protocol differs "
        "from partial_fit_predict by rounding (TrumpApproval: 2e-15 relative for "
        "invariance='coordinate', 3e-5 for 'full', whose Gram matrix is ill-conditioned there)"
    ),
)
@pytest.mark.parametrize("params", REGRESSORS)
def test_trump_approval_bit_identical(trump, params):
    X, y, _ = trump
    _, preds = _river_run(datasets.TrumpApproval(), _river_model(ScaleInvariantRegressor(**params)), metrics.MAE())
    online = ScaleInvariantRegressor(**params).partial_fit_predict(X, y)
    np.testing.assert_array_equal(np.array(preds, dtype=np.float64), online)


def test_default_predict_mode_is_not_prequential(trump):
    """With predict_mode='linear' (the default), river scores ``X @ coef_``, not the paper's w_t(x_t).

    The learned state is the same; only what river's predict-then-learn protocol evaluates differs
    (the user guide says to pass predict_mode='online' for the paper's prequential predictions).
    """
    X, y, _ = trump
    model = _river_model(ScaleInvariantRegressor())
    _, preds = _river_run(datasets.TrumpApproval(), model, metrics.MAE())
    res = progressive_validation(ScaleInvariantRegressor(), X, y)
    assert_same_state(model.estimator, res.estimator)
    assert np.max(np.abs(np.array(preds, dtype=np.float64) - res.predictions)) > 1e-3


# --------------------------------------------------------------------------- every estimator
@pytest.mark.parametrize("est", estimator_params(["classifier", "regressor"]))
def test_river_wrapper_every_online_estimator(est):
    """Every online classifier / regressor runs in river: same predictions and state as numpy.

    The stream is the estimator's own test stream (river.stream.iter_array); before the first row
    river falls back on NotFittedError, which every estimator must raise from predict.
    """
    X, y, first = estimator_stream(est, n_samples=60, only_classes=True)
    X = dense_only(X)
    names = [f"f{j}" for j in range(X.shape[1])]
    if is_classifier(est):
        classes = list(np.asarray(first.get("classes", np.unique(y))).tolist())
        model, metric, fallback = _river_model(seeded(est), classes), metrics.Accuracy(), classes[0]
        kw = {"classes": classes}
    else:
        model, metric, fallback, kw = _river_model(seeded(est)), metrics.MAE(), 0, {}
    with pytest.raises(NotFittedError):
        seeded(est).predict(X[:1])
    _, preds = _river_run(stream.iter_array(X, y, feature_names=names), model, metric)
    loop = seeded(est)
    ref = _predict_then_learn(loop, X, y, fallback, **kw)
    np.testing.assert_array_equal(np.array(preds), ref)
    assert_same_state(model.estimator, loop)
    assert model.estimator.n_samples_seen_ == X.shape[0]


@pytest.mark.parametrize("est", estimator_params(["classifier", "regressor"]))
def test_river_mini_batches_every_online_estimator(est):
    """river's learn_many / predict_many (pandas mini-batches) equal partial_fit on the arrays."""
    pd = pytest.importorskip("pandas")
    X, y, first = estimator_stream(est, n_samples=60, only_classes=True)
    X = dense_only(X)
    names = [f"f{j}" for j in range(X.shape[1])]
    if is_classifier(est):
        classes = list(np.asarray(first.get("classes", np.unique(y))).tolist())
        model, kw = _river_model(seeded(est), classes), {"classes": classes}
    else:
        model, kw = _river_model(seeded(est)), {}
    ref = seeded(est)
    for start in range(0, X.shape[0], 50):
        sl = slice(start, start + 50)
        Xb = pd.DataFrame(X[sl], columns=names, index=np.arange(X.shape[0])[sl])
        model.learn_many(Xb, pd.Series(y[sl], index=Xb.index))
        ref.partial_fit(X[sl], y[sl], **kw)
    # recent river hands the DataFrame itself over (older versions its values)
    if hasattr(model.estimator, "feature_names_in_"):
        np.testing.assert_array_equal(model.estimator.feature_names_in_, names)
    assert_same_state(model.estimator, ref, ignore=("feature_names_in_",))
    out = model.predict_many(pd.DataFrame(X, columns=names))
    assert isinstance(out, pd.Series)
    np.testing.assert_array_equal(out.to_numpy(), ref.predict(X))


def test_stream_prefix_is_enough():
    """progressive_val_score accepts any iterable of (x, y): a prefix of a bundled dataset."""
    est = ScaleInvariantClassifier(invariance="full", predict_mode="online")
    prefix = list(itertools.islice(datasets.Phishing(), 200))
    metric = evaluate.progressive_val_score(prefix, _river_model(est, PHISHING_CLASSES), metrics.Accuracy())
    X = np.array([list(x.values()) for x, _ in prefix])
    y = np.array([t for _, t in prefix])
    res = progressive_validation(est, X, y, fit_params={"classes": PHISHING_CLASSES})
    assert metric.get() == res.final["accuracy"]
