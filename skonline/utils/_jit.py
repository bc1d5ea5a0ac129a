"""The one way skonline compiles: ``njit``, ``compiled_only`` and the options of ``overload``.

Every compiled function is cached on disk and built without numba's C-callable (``cfunc``)
wrapper (``no_cfunc_wrapper=True``): that wrapper only serves first-class function values (a
compiled function passed to another as an argument), which skonline never uses, and numba
otherwise lowers and optimises one for every compiled function and overload, a measurable part
of the cold first fit of an online ensemble or a kernel selection estimator (fresh processes
with an empty cache; ``benchmarks/cold_start.py``). A function compiled this way is called from
Python and from compiled code as before.

    from ..utils._jit import OVERLOAD_OPTIONS, compiled_only, njit

    @njit
    def core(...): ...                 # called from Python (an estimator's pass)

    @njit(inline="always")
    def helper(...): ...               # copied into its callers

    @compiled_only
    def _private_helper(...): ...      # called from compiled code only (no Python entry)

    @overload(stub, jit_options=OVERLOAD_OPTIONS)
    def stub_impl(...): ...

The disk cache (:class:`_Cache`) is numba's, made safe for installs as users have them:

* **Where it lives.** numba looks for a writable folder in turn: ``NUMBA_CACHE_DIR``, the package's
  own ``__pycache__``, the user's cache folder (``~/.cache/numba``). A read-only install run by a
  user whose home is not writable (containers, shared installs) has none, and numba then refuses
  to compile at import (``RuntimeError: cannot cache function ...: no locator available``). skonline
  falls back to a private folder in the temporary directory (``<tmp>/skonline-numba-cache-<uid>``,
  created mode 0700 and used only if it belongs to the user and nobody else can write to it: the
  cache holds pickles, which must never come from another user), and failing that compiles
  without a cache. Either way one :class:`~skonline.exceptions.CompileCacheWarning` says so and
  names ``NUMBA_CACHE_DIR``.
* **Entries are keyed by the compile options too.** numba keys an entry by its signature, target
  and bytecode only; skonline adds :data:`JIT_OPTIONS`, so that code cached before an option
  changed (``nogil``: every compiled function releases the GIL, so that the experts of an online
  ensemble learn side by side in threads) is compiled again, not loaded with the old option.
* **Entries that cannot be trusted are recompiled.** Every file written carries a SHA-256 of its
  contents, and every data file the index key it was written for: a truncated or altered file, a
  file of another numba or skonline version, and an entry overwritten by another process
  compiling another signature at the same moment (numba numbers a function's entries from its
  index file, so two processes can take the same number) are all detected before anything is
  unpickled, and the function is compiled again and its entry rewritten (one warning per process
  names the folder). numba itself would raise a raw unpickling error on every later fit, or run
  the other signature's code.
"""

import contextlib
import functools
import hashlib
import os
import pickle
import stat
import tempfile

import numba
from numba.core import caching
from numba.core.registry import CPUDispatcher

from ..exceptions import CompileCacheWarning
from ._warnings import warn

#: options every compiled function of skonline is built with (``cache``: :class:`_Cache`;
#: ``nogil``: a compiled call releases the GIL, so the experts of an online ensemble learn side by
#: side in threads, :mod:`skonline.utils._threads`)
JIT_OPTIONS = {"cache": True, "no_cfunc_wrapper": True, "nogil": True}

#: part of every cache entry's key (:meth:`_Cache._index_key`)
_OPTIONS_KEY = repr(sorted(JIT_OPTIONS.items()))

#: ``jit_options`` of ``numba.extending.overload`` implementations (numba adds
#: ``no_cpython_wrapper``: an overload is only called from compiled code)
OVERLOAD_OPTIONS = {"no_cfunc_wrapper": True}

#: what the cache folder of a read-only install falls back to: ``<tmp>/<prefix><uid>``
TEMP_CACHE_PREFIX = "skonline-numba-cache-"

_WARNED = set()  # the cache warnings already given in this process (one of each kind)


def _warn_once(kind, message):
    if kind not in _WARNED:
        _WARNED.add(kind)
        warn(message, CompileCacheWarning)


