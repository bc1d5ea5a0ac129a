"""numba's disk cache of skonline's compiled code, as users have it (issue 20): read-only installs
with a read-only home, and damaged or foreign cache files (skonline.utils._jit)."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import skonline
from skonline.exceptions import CompileCacheWarning
from skonline.utils import _jit

# a first fit in a fresh process: prints the cache warnings it got, the cache hits of the scale-invariant
# pass and its predictions
_FIT = textwrap.dedent(
    """
    import json, warnings
    import numpy as np
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from skonline.linear_model import ScaleInvariantClassifier
        from skonline.linear_model import _scale_invariant_core as core
        from skonline.exceptions import CompileCacheWarning
        rng = np.random.default_rng(0)
        X = rng.standard_normal((200, 3))
        y = (X[:, 0] + 0.3 * rng.standard_normal(200) > 0).astype(int)
        pred = ScaleInvariantClassifier().partial_fit_predict(X, y, classes=[0, 1]).tolist()
        coordinate = ScaleInvariantClassifier(invariance="coordinate").fit(X, y)  # a second cached pass
        pred += coordinate.decision_function(X).tolist()
    print(json.dumps({
        "warnings": [str(w.message) for w in caught if issubclass(w.category, CompileCacheWarning)],
        "hits": int(sum(core.full_pass.stats.cache_hits.values())),
        "cache": core.full_pass.stats.cache_path,
        "pred": pred,
    }))
    """
)


def _run(env, cwd, prefix=()):
    out = subprocess.run([*prefix, sys.executable, "-c", _FIT], env=env, cwd=cwd, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    import json

    return json.loads(out.stdout.strip().splitlines()[-1])


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CACHE_DIR", "PYTEST_XDIST"))}
    env.update(extra)
    return env


# --------------------------------------------------------------------------- a read-only install
def _readonly_prefix(paths):
    """A command prefix that runs a process with ``paths`` mounted read-only, or None.

    As root, permissions do not stop a write: a private mount namespace with read-only bind mounts
    does (util-linux ``unshare``). Any other user: the folders are made read-only instead.
    """
    if os.geteuid() != 0:
        for p in paths:
            for root, dirs, files in os.walk(p):
                for name in dirs + files:
                    os.chmod(os.path.join(root, name), 0o555)
            os.chmod(p, 0o555)
        return ()
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    mounts = " && ".join(f"mount --bind -o ro '{p}' '{p}'" for p in paths)
    script = f'{mounts} && exec "$0" "$@"'
    probe = subprocess.run([unshare, "-m", "sh", "-c", script, "true"], capture_output=True)
    if probe.returncode != 0:
        return None
    return (unshare, "-m", "sh", "-c", script)


def test_read_only_install_and_home_fall_back_to_a_private_temporary_cache(tmp_path):
    """Installed read-only, run by a user whose home is read-only, no NUMBA_CACHE_DIR: import and a
    first fit work, with one warning naming NUMBA_CACHE_DIR; the next process finds the cache."""
    site = tmp_path / "site"
    shutil.copytree(Path(skonline.__file__).parent, site / "skonline",
                    ignore=shutil.ignore_patterns("__pycache__"))
    home = tmp_path / "home"
    (home / ".cache").mkdir(parents=True)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    prefix = _readonly_prefix([site, home])
    if prefix is None:
        pytest.skip("cannot make a read-only folder here (root without a mount namespace)")
    assert subprocess.run([*prefix, sys.executable, "-c", f"open('{site}/x', 'w')"],
                          capture_output=True).returncode != 0, "the package folder is still writable"
    env = _clean_env(PYTHONPATH=str(site), HOME=str(home), TMPDIR=str(tmp), XDG_CACHE_HOME=str(home / ".cache"))
    first = _run(env, tmp_path, prefix)
    assert len(first["warnings"]) == 1, first["warnings"]
    assert "NUMBA_CACHE_DIR" in first["warnings"][0]
    assert first["cache"].startswith(str(tmp / f"{_jit.TEMP_CACHE_PREFIX}{os.getuid()}"))
    assert first["hits"] == 0
    again = _run(env, tmp_path, prefix)
    assert again["hits"] == 1 and again["pred"] == first["pred"]  # compiled once, kept
    assert not any(site.rglob("*.nbi")) and not any(home.rglob("*.nbi"))


def test_no_writable_folder_at_all_compiles_without_a_cache(monkeypatch):
    monkeypatch.setattr(_jit._CacheImpl, "_locator_classes", [_jit._TempLocator])
    monkeypatch.setattr(_jit, "_private_temp_root", lambda: None)
    monkeypatch.setattr(_jit, "_WARNED", set())

    def double(x):
        return 2.0 * x

    with pytest.warns(CompileCacheWarning, match="NUMBA_CACHE_DIR"):
        compiled = _jit.njit(double)
    assert compiled(2.0) == 4.0
    assert type(compiled._cache).__name__ == "NullCache"


def test_the_temporary_cache_folder_must_be_private(tmp_path, monkeypatch):
    monkeypatch.setattr(_jit.tempfile, "gettempdir", lambda: str(tmp_path))
    _jit._private_temp_root.cache_clear()
    try:
        path = tmp_path / f"{_jit.TEMP_CACHE_PREFIX}{os.getuid()}"
        assert _jit._private_temp_root() == str(path)
        assert path.stat().st_mode & 0o777 == 0o700
        _jit._private_temp_root.cache_clear()
        path.chmod(0o777)  # another user could write pickles there
        assert _jit._private_temp_root() is None
        _jit._private_temp_root.cache_clear()
        path.rmdir()
        path.symlink_to(tmp_path)  # a link someone planted
        assert _jit._private_temp_root() is None
    finally:
        _jit._private_temp_root.cache_clear()


# --------------------------------------------------------------------------- damaged files
def _flip(path):
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 3, len(data), max(1, len(data) // 7)):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def _truncate(path):
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


#: one damage of each file kind (each costs two fresh processes, a cold compile among them): a data
#: file whose bytes changed (its seal catches a truncation the same way) and an index that cannot be
#: read (a truncated one; garbage fails the same unpickling)
_DAMAGE = {
    "flipped data": ("*.nbc", _flip),
    "truncated index": ("*.nbi", _truncate),
}


@pytest.fixture(scope="module")
def filled_cache(tmp_path_factory):
    """A cache folder filled by a first fit, and what that fit printed."""
    home = tmp_path_factory.mktemp("filled")
    first = _run(_clean_env(NUMBA_CACHE_DIR=str(home / "cache")), home)
    assert first["warnings"] == [] and first["hits"] == 0
    return home / "cache", first


def _copy_of(filled_cache, tmp_path):
    cache, first = filled_cache
    shutil.copytree(cache, tmp_path / "cache")
    env = _clean_env(NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    folder = tmp_path / "cache" / Path(first["cache"]).relative_to(cache)
    return env, folder, first


@pytest.mark.parametrize("damage", list(_DAMAGE) + ["another entry's data"])
def test_a_damaged_cache_entry_is_compiled_again(filled_cache, tmp_path, damage):
    """Truncated, altered or foreign cache files: the next fit works (same predictions), warns once
    naming the cache folder, and rewrites the entry, so the fit after it loads from the cache."""
    env, folder, first = _copy_of(filled_cache, tmp_path)
    if damage == "another entry's data":  # what a concurrent save of another function can leave
        target = next(folder.glob("*full_pass*.nbc"))
        other = next(p for p in folder.glob("*.nbc") if "full_pass" not in p.name)
        shutil.copyfile(other, target)
    else:
        pattern, hurt = _DAMAGE[damage]
        for path in folder.glob(f"*full_pass*{pattern[1:]}"):
            hurt(path)
    second = _run(env, tmp_path)
    assert second["pred"] == first["pred"]
    assert second["hits"] == 0  # compiled again
    assert len(second["warnings"]) == 1 and str(folder) in second["warnings"][0], second["warnings"]
    third = _run(env, tmp_path)
    assert third["warnings"] == [] and third["hits"] == 1 and third["pred"] == first["pred"]


def test_an_index_written_by_plain_numba_is_replaced_silently(filled_cache, tmp_path):
    """A cache written by numba's own cache (an older skonline) is not an error: it is rewritten."""
    import pickle

    env, folder, first = _copy_of(filled_cache, tmp_path)
    for index in folder.glob("*.nbi"):  # the same contents, without skonline's seal
        with open(index, "rb") as f:
            version = pickle.load(f)
            blob = f.read()
        index.write_bytes(pickle.dumps(version, protocol=-1) + blob[len(_jit._MAGIC) + 32:])
    second = _run(env, tmp_path)
    assert second["warnings"] == [] and second["hits"] == 0 and second["pred"] == first["pred"]


def test_cache_files_are_sealed(filled_cache):
    files = list(filled_cache[0].rglob("*.nb[ic]"))
    assert {p.suffix for p in files} == {".nbi", ".nbc"}
    for path in files:
        assert _jit._MAGIC in path.read_bytes()[:64], path.name
