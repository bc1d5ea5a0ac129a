"""The loss catalogue shared by every family.

Each loss has a scalar value and derivative that compiled code calls as ``loss_value(record, y, p)``,
``loss_derivative(record, y, p)`` and ``loss_and_derivative(record, y, p)``, where ``record`` is the
loss's record (``Loss.record(epsilon)``: its code and parameter): from the record's type numba
compiles the losses of that task only. A small Python descriptor, :class:`Loss`, carries
the metadata an algorithm checks its assumptions against: is the loss smooth, what is its
Lipschitz constant in the prediction, what targets does it take.

Conventions: ``p`` is the raw prediction (a decision value for classification, the predicted value
for regression). Classification losses take labels ``y`` in {-1, +1}; regression losses take real
``y``. Derivatives are with respect to ``p``; at a kink the subgradient is the one scikit-learn's SGD
uses (hinge: ``-y`` when ``y p <= 1``; absolute: ``sign(0) = 0``).

=================== ============================================ ============ =========== ==========
name                value                                        task         smooth      Lipschitz
=================== ============================================ ============ =========== ==========
log_loss            log(1 + exp(-y p))                           binary       yes (1/4)   1
hinge               max(0, 1 - y p)                              binary       no          1
squared_hinge       max(0, 1 - y p)^2                            binary       yes (2)     unbounded
modified_huber      -4 y p if y p < -1, else max(0, 1 - y p)^2   binary       yes (2)     4
squared_error       (p - y)^2 / 2                                regression   yes (1)     unbounded
absolute_error      abs(p - y)                                   regression   no          1
epsilon_insensitive max(0, abs(p - y) - epsilon)                 regression   no          1
huber               r^2/2 if abs(r) <= epsilon, else             regression   yes (1)     epsilon
                    epsilon (abs(r) - epsilon / 2), r = p - y
=================== ============================================ ============ =========== ==========

Aliases: ``logistic`` for ``log_loss``, ``squared`` for ``squared_error``, ``absolute`` for
``absolute_error``.
"""

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba.core import types
from numba.extending import overload

from .utils._jit import OVERLOAD_OPTIONS, njit

__all__ = ["Loss", "get_loss", "LOSSES", "loss_value", "loss_derivative", "loss_and_derivative"]

LOG_LOSS = 0
HINGE = 1
SQUARED_HINGE = 2
MODIFIED_HUBER = 3
SQUARED_ERROR = 4
ABSOLUTE_ERROR = 5
EPSILON_INSENSITIVE = 6
HUBER = 7


# ------------------------------------------------------------------ the two catalogues
# Compiled code calls ``loss_value(loss, y, p)`` with the loss's record (``Loss.record``): its type,
# ClassificationLoss or RegressionLoss, selects the catalogue numba compiles, so a classifier's core
# compiles the four classification losses and a regressor's the four regression losses (one switch
# over all eight cost every first fit about 0.5 s of compile), and switching between losses of one
# task does not compile the core again. One function per task computes value and derivative
# together; loss_value and loss_derivative take their half of it, and the cores call
# loss_and_derivative only, so a first fit compiles one catalogue function.


class ClassificationLoss(NamedTuple):
    """What compiled code reads of a classification loss: its ``code`` and parameter ``epsilon``."""

    code: int
    epsilon: float


class RegressionLoss(NamedTuple):
    """What compiled code reads of a regression loss: its ``code`` and parameter ``epsilon``."""

    code: int
    epsilon: float


def _classification_both(loss, y, p):
    c = loss.code
    if c == LOG_LOSS:  # one exponential for both
        z = y * p
        if z > 0.0:
            e = math.exp(-z)
            return math.log1p(e), -y * e / (1.0 + e)
        e = math.exp(z)
        return -z + math.log1p(e), -y / (1.0 + e)
    if c == HINGE:
        z = 1.0 - y * p
        return (z if z > 0.0 else 0.0), (-y if y * p <= 1.0 else 0.0)
    if c == SQUARED_HINGE:
        z = 1.0 - y * p
        if z > 0.0:
            return z * z, -2.0 * y * z
        return 0.0, 0.0
    z = y * p  # MODIFIED_HUBER
    if z < -1.0:
        return -4.0 * z, -4.0 * y
    if z < 1.0:
        return (1.0 - z) * (1.0 - z), -2.0 * y * (1.0 - z)
    return 0.0, 0.0


