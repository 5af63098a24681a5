#!/usr/bin/env python3
"""PyTorch reference for bench_model_step: the same MoCA pre-training step in plain PyTorch.

A straightforward implementation of the architecture src/moca/model builds (written here, not taken
from the authors' code): modality x time-patch tokens, a linear patch embedding, fixed 2-D
sin-cos positions, a cls token, pre-norm transformer blocks made of the usual PyTorch modules
(nn.LayerNorm, nn.MultiheadAttention, nn.Linear, GELU MLP with ratio 4), MAE-style encoding of
the visible tokens only, a lighter decoder with a learned mask token, and the MSE loss on all
patches. One step = forward, backward and AdamW (betas 0.9/0.95, weight decay 0.05 on matrices),
as bench_model_step times it: batch 50 windows of 6 x 200, patch 20 (60 tokens), 75 % masked.

Usage: pytorch_step.py [--preset tiny|paper-base|cpu-small] [--device cpu|cuda]
                       [--precision fp32|bf16] [--threads 2] [--batch 50] [--reps 20]
                       [--warmup 3] [--ratio 0.75] [--mode eager|compile|reduce-overhead]
                       [--no-tf32] [--group N]
--mode compile (or --compile) runs the model (forward and, through AOTAutograd, backward) as
torch.compile(model) with the default inductor backend (PyTorch >= 2.0; on CPU it generates C++
and needs a C++ compiler); --mode reduce-overhead as torch.compile(model,
mode="reduce-overhead"), which on CUDA also replays forward and backward as CUDA graphs. The
compilation happens in the warm-up steps, which are not timed. On CUDA the optimiser is
PyTorch's fused AdamW (fused=True, its fastest), float32 products use TF32 unless --no-tf32
(torch.set_float32_matmul_precision("high"), as moca's default), and steps are timed in groups
of --group (default 10) between synchronisations, as bench_model_step times them.
Prints the median step time like bench_model_step, so bench/model/pair_step.sh can put the two
side by side.
"""
import argparse
import math
import statistics
import sys
import time

import torch
from torch import nn

PRESETS = {  # embed, depth, heads, decoder embed, decoder depth, decoder heads
    "paper-base": (768, 12, 12, 512, 8, 16),
    "tiny": (192, 12, 3, 128, 4, 4),
    "cpu-small": (128, 4, 4, 64, 2, 4),
}


