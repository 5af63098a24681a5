"""moca.torch: moca's policies as MAE's masking tensors, and the scoring hook.

Known answers: the masks are Policy.sample's (the library's draws, tested against the C++
stream elsewhere); the tensors are checked against MAE's own construction from a mask
(facebookresearch/mae models_mae.py random_masking: ids_restore = argsort(ids_shuffle),
ids_keep = ids_shuffle[:, :len_keep], mask = gather([0]*len_keep + [1]*rest, ids_restore)),
recomputed here with torch.argsort / gather / nonzero; the feature score against sigma_1 of
PCA + CCA computed with numpy's SVD.
"""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import moca

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                reason="PyTorch is not installed")
torch = mt = None  # imported by _torch (importing torch at collection would change the
# process's OpenMP threads for the tests that compare BLAS results with the tools bit for bit)


@pytest.fixture(autouse=True)
def _torch():
    global torch, mt
    import torch as t
    import moca.torch as m
    torch, mt = t, m


def mae_reference(mask):
    """MAE's tensors rebuilt from a (N, T) 0/1 mask with torch alone: the kept positions in
    ascending order (nonzero), then the masked ones; ids_restore their inverse permutation."""
    N, T = mask.shape
    rows_keep = [torch.nonzero(mask[i] == 0).flatten() for i in range(N)]
    rows_mask = [torch.nonzero(mask[i] == 1).flatten() for i in range(N)]
    ids_shuffle = torch.stack([torch.cat([k, m]) for k, m in zip(rows_keep, rows_mask)])
    ids_restore = torch.argsort(ids_shuffle, dim=1)
    len_keep = len(rows_keep[0])
    ref_mask = torch.ones(N, T)
    ref_mask[:, :len_keep] = 0
    return ids_shuffle[:, :len_keep], ids_restore, torch.gather(ref_mask, 1, ids_restore)


@pytest.mark.parametrize("spec,masked", [("cross:ratio=0.75", 45), ("cross:ratio=0.5", 30),
                                         ("sync", 48), ("temporal", 42), ("sensor:keep=1", 50),
                                         ("random", 42), ("per-modality", 24)])
def test_masks_equal_policy_sample_and_mae_invariants(spec, masked):
    p = moca.policy(spec)
    m = mt.draw_masks(p, 50, seed=7, draw=3)
    grid = p.sample(50, 7, draw=3)
    assert m.mask.dtype == torch.float32 and m.ids_keep.dtype == torch.int64
    assert m.ids_restore.dtype == torch.int64
    assert m.mask.shape == (50, 60) and m.ids_restore.shape == (50, 60)
    assert m.ids_keep.shape == (50, 60 - masked)
    np.testing.assert_array_equal(m.mask.numpy().reshape(50, 6, 10), grid.astype(np.float32))
    assert (m.mask.sum(1) == masked).all()
    keep, restore, mask = mae_reference(m.mask)
    assert torch.equal(m.ids_keep, keep)
    assert torch.equal(m.ids_restore, restore)
    assert torch.equal(m.mask, mask)
    # the same masks from a spec string, and as the reference model's mask_ids builds them
    s = mt.draw_masks(spec, 50, seed=7, draw=3)
    assert all(torch.equal(a, b) for a, b in zip(s, m))
    from moca.torch_model import mask_ids
    k2, r2 = mask_ids(m.mask.bool())
    assert torch.equal(k2, m.ids_keep) and torch.equal(r2, m.ids_restore)


def test_gather_and_unshuffle_reproduce_mae():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 60, 5, generator=g)
    gen = mt.MaskGenerator("cross:ratio=0.75", seed=1)
    x_masked, mask, ids_restore = gen(x, 0.75)
    assert x_masked.shape == (8, 15, 5)
    # the kept tokens in token order, by boolean indexing
    assert torch.equal(x_masked, x[mask == 0].reshape(8, 15, 5))
    # MAE's decoder: append mask tokens, un-shuffle with ids_restore
    tok = torch.full((8, 45, 5), -1.0)
    full = torch.gather(torch.cat([x_masked, tok], 1), 1,
                        ids_restore.unsqueeze(-1).expand(-1, -1, 5))
    assert torch.equal(full[mask == 0], x[mask == 0])
    assert (full[mask == 1] == -1.0).all()


