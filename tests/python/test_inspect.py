"""What an encoder learned: moca.Encoder.attention against PyTorch (moca.torch_model running the
exported weights, an independent implementation written from the docs), and the 2-D maps of
`moca embed --map` judged by scikit-learn's trustworthiness, seeds and a shuffled-label control."""
import csv
import os

import numpy as np
import pytest

import moca
from conftest import run_tool

pytestmark = pytest.mark.skipif(not moca.with_torch, reason="moca built without LibTorch")


def _moca(*args, rc=0):
    return run_tool("moca", *args, rc=rc)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("inspect")
    mae = d / "mae.pt"
    _moca("pretrain", "--preset", "cpu-small", "--synthetic-windows", "300", "--split", "all",
          "--epochs", "4", "--warmup-epochs", "0", "--batch", "20", "--threads", "1",
          "--no-progress", "--checkpoint", mae)
    clf = d / "clf.pt"
    _moca("finetune", "--checkpoint", mae, "--synthetic-windows", "60", "--epochs", "1",
          "--warmup-epochs", "0", "--batch", "10", "--threads", "1", "--no-progress",
          "--save-model", clf, "--predictions", d / "clf.csv")
    X, y, pid, meta = moca.data.load("generator", windows=12, seed=3)
    return d, mae, clf, X.astype(np.float32)