def sincos_1d(dim, pos):
    omega = 1.0 / 10000 ** (torch.arange(dim // 2, dtype=torch.float64) / (dim / 2.0))
    out = pos.double()[:, None] * omega[None, :]
    return torch.cat([torch.sin(out), torch.cos(out)], dim=1)


def sincos_2d(dim, rows, cols):
    """Fixed 2-D table (cls row of zeros first): half the features encode the modality row,
    half the time column."""
    r, c = torch.meshgrid(torch.arange(rows), torch.arange(cols), indexing="ij")
    table = torch.cat([sincos_1d(dim // 2, r.reshape(-1)), sincos_1d(dim // 2, c.reshape(-1))], 1)
    return torch.cat([torch.zeros(1, dim, dtype=torch.float64), table], 0).float()[None]


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class MocaMae(nn.Module):
    def __init__(self, preset, channels=6, length=200, patch=20):
        super().__init__()
        d, depth, heads, dd, ddepth, dheads = PRESETS[preset]
        self.channels, self.patch, self.patches = channels, patch, length // patch
        self.patch_embed = nn.Linear(patch, d)
        self.cls_token = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.register_buffer("pos", sincos_2d(d, channels, self.patches))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(d, eps=1e-6)
        self.dec_embed = nn.Linear(d, dd)
        self.mask_token = nn.Parameter(torch.randn(1, 1, dd) * 0.02)
        self.register_buffer("dec_pos", sincos_2d(dd, channels, self.patches))
        self.dec_blocks = nn.ModuleList(Block(dd, dheads) for _ in range(ddepth))
        self.dec_norm = nn.LayerNorm(dd, eps=1e-6)
        self.pred = nn.Linear(dd, patch)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x, ids_keep, ids_restore):
        b = x.shape[0]
        tokens = x.reshape(b, -1, self.patch)  # modality-major: token c * P + p
        t = tokens.shape[1]
        e = self.patch_embed(tokens) + self.pos[:, 1:]
        k = ids_keep.shape[1]
        e = e.gather(1, ids_keep[..., None].expand(b, k, e.shape[2]))
        cls = (self.cls_token + self.pos[:, :1]).expand(b, 1, -1)
        h = torch.cat([cls, e], 1)
        for blk in self.blocks:
            h = blk(h)
        h = self.dec_embed(self.norm(h))
        seq = torch.cat([h[:, 1:], self.mask_token.expand(b, t - k, -1)], 1)
        seq = seq.gather(1, ids_restore[..., None].expand(b, t, seq.shape[2]))
        h = torch.cat([h[:, :1] + self.dec_pos[:, :1], seq + self.dec_pos[:, 1:]], 1)
        for blk in self.dec_blocks:
            h = blk(h)
        pred = self.pred(self.dec_norm(h))[:, 1:]
        return ((pred - tokens) ** 2).mean()  # loss on all patches (the paper's)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="tiny", choices=sorted(PRESETS))
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--ratio", type=float, default=0.75)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--mode", default="eager", choices=["eager", "compile", "reduce-overhead"])
    ap.add_argument("--compile", action="store_true", help="the same as --mode compile")
    ap.add_argument("--no-tf32", action="store_true", help="CUDA fp32: full float32 products")
    ap.add_argument("--group", type=int, default=0,
                    help="steps timed between synchronisations (0 = 10 on CUDA, 1 on CPU)")
    a = ap.parse_args()
    if a.compile:
        a.mode = "compile"
    a.compile = a.mode != "eager"
    if a.compile and not hasattr(torch, "compile"):
        sys.exit(f"pytorch_step.py: --compile needs PyTorch >= 2.0 (this is {torch.__version__})")
    if a.compile and a.warmup < 1:
        sys.exit(f"pytorch_step.py: --warmup ({a.warmup}) must be >= 1 with --compile "
                 "(the first step compiles)")
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("pytorch_step.py: --device cuda, but this PyTorch sees no CUDA device")
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    if cuda:
        torch.set_float32_matmul_precision("highest" if a.no_tf32 else "high")
    model = MocaMae(a.preset).to(dev).train()
    if a.mode == "eager":
        step_model = model
    elif a.mode == "compile":
        step_model = torch.compile(model)
    else:
        step_model = torch.compile(model, mode="reduce-overhead")
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and not n.endswith(".bias")]
    rest = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and not n.endswith(".bias"))]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                             {"params": rest, "weight_decay": 0.0}], lr=5e-4, betas=(0.9, 0.95),
                            **({"fused": True} if cuda else {}))
    t = model.channels * model.patches
    keep = t - math.floor(a.ratio * t)
    x = torch.randn(a.batch, model.channels, model.patches * model.patch, device=dev)
    noise = torch.rand(a.batch, t, device=dev)
    ids_shuffle = torch.argsort(noise, dim=1)
    ids_keep = ids_shuffle[:, :keep].sort(dim=1).values
    # the decoder restores visible tokens in ascending order, then the masked ones
    order = torch.cat([ids_keep, ids_shuffle[:, keep:]], 1)
    ids_restore = torch.argsort(order, dim=1)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    group = a.group if a.group > 0 else (10 if cuda else 1)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            out = step_model(x, ids_keep, ids_restore)
        out.backward()
        opt.step()
        return out

    for _ in range(a.warmup):
        loss = step()
    times = []
    for _ in range(max(1, -(-a.reps // group))):
        sync()
        t0 = time.perf_counter()
        for _ in range(group):
            loss = step()
        sync()
        times.append((time.perf_counter() - t0) / group)
    mode = {"eager": "eager", "compile": "compiled (inductor)",
            "reduce-overhead": "compiled (inductor, reduce-overhead)"}[a.mode]
    tf32 = ", tf32" if cuda and a.precision == "fp32" and not a.no_tf32 else ""
    print(f"pytorch {torch.__version__} preset {a.preset}, batch {a.batch}, tokens {t}, visible "
          f"{keep}, threads {torch.get_num_threads()}, {a.precision}{tf32}, {a.device}, {mode}, "
          f"{group} steps per timed group")
    print(f"step median {statistics.median(times) * 1e3:.2f} ms (min {min(times) * 1e3:.2f} ms) "
          f"over {len(times) * group} steps; loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
