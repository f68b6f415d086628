"""scikit-learn on pymetal arrays (array_api_dispatch=True): estimators and metrics against NumPy.

SCIPY_ARRAY_API=1 is set by conftest.py before anything imports SciPy.
scikit-learn and SciPy are test extras (pyproject.toml); without them these tests skip.
"""

import numpy as np
import pytest

import pymetal as pm

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is not installed (pip install -e '.[test]')")
from sklearn import metrics  # noqa: E402
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.preprocessing import (  # noqa: E402
    KernelCenterer, LabelEncoder, MaxAbsScaler, MinMaxScaler, Normalizer, StandardScaler,
)
from sklearn.utils.estimator_checks import check_array_api_input  # noqa: E402

F32 = np.dtype(np.float32)


def estimators():
    return [
        StandardScaler(), MinMaxScaler(), MaxAbsScaler(), Normalizer(),
        PCA(n_components=4, svd_solver="full"),
        PCA(n_components=4, svd_solver="randomized", power_iteration_normalizer="QR", random_state=0),
        Ridge(solver="svd", alpha=0.5), LinearDiscriminantAnalysis(), GaussianNB(), KernelCenterer(),
    ]


def est_id(est):
    return type(est).__name__ + ("-" + est.svd_solver if isinstance(est, PCA) else "")


@pytest.fixture(autouse=True)
def dispatch(dev):
    with sklearn.config_context(array_api_dispatch=True):
        yield


def data(est, n=300, d=12):
    """float32 X and y suited to the estimator (a kernel matrix for KernelCenterer)."""
    if isinstance(est, Ridge):
        x, y = make_regression(n_samples=n, n_features=d, noise=0.5, random_state=1)
        return x.astype(F32), y.astype(F32)
    x, y = make_classification(n_samples=n, n_features=d, n_informative=6, n_classes=3, random_state=1)
    x = x.astype(F32)
    if isinstance(est, KernelCenterer):
        x = (x @ x.T).astype(F32)
    return x, y.astype(np.int64)


def close(got, want, scale=1.0):
    """A pymetal result against NumPy's, within float32 tolerance relative to the data's scale."""
    assert isinstance(got, pm.Array), type(got)
    g, w = got.numpy(), np.asarray(want)
    assert g.shape == w.shape
    if w.dtype.kind == "f":
        assert g.dtype == F32, g.dtype
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4 * scale)
    else:
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("est", estimators(), ids=est_id)
def test_estimator_matches_numpy(est):
    x, y = data(est)
    ref = sklearn.base.clone(est)
    with sklearn.config_context(array_api_dispatch=False):
        ref.fit(x, y)
    got = sklearn.base.clone(est).fit(pm.asarray(x), pm.asarray(y))
    scale = float(np.abs(x).max())
    # Fitted array attributes live in pymetal and agree with NumPy's.
    fitted = [k for k, v in vars(ref).items() if isinstance(v, np.ndarray) and k != "classes_"]
    for k in fitted:
        close(getattr(got, k), getattr(ref, k), scale)
    for method in ("transform", "predict", "predict_proba", "decision_function", "inverse_transform"):
        if not hasattr(ref, method):
            continue
        if method == "inverse_transform":
            arg_np, arg_pm = ref.transform(x), got.transform(pm.asarray(x))
        else:
            arg_np, arg_pm = x, pm.asarray(x)
        close(getattr(got, method)(arg_pm), getattr(ref, method)(arg_np), scale)
        fitted.append(method)
    assert fitted  # something was compared


@pytest.mark.parametrize("est", estimators(), ids=est_id)
@pytest.mark.parametrize("check_values", [False, True], ids=["types", "values"])
def test_check_array_api_input(est, check_values):
    check_array_api_input(est_id(est), est, "pymetal", dtype_name="float32", check_values=check_values)


def test_label_encoder(dev, rng):
    y = rng.choice(np.array([7, -2, 40, 3], np.int64), size=257)
    le = LabelEncoder().fit(pm.asarray(y))
    ref = LabelEncoder().fit(y)
    close(le.classes_, ref.classes_)
    codes = le.transform(pm.asarray(y))
    close(codes, ref.transform(y))
    close(le.fit_transform(pm.asarray(y)), ref.fit_transform(y))
    close(le.inverse_transform(codes), y)
    yf = y.astype(F32) / 2
    close(LabelEncoder().fit_transform(pm.asarray(yf)), LabelEncoder().fit_transform(yf))
    with pytest.raises(ValueError, match="unseen"):
        le.transform(pm.asarray(np.array([5], np.int64)))


def test_metrics(dev, rng):
    n = 301
    y = rng.integers(0, 4, n).astype(np.int64)
    yp = np.where(rng.random(n) < 0.7, y, rng.integers(0, 4, n)).astype(np.int64)
    a = rng.standard_normal(n).astype(F32)
    b = (a + 0.3 * rng.standard_normal(n)).astype(F32)
    for f, args in [(metrics.accuracy_score, (y, yp)), (metrics.r2_score, (a, b)),
                    (metrics.mean_squared_error, (a, b))]:
        got = f(*(pm.asarray(v) for v in args))
        with sklearn.config_context(array_api_dispatch=False):
            want = f(*args)
        assert isinstance(got, float)
        assert got == pytest.approx(want, rel=1e-5, abs=1e-6), f.__name__
    close(metrics.confusion_matrix(pm.asarray(y), pm.asarray(yp)), metrics.confusion_matrix(y, yp))
    x = rng.standard_normal((67, 9)).astype(F32)
    z = rng.standard_normal((5, 9)).astype(F32)
    for metric in ("euclidean", "cosine"):
        for other in (None, z):
            got = metrics.pairwise_distances(pm.asarray(x), None if other is None else pm.asarray(other),
                                             metric=metric)
            with sklearn.config_context(array_api_dispatch=False):
                want = metrics.pairwise_distances(x, other, metric=metric)
            close(got, want.astype(F32), 10.0)
