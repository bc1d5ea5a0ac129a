"""One way for skonline to warn: at the user's line.

A warning points at the line that shows it; skonline's warnings come from deep inside a call
(the streaming contract, a family's checks, a compiled pass's caller), and a ``stacklevel`` counted
by hand in each place points at a line of skonline's whenever the call path changes (issue 23:
``base.py:512``). :func:`warn` walks the stack instead, to the first frame outside skonline and
numba (and the import machinery, for warnings given at import): the user's ``fit``,
``partial_fit``, ``predict`` or ``import`` line.
"""

import os
import sys
import warnings

import numba

#: frames in these folders are not the user's
_NOT_USER = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,  # skonline
    os.path.dirname(os.path.abspath(numba.__file__)) + os.sep,
    "<frozen importlib",
)


def warn(message, category):
    """``warnings.warn(message, category)`` at the user's line (see the module docstring).

    ``category``: one of the catalog in :mod:`skonline.exceptions` (one per event), or
    scikit-learn's ``ConvergenceWarning``; never a bare ``UserWarning`` (tests/test_warnings.py)."""
    level, frame = 2, sys._getframe(1)  # warn's caller is stacklevel 2
    while frame is not None and frame.f_code.co_filename.startswith(_NOT_USER):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