def small_mae(seed):
    """moca.torch_model's MAE, small and randomly initialised (seeded)."""
    from moca.torch_model import MocaMAE
    cfg = dict(channels=6, length=200, patch_length=20, layout="modality", embed_dim=16,
               depth=1, num_heads=2, decoder_embed_dim=8, decoder_depth=1,
               decoder_num_heads=2, mlp_ratio=2)
    torch.manual_seed(seed)
    return MocaMAE(cfg)


def test_reference_mae_forward_with_these_tensors():
    model = small_mae(0).eval()
    x = torch.randn(4, 6, 200)
    m = mt.draw_masks("cross:ratio=0.75", 4, seed=3)
    with torch.no_grad():
        ours = model.forward_decoder(model.forward_encoder(x, m.ids_keep), m.ids_restore)
        ref = model(x, m.mask.bool())
    assert torch.equal(ours.reshape(4, 6, 200), ref)


def test_generator_steps_are_draws_and_deterministic():
    gen = mt.MaskGenerator("cross", seed=11)
    first = [gen.masks(20) for _ in range(3)]
    assert gen.step == 3
    for k, m in enumerate(first):
        assert torch.equal(m.mask, mt.draw_masks("cross", 20, seed=11, draw=k).mask)
    again = mt.MaskGenerator("cross", seed=11)
    assert all(torch.equal(a.mask, again.masks(20).mask) for a in first)
    resumed = mt.MaskGenerator("cross", seed=11, start=2)
    assert torch.equal(resumed.masks(20).ids_keep, first[2].ids_keep)
    other = mt.MaskGenerator("cross", seed=12).masks(20)
    assert not torch.equal(other.mask, first[0].mask)
    assert not torch.equal(first[0].mask, first[1].mask)
    assert gen.len_keep == 15 and gen.tokens == 60


def test_mask_ratio_fills_a_spec_without_ratio():
    x = torch.zeros(10, 60, 3)
    _, mask, _ = mt.MaskGenerator("cross")(x, 0.5)
    assert (mask.sum(1) == 30).all()
    _, mask, _ = mt.MaskGenerator("cross:ratio=0.75")(x, 0.5)   # the spec's ratio wins
    assert (mask.sum(1) == 45).all()
    # moca's default count is MAE's: keep int(60 * 0.23) = 13, mask 47; count=mask-floor masks
    # floor(0.77 * 60) = 46
    _, mask, _ = mt.MaskGenerator("cross")(x, 0.77)
    assert (mask.sum(1) == 60 - int(60 * (1 - 0.77))).all() and (mask.sum(1) == 47).all()
    _, mask, _ = mt.MaskGenerator("cross:count=mask-floor")(x, 0.77)
    assert (mask.sum(1) == 46).all()
    with pytest.raises(ValueError, match="mask_ratio"):
        mt.MaskGenerator(moca.policy("cross"))(x, 1.0)


def test_layouts():
    g = moca.policy("sync").sample(6, 5, draw=1)
    t = mt.draw_masks("sync", 6, seed=5, draw=1, layout="time")
    np.testing.assert_array_equal(t.mask.numpy().reshape(6, 10, 6).transpose(0, 2, 1), g)
    s = mt.draw_masks("sync", 6, seed=5, draw=1, layout="stacked")
    np.testing.assert_array_equal(s.mask.numpy(), g[:, 0, :])
    assert s.ids_keep.shape == (6, 2)  # sync:ratio=0.75 keeps int(10 * 0.25) = 2 columns
    keep, restore, mask = mae_reference(s.mask)
    assert torch.equal(s.ids_keep, keep) and torch.equal(s.ids_restore, restore)
    gen = mt.MaskGenerator("sync", layout="stacked")
    assert gen.tokens == 10 and gen.len_keep == 2
    with pytest.raises(ValueError, match="whole time columns"):
        mt.MaskGenerator("cross", layout="stacked")
    with pytest.raises(ValueError, match="layout"):
        mt.draw_masks("cross", 2, layout="channels")


def test_device_placement():
    x = torch.zeros(3, 60, 4)
    m = mt.draw_masks("cross", 3, device=x)
    assert all(t.device == x.device for t in m)
    assert all(t.device.type == "cpu" for t in mt.draw_masks("cross", 3, device="cpu"))
    if torch.cuda.is_available():
        xc = x.cuda()
        xm, mask, restore = mt.MaskGenerator("cross")(xc, 0.75)
        assert xm.is_cuda and mask.is_cuda and restore.is_cuda
        assert torch.equal(mask.cpu(), mt.draw_masks("cross", 3).mask)


