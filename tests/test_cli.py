"""The command line: ``skonline tour`` and ``skonline reproduce`` (skonline/cli/).

The tour runs in a subprocess (``python -m skonline``), as a user runs it, with the skonline
these tests import (the installed package under .ci/run). The benchmarks themselves are never run here.
"""

import io
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import skonline
from skonline.cli import find_benchmark, main
from skonline.cli._tour import FAMILIES, Progress, Row, format_table

ROOT = Path(__file__).resolve().parents[1]
# The subprocesses import the skonline these tests import: the source tree in a checkout, the
# installed package under .ci/run.
SKONLINE_HOME = Path(skonline.__file__).resolve().parents[1]
PNGS = {
    "linear_model": "linear_model_raw_vs_rescaled.png",
    "experts": "experts_weights.png",
    "kernel_selection": "kernel_selection_probabilities.png",
    "kernel_ridge": "kernel_ridge_progressive_loss.png",
    "dro": "dro_group_risks.png",
}


def _have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SKONLINE_HOME), env.get("PYTHONPATH")) if p)
    env["MPLBACKEND"] = "Agg"
    env.update(extra)
    return env


def _skonline(args, *, cwd, env=None, timeout=600):  # a hard stop for a hung process
    env = env if env is not None else _env()
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "skonline", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    return proc, time.perf_counter() - t0


def _table(stdout):
    """The rows of the results table, as lists of cells (header and separator dropped)."""
    lines = [ln for ln in stdout.splitlines() if ln.startswith("|")]
    assert len(lines) >= 3, stdout
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header[:3] == ["family", "dataset", "learner"]
    assert set(lines[1]) <= set("|-:")
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]


def test_tour_quick(tmp_path):
    out = tmp_path / "tour"
    proc, seconds = _skonline(["tour", "--quick", "--no-progress", "--output-dir", str(out)],
                              cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:] + proc.stdout[-4000:]
    # a runaway guard, not a benchmark: under .ci/run the numba cache is always empty (a fresh
    # install), so this run compiles every pass the tour uses, on a machine shared with xdist
    assert seconds < 300, f"the quick tour took {seconds:.1f} s"
    rows = _table(proc.stdout)
    assert {r[0] for r in rows} == set(FAMILIES)  # a row (or more) per family
    for r in rows:
        assert r[1].startswith("synthetic: "), r  # --quick never reads the data home
        assert len(r) == 10 and r[3].replace(",", "").isdigit(), r
        for value in r[5].split(" / ") + r[7].split(" / "):
            assert np.isfinite(float(value)), r
    # the scale-invariant learners score the same on raw and rescaled features; SGD does not
    for r in rows:
        if r[0] == "linear_model":
            raw, rescaled = r[5].split(" / ")
            assert raw == rescaled, r
            sgd_raw, sgd_rescaled = r[7].split(" / ")
            assert sgd_raw != sgd_rescaled, r
    assert "\r[" not in proc.stderr  # --no-progress
    _labels_construct(rows)
    _losing_rows_say_why(rows, proc.stdout)
    assert rows[0][2] == "OnlineEnsembleClassifier(random_state=0)"  # the learner to start with
    if _have_matplotlib():
        for _family, png in PNGS.items():
            path = out / png
            assert path.is_file() and path.stat().st_size > 5000, path
            assert str(path) in proc.stdout  # the paths are printed
        assert (out / "results.md").read_text().count("| linear_model") >= 1
    else:
        assert "plots skipped" in proc.stdout


