"""Tests for skonline.datasets.

Two groups:

* Against the offline copies in ``<repo>/../shared/datasets`` used as the data
  home (skipped when that folder is absent): shapes, label values, splits.
* The download path, against a local HTTP server bound to 127.0.0.1 (no other
  network traffic): small files written in each original format are served,
  downloaded, parsed, converted and cached.
"""

import bz2
import csv
import gzip
import hashlib
import inspect
import io
import json
import os
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils import Bunch

import skonline.datasets as ds
from skonline.datasets import _builders, _parsers, _remote
from skonline.datasets._base import _descr
from skonline.datasets._parsers import _parse_arff, _parse_csv, _parse_svmlight

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "datasets"
HAVE_SHARED = all((SHARED / f"{n}.npz").is_file() for n in ds.dataset_names())
needs_shared = pytest.mark.skipif(
    not HAVE_SHARED, reason=f"offline dataset copies not found in {SHARED}"
)

NAMES = ["magic04", "phishing", "a9a", "bank32nh", "elevators", "ailerons",
         "casp", "ijcnn1", "cod-rna", "adult"]
WITH_TEST = {"a9a", "ijcnn1", "adult"}

# name: (n_train, n_test, n_features)
SHAPES = {
    "magic04": (19020, 0, 10),
    "phishing": (11055, 0, 68),
    "a9a": (32561, 16281, 123),
    "bank32nh": (8192, 0, 32),
    "elevators": (16599, 0, 18),
    "ailerons": (13750, 0, 40),
    "casp": (45730, 0, 9),
    "ijcnn1": (49990, 91701, 22),
    "cod-rna": (59535, 0, 8),
    "adult": (32561, 16281, 108),
}
# name: ({label: count} train, {label: count} test or None)
CLASS_COUNTS = {
    "magic04": ({1: 12332, -1: 6688}, None),
    "phishing": ({0: 4898, 1: 6157}, None),
    "a9a": ({-1: 24720, 1: 7841}, {-1: 12435, 1: 3846}),
    "ijcnn1": ({-1: 45137, 1: 4853}, {-1: 82989, 1: 8712}),
    "cod-rna": ({-1: 39690, 1: 19845}, None),
    "adult": ({0: 24720, 1: 7841}, {0: 12435, 1: 3846}),
}
# name: (min, max) of y, rounded as in the README
Y_RANGES = {
    "bank32nh": (0.0, 0.8197, 4),
    "elevators": (0.012, 0.078, 3),
    "ailerons": (-0.0036, 0.0, 4),
    "casp": (0.0, 20.999, 3),
}


def _counts(y):
    values, counts = np.unique(y, return_counts=True)
    return dict(zip(values.tolist(), counts.tolist()))


def _no_network(url):  # replaces _remote._open_url
    raise AssertionError(f"unexpected download of {url}")


# ---------------------------------------------------------------------------
# the offline copies as data home
# ---------------------------------------------------------------------------


@pytest.fixture
def shared_home(monkeypatch):
    monkeypatch.setenv("SKONLINE_DATA", str(SHARED))
    monkeypatch.setattr(_remote, "_open_url", _no_network)
    return SHARED


@needs_shared
@pytest.mark.parametrize("name", NAMES)
def test_shared_shapes_and_labels(shared_home, name):
    n, n_test, d = SHAPES[name]
    bunch = ds.load_dataset(name)
    assert isinstance(bunch, Bunch)
    X, y = bunch.data, bunch.target
    assert X.shape == (n, d) and y.shape == (n,)
    assert bunch.name == name and bunch.split == "train"
    assert name in bunch.DESCR and "Original source" in bunch.DESCR
    if name in CLASS_COUNTS:
        assert bunch.task == "binary"
        assert y.dtype == np.int64
        assert _counts(y) == CLASS_COUNTS[name][0]
    else:
        assert bunch.task == "regression"
        assert y.dtype == np.float64
        lo, hi, digits = Y_RANGES[name]
        assert round(float(y.min()), digits) == lo
        assert round(float(y.max()), digits) == hi
    if name == "a9a":
        assert sp.issparse(X) and X.format == "csr"
    else:
        assert isinstance(X, np.ndarray)
        assert X.dtype == (np.float32 if name == "adult" else np.float64)
    if bunch.feature_names is not None:
        assert len(bunch.feature_names) == d
        assert all(isinstance(f, str) for f in bunch.feature_names)


@needs_shared
def test_shared_feature_names(shared_home):
    assert ds.load_magic04().feature_names[:3] == ["fLength", "fWidth", "fSize"]
    assert ds.load_casp().feature_names == [f"F{i}" for i in range(1, 10)]
    assert ds.load_bank32nh().feature_names[0] == "a1cx"
    assert ds.load_phishing().feature_names is None


