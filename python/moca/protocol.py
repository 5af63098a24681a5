"""The classification protocol of ``moca linprobe`` / ``moca finetune`` on NumPy windows: the
same library call (``model::run_protocol``), so the same options give the same numbers.

Its keyword options are not restated here: they are the rows of ``model::ProtocolOptions``'
schema (``_core.protocol_options``), the same rows that make the flags of ``moca linprobe`` and
``moca finetune``, with the same defaults, help and checks. The signature and the docstring of
:func:`run_protocol` are made from them."""
import inspect
import os
import warnings
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _core
from ._checks import as_float_array, as_int_vector, check_int

_MODES = ("linprobe", "finetune", "scratch")


def _rows() -> Dict[str, List[Dict[str, Any]]]:
    """The schema rows at each mode's defaults; empty without LibTorch."""
    if not hasattr(_core, "protocol_options"):
        return {}
    return {m: list(_core.protocol_options(m)) for m in _MODES}


def run_protocol(checkpoint: Union[str, os.PathLike, None], X: Any, y: Any,
                 pid: Optional[Any] = None, *, channel_names: Sequence[str],
                 class_names: Optional[Sequence[str]] = None, mode: str = "linprobe",
                 threads: int = 0, split: Optional[Any] = None,
                 **options: Any) -> Dict[str, Any]:
    """Trains and tests one classifier per split of windows ``X`` (N, C, L) with labels ``y``
    (ids 0..K-1, -1 = unlabelled) and subject ids ``pid``.

    ``mode``: ``"linprobe"``, ``"finetune"`` or ``"scratch"`` (``checkpoint`` None). The windows
    must be at the checkpoint's rate and of a whole number of its patches
    (``moca.data.load(..., rate=, length=)`` brings them there); channels are matched to the
    checkpoint's by ``channel_names``. ``threads``: CPU threads (0 = the hardware's). ``split``:
    the data's own split (N entries ``"train"``/``"test"``, or 0/1; ``meta["split"]`` of
    ``moca.data.load`` for a ``.ts`` pair or a folder with split.npy), which
    ``protocol="predefined"`` uses.

    The other keywords are those of ``moca linprobe`` / ``moca finetune`` (listed below, with
    the flag each stands for); one left out, or None, is the command's default for the mode. A
    keyword the mode does not use (``layer_decay`` for the probe), or the protocol does not use
    (``folds`` beside ``protocol="loso"``), is a ValueError, as it would be ignored; an unknown
    one a TypeError.

    Returns a dict: ``protocol``; ``folds`` (per fold: ``fold``, ``train_windows``,
    ``test_windows``, ``test_subjects``, ``accuracy``, ``macro_f1``, ``balanced_accuracy``,
    ``confusion``, ``truth``, ``predicted``, ``channel_map``); ``accuracy``, ``macro_f1``,
    ``balanced_accuracy`` (one value per fold); ``saved`` ((path, fold), fold -1 = refit);
    ``log``. Raises ``ValueError`` with the library's messages for bad options or data.
    """
    X = as_float_array(X, "X", 3, np.float32)
    y = as_int_vector(y, "y", X.shape[0])
    p = None if pid is None else as_int_vector(pid, "pid", X.shape[0])
    parts = None if split is None else _split_ids(split, X.shape[0])
    if parts is not None and options.get("protocol") != "predefined":
        # as the programs refuse a flag that takes no effect
        raise ValueError(f"split takes no effect: only protocol='predefined' uses it; the "
                         f"protocol is {options.get('protocol') or 'random'}")
    if isinstance(channel_names, str):
        raise TypeError("channel_names must be a sequence of names, not a string")
    if "batch" in options:  # the keyword before the schema named it after the field
        if "batch_size" in options:
            raise TypeError("give batch_size, not both batch and batch_size")
        warnings.warn("run_protocol(batch=) is now batch_size= (the field of --batch)",
                      FutureWarning, stacklevel=2)
        options["batch_size"] = options.pop("batch")
    options["checkpoint"] = None if checkpoint is None else os.fspath(checkpoint)
    return _core.run_protocol(str(mode), X, y, p, [str(c) for c in channel_names],
                              [str(c) for c in (class_names or [])], 0.0,
                              check_int(threads, "threads"), options, parts)


def _split_ids(split: Any, n: int) -> np.ndarray:
    """``split`` ("train"/"test" strings, or 0/1) as N int32 ids, 0 = training, 1 = test."""
    a = np.asarray(split)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"split: must be a 1-d array of N ({n}) entries, got shape {a.shape}")
    if a.dtype.kind in "US":
        s = a.astype(str)
        bad = sorted(set(s.tolist()) - {"train", "test"})
        if bad:
            raise ValueError(f"split: entries must be 'train' or 'test' (found {bad[:3]})")
        return (s == "test").astype(np.int32)
    ids = as_int_vector(a, "split", n)
    if ids.size and (ids.min() < 0 or ids.max() > 1):
        raise ValueError("split: entries must be 0 (train) or 1 (test)")
    return ids


def _document() -> None:
    """Appends the schema's keywords to run_protocol's docstring and signature."""
    rows = _rows()
    if not rows:
        return
    lines = ["", "    Keywords (from ``model::ProtocolOptions``' schema; flag, rule, default):", ""]
    params = [p for p in inspect.signature(run_protocol).parameters.values()
              if p.kind != inspect.Parameter.VAR_KEYWORD]
    for i, row in enumerate(rows["linprobe"]):
        key = row["key"]
        if key == "checkpoint":
            continue
        defaults = {m: rows[m][i]["default"] for m in _MODES
                    if rows[m][i]["scope"] & _core.downstream_mode_scope(m)}
        values = set(map(repr, defaults.values()))
        default = next(iter(defaults.values())) if len(values) == 1 else None
        shown = (repr(default) if len(values) == 1 else
                 ", ".join(f"{m}: {v!r}" for m, v in defaults.items()))
        modes = "" if len(defaults) == len(_MODES) else f" [{', '.join(defaults)} only]"
        rule = f"; {row['rule']}" if row["rule"] else ""
        choices = f"; one of {', '.join(row['choices'])}" if row["choices"] else ""
        lines.append(f"    * ``{key}`` (``{row['flag']}``{rule}{choices}; default {shown})"
                     f"{modes}: {row['help']}.")
        params.append(inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=default))
    run_protocol.__doc__ = (run_protocol.__doc__ or "") + "\n".join(lines) + "\n"
    run_protocol.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]


_document()
