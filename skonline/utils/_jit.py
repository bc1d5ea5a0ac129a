"""The one way skonline compiles: ``njit``, ``compiled_only`` and the options of ``overload``.

Every compiled function is cached on disk (``cache=True``) and built without numba's C-callable
(``cfunc``) wrapper (``no_cfunc_wrapper=True``): that wrapper only serves first-class function
values (a compiled function passed to another as an argument), which skonline never uses, and
numba otherwise lowers and optimises one for every compiled function and overload: 0.2-0.4 s
(6-10 %) of the cold first fit of an online ensemble or a kernel selection estimator, measured
in fresh processes with an empty cache. A function compiled this way is called from Python and
from compiled code as before.

    from ..utils._jit import OVERLOAD_OPTIONS, compiled_only, njit

    @njit
    def core(...): ...                 # called from Python (an estimator's pass)

    @njit(inline="always")
    def helper(...): ...               # copied into its callers

    @compiled_only
    def _private_helper(...): ...      # called from compiled code only (no Python entry)

    @overload(stub, jit_options=OVERLOAD_OPTIONS)
    def stub_impl(...): ...
"""

import functools

import numba
from numba.core.registry import CPUDispatcher

#: options every compiled function of skonline is built with
JIT_OPTIONS = {"cache": True, "no_cfunc_wrapper": True}

#: ``jit_options`` of ``numba.extending.overload`` implementations (numba adds
#: ``no_cpython_wrapper``: an overload is only called from compiled code)
OVERLOAD_OPTIONS = {"no_cfunc_wrapper": True}

#: ``numba.njit`` with :data:`JIT_OPTIONS`: ``@njit`` or ``@njit(inline="always", ...)``
njit = functools.partial(numba.njit, **JIT_OPTIONS)


class _CompiledOnlyDispatcher(CPUDispatcher):
    """A dispatcher with no Python entry point: compiled callers only (see :func:`compiled_only`)."""

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"{self.py_func.__module__}.{self.py_func.__qualname__} is compiled without a Python "
            "entry point: call it from compiled code (an @njit function)"
        )


def compiled_only(func=None, **options):
    """``@compiled_only`` / ``@compiled_only(fastmath=...)``: :data:`njit` for a helper that only
    compiled code calls.

    numba builds, for every compiled function, a CPython wrapper that unboxes each argument, then
    optimises it and emits its machine code with the function; a helper that only compiled callers
    reach never uses it. Dropping it from the internal helpers took 0.25 s off
    KernelSelectionRegressor's cold first fit and 0.12 s off OnlineEnsembleRegressor's (3
    alternated fresh processes each). Without it, a call from Python would crash the interpreter,
    so this dispatcher refuses one with a ``TypeError``; tests call such a helper through an
    ``@njit`` function. Public functions (``skonline.utils``) keep their Python entry.
    """
    targetoptions = {**JIT_OPTIONS, "nopython": True, "no_cpython_wrapper": True, **options}
    cache = targetoptions.pop("cache")

    def wrap(f):
        dispatcher = _CompiledOnlyDispatcher(py_func=f, targetoptions=targetoptions)
        if cache:
            dispatcher.enable_caching()
        return dispatcher

    return wrap(func) if func is not None else wrap