def _labels_construct(rows):
    """Every learner label is code that constructs the learner (the experts' list is the legend's
    ``experts``); every baseline label, each part of a ``+`` chain."""
    import importlib

    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.frozen import FrozenEstimator
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression, Ridge, SGDClassifier, SGDRegressor

    ns = dict(SGDClassifier=SGDClassifier, SGDRegressor=SGDRegressor, LogisticRegression=LogisticRegression,
              Nystroem=Nystroem)
    for sub in ("dro", "experts", "kernel_ridge", "kernel_selection", "linear_model"):
        mod = importlib.import_module(f"skonline.{sub}")
        ns.update({n: getattr(mod, n) for n in mod.__all__})
    ns["experts"] = [("sgd", SGDRegressor(random_state=0)), ("scale_invariant", ns["ScaleInvariantRegressor"]()),
                     ("ridge_warmup", FrozenEstimator(Ridge())),
                     ("hgb_warmup", FrozenEstimator(HistGradientBoostingRegressor(max_iter=50)))]
    for r in rows:
        assert hasattr(eval(r[2], dict(ns)), "fit"), r  # noqa: S307
        if not r[6].startswith("best single expert"):
            for part in r[6].split("+"):
                assert hasattr(eval(part, dict(ns)), "fit"), r  # noqa: S307


def _losing_rows_say_why(rows, stdout):
    """A row worse than its baseline is numbered in its note, with a reason under the table that
    is a reason (not the tour's fallback)."""
    from skonline.cli._tour import TIE

    for r in rows:
        values = [float(v) for v in r[5].split(" / ")]
        bases = [float(v) for v in r[7].split(" / ")]
        if any(v > b * (1 + TIE) for v, b in zip(values, bases)):
            (k,) = re.findall(r"loses: see \[(\d+)\]", r[9])
            (why,) = [ln for ln in stdout.splitlines() if ln.startswith(f"[{k}] ")]
            assert "no reason known" not in why, why


def test_readme_quotes_no_typed_times():
    """Times in the README are measured by the script that prints them (the tour prints its own),
    never typed (issue 23: "about 30 s" for runs of 46 s and more)."""
    readme = Path(__file__).resolve().parents[1] / "README.md"
    if not readme.is_file():  # pragma: no cover - tests copied without the tree
        pytest.skip("no README.md")
    assert not re.search(r"\d+\s*(s|seconds|min|minutes)\b", readme.read_text(encoding="utf-8"))


