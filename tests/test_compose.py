"""Online column transformer on raw tables, alone and in front of skonline learners (issue 23)."""

import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.compose import make_column_selector
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skonline.compose import OnlineColumnTransformer, make_online_column_transformer
from skonline.experts import OnlineEnsembleClassifier
from skonline.kernel_selection import KernelSelectionClassifier
from skonline.linear_model import ScaleInvariantClassifier
from skonline.pipeline import make_online_pipeline
from skonline.preprocessing import (
    OnlineImputer,
    OnlineOneHotEncoder,
    OnlineStandardScaler,
)

from _helpers import assert_same_state

pd = pytest.importorskip("pandas")
ADULT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "adult.csv.gz"


def _table(n=240, seed=0):
    """A raw stream: strings with missing values ('?' and NaN), a categorical, numbers in their units."""
    rng = np.random.default_rng(seed)
    job = rng.choice(["clerk", "cook", "nurse", "pilot", "?"], size=n, p=[0.3, 0.3, 0.2, 0.1, 0.1]).astype(object)
    job[rng.random(n) < 0.05] = np.nan
    town = pd.Categorical(rng.choice(["a", "b", "c"], size=n))
    age = rng.integers(18, 80, size=n).astype(float)
    income = rng.lognormal(10, 1, size=n)
    X = pd.DataFrame({"job": job, "town": town, "age": age, "income": income})
    score = (job == "pilot") * 2.0 + (town == "c") + (age - 50) / 20 + rng.standard_normal(n) * 0.5
    return X, (score > 0.5).astype(int)


def _ct(**kw):
    return make_online_column_transformer(
        (OnlineOneHotEncoder(max_categories=4), make_column_selector(dtype_exclude="number")),
        (OnlineStandardScaler(), ["age", "income"]),
        **kw,
    )


def test_columns_by_name_index_slice_mask_and_selector():
    X, _ = _table(50)
    for key in (["age", "income"], [2, 3], slice(2, 4), slice("age", "income"),
                np.array([False, False, True, True]), make_column_selector(dtype_include="number")):
        ct = OnlineColumnTransformer([("num", OnlineStandardScaler(), key)])
        Z = ct.partial_fit_transform(X)
        np.testing.assert_array_equal(Z, OnlineStandardScaler().partial_fit_transform(X[["age", "income"]]))
        assert ct.get_feature_names_out().tolist() == ["num__age", "num__income"]
    with pytest.raises(ValueError, match="only supported for dataframes"):
        OnlineColumnTransformer([("num", OnlineStandardScaler(), ["age"])]).fit(X.to_numpy())


def test_remainder_output_indices_and_weights():
    X, _ = _table(60)
    ct = _ct(remainder="passthrough")
    assert ct.fit(X[["job", "age", "town", "income"]]).transformers_[-1][0] != "remainder"
    ct = OnlineColumnTransformer([("cat", OnlineOneHotEncoder(max_categories=3), ["job"])], remainder="passthrough",
                                 transformer_weights={"cat": 2.0})
    Z = ct.fit_transform(X)
    assert ct.output_indices_ == {"cat": slice(0, 3), "remainder": slice(3, 6)}
    assert set(np.unique(Z[:, :3])) <= {0.0, 2.0}
    assert ct.get_feature_names_out()[3:].tolist() == ["remainder__town", "remainder__age", "remainder__income"]
    drop = OnlineColumnTransformer([("cat", "drop", ["job"])], remainder=OnlineImputer(strategy="most_frequent"))
    assert drop.fit_transform(X).shape == (60, 3)


def test_stream_is_chunk_invariant_and_pickles_mid_stream():
    X, _ = _table(300, seed=1)
    ref = _ct(remainder="drop")
    Z = ref.partial_fit_transform(X)
    for sizes in ([1] * 20 + [280], [150, 150], [299, 1]):
        ct, parts, start = clone(ref), [], 0
        for s in sizes:
            parts.append(ct.partial_fit_transform(X.iloc[start:start + s]))
            start += s
        np.testing.assert_array_equal(np.concatenate(parts), Z)
        assert_same_state(ct, ref)
    a = clone(ref).partial_fit(X.iloc[:100])
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.partial_fit_transform(X.iloc[100:]), b.partial_fit_transform(X.iloc[100:]))
    assert_same_state(a, b)


