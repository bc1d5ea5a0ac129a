"""The documentation builds with warnings as errors, every gallery example runs, and the code
shown on the getting-started and linear_model pages runs and gives the values quoted there.

The sources (``docs/`` and ``examples/``) are copied to a temporary directory first, so the build
starts from scratch (every example is executed, nothing is reused from an earlier build) and
writes nothing into the working tree. skonline is the one these tests import (the installed
package under .ci/run).
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import skonline

ROOT = Path(__file__).resolve().parents[1]
# The subprocesses import the skonline these tests import: the source tree in a checkout, the
# installed package under .ci/run.
SKONLINE_HOME = Path(skonline.__file__).resolve().parents[1]
# what a build leaves in docs/ (all git-ignored): never copied
_BUILD_OUTPUTS = ("_build", "auto_examples", "generated", "sg_execution_times.rst", "__pycache__")


def _copy_sources(dest):
    shutil.copytree(ROOT / "docs", dest / "docs", ignore=shutil.ignore_patterns(*_BUILD_OUTPUTS))
    shutil.copytree(ROOT / "examples", dest / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    # the results the docs include (markdown-tables) and quote (:bench:), at ../benchmarks/results
    shutil.copytree(ROOT / "benchmarks" / "results", dest / "benchmarks" / "results")
    return dest / "docs", dest / "examples"


def _assert_mathjax_is_local(html):
    """Every page that loads MathJax loads the copy in _static/mathjax/ and no http(s) URL of
    MathJax appears anywhere in the built HTML."""
    pages = sorted(html.rglob("*.html"))
    with_math = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        remote = re.findall(r"https?://[^\"' ]*mathjax[^\"' ]*", text, flags=re.IGNORECASE)
        assert not remote, f"{page.relative_to(html)} loads MathJax from {remote[0]}"
        if re.search(r"<script[^>]*src=\"[^\"]*mathjax/tex-chtml\.js", text):
            with_math.append(page)
    assert with_math, "no page loads MathJax (the user guide has maths)"
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert any((html / "_static" / "mathjax" / "output" / "chtml" / "fonts").rglob("*.woff"))


def test_docs_build_with_warnings_as_errors(tmp_path):
    for module in ("sphinx", "numpydoc", "sphinx_gallery", "pydata_sphinx_theme", "matplotlib"):
        pytest.importorskip(module)
    if importlib.util.find_spec("sphinx-mathjax-offline") is None:
        pytest.fail("the docs extra's sphinx-mathjax-offline is not installed (pip install '.[docs]')")
    docs, examples = _copy_sources(tmp_path / "src")
    html = tmp_path / "html"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SKONLINE_HOME), env.get("PYTHONPATH")) if p)
    env["MPLBACKEND"] = "Agg"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(docs), str(html)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, (
        f"sphinx failed (exit {proc.returncode}):\n{proc.stderr[-6000:]}\n{proc.stdout[-2000:]}"
    )
    assert (html / "index.html").is_file()
    assert (html / "user_guide" / "linear_model.html").is_file()

    # the maths renders offline: MathJax is a local file, never a CDN (issue 23)
    _assert_mathjax_is_local(html)

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


def _python_blocks(path):
    """The ``.. code-block:: python`` blocks of a reST page, dedented."""
    import textwrap

    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, k = [], 0
    while k < len(lines):
        if lines[k].strip() == ".. code-block:: python":
            k += 1
            body = []
            while k < len(lines) and (not lines[k].strip() or lines[k].startswith((" ", "\t"))):
                body.append(lines[k])
                k += 1
            blocks.append(textwrap.dedent("\n".join(body)))
        else:
            k += 1
    return blocks


@pytest.mark.parametrize(
    "page", ["getting_started.rst", "user_guide/linear_model.rst", "user_guide/experts.rst"]
)
def test_code_blocks_run(page):
    """The code shown on the getting-started, linear_model and experts pages runs as written."""
    blocks = _python_blocks(ROOT / "docs" / page)
    assert blocks
    namespace = {}
    for block in blocks:
        exec(compile(block, f"{page} code block", "exec"), namespace)
    # the values quoted in the comments of the pages
    if page == "getting_started.rst":
        assert namespace["search"].best_params_ == {
            "scaleinvariantclassifier__potential_alpha": 1.25,
            "scaleinvariantclassifier__invariance": "full",
        }
        assert round(namespace["search"].best_score_, 3) == 0.958
        assert namespace["clf"].n_samples_seen_ == 569
        assert round(namespace["clf"].mistake_rate_, 4) == 0.0949
        assert namespace["res"].n_samples.tolist() == [114, 228, 341, 455, 569]
        assert namespace["res"].accuracy.round(3).tolist() == [0.702, 0.825, 0.877, 0.899, 0.905]
    elif page == "user_guide/experts.rst":
        # the grid search over the default rule's eta
        search = namespace["search"]
        assert search.best_estimator_.rule_.eta == search.best_params_["rule__eta"]
    else:
        assert round(float((namespace["y_online"] == namespace["y"]).mean()), 3) == 0.946
        assert (namespace["clf2"].predict(namespace["X"] * namespace["units"])
                == namespace["clf"].predict(namespace["X"])).all()
