"""``skonline.__all__`` lists every subpackage, imported lazily (issue 12)."""

import pkgutil
import subprocess
import sys

import skonline


def test_all_lists_every_subpackage():
    found = {info.name for info in pkgutil.iter_modules(skonline.__path__)
             if info.ispkg and not info.name.startswith("_")}
    # every subpackage, plus the loss catalogue and the warnings (``skonline.base`` is for estimator
    # authors; ``skonline.cli`` is the command line, not a library subpackage)
    assert set(skonline.__all__) == (found - {"cli"}) | {"losses", "exceptions"}
    assert len(skonline.__all__) == 15
    for name in skonline.__all__:
        assert getattr(skonline, name).__name__ == f"skonline.{name}"
    assert set(skonline.__all__) <= set(dir(skonline))


def test_import_stays_light():
    """``import skonline`` imports no subpackage, no numba and nothing optional; an attribute does."""
    code = (
        "import sys, skonline\n"
        "heavy = [m for m in ('numba', 'matplotlib', 'sklearn', 'skonline.experts', 'skonline.plotting',"
        " 'skonline.linear_model') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "skonline.experts.PCS\n"
        "assert 'skonline.experts' in sys.modules\n"
        "try:\n    skonline.nope\nexcept AttributeError:\n    pass\nelse:\n    raise SystemExit('no error')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
