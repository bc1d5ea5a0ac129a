"""Every warning skonline gives names the user's line (issue 23).

One warning of each kind skonline gives (a growth budget, a convergence note, a clamp, a horizon,
a collinearity note, a family's settings, an ensemble's and a pipeline's), each triggered from a
line of this file: the recorded warning's filename must be this file, whatever the depth of the
call inside skonline (``skonline.utils._warnings.warn`` walks the stack instead of a hand-counted
``stacklevel``). The download warning of ``skonline.datasets`` and the compile-cache warning go
through the same helper and are covered in tests/datasets and tests/test_compile_cache.py.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning

from skonline.dro import GroupDROClassifier
from skonline.experts import PCS, PCSP, OnlineEnsembleClassifier, OnlineEnsembleRegressor
from skonline.kernel_approximation import TaylorFeatures
from skonline.kernel_ridge import PKAWVRegressor
from skonline.kernel_selection import KernelSelectionClassifier, KernelSelectionRegressor
from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor
from skonline.pipeline import make_online_pipeline
from skonline.preprocessing import OnlineStandardScaler

RNG = np.random.default_rng(0)
X3 = RNG.standard_normal((300, 3))
Y3 = (X3[:, 0] - X3[:, 1] > 0).astype(int)
G3 = np.repeat(np.arange(3), 100)
Y3_NOISE = RNG.integers(0, 2, 300)  # many mistakes: many support rows
L3 = RNG.uniform(size=(30, 3))
BC_X, BC_Y = load_breast_cancer(return_X_y=True)


def _frozen(c):
    from sklearn.dummy import DummyRegressor
    from sklearn.frozen import FrozenEstimator

    return FrozenEstimator(DummyRegressor(strategy="constant", constant=c).fit([[0.0]], [c]))


def _wild_targets():
    y = np.where(np.arange(300) < 150, 1.0, -1.0) + 0.1 * np.random.default_rng(1).standard_normal(300)
    y[200] = 1e154
    return y


# (what the warning says, its category, the call that gives it: a line of this file)
CASES = {
    "growth budget": ("reached the budget max_support=50", UserWarning,
                      lambda: KernelSelectionClassifier("oks++", n_components=None, max_support=50,
                                                        random_state=0).fit(X3, Y3_NOISE)),
    "collinear (full invariance)": ("nearly collinear", UserWarning,
                                    lambda: ScaleInvariantClassifier(invariance="full").fit(BC_X, BC_Y)),
    "clamp": ("clamped", RuntimeWarning,
              lambda: ScaleInvariantRegressor(invariance="coordinate", standardize=False, fit_intercept=False)
              .partial_fit(np.ones((6000, 1)), np.full(6000, 1e300))),
    "GroupDRO fit convergence": ("before its objective settled", ConvergenceWarning,
                                 lambda: GroupDROClassifier(random_state=0, n_epochs=1).fit(X3, Y3, groups=G3)),
    "GroupDRO without groups": ("without groups", UserWarning, lambda: GroupDROClassifier().fit(X3, Y3_NOISE)),
    "GroupDRO horizon": ("exceed the horizon", RuntimeWarning,
                         lambda: GroupDROClassifier(sampling="stream", max_iter=100).partial_fit(
                             X3, Y3, classes=[0, 1])),
    "rule horizon": ("more rounds than horizon", UserWarning, lambda: PCS(horizon=20).fit(L3)),
    "rule eta": ("Theorem 2 needs", UserWarning, lambda: PCS(eta=0.9).fit(L3)),
    "matrix rule eta": ("Theorem 5 needs", UserWarning,
                        lambda: PCSP(eta=0.9).fit(np.stack([np.diag(row) for row in L3]))),
    "matrix rule horizon": ("more rounds than horizon", UserWarning,
                            lambda: PCSP(horizon=20).fit(np.stack([np.diag(row) for row in L3]))),
    "kernel selection horizon": ("T >= 40", UserWarning,
                                 lambda: KernelSelectionClassifier("ioks", horizon=10,
                                                                   random_state=0).fit(X3, Y3_NOISE)),
    "kernel selection radius": ("exceed the radius", UserWarning,
                                lambda: KernelSelectionRegressor("ioks", loss="squared", n_components=32,
                                                                 standardize=False, random_state=0)
                                .fit(X3, 5.0 * X3[:, 0])),
    "Taylor basis (kernel ridge)": ("Taylor features", UserWarning,
                                    lambda: PKAWVRegressor(degree=3, features="taylor").fit(np.zeros((2, 40)),
                                                                                            np.zeros(2))),
    "Taylor basis (transformer)": ("output features", UserWarning,
                                   lambda: TaylorFeatures(degree=4).fit(np.zeros((1, 40)))),
    "ensemble wild target": ("times the range", UserWarning,
                             lambda: OnlineEnsembleRegressor([("plus", _frozen(1.0)), ("minus", _frozen(-1.0))])
                             .partial_fit(X3, _wild_targets())),
    "an expert's warning inside an ensemble": (
        "reached the budget max_support=50", UserWarning,
        lambda: OnlineEnsembleClassifier(
            [("ks", KernelSelectionClassifier("oks++", n_components=None, max_support=50, random_state=0))]
        ).fit(X3, Y3_NOISE)),
    "a learner's warning inside a pipeline": (
        "reached the budget max_support=50", UserWarning,
        lambda: make_online_pipeline(OnlineStandardScaler(),
                                     KernelSelectionClassifier("oks++", n_components=None, max_support=50,
                                                               random_state=0))
        .fit(X3, Y3_NOISE)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_warning_names_this_file(case):
    match, category, call = CASES[case]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        call()
    hits = [w for w in record if issubclass(w.category, category) and match in str(w.message)]
    assert hits, f"{case}: no {category.__name__} matching {match!r} (got {[str(w.message) for w in record]})"
    for w in hits:
        assert w.filename == __file__, f"{case}: the warning names {w.filename}:{w.lineno}"
