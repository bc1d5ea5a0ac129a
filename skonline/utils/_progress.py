"""Progress reports of estimators with ``verbose > 0``: one format, printed by one function.

Every estimator prints the same line after each block of rows it learns (or each epoch of a
``fit`` that runs epochs)::

    [PKAWVRegressor] rows 300,000 | 41,250 rows/s (last 100,000 rows) | online loss 0.3127

The rate is over the last interval (the block just learned), not a running average since the
call started. Printing never changes what is learned: splitting a pass into blocks gives the same
result bit for bit (the streaming contract's chunking invariance).
"""

import math
import time

__all__ = ["BLOCK_ROWS", "block_rows", "format_progress", "print_progress", "Interval"]

#: rows per block of a verbose pass: ``verbose=1`` and ``verbose>=2`` (the tests make them small)
BLOCK_ROWS = (100_000, 10_000)


def block_rows(verbose, n_samples):
    """Rows per block of a pass over ``n_samples`` rows: all of them when ``verbose <= 0``."""
    if verbose <= 0:
        return max(int(n_samples), 1)
    return BLOCK_ROWS[0] if verbose == 1 else BLOCK_ROWS[1]


def format_progress(name, *, rows, interval_rows, seconds, epoch=None, metrics=()):
    """The progress line: ``[name] [epoch k | ]rows N | R rows/s (last M rows)[ | label value]...``.

    ``metrics``: ``(label, value)`` pairs; a pair whose value is ``None`` is left out.
    """
    parts = [] if epoch is None else [f"epoch {epoch}"]
    parts.append(f"rows {int(rows):,}")
    rate = interval_rows / seconds if seconds > 0 else math.inf
    parts.append(f"{rate:,.0f} rows/s (last {int(interval_rows):,} rows)")
    for label, value in metrics:
        if value is not None:
            parts.append(f"{label} {value:.4g}" if "rate" not in label else f"{label} {value:.4f}")
    return f"[{name}] " + " | ".join(parts)


def print_progress(name, **kwargs):
    """Print :func:`format_progress`'s line to standard output (flushed)."""
    print(format_progress(name, **kwargs), flush=True)


class Interval:
    """Seconds since the last :meth:`lap` (or since creation): the interval a rate is over."""

    def __init__(self):
        self._t = time.perf_counter()

    def lap(self):
        now = time.perf_counter()
        seconds, self._t = now - self._t, now
        return seconds
