"""The ``skonline`` command line (``skonline tour``, ``skonline reproduce``), outside the library.

``skonline`` (the console script) and ``python -m skonline`` call :func:`main`. The tour
(``_tour.py``) only composes public API: the learners, :mod:`skonline.evaluation` for the
prequential passes, :mod:`skonline.plotting` for the figures.
"""

from ._main import find_benchmark, main

__all__ = ["main", "find_benchmark"]
