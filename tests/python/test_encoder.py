"""moca.Encoder (built with LibTorch): features equal `moca embed`'s for the same checkpoint,
windows and masks, and the masks equal the CLI's masks.txt."""
import os
import subprocess

import numpy as np
import pytest

import moca
from conftest import bin_dir

pytestmark = pytest.mark.skipif(not moca.with_torch, reason="moca built without LibTorch")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    exe = os.path.join(bin_dir(), "moca")
    if not os.path.exists(exe):
        pytest.skip("moca tool not built")
    d = tmp_path_factory.mktemp("enc")
    ck = d / "m.pt"
    env = {k: v for k, v in os.environ.items() if k != "MOCA_HAPT_DIR"}
    p = subprocess.run([exe, "pretrain", "--preset", "cpu-small", "--synthetic-windows", "40",
                        "--split", "all", "--epochs", "1", "--warmup-epochs", "0", "--batch", "20",
                        "--threads", "1",
                        "--no-progress", "--checkpoint", str(ck)],
                       capture_output=True, text=True, env=env, check=False)
    assert p.returncode == 0, p.stderr
    return exe, ck, env, d


def test_embed_equals_cli(checkpoint):
    exe, ck, env, d = checkpoint
    out = d / "emb"
    p = subprocess.run([exe, "embed", "--checkpoint", str(ck), "--synthetic-windows", "40",
                        "--split", "all", "--policy", "cross:ratio=0.5", "--seed", "3",
                        "--out", str(out)], capture_output=True, text=True, env=env, check=False)
    assert p.returncode == 0, p.stderr
    X, y, pid, meta = moca.data.load("generator", windows=40, seed=0)
    enc = moca.Encoder.load(ck)
    assert (enc.channels, enc.length, enc.patch_length) == (6, 200, 20)
    # moca embed draws window i's mask from stream i: sample(1, seed, draw=i)
    pol = moca.policy("cross:ratio=0.5")
    masks = np.concatenate([pol.sample(1, seed=3, draw=i) for i in range(40)])
    cli_masks = np.array([[c == "1" for c in line] for line in
                          (out / "masks.txt").read_text().split()]).reshape(40, 6, 10)
    np.testing.assert_array_equal(masks, cli_masks)
    zu, zm = enc.embed(X, masks)
    assert zu.shape == (40, enc.dim) and zm.shape == (40, enc.dim)
    np.testing.assert_array_equal(zu, np.load(out / "Z_U.npy"))
    np.testing.assert_array_equal(zm, np.load(out / "Z_M.npy"))
    # the two views see different tokens, so their features differ
    assert np.abs(zu - zm).max() > 1e-3
    # issue 38.7: the spec and seed alone give the CLI's masks and features on every window
    zu2, zm2 = enc.embed(X, "cross:ratio=0.5", seed=3, shared=False)
    np.testing.assert_array_equal(zu2, zu)
    np.testing.assert_array_equal(zm2, zm)
    # shared: window 0's mask on every window
    zu3, _ = enc.embed(X, "cross:ratio=0.5", seed=3, shared=True)
    np.testing.assert_array_equal(zu3, enc.embed(X, np.repeat(masks[:1], 40, axis=0))[0])


@pytest.mark.parametrize("shape", [(1, 6, 5), (1, 6, 20), (2, 6, 10), (1, 5, 10)])
def test_embed_refuses_masks_of_another_grid(checkpoint, shape):
    # issue 38.3: a (1, 6, 5) mask was read as the first cells of the 6 x 10 grid
    _, ck, _, _ = checkpoint
    X = moca.data.load("generator", windows=4, seed=0).X
    enc = moca.Encoder.load(ck)
    with pytest.raises(ValueError, match=r"policy: masks of shape .* \(need \(1 or 4, 6, 10\)"):
        enc.embed(X, np.zeros(shape, bool))
    with pytest.raises(ValueError, match="policy: masks of shape"):
        enc.attention(X, np.zeros(shape, bool))


def test_encoder_per_window_masks_warn(checkpoint):
    # issue 38.9: docs/masking.md's caution, which kcca_score prints, as a Python warning
    _, ck, _, _ = checkpoint
    X = moca.data.load("generator", windows=30, seed=0).X
    enc = moca.Encoder.load(ck)
    with pytest.warns(UserWarning, match="per-window masks measure the mask pattern"):
        moca.score(X, ["cross"], features=enc, mask_mode="per-window", draws=2, pca=5)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        moca.score(X, ["cross"], features=enc, draws=2, pca=5)  # auto = shared: no warning
        moca.score(X, ["cross"], mask_mode="per-window", draws=2, pca=5)  # raw: none


def test_encoder_as_feature_map_and_bad_checkpoint(checkpoint, tmp_path):
    _, ck, _, _ = checkpoint
    X = moca.data.load("generator", windows=60, seed=0).X
    r = moca.score(X, ["cross", "sync"], features=moca.Encoder.load(ck), mask_mode="shared",
                   draws=2, pca=5)
    assert r.settings["features"] == "encoder"
    assert all(0 <= s["score"] <= 1 for s in r.schemes)
    bad = tmp_path / "bad.pt"
    bad.write_text("not a model")
    with pytest.raises(RuntimeError) as e:
        moca.Encoder.load(bad)
    assert "bad.pt" in str(e.value) and "Unknown" not in str(e.value)
