"""Where a cold first fit spends its compile work, per compiled function: numba's Python calls and LLVM's seconds.

Compile seconds depend on the machine's load; the number of Python calls numba makes while
compiling does not, so it compares two versions of a core on a shared machine. It does not see
the time spent inside LLVM (optimising each compiled function and emitting its machine code:
about 40 % of a cold fit), which this script reports apart, in seconds: compare those on an idle
machine, over a few alternated runs.

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/compile_profile.py KernelSelectionRegressor [--top 15]

The estimator is built as in benchmarks/cold_start.py (defaults; a meta-estimator's first test
configuration) and fitted on 1,000 rows of its own test stream. Each line: calls made while
compiling that function and not its callees (exclusive), the seconds spent in LLVM for it
(exclusive; LLVM optimises a function's callees again inside it), then the function.
"""

import argparse
import collections
import sys
import time

from llvmlite.binding import ffi
from numba.core import event

from _common import first_fit_case


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("estimator")
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)

    calls = [0]
    llvm = [0.0]  # seconds inside LLVM's C API, all of llvmlite's calls go through ffi
    exclusive = collections.Counter()
    exclusive_llvm = collections.Counter()

    class Listener(event.Listener):
        def __init__(self):
            self.stack = []

        def on_start(self, ev):
            self.stack.append([calls[0], 0, llvm[0], 0.0])

        def on_end(self, ev):
            start, inner, start_llvm, inner_llvm = self.stack.pop()
            n = calls[0] - start
            t = llvm[0] - start_llvm
            f = getattr(ev.data.get("dispatcher"), "py_func", None)
            name = f"{f.__module__}.{f.__qualname__}" if f else str(ev.data.get("dispatcher"))
            exclusive[name] += n - inner
            exclusive_llvm[name] += t - inner_llvm
            if self.stack:
                self.stack[-1][1] += n
                self.stack[-1][3] += t

    def count(frame, what, arg):
        if what == "call":
            calls[0] += 1

    ffi_call = ffi._lib_fn_wrapper.__call__

    def timed_ffi_call(self, *a, **k):
        t = time.perf_counter()
        try:
            return ffi_call(self, *a, **k)
        finally:
            llvm[0] += time.perf_counter() - t

    ffi._lib_fn_wrapper.__call__ = timed_ffi_call
    event.register("numba:compile", Listener())
    cls, params, X, y, kw = first_fit_case(args.estimator, args.rows)  # as benchmarks/cold_start.py
    est = cls(**params)
    sys.setprofile(count)
    try:
        est.fit(X, y, **kw)
    finally:
        sys.setprofile(None)
        ffi._lib_fn_wrapper.__call__ = ffi_call
    print(f"{args.estimator}: {calls[0] / 1e6:.2f} M Python calls in the first fit, "
          f"{sum(exclusive.values()) / 1e6:.2f} M while compiling; "
          f"{sum(exclusive_llvm.values()):.2f} s in LLVM")
    for name, n in exclusive.most_common(args.top):
        print(f"{n / 1e6:6.2f} M  {exclusive_llvm[name]:5.2f} s  {name}")


if __name__ == "__main__":
    main()
