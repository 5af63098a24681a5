"""The classification protocol of ``moca linprobe`` / ``moca finetune`` on NumPy windows: the
same library call (``model::run_protocol``), so the same options give the same numbers."""
import os
from typing import Any, Dict, Optional, Sequence, Union

import numpy as np

from . import _core
from ._checks import as_float_array, as_int_vector, check_float, check_int, check_seed


def run_protocol(checkpoint: Union[str, os.PathLike, None], X: Any, y: Any,
                 pid: Optional[Any] = None, *, channel_names: Sequence[str],
                 class_names: Optional[Sequence[str]] = None, mode: str = "linprobe",
                 protocol: str = "subject-kfold", folds: int = 5, train_fraction: float = 0.7,
                 split_seed: int = 1004, epochs: Optional[int] = None,
                 batch: Optional[int] = None, lr: Optional[float] = None,
                 warmup_epochs: Optional[float] = None, seed: int = 0, threads: int = 0,
                 label_fraction: float = 1.0, match_channels: str = "name",
                 save_model: Optional[Union[str, os.PathLike]] = None,
                 refit: bool = False, shuffle_labels: bool = False) -> Dict[str, Any]:
    """Trains and tests one classifier per split of windows ``X`` (N, C, L) with labels ``y``
    (ids 0..K-1, -1 = unlabelled) and subject ids ``pid``.

    ``mode``: ``"linprobe"``, ``"finetune"`` or ``"scratch"`` (no checkpoint). ``protocol``:
    ``"random"`` (``train_fraction``), ``"subject-kfold"`` (``folds``) or ``"loso"``; splits are
    seeded by ``split_seed``. The windows must be at the checkpoint's rate and of a whole number
    of its patches (``moca.data.load(..., rate=, length=)`` brings them there); channels are
    matched to the checkpoint's by ``channel_names`` (``match_channels="position"`` asserts the
    order). ``epochs``, ``batch``, ``lr``, ``warmup_epochs`` left ``None`` are the command's
    defaults for the mode; a default warm-up yields to ``epochs`` (at most ``epochs - 1``),
    while a ``warmup_epochs`` given must be below ``epochs`` (ValueError otherwise). ``label_fraction``: each fold trains on that share of its labelled
    windows per class (at least one each). ``save_model``/``refit``: keep a classifier for
    :class:`moca.Classifier`. ``shuffle_labels``: the no-signal control — each fold's training
    labels permuted among its training windows (class counts kept, test labels true).

    Returns a dict: ``protocol``; ``folds`` (per fold: ``fold``, ``train_windows``,
    ``test_windows``, ``test_subjects``, ``accuracy``, ``macro_f1``, ``balanced_accuracy``,
    ``confusion``, ``truth``, ``predicted``, ``channel_map``); ``accuracy``, ``macro_f1``,
    ``balanced_accuracy`` (one value per fold); ``saved`` ((path, fold), fold -1 = refit);
    ``log``. Raises ``ValueError`` with the library's messages for bad options or data.
    """
    X = as_float_array(X, "X", 3, np.float32)
    y = as_int_vector(y, "y", X.shape[0])
    p = None if pid is None else as_int_vector(pid, "pid", X.shape[0])
    if isinstance(channel_names, str):
        raise TypeError("channel_names must be a sequence of names, not a string")
    opt = lambda v, f, name: -1 if v is None else f(v, name)  # noqa: E731
    return _core.run_protocol(
        str(mode), "" if checkpoint is None else os.fspath(checkpoint), X, y, p,
        [str(c) for c in channel_names], [str(c) for c in (class_names or [])], 0.0,
        str(protocol), check_int(folds, "folds"), check_float(train_fraction, "train_fraction"),
        check_seed(split_seed, "split_seed"), opt(epochs, check_int, "epochs"),
        opt(batch, check_int, "batch"), opt(lr, check_float, "lr"),
        opt(warmup_epochs, check_float, "warmup_epochs"), check_seed(seed, "seed"),
        check_int(threads, "threads"), check_float(label_fraction, "label_fraction"),
        str(match_channels), "" if save_model is None else os.fspath(save_model), bool(refit),
        bool(shuffle_labels))
