"""GroupDRO at skonline's defaults (not the paper's settings): the radius of the regressor."""

import numpy as np
import pytest

from skonline.dro import GroupDROClassifier, GroupDRORegressor


def _stream(seed=0, n=600, d=6):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.logspace(-2, 3, d)  # features in their own units
    y = 150.0 + X @ (rng.standard_normal(d) / np.logspace(-2, 3, d)) * 40 + rng.standard_normal(n)
    groups = (X[:, 0] > 0).astype(int)
    return X, y, groups


@pytest.mark.parametrize("cls, standardize, radius", [
    (GroupDRORegressor, True, 3.0), (GroupDRORegressor, False, 10.0),
    (GroupDROClassifier, True, 10.0), (GroupDROClassifier, False, 10.0),
])
def test_auto_radius(cls, standardize, radius):
    X, y, groups = _stream()
    if cls is GroupDROClassifier:
        y = (y > np.median(y)).astype(int)
    est = cls(standardize=standardize, sampling="stream", random_state=0).fit(X, y, groups=groups)
    assert est.D_ == pytest.approx(radius / np.sqrt(2))
    w = np.append(np.ravel(est.coef_), np.ravel(est.intercept_))
    assert np.linalg.norm(w) <= radius * (1 + 1e-9)  # the model stays in its ball


def test_auto_radius_learns_faster_than_the_paper_s_on_a_raw_stream():
    # the standardised regressor with R = 10 takes steps about three times too large
    X, y, groups = _stream(1, n=2000)
    mae = {}
    for radius in ("auto", 10.0):
        est = GroupDRORegressor(radius=radius, random_state=0)
        pred = est.partial_fit_predict(X, y, groups=groups)
        mae[radius] = np.mean(np.abs(pred[200:] - y[200:]))
    assert mae["auto"] < 0.8 * mae[10.0]
