"""moca's masking policies and scores inside a PyTorch training loop (needs PyTorch 1.13 or
2.x; ``import moca`` does not import it, ``import moca.torch`` does).

A PyTorch MAE (facebookresearch/mae, the authors' MoCA code, :mod:`moca.torch_model`) masks
with ``random_masking(x, mask_ratio)``, which returns ``x_masked``, ``mask`` and ``ids_restore``
and gathers the visible tokens with ``ids_keep``. Here the masks come from a moca policy
(``cross:ratio=0.75``, ``sync``, a :class:`moca.Policy`, ...), drawn exactly as
:meth:`moca.Policy.sample` draws them, and are turned into those tensors:

    import moca.torch as mt
    gen = mt.MaskGenerator("cross:ratio=0.75", channels=6, length=200, patch_length=20, seed=0)
    mask, ids_restore, ids_keep = gen.masks(x.shape[0], device=x.device)   # one training step
    x_masked, mask, ids_restore = gen(tokens, mask_ratio)   # drop-in for MAE's random_masking

Token order: moca's grid numbers token (channel c, time patch p) as ``c * P + p``
(modality-major), the order of the authors' ``--alt`` model (Conv2d (1, Lp) patches of a
(1, C, L) image, ``.flatten(2)``) and of :mod:`moca.torch_model`'s modality layout.
``layout="time"`` gives ``p * C + c`` (time-major); ``layout="stacked"`` one token per time
patch (the authors' non-alt model), for policies that mask whole time columns only.

Conventions of MAE's ``random_masking``: ``mask`` (N, T) float, 1 = masked, in token order;
``ids_shuffle`` lists the kept tokens first, so ``ids_keep = ids_shuffle[:, :len_keep]``,
``ids_restore = argsort(ids_shuffle)`` and ``mask == gather(cat(zeros(len_keep),
ones(T - len_keep)), ids_restore)``. MAE orders the kept tokens by random noise; here they are
in ascending token order (a stable sort of the mask, as the authors' ``import_mask`` path and
:func:`moca.torch_model.mask_ids`), which a ViT with positions added before masking does not
see.

Static shapes: ``ids_keep`` is rectangular only if every window masks the same number of tokens.
A policy whose count varies (``per-modality`` with groups of unequal size, a callable that
varies) is refused with a ``ValueError`` naming it: :class:`MaskGenerator` checks a probe of
256 masks when it is built (and every batch), :func:`draw_masks` every batch.
"""
from __future__ import annotations

import weakref
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from ._checks import check_int, check_seed
from .estimators import CCA
from .masking import Policy, policy as _make_policy
from .scoring import score as _score

__all__ = ["Masks", "LAYOUTS", "as_policy", "draw_masks", "masks_from_grid", "MaskGenerator",
           "ScoreHook", "view_features"]

#: Token orders: "modality" (c * P + p), "time" (p * C + c), "stacked" (p; whole columns).
LAYOUTS = ("modality", "time", "stacked")

#: Masks drawn to check that a policy masks the same number of tokens in every window.
PROBE = 256

PolicyLike = Union[str, Policy]


class Masks(NamedTuple):
    """The masks of a batch as MAE's ``random_masking`` returns them (without ``x_masked``)."""
    mask: torch.Tensor          #: (N, T) float32, 1 = masked, 0 = kept, in token order
    ids_restore: torch.Tensor   #: (N, T) int64, argsort of ids_shuffle (kept tokens first)
    ids_keep: torch.Tensor      #: (N, len_keep) int64, the kept tokens (ascending)

    def ids_masked(self) -> torch.Tensor:
        """(N, T - len_keep) int64: the masked tokens (ascending), ``ids_shuffle[:, len_keep:]``
        — what an encoder sees of the masked view."""
        return torch.argsort(self.ids_restore, dim=1)[:, self.ids_keep.shape[1]:]


def _fail(what: str) -> None:
    raise ValueError(f"moca.torch: {what}")


def _check_layout(layout: str) -> str:
    if layout not in LAYOUTS:
        _fail(f"layout ({layout!r}) must be one of {', '.join(LAYOUTS)}")
    return layout


# Policies built from spec strings, by (spec, channels, length, patch_length, ratio): building
# one parses the spec (and an adaptive one scores its candidates), so a loop reuses it.
_spec_policies: Dict[Tuple[str, int, int, int, Optional[float]], Policy] = {}
# Masked counts of each policy object's masks, from a probe of PROBE masks.
_probed: "weakref.WeakKeyDictionary[Policy, np.ndarray]" = weakref.WeakKeyDictionary()


