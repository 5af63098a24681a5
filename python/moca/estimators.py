"""KCCA and linear CCA as scikit-learn estimators.

Where scikit-learn (1.2 or later) is importable both classes derive from its ``BaseEstimator``
(with ``TransformerMixin`` and ``MultiOutputMixin``) and validate their data with its
``check_array``; without it (the package needs only numpy) they implement the same contract
and the same validation rules themselves. Every option is a keyword of ``__init__``, stored
unchanged; ``get_params`` / ``set_params`` (nested ``a__b`` keys too) make
``sklearn.base.clone``, ``GridSearchCV`` and pipelines work; ``fit(U, M)`` validates, returns
``self`` and sets attributes ending in ``_``; ``transform`` maps new rows of either view;
``score`` is the held-out canonical correlation. The two views take scikit-learn's ``(X, y)``
places, as in ``sklearn.cross_decomposition``. Tags: ``__sklearn_tags__`` (scikit-learn >= 1.6)
and ``_more_tags`` (1.2 - 1.5); ``expected_failed_checks`` names the estimator checks that do
not apply, with their reasons. Both call the analysis of the ``kcca`` tool
(``kcca::kcca_analysis``, src/moca/kcca/analysis.hpp): the same options give the same numbers
as ``kcca --json``."""
from __future__ import annotations

import inspect
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from . import _core
from ._checks import check_float, check_int, check_seed

__all__ = ["KCCA", "CCA", "NotFittedError", "expected_failed_checks"]

try:  # scikit-learn's classes when it is installed (optional: the package needs only numpy)
    from sklearn.base import BaseEstimator, MultiOutputMixin, TransformerMixin
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_array as _sk_check_array
    _HAVE_SKLEARN = True
except ImportError:  # pragma: no cover - exercised without scikit-learn only
    _HAVE_SKLEARN = False

    class NotFittedError(ValueError, AttributeError):  # type: ignore[no-redef]
        """An estimator's method was called before ``fit``."""

try:  # scikit-learn >= 1.6: feature names and counts without re-validating the array
    from sklearn.utils.validation import validate_data as _sk_validate_data
except ImportError:  # scikit-learn 1.2 - 1.5 (BaseEstimator methods) or none
    _sk_validate_data = None

# Accepted float types; anything else real (integers, bools, float16, objects holding numbers) is
# converted to float64, as scikit-learn's check_array(dtype=[float64, float32]) does.
_DTYPES = (np.float64, np.float32)
# The fewest rows a fit takes (the solvers centre each view and need n - 1 >= 2).
_MIN_ROWS = 3


def _is_sparse(a: Any) -> bool:
    return type(a).__module__.startswith("scipy.sparse")


def _numpy_check_array(a: Any, est: str, ensure_2d: bool, min_samples: int) -> np.ndarray:
    """scikit-learn's ``check_array(a, dtype=[float64, float32], ensure_2d=ensure_2d,
    ensure_min_samples=min_samples, estimator=est)`` in numpy, for when scikit-learn is not
    installed: the same rules, error types and messages."""
    if _is_sparse(a):
        raise TypeError("Sparse data was passed, but dense data is required. Use '.toarray()' "
                        "to convert to a dense numpy array.")
    arr = np.asarray(a)  # ragged nested lists: numpy's ValueError
    if arr.dtype.kind == "c":
        raise ValueError(f"Complex data not supported\n{arr}\n")
    if arr.dtype.type not in _DTYPES:
        arr = arr.astype(np.float64)  # strings, objects: numpy's ValueError / TypeError
    reshape = ("Reshape your data either using array.reshape(-1, 1) if your data has a single "
               "feature or array.reshape(1, -1) if it contains a single sample.")
    if ensure_2d and arr.ndim == 0:
        raise ValueError(f"Expected 2D array, got scalar array instead:\narray={arr}.\n{reshape}")
    if ensure_2d and arr.ndim == 1:
        raise ValueError(f"Expected 2D array, got 1D array instead:\narray={arr}.\n{reshape}")
    if arr.ndim >= 3:
        raise ValueError(f"Found array with dim {arr.ndim}, while dim <= 2 is required by {est}.")
    if arr.ndim == 0:
        raise TypeError(f"Singleton array {arr!r} cannot be considered a valid collection.")
    if np.isnan(arr).any():
        raise ValueError("Input contains NaN.")
    if np.isinf(arr).any():
        raise ValueError(f"Input contains infinity or a value too large for {arr.dtype!r}.")
    if arr.shape[0] < min_samples:
        raise ValueError(f"Found array with {arr.shape[0]} sample(s) (shape={arr.shape}) while a "
                         f"minimum of {min_samples} is required by {est}.")
    if arr.ndim == 2 and arr.shape[1] < 1:
        raise ValueError(f"Found array with 0 feature(s) (shape={arr.shape}) while a minimum of "
                         f"1 is required by {est}.")
    return arr


