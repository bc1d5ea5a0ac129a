"""Renamed constructor parameters: the old name keeps working for one release, with a warning.

A class that renamed a parameter declares it in one table, ``_renamed_params = {old: new}``; its
``__init__`` keeps the old name as a keyword with default :data:`DEPRECATED` (scikit-learn's
convention, so ``get_params``, ``clone`` and grid searches see both names) and its
``_parameter_constraints`` accept :data:`DEPRECATED` or the old constraint
(:func:`renamed_constraint`). The streaming driver calls :func:`check_renamed_params` once per
change of the parameters (``OnlineMixin._validate_params_once``): an old name that is set gives a
:class:`~skonline.exceptions.RenamedParameterWarning` (a ``FutureWarning``), and setting both the
old and the new name (the new one to a value other than its default) raises ``ValueError``. The
code reads the value in effect through :func:`param` (the old name's value when it is set, else
the new name's), never the attribute of either name directly.
"""

import inspect

from sklearn.utils._param_validation import Hidden, StrOptions

from ..exceptions import RenamedParameterWarning
from ._warnings import warn

#: the default of a retired parameter name: "not set"
DEPRECATED = "deprecated"


def _releases():
    """(the release that renamed, the release that removes the old names), e.g. ('0.1', '0.2')."""
    from .. import __version__

    major, minor = (int(v) for v in __version__.split(".")[:2])
    return f"{major}.{minor}", f"{major}.{minor + 1}"


def renamed_constraint(old_constraints):
    """The constraints of a retired name: :data:`DEPRECATED` (not set) or what it used to accept."""
    return [Hidden(StrOptions({DEPRECATED})), *old_constraints]


def is_set(value):
    """Whether a retired parameter name was given a value (anything but :data:`DEPRECATED`)."""
    return not (isinstance(value, str) and value == DEPRECATED)


def _is_default(value, default):
    if value is default:
        return True
    try:
        return type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):  # pragma: no cover - arrays and the like are never defaults
        return False


def check_renamed_params(est):
    """Warn for each retired name that is set; raise ``ValueError`` if its new name is set too."""
    renamed = getattr(type(est), "_renamed_params", None)
    if not renamed:
        return
    set_names = [old for old in renamed if is_set(getattr(est, old))]
    if not set_names:
        return
    defaults = {
        name: p.default for name, p in inspect.signature(type(est).__init__).parameters.items()
    }
    since, until = _releases()
    for old in set_names:
        new = renamed[old]
        if not _is_default(getattr(est, new), defaults.get(new, inspect.Parameter.empty)):
            raise ValueError(
                f"{type(est).__name__}: both `{old}` and `{new}` are set; `{old}` was renamed "
                f"`{new}` in {since}: set only `{new}`."
            )
        warn(
            f"`{old}` was renamed `{new}` in {since} and will be removed in {until}; "
            f"{type(est).__name__} uses {old}={getattr(est, old)!r} as {new}.",
            RenamedParameterWarning,
        )


def param(est, name):
    """The value in effect of the parameter ``name`` of ``est``: that of its retired name when set."""
    for old, new in getattr(type(est), "_renamed_params", {}).items():
        if new == name:
            value = getattr(est, old, DEPRECATED)
            if is_set(value):
                return value
    return getattr(est, name)
