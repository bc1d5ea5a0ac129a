"""Online scalers and the online standardisation inside the estimators (standardize=True)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from skonline.preprocessing import OnlineMinMaxScaler, OnlineStandardScaler
from skonline.utils import all_estimators
from skonline.utils._scaling import MIN_COUNT, SCALER_MIN_COUNT


def _reference_standardize(X, clip=5.0, min_count=SCALER_MIN_COUNT):
    """Row t with the mean and (population) std of the winsorised rows < t, written directly."""
    n, d = X.shape
    out = np.zeros((n, d))
    for j in range(d):
        seen = []
        for t in range(n):
            x = X[t, j]
            mu = np.mean(seen) if seen else 0.0
            s = np.std(seen) if len(seen) >= min_count else 0.0
            if len(seen) >= min_count:
                if s > 0:
                    out[t, j] = np.clip((x - mu) / s, -clip, clip)
                else:
                    out[t, j] = 0.0 if x == mu else np.sign(x - mu) * clip
            seen.append(np.clip(x, mu - clip * s, mu + clip * s) if s > 0 else x)
    return out


def test_standard_scaler_is_prequential_and_matches_the_definition():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 3)) * [1.0, 1e3, 1e-4] + [5.0, -2e4, 0.0]
    X[150, 1] = 1e9  # a wild value: winsorised in the statistics
    Z = OnlineStandardScaler().partial_fit_transform(X)
    np.testing.assert_allclose(Z, _reference_standardize(X), rtol=1e-9, atol=1e-12)
    assert np.all(Z[:int(SCALER_MIN_COUNT)] == 0.0)
    assert np.all(Z[int(SCALER_MIN_COUNT):] != 0.0)


def test_scaler_warm_up_is_short_so_a_standardising_learner_downstream_is_not_misled():
    # an estimator with standardize=True standardises the scaler's output again (10-row warm-up):
    # the scaler's warm-up rows reach it as exact zeros. After 10 of them every column looked
    # constant at 0 and the next row came out as +-clip in every column.
    rng = np.random.default_rng(4)
    X = rng.standard_normal((200, 6)) * [1.0, 10.0, 1e3, 0.1, 5.0, 1.0] + 3.0
    assert SCALER_MIN_COUNT < MIN_COUNT
    Z = OnlineStandardScaler().partial_fit_transform(X)
    again = _reference_standardize(Z, min_count=MIN_COUNT)
    direct = _reference_standardize(X, min_count=MIN_COUNT)
    m = int(MIN_COUNT)
    assert np.mean(np.abs(again[m:m + 10]) == 5.0) < 0.05
    assert np.mean(np.abs(again[m:m + 20])) < 1.3 * np.mean(np.abs(direct[m:m + 20]))


def test_one_wild_row_does_not_freeze_the_scale():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3000, 2))
    X[1000, 0] = 1e20
    sc = OnlineStandardScaler()
    Z = sc.partial_fit_transform(X)
    # the scale moved by at most sqrt(1 + clip^2 / t) and later rows keep their spread
    assert sc.scale_[0] < 1.2
    assert 0.8 < Z[1001:, 0].std() < 1.2
    # plain running statistics (no clip) would shrink every later row to about 0
    plain = OnlineStandardScaler(clip_std=np.inf).partial_fit_transform(X)
    assert plain[1001:, 0].std() < 0.01


def test_a_genuine_change_of_scale_is_followed():
    rng = np.random.default_rng(2)
    X = np.vstack([rng.standard_normal((2000, 1)), 1000.0 * rng.standard_normal((2000, 1))])
    sc = OnlineStandardScaler()
    Z = sc.partial_fit_transform(X)
    assert sc.scale_[0] > 300.0
    assert 0.5 < Z[-500:, 0].std() < 3.0


def test_wide_stream_is_scaled_without_centring_and_keeps_its_structure(monkeypatch):
    # the container is decided by the width of the stream (issue 21): beyond WIDE_FEATURES (lowered
    # here to 2) rows are handled as CSR, dense or not, and only scaled; up to it, CSR rows are
    # centred like dense ones
    from skonline.utils import _scaling

    rng = np.random.default_rng(3)
    D = rng.standard_normal((200, 5)) * (rng.random((200, 5)) < 0.3) * [1, 10, 100, 1e3, 1e4]
    A = sp.csr_matrix(D)
    narrow = OnlineStandardScaler().partial_fit_transform(A)
    assert not sp.issparse(narrow)
    np.testing.assert_array_equal(narrow, OnlineStandardScaler().partial_fit_transform(D))
    monkeypatch.setattr(_scaling, "WIDE_FEATURES", 2)
    Z = OnlineStandardScaler().partial_fit_transform(A)
    assert sp.issparse(Z) and np.array_equal(Z.indices, A.indices) and np.array_equal(Z.indptr, A.indptr)
    Zd = OnlineStandardScaler().partial_fit_transform(D)
    assert sp.issparse(Zd) and np.array_equal(Zd.toarray(), Z.toarray())
    ref = np.zeros_like(D)
    sumsq = np.zeros(5)
    for t in range(200):
        s = np.sqrt(sumsq / t) if t >= SCALER_MIN_COUNT else np.zeros(5)
        ok = s > 0
        ref[t] = np.where(ok, np.clip(D[t] / np.where(ok, s, 1.0), -5, 5), 0.0)
        sumsq += np.where(ok, np.minimum(D[t] ** 2, (5 * s) ** 2), D[t] ** 2)  # winsorised
    np.testing.assert_allclose(Z.toarray(), ref, rtol=1e-9, atol=1e-12)


def test_min_max_scaler_uses_the_range_of_the_rows_before():
    X = np.array([[1.0], [3.0], [2.0], [5.0], [-1.0]])
    Z = OnlineMinMaxScaler(feature_range=(-1, 1)).partial_fit_transform(X).ravel()
    np.testing.assert_allclose(Z, [0.0, 0.0, 0.0, 1.0, -1.0])  # (5 -> clipped), (-1 -> clipped)
    sc = OnlineMinMaxScaler().fit(X)
    np.testing.assert_allclose(sc.transform([[2.0]]), [[0.5]])


# --------------------------------------------------------------------------- inside the estimators
_NEEDS_ARGS = {"OnlineEnsembleClassifier", "OnlineEnsembleRegressor", "OnlineKernelSelector", "OnlinePipeline",
               "OnlineColumnTransformer"}


def _standardizing():
    """The estimators that standardise their features online (a ``standardize`` parameter)."""
    return [cls for name, cls in all_estimators()
            if name not in _NEEDS_ARGS and "standardize" in cls().get_params()
            and name != "ScaleInvariantRegressor"]  # its features are never transformed


@pytest.mark.parametrize("cls", _standardizing(), ids=lambda c: c.__name__)
def test_predictions_do_not_depend_on_the_units_of_the_features(cls):
    """standardize=True: features rescaled and shifted give the same model (up to rounding); a
    regressor's target in other units gives predictions in those units."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 3))
    scale, shift = np.array([1e-3, 1.0, 1e4]), np.array([10.0, -3.0, 5e5])
    is_reg = "Regressor" in cls.__name__
    y = X @ [1.0, -1.0, 0.5] + 0.1 * rng.standard_normal(300)
    if not is_reg:
        y = (y > 0).astype(int)
    params = {"random_state": 0} if "random_state" in cls().get_params() else {}
    a = cls(**params)
    b = clone(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. GroupDRO without groups
        pa = a.partial_fit_predict(X, y, **({} if is_reg else {"classes": [0, 1]}))
        yb = 100.0 + 7.0 * y if is_reg else y
        pb = b.partial_fit_predict(X * scale + shift, yb, **({} if is_reg else {"classes": [0, 1]}))
        if is_reg:
            # from the second row (the forecast before any target is 0, in any units)
            np.testing.assert_allclose(100.0 + 7.0 * pa[1:], pb[1:], rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(100.0 + 7.0 * a.predict(X), b.predict(X * scale + shift), rtol=1e-6,
                                       atol=1e-6)
        else:
            assert np.mean(pa == pb) > 0.99
            assert np.mean(a.predict(X) == b.predict(X * scale + shift)) > 0.99


def test_one_wild_row_does_not_freeze_group_dro():
    from skonline.dro import GroupDROClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((4000, 3))
    y = (X @ [1.0, -1.0, 0.5] > 0).astype(int)
    X[1000] = 1e20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = GroupDROClassifier(random_state=0)
        pred = clf.partial_fit_predict(X, y, classes=[0, 1])
    assert np.mean(pred[2000:] == y[2000:]) > 0.9


def test_min_max_scaler_refuses_wide_sparse_rows_before_changing_anything():
    """Its output is dense: 2^18 sparse columns would be 2 GiB per 1,000 rows (scikit-learn's
    MinMaxScaler refuses sparse input altogether); narrower CSR rows are taken as before."""
    import scipy.sparse as sp

    wide = sp.random(5, 2**18, density=0.001, format="csr", random_state=0)
    sc = OnlineMinMaxScaler()
    with pytest.raises(TypeError, match="does not take sparse rows of more than 65,536 columns"):
        sc.partial_fit(wide)
    assert not hasattr(sc, "n_features_in_")
    narrow = sp.random(5, 100, density=0.1, format="csr", random_state=0)
    np.testing.assert_allclose(OnlineMinMaxScaler().partial_fit_transform(narrow),
                               OnlineMinMaxScaler().partial_fit_transform(narrow.toarray()))
    fitted = OnlineMinMaxScaler().fit(np.zeros((2, 2**18)))
    with pytest.raises(TypeError, match="65,536"):
        fitted.transform(sp.csr_matrix((1, 2**18)))