def _check_view(est: Any, a: Any, name: str, min_samples: int = 1) -> np.ndarray:
    """One view as a 2-d float32/float64 array: U must be 2-d, M may be 1-d (one column).
    scikit-learn's ``check_array`` when it is installed, else the same rules in numpy; either
    way the message starts with the argument's name (``"U: Input contains NaN."``). ValueError
    for NaN/Inf, complex data, a wrong rank, too few rows, no columns, strings; TypeError for
    sparse matrices and objects that are not numbers."""
    try:
        if _HAVE_SKLEARN:
            arr = _sk_check_array(a, dtype=list(_DTYPES), ensure_2d=(name == "U"),
                                  ensure_min_samples=min_samples, estimator=est, input_name="")
        else:
            arr = _numpy_check_array(a, type(est).__name__, name == "U", min_samples)
    except (ValueError, TypeError) as e:
        if type(e) not in (ValueError, TypeError):
            raise
        raise type(e)(f"{name}: {e}") from None
    return arr if arr.ndim == 2 else arr.reshape(-1, 1)


def _check_features(est: Any, raw: Any, U: np.ndarray, reset: bool) -> None:
    """Records (``reset``) or checks the columns of view U: ``n_features_in_`` and, for data
    frames with string column names, ``feature_names_in_`` (scikit-learn's bookkeeping when it
    is installed, the count alone otherwise)."""
    try:
        if _sk_validate_data is not None:
            _sk_validate_data(est, raw, skip_check_array=True, reset=reset)
            return
        if _HAVE_SKLEARN:
            est._check_feature_names(raw, reset=reset)
            est._check_n_features(U, reset=reset)
            return
        if reset:
            est.n_features_in_ = U.shape[1]
        elif U.shape[1] != est.n_features_in_:  # scikit-learn's words (X: the first argument)
            raise ValueError(f"X has {U.shape[1]} features, but {type(est).__name__} is "
                             f"expecting {est.n_features_in_} features as input.")
    except ValueError as e:
        if type(e) is not ValueError:
            raise
        raise ValueError(f"U: {e}") from None


def _second_view(est: Any, method: str, y: Any, M: Any) -> Any:
    """The second view, given positionally, as ``y=`` (scikit-learn's name) or ``M=``."""
    if y is not None and M is not None:
        raise ValueError(f"{type(est).__name__}.{method}(): give the second view as M or y, "
                         "not both")
    return M if y is None else y


def _fit_views(est: Any, U: Any, M: Any) -> Tuple[np.ndarray, np.ndarray]:
    """The views of ``fit``: checked, the same number (>= 3) of rows; records
    ``n_features_in_`` (and ``feature_names_in_``) of U and ``n_features_m_`` (columns of M)."""
    if M is None:
        raise ValueError(f"M: {type(est).__name__} requires y to be passed, but the target y is "
                         "None (fit takes two views, U and M)")
    Uc = _check_view(est, U, "U", _MIN_ROWS)
    Mc = _check_view(est, M, "M")
    if Uc.shape[0] != Mc.shape[0]:
        raise ValueError(
            f"U has {Uc.shape[0]} rows, M has {Mc.shape[0]} "
            "(the views must have the same number of rows)")
    _check_features(est, U, Uc, reset=True)
    est.n_features_m_ = Mc.shape[1]
    return Uc, Mc


