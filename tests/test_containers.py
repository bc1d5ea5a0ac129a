"""The container rule's memory bound (issue 21): a dense algorithm receives a wide CSR chunk as
dense blocks of at most ``_scaling.DENSIFY_BYTES``, never the whole chunk densified at once.
(Kernel-AWV and GroupDRO compute on wide CSR rows themselves: tests/kernel_ridge/test_kernel_awv.py,
tests/dro/test_gdro_sparse.py.)"""

import numpy as np
import pytest
import scipy.sparse as sp

from skonline.kernel_ridge import AWVRegressor
from skonline.utils import _scaling


@pytest.mark.parametrize("cls", [AWVRegressor])
def test_wide_csr_chunk_reaches_a_dense_pass_in_bounded_blocks(cls, monkeypatch):
    monkeypatch.setattr(_scaling, "WIDE_FEATURES", 2)
    monkeypatch.setattr(_scaling, "DENSIFY_BYTES", 7 * 8 * 4)  # 7 rows of 4 features
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4)) * (rng.random((40, 4)) < 0.5)
    y = X @ [1.0, -2.0, 0.5, 0.0]
    seen = []
    learn = cls._learn

    def spy(self, chunk):
        seen.append((type(chunk.X), chunk.X.shape))
        return learn(self, chunk)

    monkeypatch.setattr(cls, "_learn", spy)
    est = cls().partial_fit(sp.csr_matrix(X), y)
    assert seen and all(t is np.ndarray and s[0] <= 7 for t, s in seen)
    assert sum(s[0] for _, s in seen) == 40
    dense = cls().partial_fit(X, y)
    np.testing.assert_allclose(est.predict(sp.csr_matrix(X)), dense.predict(X), rtol=1e-12, atol=1e-12)
