"""The tree is lint clean: ruff, configured in pyproject.toml, finds nothing."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["skonline", "tests", "benchmarks", "examples", "docs"]


def test_ruff_finds_nothing():
    if not (ROOT / "pyproject.toml").is_file():  # pragma: no cover - tests copied without the tree
        pytest.fail(f"no pyproject.toml in {ROOT}: run the tests from a clone of the repository")
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *PATHS],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