def test_families_filter_and_default_command(tmp_path):
    out = tmp_path / "tour"
    # no command: the tour is the default
    proc, _ = _skonline(["--quick", "--no-progress", "--families", "dro,linear_model",
                         "--output-dir", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows = _table(proc.stdout)
    assert [r[0] for r in rows][0] == "linear_model"  # the tour's order, not the flag's
    assert {r[0] for r in rows} == {"linear_model", "dro"}
    if _have_matplotlib():
        assert sorted(p.name for p in out.glob("*.png")) == sorted(
            [PNGS["linear_model"], PNGS["dro"]])


def test_families_unknown_is_an_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["tour", "--families", "linear_model,bogus"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "bogus" in err and "kernel_selection" in err


def _write_tiny_magic04(folder, n=400, seed=0):
    """A magic04.npz in the data-home layout of skonline.datasets: X float64, y int64 in +-1."""
    rng = np.random.default_rng(seed)
    X = np.abs(rng.standard_normal((n, 10))) * 50.0
    y = np.where(X[:, 0] + 10 * rng.standard_normal(n) > 40, 1, -1).astype(np.int64)
    np.savez_compressed(folder / "magic04.npz", X=X, y=y)


def test_tour_reads_the_data_home_and_falls_back_to_synthetic(tmp_path):
    home = tmp_path / "data"
    home.mkdir()
    _write_tiny_magic04(home)
    (home / "phishing.npz").write_bytes(b"not a zip file")  # unreadable: falls back too
    before = sorted(p.name for p in home.iterdir())
    out = tmp_path / "tour"
    proc, seconds = _skonline(["tour", "--no-progress", "--output-dir", str(out)],
                              cwd=tmp_path, env=_env(SKONLINE_DATA=str(home)))
    assert proc.returncode == 0, proc.stderr[-4000:] + proc.stdout[-4000:]
    assert f"data home: {home}" in proc.stdout
    assert re.search(r"found: magic04\b", proc.stdout), proc.stdout[:1000]
    assert "phishing.npz" in proc.stderr  # reported, then replaced by synthetic data
    rows = _table(proc.stdout)
    assert {r[0] for r in rows} == set(FAMILIES)
    assert len({tuple(r[:3]) for r in rows}) == len(rows)  # each stand-in runs once per family
    by_family = {}
    for r in rows:
        by_family.setdefault(r[0], set()).add(r[1])
    # magic04 is used where the tour uses it, with all its rows; every other set is synthetic
    assert "magic04" in by_family["linear_model"]
    assert "magic04" in by_family["kernel_selection"]
    for r in rows:
        if r[1] == "magic04":
            assert r[3] == "400", r
        else:
            assert r[1].startswith("synthetic: "), r
    for family in ("experts", "kernel_ridge", "dro"):
        assert all(d.startswith("synthetic: ") for d in by_family[family])
    # nothing was downloaded or written into the data home
    assert sorted(p.name for p in home.iterdir()) == before
    assert seconds < 400, f"the tour on synthetic stand-ins took {seconds:.1f} s"  # a runaway guard


def test_data_home_flag_overrides_the_environment(tmp_path):
    home = tmp_path / "data"
    home.mkdir()
    _write_tiny_magic04(home, n=300)
    proc, _ = _skonline(["tour", "--no-progress", "--families", "linear_model", "--data-home",
                         str(home), "--output-dir", str(tmp_path / "o")], cwd=tmp_path,
                        env=_env(SKONLINE_DATA=str(tmp_path / "nowhere")))
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows = _table(proc.stdout)
    assert ["magic04", "300"] == rows[0][1:4:2]
    assert not (tmp_path / "nowhere").exists()  # the tour does not create a data home


def test_tour_without_matplotlib(tmp_path, monkeypatch):
    """matplotlib is optional: the table is printed and the plots are skipped, with a note."""
    from skonline.cli._tour import run

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    out = io.StringIO()
    code = run(quick=True, families=["dro"], output_dir=tmp_path / "tour", progress=False, out=out)
    text = out.getvalue()
    assert code == 0, text
    assert [r[0] for r in _table(text)] == ["dro"]
    assert "matplotlib is not installed: plots skipped" in text
    assert not (tmp_path / "tour").exists()


def test_progress_bar():
    stream = io.StringIO()
    bar = Progress(4, True, stream=stream, width=8)
    bar.show("linear_model / magic04")
    bar.advance("done")
    bar.close()
    text = stream.getvalue()
    assert "\r[--------] 0/4" in text and "linear_model / magic04" in text
    assert "\r[##------] 1/4" in text
    assert text.endswith("\r")  # the line is cleared at the end
    silent = io.StringIO()
    bar = Progress(4, False, stream=silent)
    bar.show("x")
    bar.advance()
    bar.close()
    assert silent.getvalue() == ""


def test_format_table():
    rows = [Row("linear_model", "magic04", "SI", 19020, "log-loss, raw / rescaled",
                (0.47051, 0.47051), "SGD", (12.36, 17.14), 0.0071),
            Row("dro", "adult", "GDRO", 20000, "worst-group log-loss", 0.3951, "ERM", 0.395, 1.5)]
    lines = format_table(rows).splitlines()
    assert len(lines) == 4 and len({len(ln) for ln in lines}) == 1
    assert "0.4705 / 0.4705" in lines[2] and "12.36 / 17.14" in lines[2]
    assert "19,020" in lines[2] and "0.007" in lines[2]


# --------------------------------------------------------------------------- reproduce


def test_reproduce_unknown_family(tmp_path):
    proc, _ = _skonline(["reproduce", "nonsense"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown family 'nonsense'" in proc.stderr
    for family in ("linear_model", "experts", "kernel_selection", "kernel_ridge", "dro"):
        assert family in proc.stderr


def test_reproduce_locates_the_script(tmp_path, monkeypatch):
    script = ROOT / "benchmarks" / "linear_model.py"
    # next to the imported package in a checkout; an installed package (.ci/run) has no clone
    # next to it, so there the clone is found from the current directory
    # (an installed package, as in .ci/run, has no repository next to it: the clone is named)
    where = tmp_path
    repo = [] if SKONLINE_HOME == ROOT else ["--repo", str(ROOT)]
    monkeypatch.chdir(where)
    assert find_benchmark("linear_model", None if SKONLINE_HOME == ROOT else ROOT) == script
    # dry run: prints the script and the command with the forwarded arguments, runs nothing
    proc, _ = _skonline(["reproduce", "--dry-run", *repo, "linear_model", "--quick"], cwd=where)
    assert proc.returncode == 0, proc.stderr
    assert str(script) in proc.stdout and "--quick" in proc.stdout
    # the arguments after the family go to the script: its own --help
    proc, _ = _skonline(["reproduce", *repo, "linear_model", "--help"], cwd=where)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "usage: linear_model.py" in proc.stdout


def test_reproduce_from_a_subfolder_uses_the_package_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT / "docs")
    if SKONLINE_HOME != ROOT:  # an installed package: there is no repository next to it
        assert find_benchmark("experts") is None
        return
    assert find_benchmark("experts") == ROOT / "benchmarks" / "experts.py"


def _fake_clone(path, *, project="skonline"):
    (path / "skonline").mkdir(parents=True)
    (path / "skonline" / "__init__.py").write_text("")
    (path / "benchmarks").mkdir()
    (path / "benchmarks" / "experts.py").write_text("print('PLANTED SCRIPT RAN')\n")
    (path / "pyproject.toml").write_text(f'[project]\nname = "{project}"\n')
    return path


def test_reproduce_never_runs_scripts_found_from_the_current_directory(tmp_path, monkeypatch):
    """Issue 11: any parent folder holding skonline/ and benchmarks/<family>.py had its script
    run. Only the repository of the imported package (or an explicit --repo clone) is used."""
    planted = _fake_clone(tmp_path / "downloads" / "evil")
    work = planted / "sub"
    work.mkdir()
    monkeypatch.chdir(work)
    proc, _ = _skonline(["reproduce", "--dry-run", "experts"], cwd=work)
    assert str(planted) not in proc.stdout and "PLANTED SCRIPT RAN" not in proc.stdout
    if SKONLINE_HOME != ROOT:  # an installed package (.ci/run): no repository, nothing runs
        assert find_benchmark("experts") is None and proc.returncode == 2
        return
    assert find_benchmark("experts") == ROOT / "benchmarks" / "experts.py"
    assert proc.returncode == 0, proc.stderr
    assert str(ROOT / "benchmarks" / "experts.py") in proc.stdout
    assert str(planted) not in proc.stdout


def test_reproduce_explicit_repo_is_checked(tmp_path):
    assert find_benchmark("experts", repo=ROOT) == ROOT / "benchmarks" / "experts.py"
    other = _fake_clone(tmp_path / "other", project="not-skonline")
    assert find_benchmark("experts", repo=other) is None
    proc, _ = _skonline(["reproduce", "--repo", str(other), "experts"], cwd=tmp_path)
    assert proc.returncode == 2 and "not a clone of the skonline repository" in proc.stderr
    assert "PLANTED" not in proc.stdout
    # a family outside the known list never maps to a file, whatever the folder holds
    assert find_benchmark("../skonline/__init__") is None
    assert find_benchmark("results") is None


def test_reproduce_outside_a_clone_says_so(tmp_path):
    """An installed package without the repository around it: a clear error."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "skonline", site / "skonline",
                    ignore=shutil.ignore_patterns("__pycache__"))
    work = tmp_path / "work"
    work.mkdir()
    env = _env()
    env["PYTHONPATH"] = str(site)
    proc, _ = _skonline(["reproduce", "experts"], cwd=work, env=env)
    assert proc.returncode == 2
    assert "benchmarks/experts.py not found" in proc.stderr
    assert "clone of the repository" in proc.stderr


def test_help_lists_the_commands(tmp_path):
    proc, _ = _skonline(["--help"], cwd=tmp_path)
    assert proc.returncode == 0
    assert "tour" in proc.stdout and "reproduce" in proc.stdout
    proc, _ = _skonline(["tour", "--help"], cwd=tmp_path)
    for flag in ("--data-home", "--output-dir", "--quick", "--no-progress", "--families"):
        assert flag in proc.stdout


# --------------------------------------------------------------------------- docs: markdown-tables


def test_markdown_tables_parser():
    """docs/_ext/mdtables.py turns the benchmark results' Markdown into blocks and nodes."""
    pytest.importorskip("sphinx")
    import importlib.util

    spec = importlib.util.spec_from_file_location("mdtables", ROOT / "docs" / "_ext" / "mdtables.py")
    md = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(md)
    text = (
        "# Title\n\nCommand: `python x.py`  \nDate: today\n\n## Results\n\n"
        "| learner | value |\n|---|---:|\n| **SI** | 0.5 \\| 0.6 |\n| q_ and 2 * 3 * 4 |\n\n"
        "- one\n  continued\n- two *em*\n\n![plot](a.png)\n\n### Deeper\n\n```\ncode | here\n```\n"
    )
    blocks = md.parse_blocks(text)
    assert [k for k, _ in blocks] == ["heading", "paragraph", "heading", "table", "bullets",
                                      "image", "heading", "code"]
    assert blocks[1][1] == "Command: `python x.py` Date: today"
    header, rows = blocks[3][1]
    assert header == ["learner", "value"]
    assert rows == [["**SI**", "0.5 | 0.6"], ["q_ and 2 * 3 * 4"]]
    assert blocks[4][1] == ["one continued", "two *em*"]
    assert blocks[5][1] == ("plot", "a.png")
    assert blocks[7][1] == "code | here"
    table = md._table(header, rows)
    assert table.astext().split() == ["learner", "value", "SI", "0.5", "|", "0.6",
                                      "q_", "and", "2", "*", "3", "*", "4"]
    kinds = [type(n).__name__ for n in md.inline_nodes("a `x_` **b** *c* 2 * 3 [d](http://e)")]
    assert kinds == ["Text", "literal", "Text", "strong", "Text", "emphasis", "Text", "reference"]


def test_bench_role_figures_resolve():
    """Every :bench:`file | row | column` figure quoted in the docs is in its results file (the
    docs build reads them; this finds a renamed row without building)."""
    pytest.importorskip("sphinx")
    import importlib.util

    spec = importlib.util.spec_from_file_location("mdtables", ROOT / "docs" / "_ext" / "mdtables.py")
    md = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(md)
    text = "| target | ratio |\n|---|---:|\n| a >= b | **1.5x** |\n| c | 2x |\n"
    assert md.find_cell(text, "a >= b", "ratio") == "1.5x"
    with pytest.raises(LookupError):
        md.find_cell(text, "missing", "ratio")
    two = "## A\n\n" + text + "\n## B\n\n| target | ratio |\n|---|---|\n| c | 3x |\n"
    with pytest.raises(LookupError):
        md.find_cell(two, "c", "ratio")  # ambiguous
    assert md.find_cell(two, "c", "ratio", section="B") == "3x"
    refs = []
    for page in (ROOT / "docs").rglob("*.rst"):
        refs += re.findall(r":bench:`([^`]+)`", page.read_text(encoding="utf-8"))
    assert refs, "no :bench: figure in the docs"
    ranges = []
    for page in (ROOT / "docs").rglob("*.rst"):
        ranges += re.findall(r":bench-range:`([^`]+)`", page.read_text(encoding="utf-8"))
    for ref in ranges:
        stem, column, *exclude = (p.strip() for p in ref.split("|"))
        stem, _, section = (p.strip() for p in stem.partition("#"))
        results = (ROOT / "benchmarks" / "results" / f"{stem}.md").read_text(encoding="utf-8")
        assert " to " in md.find_range(results, column, section or None, exclude[0] if exclude else None), ref
    for ref in refs:
        stem, row, column = (p.strip() for p in ref.split("|"))
        stem, _, section = (p.strip() for p in stem.partition("#"))
        results = (ROOT / "benchmarks" / "results" / f"{stem}.md").read_text(encoding="utf-8")
        assert md.find_cell(results, row, column, section or None), ref