def _regression_both(loss, y, p):
    c = loss.code
    r = p - y
    if c == SQUARED_ERROR:
        return 0.5 * r * r, r
    if c == ABSOLUTE_ERROR:
        return abs(r), (1.0 if r > 0.0 else (-1.0 if r < 0.0 else 0.0))
    eps = loss.epsilon
    if c == EPSILON_INSENSITIVE:
        a = abs(r) - eps
        return (a if a > 0.0 else 0.0), (1.0 if r > eps else (-1.0 if r < -eps else 0.0))
    a = abs(r)  # HUBER
    v = 0.5 * r * r if a <= eps else eps * (a - 0.5 * eps)
    return v, (eps if r > eps else (-eps if r < -eps else r))


#: record class -> its catalogue: f(loss, y, p) = (value, derivative)
_CATALOGUES = {ClassificationLoss: _classification_both, RegressionLoss: _regression_both}


def loss_and_derivative(loss, y, p):
    """``(value, derivative)`` of the loss ``loss`` (its record, :meth:`Loss.record`) at target
    ``y`` and prediction ``p``; the derivative is a subgradient at kinks (one exponential for the
    log loss).

    Runs as Python when called from Python; in compiled code, numba compiles the catalogue of the
    record's task only (:class:`ClassificationLoss` or :class:`RegressionLoss`).
    """
    return _CATALOGUES[type(loss)](loss, y, p)


def loss_value(loss, y, p):
    """Value of ``loss`` at target ``y`` and prediction ``p``: ``loss_and_derivative(...)[0]``."""
    return loss_and_derivative(loss, y, p)[0]


def loss_derivative(loss, y, p):
    """Derivative of ``loss`` with respect to ``p``: ``loss_and_derivative(...)[1]``."""
    return loss_and_derivative(loss, y, p)[1]


def _catalogue(loss):
    """The catalogue of the numba record type ``loss`` (None if it is not a loss record)."""
    if isinstance(loss, types.BaseNamedTuple):
        return _CATALOGUES.get(loss.instance_class)
    return None


@overload(loss_and_derivative, jit_options=OVERLOAD_OPTIONS)
def _loss_and_derivative_impl(loss, y, p):
    return _catalogue(loss)


# Called from compiled code, these compile the catalogue again inside (an overload that calls an
# overloaded function gets its own copy of it): the cores call loss_and_derivative only.
@overload(loss_value, jit_options=OVERLOAD_OPTIONS)
def _loss_value_impl(loss, y, p):
    if _catalogue(loss) is not None:
        return lambda loss, y, p: loss_and_derivative(loss, y, p)[0]


@overload(loss_derivative, jit_options=OVERLOAD_OPTIONS)
def _loss_derivative_impl(loss, y, p):
    if _catalogue(loss) is not None:
        return lambda loss, y, p: loss_and_derivative(loss, y, p)[1]


# Loss.value and Loss.derivative take their half of loss_and_derivative, which the cores compile
# anyway: the estimators' Python-side loss bookkeeping then compiles no second catalogue.
@njit
def _values(loss, y, p, out):
    for i in range(y.shape[0]):
        out[i] = loss_and_derivative(loss, y[i], p[i])[0]


@njit
def _derivatives(loss, y, p, out):
    for i in range(y.shape[0]):
        out[i] = loss_and_derivative(loss, y[i], p[i])[1]


