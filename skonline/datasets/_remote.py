"""Where the original files live, and how they are downloaded.

The URL table :data:`_REMOTE_FILES` is the single place that names the original
public sources. Every download goes through :func:`_download`, which

* rewrites the scheme and host with the environment variable
  ``SKONLINE_DATA_URL`` when it is set (used by the tests to serve files from a
  loopback server, and usable for a private mirror that keeps the original
  paths),
* streams the body into a file while hashing it,
* checks the SHA-256 (or the MD5 that OpenML publishes) when it is known,
* refuses a file without a pinned SHA-256 unless the user opts in with the
  environment variable ``SKONLINE_ALLOW_UNPINNED=1`` (then a warning gives the
  SHA-256 of what was downloaded), see :func:`_check_pinned`,
* accepts only ``https://`` addresses for the ARFF file named by an OpenML
  description (a ``file://`` or ``http://`` address there is refused),
* and turns any network failure into a :class:`DownloadError` that names the
  URL and tells the user how to work offline.

Only :mod:`urllib` from the standard library is used.
"""

import hashlib
import http.client
import json
import os
import socket
import urllib.error
import urllib.request
from typing import NamedTuple
from urllib.parse import urlsplit

from ..exceptions import UnpinnedDownloadWarning
from ..utils._warnings import warn

__all__ = []  # private module

#: Environment variable that replaces ``scheme://host`` of every URL.
URL_ENV = "SKONLINE_DATA_URL"

#: Environment variable naming the data home (see ``get_data_home``).
DATA_ENV = "SKONLINE_DATA"

#: Environment variable that allows downloading files without a pinned SHA-256.
ALLOW_UNPINNED_ENV = "SKONLINE_ALLOW_UNPINNED"

_TIMEOUT = 60  # seconds, per blocking socket operation
_CHUNK = 1 << 16
_USER_AGENT = "skonline-datasets (Python urllib)"


class RemoteFile(NamedTuple):
    """One original file of a dataset.

    Attributes
    ----------
    url : str
        Address of the original file.
    filename : str
        Name under which the raw file is kept while the dataset is converted.
    sha256 : str or None
        SHA-256 of the original file, or None when it is not known.
    format : str
        How the file is read: ``"csv"``, ``"libsvm"`` (plain text),
        ``"libsvm.bz2"`` or ``"openml-arff"`` (``url`` is the OpenML JSON
        description of the dataset; the ARFF address and its MD5 are taken
        from it).
    """

    url: str
    filename: str
    sha256: str | None
    format: str


_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
_LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary"
_OPENML = "https://api.openml.org/api/v1/json/data"


def _uci(path, fmt="csv", sha256=None):
    """A file of the UCI repository, saved under its own name."""
    return RemoteFile(f"{_UCI}/{path}", path.rsplit("/", 1)[-1], sha256, fmt)


def _libsvm(name, fmt="libsvm"):
    """A file of the LIBSVM binary-classification collection, saved under its own name."""
    return RemoteFile(f"{_LIBSVM}/{name}", name, None, fmt)


def _openml(data_id, name):
    """The ARFF of OpenML dataset ``data_id`` (found from its JSON description), saved as ``<name>.arff``."""
    return RemoteFile(f"{_OPENML}/{data_id}", f"{name}.arff", None, "openml-arff")


# The SHA-256 values of the two UCI adult files were not made up: the raw rows
# (adult.csv.gz in the offline copy) were written back in the UCI layout, the
# result has the MD5 sums that the offline README records for the UCI originals
# (5d7c39d7b8804f071cdd1f2a7c460872 and 35238206dfdf7f1fe215bbb874adecdc), and
# these are the SHA-256 values of those byte-identical files. No other original
# file could be hashed offline, so the other entries have sha256=None. OpenML
# publishes an MD5 for each ARFF, which is checked.
_REMOTE_FILES = {
    "magic04": (_uci("magic/magic04.data"),),
    "phishing": (_libsvm("phishing"),),
    "a9a": (_libsvm("a9a"), _libsvm("a9a.t")),
    "bank32nh": (_openml(558, "bank32nh"),),
    "elevators": (_openml(216, "elevators"),),
    "ailerons": (_openml(296, "ailerons"),),
    "casp": (_uci("00265/CASP.csv"),),
    "ijcnn1": tuple(_libsvm(f"ijcnn1.{part}.bz2", "libsvm.bz2") for part in ("tr", "val", "t")),
    "cod-rna": (_libsvm("cod-rna"),),
    "adult": (
        _uci("adult/adult.data", sha256="5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"),
        _uci("adult/adult.test", sha256="a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05"),
    ),
}


class DownloadError(OSError):
    """A dataset file could not be downloaded or failed its checksum."""


def _unpinned_allowed():
    return os.environ.get(ALLOW_UNPINNED_ENV, "").strip().lower() in ("1", "true", "yes")


def _check_pinned(remote, *, name):
    """Refuse, before any network access, a file whose SHA-256 is not pinned in
    :data:`_REMOTE_FILES`, unless ``SKONLINE_ALLOW_UNPINNED=1``.

    Policy: a download is trusted only when its bytes match a hash recorded in
    this package. Twelve of the fourteen original files have none (they could
    not be hashed offline; OpenML's MD5 comes from the same server as the file,
    so it detects corruption, not substitution). Such a file is downloaded only
    when the user opts in; a warning then reports its SHA-256, so it can be
    checked against another source and pinned.
    """
    if remote.sha256 is None and not _unpinned_allowed():
        raise DownloadError(
            f"{remote.filename} of dataset {name!r} has no pinned SHA-256 in "
            "skonline, so its download cannot be verified and is refused. Set the "
            f"environment variable {ALLOW_UNPINNED_ENV}=1 to download it anyway "
            "(a warning then reports its SHA-256). " + _offline_hint(name)
        )


