"""scikit-learn on pymetal arrays: PCA then Ridge regression, compared with the same fit on NumPy.

With array_api_dispatch=True scikit-learn computes through the pymetal namespace
(the array's __array_namespace__): the fitted attributes and the predictions are
pymetal arrays, computed by pymetal's kernels (the SVDs by pymetal.linalg on the
host, over the same shared memory).
"""
import os

# SciPy reads this when it is first imported; scikit-learn refuses array dispatch without it.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np  # noqa: E402
import pymetal as pm  # noqa: E402


def main() -> str:
    try:
        import sklearn
        from sklearn.decomposition import PCA
        from sklearn.linear_model import Ridge
        from sklearn.pipeline import make_pipeline
    except ImportError as e:
        raise ImportError("this example needs scikit-learn: pip install -e '.[test]'") from e

    rng = np.random.default_rng(0)
    n, d, k = 4000, 64, 12
    latent = rng.standard_normal((n, k)).astype(np.float32)
    X = (latent @ rng.standard_normal((k, d)) + 0.05 * rng.standard_normal((n, d))).astype(np.float32)
    y = (latent @ rng.standard_normal(k) + 0.1 * rng.standard_normal(n)).astype(np.float32)

    lines = []
    worst = 0.0
    for solver in ("full", "randomized"):
        def model():
            return make_pipeline(PCA(n_components=k, svd_solver=solver, power_iteration_normalizer="QR", random_state=0), Ridge(alpha=1.0, solver="svd"))

        ref = model().fit(X, y)
        pred_np = ref.predict(X)
        with sklearn.config_context(array_api_dispatch=True):
            fitted = model().fit(pm.asarray(X), pm.asarray(y))
            pred_pm = fitted.predict(pm.asarray(X))
            r2 = fitted.score(pm.asarray(X), pm.asarray(y))
        assert isinstance(pred_pm, pm.Array) and pred_pm.dtype == np.float32
        coef = fitted[-1].coef_
        assert isinstance(coef, pm.Array)
        diff = float(np.abs(pred_pm.numpy() - pred_np).max() / np.abs(pred_np).max())
        var_diff = float(np.abs(fitted[0].explained_variance_ratio_.numpy() - ref[0].explained_variance_ratio_).max())
        worst = max(worst, diff, var_diff)
        lines.append(f"  PCA({solver}) + Ridge: R^2 {r2:.4f} (NumPy {ref.score(X, y):.4f}), "
                     f"predictions differ by {diff:.1e} of their range, explained variance by {var_diff:.1e}")
    print("\n".join(lines))
    assert worst < 1e-3, "pymetal and NumPy disagree beyond float32 tolerance"
    return f"sklearn_pca_ridge: PCA + Ridge on pymetal arrays agree with NumPy (max relative difference {worst:.1e})"


if __name__ == "__main__":
    print(main())
