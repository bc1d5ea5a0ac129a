"""The report writers of the paper-reproduction benchmarks run on synthetic rows (no data, a second).

A full run takes minutes to hours; a writer that reads a stale key would only fail at its end.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ks_bench():
    path = ROOT / "benchmarks" / "kernel_selection.py"
    if not path.exists():
        pytest.skip("benchmarks/ not in this checkout")
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location("_bench_kernel_selection", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(path.parent))
    return mod


def _rows(mod, rf):
    """Every (loss, dataset, algorithm) the writers read, at the paper's mean (one permutation)."""
    rows = {}
    for loss, table in mod.PAPER_EXACT.items():
        for name, algos in table.items():
            for algo, vals in algos.items():
                for n, a in ((name, algo), (name + "-raw", algo), (name, "oks++c"), (name + "-raw", "oks++c")):
                    res = [(vals[0], 0.0, 0.0, 1.0)]
                    rows[(loss, n, a)] = (vals[0], vals[1], [1.0], res) + ((400,) if rf else ())
    return rows


def test_kernel_selection_notes_read_this_runs_rows(ks_bench):
    lines = []
    ks_bench.write_notes(lines.append, _rows(ks_bench, False), _rows(ks_bench, True))
    text = "\n".join(lines)
    assert "nan%" not in text  # every row the notes quote was found under its key
    assert "within the band" in text and "OKS++" in text
