"""The one way skonline compiles: ``njit`` and the options of ``numba.extending.overload``.

Every compiled function is cached on disk (``cache=True``) and built without numba's C-callable
(``cfunc``) wrapper (``no_cfunc_wrapper=True``): that wrapper only serves first-class function
values (a compiled function passed to another as an argument), which skonline never uses, and
numba otherwise lowers and optimises one for every compiled function and overload: 0.2-0.4 s
(6-10 %) of the cold first fit of an online ensemble or a kernel selection estimator, measured
in fresh processes with an empty cache. A function compiled this way is called from Python and
from compiled code as before.

    from ..utils._jit import OVERLOAD_OPTIONS, njit

    @njit
    def core(...): ...

    @njit(inline="always")
    def helper(...): ...

    @overload(stub, jit_options=OVERLOAD_OPTIONS)
    def stub_impl(...): ...
"""

import functools

import numba

#: options every compiled function of skonline is built with
JIT_OPTIONS = {"cache": True, "no_cfunc_wrapper": True}

#: ``jit_options`` of ``numba.extending.overload`` implementations (numba adds
#: ``no_cpython_wrapper``: an overload is only called from compiled code)
OVERLOAD_OPTIONS = {"no_cfunc_wrapper": True}

#: ``numba.njit`` with :data:`JIT_OPTIONS`: ``@njit`` or ``@njit(inline="always", ...)``
njit = functools.partial(numba.njit, **JIT_OPTIONS)
