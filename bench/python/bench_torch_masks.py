#!/usr/bin/python3
"""Per-step overhead of drawing masks with moca.torch, against the training step of the reference
MAE (moca.torch_model.MocaMAE) and against MAE's own torch random_masking.

    PYTHONPATH=build/python OMP_WAIT_POLICY=passive /usr/bin/python3 \\
        bench/python/bench_torch_masks.py [--preset cpu-small] [--batch 50] [--device cpu]

Geometry: batch 50 of 6 x 200 windows, patches of 20 samples (the paper's: 60 tokens), policy
cross:ratio=0.75 (45 masked, 15 kept). Four things are timed, interleaved in each round so
that they share the machine's load, and their medians over the rounds reported:

* ``moca``: ``MaskGenerator(...)(tokens, 0.75)`` — Policy.sample of the batch's masks (C++),
  the index tensors on the device and the gather of the visible tokens (the drop-in for the
  next);
* ``torch``: MAE's ``random_masking(tokens, 0.75)`` (facebookresearch/mae models_mae.py:
  noise, two argsorts, gather; re-typed here), on the same tokens;
* ``masks``: ``MaskGenerator.masks(50)`` alone (mask, ids_restore, ids_keep; no gather);
* ``step``: one training step of MocaMAE with moca's masks (forward, MSE over the masked
  tokens, backward, AdamW step), the masks drawn inside it.

Presets (embed/depth/heads, decoder): paper-base 768/12/12, 512/8/16; tiny 192/12/3,
128/4/4; cpu-small 128/4/4, 64/2/4 (moca's presets, docs/model.md). Prints one JSON line with
the medians (ms: ``moca_ms``, ``moca_masks_only_ms``, ``torch_random_masking_ms``,
``step_ms``), ``overhead_of_step`` = moca / step and ``moca_over_torch`` = moca / torch.
On CUDA every timed call ends with torch.cuda.synchronize().
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

PRESETS = {
    "paper-base": dict(embed_dim=768, depth=12, num_heads=12, decoder_embed_dim=512,
                       decoder_depth=8, decoder_num_heads=16),
    "tiny": dict(embed_dim=192, depth=12, num_heads=3, decoder_embed_dim=128, decoder_depth=4,
                 decoder_num_heads=4),
    "cpu-small": dict(embed_dim=128, depth=4, num_heads=4, decoder_embed_dim=64,
                      decoder_depth=2, decoder_num_heads=4),
}


def random_masking(torch, x, mask_ratio):
    """MAE's per-sample random masking by argsort of uniform noise (models_mae.py)."""
    N, L, D = x.shape
    len_keep = int(L * (1 - mask_ratio))
    noise = torch.rand(N, L, device=x.device)
    ids_shuffle = torch.argsort(noise, dim=1)
    ids_restore = torch.argsort(ids_shuffle, dim=1)
    ids_keep = ids_shuffle[:, :len_keep]
    x_masked = torch.gather(x, dim=1, index=ids_keep.unsqueeze(-1).repeat(1, 1, D))
    mask = torch.ones([N, L], device=x.device)
    mask[:, :len_keep] = 0
    mask = torch.gather(mask, dim=1, index=ids_restore)
    return x_masked, mask, ids_restore


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="cpu-small")
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--rounds", type=int, default=20, help="timed rounds (after 3 warm-up)")
    ap.add_argument("--draws", type=int, default=20,
                    help="mask draws timed per round (their mean is the round's figure)")
    ap.add_argument("--policy", default="cross:ratio=0.75")
    a = ap.parse_args()
    import torch
    import moca
    import moca.torch as mt
    from moca.torch_model import MocaMAE

    dev = torch.device(a.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    C, L, Lp = 6, 200, 20
    cfg = dict(channels=C, length=L, patch_length=Lp, layout="modality", mlp_ratio=4,
               **PRESETS[a.preset])
    torch.manual_seed(0)
    model = MocaMAE(cfg).to(dev).train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((a.batch, C, L)).astype(np.float32)).to(dev)
    tokens = torch.randn(a.batch, C * (L // Lp), cfg["embed_dim"], device=dev)
    gen = mt.MaskGenerator(a.policy, channels=C, length=L, patch_length=Lp, seed=0)
    step_gen = mt.MaskGenerator(a.policy, channels=C, length=L, patch_length=Lp, seed=0)

    def draw_moca():
        out = gen(tokens, 0.75)
        sync()
        return out

    def masks_only():
        out = gen.masks(a.batch, device=dev)
        sync()
        return out

    def draw_torch():
        out = random_masking(torch, tokens, 0.75)
        sync()
        return out

    def step():
        m = step_gen.masks(a.batch, device=dev)
        pred = model.forward_decoder(model.forward_encoder(x, m.ids_keep), m.ids_restore)
        target = x.reshape(a.batch, C * (L // Lp), Lp)
        loss = (((pred - target) ** 2).mean(-1) * m.mask).sum() / m.mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sync()

    def timed(f, k):
        t0 = time.perf_counter()
        for _ in range(k):
            f()
        return (time.perf_counter() - t0) / k * 1e3

    for _ in range(3):
        timed(draw_moca, a.draws), timed(draw_torch, a.draws), timed(step, 1)
    rows = {"moca": [], "masks": [], "torch": [], "step": []}
    for _ in range(a.rounds):
        rows["moca"].append(timed(draw_moca, a.draws))
        rows["masks"].append(timed(masks_only, a.draws))
        rows["torch"].append(timed(draw_torch, a.draws))
        rows["step"].append(timed(step, 1))
    med = {k: statistics.median(v) for k, v in rows.items()}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(json.dumps({
        "preset": a.preset, "batch": a.batch, "tokens": C * (L // Lp), "policy": gen.policy.spec,
        "device": str(dev), "rounds": a.rounds, "draws_per_round": a.draws,
        "moca_ms": round(med["moca"], 4), "moca_masks_only_ms": round(med["masks"], 4),
        "torch_random_masking_ms": round(med["torch"], 4),
        "step_ms": round(med["step"], 3),
        "overhead_of_step": round(med["moca"] / med["step"], 5),
        "moca_over_torch": round(med["moca"] / med["torch"], 3),
        "torch": torch.__version__, "numpy": np.__version__, "moca": moca.__version__,
        "python": platform.python_version(), "threads": torch.get_num_threads(),
        "cpu": platform.processor() or platform.machine(),
        "gpu": torch.cuda.get_device_name(dev) if dev.type == "cuda" else None,
        "loadavg_1min": load}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
