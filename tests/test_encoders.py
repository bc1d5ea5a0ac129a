"""Online encoders and the online imputer: raw tables as they come (issue 23).

The streaming contract (chunking, pickling, rejected chunks) is also checked on numeric streams by
tests/test_common.py; here: the prequential definitions against direct row-by-row references, and
DataFrames of strings, categoricals and missing values.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.feature_extraction import FeatureHasher

from skonline.preprocessing import OnlineHashingEncoder, OnlineImputer, OnlineOneHotEncoder, _columns

from _helpers import assert_same_state

pd = pytest.importorskip("pandas")

MISSING = object()  # the missing category of the references


def _key(v):
    return MISSING if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else v


def _one_hot_reference(X, max_categories, handle_unknown):
    """Row t encoded with the categories of rows < t, written row by row with dicts."""
    n, d = X.shape
    infrequent = handle_unknown == "infrequent_if_exist"
    n_cat = max_categories - int(infrequent)
    out = np.zeros((n, d * max_categories))
    for j in range(d):
        slots, overflowed = {}, False
        for t in range(n):
            v = _key(X[t, j])
            if v in slots:
                out[t, j * max_categories + slots[v]] = 1.0
            elif infrequent and overflowed:
                out[t, j * max_categories + max_categories - 1] = 1.0
            if v not in slots:
                if len(slots) < n_cat:
                    slots[v] = len(slots)
                else:
                    overflowed = True
    return out


def _raw_table(n=300, seed=0):
    """Strings with missing values (NaN, None, pd.NA), a categorical, an integer code column."""
    rng = np.random.default_rng(seed)
    city = rng.choice(["Paris", "Lyon", "Nice", "Lille", "Brest", "Metz", "Pau"], size=n,
                      p=[0.4, 0.2, 0.15, 0.1, 0.08, 0.05, 0.02]).astype(object)
    city[rng.random(n) < 0.05] = None
    city[rng.random(n) < 0.05] = np.nan
    colour = pd.Categorical(rng.choice(["red", "green", "blue"], size=n))
    code = rng.integers(0, 12, size=n)
    word = pd.array(rng.choice(["a", "b", "?"], size=n), dtype="string")
    word[rng.random(n) < 0.1] = pd.NA
    return pd.DataFrame({"city": city, "colour": colour, "code": code, "word": word})


@pytest.mark.parametrize("max_categories", [1, 3, 5, 16])
@pytest.mark.parametrize("handle_unknown", ["infrequent_if_exist", "ignore"])
def test_one_hot_is_prequential_and_matches_the_definition(max_categories, handle_unknown):
    X = _raw_table()
    enc = OnlineOneHotEncoder(max_categories=max_categories, handle_unknown=handle_unknown)
    Z = enc.partial_fit_transform(X)
    ref = _one_hot_reference(X.astype(object).to_numpy(), max_categories, handle_unknown)
    np.testing.assert_array_equal(Z, ref)
    assert Z.shape == (X.shape[0], 4 * max_categories)
    assert all(len(c) <= max_categories for c in enc.categories_)  # the budget


def test_any_chunking_gives_the_same_stream_and_state():
    X = _raw_table(400, seed=1)
    for est in (OnlineOneHotEncoder(max_categories=5), OnlineHashingEncoder(n_features=16),
                OnlineImputer(strategy="most_frequent", max_categories=3),
                OnlineOneHotEncoder(max_categories=4, sparse_output=True)):
        ref = clone(est)
        Z = ref.partial_fit_transform(X)
        for sizes in ([1] * 30 + [370], [7, 200, 193], [399, 1]):
            e, parts, start = clone(est), [], 0
            for s in sizes:
                parts.append(e.partial_fit_transform(X.iloc[start:start + s]))
                start += s
            got = sp.vstack(parts).toarray() if sp.issparse(Z) else np.concatenate(parts)
            want = Z.toarray() if sp.issparse(Z) else Z
            if want.dtype == object:
                assert [list(map(_key, r)) for r in got] == [list(map(_key, r)) for r in want]
            else:
                np.testing.assert_array_equal(got, want)
            assert_same_state(e, ref)
        full = clone(est).fit(X)
        assert_same_state(full, ref)


def test_an_integer_column_read_as_floats_in_some_chunks_gives_the_same_categories():
    # pandas reads an integer column as floats in the chunks where it has a missing value
    codes = [3, 1, None, 3, 2, 1, 7, None, 2]
    whole = pd.DataFrame({"code": pd.array(codes, dtype="float64")})
    parts = [pd.DataFrame({"code": [3, 1]}), pd.DataFrame({"code": [np.nan, 3.0, 2.0]}),
             pd.DataFrame({"code": [1, 7]}), pd.DataFrame({"code": [np.nan, 2.0]})]
    for est in (OnlineOneHotEncoder(max_categories=5), OnlineHashingEncoder(n_features=16)):
        ref = clone(est)
        Z = ref.partial_fit_transform(whole)
        e = clone(est)
        np.testing.assert_array_equal(np.concatenate([e.partial_fit_transform(p) for p in parts]), Z)
        assert_same_state(e, ref)
    assert ref.get_feature_names_out().size == 16
    enc = OnlineOneHotEncoder(max_categories=5).fit(whole)
    assert enc.get_category_names_out().tolist() == ["code_3", "code_1", "code_nan", "code_2",
                                                     "code_infrequent_sklearn"]
    assert pickle.dumps(enc.categories_) == pickle.dumps(OnlineOneHotEncoder(max_categories=5).fit(parts[0])
                                                          .partial_fit(parts[1]).categories_)


def test_pickling_mid_stream_equals_never_stopping():
    X = _raw_table(300, seed=2)
    for est in (OnlineOneHotEncoder(max_categories=4), OnlineImputer(strategy="median", add_indicator=True)):
        if isinstance(est, OnlineImputer):
            X = X[["code"]].astype(float).mask(_raw_table(300, 3)["city"].isna())
        a = clone(est)
        a.partial_fit(X.iloc[:120])
        b = pickle.loads(pickle.dumps(a))
        np.testing.assert_array_equal(a.partial_fit_transform(X.iloc[120:]), b.partial_fit_transform(X.iloc[120:]))
        assert_same_state(a, b)


def test_unseen_categories_never_raise():
    X = pd.DataFrame({"c": ["a", "b", "a", "c"]})
    enc = OnlineOneHotEncoder(max_categories=3).fit(X)  # 2 slots and the infrequent one
    new = pd.DataFrame({"c": ["zzz", "a", None]})
    Z = enc.transform(new)
    np.testing.assert_array_equal(Z, [[0, 0, 1], [1, 0, 0], [0, 0, 1]])  # 'c' overflowed: infrequent
    fresh = OnlineOneHotEncoder(max_categories=3).fit(X.iloc[:2])  # not overflowed: unknown is zeros
    np.testing.assert_array_equal(fresh.transform(new), [[0, 0, 0], [1, 0, 0], [0, 0, 0]])
    ignore = OnlineOneHotEncoder(max_categories=3, handle_unknown="ignore").fit(X)
    np.testing.assert_array_equal(ignore.transform(new), [[0, 0, 0], [1, 0, 0], [0, 0, 0]])
    assert ignore.categories_[0].tolist() == ["a", "b", "c"]


def test_missing_values_are_one_category_and_a_marker_is_a_category():
    X = pd.DataFrame({"c": pd.array(["a", None, "?", pd.NA, "a"], dtype=object)})
    X.loc[4, "c"] = np.nan
    enc = OnlineOneHotEncoder(max_categories=4, handle_unknown="ignore")
    Z = enc.partial_fit_transform(X)
    assert enc.categories_[0].tolist() == ["a", None, "?"]  # None: the missing category
    np.testing.assert_array_equal(Z.argmax(axis=1)[Z.any(axis=1)], [1, 1])  # rows 3 and 4: missing
    assert enc.get_category_names_out().tolist() == ["c_a", "c_nan", "c_?", "c_slot3"]


def test_given_categories_fix_the_slots_and_the_names():
    enc = OnlineOneHotEncoder(categories=[["x", "y"]], handle_unknown="ignore")
    Z = enc.partial_fit_transform(np.array([["y"], ["z"], ["x"]], dtype=object))
    np.testing.assert_array_equal(Z, [[0, 1], [0, 0], [1, 0]])  # known from the first row
    assert enc.get_feature_names_out().tolist() == ["x0_x", "x0_y"]
    with pytest.raises(ValueError, match="more than once"):
        OnlineOneHotEncoder(categories=[["x", "x"]]).fit(np.array([["x"]], dtype=object))


def test_output_names_are_fixed_for_the_stream_and_pandas_output():
    X = _raw_table(200, seed=4)
    enc = OnlineOneHotEncoder(max_categories=4).set_output(transform="pandas")
    first = enc.partial_fit_transform(X.iloc[:3])
    later = enc.partial_fit_transform(X.iloc[3:])
    assert isinstance(later, pd.DataFrame)
    assert list(first.columns) == list(later.columns) == list(enc.get_feature_names_out())
    assert later.columns[0] == "city_slot0" and later.columns[3] == "city_infrequent_sklearn"
    assert enc.get_category_names_out()[0] == f"city_{enc.categories_[0][0]}"
    out = enc.transform(X)
    assert isinstance(out, pd.DataFrame) and out.index.equals(X.index)


def test_sparse_output_equals_dense_and_float32_is_kept():
    X = _raw_table(100, seed=5)
    dense = OnlineOneHotEncoder(max_categories=4).partial_fit_transform(X)
    sparse = OnlineOneHotEncoder(max_categories=4, sparse_output=True).partial_fit_transform(X)
    assert sp.issparse(sparse) and sparse.format == "csr"
    np.testing.assert_array_equal(sparse.toarray(), dense)
    assert OnlineOneHotEncoder().fit_transform(np.zeros((3, 2), dtype=np.float32)).dtype == np.float32
    assert OnlineOneHotEncoder(dtype=np.float32).fit_transform(X).dtype == np.float32


def test_without_pandas_the_categories_are_the_same(monkeypatch):
    rng = np.random.default_rng(6)
    X = rng.choice(["b", "a", "c", "d"], size=(200, 3)).astype(object)
    X[rng.random(X.shape) < 0.1] = None
    Xf = rng.integers(0, 7, size=(200, 2)).astype(float)
    Xf[5, 1] = np.nan
    with_pd = [OnlineOneHotEncoder(max_categories=3).partial_fit_transform(A) for A in (X, Xf)]
    monkeypatch.setattr(_columns, "_pandas", lambda: None)
    without = [OnlineOneHotEncoder(max_categories=3).partial_fit_transform(A) for A in (X, Xf)]
    for a, b in zip(with_pd, without):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="uniformly strings or numbers"):
        OnlineOneHotEncoder().fit(np.array([["a"], [1]], dtype=object))


def test_rejected_chunk_changes_nothing_on_a_table():
    X = _raw_table(100, seed=7)
    enc = OnlineOneHotEncoder(max_categories=4).fit(X.iloc[:50])
    before = pickle.dumps(enc)
    bad = X.iloc[50:].copy()
    bad["code"] = bad["code"].astype(float)
    bad.iloc[10, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        enc.partial_fit(bad)
    with pytest.raises(ValueError, match="feature names"):
        enc.partial_fit(X.iloc[50:, ::-1])
    assert pickle.dumps(enc) == before


def test_hashing_matches_feature_hasher_and_keeps_no_state():
    X = _raw_table(150, seed=8)
    for alternate_sign in (True, False):
        enc = OnlineHashingEncoder(n_features=32, alternate_sign=alternate_sign)
        Z = enc.partial_fit_transform(X)
        rows = [{f"x{j}": ("nan" if _key(v) is MISSING else str(v)) for j, v in enumerate(row)}
                for row in X.astype(object).to_numpy()]
        ref = FeatureHasher(n_features=32, input_type="dict", alternate_sign=alternate_sign).transform(rows)
        np.testing.assert_array_equal(Z, ref.toarray())
        assert {k for k in vars(enc) if k.endswith("_")} == {"n_samples_seen_", "n_features_in_", "feature_names_in_"}
        np.testing.assert_array_equal(enc.transform(X), Z)  # nothing learned: the same map
        np.testing.assert_array_equal(clone(enc).fit_transform(X.to_numpy()), Z)  # names do not matter
    assert OnlineHashingEncoder(n_features=8).fit(X).get_feature_names_out()[-1] == "onlinehashingencoder7"


# --------------------------------------------------------------------------- imputer
def _running(X, stat):
    """Row t's missing entries filled with ``stat`` of the values of rows < t (None: no value)."""
    out = X.astype(object).copy()
    for j in range(X.shape[1]):
        seen = []
        for t in range(X.shape[0]):
            v = X[t, j]
            if _key(v) is MISSING:
                out[t, j] = stat(seen)
            else:
                seen.append(v)
    return out


