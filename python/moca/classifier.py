"""A kept activity classifier (``moca linprobe|finetune --save-model``) applied to NumPy windows
(needs moca built with LibTorch; ``moca.with_torch`` says whether it was)."""
from __future__ import annotations

import os
from typing import Any, List, Union

import numpy as np

from . import _core
from ._checks import as_float_array

__all__ = ["Classifier"]


class Classifier:
    """A classifier checkpoint: encoder, head, class names, input channels, rate and length.

    ``X`` is an (N, C, L) array of windows prepared as the training windows were: the
    classifier's ``input_channels`` in that order, ``length`` samples at ``sample_rate`` Hz
    (``moca predict`` does that preparation for any data set). ``predict`` returns class names
    (``classes_``), ``predict_proba`` an (N, K) array whose columns follow ``classes_``.
    """

    def __init__(self, path: Union[str, os.PathLike], *, device: str = "auto",
                 threads: int = 0) -> None:
        if not _core.with_torch:
            raise RuntimeError("moca.Classifier needs moca built with LibTorch "
                               "(-DMOCA_WITH_TORCH=ON)")
        self.path = os.fspath(path)
        self._core = _core.Classifier(self.path, device, int(threads))
        #: class names, the order of ``predict_proba``'s columns
        self.classes_ = np.array(self._core.class_names)

    @classmethod
    def load(cls, path: Union[str, os.PathLike], **kwargs: Any) -> "Classifier":
        """Loads a classifier checkpoint; ``ValueError`` when the file is another kind (an MAE),
        ``RuntimeError`` when it is missing or not a moca checkpoint."""
        return cls(path, **kwargs)

    input_channels = property(lambda self: list(self._core.input_channels),
                              doc="the data channels the head was trained on, in order")
    channel_names = property(lambda self: list(self._core.channel_names),
                             doc="the encoder's modalities")
    sample_rate = property(lambda self: float(self._core.sample_rate),
                           doc="rate of the training windows (Hz)")
    length = property(lambda self: int(self._core.length), doc="window length L")
    probe = property(lambda self: bool(self._core.probe),
                     doc="True for a linear probe (BatchNorm + linear head on a frozen encoder)")

    def _windows(self, X: Any) -> np.ndarray:
        X = as_float_array(X, "X", 3, np.float32)
        want = (len(self.input_channels), self.length)
        if X.shape[1:] != want:
            raise ValueError(f"X: windows of shape {X.shape[1:]} do not fit the classifier "
                             f"({want[0]} channels {','.join(self.input_channels)} x {want[1]} "
                             f"samples at {self.sample_rate:g} Hz); prepare them as for training "
                             "or use `moca predict`")
        return X

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (softmax of the logits), shape (N, K)."""
        return np.asarray(self._core.predict_proba(self._windows(X)))

    def predict_ids(self, X: Any) -> np.ndarray:
        """Predicted class ids (argmax of the logits: the training run's rule)."""
        return np.asarray(self._core.predict(self._windows(X)), dtype=np.int64)

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class names."""
        return self.classes_[self.predict_ids(X)]

    def __repr__(self) -> str:
        head = "linear probe" if self.probe else "fine-tuned"
        return (f"Classifier({self.path!r}: {head}, {len(self.classes_)} classes, channels "
                f"{','.join(self.input_channels)}, {self.length} samples at "
                f"{self.sample_rate:g} Hz)")
