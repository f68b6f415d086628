"""scikit-learn calls that make or take float64 arrays (array_api_dispatch=True), which pymetal
refused before issue 23 and computes on the host under the "host" float64 policy
(pymetal/arrays/float64.py): classification metrics with sample weights, LogisticRegression with
class_weight, stratified train_test_split, Ridge with sample weights. NumPy's scikit-learn is the
oracle. SCIPY_ARRAY_API=1 is set by conftest.py."""

import numpy as np
import pytest

import pymetal as pm

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is not installed (pip install -e '.[test]')")
from sklearn import metrics  # noqa: E402
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.linear_model import LogisticRegression, Ridge  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402


@pytest.fixture(autouse=True)
def dispatch(dev):
    old = pm.get_float64_policy()
    pm.set_float64_policy("host")
    with sklearn.config_context(array_api_dispatch=True):
        yield
    pm.set_float64_policy(old)


def numpy_result(f, *args, **kwargs):
    with sklearn.config_context(array_api_dispatch=False):
        return f(*args, **kwargs)


@pytest.fixture
def labels(rng):
    n = 211
    y = rng.integers(0, 3, n).astype(np.int64)
    yp = np.where(rng.random(n) < 0.7, y, rng.integers(0, 3, n)).astype(np.int64)
    w = rng.random(n)  # float64 sample weights, as NumPy code makes them
    return y, yp, w


@pytest.mark.parametrize("name,kwargs", [
    ("accuracy_score", {}), ("f1_score", {"average": "macro"}), ("f1_score", {"average": "weighted"}),
    ("precision_score", {"average": "micro"}), ("recall_score", {"average": None}),
    ("balanced_accuracy_score", {}), ("zero_one_loss", {}), ("jaccard_score", {"average": "macro"}),
])
def test_classification_metrics_with_float64_weights(labels, name, kwargs):
    y, yp, w = labels
    f = getattr(metrics, name)
    got = f(pm.asarray(y), pm.asarray(yp), sample_weight=pm.asarray(w), **kwargs)
    want = numpy_result(f, y, yp, sample_weight=w, **kwargs)
    np.testing.assert_allclose(np.asarray(got.numpy() if isinstance(got, pm.Array) else got), want, rtol=1e-5)


def test_confusion_matrix_float64_weights(labels):
    y, yp, w = labels
    got = metrics.confusion_matrix(pm.asarray(y), pm.asarray(yp), sample_weight=pm.asarray(w))
    np.testing.assert_allclose(got.numpy() if isinstance(got, pm.Array) else got,
                               numpy_result(metrics.confusion_matrix, y, yp, sample_weight=w), rtol=1e-6)


def test_logistic_regression_class_weight():
    x, y = make_classification(n_samples=240, n_features=8, n_informative=4, n_classes=3, random_state=0)
    x = x.astype(np.float32)
    for cw in ("balanced", {0: 1.0, 1: 2.0, 2: 0.5}):
        got = LogisticRegression(class_weight=cw, max_iter=300).fit(pm.asarray(x), pm.asarray(y))
        ref = numpy_result(LogisticRegression(class_weight=cw, max_iter=300).fit, x, y)
        assert isinstance(got.coef_, pm.Array)
        np.testing.assert_allclose(got.coef_.numpy(), ref.coef_, rtol=1e-3, atol=1e-3)
        np.testing.assert_array_equal(got.predict(pm.asarray(x)).numpy(), ref.predict(x))


def test_stratified_train_test_split():
    x, y = make_classification(n_samples=200, n_features=5, n_classes=2, weights=[0.8], random_state=3)
    X, Y = pm.asarray(x), pm.asarray(y)  # float64 data under the host policy
    xa, xb, ya, yb = train_test_split(X, Y, stratify=Y, test_size=0.25, random_state=0)
    ra, rb, sa, sb = numpy_result(train_test_split, x, y, stratify=y, test_size=0.25, random_state=0)
    for got, want in ((xa, ra), (xb, rb), (ya, sa), (yb, sb)):
        assert isinstance(got, pm.Array) and got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


def test_ridge_float64_sample_weight(rng):
    x, y = make_regression(n_samples=150, n_features=6, noise=0.5, random_state=1)
    w = rng.random(150)
    got = Ridge(alpha=1.0).fit(pm.asarray(x), pm.asarray(y), sample_weight=pm.asarray(w))
    ref = numpy_result(Ridge(alpha=1.0).fit, x, y, sample_weight=w)
    # scikit-learn computes in the namespace's widest float the device lists (float32)
    np.testing.assert_allclose(got.coef_.numpy(), ref.coef_, rtol=1e-3, atol=1e-3 * np.abs(ref.coef_).max())
    np.testing.assert_allclose(got.predict(pm.asarray(x)).numpy(), ref.predict(x), rtol=1e-3,
                               atol=1e-3 * np.abs(y).max())