def test_refusals():
    with pytest.raises(ValueError, match="ratio"):
        mt.draw_masks("cross:ratio=1.5", 4)
    with pytest.raises(ValueError, match="mask_ratio"):
        mt.MaskGenerator("cross")(torch.zeros(2, 60, 3), 0.0)
    with pytest.raises(ValueError, match="60"):
        mt.MaskGenerator("cross")(torch.zeros(2, 59, 3))
    with pytest.raises(ValueError, match="N, T, D"):
        mt.MaskGenerator("cross")(torch.zeros(2, 60))
    with pytest.raises(ValueError, match="boolean"):
        mt.masks_from_grid(np.zeros((2, 6, 10), np.int64))
    with pytest.raises(TypeError):
        mt.draw_masks(0.75, 4)
    # groups of unequal size: 2, 1 or 3 channels masked, so 14, 7 or 21 cells
    spec = "per-modality:groups=0+2/1/3-5"
    with pytest.raises(ValueError, match="varying number of tokens") as e:
        mt.MaskGenerator(spec)
    assert moca.policy(spec).spec in str(e.value)
    with pytest.raises(ValueError, match="per-modality"):
        mt.draw_masks(spec, 64, seed=0)
    flip = moca.policy(lambda s: np.arange(60).reshape(6, 10) < 30 + s % 2, name="flip")
    with pytest.raises(ValueError, match="'flip'"):
        mt.MaskGenerator(flip)


def test_import_moca_does_not_import_torch():
    code = ("import sys, moca\n"
            "assert 'torch' not in sys.modules, 'import moca imported torch'\n"
            "import moca.torch as mt\n"
            "import torch\n"
            "assert mt.torch is torch and hasattr(torch, 'nn') and 'torch' in sys.modules\n"
            "print('ok')\n")
    env = dict(os.environ)   # the moca under test, whatever the folder the child starts in
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(moca.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([pkg] + [q for q in [env.get("PYTHONPATH")] if q])
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=os.path.dirname(os.path.abspath(__file__)), check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok"


def windows(n, seed):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, 1, 200))
    return (z + 0.5 * rng.standard_normal((n, 6, 200))).astype(np.float32)


def test_score_hook_equals_moca_score():
    X = windows(120, 0)
    xt = torch.from_numpy(X).requires_grad_(True)
    hook = mt.ScoreHook(["cross", "sync"], every=5, pca=10, draws=4, seed=2,
                        features="patch-mean")
    assert hook(3, xt) is None
    got = hook(10, xt * 1.0)          # a tensor in a graph: scored without touching autograd
    ref = moca.score(X, ["cross", "sync"], pca=10, draws=4, seed=2, features="patch-mean")
    for a, b in zip(got["schemes"], ref.schemes):
        assert a["spec"] == b["spec"]
        assert a["score"] == b["score"] and a["values"] == b["values"]
        assert a["null_level"] == b["null_level"]
    assert xt.grad is None and [s for s, _ in hook.history] == [10]


def sigma1_numpy(U, M, k):
    """sigma_1 of CCA after PCA to k components per view: the largest singular value of
    Qu^T Qm, Q the orthonormal top-k principal score directions of each centred view."""
    def basis(A):
        A = A - A.mean(0)
        q = np.linalg.svd(A, full_matrices=False)[0]
        return q[:, :k]
    return np.linalg.svd(basis(U).T @ basis(M), compute_uv=False)[0]


def test_score_hook_features_of_a_torch_encoder():
    model = small_mae(1).train()
    x = torch.from_numpy(windows(200, 1))
    m = mt.draw_masks("cross", 200, seed=4)
    Zu, Zm = mt.view_features(model, x, m)
    assert model.training and Zu.shape == (200, 16) and Zu.dtype == np.float64
    with torch.no_grad():
        ref_u = model.forward_encoder(x, m.ids_keep)[:, 1:].mean(1).double().numpy()
        masked = torch.stack([torch.nonzero(r == 1).flatten() for r in m.mask])
        ref_m = model.forward_encoder(x, masked)[:, 1:].mean(1).double().numpy()
    np.testing.assert_array_equal(Zu, ref_u)
    np.testing.assert_array_equal(Zm, ref_m)
    hook = mt.ScoreHook(every=1, pca=8)
    r = hook.features(0, torch.from_numpy(Zu), torch.from_numpy(Zm))
    assert r["pca"] == 8 and r["n"] == 200
    assert r["score"] == pytest.approx(sigma1_numpy(Zu, Zm, 8), abs=1e-9)
    assert 0 < r["null_level"] < 1
    assert all(p.grad is None for p in model.parameters())
