"""KCCA and linear CCA with scikit-learn conventions (options in the constructor, ``fit``
returns ``self``, results end in ``_``). Both call the analysis of the ``kcca`` tool
(tools/kcca): the same options give the same numbers as ``kcca --json``."""
from __future__ import annotations

import json
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

from . import _core
from ._checks import as_float_array, check_float, check_int

__all__ = ["KCCA", "CCA"]


def _views(U: Any, M: Any) -> Tuple[np.ndarray, np.ndarray]:
    U = as_float_array(U, "U", 2)
    M = as_float_array(M, "M", 2)
    if U.shape[0] != M.shape[0]:
        raise ValueError(
            f"U has {U.shape[0]} rows, M has {M.shape[0]} "
            "(the views must have the same number of rows)")
    return U, M


class KCCA:
    """Regularised kernel CCA of two views (``kcca`` tool, docs/kcca.md).

    Parameters
    ----------
    kernel : "rbf" | "linear" | "poly" | "laplacian"
    sigma : bandwidth (> 0) of rbf/laplacian, or "auto" (median heuristic per view, seeded)
    gamma : regularisation of both views (> 0); ``gamma_u``/``gamma_m`` set them apart
    center : centre both Grams in feature space
    n_components : canonical pairs to compute (>= 1)
    method : "auto" | "exact" | "iterative" | "lowrank"; "auto" (default) runs the iterative
        solver for few components (n >= 200, n_components <= n / 10), else the exact one;
        ``solver_`` names the solver that ran
    rank : rank of the low-rank factors (method "lowrank"; default 300)
    degree, coef0 : polynomial kernel (k = (<x, y> + coef0)^degree)
    seed : seed of the bandwidth subsample and the Nyström landmarks
    coefficients : compute ``alpha_``/``beta_`` (needed by ``transform``). False skips the
        singular vectors like the ``kcca`` tool does (about 2x faster for all correlations) and
        then gives bit-identical correlations to ``kcca --json``; with True they agree to
        rounding (~1e-16), the SVD taking another path.

    Attributes after ``fit``: ``correlations_`` (n_components, descending), ``alpha_`` and
    ``beta_`` (n x n_components dual coefficients; the canonical variate of view u is
    ``K_u alpha``), ``status_`` ("success", "not-converged", "numerical-issue"), ``sigma_u_``,
    ``sigma_m_``, ``result_`` (the tool's whole JSON document as a dict).

    Inputs are float32 or float64 arrays in C or F order; the solver keeps its own column-major
    float64 copy (O(n d), small beside the O(n^2 d) Gram). The GIL is released during ``fit``.
    """

    def __init__(self, kernel: str = "rbf", sigma: Union[str, float] = "auto",
                 gamma: float = 0.1, center: bool = True, n_components: int = 3,
                 method: str = "auto", rank: Optional[int] = None, *,
                 gamma_u: Optional[float] = None, gamma_m: Optional[float] = None,
                 degree: int = 2, coef0: float = 1.0, seed: int = 0,
                 coefficients: bool = True) -> None:
        self.kernel = kernel
        self.sigma = sigma
        self.gamma = gamma
        self.center = center
        self.n_components = n_components
        self.method = method
        self.rank = rank
        self.gamma_u = gamma_u
        self.gamma_m = gamma_m
        self.degree = degree
        self.coef0 = coef0
        self.seed = seed
        self.coefficients = coefficients

    def _sigma_text(self) -> str:
        if isinstance(self.sigma, str):
            return self.sigma
        return repr(check_float(self.sigma, "sigma"))

    def fit(self, U: Any, M: Any) -> "KCCA":
        """Fits KCCA to the rows of U (n x d_u) and M (n x d_m); returns self.

        Raises ``ValueError`` for bad options or data (the ``kcca`` tool's messages, naming
        its flags) and ``TypeError`` for wrong types.
        """
        U, M = _views(U, M)
        gamma = check_float(self.gamma, "gamma")
        gu = gamma if self.gamma_u is None else check_float(self.gamma_u, "gamma_u")
        gm = gamma if self.gamma_m is None else check_float(self.gamma_m, "gamma_m")
        if not isinstance(self.center, (bool, np.bool_)):
            raise TypeError(f"center ({self.center!r}) must be True or False")
        r = _core.kcca_analysis(
            U, M, cca=False, kernel=str(self.kernel), sigma=self._sigma_text(),
            degree=check_int(self.degree, "degree"), coef0=check_float(self.coef0, "coef0"),
            gamma_u=gu, gamma_m=gm, center=bool(self.center),
            components=check_int(self.n_components, "n_components"), method=str(self.method),
            rank=300 if self.rank is None else check_int(self.rank, "rank"), pca=0, ridge=0.0,
            bootstrap=0, seed=check_int(self.seed, "seed"), coefficients=bool(self.coefficients))
        doc: Dict[str, Any] = json.loads(r["json"])
        self.result_ = doc
        self.correlations_ = np.asarray(doc["correlations"], dtype=np.float64)
        self.alpha_ = np.asarray(r["alpha"])
        self.beta_ = np.asarray(r["beta"])
        self.status_ = doc["status"]
        self.solver_ = doc["solver"]
        self.sigma_u_ = doc.get("sigma_u")
        self.sigma_m_ = doc.get("sigma_m")
        self._kernel_name = doc["options"]["kernel"]
        self.U_fit_ = U
        self.M_fit_ = M
        return self

    def transform(self, U: Any, M: Any) -> Tuple[np.ndarray, np.ndarray]:
        """Canonical variates of new rows: ``K(U, U_fit) alpha`` and ``K(M, M_fit) beta``,
        with the kernels centred by the training Grams' statistics when ``center`` (needs
        ``fit``; O(m n d + n^2 d)). Returns two (m, n_components) arrays."""
        if not hasattr(self, "alpha_"):
            raise RuntimeError("KCCA.transform(): call fit() first")
        if self.alpha_.shape[1] == 0:
            raise RuntimeError("KCCA.transform(): fitted with coefficients=False")
        U, M = _views(U, M)
        out = []
        for X, train, coef, s in ((U, self.U_fit_, self.alpha_, self.sigma_u_),
                                  (M, self.M_fit_, self.beta_, self.sigma_m_)):
            out.append(_core.kernel_variates(
                X, train, self._kernel_name, 1.0 if s is None else float(s), int(self.degree),
                float(self.coef0), bool(self.center), coef))
        return out[0], out[1]

    def fit_transform(self, U: Any, M: Any) -> Tuple[np.ndarray, np.ndarray]:
        """``fit(U, M).transform(U, M)``."""
        return self.fit(U, M).transform(U, M)