# --------------------------------------------------------------------------- where the cache lives
@functools.cache
def _private_temp_root():
    """``<tmp>/skonline-numba-cache-<uid>`` if it is (or can be made) a folder of this user that
    nobody else can write to; else None."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    try:
        path = os.path.join(tempfile.gettempdir(), f"{TEMP_CACHE_PREFIX}{uid}")
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o022 or (hasattr(os, "getuid") and st.st_uid != uid):
        return None  # a link, a folder of someone else, or one others can write to: not trusted
    return path


# numba's own locators (their names changed across versions: take them from the class)
_NUMBA_IMPL = caching.FunctionCache._impl_class
_LOCATORS = list(_NUMBA_IMPL._locator_classes)
_USER_PROVIDED = _LOCATORS[0]  # NUMBA_CACHE_DIR's locator: a source-file-backed one


class _TempLocator(_USER_PROVIDED):
    """The last resort: :func:`_private_temp_root`, laid out as under ``NUMBA_CACHE_DIR``."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(_private_temp_root(), self.get_suitable_cache_subpath(py_file))

    @classmethod
    def from_function(cls, py_func, py_file):
        if _private_temp_root() is None:
            return None
        return super(_USER_PROVIDED, cls).from_function(py_func, py_file)  # the source-file mixin's


class _CacheImpl(_NUMBA_IMPL):
    """numba's compile-result cache with :class:`_TempLocator` after numba's own locators."""

    _locator_classes = _LOCATORS + [_TempLocator]

    def __init__(self, py_func):
        super().__init__(py_func)
        if isinstance(self.locator, _TempLocator):
            _warn_once(
                "temp",
                "skonline: numba's compile cache has no writable folder for skonline (the package "
                "folder and the user's cache folder are read-only, and NUMBA_CACHE_DIR is not set); "
                f"compiled code is cached in {_private_temp_root()}, which the system may clear. "
                "Set the environment variable NUMBA_CACHE_DIR to a writable folder to keep it.",
            )


# --------------------------------------------------------------------------- what the files hold
_MAGIC = b"skonline-cache-1\n"
_DIGEST = hashlib.sha256().digest_size


class _Untrusted(Exception):
    """A cache file that cannot be trusted (damaged, or written by another process or version)."""


def _sealed(payload):
    return _MAGIC + hashlib.sha256(payload).digest() + payload


def _unsealed(blob, path):
    head = len(_MAGIC) + _DIGEST
    if not blob.startswith(_MAGIC) or len(blob) < head:
        raise _Untrusted(f"{path}: not a skonline cache file")
    payload = blob[head:]
    if hashlib.sha256(payload).digest() != blob[len(_MAGIC):head]:
        raise _Untrusted(f"{path}: checksum mismatch (damaged file)")
    return payload


class _CacheFile(caching.IndexDataCacheFile):
    """numba's index and data files, each sealed with a SHA-256 of its contents; a data file also
    holds the key it was written for."""

    def _dump(self, obj):
        return _sealed(super()._dump(obj))

    def _load_index(self):
        try:
            with open(self._index_path, "rb") as f:
                version = pickle.load(f)
                blob = f.read()
        except FileNotFoundError:
            return {}
        except Exception as exc:  # unreadable version header
            raise _Untrusted(f"{self._index_path}: {type(exc).__name__}: {exc}") from None
        if version != self._version:
            return {}  # another numba: its files are replaced as entries are saved
        try:
            stamp, overloads = pickle.loads(_unsealed(blob, self._index_path))
        except _Untrusted:
            if not blob.startswith(_MAGIC):
                return {}  # written by plain numba (an older skonline): replaced, like a stale index
            raise
        return overloads if stamp == self._source_stamp else {}

    def save(self, key, data):
        try:
            overloads = self._load_index()
        except _Untrusted:
            overloads = {}  # a damaged index is rewritten
        data_name = overloads.get(key)
        if data_name is None:
            existing = set(overloads.values())
            number = 1
            while self._data_name(number) in existing:
                number += 1
            data_name = self._data_name(number)
            overloads[key] = data_name
            self._save_index(overloads)
        self._save_data(data_name, (key, data))

    def load(self, key):
        data_name = self._load_index().get(key)
        if data_name is None:
            return None
        path = self._data_path(data_name)
        try:
            with open(path, "rb") as f:
                blob = f.read()
        except OSError:
            return None  # removed while the index still names it
        stored_key, data = pickle.loads(_unsealed(blob, path))
        if stored_key != key:
            raise _Untrusted(f"{path}: holds another signature's code (written by another process)")
        return data


