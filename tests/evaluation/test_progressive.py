"""progressive_validation on streams of any length (issue 12: streams of 25 rows or fewer)."""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, mean_absolute_error

from skonline.evaluation import progressive_validation
from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor


@pytest.mark.parametrize("n", [1, 2, 7, 25, 26, 60])
def test_short_streams(n):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 3))
    y = (X[:, 0] > 0).astype(int)
    res = progressive_validation(ScaleInvariantClassifier(), X, y, fit_params={"classes": [0, 1]},
                                 metrics={"accuracy": accuracy_score})
    assert res.n_samples[0] >= 1 and res.n_samples[-1] == n
    assert len(res.n_samples) == min(n, 50)
    assert res.predictions.shape == (n,)
    assert np.isfinite(res.accuracy).all()
    reg = progressive_validation(ScaleInvariantRegressor(), X, X[:, 0], chunk_size=4,
                                 metrics={"mae": mean_absolute_error}, n_points=5)
    assert reg.n_samples[-1] == n and reg.n_samples[0] >= 1
    assert reg.final["mae"] == pytest.approx(mean_absolute_error(X[:, 0], reg.predictions))


def test_empty_stream_is_rejected():
    with pytest.raises(ValueError, match="at least one row"):
        progressive_validation(ScaleInvariantRegressor(), np.empty((0, 2)), np.empty(0))
