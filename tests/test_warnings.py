"""Every warning skonline gives names the user's line (issue 23).

One warning of each kind skonline gives (a growth budget, a convergence note, a clamp, a horizon,
a collinearity note, a family's settings, an ensemble's and a pipeline's), each triggered from a
line of this file: the recorded warning's filename must be this file, whatever the depth of the
call inside skonline (``skonline.utils._warnings.warn`` walks the stack instead of a hand-counted
``stacklevel``). The download warning of ``skonline.datasets`` and the compile-cache warning go
through the same helper and are covered in tests/datasets and tests/test_compile_cache.py.
"""

import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning

from skonline.dro import GroupDROClassifier
from skonline.exceptions import (
    DataAdviceWarning,
    HorizonExceededWarning,
    NumericalClampWarning,
    StateGrowthWarning,
    TheoremConditionWarning,
)
from skonline.experts import PCS, PCSP, OnlineEnsembleClassifier, OnlineEnsembleRegressor
from skonline.kernel_approximation import TaylorFeatures
from skonline.kernel_ridge import KernelAWVRegressor, PKAWVRegressor
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


def _wide_sparse():
    import scipy.sparse as sp

    return sp.random(3, 2**13, density=0.01, format="csr", random_state=0)


def _absurd_row():
    X = np.ones((3, 2))
    X[1] = [1e12, -3.0]  # the full-invariance pseudo-inverse update refuses this row
    return X


