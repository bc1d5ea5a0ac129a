"""skops.io: a safer format than pickle for models from others (issue 20).

``skops.io.load`` rebuilds only the types it is told to trust. For every estimator with
``partial_fit``: the types a saved skonline model asks to trust are skonline's own classes and
nothing else (no functions, no arbitrary callables), and a model loaded mid-stream continues
exactly as if it had never been saved.
"""

import pytest

sio = pytest.importorskip("skops.io")

from _ecosystem_helpers import (  # noqa: E402
    assert_same_responses,
    assert_same_state,
    estimator_params,
    estimator_stream,
    learn,
    seeded,
    sub,
)

FIRST = slice(0, 25)
REST = slice(25, None)


@pytest.mark.parametrize("est", estimator_params())
def test_skops_dump_load_mid_stream(est, tmp_path):
    X, y, first = estimator_stream(est, n_samples=60)
    a = seeded(est)
    a.partial_fit(X[FIRST], sub(y, FIRST), **first)
    path = tmp_path / "model.skops"
    sio.dump(a, path)
    untrusted = sio.get_untrusted_types(file=path)
    assert untrusted and all(t.startswith("skonline.") for t in untrusted), untrusted
    with pytest.raises(sio.exceptions.UntrustedTypesFoundException):  # nothing loads unless trusted
        sio.load(path)
    b = sio.load(path, trusted=untrusted)
    learn(a, X[REST], sub(y, REST))
    learn(b, X[REST], sub(y, REST))
    assert_same_state(a, b)
    assert_same_responses(a, b, X[:10])
