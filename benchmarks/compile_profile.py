"""Where a cold first fit spends its compile work: Python calls made by numba per compiled function.

Compile seconds depend on the machine's load; the number of Python calls numba makes while compiling
does not. Run in a fresh numba cache, it compares two versions of a core on a shared machine (on the
machine of benchmarks/results/cold_start.md, cold-fit seconds ~ 0.3 + 0.6 x millions of calls).

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/compile_profile.py KernelSelectionRegressor [--top 15]

The estimator is built as in benchmarks/cold_start.py (defaults; a meta-estimator's first test
configuration) and fitted on 1,000 rows of its own test stream. Each line: calls made while compiling
that function and not its callees (exclusive), then the function.
"""

import argparse
import collections
import sys

from numba.core import event

from _common import first_fit_case


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("estimator")
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)

    calls = [0]
    exclusive = collections.Counter()

    class Listener(event.Listener):
        def __init__(self):
            self.stack = []

        def on_start(self, ev):
            self.stack.append([calls[0], 0])

        def on_end(self, ev):
            start, inner = self.stack.pop()
            n = calls[0] - start
            f = getattr(ev.data.get("dispatcher"), "py_func", None)
            name = f"{f.__module__}.{f.__qualname__}" if f else str(ev.data.get("dispatcher"))
            exclusive[name] += n - inner
            if self.stack:
                self.stack[-1][1] += n

    def count(frame, what, arg):
        if what == "call":
            calls[0] += 1

    event.register("numba:compile", Listener())
    cls, params, X, y, kw = first_fit_case(args.estimator, args.rows)  # as benchmarks/cold_start.py
    est = cls(**params)
    sys.setprofile(count)
    try:
        est.fit(X, y, **kw)
    finally:
        sys.setprofile(None)
    print(f"{args.estimator}: {calls[0] / 1e6:.2f} M Python calls in the first fit, "
          f"{sum(exclusive.values()) / 1e6:.2f} M while compiling")
    for name, n in exclusive.most_common(args.top):
        print(f"{n / 1e6:6.2f} M  {name}")


if __name__ == "__main__":
    main()