# (what the warning says, its category, the call that gives it: a line of this file)
CASES = {
    "growth budget": ("reached the budget max_support=50", StateGrowthWarning,
                      lambda: KernelSelectionClassifier("oks++", n_components=None, max_support=50,
                                                        random_state=0).fit(X3, Y3_NOISE)),
    "collinear (full invariance)": ("nearly collinear", DataAdviceWarning,
                                    lambda: ScaleInvariantClassifier(invariance="full").fit(BC_X, BC_Y)),
    "clamp": ("clamped", NumericalClampWarning,
              lambda: ScaleInvariantRegressor(invariance="coordinate", standardize=False, fit_intercept=False)
              .partial_fit(np.ones((6000, 1)), np.full(6000, 1e300))),
    "GroupDRO fit convergence": ("before its objective settled", ConvergenceWarning,
                                 lambda: GroupDROClassifier(random_state=0, n_epochs=1).fit(X3, Y3, groups=G3)),
    "GroupDRO without groups": ("without groups", DataAdviceWarning, lambda: GroupDROClassifier().fit(X3, Y3_NOISE)),
    "GroupDRO horizon": ("exceed the horizon", HorizonExceededWarning,
                         lambda: GroupDROClassifier(sampling="stream", horizon=100).partial_fit(
                             X3, Y3, classes=[0, 1])),
    "rule horizon": ("more rounds than horizon", HorizonExceededWarning, lambda: PCS(horizon=20).fit(L3)),
    "rule eta": ("Theorem 2 needs", TheoremConditionWarning, lambda: PCS(eta=0.9).fit(L3)),
    "matrix rule eta": ("Theorem 5 needs", TheoremConditionWarning,
                        lambda: PCSP(eta=0.9).fit(np.stack([np.diag(row) for row in L3]))),
    "matrix rule horizon": ("more rounds than horizon", HorizonExceededWarning,
                            lambda: PCSP(horizon=20).fit(np.stack([np.diag(row) for row in L3]))),
    "kernel selection horizon": ("T >= 40", TheoremConditionWarning,
                                 lambda: KernelSelectionClassifier("ioks", horizon=10,
                                                                   random_state=0).fit(X3, Y3_NOISE)),
    "kernel selection radius": ("exceed the radius", DataAdviceWarning,
                                lambda: KernelSelectionRegressor("ioks", loss="squared", n_components=32,
                                                                 standardize=False, random_state=0)
                                .fit(X3, 5.0 * X3[:, 0])),
    "Taylor basis (kernel ridge)": ("Taylor features", DataAdviceWarning,
                                    lambda: PKAWVRegressor(degree=3, features="taylor").fit(np.zeros((2, 40)),
                                                                                            np.zeros(2))),
    "Taylor basis (transformer)": ("output features", DataAdviceWarning,
                                   lambda: TaylorFeatures(degree=4).fit(np.zeros((1, 40)))),
    "PKAWV on wide sparse rows": ("wide sparse rows", DataAdviceWarning,
                                  lambda: PKAWVRegressor().fit(_wide_sparse(), np.arange(3.0))),
    "Kernel-AWV on wide sparse rows": ("wide sparse rows", DataAdviceWarning,
                                       lambda: KernelAWVRegressor().fit(_wide_sparse(), np.arange(3.0))),
    "an expert refusing a row inside an ensemble": (
        "refused 1 row(s)", DataAdviceWarning,
        lambda: OnlineEnsembleRegressor([("si", ScaleInvariantRegressor(invariance="full")),
                                         ("plus", _frozen(1.0))]).fit(_absurd_row(), np.arange(3.0))),
    "ensemble wild target": ("times the range", DataAdviceWarning,
                             lambda: OnlineEnsembleRegressor([("plus", _frozen(1.0)), ("minus", _frozen(-1.0))])
                             .partial_fit(X3, _wild_targets())),
    "an expert's warning inside an ensemble": (
        "reached the budget max_support=50", StateGrowthWarning,
        lambda: OnlineEnsembleClassifier(
            [("ks", KernelSelectionClassifier("oks++", n_components=None, max_support=50, random_state=0))]
        ).fit(X3, Y3_NOISE)),
    "a learner's warning inside a pipeline": (
        "reached the budget max_support=50", StateGrowthWarning,
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
    hits = [w for w in record if w.category is category and match in str(w.message)]
    assert hits, f"{case}: no {category.__name__} matching {match!r} (got {[str(w.message) for w in record]})"
    for w in hits:
        assert w.filename == __file__, f"{case}: the warning names {w.filename}:{w.lineno}"


# ---------------------------------------------------------------- advice that runs as written
#: a call as code shows it: ``Name(...)`` or ``module.Name(...)`` (CamelCase: not O(r^2))
CALL = re.compile(r"(?<![\w.])(?:[a-z_]+\.)*[A-Z][a-z]\w*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)")


def _namespace():
    """What the advice may name: skonline's public estimators and subpackages, scikit-learn's."""
    import importlib

    import sklearn.multioutput

    import skonline

    ns = {"skonline": skonline, "sklearn": sklearn, "np": np}
    for sub in ("dro", "experts", "kernel_approximation", "kernel_ridge", "kernel_selection",
                "linear_model", "pipeline", "preprocessing", "compose"):
        mod = importlib.import_module(f"skonline.{sub}")
        ns.update({n: getattr(mod, n) for n in getattr(mod, "__all__", [])})
    ns.update({n: getattr(sklearn.multioutput, n) for n in ("MultiOutputRegressor", "MultiOutputClassifier")})
    return ns


def _messages_with_code():
    """Each warning of CASES and a few errors that advise code, with the code they advise."""
    out = []
    for case, (match, _category, call) in CASES.items():
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            call()
        out += [(case, str(w.message)) for w in record if match in str(w.message)]
    errors = {
        "two-column target": lambda: ScaleInvariantRegressor().fit(X3, X3[:, :2]),
        "radius=None": lambda: KernelSelectionClassifier("oks++", radius=None).fit(X3, Y3),
    }
    for case, call in errors.items():
        with pytest.raises(ValueError) as info:
            call()
        out.append((case, str(info.value)))
    return out


def test_the_ensemble_advice_is_short_and_runs():
    """The collinearity note advises the default ensemble, constructible as written (issue 22/23)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ScaleInvariantClassifier(invariance="full").fit(BC_X, BC_Y)
    (message,) = [str(w.message) for w in record if "nearly collinear" in str(w.message)]
    assert "skonline.experts.OnlineEnsembleClassifier()" in message
    assert "benchmarks/" not in message and len(message) < 450
    ens = eval("skonline.experts.OnlineEnsembleClassifier()", _namespace())  # noqa: S307
    assert ens.fit(BC_X[:200], BC_Y[:200]).score(BC_X[200:], BC_Y[200:]) > 0.8


def _fits(obj):
    """An advised estimator is constructed and fitted (a wrong argument may only raise in fit)."""
    from sklearn.base import is_classifier, is_regressor
    from sklearn.multioutput import MultiOutputRegressor

    if isinstance(obj, MultiOutputRegressor):
        obj.fit(X3, X3[:, :2])
    elif is_classifier(obj):
        obj.fit(X3, Y3)
    elif is_regressor(obj):
        obj.fit(X3, X3[:, 0])
    elif hasattr(obj, "fit"):
        obj.fit(X3)


def test_every_advised_call_runs_as_written():
    """Every call a warning or error message shows (``Name(...)``) constructs as written, and fits, and no
    message points at a file that is not installed (benchmarks/, docs/)."""
    ns = _namespace()
    snippets = []
    for case, message in _messages_with_code():
        assert "benchmarks/" not in message and ".py" not in message, (case, message)
        for code in CALL.findall(message):
            snippets.append((case, code))
            _fits(eval(code, dict(ns)))  # noqa: S307 - any error is the failure we look for
    codes = {code for _, code in snippets}
    # the messages above advise these (a check that the extraction found them)
    assert "skonline.experts.OnlineEnsembleClassifier()" in codes
    assert "sklearn.multioutput.MultiOutputRegressor(ScaleInvariantRegressor())" in codes


# ---------------------------------------------------------------- one category per event
def _warn_calls():
    """Every call of ``warn(...)`` / ``warnings.warn(...)`` in skonline's source: (file, line, node)."""
    import ast
    import pathlib

    import skonline

    root = pathlib.Path(skonline.__file__).parent
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name == "warn":
                    yield path.relative_to(root.parent).as_posix(), node.lineno, node


def test_every_warning_has_a_category_of_the_catalog():
    """Each ``warn(message, category)`` in skonline names its category, one of skonline.exceptions'
    catalog (or scikit-learn's ConvergenceWarning), never a bare UserWarning / RuntimeWarning; and
    only skonline.utils._warnings calls ``warnings.warn`` (the one helper that finds the user's line)."""
    import ast

    import skonline.exceptions as exc

    catalog = set(exc.__all__) | {"ConvergenceWarning"}
    calls = list(_warn_calls())
    assert len(calls) > 15  # the scan finds the calls (a check of the scan itself)
    for where, line, node in calls:
        if isinstance(node.func, ast.Attribute):  # warnings.warn(...)
            assert where == "skonline/utils/_warnings.py", f"{where}:{line}: warnings.warn outside _warnings.py"
            continue
        args = list(node.args) + [k.value for k in node.keywords if k.arg == "category"]
        assert len(args) == 2, f"{where}:{line}: warn() without a category"
        category = args[1]
        name = category.attr if isinstance(category, ast.Attribute) else getattr(category, "id", None)
        assert name in catalog, f"{where}:{line}: warn(..., {name}) is not in skonline.exceptions' catalog"
    for name in exc.__all__:
        cls = getattr(exc, name)
        assert issubclass(cls, (UserWarning, RuntimeWarning, FutureWarning)), name