class _Cache(caching.FunctionCache):
    """numba's per-function disk cache with :class:`_CacheImpl`'s locators and :class:`_CacheFile`'s
    checked files; an entry that cannot be loaded is compiled again and rewritten."""

    _impl_class = _CacheImpl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _CacheFile(
            cache_path=self._cache_path, filename_base=self._impl.filename_base,
            source_stamp=self._impl.locator.get_source_stamp(),
        )

    def _index_key(self, sig, codegen):
        # numba's key (signature, target, bytecode) and the options every function is compiled
        # with: code cached before an option changed (e.g. ``nogil``) is compiled again
        return super()._index_key(sig, codegen) + (_OPTIONS_KEY,)

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception as exc:  # _Untrusted, or numba failing to rebuild what it read
            _warn_once(
                "damaged",
                f"skonline: an entry of numba's compile cache in {self._cache_path} could not be "
                f"loaded ({type(exc).__name__}: {exc}); the function is compiled again and its entry "
                "rewritten. If this repeats, delete that folder.",
            )
            return None

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
        except OSError as exc:  # the folder became read-only or full: keep the compiled code
            _warn_once("unsaved", f"skonline: could not write numba's compile cache in {self._cache_path} "
                                  f"({type(exc).__name__}: {exc}); compiled code is not cached.")


def _enable_cache(dispatcher):
    """Give ``dispatcher`` skonline's disk cache (:class:`_Cache`), or none if no folder is writable."""
    if not isinstance(dispatcher, CPUDispatcher):  # NUMBA_DISABLE_JIT: a plain function
        return dispatcher
    try:
        dispatcher._cache = _Cache(dispatcher.py_func)
    except RuntimeError as exc:  # numba: "no locator available", and no private temporary folder
        _warn_once(
            "none",
            "skonline: numba's compile cache has no writable folder (the package folder, the user's "
            "cache folder and the temporary folder are read-only, and NUMBA_CACHE_DIR is not set): "
            "skonline compiles its code again in every new process. Set the environment variable "
            f"NUMBA_CACHE_DIR to a writable folder. ({exc})",
        )
    return dispatcher


def njit(func=None, borrowed=False, **options):
    """``numba.njit`` with :data:`JIT_OPTIONS`: ``@njit`` or ``@njit(inline="always", ...)``.

    ``borrowed=True`` (``@njit(borrowed=True)``) compiles without numba's reference counting
    (numba's ``_nrt=False``): for a pass that allocates nothing (numba refuses to compile one that
    does) and only reads and writes arrays its caller owns for the whole call. numba otherwise
    increments and decrements an atomic count for every array argument of every inlined helper,
    every round: in the experts' row loops that cost as much as the written-out copies of the
    play step and the projection used to save (measured in
    ``benchmarks/results/numba_call_overhead.md``, by ``benchmarks/numba_call_overhead.py``).
    """
    options = {**JIT_OPTIONS, **options}
    cache = options.pop("cache")
    if borrowed:
        options["_nrt"] = False

    def wrap(f):
        dispatcher = numba.njit(**options)(f)
        return _enable_cache(dispatcher) if cache else dispatcher

    return wrap(func) if func is not None else wrap


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
    reach never uses it. Dropping it from the internal helpers shortens the cold first fit of
    the estimators with many helpers (KernelSelectionRegressor, OnlineEnsembleRegressor; measured
    in alternated fresh processes). Without it, a call from Python would crash the interpreter,
    so this dispatcher refuses one with a ``TypeError``; tests call such a helper through an
    ``@njit`` function. Public functions (``skonline.utils``) keep their Python entry.
    ``borrowed=True`` as in :func:`njit`.
    """
    borrowed = options.pop("borrowed", False)  # as in :func:`njit`
    targetoptions = {**JIT_OPTIONS, "nopython": True, "no_cpython_wrapper": True, **options}
    cache = targetoptions.pop("cache")
    if borrowed:
        targetoptions["_nrt"] = False

    def wrap(f):
        dispatcher = _CompiledOnlyDispatcher(py_func=f, targetoptions=targetoptions)
        return _enable_cache(dispatcher) if cache else dispatcher

    return wrap(func) if func is not None else wrap