def _new_view(est: Any, X: Any, name: str) -> np.ndarray:
    """New rows of one view for ``transform``: checked, with the fitted number of columns."""
    Xc = _check_view(est, X, name)
    if name == "U":
        _check_features(est, X, Xc, reset=False)
    elif Xc.shape[1] != est.n_features_m_:  # as for U, in scikit-learn's words (y: the second)
        raise ValueError(f"M: y has {Xc.shape[1]} features, but {type(est).__name__} is "
                         f"expecting {est.n_features_m_} features as input.")
    return Xc


def _analysis(U: np.ndarray, M: np.ndarray, **options: Any) -> Any:
    """``kcca::kcca_analysis`` of the views with the given keywords, the rows of
    ``kcca::AnalysisOptions``' schema (the others keep the tool's defaults)."""
    return _core.kcca_analysis(_core.KccaAnalysisOptions.from_keywords(options), U, M)


def _variate_correlations(Zu: np.ndarray, Zm: np.ndarray) -> np.ndarray:
    """Pearson correlation of each column pair (0 where a column is constant)."""
    a = Zu - Zu.mean(axis=0)
    b = Zm - Zm.mean(axis=0)
    den = np.sqrt((a * a).sum(axis=0) * (b * b).sum(axis=0))
    num = (a * b).sum(axis=0)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


class _ParamsContract:
    """scikit-learn's parameter contract where scikit-learn is not installed (it provides
    these through BaseEstimator otherwise): parameters from the ``__init__`` signature,
    get/set_params, repr."""

    @classmethod
    def _get_param_names(cls) -> List[str]:
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor's parameters as stored; with ``deep`` also ``name__key`` entries of
        parameters that are estimators themselves."""
        out: Dict[str, Any] = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{k}", v) for k, v in value.get_params().items())
            out[name] = value
        return out

    def set_params(self, **params: Any) -> Any:
        """Sets parameters (``name`` or nested ``name__key``) without validating them (``fit``
        does); returns self. ValueError for a name the constructor does not take."""
        valid = self._get_param_names()
        nested: Dict[str, Dict[str, Any]] = {}
        for key, value in params.items():
            name, sep, sub = key.partition("__")
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for estimator {self!r}. Valid "
                                 f"parameters are: {valid!r}.")
            if sep:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
        for name, sub_params in nested.items():
            getattr(self, name).set_params(**sub_params)
        return self

    def __repr__(self) -> str:
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__)
                    .parameters.values()}
        changed = []
        for name in self._get_param_names():
            value = getattr(self, name, None)
            default = defaults.get(name, inspect.Parameter.empty)
            same = value is default
            if not same:
                try:
                    same = bool(value == default)
                except Exception:  # arrays and the like
                    same = False
            if not same:
                changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"


# scikit-learn's base classes when it is installed (in the order its check_mixin_order asks:
# mixins first), else the contract above.
_BASES: Tuple[type, ...] = ((TransformerMixin, MultiOutputMixin, BaseEstimator) if _HAVE_SKLEARN
                            else (_ParamsContract,))

# scikit-learn's TransformerMixin would wrap transform/fit_transform for set_output (pandas
# output), a wrapper that needs the first argument, which transform(M=M) does not give, and
# that would replace only the first of the pair fit_transform returns: not wrapped.
_NO_OUTPUT_WRAP: Dict[str, Any] = {"auto_wrap_output_keys": None} if _HAVE_SKLEARN else {}

# The reasons of the check_estimator checks that fail by design (docs/python.md, "Estimators").
_PAIR_REASON = (
    "fit_transform(U, M) returns the pair (Zu, Zm), as sklearn.cross_decomposition does; "
    "scikit-learn runs the two-view form of this check only for the estimators it names in "
    "CROSS_DECOMPOSITION (its CCA, PLSCanonical, PLSRegression, PLSSVD), and in that form it "
    "passes (tests/python/test_sklearn.py)")
_AUTO_SIGMA_REASON = (
    "sigma='auto' (the median heuristic) is undefined when at least half the rows of a view "
    "coincide, as for this check's integer y: fit raises 'median pairwise distance is 0 ...; "
    "set sigma explicitly'; with a numeric sigma the check passes")


def expected_failed_checks(estimator: Any) -> Dict[str, str]:
    """The ``sklearn.utils.estimator_checks`` checks that ``estimator`` (a moca.KCCA or
    moca.CCA) fails by design, each with its reason: ``check_estimator(est,
    expected_failed_checks=expected_failed_checks(est))`` (scikit-learn >= 1.6) or
    ``parametrize_with_checks(ests, expected_failed_checks=expected_failed_checks)``; for
    scikit-learn 1.2 - 1.5 the same dict is the estimator's ``_xfail_checks`` tag."""
    return dict(estimator._expected_failed_checks())


