"""moca's MoCA models as plain PyTorch modules, written here from docs/model.md and
docs/interop.md (no third-party model code), with the key names of the MAE/timm layout that
:func:`moca.interop.export_pytorch` writes. Needs PyTorch (1.13 or 2.x); moca itself does not.

    import torch
    from moca.torch_model import from_export
    model = from_export("mae.pth")          # MocaMAE or MocaClassifier, weights loaded (strict)
    latent = model.forward_encoder(x)       # x: (B, C, L) float32

Architecture: windows (B, C, L) are cut into tokens by ``patch_embed.proj``, a Conv2d with a
1 x Lp kernel (modality layout: one input channel, token c*P + p; stacked layout: C input
channels, one token per time patch); fixed positions are added, the visible tokens (``ids_keep``)
kept, the cls token prepended; pre-norm blocks x += Attn(LN(x)); x += MLP(LN(x)) (qkv with bias,
softmax(q k^T / sqrt(d)) v per head, exact GELU, LayerNorm eps 1e-6) and a final LayerNorm. The
MAE decoder embeds the latent, fills the masked positions with ``mask_token`` (``ids_restore``),
adds positions, runs its blocks, normalises and predicts each token's samples. A classifier pools
the cls token of the final norm and applies ``head`` (a linear probe: BatchNorm1d without affine
parameters, then Linear).
"""
from __future__ import annotations

import json
from typing import Any, Dict, Optional, Tuple

import torch
from torch import nn

__all__ = ["MocaMAE", "MocaClassifier", "from_export", "patchify", "unpatchify", "mask_ids"]


def patchify(x: torch.Tensor, layout: str, patch_length: int) -> torch.Tensor:
    """(B, C, L) -> tokens: (B, C*P, Lp) for the modality layout, (B, P, C*Lp) for stacked."""
    B, C, L = x.shape
    P = L // patch_length
    if layout == "modality":
        return x.reshape(B, C * P, patch_length)
    return x.reshape(B, C, P, patch_length).permute(0, 2, 1, 3).reshape(B, P, C * patch_length)


def unpatchify(t: torch.Tensor, layout: str, channels: int, patch_length: int) -> torch.Tensor:
    """Inverse of :func:`patchify`."""
    B = t.shape[0]
    if layout == "modality":
        return t.reshape(B, channels, -1)
    P = t.shape[1]
    return t.reshape(B, P, channels, patch_length).permute(0, 2, 1, 3).reshape(B, channels, -1)


def mask_ids(mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """(B, T) bool mask (True = masked, equal counts per row) -> (ids_keep ascending, ids_restore)
    as MAE's ``import_mask`` path builds them with a stable sort."""
    m = mask.to(torch.int64)
    ids_shuffle = torch.sort(m, dim=1, stable=True).indices
    ids_restore = torch.argsort(ids_shuffle, dim=1)
    keep = int((m == 0).sum(1)[0])
    return ids_shuffle[:, :keep], ids_restore


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim, bias=True)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, N, D = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = ((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(B, N, D))


class Mlp(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, mlp_ratio: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, dim * mlp_ratio)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class _Encoder(nn.Module):
    """The encoder's parameters at the top level (timm names), shared by both models."""

    def _build_encoder(self, cfg: Dict[str, Any]) -> None:
        self.cfg = dict(cfg)
        C, L, Lp, D = cfg["channels"], cfg["length"], cfg["patch_length"], cfg["embed_dim"]
        self.layout = cfg["layout"]
        self.patch_length = Lp
        self.channels = C
        cin = 1 if self.layout == "modality" else C
        self.tokens = C * (L // Lp) if self.layout == "modality" else L // Lp
        self.patch_embed = nn.Module()
        self.patch_embed.proj = nn.Conv2d(cin, D, kernel_size=(1, Lp), stride=(1, Lp))
        self.cls_token = nn.Parameter(torch.zeros(1, 1, D))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.tokens + 1, D), requires_grad=False)
        self.blocks = nn.ModuleList(
            [Block(D, cfg["num_heads"], cfg["mlp_ratio"]) for _ in range(cfg["depth"])])
        self.norm = nn.LayerNorm(D, eps=1e-6)

    def embed_tokens(self, x: torch.Tensor) -> torch.Tensor:
        """(B, C, L) -> (B, T, D) patch embeddings, token order as moca's."""
        B, C, L = x.shape
        if self.layout == "modality":
            h = self.patch_embed.proj(x.reshape(B, 1, C, L))   # (B, D, C, P)
        else:
            h = self.patch_embed.proj(x.reshape(B, C, 1, L))   # (B, D, 1, P)
        return h.flatten(2).transpose(1, 2)

    def forward_encoder(self, x: torch.Tensor,
                        ids_keep: Optional[torch.Tensor] = None) -> torch.Tensor:
        """(B, C, L) -> (B, 1 + K, D) after the final norm; row 0 is the cls token."""
        h = self.embed_tokens(x) + self.pos_embed[:, 1:, :]
        if ids_keep is not None:
            h = torch.gather(h, 1, ids_keep.unsqueeze(-1).expand(-1, -1, h.shape[2]))
        cls = (self.cls_token + self.pos_embed[:, :1, :]).expand(h.shape[0], -1, -1)
        h = torch.cat([cls, h], dim=1)
        for blk in self.blocks:
            h = blk(h)
        return self.norm(h)