@needs_shared
@pytest.mark.parametrize("name", sorted(WITH_TEST))
def test_shared_test_and_all_splits(shared_home, name):
    n, n_test, d = SHAPES[name]
    X, y = ds.load_dataset(name, return_X_y=True)
    Xt, yt = ds.load_dataset(name, split="test", return_X_y=True)
    Xa, ya = ds.load_dataset(name, split="all", return_X_y=True)
    assert Xt.shape == (n_test, d) and yt.shape == (n_test,)
    assert Xa.shape == (n + n_test, d)
    np.testing.assert_array_equal(ya, np.concatenate([y, yt]))
    if sp.issparse(X):
        assert Xt.format == "csr" and Xa.format == "csr"
        assert (Xa != sp.vstack([X, Xt]).tocsr()).nnz == 0
    else:
        np.testing.assert_array_equal(Xa, np.vstack([X, Xt]))
    assert _counts(yt) == CLASS_COUNTS[name][1]


@needs_shared
@pytest.mark.parametrize("name", sorted(set(NAMES) - WITH_TEST))
@pytest.mark.parametrize("split", ["test", "all"])
def test_shared_missing_split_raises(shared_home, name, split):
    with pytest.raises(ValueError, match=f"no '{split}' split"):
        ds.load_dataset(name, split=split)


@needs_shared
def test_shared_a9a_csr(shared_home):
    X, y = ds.load_a9a(return_X_y=True)
    Xt, _ = ds.load_a9a(split="test", return_X_y=True)
    assert X.shape[1] == Xt.shape[1] == 123
    assert X.dtype == np.float64 and X.has_sorted_indices
    assert set(np.unique(X.data)) == {1.0}


@needs_shared
def test_shared_adult_groups(shared_home):
    b = ds.load_adult()
    assert b.race.shape == b.sex.shape == b.groups.shape == (32561,)
    assert _counts(b.race) == {"White": 27816, "Black": 3124,
                               "Asian-Pac-Islander": 1039,
                               "Amer-Indian-Eskimo": 311, "Other": 271}
    assert _counts(b.sex) == {"Male": 21790, "Female": 10771}
    assert b.groups.dtype == np.int64 and len(b.group_names) == 10
    names = np.array(b.group_names)[b.groups]
    np.testing.assert_array_equal(names, np.char.add(np.char.add(b.race, "/"), b.sex))
    # the one-hot race/sex columns agree with the string labels
    fn = b.feature_names
    np.testing.assert_array_equal(b.data[:, fn.index("sex=Female")] == 1,
                                  b.sex == "Female")
    t = ds.load_adult(split="test")
    assert t.groups.shape == (16281,)
    a = ds.load_adult(split="all")
    np.testing.assert_array_equal(a.groups, np.concatenate([b.groups, t.groups]))


@needs_shared
def test_shared_named_loaders_match_generic(shared_home):
    for name in ("cod-rna", "elevators"):
        func = getattr(ds, "load_" + name.replace("-", "_"))
        X1, y1 = func(return_X_y=True)
        X2, y2 = ds.load_dataset(name.upper().replace("-", "_"), return_X_y=True)
        np.testing.assert_array_equal(X1, X2)
        np.testing.assert_array_equal(y1, y2)


@needs_shared
def test_shared_download_if_missing_false_finds_file(shared_home):
    X, _ = ds.load_ailerons(download_if_missing=False, return_X_y=True)
    assert X.shape == (13750, 40)


# ---------------------------------------------------------------------------
# API, errors, data home
# ---------------------------------------------------------------------------


def test_dataset_names_and_all():
    assert ds.dataset_names() == NAMES
    for name in NAMES:
        assert "load_" + name.replace("-", "_") in ds.__all__
    for name in ds.__all__:
        assert callable(getattr(ds, name))
    assert set(ds.__all__) >= {"load_dataset", "get_data_home", "clear_data_home",
                               "dataset_names"}


def test_public_functions_have_docstrings():
    for name in ds.__all__:
        doc = inspect.getdoc(getattr(ds, name))
        assert doc and "Examples\n--------" in doc, name
        if name.startswith("load_"):
            assert "Parameters\n----------" in doc and "Returns\n-------" in doc


def test_unknown_name_and_bad_split(tmp_path):
    with pytest.raises(ValueError, match="Unknown dataset 'mnist'.*magic04"):
        ds.load_dataset("mnist", data_home=tmp_path)
    with pytest.raises(ValueError, match="split must be one of"):
        ds.load_dataset("a9a", split="valid", data_home=tmp_path)
    with pytest.raises(ValueError, match="no 'test' split"):
        ds.load_magic04(split="test", data_home=tmp_path)
    assert os.listdir(tmp_path) == []


