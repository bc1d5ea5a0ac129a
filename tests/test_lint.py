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


def _compile_calls(package_dir):
    """(where, source, node) of every use of numba.njit / numba.jit and call of overload."""
    import ast

    for path in sorted(package_dir.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(package_dir.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Attribute) and ast.unparse(node) in {"numba.njit", "numba.jit"}:
                yield where, ast.unparse(node), node
            elif isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "overload":
                yield where, ast.unparse(node.func), node


def test_every_compiled_function_uses_the_shared_options():
    # utils/_jit.py: cache on disk, no cfunc wrapper (a cold first fit would otherwise lower one
    # for every compiled function); numba.njit called directly would silently drop them
    import ast

    import skonline

    package_dir = Path(skonline.__file__).resolve().parent
    calls = list(_compile_calls(package_dir))
    assert any(src == "overload" for _, src, _ in calls)  # the walk finds both kinds
    direct = [where for where, src, _ in calls if src.startswith("numba.") and not where.startswith(
        "skonline/utils/_jit.py")]
    assert not direct, f"compile with skonline.utils._jit.njit, not numba directly: {direct}"
    bare = [where for where, src, node in calls if src.split(".")[-1] == "overload"
            and not any(k.arg == "jit_options" and isinstance(k.value, ast.Name)
                        and k.value.id == "OVERLOAD_OPTIONS" for k in node.keywords)]
    assert not bare, f"overloads without jit_options=OVERLOAD_OPTIONS: {bare}"
