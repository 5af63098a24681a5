#!/usr/bin/python3
"""moca inside a PyTorch training loop: the reference MAE (moca.torch_model.MocaMAE) trained for a
few steps with cross-modal masks (cross:ratio=0.75) drawn by moca.torch, and its encoder's
visible/masked features scored every few steps.

    PYTHONPATH=build/python /usr/bin/python3 examples/torch_training_loop.py   # repository root

Needs PyTorch (Debian: python3-torch; or pip install torch). Data: moca's built-in generator of
synthetic IMU windows (6 channels x 200 samples), no files. About 10 s on 2 CPU cores.
"""
import math
import sys

import numpy as np
import torch

import moca
import moca.torch as mt
from moca.torch_model import MocaMAE


def sincos_positions(tokens: int, dim: int) -> torch.Tensor:
    """(1, 1 + tokens, dim) fixed positions of the authors' code (a 1-D sin-cos code of the
    token index c * P + p on a 1 x T grid; row 0, the cls token's, zero)."""
    q = dim // 4
    omega = 1.0 / 10000 ** (np.arange(q, dtype=np.float64) / q)
    p = np.arange(tokens, dtype=np.float64)[:, None] * omega[None, :]
    rows = np.concatenate([np.sin(p), np.cos(p), np.zeros((tokens, q)),
                           np.ones((tokens, q))], 1)
    return torch.from_numpy(np.concatenate([np.zeros((1, dim)), rows])[None].astype(np.float32))


def main() -> int:
    torch.manual_seed(0)
    X, _, _, meta = moca.data.load("generator", windows=400, seed=0)   # (400, 6, 200) float32
    C, L, Lp = X.shape[1], X.shape[2], 20
    cfg = dict(channels=C, length=L, patch_length=Lp, layout="modality", embed_dim=64, depth=2,
               num_heads=4, decoder_embed_dim=32, decoder_depth=1, decoder_num_heads=4,
               mlp_ratio=4)
    model = MocaMAE(cfg).train()
    with torch.no_grad():
        model.pos_embed.copy_(sincos_positions(model.tokens, cfg["embed_dim"]))
        model.decoder_pos_embed.copy_(sincos_positions(model.tokens, cfg["decoder_embed_dim"]))
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)

    device = torch.device("cpu")              # or "cuda": the masks follow the batch's device
    x_all = torch.from_numpy((X - X.mean((0, 2), keepdims=True)) / X.std((0, 2), keepdims=True))
    gen = mt.MaskGenerator("cross:ratio=0.75", channels=C, length=L, patch_length=Lp, seed=0)
    hook = mt.ScoreHook(every=10, pca=10)     # CCA sigma_1 of the encoder's two views
    probe = x_all[:200].to(device)            # fixed windows to score the features on
    batch, steps = 50, 30
    for step in range(steps):
        i = (step * batch) % len(x_all)
        x = x_all[i:i + batch].to(device)
        mask, ids_restore, ids_keep = gen.masks(x.shape[0], device=x.device)
        pred = model.forward_decoder(model.forward_encoder(x, ids_keep), ids_restore)
        target = x.reshape(x.shape[0], -1, Lp)                 # tokens c * P + p
        loss = (((pred - target) ** 2).mean(-1) * mask).sum() / mask.sum()   # masked tokens
        opt.zero_grad()
        loss.backward()
        opt.step()
        if hook.due(step):
            pm = mt.draw_masks(gen.policy, len(probe), seed=1, device=device)
            s = hook.features(step, *mt.view_features(model, probe, pm))
            print(f"step {step:2d}  loss {loss.item():.4f}  masked tokens "
                  f"{int(mask[0].sum())}/{mask.shape[1]}  "
                  f"sigma_1 {s['score']:.3f} (null {s['null_level']:.3f})")
    print(f"step {steps - 1:2d}  loss {loss.item():.4f}")
    assert math.isfinite(loss.item()) and gen.step == steps
    # the policies themselves, scored on the data (moca.score; independent of the model)
    r = mt.ScoreHook(["cross", "sync"], every=1, pca=10, draws=5, features="patch-mean")(0, probe)
    print({s["spec"]: round(s["score"], 3) for s in r["schemes"]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