def _mode(seen):
    """The value that first reached the largest count."""
    counts, best, lead = {}, 0, None
    for v in seen:
        counts[v] = counts.get(v, 0) + 1
        if counts[v] > best:
            best, lead = counts[v], v
    return lead


def test_mean_imputation_matches_the_definition():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((300, 3)) * [1.0, 1e3, 1e-3]
    X[rng.random(X.shape) < 0.2] = np.nan
    X[0, 1] = np.nan  # before any value: 0
    Z = OnlineImputer().partial_fit_transform(X)
    ref = _running(X, lambda s: sum(s) / len(s) if s else 0.0).astype(float)
    np.testing.assert_allclose(Z, ref, rtol=1e-13)
    imp = OnlineImputer().fit(X)
    np.testing.assert_allclose(imp.statistics_, np.nanmean(X, axis=0), rtol=1e-12)
    assert imp.n_observed_.tolist() == np.sum(~np.isnan(X), axis=0).tolist()


def test_median_is_exact_for_five_values_then_close_to_the_running_median():
    rng = np.random.default_rng(10)
    X = np.c_[rng.standard_normal(4000), rng.lognormal(size=4000), rng.integers(0, 20, 4000)].astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    Z = OnlineImputer(strategy="median").partial_fit_transform(X)
    ref = _running(X, lambda s: float(np.median(s)) if s else 0.0).astype(float)
    for j in range(3):
        first = np.flatnonzero(np.cumsum(~np.isnan(X[:, j])) <= 5)  # rows seeing at most 5 values
        np.testing.assert_array_equal(Z[first, j], ref[first, j])
        late = np.isnan(X[:, j]) & (np.arange(4000) > 1000)
        spread = np.nanpercentile(X[:, j], 75) - np.nanpercentile(X[:, j], 25)
        error = np.max(np.abs(Z[late, j] - ref[late, j]))
        if j < 2:  # smooth distributions: within a few percent of the interquartile range
            assert error < 0.03 * spread, (j, error / spread)
        else:  # integers: an interpolation between neighbouring values
            assert error < 1.0, error


