"""Test configuration: the shared benchmark datasets serve as the loaders' data home."""

import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = _REPO.parent / "shared" / "datasets"

if "SKONLINE_DATA" not in os.environ and SHARED_DATA.is_dir():
    os.environ["SKONLINE_DATA"] = str(SHARED_DATA)


def _have_data():
    home = os.environ.get("SKONLINE_DATA")
    return bool(home) and Path(home, "magic04.npz").is_file()


requires_data = pytest.mark.skipif(
    not _have_data(), reason="benchmark datasets not available (set SKONLINE_DATA)"
)


@pytest.fixture
def paper_settings():
    """The papers' settings as the estimators' defaults (see tests/_paper_settings.py)."""
    from _paper_settings import paper_defaults

    with paper_defaults():
        yield
