"""The README's Python code runs as written, with no warning (issues 22 and 23).

Its quickstart is the first code a new user runs: a warning there (or advice in one that does not
run) is the first impression of the library. The blocks run in order in one namespace, as a user
pasting them one after the other would run them.
"""

import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks():
    if not README.is_file():  # pragma: no cover - tests copied without the tree
        pytest.skip("no README.md next to the tests")
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_the_quickstart_starts_with_the_default_ensemble():
    quickstart = _blocks()[0]
    assert "OnlineEnsembleClassifier()" in quickstart.split("partial_fit")[0]


def test_the_readme_code_runs_without_a_warning(capsys):
    blocks = _blocks()
    assert len(blocks) >= 2
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="(?!skonline)")
        for k, code in enumerate(blocks):
            exec(compile(code, f"README.md, python block {k + 1}", "exec"), namespace)  # noqa: S102
    assert "online accuracy" in capsys.readouterr().out