def _torch_attention(path, X, keep):
    """Per layer softmax(q k^T / sqrt(d)) with PyTorch's modules of moca.torch_model:
    (N, layers, heads, n, n) over the cls token and the tokens `keep` (None = all)."""
    torch = pytest.importorskip("torch")
    from moca import interop, torch_model
    pth = str(path) + ".pth"
    interop.export_pytorch(str(path), pth)
    model = torch_model.from_export(pth).eval()
    out = []
    with torch.no_grad():
        x = torch.from_numpy(X)
        h = model.embed_tokens(x) + model.pos_embed[:, 1:, :]  # (B, T, D)
        if keep is not None:
            h = h[:, torch.as_tensor(keep)]
        cls = model.cls_token + model.pos_embed[:, :1]
        h = torch.cat([cls.expand(h.shape[0], -1, -1), h], 1)
        for blk in model.blocks:
            B, N, D = h.shape
            H = blk.attn.heads
            qkv = blk.attn.qkv(blk.norm1(h)).double().reshape(B, N, 3, H, D // H)
            q, k = qkv[:, :, 0].transpose(1, 2), qkv[:, :, 1].transpose(1, 2)
            out.append(torch.softmax(q @ k.transpose(-2, -1) / (D // H) ** 0.5, -1))
            h = blk(h)
    return torch.stack(out, 1).numpy()


@pytest.mark.parametrize("which", ["mae", "clf"])
def test_attention_equals_pytorch(models, which):
    d, mae, clf, X = models
    path = mae if which == "mae" else clf
    enc = moca.Encoder(path)
    a = enc.attention(X[:3])
    ref = _torch_attention(path, X[:3], None)
    assert a["weights"].shape == ref.shape
    assert np.abs(a["weights"] - ref).max() < 1e-5
    assert np.allclose(a["weights"].sum(-1), 1.0, atol=1e-12)
    assert np.array_equal(a["cls"], a["weights"][:, :, :, 0, 1:])
    # with a mask: only the visible tokens, masked rows and columns exactly 0
    masks = moca.policy("cross:ratio=0.75", channels=6, length=200, patch_length=20).sample(1, 4)
    b = enc.attention(X[:2], masks)
    vis = ~masks[0].reshape(-1)
    keep = np.flatnonzero(vis)
    ref = _torch_attention(path, X[:2], keep)
    rows = np.concatenate([[0], 1 + keep])
    assert np.abs(b["weights"][..., rows[:, None], rows[None, :]] - ref).max() < 1e-5
    hidden = 1 + np.flatnonzero(~vis)
    assert not b["weights"][..., hidden].any() and not b["weights"][..., hidden, :].any()
    assert np.array_equal(b["visible"][0], vis)


def test_pooled_matches_the_tool(models, tmp_path):
    d, mae, clf, X = models
    enc = moca.Encoder(clf)
    cls, mean = enc.pooled(X, "cls"), enc.pooled(X, "mean")
    assert cls.shape == (12, 128) and not np.allclose(cls, mean)
    with pytest.raises(ValueError, match=r"^pool \(max\) must be one of: cls, mean"):
        enc.pooled(X, "max")


def _map(models, out, *extra, pool="cls"):
    d, mae, clf, X = models
    _moca("embed", "--checkpoint", mae, "--pool", pool, "--out", out, "--threads", "1",
          "--no-png", *extra)
    return np.load(out / "map_mae.npy"), np.load(out / "embedding_mae.npy")


def test_umap_is_at_least_as_trustworthy_as_pca(models, tmp_path):
    manifold = pytest.importorskip("sklearn.manifold")
    data = ("--synthetic-windows", "400", "--split", "all")
    for pool in ("cls", "mean"):  # class-token embeddings, and the token mean
        yu, z = _map(models, tmp_path / "u", "--map", "umap", *data, pool=pool)
        yp, z2 = _map(models, tmp_path / "p", "--map", "pca", *data, pool=pool)
        assert np.array_equal(z, z2)
        tu = manifold.trustworthiness(z, yu, n_neighbors=10)
        tp = manifold.trustworthiness(z, yp, n_neighbors=10)
        print(f"{pool}: trustworthiness k=10: umap {tu:.4f}, pca {tp:.4f}")
        # The claim is on class-token embeddings (0.983 vs 0.956 here). The token mean
        # of this tiny model is nearly one-dimensional, so both maps are near-perfect (0.9864 vs
        # 0.9862 on 2026-11-24): there a small margin keeps the check from turning on the last
        # bits of another LibTorch's arithmetic.
        assert tu >= (tp if pool == "cls" else tp - 0.005)
    # PCA map = the first two principal scores (numpy's SVD as the reference, up to sign)
    c = z - z.mean(0)
    u, s, vt = np.linalg.svd(c, full_matrices=False)
    assert np.allclose(np.abs(yp), np.abs(u[:, :2] * s[:2]), atol=1e-8 * s[0])


def test_map_seeds_and_shuffled_label_control(models, tmp_path):
    d, mae, clf, X = models
    src = tmp_path / "data"
    _moca("data", "export", "--synthetic-windows", "120", "--out", src)
    shuffled = tmp_path / "shuffled"
    shuffled.mkdir()
    for f in os.listdir(src):
        (shuffled / f).write_bytes((src / f).read_bytes())
    y = np.load(src / "Y.npy", allow_pickle=False)
    np.save(shuffled / "Y.npy", np.random.default_rng(0).permutation(y))
    args = ("--map", "umap", "--split", "all", "--map-seed", "7")
    a, _ = _map(models, tmp_path / "a", "--data", src, *args)
    b, _ = _map(models, tmp_path / "b", "--data", src, *args)
    s, _ = _map(models, tmp_path / "s", "--data", shuffled, *args)
    assert np.array_equal(a, b)  # same seed, same coordinates
    assert np.array_equal(a, s)  # labels do not move the points...
    ca = [r["class"] for r in csv.DictReader(open(tmp_path / "a" / "map_mae.csv"))]
    cs = [r["class"] for r in csv.DictReader(open(tmp_path / "s" / "map_mae.csv"))]
    assert ca != cs  # ...but change their colours
    assert (tmp_path / "a" / "map.dat").read_text() != (tmp_path / "s" / "map.dat").read_text()
    other, _ = _map(models, tmp_path / "o", "--data", src, "--map", "umap", "--split", "all",
                    "--map-seed", "8")
    assert not np.array_equal(a, other)  # control: another seed moves them


def test_bad_input_exit_2(models, tmp_path):
    d, mae, clf, X = models
    p = _moca("attention", "--model", mae, "--synthetic-windows", "40", "--windows", "0,99",
              "--out", tmp_path / "a", rc=2)
    assert "--windows (99) must be in [0, 12)" in p.stderr
    p = _moca("embed", "--checkpoint", mae, "--pool", "mean", "--map", "umap",
              "--synthetic-windows", "40", "--max-windows", "5", "--out", tmp_path / "e", rc=2)
    assert "neighbors (15) must be <= the number of points (5)" in p.stderr
    p = _moca("embed", "--checkpoint", mae, "--map", "pca", "--synthetic-windows", "40",
              "--max-windows", "1", "--out", tmp_path / "e", rc=2)
    assert "points (1) must be >= 2" in p.stderr
    p = _moca("embed", "--checkpoint", mae, "--pool", "max", "--out", tmp_path / "e", rc=2)
    assert "--pool (max) must be one of: cls, mean" in p.stderr


def test_options_one_mode_leaves_inert_are_refused(models, tmp_path):
    """A flag the chosen mode would ignore is a usage error naming the mode's flags, before any
    file is read; each refusal's control is the same flag in the mode that uses it."""
    d, mae, clf, X = models
    gen = ("--synthetic-windows", "40", "--split", "all", "--threads", "1")
    p = _moca("embed", "--checkpoint", "absent.pt", "--pool", "mean", "--seed", "3", rc=2)
    assert "--seed (3) takes no effect: the pooled embeddings (--pool, --map)" in p.stderr
    _moca("embed", "--checkpoint", mae, "--seed", "3", "--max-windows", "4", *gen,
          "--out", tmp_path / "views")  # control: the views draw masks with it
    assert (tmp_path / "views" / "Z_U.npy").exists()
    p = _moca("embed", "--checkpoint", "absent.pt", "--map", "pca", "--neighbors", "5", rc=2)
    assert "--neighbors (5) takes no effect: only --map umap uses it" in p.stderr
    _moca("embed", "--checkpoint", mae, "--map", "umap", "--neighbors", "5", "--no-png", *gen,
          "--out", tmp_path / "umap")  # control: UMAP takes it
    assert (tmp_path / "umap" / "map_mae.npy").exists()
    p = _moca("embed", "--checkpoint", "absent.pt", "--no-png", rc=2)
    assert "--no-png (true) takes no effect: only a --map draws a figure" in p.stderr
    p = _moca("embed", "--checkpoint", "a.pt", "--checkpoint", "b.pt", rc=2)
    assert "--checkpoint (2 files) must be one without --pool or --map" in p.stderr
    p = _moca("embed", "--checkpoint", "absent.pt", "--map", "umap", "--neighbors", "1", rc=2)
    assert "--neighbors (1) must be >= 2" in p.stderr
    p = _moca("attention", "--model", "absent.pt", "--windows", "0", "--seed", "2", rc=2)
    assert "--seed (2) takes no effect: only the masks of --policy use it" in p.stderr
    _moca("attention", "--model", mae, "--windows", "0", "--seed", "2", "--policy", "cross",
          "--no-png", *gen, "--out", tmp_path / "att")  # control: the masks take it
    assert (tmp_path / "att" / "attention.json").exists()
    p = _moca("attention", "--windows", "0", rc=2)
    assert "--model is required" in p.stderr
