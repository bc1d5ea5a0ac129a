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


MAX_POSITIONAL = 20


def _positional_counts(package_dir):
    import ast

    for path in sorted(package_dir.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = len(node.args.posonlyargs) + len(node.args.args)
                yield f"{path.relative_to(package_dir.parent)}:{node.lineno} {node.name}", n


def test_no_function_takes_more_than_20_positional_parameters():
    # compiled cores read their state and settings from named records (CONTRIBUTING.md): a long
    # positional list is where one transposed argument becomes a silent wrong result
    import skonline

    package_dir = Path(skonline.__file__).resolve().parent
    counts = dict(_positional_counts(package_dir))
    assert len(counts) > 500  # the walk found the package's functions
    over = {where: n for where, n in counts.items() if n > MAX_POSITIONAL}
    assert not over, f"functions with more than {MAX_POSITIONAL} positional parameters: {over}"