def test_median_of_the_first_five_values_is_exact():
    X = np.array([5.0, np.nan, 1.0, np.nan, 4.0, np.nan, 2.0, np.nan, 3.0, np.nan, -7.0, np.nan])[:, None]
    Z = OnlineImputer(strategy="median").partial_fit_transform(X)
    assert Z[1::2, 0].tolist() == [5.0, 3.0, 4.0, 3.0, 3.0, 3.0]  # the median of the values before


def _space_saving_modes(column, k):
    """Row by row: the running mode of the space-saving counters (a free counter, else the first of
    smallest count, whose count the new value continues; the mode changes when strictly exceeded)."""
    values, counts, lead, out = [], [], -1, []
    for v in column:
        if _key(v) is MISSING:
            out.append(values[lead] if lead >= 0 else "missing_value")
            continue
        if v in values:
            s = values.index(v)
        elif len(values) < k:
            values.append(v)
            counts.append(0)
            s = len(values) - 1
        else:
            s = int(np.argmin(counts))
            values[s] = v
        counts[s] += 1
        if lead < 0 or (s != lead and counts[s] > counts[lead]):
            lead = s
    return out, values, counts


def test_most_frequent_with_few_counters_is_space_saving():
    rng = np.random.default_rng(13)
    X = rng.choice(list("abcdefg"), size=(600, 1), p=[0.3, 0.2, 0.15, 0.15, 0.1, 0.05, 0.05]).astype(object)
    X[rng.random(X.shape) < 0.2] = None
    for k in (2, 3):
        imp = OnlineImputer(strategy="most_frequent", max_categories=k)
        Z = imp.partial_fit_transform(X)
        missing = np.array([_key(v) is MISSING for v in X[:, 0]])
        modes, values, counts = _space_saving_modes(X[:, 0], k)
        assert Z[missing, 0].tolist() == modes
        assert imp._mf_values_[0].tolist() == values and imp._mf_counts_[0].tolist() == counts


