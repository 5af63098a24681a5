"""Data sets as NumPy arrays: the sources ``--data`` takes, and Algorithm 1's synthetic
transitions. Windows are ``X`` (N, C, L) float32, labels ``y`` (N,) and subject ids ``pid``
(N,) int32 (-1 = unknown), and ``meta`` (channel_names, class_names, subject_names,
sample_rate_hz, description)."""
from __future__ import annotations

import os
from typing import Any, Dict, NamedTuple, Optional

import numpy as np

from . import _core
from ._checks import as_float_array, as_int_vector, check_float, check_int

__all__ = ["Dataset", "load", "synthetic_transitions", "GENERATOR"]

#: The spec of the built-in synthetic IMU generator (what the tools use without --data).
GENERATOR = "generator"


class Dataset(NamedTuple):
    """Windows and their labels; unpacks as ``X, y, pid, meta = moca.data.load(...)``."""
    X: np.ndarray
    y: np.ndarray
    pid: np.ndarray
    meta: Dict[str, Any]


def _dataset(d: Dict[str, Any]) -> Dataset:
    return Dataset(d["X"], d["y"], d["pid"], dict(d["meta"]))


def load(spec: Optional[str] = None, *, windows: int = 1000, coupling: float = 0.8,
         seed: int = 0) -> Dataset:
    """Loads what the tools' ``--data`` takes. All loading goes through this one function.

    ``spec``:
    * ``None``: ``$MOCA_HAPT_DIR`` if set, else the generator (as the tools do);
    * ``"generator"``: the built-in synthetic IMU generator (``windows``, ``coupling`` in
      [0, 1], ``seed``; src/data/synthetic.hpp);
    * a folder with ``X.npy`` (and optional ``Y.npy``/``pid.npy``/``meta.json``): windows in the
      ssl-wearables layout (``moca::data::read_windows_npy``);
    * a UCI HAPT folder (``RawData/``): 200-sample windows at 50 Hz with the paper's labels.

    Raises ``ValueError`` for a malformed file or bad option and ``RuntimeError`` for a missing
    folder or file (the library's messages).
    """
    if spec is None:
        spec = os.environ.get("MOCA_HAPT_DIR") or GENERATOR
    if not isinstance(spec, (str, os.PathLike)):
        raise TypeError(f"spec ({spec!r}) must be a path or 'generator'")
    spec = os.fspath(spec)
    if spec == GENERATOR:
        return _dataset(_core.generate_synthetic(check_int(windows, "windows"),
                                                 check_float(coupling, "coupling"),
                                                 check_int(seed, "seed")))
    if os.path.isfile(os.path.join(spec, "X.npy")):
        return _dataset(_core.read_npy(spec))
    return _dataset(_core.load_hapt(spec))


def synthetic_transitions(X: Any, y: Any, n: int, seed: int = 0,
                          pid: Optional[Any] = None) -> Dataset:
    """Algorithm 1 (paper): ``n`` synthetic transition windows spliced from pairs of windows of
    different activities in ``X`` (N, C, L) with labels ``y``. ``X`` is copied (float32)."""
    X = as_float_array(X, "X", 3, np.float32)
    y = as_int_vector(y, "y", X.shape[0])
    p = None if pid is None else as_int_vector(pid, "pid", X.shape[0])
    return _dataset(_core.synthetic_transitions(X, y, p, check_int(n, "n"),
                                                check_int(seed, "seed")))
