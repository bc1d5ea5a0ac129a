"""The online pipeline: prequential streaming through online transformers and a learner.

The streaming invariants (chunking, pickling mid-stream, rejection, pure prediction) run on two
pipelines in tests/test_common.py; these tests cover what is specific to the pipeline.
"""

import pickle

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

from skonline.kernel_approximation import RandomFourierFeatures, TaylorFeatures
from skonline.kernel_ridge import AWVRegressor
from skonline.linear_model import ScaleInvariantClassifier
from skonline.pipeline import OnlinePipeline, make_online_pipeline
from skonline.preprocessing import OnlineMinMaxScaler, OnlineStandardScaler


def _stream(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3)) * [1.0, 1e3, 1e-3] + [0.0, 5e3, 1.0]
    y = X @ [1.0, 1e-3, 1e3] + 0.1 * rng.standard_normal(n)
    return X, y


def test_each_row_is_transformed_with_the_statistics_of_the_rows_before_it():
    X, y = _stream()
    pipe = make_online_pipeline(OnlineStandardScaler(), AWVRegressor(standardize=False))
    pred = np.concatenate([pipe.partial_fit_predict(X[i:i + 50], y[i:i + 50]) for i in range(0, 400, 50)])
    # the same learner fed the prequentially scaled rows by hand
    Z = OnlineStandardScaler().partial_fit_transform(X)
    ref = AWVRegressor(standardize=False).partial_fit_predict(Z, y)
    np.testing.assert_array_equal(pred, ref)
    # predict uses the current statistics of every step
    np.testing.assert_array_equal(pipe.predict(X), pipe[-1].predict(pipe[0].transform(X)))


def test_fixed_feature_maps_are_fitted_on_the_first_chunk():
    X, y = _stream()
    yc = (y > np.median(y)).astype(int)
    pipe = make_online_pipeline(OnlineStandardScaler(), RandomFourierFeatures(random_state=0),
                                ScaleInvariantClassifier())
    a = pipe.fit(X, yc).decision_function(X)
    b = make_online_pipeline(OnlineStandardScaler(), RandomFourierFeatures(random_state=0),
                             ScaleInvariantClassifier())
    for i in range(0, 400, 70):
        b.partial_fit(X[i:i + 70], yc[i:i + 70], classes=[0, 1])
    # equal up to BLAS rounding of the random projection between batch sizes
    np.testing.assert_allclose(a, b.decision_function(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(pipe[1].random_weights_, b[1].random_weights_)


def test_a_batch_transformer_is_refused_unless_fitted():
    X, y = _stream()
    pipe = make_online_pipeline(StandardScaler(), AWVRegressor())
    with pytest.raises(TypeError, match="not an online transformer"):
        pipe.partial_fit(X[:50], y[:50])
    # nothing was learned
    assert not hasattr(pipe[-1], "n_samples_seen_")
    fitted = make_online_pipeline(StandardScaler().fit(X[:100]), AWVRegressor())
    fitted.partial_fit(X[100:200], y[100:200])
    assert fitted[-1].n_samples_seen_ == 100


def test_fit_resets_every_step_and_equals_one_pass():
    X, y = _stream()
    pipe = make_online_pipeline(OnlineStandardScaler(), TaylorFeatures(degree=2, sigma=3.0),
                                AWVRegressor(standardize=False))
    pipe.partial_fit(X[:100], y[:100])
    pipe.fit(X, y)
    fresh = make_online_pipeline(OnlineStandardScaler(), TaylorFeatures(degree=2, sigma=3.0),
                                 AWVRegressor(standardize=False)).fit(X, y)
    assert pipe[0].n_samples_seen_ == 400
    np.testing.assert_array_equal(pipe.predict(X), fresh.predict(X))


def test_grid_search_over_nested_parameters_and_pickling():
    X, y = _stream(300)
    pipe = make_online_pipeline(OnlineMinMaxScaler(), AWVRegressor(standardize=False))
    search = GridSearchCV(pipe, {"awvregressor__alpha": [0.1, 10.0], "onlineminmaxscaler__clip": [True, False]},
                          cv=3).fit(X, y)
    assert set(search.best_params_) == {"awvregressor__alpha", "onlineminmaxscaler__clip"}
    best = pickle.loads(pickle.dumps(search.best_estimator_))
    np.testing.assert_array_equal(best.predict(X), search.best_estimator_.predict(X))


def test_set_output_pandas():
    pd = pytest.importorskip("pandas")
    X, y = _stream()
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    pipe = make_online_pipeline(OnlineStandardScaler(), OnlineMinMaxScaler()).set_output(transform="pandas")
    out = pipe.fit(df).transform(df)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["a", "b", "c"]
    streamed = pipe.partial_fit_transform(df.iloc[:10])
    assert isinstance(streamed, pd.DataFrame)


def test_dask_ml_incremental():
    pytest.importorskip("dask_ml")
    import dask.array as da
    from dask_ml.wrappers import Incremental

    X, y = _stream()
    pipe = make_online_pipeline(OnlineStandardScaler(), AWVRegressor(standardize=False))
    inc = Incremental(pipe, shuffle_blocks=False).fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))
    local = make_online_pipeline(OnlineStandardScaler(), AWVRegressor(standardize=False))
    for i in range(0, 400, 100):
        local.partial_fit(X[i:i + 100], y[i:i + 100])
    np.testing.assert_array_equal(inc.estimator_.predict(X), local.predict(X))


def test_is_a_scikit_learn_pipeline():
    pipe = make_online_pipeline(OnlineStandardScaler(), AWVRegressor())
    assert isinstance(pipe, OnlinePipeline)
    assert pipe.get_params()["awvregressor__alpha"] == 1.0


def test_sample_weight_goes_to_the_final_step():
    X, y = _stream()
    w = np.random.default_rng(0).uniform(0.5, 2.0, X.shape[0])
    pipe = make_online_pipeline(OnlineStandardScaler(), AWVRegressor(standardize=False))
    pipe.partial_fit(X, y, sample_weight=w)
    ref = AWVRegressor(standardize=False).partial_fit(OnlineStandardScaler().partial_fit_transform(X), y,
                                                      sample_weight=w)
    np.testing.assert_array_equal(pipe[-1].coef_, ref.coef_)
    with pytest.raises(TypeError, match="OnlineStandardScaler does not support sample_weight"):
        make_online_pipeline(OnlineStandardScaler(), AWVRegressor()).partial_fit(
            X, y, onlinestandardscaler__sample_weight=w)