def test_most_frequent_is_the_exact_running_mode_with_enough_counters():
    rng = np.random.default_rng(11)
    X = rng.choice(["a", "b", "c", "d"], size=(500, 2), p=[0.1, 0.35, 0.3, 0.25]).astype(object)
    X[rng.random(X.shape) < 0.15] = None
    Z = OnlineImputer(strategy="most_frequent", max_categories=4).partial_fit_transform(X)
    ref = _running(X, lambda s: _mode(s) if s else "missing_value")
    assert Z.tolist() == ref.tolist()
    # two counters: the state stays at two values per column, and a value of more than half of
    # the rows always keeps a counter (the space-saving guarantee for frequencies above 1/k)
    imp = OnlineImputer(strategy="most_frequent", max_categories=2).fit(X)
    assert imp._mf_values_.shape == (2, 2)
    heavy = rng.choice(["x", "y", "z", "w"], size=(3000, 1), p=[0.55, 0.15, 0.15, 0.15]).astype(object)
    assert OnlineImputer(strategy="most_frequent", max_categories=2).fit(heavy).statistics_.tolist() == ["x"]


def test_a_missing_marker_constant_fill_and_indicators():
    X = pd.DataFrame({"job": ["?", "clerk", "?", "cook", "cook"], "hours": [40.0, -1.0, 38.0, -1.0, 40.0]})
    job = OnlineImputer(missing_values="?", strategy="most_frequent", add_indicator=True)
    Z = job.partial_fit_transform(X[["job"]])
    assert Z[:, 0].tolist() == ["missing_value", "clerk", "clerk", "cook", "cook"]
    assert Z[:, 1].tolist() == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert job.get_feature_names_out().tolist() == ["job", "missingindicator_job"]
    hours = OnlineImputer(missing_values=-1.0).partial_fit_transform(X[["hours"]])
    assert hours.ravel().tolist() == [40.0, 40.0, 38.0, 39.0, 40.0]
    const = OnlineImputer(strategy="constant", fill_value="none", missing_values="?").fit(X[["job"]])
    assert const.transform(X[["job"]]).ravel().tolist() == ["none", "clerk", "none", "cook", "cook"]
    with pytest.raises(ValueError, match="non-numeric"):
        OnlineImputer(strategy="mean").fit(X)
    imp = OnlineImputer().fit(X[["hours"]]).set_params(strategy="median")
    with pytest.raises(ValueError, match="another strategy"):
        imp.partial_fit(X[["hours"]])


def test_imputer_and_encoder_with_pandas_output():
    X = _raw_table(60, seed=12)[["code"]].astype(float)
    X.iloc[::7, 0] = np.nan
    imp = OnlineImputer(add_indicator=True).set_output(transform="pandas")
    out = imp.partial_fit_transform(X)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["code", "missingindicator_code"]
    assert not out.isna().any().any()
