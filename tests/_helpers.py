"""Test helpers shared by tests/test_common.py and the ecosystem tests (one state comparison).

Test modules import it as ``from _helpers import ...``: ``tests/`` is on ``sys.path`` because
pytest's default import mode inserts the directory of ``tests/conftest.py`` (a rootless directory,
no ``__init__.py``).
"""

import pickle
import warnings

import numpy as np
import scipy.sparse as sp

from skonline.exceptions import RenamedParameterWarning


def learned_state(est):
    """Every learned attribute: those whose name ends with an underscore, public ``name_`` and
    private ``_name_`` (for an online pipeline, those of every step)."""
    if hasattr(est, "steps"):
        return {f"{name}__{k}": v for name, step in est.steps for k, v in learned_state(step).items()}
    return {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("__")}


def _assert_same(va, vb, where, depth=0, ignore=()):
    assert depth < 20, where
    if isinstance(va, np.random.Generator):
        assert isinstance(vb, np.random.Generator), where
        assert va.bit_generator.state == vb.bit_generator.state, where
    elif isinstance(va, np.ndarray):
        assert isinstance(vb, np.ndarray), where
        assert va.dtype == vb.dtype and va.shape == vb.shape, where
        np.testing.assert_array_equal(np.asarray(va), np.asarray(vb), err_msg=where)
    elif sp.issparse(va):
        assert sp.issparse(vb) and va.shape == vb.shape, where
        np.testing.assert_array_equal(va.toarray(), vb.toarray(), err_msg=where)
    elif isinstance(va, dict):
        assert isinstance(vb, dict) and va.keys() == vb.keys(), where
        for k in va:
            _assert_same(va[k], vb[k], f"{where}[{k!r}]", depth + 1, ignore)
    elif isinstance(va, (list, tuple)):
        assert type(va) is type(vb) and len(va) == len(vb), where
        for i, (a, b) in enumerate(zip(va, vb)):
            _assert_same(a, b, f"{where}[{i}]", depth + 1, ignore)
    elif hasattr(va, "get_params"):  # a nested estimator (ensembles, pipelines)
        assert type(va) is type(vb), where
        assert_same_state(va, vb, where, depth + 1, ignore=ignore)
    elif isinstance(va, (float, np.floating)):
        assert va == vb or (va != va and vb != vb), where
    elif hasattr(va, "__dict__") and not callable(va) and not isinstance(va, type):
        assert type(va) is type(vb), where  # a plain helper object: compare its attributes
        _assert_same(vars(va), vars(vb), where, depth + 1, ignore)
    elif type(va) is type(vb) and va == vb:
        pass
    else:  # e.g. a compiled loss object of a nested scikit-learn estimator: no __eq__
        assert type(va) is type(vb), where
        assert pickle.dumps(va) == pickle.dumps(vb), where


def assert_same_state(a, b, where=None, depth=0, *, ignore=()):
    """``a`` and ``b`` hold bit-identical learned state, public properties included.

    Attribute names in ``ignore`` are left out, here and in nested estimators (e.g.
    ``feature_names_in_``).
    """
    where = where or type(a).__name__
    sa, sb = learned_state(a), learned_state(b)
    for k in ignore:  # also in the steps of a pipeline (keys "<step>__<name>")
        for d in (sa, sb):
            for key in [key for key in d if key == k or key.endswith("__" + k)]:
                d.pop(key)
    assert sa.keys() == sb.keys(), (where, sorted(set(sa) ^ set(sb)))
    for k in sa:
        _assert_same(sa[k], sb[k], f"{where}.{k}", depth, ignore)
    # fitted quantities exposed as properties (coef_, intercept_, ...) computed from the state
    for k in dir(type(a)):
        if k in ignore:
            continue
        if k.endswith("_") and not k.startswith("_") and isinstance(getattr(type(a), k), property):
            with warnings.catch_warnings():  # a retired attribute name (alpha_) reads its new one
                warnings.simplefilter("ignore", RenamedParameterWarning)
                try:
                    va = getattr(a, k)
                except (AttributeError, ValueError):  # not available for this configuration / state
                    continue
                vb = getattr(b, k)
            _assert_same(va, vb, f"{where}.{k}", depth, ignore)
