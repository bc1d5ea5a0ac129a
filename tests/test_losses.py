"""The loss catalogue: values, derivatives and the metadata algorithms rely on."""

import math

import numba
import numpy as np
import pytest

from skonline.losses import LOSSES, get_loss, loss_and_derivative, loss_derivative, loss_value
from skonline.utils._math import exp_array, exp_fused, pow2_int


def _grid(loss):
    rng = np.random.default_rng(0)
    p = np.concatenate([np.linspace(-6, 6, 2001), rng.normal(0, 30, 500)])
    if loss.task == "classification":
        y = np.where(rng.random(p.shape[0]) < 0.5, -1.0, 1.0)
    else:
        y = rng.normal(0, 3, p.shape[0])
    return y, p


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_derivative_matches_finite_differences(name):
    loss = LOSSES[name]
    y, p = _grid(loss)
    h = 1e-6
    num = (loss.value(y, p + h, 0.7) - loss.value(y, p - h, 0.7)) / (2 * h)
    der = loss.derivative(y, p, 0.7)
    # away from kinks the derivative is the slope; at kinks it is a subgradient between the one-sided slopes
    left = (loss.value(y, p, 0.7) - loss.value(y, p - h, 0.7)) / h
    right = (loss.value(y, p + h, 0.7) - loss.value(y, p, 0.7)) / h
    lo, hi = np.minimum(left, right), np.maximum(left, right)
    assert np.all((der >= lo - 1e-4) & (der <= hi + 1e-4)), name
    smooth = np.abs(right - left) < 1e-6
    np.testing.assert_allclose(der[smooth], num[smooth], atol=1e-5)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_lipschitz_and_smoothness_metadata(name):
    loss = LOSSES[name]
    y, p = _grid(loss)
    der = loss.derivative(y, p, 0.7)
    L = loss.lipschitz_constant(0.7)
    if L is None:
        assert np.abs(der).max() > 10  # unbounded derivative on a wide grid
    else:
        assert np.abs(der).max() <= L + 1e-12
        assert np.abs(der).max() >= 0.99 * L  # the constant is attained: not a loose bound
    if loss.smooth:
        for s in (-1.0, 1.0) if loss.task == "classification" else (0.0,):
            pp = np.linspace(-6, 6, 4001)
            d = loss.derivative(np.full_like(pp, s), pp, 0.7)
            slope = np.abs(np.diff(d) / np.diff(pp)).max()
            assert slope <= loss.smoothness + 1e-6


@numba.njit
def _compiled_fused(rec, y, p):
    return loss_and_derivative(rec, y, p)


@numba.njit
def _compiled_pair(rec, y, p):
    return loss_value(rec, y, p), loss_derivative(rec, y, p)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_compiled_and_python_formulas_agree(name):
    # the same formulas run as Python (called from Python) and compiled (from the record's type)
    loss = LOSSES[name]
    rec = loss.record(0.7)
    y, p = _grid(loss)
    for yi, pi in zip(y[::25], p[::25]):
        v, g = _compiled_pair(rec, yi, pi)
        assert v == pytest.approx(loss_value(rec, yi, pi), rel=1e-14, abs=1e-300)
        assert g == pytest.approx(loss_derivative(rec, yi, pi), rel=1e-14, abs=1e-300)
        assert loss_and_derivative(rec, yi, pi) == pytest.approx((v, g), rel=1e-12, abs=1e-300)


def test_the_record_type_is_the_task():
    # the record's type selects the compiled catalogue: one per task, carrying code and epsilon
    for loss in LOSSES.values():
        rec = loss.record(0.3)
        assert type(rec).__name__ == {"classification": "ClassificationLoss", "regression": "RegressionLoss"}[loss.task]
        assert (rec.code, rec.epsilon) == (loss.code, 0.3)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_fused_value_and_derivative(name):
    loss = LOSSES[name]
    y, p = _grid(loss)
    for yi, pi in zip(y[::50], p[::50]):
        v, g = _compiled_fused(loss.record(0.7), yi, pi)
        assert v == pytest.approx(loss.value([yi], [pi], 0.7)[0], rel=1e-12, abs=1e-300)
        assert g == pytest.approx(loss.derivative([yi], [pi], 0.7)[0], rel=1e-12, abs=1e-300)


