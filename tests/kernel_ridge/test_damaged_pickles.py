"""A damaged pickle of a growing kernel model is refused at load, with a clear error.

The growing models (Kernel-AWV, PKAWV-Nystrom, kernel selection) pickle the used block of each
buffer; the state says how large each block is, and sparse rows are indexed by compiled code that
does not bounds-check. A pickle whose arrays disagree with its state (a row pointer short, a
truncated history, an out-of-range column) must raise ``ValueError`` when loaded, not crash the
process or corrupt memory later.
"""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from skonline.kernel_approximation import OnlineNystroem
from skonline.kernel_ridge import KernelAWVRegressor, PKAWVRegressor


def _wide_csr(n=200, d=5000, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.004, format="csr", random_state=seed, data_rvs=rng.standard_normal)
    y = np.asarray(X.sum(axis=1)).ravel() + 0.1 * rng.standard_normal(n)
    return X, y


def _fitted(name):
    X, y = _wide_csr()
    if name == "kawv":
        est = KernelAWVRegressor(max_rows=1000)
    elif name == "kawv_projected":
        est = KernelAWVRegressor(max_rows=50)
    elif name == "pkawv":
        est = PKAWVRegressor(features="nystrom", random_state=0)
    elif name == "nystroem":
        est = OnlineNystroem(random_state=0)
    else:
        est = PKAWVRegressor(features="nystrom", random_state=0)
        X, y = X.toarray()[:, :20], y  # dense rows: no sparse structure, the shapes still checked
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the advice on wide sparse rows, the budget notes
        est.partial_fit(X, y)
    return est


def _damage(est, name, how):
    state = est.__getstate__()
    state = dict(state)
    arr = np.array(state[name])
    if how == "short":
        arr = arr[:-1]
    elif how == "decreasing":
        arr[len(arr) // 2] = arr[-1] + 5
    elif how == "out_of_range":
        arr[0] = 10**9
    state[name] = arr
    out = object.__new__(type(est))
    return out, state


@pytest.mark.parametrize("name, buf, how", [
    ("kawv", "_X_ptr_", "short"),
    ("kawv", "_X_ptr_", "decreasing"),
    ("kawv", "_X_ind_", "out_of_range"),
    ("kawv", "_X_val_", "short"),
    ("kawv", "_chol_buf_", "short"),
    ("kawv_projected", "_dict_ptr_", "decreasing"),
    ("kawv_projected", "_dict_ind_", "out_of_range"),
    ("pkawv", "_dict_ptr_", "short"),
    ("pkawv", "_dict_ind_", "out_of_range"),
    ("pkawv", "_hist_ptr_", "decreasing"),
    ("pkawv_dense", "_hist_XT_", "short"),
    ("nystroem", "_dict_ptr_", "decreasing"),
    ("nystroem", "_dict_ind_", "out_of_range"),
    ("nystroem", "_chol_t_", "short"),
])
def test_damaged_pickle_is_refused_at_load(name, buf, how):
    est = _fitted(name)
    assert buf in est.__getstate__(), buf
    blank, state = _damage(est, buf, how)
    with pytest.raises(ValueError, match="damaged"):
        blank.__setstate__(state)


@pytest.mark.parametrize("name", ["kawv", "kawv_projected", "pkawv", "pkawv_dense", "nystroem"])
def test_intact_pickles_load_and_continue(name):
    est = _fitted(name)
    X, y = _wide_csr(seed=1)
    if name == "pkawv_dense":
        X = X.toarray()[:, :20]
    loaded = pickle.loads(pickle.dumps(est))
    warnings.simplefilter("ignore")
    if name == "nystroem":
        np.testing.assert_array_equal(loaded.partial_fit(X).transform(X), est.partial_fit(X).transform(X))
        return
    np.testing.assert_array_equal(loaded.partial_fit_predict(X, y), est.partial_fit_predict(X, y))