def test_get_data_home_resolution(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SKONLINE_DATA", raising=False)
    default = ds.get_data_home()
    assert default == str(tmp_path / "home" / "skonline_data")
    assert os.path.isdir(default)
    monkeypatch.setenv("SKONLINE_DATA", str(tmp_path / "env"))
    assert ds.get_data_home() == str(tmp_path / "env")
    assert ds.get_data_home(tmp_path / "arg") == str(tmp_path / "arg")
    assert ds.get_data_home("~/x") == str(tmp_path / "home" / "x")


def test_clear_data_home(tmp_path):
    home = tmp_path / "cache"
    assert ds.get_data_home(home) == str(home)  # created by skonline: marked
    (home / "magic04.npz").write_bytes(b"x")
    ds.clear_data_home(home)
    assert not home.exists()
    ds.clear_data_home(home)  # a missing folder is left missing


def test_clear_data_home_refuses_a_folder_skonline_did_not_make(tmp_path, monkeypatch):
    """Issue 11: clear_data_home deleted whatever SKONLINE_DATA named."""
    mine = tmp_path / "my_documents"
    mine.mkdir()
    (mine / "thesis.tex").write_text("precious")
    monkeypatch.setenv("SKONLINE_DATA", str(mine))
    assert ds.get_data_home() == str(mine)  # used as a data home, but not made by skonline
    with pytest.raises(OSError, match="Refusing to delete.*did not create this folder"):
        ds.clear_data_home()
    with pytest.raises(OSError, match="Refusing to delete"):
        ds.clear_data_home(mine)
    assert (mine / "thesis.tex").read_text() == "precious"
    link = tmp_path / "link"
    made = tmp_path / "made"
    ds.get_data_home(made)
    link.symlink_to(made)
    with pytest.raises(OSError, match="symbolic link"):
        ds.clear_data_home(link)
    assert made.is_dir()


def test_download_if_missing_false(tmp_path, monkeypatch):
    monkeypatch.setattr(_remote, "_open_url", _no_network)
    with pytest.raises(OSError, match="download_if_missing=False.*SKONLINE_DATA"):
        ds.load_casp(data_home=tmp_path, download_if_missing=False)


def test_resolve_url(monkeypatch):
    url = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/a9a.t"
    monkeypatch.delenv("SKONLINE_DATA_URL", raising=False)
    assert _remote._resolve_url(url) == url
    monkeypatch.setenv("SKONLINE_DATA_URL", "http://127.0.0.1:8000/mirror/")
    assert (_remote._resolve_url(url)
            == "http://127.0.0.1:8000/mirror/~cjlin/libsvmtools/datasets/binary/a9a.t")
    assert (_remote._resolve_url("https://api.openml.org/api/v1/json/data/558?x=1")
            == "http://127.0.0.1:8000/mirror/api/v1/json/data/558?x=1")


def test_url_table():
    assert set(_remote._REMOTE_FILES) == set(NAMES)
    for name, remotes in _remote._REMOTE_FILES.items():
        assert remotes and all(isinstance(r, _remote.RemoteFile) for r in remotes)
        for r in remotes:
            assert r.url.startswith("https://")
            assert r.format in {"csv", "libsvm", "libsvm.bz2", "openml-arff"}
            assert r.sha256 is None or len(r.sha256) == 64
        assert all(r.url in _descr(name) for r in remotes)
    assert [r.filename for r in _remote._REMOTE_FILES["ijcnn1"]] == [
        "ijcnn1.tr.bz2", "ijcnn1.val.bz2", "ijcnn1.t.bz2"]


def test_as_frame_without_pandas(tmp_path, monkeypatch):
    _write_small_npz(tmp_path)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pandas"):
        ds.load_casp(data_home=tmp_path, as_frame=True)


def test_as_frame(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = _write_small_npz(tmp_path)
    b = ds.load_casp(data_home=tmp_path, as_frame=True)
    assert isinstance(b.data, pd.DataFrame) and list(b.data.columns)[0] == "F1"
    assert b.target.name == "RMSD"
    np.testing.assert_array_equal(b.frame["RMSD"].to_numpy(), y)
    Xf, yf = ds.load_casp(data_home=tmp_path, as_frame=True, return_X_y=True)
    np.testing.assert_array_equal(Xf.to_numpy(), X)


def _write_small_npz(home):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(5, 9)), rng.uniform(size=5)
    _builders._write_npz_atomic(
        os.path.join(home, "casp.npz"),
        {"X": X, "y": y, "feature_names": np.array([f"F{i}" for i in range(1, 10)])},
    )
    return X, y


def test_write_npz_atomic_leaves_nothing_on_failure(tmp_path, monkeypatch):
    def broken(fh, **arrays):
        fh.write(b"partial")
        raise RuntimeError("disk full")

    monkeypatch.setattr(_builders.np, "savez_compressed", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        _builders._write_npz_atomic(str(tmp_path / "x.npz"), {"y": np.zeros(2)})
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------
# parsers
# ---------------------------------------------------------------------------

SVM_TEXT = b"+1 1:0.5 3:2\n-1 2:1.25\n# a comment\n0 1:1 4:-3\n"


@pytest.mark.parametrize("wrap", ["plain", "bz2", "gzip", "fileobj", "bz2-fileobj"])
def test_parse_svmlight(tmp_path, wrap):
    payload = {"plain": SVM_TEXT, "fileobj": SVM_TEXT,
               "bz2": bz2.compress(SVM_TEXT), "bz2-fileobj": bz2.compress(SVM_TEXT),
               "gzip": gzip.compress(SVM_TEXT)}[wrap]
    if wrap.endswith("fileobj"):
        source = io.BytesIO(payload)
    else:
        source = tmp_path / "f.txt"  # the name does not tell the compression
        source.write_bytes(payload)
    X, y = _parse_svmlight(source, n_features=5)
    assert sp.issparse(X) and X.shape == (3, 5) and X.dtype == np.float64
    np.testing.assert_array_equal(
        X.toarray(), [[0.5, 0, 2, 0, 0], [0, 1.25, 0, 0, 0], [1, 0, 0, -3, 0]])
    np.testing.assert_array_equal(y, [1, -1, 0])
    assert X.has_sorted_indices


def test_parse_svmlight_too_few_features():
    with pytest.raises(ValueError):
        _parse_svmlight(io.BytesIO(SVM_TEXT), n_features=3)


def test_parse_csv():
    text = "|1x3 Cross validator\na, b ,c\n\n1, 2,x \n 3,4, y\n\n"
    names, rows = _parse_csv(io.StringIO(text), header=True, comment="|")
    assert names == ["a", "b", "c"]
    assert rows == [["1", "2", "x"], ["3", "4", "y"]]
    names, rows = _parse_csv(io.BytesIO(b"1,2\n3,4\n"))
    assert names is None and rows == [["1", "2"], ["3", "4"]]


ARFF_TEXT = """% a comment
@RELATION 'toy data'

@ATTRIBUTE x1 NUMERIC
@attribute 'my x2' real
@Attribute colour {red, 'dark green', blue}
@ATTRIBUTE n integer
@ATTRIBUTE y REAL

@DATA
% comment in data
1.5, -2, red, 3, 0.25
?, 1e-3, 'dark green', 4, 0.5
0,0,blue,?,-1
{0 7, 2 'dark green', 4 2.5}
{}
"""


def test_parse_arff():
    arff = _parse_arff(io.StringIO(ARFF_TEXT))
    assert arff.relation == "toy data"
    assert [a.name for a in arff.attributes] == ["x1", "my x2", "colour", "n", "y"]
    assert [a.kind for a in arff.attributes] == [
        "numeric", "numeric", "nominal", "numeric", "numeric"]
    assert arff.attributes[2].values == ("red", "dark green", "blue")
    expected = np.array([
        [1.5, -2, 0, 3, 0.25],
        [np.nan, 1e-3, 1, 4, 0.5],
        [0, 0, 2, np.nan, -1],
        [7, 0, 1, 0, 2.5],
        [0, 0, 0, 0, 0],
    ])
    np.testing.assert_array_equal(arff.data, expected)
    assert arff.data.dtype == np.float64


@pytest.mark.parametrize("bad, match", [
    ("@ATTRIBUTE s STRING\n@DATA\nabc\n", "only numeric and nominal"),
    ("@ATTRIBUTE c {a, b}\n@DATA\nz\n", "not a declared value"),
    ("@ATTRIBUTE a REAL\n@ATTRIBUTE b REAL\n@DATA\n1\n", "1 values, expected 2"),
    ("@ATTRIBUTE a REAL\n", "no @data"),
])
def test_parse_arff_errors(bad, match):
    with pytest.raises(ValueError, match=match):
        _parse_arff(io.StringIO("@RELATION r\n" + bad))


def test_split_values():
    assert _parsers._split_values("a, 'b, c' ,\"d\\\"e\",f") == ["a", "b, c", 'd"e', "f"]
    assert _parsers._split_values("1,,2") == ["1", "", "2"]


# ---------------------------------------------------------------------------
# the download path, against a loopback HTTP server
# ---------------------------------------------------------------------------


@pytest.fixture
def server(monkeypatch, tmp_path):
    """Serve ``files`` (path -> bytes) on 127.0.0.1 and count the requests."""
    files, log = {}, []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            log.append(self.path)
            body = files.get(self.path)
            if body is None:
                self.send_error(404, "Not Found")
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
                "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    monkeypatch.setenv("SKONLINE_DATA_URL", base)
    # the toy files have no pinned SHA-256: opt in (see test_unpinned_file_refused_by_default)
    monkeypatch.setenv("SKONLINE_ALLOW_UNPINNED", "1")
    home = tmp_path / "home"
    monkeypatch.setenv("SKONLINE_DATA", str(home))

    def serve(url, body):
        files[urlsplit(url).path] = body

    try:
        yield SimpleNamespace(files=files, log=log, base=base, serve=serve, home=home)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _remote_of(name, i=0):
    return _remote._REMOTE_FILES[name][i]


def _libsvm_bytes(X, y):
    lines = []
    for row, label in zip(X, y):
        items = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0)
        lines.append(f"{int(label):+d} {items}".rstrip() if label else f"0 {items}")
    return ("\n".join(lines) + "\n").encode()


def _random_sparse(rng, n, d, values=(1.0,), density=0.3):
    X = rng.choice(values, size=(n, d)) * (rng.uniform(size=(n, d)) < density)
    X[0, d - 1] = values[0]  # make sure the full width is seen in one part
    return X


def _listing(home):
    """The files of a data home, without the marker skonline writes into a folder it creates."""
    return sorted(f for f in os.listdir(home) if f != ".skonline-data-home")


def _assert_npz_keys(home, name, expected):
    with np.load(home / f"{name}.npz", allow_pickle=False) as z:
        assert set(z.files) == set(expected)
        return {k: z[k] for k in z.files}


def _assert_cached(server, name, n_requests):
    """A second load reads the npz and makes no request."""
    assert len(server.log) == n_requests
    ds.load_dataset(name)
    assert len(server.log) == n_requests
    assert _listing(server.home) == [f"{name}.npz"]


@pytest.mark.parametrize("name, d, labels", [("phishing", 68, (0, 1)),
                                             ("cod-rna", 8, (-1, 1))])
def test_download_libsvm_dense(server, name, d, labels):
    rng = np.random.default_rng(1)
    values = (0.18257,) if name == "phishing" else (-766.0, 0.140625, 1.5e-3, 128.0)
    X = _random_sparse(rng, 40, d, values, density=0.5)
    y = rng.choice(labels, size=40)
    server.serve(_remote_of(name).url, _libsvm_bytes(X, y))
    b = ds.load_dataset(name)
    np.testing.assert_array_equal(b.data, X)
    np.testing.assert_array_equal(b.target, y)
    assert b.target.dtype == np.int64 and b.data.dtype == np.float64
    stored = _assert_npz_keys(server.home, name, {"X", "y"})
    np.testing.assert_array_equal(stored["X"], X)
    _assert_cached(server, name, 1)


def test_download_a9a_sparse(server):
    rng = np.random.default_rng(2)
    X, Xt = _random_sparse(rng, 30, 123), _random_sparse(rng, 20, 122, density=0.1)
    y, yt = rng.choice([-1, 1], size=30), rng.choice([-1, 1], size=20)
    server.serve(_remote_of("a9a", 0).url, _libsvm_bytes(X, y))
    server.serve(_remote_of("a9a", 1).url, _libsvm_bytes(Xt, yt))  # no column 123
    b = ds.load_a9a()
    assert sp.issparse(b.data) and b.data.format == "csr" and b.data.shape == (30, 123)
    np.testing.assert_array_equal(b.data.toarray(), X)
    np.testing.assert_array_equal(b.target, y)
    Xt2, yt2 = ds.load_a9a(split="test", return_X_y=True)
    assert Xt2.shape == (20, 123)
    np.testing.assert_array_equal(Xt2.toarray()[:, :122], Xt)
    np.testing.assert_array_equal(yt2, yt)
    stored = _assert_npz_keys(server.home, "a9a", {
        "y", "y_test", "X_data", "X_indices", "X_indptr", "X_shape",
        "X_test_data", "X_test_indices", "X_test_indptr", "X_test_shape"})
    assert stored["X_indices"].dtype == np.int32
    assert stored["X_indptr"].dtype == np.int64
    assert stored["X_shape"].tolist() == [30, 123]
    assert stored["X_test_shape"].tolist() == [20, 123]
    assert stored["y"].dtype == np.int64
    Xa, ya = ds.load_a9a(split="all", return_X_y=True)
    assert Xa.shape == (50, 123)
    _assert_cached(server, "a9a", 2)


def test_download_ijcnn1_bz2(server):
    rng = np.random.default_rng(3)
    parts = []
    for n in (15, 10, 12):  # tr, val, t
        X = _random_sparse(rng, n, 22, (1.0, -0.731854, 0.0116840), density=0.6)
        parts.append((X, rng.choice([-1, 1], size=n)))
    for i, (X, y) in enumerate(parts):
        server.serve(_remote_of("ijcnn1", i).url, bz2.compress(_libsvm_bytes(X, y)))
    b = ds.load_ijcnn1()
    np.testing.assert_array_equal(b.data, np.vstack([parts[0][0], parts[1][0]]))
    np.testing.assert_array_equal(b.target, np.concatenate([parts[0][1], parts[1][1]]))
    t = ds.load_ijcnn1(split="test")
    np.testing.assert_array_equal(t.data, parts[2][0])
    np.testing.assert_array_equal(t.target, parts[2][1])
    _assert_npz_keys(server.home, "ijcnn1", {"X", "y", "X_test", "y_test"})
    _assert_cached(server, "ijcnn1", 3)


def test_download_magic04_csv(server):
    rng = np.random.default_rng(4)
    X = np.round(rng.normal(scale=50, size=(25, 10)), 4)
    labels = rng.choice(["g", "h"], size=25)
    text = "".join(",".join([*(repr(float(v)) for v in row), lab]) + "\n"
                   for row, lab in zip(X, labels))
    server.serve(_remote_of("magic04").url, text.encode())
    b = ds.load_magic04()
    np.testing.assert_array_equal(b.data, X)
    np.testing.assert_array_equal(b.target, np.where(labels == "g", 1, -1))
    assert b.target.dtype == np.int64
    assert b.feature_names == ["fLength", "fWidth", "fSize", "fConc", "fConc1",
                               "fAsym", "fM3Long", "fM3Trans", "fAlpha", "fDist"]
    _assert_npz_keys(server.home, "magic04", {"X", "y", "feature_names"})
    _assert_cached(server, "magic04", 1)


def test_download_casp_csv(server):
    rng = np.random.default_rng(5)
    A = np.round(rng.uniform(0, 100, size=(20, 10)), 5)
    text = "RMSD,F1,F2,F3,F4,F5,F6,F7,F8,F9\n" + "".join(
        ",".join(repr(float(v)) for v in row) + "\n" for row in A)
    server.serve(_remote_of("casp").url, text.encode())
    X, y = ds.load_casp(return_X_y=True)
    np.testing.assert_array_equal(X, A[:, 1:])
    np.testing.assert_array_equal(y, A[:, 0])
    assert ds.load_casp().feature_names == [f"F{i}" for i in range(1, 10)]
    _assert_cached(server, "casp", 1)


ADULT_ROWS_TRAIN = [
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, "
    "Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K",
    "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, "
    "Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, <=50K",
    "31, Private, 45781, Masters, 14, Never-married, Prof-specialty, "
    "Not-in-family, Black, Female, 14084, 0, 50, ?, >50K",
]
ADULT_ROWS_TEST = [
    "25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, "
    "Own-child, Asian-Pac-Islander, Male, 0, 0, 40, India, <=50K.",
    "44, ?, 160323, Some-college, 10, Married-civ-spouse, ?, Wife, "
    "Other, Female, 7688, 0, 40, United-States, >50K.",
]


def _adult_files(train, test):
    return (("\n".join(train) + "\n\n").encode(),
            ("|1x3 Cross validator\n" + "\n".join(test) + "\n\n").encode())


def _serve_adult(server, monkeypatch, data, test, pin=True):
    remotes = _remote._REMOTE_FILES["adult"]
    if pin:  # the real hashes are pinned; pin those of the synthetic files
        remotes = tuple(r._replace(sha256=hashlib.sha256(body).hexdigest())
                        for r, body in zip(remotes, (data, test)))
        monkeypatch.setitem(_remote._REMOTE_FILES, "adult", remotes)
    server.serve(remotes[0].url, data)
    server.serve(remotes[1].url, test)


def test_download_adult_csv(server, monkeypatch):
    _serve_adult(server, monkeypatch, *_adult_files(ADULT_ROWS_TRAIN, ADULT_ROWS_TEST))
    b = ds.load_adult()
    fn = b.feature_names
    assert fn[:6] == ["age", "fnlwgt", "education_num", "capital_gain",
                      "capital_loss", "hours_per_week"]
    # categories sorted over train and test together, '?' kept
    assert [f for f in fn if f.startswith("workclass=")] == [
        "workclass=?", "workclass=Private", "workclass=Self-emp-not-inc",
        "workclass=State-gov"]
    assert [f for f in fn if f.startswith("race=")] == [
        "race=Asian-Pac-Islander", "race=Black", "race=Other", "race=White"]
    assert fn[-1] == "native_country=United-States"
    assert b.data.dtype == np.float32 and b.data.shape == (3, len(fn))
    np.testing.assert_array_equal(b.data[:, :6], [[39, 77516, 13, 2174, 0, 40],
                                                  [50, 83311, 13, 0, 0, 13],
                                                  [31, 45781, 14, 14084, 0, 50]])
    assert b.data[2, fn.index("native_country=?")] == 1
    assert b.data[:, 6:].sum(axis=1).tolist() == [8, 8, 8]  # one hot per block
    np.testing.assert_array_equal(b.target, [0, 0, 1])
    np.testing.assert_array_equal(b.race, ["White", "White", "Black"])
    np.testing.assert_array_equal(b.sex, ["Male", "Male", "Female"])
    assert [b.group_names[g] for g in b.groups] == [
        "White/Male", "White/Male", "Black/Female"]
    t = ds.load_adult(split="test")
    np.testing.assert_array_equal(t.target, [0, 1])
    assert t.data[1, fn.index("occupation=?")] == 1
    assert [t.group_names[g] for g in t.groups] == [
        "Asian-Pac-Islander/Male", "Other/Female"]
    _assert_npz_keys(server.home, "adult", {
        "X", "y", "X_test", "y_test", "race", "sex", "race_test", "sex_test",
        "feature_names"})
    _assert_cached(server, "adult", 2)


@needs_shared
@pytest.mark.skipif(not (SHARED / "adult.csv.gz").is_file(), reason="no adult.csv.gz")
def test_download_adult_full_matches_offline_copy(server):
    """Rebuild the UCI files from the raw rows in adult.csv.gz, serve them
    (the real SHA-256 values are checked) and compare with adult.npz."""
    with gzip.open(SHARED / "adult.csv.gz", "rt", newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    train = [", ".join(r[:15]) for r in rows if r[15] == "train"]
    test = [", ".join(r[:15]) for r in rows if r[15] == "test"]
    remotes = _remote._REMOTE_FILES["adult"]
    for r, body in zip(remotes, _adult_files(train, test)):
        server.serve(r.url, body)
    ds.load_adult()
    with np.load(server.home / "adult.npz") as new, \
            np.load(SHARED / "adult.npz") as ref:
        assert set(new.files) == set(ref.files)
        for key in ref.files:
            assert new[key].dtype == ref[key].dtype, key
            np.testing.assert_array_equal(new[key], ref[key], err_msg=key)


ARFF_TARGETS = {"bank32nh": ("558", "rej", 32), "elevators": ("216", "Goal", 18),
                "ailerons": ("296", "goal", 40)}


def _serve_openml(server, name, X, y, names, target, *, md5=None):
    attrs = "".join(f"@ATTRIBUTE {n} REAL\n" for n in names)
    rows = "".join(",".join(repr(float(v)) for v in (*row, t)) + "\n" for row, t in zip(X, y))
    arff = (f"% Torgo's {name}\n@RELATION {name}\n\n{attrs}"
            f"@ATTRIBUTE {target} REAL\n\n@DATA\n{rows}").encode()
    arff_url = f"https://api.openml.org/data/v1/download/4242/{name}.arff"
    desc = {"data_set_description": {
        "id": ARFF_TARGETS[name][0], "name": name, "format": "ARFF",
        "url": arff_url, "md5_checksum": md5 or hashlib.md5(arff).hexdigest(),
        "default_target_attribute": target}}
    server.serve(_remote_of(name).url, json.dumps(desc).encode())
    server.serve(arff_url, arff)


@pytest.mark.parametrize("name", sorted(ARFF_TARGETS))
def test_download_openml_arff(server, name):
    did, target, d = ARFF_TARGETS[name]
    assert _remote_of(name).url.endswith(f"/data/{did}")
    rng = np.random.default_rng(6)
    X, y = np.round(rng.normal(size=(12, d)), 6), np.round(rng.uniform(size=12), 6)
    names = [f"a{j}" for j in range(d)]
    _serve_openml(server, name, X, y, names, target)
    b = ds.load_dataset(name)
    np.testing.assert_array_equal(b.data, X)
    np.testing.assert_array_equal(b.target, y)
    assert b.feature_names == names and b.target.dtype == np.float64
    assert server.log[0] == f"/api/v1/json/data/{did}"
    _assert_npz_keys(server.home, name, {"X", "y", "feature_names"})
    _assert_cached(server, name, 2)


def test_download_404_is_clear_and_leaves_nothing(server):
    url = _remote_of("magic04").url
    with pytest.raises(OSError) as info:
        ds.load_magic04()
    msg = str(info.value)
    assert isinstance(info.value, _remote.DownloadError)
    assert "404" in msg and "SKONLINE_DATA" in msg and "magic04.npz" in msg
    assert server.base + urlsplit(url).path in msg
    assert _listing(server.home) == []


def test_download_second_file_missing_leaves_nothing(server):
    # a9a.t is missing: the train file was fetched, but nothing may be kept
    rng = np.random.default_rng(7)
    server.serve(_remote_of("a9a", 0).url, _libsvm_bytes(_random_sparse(rng, 5, 123),
                                                        np.ones(5)))
    with pytest.raises(OSError, match=r"a9a\.t .*HTTP 404"):
        ds.load_a9a()
    assert len(server.log) == 2
    assert _listing(server.home) == []


def test_checksum_mismatch_sha256(server, monkeypatch):
    # the pinned (real) SHA-256 of adult.data does not match the toy file
    _serve_adult(server, monkeypatch, *_adult_files(ADULT_ROWS_TRAIN, ADULT_ROWS_TEST),
                 pin=False)
    with pytest.raises(OSError, match="Checksum mismatch.*adult.data.*sha256") as info:
        ds.load_adult()
    assert "SKONLINE_DATA" in str(info.value)
    assert _listing(server.home) == []


def test_checksum_mismatch_openml_md5(server):
    _serve_openml(server, "elevators", np.zeros((2, 18)), np.ones(2),
                  [f"a{j}" for j in range(18)], "Goal", md5="0" * 32)
    with pytest.raises(OSError, match="Checksum mismatch.*elevators.arff.*md5"):
        ds.load_elevators()
    assert _listing(server.home) == []


def test_parse_error_leaves_nothing(server):
    server.serve(_remote_of("magic04").url, b"1,2,3,4,5,6,7,8,9,10,x\n")
    with pytest.raises(ValueError, match="unknown class label 'x'"):
        ds.load_magic04()
    assert _listing(server.home) == []


def test_connection_refused_names_url(tmp_path, monkeypatch):
    with socket.socket() as s:  # find a free loopback port, then close it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("SKONLINE_DATA_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("SKONLINE_ALLOW_UNPINNED", "1")
    with pytest.raises(OSError, match=rf"127\.0\.0\.1:{port}/.*CASP\.csv.*SKONLINE_DATA"):
        ds.load_casp(data_home=tmp_path / "home")
    assert _listing(tmp_path / "home") == []


# ---------------------------------------------------------------------------
# data safety (issue 11)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("arff_url", [
    "file:///etc/passwd",
    "http://api.openml.org/data/v1/download/4242/elevators.arff",
    "ftp://api.openml.org/elevators.arff",
    "https:///no-host.arff",
    "//api.openml.org/data/elevators.arff",
])
def test_openml_arff_address_must_be_https(server, arff_url):
    desc = {"data_set_description": {"id": 216, "name": "elevators", "format": "ARFF",
                                      "url": arff_url, "md5_checksum": "0" * 32,
                                      "default_target_attribute": "Goal"}}
    server.serve(_remote_of("elevators").url, json.dumps(desc).encode())
    with pytest.raises(OSError, match="only https:// addresses") as info:
        ds.load_elevators()
    assert isinstance(info.value, _remote.DownloadError)
    assert len(server.log) == 1  # the description only: the address was never opened
    assert _listing(server.home) == []