class CCA:
    """Linear CCA, optionally after PCA of each view (``kcca --cca``, docs/kcca.md).

    Parameters
    ----------
    n_components : correlations to report (>= 1, at most min(p, q))
    pca : principal components per view first (None = no PCA)
    ridge : ridge added to both covariances (>= 0)
    weights : compute the canonical weights (needed by ``transform``). False skips them like the
        ``kcca --cca`` tool does and then gives bit-identical correlations to ``kcca --json``;
        with True the SVDs take another path and the correlations agree to rounding (~1e-15).

    Attributes after ``fit``: ``correlations_``, ``null_level_`` (Wachter edge: sigma_1 of
    independent views of this size), ``p_``, ``q_`` (dimensions used), ``warning_``,
    ``bartlett_`` (``{"nonzero", "p_value_all_zero"}`` when ridge is 0 and n > p + q + 2, else
    None), ``explained_variance_u_``/``_m_`` (with PCA), ``result_`` (the tool's JSON),
    ``weights_u_`` (d_u, n_components) and ``weights_m_`` (d_m, n_components): the canonical
    weights, normalised as R's ``cancor`` (``w.T (Uc.T Uc + ridge I) w = 1``, Uc the centred
    training view; within the PCA subspace with ``pca``), ``mean_u_``/``mean_m_`` (the
    training column means). ``transform`` gives the canonical variates ``(U - mean_u_) @
    weights_u_``; without a ridge the pair-i variates of the training rows have correlation
    ``correlations_[i]``.
    """

    def __init__(self, n_components: int = 1, pca: Optional[int] = None,
                 ridge: float = 0.0, *, weights: bool = True) -> None:
        self.n_components = n_components
        self.pca = pca
        self.ridge = ridge
        self.weights = weights

    def fit(self, U: Any, M: Any) -> "CCA":
        """Fits linear CCA to the rows of U and M; returns self."""
        U, M = _views(U, M)
        r = _core.kcca_analysis(
            U, M, cca=True, kernel="rbf", sigma="auto", degree=2, coef0=1.0, gamma_u=0.1,
            gamma_m=0.1, center=True, components=check_int(self.n_components, "n_components"),
            method="exact", rank=300, pca=0 if self.pca is None else check_int(self.pca, "pca"),
            ridge=check_float(self.ridge, "ridge"), bootstrap=0, seed=0,
            coefficients=bool(self.weights))
        doc: Dict[str, Any] = json.loads(r["json"])
        self.result_ = doc
        self.weights_u_ = np.asarray(r["weights_u"])
        self.weights_m_ = np.asarray(r["weights_m"])
        self.mean_u_ = U.mean(axis=0)
        self.mean_m_ = M.mean(axis=0)
        self.correlations_ = np.asarray(doc["correlations"], dtype=np.float64)
        self.null_level_ = float(doc["null_level"])
        self.p_ = int(doc["p"])
        self.q_ = int(doc["q"])
        self.warning_ = doc["warning"]
        self.bartlett_ = doc.get("bartlett")
        self.explained_variance_u_ = np.asarray(doc.get("explained_variance_u", []))
        self.explained_variance_m_ = np.asarray(doc.get("explained_variance_m", []))
        return self

    def transform(self, U: Any, M: Any) -> Tuple[np.ndarray, np.ndarray]:
        """Canonical variates of rows of both views: ``(U - mean_u_) @ weights_u_`` and
        ``(M - mean_m_) @ weights_m_`` (needs ``fit``). Returns two (m, n_components) arrays."""
        if not hasattr(self, "weights_u_"):
            raise RuntimeError("CCA.transform(): call fit() first")
        if self.weights_u_.size == 0:
            raise RuntimeError("CCA.transform(): fitted with weights=False")
        U, M = _views(U, M)
        for X, w, name in ((U, self.weights_u_, "U"), (M, self.weights_m_, "M")):
            if X.shape[1] != w.shape[0]:
                raise ValueError(f"CCA.transform(): {name} has {X.shape[1]} columns, the fitted "
                                 f"view had {w.shape[0]}")
        return (U - self.mean_u_) @ self.weights_u_, (M - self.mean_m_) @ self.weights_m_

    def fit_transform(self, U: Any, M: Any) -> Tuple[np.ndarray, np.ndarray]:
        """``fit(U, M).transform(U, M)``."""
        return self.fit(U, M).transform(U, M)