class _TwoViewEstimator(*_BASES, **_NO_OUTPUT_WRAP):  # type: ignore[misc]
    """scikit-learn's estimator contract for the two-view estimators (tags, validation,
    transform of either view, score). The second view takes scikit-learn's ``y`` place: it may
    be passed positionally, as ``M=`` (moca's name) or as ``y=`` (scikit-learn's)."""

    def _expected_failed_checks(self) -> Dict[str, str]:
        return {}

    def _more_tags(self) -> Dict[str, Any]:
        # scikit-learn 1.2 - 1.5's estimator tags: M is the "y" of fit and score, multi-column
        return {"requires_y": True, "multioutput": True, "X_types": ["2darray"],
                "preserves_dtype": [np.float64], "_xfail_checks": self._expected_failed_checks()}

    def __sklearn_tags__(self) -> Any:
        # scikit-learn >= 1.6's tags (the same as _more_tags; MultiOutputMixin sets multi_output)
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    def _check_fitted(self, method: str) -> None:
        if not hasattr(self, "correlations_"):
            raise NotFittedError(f"{type(self).__name__}.{method}(): this instance is not "
                                 "fitted yet; call fit() first")

    def _variates(self, X: np.ndarray, view: str) -> np.ndarray:
        raise NotImplementedError  # each estimator maps its own views

    def transform(self, U: Any = None, y: Any = None, *, M: Any = None) -> Any:
        """Canonical variates of new rows: of view u (``transform(U)``), of view m
        (``transform(M=M)``) or of both (``transform(U, M)`` -> ``(Zu, Zm)``); each
        (rows, n_components), float64. Needs ``fit``."""
        self._check_fitted("transform")
        M = _second_view(self, "transform", y, M)
        if U is None and M is None:
            raise ValueError(f"{type(self).__name__}.transform(): give U, M or both")
        Zu = None if U is None else self._variates(_new_view(self, U, "U"), "u")
        Zm = None if M is None else self._variates(_new_view(self, M, "M"), "m")
        if Zu is not None and Zm is not None:
            if Zu.shape[0] != Zm.shape[0]:
                raise ValueError(f"U has {Zu.shape[0]} rows, M has {Zm.shape[0]} "
                                 "(the views must have the same number of rows)")
            return Zu, Zm
        return Zu if Zm is None else Zm

    def fit_transform(self, U: Any, y: Any = None, *, M: Any = None) -> Tuple[np.ndarray,
                                                                             np.ndarray]:
        """``fit(U, M).transform(U, M)``: the canonical variates ``(Zu, Zm)`` of the training
        rows (a pair, as ``sklearn.cross_decomposition`` returns)."""
        M = _second_view(self, "fit_transform", y, M)
        return self.fit(U, M).transform(U, M)

    def score(self, U: Any, y: Any = None, *, M: Any = None) -> float:
        """Held-out canonical correlation: with ``(Zu, Zm) = transform(U, M)`` the canonical
        variates of the rows given (out-of-sample for rows not used in ``fit``),
        ``score = mean_{i < n_components} corr(Zu[:, i], Zm[:, i])``, the mean over the fitted
        components of the Pearson correlation of the pair-i variates (signed; a constant
        variate counts 0). Larger is better, so ``GridSearchCV`` maximises it. On the training
        rows of a linear CCA without ridge it equals ``correlations_.mean()``; for regularised
        fits (KCCA, CCA with ridge) the training score exceeds it, the fitted correlations
        carrying the regulariser in their denominators."""
        self._check_fitted("score")
        M = _second_view(self, "score", y, M)
        if M is None:
            raise ValueError(f"M: {type(self).__name__}.score() needs both views")
        Zu, Zm = self.transform(U, M)
        return float(np.mean(_variate_correlations(Zu, Zm)))

    def _significance(self, doc: Dict[str, Any]) -> None:
        """The permutation p-values and bootstrap intervals of a fitted document (None when not
        asked for)."""
        perm = doc.get("permutation")
        self.p_values_ = None if perm is None else np.asarray(perm["p_values"])
        self.p_values_step_down_ = (None if perm is None
                                    else np.asarray(perm["p_values_step_down"]))
        boot = doc.get("bootstrap")
        self.bootstrap_ci_ = None if boot is None else np.asarray(boot["intervals"])
        self.bootstrap_std_error_ = None if boot is None else np.asarray(boot["std_errors"])


