"""What every benchmark results file records about its run: commit, machine and load.

Imported by the scripts in this folder (``python benchmarks/<name>.py`` puts the folder on
``sys.path``). The load average is read when this module is imported (the start of the run) and
again when the header is written (the end), so a reader can tell a quiet run from a loaded one.
"""

import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_average():
    """The 1-, 5- and 15-minute load averages, or NaNs where the OS has none."""
    try:
        return os.getloadavg()
    except (AttributeError, OSError):
        return (float("nan"),) * 3


LOAD_AT_START = load_average()


def git_commit():
    """Short hash of HEAD, ``+dirty`` when the working tree differs from it; 'unknown' outside git."""
    try:
        commit = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                                         stderr=subprocess.DEVNULL).strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "skonline", "benchmarks"],
                               cwd=ROOT, stderr=subprocess.DEVNULL).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def machine():
    """Processor (its model name where the OS says it), cores, operating system and Python version."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}")


def _loads(values):
    return " / ".join(f"{v:.2f}" for v in values)


def run_header():
    """One Markdown paragraph: commit, machine, and the load average at the start and the end."""
    return (f"Commit: `{git_commit()}`; machine: {machine()}; load average (1 / 5 / 15 min) "
            f"{_loads(LOAD_AT_START)} at the start of the run, {_loads(load_average())} at the end "
            f"(on {os.cpu_count()} cores: a load above that means the timings shared the machine).")


def first_fit_case(name, rows, seed=0):
    """The first fit the cold-start scripts time: ``(cls, params, X, y, fit_params)``.

    Estimator ``name`` (``skonline.utils.all_estimators``) at its defaults, or, for a meta-estimator
    (ensemble, pipeline), which has no default, its first test configuration
    (``skonline.utils._test_instances.test_params(cls)[0]``);
    ``rows`` rows of its own test stream (a fixed feature map: any dense table of 4 columns).
    """
    import numpy as np

    from skonline.utils import _test_instances as ti
    from skonline.utils import all_estimators

    cls = dict(all_estimators())[name]
    try:
        params = {}
        est = cls()
    except TypeError:
        params = ti.test_params(cls)[0]
        est = cls(**params)
    rng = np.random.default_rng(seed)
    stream = ti.test_stream(est, rng, n_samples=rows)
    if stream is not None:
        X, y, kw = stream
    else:
        X, y, kw = rng.standard_normal((rows, 4)), None, {}
    return cls, params, X, y, kw