def test_log_loss_is_stable_for_large_margins():
    loss = get_loss("log_loss")
    v = loss.value([1.0, -1.0, 1.0], [800.0, 800.0, -800.0])
    np.testing.assert_allclose(v, [0.0, 800.0, 800.0], atol=1e-300)
    assert np.all(np.isfinite(loss.derivative([1.0, -1.0], [1e6, 1e6])))


def test_names_aliases_and_checks():
    assert get_loss("logistic") is get_loss("log_loss")
    assert get_loss("squared") is get_loss("squared_error")
    assert get_loss("absolute") is get_loss("absolute_error")
    with pytest.raises(ValueError, match="Unknown loss"):
        get_loss("cross_entropy")
    with pytest.raises(ValueError, match="regression loss"):
        get_loss("huber", task="classification")
    with pytest.raises(ValueError, match="not Lipschitz"):
        get_loss("squared_error").check(lipschitz=True, estimator="X")
    with pytest.raises(ValueError, match="not smooth"):
        get_loss("hinge").check(smooth=True)
    assert get_loss("huber").lipschitz_constant(epsilon=0.3) == 0.3
    with pytest.raises(ValueError, match="different lengths"):
        get_loss("hinge").value([1.0, 1.0], [0.0])


def test_vectorised_exp_within_one_ulp():
    x = np.linspace(-708, 709, 200_001)
    got = exp_array(x)
    ref = np.array([math.exp(v) for v in x])  # libm (numpy's own SIMD exp is 1 ulp off in places)
    assert np.max(np.abs(got - ref) / np.spacing(ref)) <= 1.0
    assert exp_array(np.array([1e6]))[0] == np.exp(709.0)  # clamped, not inf


def test_fused_exp_within_one_ulp():
    # the scale-invariant passes' exp (reduction and polynomial in fused multiply-adds where the CPU
    # has them): as accurate as the unfused one
    x = np.linspace(-708, 709, 20_001)
    got = np.array([exp_fused(v) for v in x])
    ref = np.array([math.exp(v) for v in x])
    assert np.max(np.abs(got - ref) / np.spacing(ref)) <= 1.0


def test_powers_of_two_from_bit_patterns_are_exact():
    # 2^k built from the bits of k + 1.5 * 2^52 (no float-to-integer conversion) over the whole
    # normal range of exp's reduction
    k = np.arange(-1022, 1024)
    got = np.array([pow2_int(float(v)) for v in k])
    np.testing.assert_array_equal(got, np.ldexp(1.0, k))


def _reference(name, y, p, eps):
    """Each loss and its (sub)gradient from its textbook formula, in numpy (independent of the catalogue)."""
    m, r = y * p, p - y
    if name == "log_loss":
        return np.logaddexp(0.0, -m), -y / (1.0 + np.exp(m))
    if name == "hinge":
        return np.maximum(0.0, 1.0 - m), np.where(m <= 1.0, -y, 0.0)
    if name == "squared_hinge":
        return np.maximum(0.0, 1.0 - m) ** 2, -2.0 * y * np.maximum(0.0, 1.0 - m)
    if name == "modified_huber":
        v = np.where(m < -1.0, -4.0 * m, np.maximum(0.0, 1.0 - m) ** 2)
        return v, np.where(m < -1.0, -4.0 * y, -2.0 * y * np.maximum(0.0, 1.0 - m))
    if name == "squared_error":
        return 0.5 * r * r, r
    if name == "absolute_error":
        return np.abs(r), np.sign(r)
    if name == "epsilon_insensitive":
        return np.maximum(0.0, np.abs(r) - eps), np.where(np.abs(r) > eps, np.sign(r), 0.0)
    return np.where(np.abs(r) <= eps, 0.5 * r * r, eps * (np.abs(r) - 0.5 * eps)), np.clip(r, -eps, eps)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_values_and_derivatives_match_the_textbook_formulas(name):
    loss = LOSSES[name]
    y, p = _grid(loss)
    v, g = _reference(name, y, p, 0.7)
    np.testing.assert_allclose(loss.value(y, p, 0.7), v, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(loss.derivative(y, p, 0.7), g, rtol=1e-12, atol=1e-300)