def _check_https(url, *, name, source):
    """Only ``https://`` addresses (with a host) may come from a remote description."""
    parts = urlsplit(str(url))
    if parts.scheme.lower() != "https" or not parts.netloc:
        raise DownloadError(
            f"Refusing the address {url!r} given by {source} for dataset {name!r}: "
            "only https:// addresses are accepted from a remote description. "
            + _offline_hint(name)
        )


class Fetched(NamedTuple):
    """A downloaded raw file: its local path and metadata from the source."""

    remote: RemoteFile
    path: str
    meta: dict


def _resolve_url(url):
    """Replace ``scheme://host`` of ``url`` by ``$SKONLINE_DATA_URL`` if set.

    The path and query are kept, so a mirror only has to keep the original
    paths. The variable may itself hold a path prefix, e.g.
    ``http://127.0.0.1:8000/mirror``.
    """
    base = os.environ.get(URL_ENV, "").strip()
    if not base:
        return url
    parts = urlsplit(url)
    rest = parts.path + (f"?{parts.query}" if parts.query else "")
    return base.rstrip("/") + rest


def _offline_hint(name):
    return (
        f"To work offline, set the environment variable {DATA_ENV} (or pass "
        f"data_home=) to a folder that already holds {name}.npz."
    )


def _open_url(url):
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    return urllib.request.urlopen(request, timeout=_TIMEOUT)


_NETWORK_ERRORS = (
    urllib.error.URLError,
    http.client.HTTPException,
    ConnectionError,
    TimeoutError,
    socket.timeout,
)


def _describe(exc):
    if isinstance(exc, urllib.error.HTTPError):
        exc.close()  # release the connection held by the error response
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return f"{type(exc).__name__}: {exc}"


def _download(url, dest, *, name, sha256=None, md5=None):
    """Stream ``url`` into ``dest`` and check its hashes.

    ``url`` is used as given (callers resolve it first). On any failure,
    ``dest`` is removed and :class:`DownloadError` is raised.
    """
    h_sha, h_md5 = hashlib.sha256(), hashlib.md5()
    try:
        with _open_url(url) as response, open(dest, "wb") as out:
            while True:
                chunk = response.read(_CHUNK)
                if not chunk:
                    break
                h_sha.update(chunk)
                h_md5.update(chunk)
                out.write(chunk)
    except _NETWORK_ERRORS as exc:
        _remove(dest)
        raise DownloadError(
            f"Could not download {url} for dataset {name!r} ({_describe(exc)}). "
            + _offline_hint(name)
        ) from exc
    except BaseException:
        _remove(dest)
        raise
    for algo, expected, got in (
        ("sha256", sha256, h_sha.hexdigest()),
        ("md5", md5, h_md5.hexdigest()),
    ):
        if expected and expected.lower() != got:
            _remove(dest)
            raise DownloadError(
                f"Checksum mismatch for {url} (dataset {name!r}): expected "
                f"{algo} {expected.lower()}, got {got}. The download is corrupt "
                "or the file changed at the source; nothing was saved. "
                + _offline_hint(name)
            )
    if not sha256:
        warn(
            f"{url} (dataset {name!r}) has no pinned SHA-256 and was downloaded "
            f"(opted in with {ALLOW_UNPINNED_ENV}); its SHA-256 is "
            f"{h_sha.hexdigest()}. Check it against another source.",
            UnpinnedDownloadWarning,
        )
    return dest


def _read_json(url, *, name):
    try:
        with _open_url(url) as response:
            payload = response.read()
    except _NETWORK_ERRORS as exc:
        raise DownloadError(
            f"Could not download {url} for dataset {name!r} ({_describe(exc)}). "
            + _offline_hint(name)
        ) from exc
    try:
        return json.loads(payload.decode("utf-8"))
    except ValueError as exc:
        raise DownloadError(
            f"{url} did not return valid JSON (dataset {name!r}). "
            + _offline_hint(name)
        ) from exc


def _remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _fetch_remote(remote, directory, *, name):
    """Download one :class:`RemoteFile` into ``directory``.

    Returns a :class:`Fetched`. For ``"openml-arff"`` entries the OpenML
    description is read first; ``meta`` then holds its ``target`` (the default
    target attribute) and the resolved ``url``.
    """
    dest = os.path.join(directory, remote.filename)
    _check_pinned(remote, name=name)
    if remote.format == "openml-arff":
        desc_url = _resolve_url(remote.url)
        desc = _read_json(desc_url, name=name)
        try:
            info = desc["data_set_description"]
            arff_url = info["url"]
        except (KeyError, TypeError) as exc:
            raise DownloadError(
                f"Unexpected OpenML description at {desc_url} for dataset "
                f"{name!r}: no data_set_description.url. " + _offline_hint(name)
            ) from exc
        _check_https(arff_url, name=name, source=f"the OpenML description {desc_url}")
        url = _resolve_url(arff_url)
        _download(url, dest, name=name, sha256=remote.sha256,
                  md5=info.get("md5_checksum"))
        target = info.get("default_target_attribute")
        return Fetched(remote, dest, {"url": url, "target": target})
    url = _resolve_url(remote.url)
    _download(url, dest, name=name, sha256=remote.sha256)
    return Fetched(remote, dest, {"url": url})