_SIGNIFICANCE_DOC = """    permutations : permutations of the rows of M for a p-value of each correlation (0 = none):
        ``p_values_[i] = (1 + #{rho*_i >= rho_i}) / (permutations + 1)``, each correlation
        against its own permutation distribution (per component, uncorrected), and
        ``p_values_step_down_``, family-wise adjusted by the step-down max-statistic rule
        (Westfall & Young) over the components; the null is independence of the views.
    bootstrap : bootstrap resamples of the rows for a 95% percentile interval of each
        correlation (0 = none): ``bootstrap_ci_`` (n_components, 2), ``bootstrap_std_error_``.
"""


class KCCA(_TwoViewEstimator, **_NO_OUTPUT_WRAP):
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
    seed : seed of the bandwidth subsample, the Nyström landmarks, the permutations and the
        bootstrap resamples
    coefficients : compute ``alpha_``/``beta_`` (needed by ``transform`` and ``score``). False
        skips the singular vectors like the ``kcca`` tool does (about 2x faster for all
        correlations) and then gives bit-identical correlations to ``kcca --json``; with True
        they agree to rounding (~1e-16), the SVD taking another path.
""" + _SIGNIFICANCE_DOC + """
    Attributes after ``fit``: ``correlations_`` (n_components, descending), ``alpha_`` and
    ``beta_`` (n x n_components dual coefficients; the canonical variate of view u is
    ``K_u alpha``), ``status_`` ("success", "not-converged", "numerical-issue"), ``solver_``,
    ``sigma_u_``, ``sigma_m_``, ``p_values_``, ``p_values_step_down_``, ``bootstrap_ci_``,
    ``bootstrap_std_error_`` (None unless asked for), ``n_features_in_`` / ``n_features_m_``
    (columns of U / M), ``U_fit_``, ``M_fit_`` (the training rows, for ``transform``),
    ``result_`` (the tool's whole JSON document as a dict).

    Inputs are arrays of real numbers (integers are converted to float64), C or F order; M may
    be 1-d (one column). The solver keeps its own column-major float64 copy (O(n d), small
    beside the O(n^2 d) Gram). The GIL is released during ``fit``.
    """

    def __init__(self, kernel: str = "rbf", sigma: Union[str, float] = "auto",
                 gamma: float = 0.1, center: bool = True, n_components: int = 3,
                 method: str = "auto", rank: Optional[int] = None, *,
                 gamma_u: Optional[float] = None, gamma_m: Optional[float] = None,
                 degree: int = 2, coef0: float = 1.0, seed: int = 0,
                 coefficients: bool = True, permutations: int = 0, bootstrap: int = 0) -> None:
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
        self.permutations = permutations
        self.bootstrap = bootstrap

    def _expected_failed_checks(self) -> Dict[str, str]:
        out = {"check_transformer_general": _PAIR_REASON,
               "check_transformer_data_not_an_array": _PAIR_REASON}
        if (isinstance(self.sigma, str) and self.sigma == "auto"
                and isinstance(self.kernel, str) and self.kernel in ("rbf", "laplacian")):
            out.update(check_fit2d_1feature=_AUTO_SIGMA_REASON,
                       check_fit_check_is_fitted=_AUTO_SIGMA_REASON)
        return out

    def _sigma_text(self) -> str:
        if isinstance(self.sigma, str):
            return self.sigma
        return repr(check_float(self.sigma, "sigma"))

    def fit(self, U: Any, y: Any = None, *, M: Any = None) -> "KCCA":
        """Fits KCCA to the rows of U (n x d_u) and M (n x d_m, or n), M given positionally,
        as ``M=`` or as ``y=`` (scikit-learn's name); returns self.

        Raises ``ValueError`` for bad options or data (the ``kcca`` tool's messages, naming
        its flags; scikit-learn's for the data, after the name of the view) and ``TypeError``
        for wrong types.
        """
        U, M = _fit_views(self, U, _second_view(self, "fit", y, M))
        gamma = check_float(self.gamma, "gamma")
        gu = gamma if self.gamma_u is None else check_float(self.gamma_u, "gamma_u")
        gm = gamma if self.gamma_m is None else check_float(self.gamma_m, "gamma_m")
        if not isinstance(self.center, (bool, np.bool_)):
            raise TypeError(f"center ({self.center!r}) must be True or False")
        r = _analysis(
            U, M, cca=False, kernel=str(self.kernel), sigma=self._sigma_text(),
            degree=check_int(self.degree, "degree"), coef0=check_float(self.coef0, "coef0"),
            gamma_u=gu, gamma_m=gm, center=bool(self.center),
            components=check_int(self.n_components, "n_components"), method=str(self.method),
            rank=300 if self.rank is None else check_int(self.rank, "rank"),
            bootstrap=check_int(self.bootstrap, "bootstrap"),
            permutations=check_int(self.permutations, "permutations"),
            seed=check_seed(self.seed, "seed"), coefficients=bool(self.coefficients))
        doc: Dict[str, Any] = r.to_dict()
        self.result_ = doc
        self.correlations_ = np.asarray(r.correlations, dtype=np.float64)
        self.alpha_ = np.asarray(r.alpha)
        self.beta_ = np.asarray(r.beta)
        self.status_ = doc["status"]
        self.solver_ = doc["solver"]
        self.sigma_u_ = doc.get("sigma_u")
        self.sigma_m_ = doc.get("sigma_m")
        self._significance(doc)
        self._kernel_name = doc["settings"]["kernel"]
        self.U_fit_ = np.asarray(U, dtype=np.float64)
        self.M_fit_ = np.asarray(M, dtype=np.float64)
        return self

    def _variates(self, X: np.ndarray, view: str) -> np.ndarray:
        """``K(X, X_fit) alpha`` (view u) or ``K(X, M_fit) beta`` (view m), the kernel centred
        by the training Gram's statistics when ``center`` (O(m n d + n^2 d))."""
        if self.alpha_.shape[1] == 0:
            raise ValueError("KCCA.transform(): fitted with coefficients=False (no alpha_, beta_)")
        train, coef, s = ((self.U_fit_, self.alpha_, self.sigma_u_) if view == "u"
                          else (self.M_fit_, self.beta_, self.sigma_m_))
        return _core.kernel_variates(
            X, train, self._kernel_name, 1.0 if s is None else float(s), int(self.degree),
            float(self.coef0), bool(self.center), coef)


class CCA(_TwoViewEstimator, **_NO_OUTPUT_WRAP):
    """Linear CCA, optionally after PCA of each view (``kcca --cca``, docs/kcca.md).

    Parameters
    ----------
    n_components : correlations to report (>= 1, at most min(p, q))
    pca : principal components per view first (None = no PCA)
    ridge : ridge added to both covariances (>= 0)
    weights : compute the canonical weights (needed by ``transform`` and ``score``). False
        skips them like the ``kcca --cca`` tool does and then gives bit-identical correlations
        to ``kcca --json``; with True the SVDs take another path and the correlations agree to
        rounding (~1e-15).
""" + _SIGNIFICANCE_DOC + """    seed : seed of the permutations and the bootstrap resamples

    Attributes after ``fit``: ``correlations_``, ``null_level_`` (Wachter edge: sigma_1 of
    independent views of this size), ``p_``, ``q_`` (dimensions used), ``warning_``,
    ``bartlett_`` (``{"nonzero", "p_value_all_zero"}`` when ridge is 0 and n > p + q + 2, else
    None), ``explained_variance_u_``/``_m_`` (with PCA), ``p_values_``,
    ``p_values_step_down_``, ``bootstrap_ci_``, ``bootstrap_std_error_`` (None unless asked
    for), ``n_features_in_`` / ``n_features_m_``, ``result_`` (the tool's JSON),
    ``weights_u_`` (d_u, n_components) and ``weights_m_`` (d_m, n_components): the canonical
    weights, normalised as R's ``cancor`` (``w.T (Uc.T Uc + ridge I) w = 1``, Uc the centred
    training view; within the PCA subspace with ``pca``), ``mean_u_``/``mean_m_`` (the
    training column means). ``transform`` gives the canonical variates ``(U - mean_u_) @
    weights_u_``; without a ridge the pair-i variates of the training rows have correlation
    ``correlations_[i]``.
    """

    def __init__(self, n_components: int = 1, pca: Optional[int] = None,
                 ridge: float = 0.0, *, weights: bool = True, permutations: int = 0,
                 bootstrap: int = 0, seed: int = 0) -> None:
        self.n_components = n_components
        self.pca = pca
        self.ridge = ridge
        self.weights = weights
        self.permutations = permutations
        self.bootstrap = bootstrap
        self.seed = seed

    def fit(self, U: Any, y: Any = None, *, M: Any = None) -> "CCA":
        """Fits linear CCA to the rows of U and M (n x d_m, or n), M given positionally, as
        ``M=`` or as ``y=``; returns self. Errors as ``KCCA.fit``."""
        U, M = _fit_views(self, U, _second_view(self, "fit", y, M))
        r = _analysis(
            U, M, cca=True, components=check_int(self.n_components, "n_components"),
            method="exact", pca=0 if self.pca is None else check_int(self.pca, "pca"),
            ridge=check_float(self.ridge, "ridge"),
            bootstrap=check_int(self.bootstrap, "bootstrap"),
            permutations=check_int(self.permutations, "permutations"),
            seed=check_seed(self.seed, "seed"), coefficients=bool(self.weights))
        doc: Dict[str, Any] = r.to_dict()
        self.result_ = doc
        self.weights_u_ = np.asarray(r.weights_u)
        self.weights_m_ = np.asarray(r.weights_m)
        self.mean_u_ = U.mean(axis=0)
        self.mean_m_ = M.mean(axis=0)
        self.correlations_ = np.asarray(r.correlations, dtype=np.float64)
        self.null_level_ = float(doc["null_level"])
        self.p_ = int(doc["p"])
        self.q_ = int(doc["q"])
        self.warning_ = doc["warning"]
        self.bartlett_ = doc.get("bartlett")
        self.explained_variance_u_ = np.asarray(doc.get("explained_variance_u", []))
        self.explained_variance_m_ = np.asarray(doc.get("explained_variance_m", []))
        self._significance(doc)
        return self

    def _variates(self, X: np.ndarray, view: str) -> np.ndarray:
        """``(X - mean) @ weights`` of view u or m."""
        if self.weights_u_.size == 0:
            raise ValueError("CCA.transform(): fitted with weights=False (no weights_u_, "
                             "weights_m_)")
        if view == "u":
            return (X - self.mean_u_) @ self.weights_u_
        return (X - self.mean_m_) @ self.weights_m_
