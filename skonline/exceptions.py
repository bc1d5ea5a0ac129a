"""Warnings and errors of skonline that are not scikit-learn's or Python's own."""

__all__ = ["CompileCacheWarning"]


class CompileCacheWarning(UserWarning):
    """numba's disk cache of skonline's compiled code could not be used as usual.

    Given once per process: when the cache falls back to a private temporary folder (a read-only
    install run by a user whose home is read-only, with ``NUMBA_CACHE_DIR`` unset), when no folder
    is writable at all (skonline then compiles again in every process), or when a cache entry
    could not be trusted and was compiled again. Set ``NUMBA_CACHE_DIR`` to a writable folder to
    keep the compiled code across processes.
    """
