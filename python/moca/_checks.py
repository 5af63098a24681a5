"""Argument checks shared by the moca package (messages follow the command-line tools')."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

_FLOATS = (np.float32, np.float64)


def as_float_array(a: Any, name: str, ndim: int, dtype: Optional[type] = None) -> np.ndarray:
    """Checks that ``a`` is a float32/float64 array of ``ndim`` dimensions without NaN/Inf.

    Returns ``a`` itself (no copy) unless ``dtype`` asks for another float type. Raises
    ``TypeError`` for a non-array or another dtype and ``ValueError`` for a wrong rank, an
    empty array or non-finite values.
    """
    if not isinstance(a, np.ndarray):
        try:
            a = np.asarray(a)
        except Exception as e:  # ragged lists and the like
            raise TypeError(f"{name}: not convertible to an array ({e})") from None
    if a.dtype.type not in _FLOATS:
        raise TypeError(f"{name}: dtype {a.dtype} is not supported (float32 or float64)")
    if a.ndim != ndim:
        raise ValueError(f"{name}: must be a {ndim}-d array, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name}: is empty (shape {a.shape})")
    if not np.isfinite(a).all():
        raise ValueError(f"{name}: contains NaN or Inf")
    if dtype is not None and a.dtype != dtype:
        a = a.astype(dtype)
    return a


def as_int_vector(a: Any, name: str, n: int) -> np.ndarray:
    """Checks that ``a`` holds ``n`` integers; returns them as int32."""
    a = np.asarray(a)
    if not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{name}: dtype {a.dtype} is not supported (integers)")
    if a.shape != (n,):
        raise ValueError(f"{name}: must have shape ({n},), got {a.shape}")
    return a.astype(np.int32)


def check_int(value: Any, name: str) -> int:
    """``value`` as an int; ``TypeError`` for bool, float or anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} ({value!r}) must be an integer")
    return int(value)


def check_float(value: Any, name: str) -> float:
    """``value`` as a float; ``TypeError`` for strings, bool and other non-numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} ({value!r}) must be a number")
    return float(value)
