"""Warnings and errors of skonline that are not scikit-learn's or Python's own.

One category per event, so that a filter names exactly what it silences
(``warnings.filterwarnings("ignore", category=HorizonExceededWarning)``). Each is a subclass of
``UserWarning``, of ``RuntimeWarning`` for a numerical event, or of ``FutureWarning`` for a renamed
parameter, so filters on those built-in categories keep working. Every warning skonline gives
points at the user's line and has one of these categories, or scikit-learn's
``ConvergenceWarning`` for an optimiser stopped before convergence (GroupDRO's ``fit``).

=====================================================  ==========================================
Event                                                  Category
=====================================================  ==========================================
more rounds than the horizon a tuning was set for      :class:`HorizonExceededWarning`
a setting outside the conditions of the theorem        :class:`TheoremConditionWarning`
a growing state reached its budget, or grew large      :class:`StateGrowthWarning`
a numerical clamp changed the result                   :class:`NumericalClampWarning`
advice on the data or the settings                     :class:`DataAdviceWarning`
a download without a pinned checksum                   :class:`UnpinnedDownloadWarning`
numba's compile cache could not be used as usual       :class:`CompileCacheWarning`
a retired parameter name was set                       :class:`RenamedParameterWarning`
=====================================================  ==========================================
"""

__all__ = [
    "CompileCacheWarning",
    "DataAdviceWarning",
    "HorizonExceededWarning",
    "NumericalClampWarning",
    "RenamedParameterWarning",
    "StateGrowthWarning",
    "TheoremConditionWarning",
    "UnpinnedDownloadWarning",
]


class CompileCacheWarning(UserWarning):
    """numba's disk cache of skonline's compiled code could not be used as usual.

    Given once per process: when the cache falls back to a private temporary folder (a read-only
    install run by a user whose home is read-only, with ``NUMBA_CACHE_DIR`` unset), when no folder
    is writable at all (skonline then compiles again in every process), or when a cache entry
    could not be trusted and was compiled again. Set ``NUMBA_CACHE_DIR`` to a writable folder to
    keep the compiled code across processes.
    """


class HorizonExceededWarning(UserWarning):
    """A learner tuned for a horizon ``T`` saw more than ``T`` rounds.

    Given by the expert rules (Hedge, Fixed Share, PCS, ... with ``horizon`` set), PCSP and
    GroupDRO (``horizon`` set, ``anytime=False``): the learner keeps running with the parameters
    tuned for the horizon, and its guarantee covers only the first ``T`` rounds.
    """


class TheoremConditionWarning(UserWarning):
    """A setting outside the conditions of the theorem that bounds the algorithm's regret.

    The algorithm still runs, but the paper's bound does not apply: PCS and PCSP with
    ``eta > 1/2``, kernel selection's IOKS with a horizon below 40.
    """


class StateGrowthWarning(UserWarning):
    """A learner whose state grows with the stream reached its budget, or holds a large state.

    Given by the kernel learners (stored rows, Nyström dictionaries, support vectors) in the call
    that reaches the budget (``max_rows``, ``max_components``, ...), or, for an unbounded budget,
    in the call whose state crosses 1 GiB (``WARN_BYTES``).
    """


class NumericalClampWarning(RuntimeWarning):
    """A quantity left the range the floating-point computation can hold and was clamped.

    Given by the scale-invariant learners when an exponent of the potential exceeds its cap: the
    predictions are then no longer exactly the paper's.
    """


class DataAdviceWarning(UserWarning):
    """The data given make the learner work poorly, and a change of data or settings would help.

    Targets beyond the radius of kernel selection or far outside the range seen by an online
    ensemble, a short multiclass stream for kernel selection's bandit, nearly collinear features
    on a short stream for the scale-invariant learner, a GroupDRO fit without groups, a Taylor
    feature map with many output features.
    """


class UnpinnedDownloadWarning(UserWarning):
    """A dataset was downloaded without a pinned SHA-256 to check it against (an explicit opt-in)."""


class RenamedParameterWarning(FutureWarning):
    """A constructor parameter was set by its old name, which is removed in the next release.

    The old name still works for one release (see "Glossary of parameter names" in
    CONTRIBUTING.md); setting both the old and the new name raises ``ValueError``.
    """