def as_policy(policy: PolicyLike, *, channels: int = 6, length: int = 200,
              patch_length: int = 20, ratio: Optional[float] = None) -> Policy:
    """A :class:`moca.Policy` from a spec string (``ratio`` fills in a ratio the spec does not
    set, as ``kcca_score --ratio``; built once per arguments and reused) or the policy itself
    (its own grid; ``channels`` etc. are then not used)."""
    if isinstance(policy, Policy):
        return policy
    if not isinstance(policy, str):
        raise TypeError(f"moca.torch: policy ({policy!r}) must be a spec string or a moca.Policy")
    key = (policy, check_int(channels, "channels"), check_int(length, "length"),
           check_int(patch_length, "patch_length"), None if ratio is None else float(ratio))
    p = _spec_policies.get(key)
    if p is None:
        p = _make_policy(policy, channels=channels, length=length, patch_length=patch_length,
                         ratio=ratio)
        _spec_policies[key] = p
    return p


def _static_count(p: Policy) -> int:
    """The number of masked cells every mask of ``p`` has, from PROBE masks (seed 0, draw 0);
    a ValueError naming the policy if it varies."""
    counts = _probed.get(p)
    if counts is None:
        counts = np.unique(p.sample(PROBE, 0).reshape(PROBE, -1).sum(1))
        _probed[p] = counts
    if len(counts) > 1:
        _variable(p, counts, f"{PROBE} draws")
    return int(counts[0])


def _variable(p: Policy, counts: np.ndarray, where: str) -> None:
    _fail(f"policy {p.spec!r} masks a varying number of tokens per window "
          f"({', '.join(str(int(c)) for c in counts)} in {where}); MAE's ids_keep needs the same "
          "count in every window (cross, random, sync, temporal, extrapolation, sensor, fixed and "
          "per-modality with groups of equal size have one)")


def masks_from_grid(grid: Any, *, layout: str = "modality", device: Any = None,
                    name: str = "masks") -> Masks:
    """MAE's tensors from masks on moca's grid: ``grid`` (N, C, P) bool (True = masked; what
    :meth:`moca.Policy.sample` returns, or a tensor), tokens in ``layout`` order, on
    ``device`` (default: the grid's own if it is a tensor, else cpu). ``name`` names the masks in
    errors."""
    _check_layout(layout)
    if isinstance(grid, torch.Tensor):
        device = grid.device if device is None else device
        grid = grid.detach().cpu().numpy()
    g = np.asarray(grid)
    if g.ndim != 3 or g.shape[0] < 1 or g.dtype != np.bool_:
        _fail(f"{name}: must be an (N, C, P) boolean array, got {g.dtype} {tuple(g.shape)}")
    n, C, P = g.shape
    if layout == "modality":
        m = g.reshape(n, C * P)
    elif layout == "time":
        m = g.transpose(0, 2, 1).reshape(n, P * C)
    else:
        columns = g.any(1)
        if not np.array_equal(columns, g.all(1)):
            _fail(f"{name}: layout 'stacked' (one token per time patch) needs masks of whole time "
                  "columns (sync, temporal, extrapolation); these mask part of a column")
        m = columns
    counts = m.sum(1)
    if counts.min() != counts.max():
        _fail(f"{name}: windows mask {int(counts.min())} to {int(counts.max())} tokens; MAE's "
              "ids_keep needs the same count in every window")
    T = m.shape[1]
    keep = T - int(counts[0])
    # kept tokens first, each group ascending: a stable sort of the 0/1 mask
    ids_shuffle = np.argsort(m, axis=1, kind="stable")
    ids_restore = np.empty_like(ids_shuffle)
    np.put_along_axis(ids_restore, ids_shuffle, np.arange(T)[None, :], axis=1)
    dev = torch.device("cpu") if device is None else torch.device(device)
    return Masks(torch.from_numpy(m.astype(np.float32)).to(dev),
                 torch.from_numpy(ids_restore.astype(np.int64)).to(dev),
                 torch.from_numpy(np.ascontiguousarray(ids_shuffle[:, :keep]).astype(np.int64))
                 .to(dev))


def _device_of(where: Any) -> Optional[torch.device]:
    if where is None:
        return None
    if isinstance(where, torch.Tensor):
        return where.device
    return torch.device(where)


def draw_masks(policy: PolicyLike, n: int, *, seed: int = 0, draw: int = 0,
               device: Any = None, layout: str = "modality", channels: int = 6,
               length: int = 200, patch_length: int = 20,
               ratio: Optional[float] = None) -> Masks:
    """The masks of ``n`` windows drawn by ``policy`` — exactly ``Policy.sample(n, seed,
    draw=draw)``, window i getting mask i — as MAE's ``(mask, ids_restore, ids_keep)`` on
    ``device`` (a device, or a tensor whose device to use; default cpu). ``policy`` is a spec
    string (for windows of ``channels`` x ``length``, ``ratio`` as in :func:`as_policy`) or a
    :class:`moca.Policy`. A batch whose windows mask different counts is a ValueError."""
    _check_layout(layout)
    p = as_policy(policy, channels=channels, length=length, patch_length=patch_length,
                  ratio=ratio)
    g = p.sample(check_int(n, "n"), check_seed(seed, "seed"), draw=check_int(draw, "draw"))
    counts = np.unique(g.reshape(g.shape[0], -1).sum(1))
    if len(counts) > 1:
        _variable(p, counts, f"draw {draw} of seed {seed}")
    return masks_from_grid(g, layout=layout, device=_device_of(device), name=f"policy {p.spec!r}")