def test_unpinned_file_refused_by_default(tmp_path, monkeypatch):
    """A file without a pinned SHA-256 is not downloaded unless the user opts in."""
    monkeypatch.delenv("SKONLINE_ALLOW_UNPINNED", raising=False)
    monkeypatch.setattr(_remote, "_open_url", _no_network)  # refused before any network access
    with pytest.raises(OSError, match="no pinned SHA-256.*SKONLINE_ALLOW_UNPINNED=1") as info:
        ds.load_magic04(data_home=tmp_path / "home")
    assert isinstance(info.value, _remote.DownloadError)
    assert _listing(tmp_path / "home") == []


def test_unpinned_download_with_opt_in_warns_with_its_hash(server):
    rng = np.random.default_rng(1)
    X = _random_sparse(rng, 10, 8, (1.0, 2.0), density=0.5)
    y = rng.choice((-1, 1), size=10)
    body = _libsvm_bytes(X, y)
    server.serve(_remote_of("cod-rna").url, body)
    with pytest.warns(UserWarning, match=hashlib.sha256(body).hexdigest()):
        ds.load_dataset("cod-rna")


def test_pinned_files_and_the_unpinned_list():
    """Which original files have a pinned SHA-256 (the rest need SKONLINE_ALLOW_UNPINNED=1)."""
    pinned = {r.filename for rs in _remote._REMOTE_FILES.values() for r in rs if r.sha256}
    assert pinned == {"adult.data", "adult.test"}


