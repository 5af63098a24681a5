"""Argument checks shared by the moca package (messages follow the command-line tools')."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

_FLOATS = (np.float32, np.float64)


def as_float_array(a: Any, name: str, ndim: int, dtype: Optional[type] = None) -> np.ndarray:
    """Checks that ``a`` is an array of real numbers (any integer or floating dtype: float16,
    float128, int8, ...) of ``ndim`` dimensions without NaN/Inf.

    Returns ``a`` itself (no copy) when it is float32/float64 and ``dtype`` asks for no other
    type; otherwise one converted copy (``dtype``, or float64). Raises ``TypeError`` for a
    non-array and for bool, complex, string or object dtypes, and ``ValueError`` for a wrong
    rank, an empty array or non-finite values (also those a conversion to float32 makes).
    """
    if not isinstance(a, np.ndarray):
        try:
            a = np.asarray(a)
        except Exception as e:  # ragged lists and the like
            raise TypeError(f"{name}: not convertible to an array ({e})") from None
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{name}: dtype {a.dtype} is not supported (real numbers: integers or "
                        "floating point)")
    if a.ndim != ndim:
        raise ValueError(f"{name}: must be a {ndim}-d array, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name}: is empty (shape {a.shape})")
    target = dtype or (a.dtype.type if a.dtype.type in _FLOATS else np.float64)
    out = a
    if a.dtype != target:
        with np.errstate(over="ignore", invalid="ignore"):
            out = a.astype(target)
    # one finiteness pass over what is returned; the input is looked at again only to say why
    if not np.isfinite(out).all():
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise ValueError(f"{name}: contains NaN or Inf")
        raise ValueError(f"{name}: has values beyond the range of {np.dtype(target).name} "
                         f"(largest magnitude {np.finfo(target).max:.4g})")
    return out


def as_int_vector(a: Any, name: str, n: int) -> np.ndarray:
    """Checks that ``a`` holds ``n`` integers; returns them as int32."""
    a = np.asarray(a)
    if not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{name}: dtype {a.dtype} is not supported (integers)")
    if a.shape != (n,):
        raise ValueError(f"{name}: must have shape ({n},), got {a.shape}")
    return a.astype(np.int32)


INT_MIN, INT_MAX = -2**31, 2**31 - 1  # the library's int options
SEED_MAX = 2**64 - 1  # its seeds are std::uint64_t


def check_int(value: Any, name: str, lo: int = INT_MIN, hi: int = INT_MAX) -> int:
    """``value`` as an int in [lo, hi] (default: the range of the library's C++ ``int``);
    ``TypeError`` for bool, float or anything else, ``ValueError`` out of range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} ({value!r}) must be an integer")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{name} ({value}) must be in [{lo}, {hi}]")
    return value


def check_seed(value: Any, name: str = "seed") -> int:
    """A seed: an int in [0, 2**64 - 1] (``TypeError`` / ``ValueError`` as :func:`check_int`)."""
    return check_int(value, name, 0, SEED_MAX)


def check_float(value: Any, name: str) -> float:
    """``value`` as a float; ``TypeError`` for strings, bool and other non-numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} ({value!r}) must be a number")
    return float(value)


def document_keywords(fn: Any, rows: Any, source: str) -> None:
    """Appends the keywords of an options struct's schema ``rows`` (``_core.*_options()``) to
    ``fn``'s docstring and signature: each row's key, flag, rule, choices, default and help. A
    key that is already an explicit parameter keeps it; an empty default ("" or []) is shown as
    none and is None in the signature."""
    import inspect
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind != inspect.Parameter.VAR_KEYWORD]
    explicit = {p.name for p in params}
    lines = ["", f"    Keywords (``{source}``' schema; flag, rule, default):", ""]
    for row in rows:
        default = None if row["default"] in ("", []) else row["default"]
        rule = f"; {row['rule']}" if row["rule"] else ""
        choices = f"; one of {', '.join(row['choices'])}" if row["choices"] else ""
        shown = "none" if default is None else repr(default)
        lines.append(f"    * ``{row['key']}`` (``{row['flag']}``{rule}{choices}; default {shown}):"
                     f" {row['help']}.")
        if row["key"] not in explicit:
            params.append(inspect.Parameter(row["key"], inspect.Parameter.KEYWORD_ONLY,
                                            default=default))
    fn.__doc__ = (fn.__doc__ or "") + "\n".join(lines) + "\n"
    fn.__signature__ = inspect.Signature(
        params, return_annotation=inspect.signature(fn).return_annotation)