class MocaMAE(_Encoder):
    """The masked autoencoder. ``cfg`` is moca's architecture (the export's ``moca['model']``):
    channels, length, patch_length, layout, embed_dim, depth, num_heads, decoder_embed_dim,
    decoder_depth, decoder_num_heads, mlp_ratio."""

    def __init__(self, cfg: Dict[str, Any]) -> None:
        super().__init__()
        self._build_encoder(cfg)
        D, Dd = cfg["embed_dim"], cfg["decoder_embed_dim"]
        token_dim = cfg["patch_length"] * (1 if cfg["layout"] == "modality" else cfg["channels"])
        self.decoder_embed = nn.Linear(D, Dd)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, Dd))
        self.decoder_pos_embed = nn.Parameter(torch.zeros(1, self.tokens + 1, Dd),
                                              requires_grad=False)
        self.decoder_blocks = nn.ModuleList(
            [Block(Dd, cfg["decoder_num_heads"], cfg["mlp_ratio"])
             for _ in range(cfg["decoder_depth"])])
        self.decoder_norm = nn.LayerNorm(Dd, eps=1e-6)
        self.decoder_pred = nn.Linear(Dd, token_dim)

    def forward_decoder(self, latent: torch.Tensor, ids_restore: torch.Tensor) -> torch.Tensor:
        """(B, 1 + K, D) latent -> (B, T, token_dim) predictions of every token."""
        h = self.decoder_embed(latent)
        B, T, Dd = h.shape[0], ids_restore.shape[1], h.shape[2]
        seq = torch.cat([h[:, 1:, :], self.mask_token.expand(B, T - (h.shape[1] - 1), Dd)], 1)
        seq = torch.gather(seq, 1, ids_restore.unsqueeze(-1).expand(-1, -1, Dd))
        h = torch.cat([h[:, :1, :], seq], 1) + self.decoder_pos_embed
        for blk in self.decoder_blocks:
            h = blk(h)
        return self.decoder_pred(self.decoder_norm(h))[:, 1:, :]

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Reconstruction (B, C, L) of windows x under a (B, T) bool mask (True = masked)."""
        ids_keep, ids_restore = mask_ids(mask)
        pred = self.forward_decoder(self.forward_encoder(x, ids_keep), ids_restore)
        return unpatchify(pred, self.layout, self.channels, self.patch_length)


class MocaClassifier(_Encoder):
    """The ViT classifier on the encoder: cls token of the final norm, then ``head``."""

    def __init__(self, cfg: Dict[str, Any], classes: int, probe: bool = False) -> None:
        super().__init__()
        self._build_encoder(cfg)
        D = cfg["embed_dim"]
        if probe:
            self.head = nn.Sequential(nn.BatchNorm1d(D, affine=False, eps=1e-6),
                                      nn.Linear(D, classes))
        else:
            self.head = nn.Linear(D, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, C, L) -> (B, classes) logits."""
        return self.head(self.forward_encoder(x)[:, 0, :])


def from_export(path: str, map_location: str = "cpu") -> nn.Module:
    """The module of a :func:`moca.interop.export_pytorch` file, weights loaded with
    ``strict=True``, in eval mode. A ``.pth`` is read with ``torch.load(weights_only=True)``, a
    safetensors export (told by its first bytes) with :func:`moca.interop.load_safetensors`."""
    from . import interop  # NumPy only; the safetensors reader
    if interop._is_safetensors(path):
        tensors, meta = interop.load_safetensors(path)
        if meta.get("moca_format") != interop.SAFETENSORS_EXPORT_FORMAT:
            raise ValueError(f"{path}: a safetensors file without moca's record (metadata "
                             f"moca_format={meta.get('moca_format')!r}): import it with "
                             "moca.interop.import_pytorch")
        state = {k: torch.from_numpy(v).to(map_location) for k, v in tensors.items()}
        info = {k: (json.loads(v) if k in ("class_names",) else v) for k, v in meta.items()}
        obj = {"model": state, "moca": info}
    else:
        obj = torch.load(path, map_location=map_location, weights_only=True)
    info = obj["moca"]
    cfg = json.loads(info["model"])
    if info["kind"] == "mae":
        model: nn.Module = MocaMAE(cfg)
    else:
        model = MocaClassifier(cfg, len(info["class_names"]), info.get("head") == "probe")
    model.load_state_dict(obj["model"], strict=True)
    return model.eval()