@dataclass(frozen=True)
class Loss:
    """Descriptor of one loss: its compiled code and the metadata algorithms check.

    Attributes
    ----------
    name : str
        Canonical name.
    code : int
        Integer passed to the compiled ``loss_value`` / ``loss_derivative``.
    task : {'classification', 'regression'}
        Classification losses take labels in {-1, +1}; regression losses take real targets.
    smooth : bool
        Whether the derivative is Lipschitz in the prediction.
    smoothness : float or None
        That Lipschitz constant of the derivative (``None`` when not smooth).
    lipschitz : float or None
        Lipschitz constant of the loss in the prediction, for ``epsilon=1``; ``None`` when the
        derivative is unbounded. Use :meth:`lipschitz_constant` for the value at a given ``epsilon``.
    """

    name: str
    code: int
    task: str
    smooth: bool
    smoothness: float | None
    lipschitz: float | None
    lipschitz_is_epsilon: bool = False

    def lipschitz_constant(self, epsilon=0.1):
        """Lipschitz constant in the prediction (``None`` if unbounded)."""
        if self.lipschitz_is_epsilon:
            return float(epsilon)
        return self.lipschitz

    def record(self, epsilon=0.1):
        """The record compiled code takes for this loss (``loss_value(record, y, p)`` etc.)."""
        record = ClassificationLoss if self.task == "classification" else RegressionLoss
        return record(int(self.code), float(epsilon))

    @property
    def is_lipschitz(self):
        return self.lipschitz is not None

    def value(self, y, p, epsilon=0.1):
        """Loss values for arrays of targets and predictions."""
        y, p = _as_pair(y, p)
        out = np.empty_like(p)
        _values(self.record(epsilon), y, p, out)
        return out

    def derivative(self, y, p, epsilon=0.1):
        """Derivatives with respect to the predictions."""
        y, p = _as_pair(y, p)
        out = np.empty_like(p)
        _derivatives(self.record(epsilon), y, p, out)
        return out

    def check(self, *, task=None, lipschitz=False, smooth=False, estimator=None, reason=""):
        """Raise a ``ValueError`` if this loss does not meet an algorithm's assumptions.

        Parameters
        ----------
        task : {'classification', 'regression'}, optional
            Required task.
        lipschitz : bool
            Require a bounded derivative.
        smooth : bool
            Require a Lipschitz derivative.
        estimator : str, optional
            Name used in the message.
        reason : str
            Why the assumption is needed, appended to the message.
        """
        who = f"{estimator} " if estimator else ""
        why = f" {reason}" if reason else ""
        if task is not None and self.task != task:
            raise ValueError(f"loss={self.name!r} is a {self.task} loss; {who}needs a {task} loss.")
        if lipschitz and not self.is_lipschitz:
            raise ValueError(
                f"loss={self.name!r} is not Lipschitz (its derivative is unbounded); "
                f"{who}requires a Lipschitz loss.{why}"
            )
        if smooth and not self.smooth:
            raise ValueError(
                f"loss={self.name!r} is not smooth; {who}requires a loss with a Lipschitz "
                f"derivative.{why}"
            )
        return self


def _as_pair(y, p):
    y = np.ascontiguousarray(y, dtype=np.float64).ravel()
    p = np.ascontiguousarray(p, dtype=np.float64).ravel()
    if y.shape != p.shape:
        raise ValueError(f"y and p have different lengths: {y.shape[0]} and {p.shape[0]}.")
    return y, p


LOSSES = {
    "log_loss": Loss("log_loss", LOG_LOSS, "classification", True, 0.25, 1.0),
    "hinge": Loss("hinge", HINGE, "classification", False, None, 1.0),
    "squared_hinge": Loss("squared_hinge", SQUARED_HINGE, "classification", True, 2.0, None),
    "modified_huber": Loss("modified_huber", MODIFIED_HUBER, "classification", True, 2.0, 4.0),
    "squared_error": Loss("squared_error", SQUARED_ERROR, "regression", True, 1.0, None),
    "absolute_error": Loss("absolute_error", ABSOLUTE_ERROR, "regression", False, None, 1.0),
    "epsilon_insensitive": Loss(
        "epsilon_insensitive", EPSILON_INSENSITIVE, "regression", False, None, 1.0
    ),
    "huber": Loss("huber", HUBER, "regression", True, 1.0, 1.0, lipschitz_is_epsilon=True),
}

_ALIASES = {"logistic": "log_loss", "squared": "squared_error", "absolute": "absolute_error"}


def get_loss(name, task=None):
    """Return the :class:`Loss` descriptor for ``name`` (canonical name or alias).

    Parameters
    ----------
    name : str
        One of ``LOSSES`` or an alias (``'logistic'``, ``'squared'``, ``'absolute'``).
    task : {'classification', 'regression'}, optional
        If given, the loss must be of this task.

    Examples
    --------
    >>> from skonline.losses import get_loss
    >>> loss = get_loss("logistic")
    >>> loss.name, loss.lipschitz, loss.smooth
    ('log_loss', 1.0, True)
    >>> float(loss.value([1.0], [0.0])[0])
    0.6931...
    """
    key = _ALIASES.get(name, name)
    if key not in LOSSES:
        known = sorted(LOSSES) + sorted(_ALIASES)
        raise ValueError(f"Unknown loss {name!r}; expected one of {known}.")
    loss = LOSSES[key]
    if task is not None:
        loss.check(task=task)
    return loss