class MaskGenerator:
    """Masks for a training loop: call ``k`` (k = ``start``, ``start`` + 1, ...) draws the
    batch's masks from draw ``k`` of ``seed``, i.e. ``Policy.sample(N, seed, draw=k)``, so a run
    is reproducible and resumable (set ``step``).

    ``policy``: a spec string for windows of ``channels`` x ``length`` cut into patches of
    ``patch_length`` (``ratio`` fills in a ratio it does not set), or a :class:`moca.Policy`.
    Every window must mask the same number of tokens (checked on a probe of 256 masks here, a
    ValueError naming the policy otherwise). ``layout``: the model's token order (module
    docstring).

    * ``masks(n, device=None)`` → :class:`Masks` ``(mask, ids_restore, ids_keep)``;
    * ``gen(x, mask_ratio=None)`` → ``(x_masked, mask, ids_restore)`` for tokens ``x`` (N, T, D),
      on ``x``'s device: a drop-in for MAE's ``random_masking(x, mask_ratio)``. ``mask_ratio``
      fills in the ratio of a spec string that sets none (``MaskGenerator("cross")(x, 0.75)``
      masks as ``cross:ratio=0.75``); a ratio in the spec, or a :class:`moca.Policy`, wins.
      moca's default count rule is MAE's (keep ``floor(T * (1 - ratio))``, ``count=keep-floor``),
      so the counts equal ``random_masking``'s except where its bare ``int()`` rounds down (0.55,
      0.8, 0.9 of 60); ``count=mask-floor`` masks ``floor(ratio * T)``;
    * ``len_keep``, ``tokens``, ``policy`` (the :class:`moca.Policy` of the last call).
    """

    def __init__(self, policy: PolicyLike = "cross", *, channels: int = 6, length: int = 200,
                 patch_length: int = 20, seed: int = 0, layout: str = "modality",
                 ratio: Optional[float] = None, start: int = 0) -> None:
        self.layout = _check_layout(layout)
        self.seed = check_seed(seed, "seed")
        self.step = check_int(start, "start")
        if self.step < 0:
            _fail(f"start ({self.step}) must be >= 0")
        self._spec = policy if isinstance(policy, str) else None
        self._grid = (channels, length, patch_length)
        self.policy = self._policy_for(ratio, policy)
        self._count(self.policy)

    def _policy_for(self, ratio: Optional[float], given: Any = None) -> Policy:
        if self._spec is None:
            return self.policy if given is None else as_policy(given)
        C, L, Lp = self._grid
        return as_policy(self._spec, channels=C, length=L, patch_length=Lp, ratio=ratio)

    def _count(self, p: Policy) -> int:
        count = _static_count(p)
        if self.layout == "stacked":
            if count % p.C:
                _fail(f"policy {p.spec!r}: layout 'stacked' needs masks of whole time columns, "
                      f"and {count} masked cells are not a multiple of {p.C} channels")
            return count // p.C
        return count

    @property
    def tokens(self) -> int:
        """Tokens per window: C * P (modality, time) or P (stacked)."""
        p = self.policy
        return p.P if self.layout == "stacked" else p.C * p.P

    @property
    def len_keep(self) -> int:
        """Visible tokens per window."""
        return self.tokens - self._count(self.policy)

    def masks(self, n: int, device: Any = None) -> Masks:
        """The masks of the next step (draw ``step``) for ``n`` windows; advances ``step``."""
        m = draw_masks(self.policy, n, seed=self.seed, draw=self.step, device=device,
                       layout=self.layout)
        self.step += 1
        return m

    def __call__(self, x: torch.Tensor,
                 mask_ratio: Optional[float] = None) -> Tuple[torch.Tensor, torch.Tensor,
                                                              torch.Tensor]:
        if not isinstance(x, torch.Tensor) or x.dim() != 3:
            _fail(f"x must be a (N, T, D) tensor of tokens, got "
                  f"{tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__}")
        if mask_ratio is not None:
            r = float(mask_ratio)
            if not 0.0 < r < 1.0:
                _fail(f"mask_ratio ({r}) must be in (0, 1)")
            if self._spec is not None:
                self.policy = self._policy_for(r)
                self._count(self.policy)
        N, T, D = x.shape
        if T != self.tokens:
            _fail(f"x has {T} tokens per window, the policy's grid {self.policy.C} x "
                  f"{self.policy.P} in layout {self.layout!r} has {self.tokens}")
        m = self.masks(N, device=x.device)
        x_masked = torch.gather(x, 1, m.ids_keep.unsqueeze(-1).expand(-1, -1, D))
        return x_masked, m.mask, m.ids_restore

    def __repr__(self) -> str:
        return (f"moca.torch.MaskGenerator({self.policy.spec!r}, layout={self.layout!r}, "
                f"seed={self.seed}, step={self.step})")