def _crafted(home, **arrays):
    home.mkdir(exist_ok=True)
    _builders._write_npz_atomic(os.path.join(home, "a9a.npz"), arrays)


def _a9a_parts(seed=0):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix((rng.uniform(size=(6, 123)) < 0.1).astype(np.float64))
    y = np.array([1, -1, 1, -1, 1, -1], dtype=np.int64)
    return _builders._sparse_parts("X", X), y


@pytest.mark.parametrize("case, match", [
    ("index_out_of_range", "out of range"),
    ("negative_index", "out of range"),
    ("indptr_decreasing", "non-decreasing"),
    ("indptr_length", "indptr has length"),
    ("nnz", "must be equal"),
    ("float_indices", "must be integers"),
    ("shape", "two non-negative integers"),
    ("y_length", "y has shape"),
    ("y_2d", "y has shape"),
    ("nan_data", "NaN or inf"),
    ("string_y", "expected numbers"),
])
def test_crafted_npz_in_the_data_home_is_rejected(tmp_path, monkeypatch, case, match):
    """Issue 11: a crafted sparse .npz in the data home segfaulted the tour's loader."""
    monkeypatch.setattr(_remote, "_open_url", _no_network)
    parts, y = _a9a_parts()
    if case == "index_out_of_range":
        parts["X_indices"][3] = 10**6
    elif case == "negative_index":
        parts["X_indices"][0] = -5
    elif case == "indptr_decreasing":
        parts["X_indptr"][2] = parts["X_indptr"][4] + 1
    elif case == "indptr_length":
        parts["X_indptr"] = parts["X_indptr"][:-1]
    elif case == "nnz":
        parts["X_indptr"][-1] += 7
    elif case == "float_indices":
        parts["X_indices"] = parts["X_indices"].astype(np.float64)
    elif case == "shape":
        parts["X_shape"] = np.array([6.0, 123.0])
    elif case == "y_length":
        y = y[:-1]
    elif case == "y_2d":
        y = y[:, None]
    elif case == "nan_data":
        parts["X_data"][0] = np.nan
    elif case == "string_y":
        y = y.astype(str)
    home = tmp_path / "home"
    good_test, y_test = _a9a_parts(1)
    test_parts = {k.replace("X_", "X_test_"): v for k, v in good_test.items()}
    _crafted(home, y=y, y_test=y_test, **parts, **test_parts)
    with pytest.raises(ValueError, match=match) as info:
        ds.load_a9a(data_home=home, download_if_missing=False)
    assert "a9a.npz" in str(info.value)

    from skonline.cli import _tour

    assert _tour.load_real("a9a", str(home)) is None  # reported, treated as missing: no crash


def test_valid_crafted_npz_loads(tmp_path):
    parts, y = _a9a_parts()
    good_test, y_test = _a9a_parts(1)
    test_parts = {k.replace("X_", "X_test_"): v for k, v in good_test.items()}
    _crafted(tmp_path / "home", y=y, y_test=y_test, **parts, **test_parts)
    X, yy = ds.load_a9a(data_home=tmp_path / "home", download_if_missing=False, return_X_y=True)
    assert X.shape == (6, 123) and sp.issparse(X)
    np.testing.assert_array_equal(yy, y)