def test_a_rejected_chunk_leaves_every_transformer_as_it_was():
    X, _ = _table(100, seed=2)
    ct = _ct().fit(X.iloc[:50])
    before = pickle.dumps(ct)
    bad = X.iloc[50:].copy()
    bad.iloc[30, 3] = np.inf  # the scaler refuses it after the encoder learned the chunk
    with pytest.raises(ValueError):
        ct.partial_fit(bad)
    assert pickle.dumps(ct) == before


def test_batch_transformers_refused_unless_fitted():
    X, _ = _table(40)
    with pytest.raises(TypeError, match="not an online transformer"):
        OnlineColumnTransformer([("ohe", OneHotEncoder(), ["job"])]).fit(X)
    fitted = StandardScaler().fit(X[["age"]])
    ct = OnlineColumnTransformer([("num", fitted, ["age"])]).fit(X)
    np.testing.assert_allclose(ct.transform(X), fitted.transform(X[["age"]]))
    assert ct.transformers_[0][1] is not fitted  # a copy: the caller's transformer is left alone


class _Growing(TransformerMixin, BaseEstimator):
    """An online transformer whose output width grows with the rows seen."""

    def partial_fit_transform(self, X, y=None):
        self.n_ = getattr(self, "n_", 0) + len(X)
        return np.zeros((len(X), 1 + self.n_ // 10))

    def transform(self, X):
        return np.zeros((len(X), 1 + self.n_ // 10))


def test_an_output_width_that_changes_is_rejected():
    X, _ = _table(40)
    ct = OnlineColumnTransformer([("g", _Growing(), ["age"])]).partial_fit(X.iloc[:5])
    with pytest.raises(ValueError, match="output width"):
        ct.partial_fit(X.iloc[5:20])


def test_pandas_output_keeps_dtypes_and_names():
    X, _ = _table(30)
    ct = make_online_column_transformer((OnlineOneHotEncoder(max_categories=3), ["town"]),
                                        remainder="passthrough").set_output(transform="pandas")
    out = ct.partial_fit_transform(X)
    assert isinstance(out, pd.DataFrame) and out.index.equals(X.index)
    assert list(out.columns) == list(ct.get_feature_names_out())
    for name in ("job", "age", "income"):  # the passthrough columns keep their dtypes
        assert out[f"remainder__{name}"].dtype == X[name].dtype
    assert isinstance(ct.transform(X), pd.DataFrame)
    with pytest.raises(ValueError, match="not unique"):
        OnlineColumnTransformer([("a", OnlineStandardScaler(), ["age"]), ("b", OnlineStandardScaler(), ["age"])],
                                verbose_feature_names_out=False).fit(X).get_feature_names_out()


def test_sparse_parts_give_sparse_output():
    X, _ = _table(50)
    ct = make_online_column_transformer((OnlineOneHotEncoder(sparse_output=True), ["job", "town"]),
                                        (OnlineStandardScaler(), ["age"]))
    Z = ct.fit_transform(X)
    assert sp.issparse(Z) and ct.sparse_output_ and Z.shape == (50, 33)
    dense = make_online_column_transformer((OnlineOneHotEncoder(), ["job", "town"]), (OnlineStandardScaler(), ["age"]))
    np.testing.assert_array_equal(Z.toarray(), dense.fit_transform(X))


def test_nested_parameters_and_an_imputer_pipeline_as_a_transformer():
    X, _ = _table(80, seed=3)
    cat = make_online_pipeline(OnlineImputer(missing_values="?", strategy="most_frequent"),
                               OnlineOneHotEncoder(max_categories=4))
    ct = make_online_column_transformer((cat, ["job"]), (OnlineStandardScaler(), ["age"]))
    assert ct.get_params()["onlinepipeline__onlineonehotencoder__max_categories"] == 4
    ct.set_params(onlinepipeline__onlineonehotencoder__max_categories=5)
    Z = ct.partial_fit_transform(X)
    assert Z.shape == (80, 6)
    assert ct.get_feature_names_out()[0] == "onlinepipeline__job_slot0"
    assert "?" not in ct.named_transformers_["onlinepipeline"][-1].categories_[0].tolist()


@pytest.mark.parametrize("learner", [
    ScaleInvariantClassifier(),
    KernelSelectionClassifier(random_state=0),
    OnlineEnsembleClassifier([("si", ScaleInvariantClassifier()), ("ks", KernelSelectionClassifier(random_state=0))]),
], ids=["ScaleInvariant", "KernelSelection", "OnlineEnsemble"])
def test_in_front_of_skonline_learners(learner):
    X, y = _table(240, seed=4)
    pipe = make_online_pipeline(_ct(), clone(learner))
    online = np.concatenate([pipe.partial_fit_predict(X.iloc[i:i + 60], y[i:i + 60], classes=[0, 1])
                             for i in range(0, 240, 60)])
    assert online.shape == (240,) and np.mean(online[120:] == y[120:]) > 0.6
    if not getattr(pipe[-1], "_chunk_dependent", False):  # the ensemble's chunk protocol (documented)
        full = make_online_pipeline(_ct(), clone(learner)).fit(X, y, classes=[0, 1])
        np.testing.assert_array_equal(full.predict(X), pipe.predict(X))
    new = X.iloc[:5].copy()
    new["job"] = ["astronaut", None, "clerk", "?", "chef"]  # never seen: no error
    assert pipe.predict(new).shape == (5,)


def _supervised():
    from sklearn.base import is_regressor

    from skonline.utils import all_estimators

    out = []
    for name, cls in all_estimators(type_filter=["classifier", "regressor"]):
        try:
            est = cls()
        except TypeError:  # meta-estimators (ensembles, pipelines): their own tests above
            continue
        out.append(pytest.param(est, is_regressor(est), id=name))
    return out


@pytest.mark.parametrize("learner, regression", _supervised())
@pytest.mark.filterwarnings("ignore::UserWarning")  # e.g. GroupDRO without groups
def test_every_learner_takes_a_raw_table_through_the_column_transformer(learner, regression):
    X, y = _table(120, seed=5)
    target = X["age"].to_numpy() / 10 if regression else y
    pipe = make_online_pipeline(_ct(), clone(learner))
    kw = {} if regression else {"classes": [0, 1]}
    online = np.concatenate([pipe.partial_fit_predict(X.iloc[i:i + 40], target[i:i + 40], **kw)
                             for i in range(0, 120, 40)])
    assert online.shape == (120,) and np.all(np.isfinite(online.astype(float)))
    new = X.iloc[:3].copy()
    new["job"] = ["astronaut", None, "?"]
    assert pipe.predict(new).shape == (3,)
    assert pipe[-1].n_features_in_ == 2 * 4 + 2  # two string columns of 4 slots, two numbers


@pytest.mark.skipif(not ADULT.is_file(), reason="no adult.csv.gz")
def test_adult_prefix_matches_a_one_hot_encoder_fitted_beforehand():
    """On the first 5,000 raw Adult rows ('?' as missing, chunks of 1,000): the online encoder feeds
    ScaleInvariantClassifier as well as scikit-learn's encoder fitted on all rows beforehand (the
    full-stream figures are in benchmarks/results/encoders.md)."""
    from sklearn.compose import ColumnTransformer

    df = pd.read_csv(ADULT, nrows=5000, keep_default_na=False, na_values=["?"])
    y = (df.pop("income") == ">50K").astype(int).to_numpy()
    X = df.drop(columns="split")
    strings = make_column_selector(dtype_exclude="number")
    pipe = make_online_pipeline(
        make_online_column_transformer((OnlineOneHotEncoder(), strings), remainder="passthrough"),
        ScaleInvariantClassifier())
    online = np.concatenate([pipe.partial_fit_predict(X.iloc[i:i + 1000], y[i:i + 1000], classes=[0, 1])
                             for i in range(0, 5000, 1000)])
    batch = ColumnTransformer([("ohe", OneHotEncoder(handle_unknown="ignore", sparse_output=False), strings)],
                              remainder="passthrough").fit(X)
    Z = batch.transform(X)
    learner = ScaleInvariantClassifier()
    ref = np.concatenate([learner.partial_fit_predict(Z[i:i + 1000], y[i:i + 1000], classes=[0, 1])
                          for i in range(0, 5000, 1000)])
    assert abs(np.mean(online == y) - np.mean(ref == y)) <= 0.005
    assert np.mean(online == y) > 0.8