def view_features(encoder: Any, x: torch.Tensor, masks: Masks) -> Tuple[np.ndarray, np.ndarray]:
    """The features of the visible and the masked view of windows ``x`` (N, C, L): the mean over
    each view's tokens of the encoder's output (the cls row excluded), as
    :meth:`moca.Encoder.embed` computes them. ``encoder`` is a module with
    ``forward_encoder(x, ids_keep)`` returning (N, 1 + K, D) (:mod:`moca.torch_model`) or a
    callable ``f(x, ids) -> (N, K, D)`` (the tokens ``ids`` only). Runs under ``torch.no_grad``
    and returns float64 NumPy arrays (N, D) on the cpu; the model's mode is not changed."""
    ids_u, ids_m = masks.ids_keep, masks.ids_masked()
    with torch.no_grad():
        if hasattr(encoder, "forward_encoder"):
            zu = encoder.forward_encoder(x, ids_u)[:, 1:, :].mean(1)
            zm = encoder.forward_encoder(x, ids_m)[:, 1:, :].mean(1)
        elif callable(encoder):
            zu, zm = encoder(x, ids_u).mean(1), encoder(x, ids_m).mean(1)
        else:
            raise TypeError(f"moca.torch: encoder ({encoder!r}) must have forward_encoder(x, "
                            "ids_keep) or be callable f(x, ids)")
        return (zu.detach().to("cpu", torch.float64).numpy(),
                zm.detach().to("cpu", torch.float64).numpy())


class ScoreHook:
    """Scores masking during training, every ``every`` steps, without touching autograd.

    * ``hook(step, windows)`` → on a due step (``step % every == 0``) the document of
      ``moca.score(windows, schemes, **options)`` (:meth:`moca.ScoreResult.to_dict`: schemes
      with score, std_error, null_level, ...), else None. ``windows`` is a tensor (N, C, L),
      detached and copied to the cpu; ``options`` are :func:`moca.score`'s keywords.
    * ``hook.features(step, Zu, Zm)`` → on a due step the canonical correlation sigma_1 of a
      torch encoder's visible and masked features (N, D each, e.g. from :func:`view_features`)
      after PCA to ``pca`` components per view — the statistic of ``moca.score``'s ``cca``
      estimator, by :class:`moca.CCA`: ``{"step", "score", "null_level", "pca", "n"}``
      (null_level: sigma_1 of independent views of that size).
    * ``hook.history``: ``(step, result)`` of every scoring.
    """

    def __init__(self, schemes: Union[PolicyLike, Sequence[PolicyLike]] = ("cross", "sync"), *,
                 every: int = 100, pca: int = 50, **options: Any) -> None:
        self.every = check_int(every, "every")
        if self.every < 1:
            _fail(f"every ({self.every}) must be >= 1")
        self.schemes = [schemes] if isinstance(schemes, (str, Policy)) else list(schemes)
        self.pca = check_int(pca, "pca")
        self.options = dict(options)
        self.history: List[Tuple[int, Dict[str, Any]]] = []

    def due(self, step: int) -> bool:
        """Whether ``step`` is a scoring step."""
        return step % self.every == 0

    def __call__(self, step: int, windows: Any) -> Optional[Dict[str, Any]]:
        if not self.due(step):
            return None
        with torch.no_grad():
            X = _cpu_array(windows, "windows", np.float32)
        doc = _score(X, self.schemes, pca=self.pca, **self.options).to_dict()
        self.history.append((step, doc))
        return doc

    def features(self, step: int, Zu: Any, Zm: Any) -> Optional[Dict[str, Any]]:
        if not self.due(step):
            return None
        with torch.no_grad():
            U, M = _cpu_array(Zu, "Zu", np.float64), _cpu_array(Zm, "Zm", np.float64)
        k = min(self.pca, U.shape[1], M.shape[1])
        cca = CCA(n_components=1, pca=k, weights=False).fit(U, M)
        out = {"step": int(step), "score": float(cca.correlations_[0]),
               "null_level": float(cca.null_level_), "pca": k, "n": int(U.shape[0])}
        self.history.append((step, out))
        return out


def _cpu_array(t: Any, name: str, dtype: Any) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        t = t.detach().to("cpu").numpy()
    return np.asarray(t, dtype=dtype)

