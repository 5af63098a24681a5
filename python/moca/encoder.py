"""A pre-trained MoCA encoder (``moca pretrain``) as a NumPy feature function (needs moca built
with LibTorch; ``moca.with_torch`` says whether it was)."""
from __future__ import annotations

import os
from typing import Any, List, Optional, Tuple, Union

import numpy as np

from . import _core
from ._checks import as_float_array, check_int, check_seed
from .masking import Policy, policy as make_policy

__all__ = ["Encoder"]


class Encoder:
    """The encoder of a checkpoint (MAE or classifier). ``embed`` gives the features of both
    views of each window under masks (Phi(x^U), Phi(x^M): mean of the encoder outputs over the
    view's tokens, src/moca/model/eval/encoder_features.hpp). Pass it as ``features=`` to
    :func:`moca.score`. ``attention`` and ``pooled`` show what the encoder learned."""

    def __init__(self, checkpoint: Union[str, os.PathLike]) -> None:
        if not _core.with_torch:
            raise RuntimeError("moca.Encoder needs moca built with LibTorch "
                               "(-DMOCA_WITH_TORCH=ON)")
        self.checkpoint = os.fspath(checkpoint)
        self._core = _core.EncoderFeatures(self.checkpoint)

    @classmethod
    def load(cls, checkpoint: Union[str, os.PathLike]) -> "Encoder":
        """Loads a checkpoint (``RuntimeError`` naming the file when it is not a moca model)."""
        return cls(checkpoint)

    dim = property(lambda self: self._core.dim, doc="feature dimension (encoder width)")
    channels = property(lambda self: self._core.channels, doc="channels the model was trained on")
    length = property(lambda self: self._core.length, doc="window length L")
    patch_length = property(lambda self: self._core.patch_length, doc="samples per patch")
    channel_names = property(lambda self: list(self._core.channel_names),
                             doc="the model's modalities")

    def embed(self, X: Any, policy: Union[str, Policy, np.ndarray] = "cross", *, seed: int = 0,
              shared: bool = True,
              channel_names: Optional[List[str]] = None) -> Tuple[np.ndarray, np.ndarray]:
        """Features of both views of windows ``X`` (N, C, L): returns (N x D, N x D) float64.

        ``policy`` is a spec string or :class:`Policy` (masks drawn with ``seed``: with ``shared``,
        window 0's mask for all windows; else one per window, window i's from its own stream,
        exactly the masks ``moca embed --seed`` draws), or the masks themselves as a (1 or N, C,
        P) bool array on the windows' grid (P = L / patch_length; ``ValueError`` otherwise).
        ``channel_names`` default to the model's. ``X`` is copied (float32).
        """
        X = as_float_array(X, "X", 3, np.float32)
        n = X.shape[0]
        if isinstance(policy, np.ndarray):
            masks = self._check_masks(policy, X)
        else:
            p = policy if isinstance(policy, Policy) else make_policy(
                policy, channels=X.shape[1], length=X.shape[2], patch_length=self.patch_length)
            # window i's mask is moca embed --seed's (masking::window_mask); shared: window 0's
            masks = p._core.window_masks(1 if shared else n, check_seed(seed, "seed"))
        names = list(channel_names) if channel_names is not None else (
            self.channel_names if X.shape[1] == self.channels else [])
        return self._core.view_features(X, masks, names)

    def _check_masks(self, masks: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Masks given as an array: (1 or N, C, P) bool on the grid of ``X`` and the model's
        patch length, else ``ValueError`` naming ``policy``."""
        n, c, length = X.shape
        pl = self.patch_length
        if length % pl:
            raise ValueError(f"X: window length {length} is not a multiple of the model's "
                             f"patch_length {pl}")
        want = (c, length // pl)
        if masks.dtype != np.bool_:
            raise TypeError(f"policy: masks must be a bool array, got dtype {masks.dtype}")
        if masks.ndim != 3 or masks.shape[0] not in (1, n) or masks.shape[1:] != want:
            raise ValueError(f"policy: masks of shape {masks.shape} do not fit the windows X "
                             f"{X.shape} (need (1 or {n}, {want[0]}, {want[1]}): C channels x "
                             f"L / patch_length = {length} / {pl} patches)")
        return masks

    def _names(self, X: np.ndarray, channel_names: Optional[List[str]]) -> List[str]:
        return list(channel_names) if channel_names is not None else (
            self.channel_names if X.shape[1] == self.channels else [])

    def _inspector(self) -> Any:
        if getattr(self, "_inspect", None) is None:
            self._inspect = _core.EncoderInspector(self.checkpoint)
        return self._inspect

    def attention(self, X: Any, policy: Union[None, str, Policy, np.ndarray] = None, *,
                  seed: int = 0, channel_names: Optional[List[str]] = None) -> dict:
        """Attention of windows ``X`` (N, C, L) from an explicit inspection pass
        (src/moca/model/eval/inspect.hpp), for MAE and classifier checkpoints alike.

        Without ``policy`` every token enters the encoder; with a spec or :class:`Policy` (window
        i's mask drawn with ``seed`` as ``moca attention --seed`` draws it) or (1 or N, C, P) bool
        masks only the visible tokens do, as in pre-training. Returns a dict of float64 arrays
        over the full token grid, index 0 = the cls token, 1 + t = token t (t = c * P + p in
        the modality layout):

        * ``weights`` (N, layers, heads, 1 + T, 1 + T): softmax(q k^T / sqrt(d)) per head, rows =
          queries; rows and columns of masked tokens are 0, the other rows sum to 1;
        * ``cls`` (N, layers, heads, T): the cls token's row (every moca encoder has one);
        * ``rollout`` (N, 1 + T, 1 + T): attention rollout (Abnar & Zuidema 2020) of the head
          means, 0.5 I + 0.5 A per layer;
        * ``visible`` (N, T) bool: the tokens that entered the encoder.
        """
        X = as_float_array(X, "X", 3, np.float32)
        masks = None
        if isinstance(policy, np.ndarray):
            masks = self._check_masks(policy, X)
        elif policy is not None:
            p = policy if isinstance(policy, Policy) else make_policy(
                policy, channels=X.shape[1], length=X.shape[2], patch_length=self.patch_length)
            masks = p._core.window_masks(X.shape[0], check_seed(seed, "seed"))  # as the CLI
        d = dict(self._inspector().attention(X, masks, self._names(X, channel_names)))
        d["cls"] = d["weights"][:, :, :, 0, 1:]
        return d

    def pooled(self, X: Any, pool: str = "mean", *,
               channel_names: Optional[List[str]] = None) -> np.ndarray:
        """One embedding per window of ``X`` (N, C, L) with every token in the encoder: the cls
        row of the final norm (``pool="cls"``, what classifiers read) or the mean of the token
        rows (``"mean"``). Returns (N, D) float64 (``moca embed --pool``)."""
        X = as_float_array(X, "X", 3, np.float32)
        return self._inspector().pooled(X, pool, self._names(X, channel_names))
