"""The documentation builds with warnings as errors, and every gallery example runs.

The sources (``docs/`` and ``examples/``) are copied to a temporary directory first, so the build
starts from scratch (every example is executed, nothing is reused from an earlier build) and
writes nothing into the working tree. skonline itself is imported from this repository.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("numpydoc")
pytest.importorskip("sphinx_gallery")
pytest.importorskip("pydata_sphinx_theme")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[1]
# what a build leaves in docs/ (all git-ignored): never copied
_BUILD_OUTPUTS = ("_build", "auto_examples", "generated", "sg_execution_times.rst", "__pycache__")


def _copy_sources(dest):
    shutil.copytree(ROOT / "docs", dest / "docs", ignore=shutil.ignore_patterns(*_BUILD_OUTPUTS))
    shutil.copytree(ROOT / "examples", dest / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    return dest / "docs", dest / "examples"


def test_docs_build_with_warnings_as_errors(tmp_path):
    docs, examples = _copy_sources(tmp_path / "src")
    html = tmp_path / "html"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["MPLBACKEND"] = "Agg"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(docs), str(html)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, (
        f"sphinx failed (exit {proc.returncode}):\n{proc.stderr[-6000:]}\n{proc.stdout[-2000:]}"
    )
    assert (html / "index.html").is_file()
    assert (html / "user_guide" / "linear_model.html").is_file()

    # API reference generated from __all__
    api = html / "generated" / "api"
    page = (api / "linear_model.html").read_text(encoding="utf-8")
    assert "ScaleInvariantClassifier" in page
    assert "ScaleInvariantRegressor" in page
    stub = api / "skonline.linear_model.ScaleInvariantClassifier.html"
    assert stub.is_file()
    stub_text = stub.read_text(encoding="utf-8")
    assert "partial_fit_predict" in stub_text  # members are documented (once)
    assert "linear_model.html" in (api / "index.html").read_text(encoding="utf-8")

    # every examples/**/plot_*.py ran and produced its page and at least one figure
    scripts = sorted(examples.rglob("plot_*.py"))
    assert any(s.parent.name == "linear_model" for s in scripts)
    times = (docs / "sg_execution_times.rst").read_text(encoding="utf-8")
    gallery = docs / "auto_examples"
    missing = []
    for script in scripts:
        rel = script.relative_to(examples).with_suffix("")
        out_dir = gallery / rel.parent
        name = rel.name
        checks = {
            "rst": (out_dir / f"{name}.rst").is_file(),
            "html": (html / "auto_examples" / rel.parent / f"{name}.html").is_file(),
            "figure": any((out_dir / "images").glob(f"sphx_glr_{name}_[0-9][0-9][0-9].png")),
            "timing": re.search(rf"\b{re.escape(name)}\.py\b", times) is not None,
        }
        failed = [what for what, ok in checks.items() if not ok]
        if failed:
            missing.append(f"{script.relative_to(examples)}: no {', '.join(failed)}")
    assert not missing, "gallery examples without output:\n" + "\n".join(missing)
