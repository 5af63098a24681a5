"""Kept classifiers from Python and the PyTorch weight exchange (moca.interop, moca.torch_model).

The references are PyTorch's own computations: moca's outputs are compared with the plain
PyTorch modules of moca.torch_model (written from the docs) running the exported weights, and a
state dict built here from PyTorch's layers in the timm naming is imported and compared with
what PyTorch computes for it."""
import csv
import os
import subprocess
import zipfile

import numpy as np
import pytest

import moca
from conftest import bin_dir

pytestmark = pytest.mark.skipif(not moca.with_torch, reason="moca built without LibTorch")
torch = torch_model = None  # imported by _torch: importing torch changes the process's OpenMP
# thread count, and with it the last bits of other tests' BLAS results (conftest runs this file
# last for the same reason)


@pytest.fixture(scope="module", autouse=True)
def _torch():
    global torch, torch_model
    torch = pytest.importorskip("torch")
    from moca import torch_model as tm
    torch_model = tm


def _env():
    env = {k: v for k, v in os.environ.items() if k != "MOCA_HAPT_DIR"}
    env["OMP_WAIT_POLICY"] = "passive"
    return env


def _moca(*args, rc=0):
    exe = os.path.join(bin_dir(), "moca")
    if not os.path.exists(exe):
        pytest.skip("moca tool not built")
    p = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, env=_env(),
                       check=False)
    assert p.returncode == rc, p.stderr
    return p


def _rel(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.linalg.norm(a - b) / np.linalg.norm(b)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("interop")
    mae = d / "mae.pt"
    _moca("pretrain", "--preset", "cpu-small", "--synthetic-windows", "60", "--split", "all",
          "--epochs", "2", "--warmup-epochs", "0", "--batch", "20", "--threads", "1",
          "--no-progress", "--checkpoint", mae)
    clfs = {}
    for cmd in ("linprobe", "finetune"):
        clfs[cmd] = d / f"{cmd}.pt"
        _moca(cmd, "--checkpoint", mae, "--synthetic-windows", "60", "--epochs", "2",
              "--warmup-epochs", "0", "--batch", "10", "--threads", "1", "--no-progress",
              "--save-model", clfs[cmd], "--predictions", d / f"{cmd}.csv")
    X, y, pid, meta = moca.data.load("generator", windows=60, seed=0)
    return d, mae, clfs, X.astype(np.float32), y


def test_classifier_repeats_training_predictions(models):
    d, _, clfs, X, _ = models
    # the random 7:3 split of `moca linprobe` (seed 1004) is the data's last 18 windows'
    # permutation; compare through `moca predict` on all windows instead: its row i is window i
    for cmd, path in clfs.items():
        clf = moca.Classifier.load(path)
        assert clf.probe == (cmd == "linprobe")
        assert list(clf.input_channels) == ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y",
                                            "gyro_z"]
        out = d / f"{cmd}_pred.csv"
        _moca("predict", "--model", path, "--synthetic-windows", "60", "--out", out, "--proba",
              "--threads", "1")
        rows = list(csv.DictReader(open(out)))
        assert len(rows) == 60
        names = clf.predict(X)
        assert [r["predicted"] for r in rows] == list(names)
        p = clf.predict_proba(X)
        np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-12)
        cols = np.array([[float(r[f"p_{c}"]) for c in clf.classes_] for r in rows])
        # rtol 1e-6: the LibTorch 2.x build's products (BLAS route, docs/model.md) change in the
        # last bits with the thread count (the CLI runs with 1, this process with its default)
        np.testing.assert_allclose(cols, p, rtol=1e-6, atol=1e-9)
        assert list(clf.classes_[p.argmax(1)]) == list(names)
        # the training run's predictions CSV (ids) are the same windows' predictions
        train = [(int(r["truth"]), int(r["predicted"])) for r in csv.DictReader(
            open(d / f"{cmd}.csv"))]
        assert len(train) == 18
        y_pred = clf.predict_ids(X)
        y_all = moca.data.load("generator", windows=60, seed=0).y
        # the test windows are those whose labels and predictions the CSV lists, in split order
        perm = np.random.RandomState(1004).permutation(60)[42:]
        assert [(int(y_all[i]), int(y_pred[i])) for i in perm] == train


def test_classifier_bad_input(models):
    _, mae, clfs, X, _ = models
    with pytest.raises(ValueError, match="not a classifier"):
        moca.Classifier.load(mae)
    clf = moca.Classifier.load(clfs["linprobe"])
    with pytest.raises(ValueError, match="do not fit"):
        clf.predict(X[:, :3, :])
    with pytest.raises(ValueError, match="do not fit"):
        clf.predict(X[:, :, :100])
    p = _moca("predict", "--model", mae, "--synthetic-windows", "60", rc=2)
    assert "not a classifier" in p.stderr
    # and the reverse: a classifier where an MAE is needed
    m = np.zeros((1, 6, 10), bool)
    m[0, :, 5:] = True
    with pytest.raises(ValueError, match="needs an MAE"):
        moca._core.reconstruct(str(clfs["linprobe"]), X[:2], m, clf.channel_names)
    p = _moca("impute", "--checkpoint", clfs["linprobe"], "--synthetic-windows", "60", rc=2)
    assert "classifier" in p.stderr


def test_export_matches_moca_outputs(models):
    d, mae, clfs, X, _ = models
    pth = d / "mae.pth"
    rep = moca.interop.export_pytorch(mae, pth)
    assert rep["kind"] == "mae" and "decoder_pred.weight" in rep["keys"]
    model = torch_model.from_export(str(pth))          # strict=True inside
    obj = torch.load(str(pth), weights_only=True)
    assert set(obj["model"]) == set(rep["keys"])
    enc = moca.Encoder.load(mae)
    rng = np.random.default_rng(0)
    # masks with 30 of 60 tokens hidden per window
    masks = np.zeros((8, 6, 10), bool)
    for i in range(8):
        masks[i].flat[rng.permutation(60)[:30]] = True
    x = X[:8]
    # encoder: moca's view features are means of encoder outputs over the view's tokens
    zu, zm = enc.embed(x, masks)
    xt = torch.from_numpy(x)
    with torch.no_grad():
        for view, ref in ((~masks, zu), (masks, zm)):
            keep, _ = torch_model.mask_ids(torch.from_numpy(~view.reshape(8, 60)))
            lat = model.forward_encoder(xt, keep)[:, 1:, :].mean(1).numpy()
            assert _rel(lat, ref) < 1e-5
        rec = model(xt, torch.from_numpy(masks.reshape(8, 60))).numpy()
    ours = moca._core.reconstruct(str(mae), x, masks, enc.channel_names)
    assert _rel(rec, ours) < 1e-5
    # classifiers: probabilities
    for cmd, path in clfs.items():
        pth = d / f"{cmd}.pth"
        moca.interop.export_pytorch(path, pth)
        m = torch_model.from_export(str(pth))
        with torch.no_grad():
            p = torch.softmax(m(torch.from_numpy(X)).double(), 1).numpy()
        assert _rel(p, moca.Classifier.load(path).predict_proba(X)) < 1e-5


def test_round_trip_pth_to_moca(models):
    d, mae, clfs, X, _ = models
    for name, path in [("mae", mae), ("linprobe", clfs["linprobe"]),
                       ("finetune", clfs["finetune"])]:
        pth, back = d / f"{name}_rt.pth", d / f"{name}_back.pt"
        moca.interop.export_pytorch(path, pth)
        clf_names = None
        if name != "mae":
            clf_names = list(moca.Classifier.load(path).classes_)
        r = moca.interop.import_pytorch(pth, back, channel_names=moca.Encoder.load(path)
                                        .channel_names, sample_rate=50.0, class_names=clf_names,
                                        num_heads=4, decoder_num_heads=4)
        assert r["kind"] == ("mae" if name == "mae" else "classifier")
        if name == "mae":
            m = np.zeros((1, 6, 10), bool)
            m[0, :3, :] = True
            a = moca._core.reconstruct(str(path), X[:5], m, moca.Encoder.load(path).channel_names)
            b = moca._core.reconstruct(str(back), X[:5], m, moca.Encoder.load(path).channel_names)
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_array_equal(moca.Classifier.load(back).predict_proba(X),
                                          moca.Classifier.load(path).predict_proba(X))


def _timm_mae(C=6, L=200, Lp=20, D=128, depth=2, Dd=64, ddepth=1):
    """A state dict in the authors' layout made from PyTorch's own layers (not moca's code):
    conv patch embedding, timm-style blocks, 1-D sin-cos positions on the 1 x T grid."""
    torch.manual_seed(0)
    T = C * (L // Lp)

    def block(dim):
        return {"norm1": torch.nn.LayerNorm(dim, eps=1e-6),
                "attn.qkv": torch.nn.Linear(dim, 3 * dim), "attn.proj": torch.nn.Linear(dim, dim),
                "norm2": torch.nn.LayerNorm(dim, eps=1e-6),
                "mlp.fc1": torch.nn.Linear(dim, 4 * dim), "mlp.fc2": torch.nn.Linear(4 * dim, dim)}

    def pos(dim):  # MAE get_2d_sincos_pos_embed on a 1 x T grid, cls row zero
        q = dim // 4
        omega = 1.0 / 10000 ** (np.arange(q) / q)
        p = np.arange(T)[:, None] * omega[None]
        emb = np.concatenate([np.sin(p), np.cos(p), np.zeros((T, q)), np.ones((T, q))], 1)
        return torch.from_numpy(np.concatenate([np.zeros((1, dim)), emb])[None].astype(np.float32))

    sd = {}

    def put(prefix, module):  # a PyTorch layer's parameters under its timm name
        for pn, pv in module.named_parameters():
            sd[f"{prefix}.{pn}"] = pv

    def put_blocks(prefix, n, dim):
        for k in range(n):
            for name, mod in block(dim).items():
                put(f"{prefix}.{k}.{name}", mod)

    put("patch_embed.proj", torch.nn.Conv2d(1, D, (1, Lp), (1, Lp)))
    sd["cls_token"] = torch.randn(1, 1, D) * 0.02
    sd["pos_embed"] = pos(D)
    put_blocks("blocks", depth, D)
    ln = torch.nn.LayerNorm(D, eps=1e-6)
    torch.nn.init.normal_(ln.weight)
    put("norm", ln)
    put("decoder_embed", torch.nn.Linear(D, Dd))
    sd["mask_token"] = torch.randn(1, 1, Dd) * 0.02
    sd["decoder_pos_embed"] = pos(Dd)
    put_blocks("decoder_blocks", ddepth, Dd)
    put("decoder_norm", torch.nn.LayerNorm(Dd, eps=1e-6))
    put("decoder_pred", torch.nn.Linear(Dd, Lp))
    return {k: v.detach().clone() for k, v in sd.items()}


def _reference_reconstruction(sd, x, mask, heads, dheads, Lp=20):
    """MAE's forward written out with torch.nn.functional on the state dict itself."""
    F = torch.nn.functional
    B, C, L = x.shape

    def blocks(h, prefix, n, nh):
        for k in range(n):
            p = f"{prefix}{k}."
            y = F.layer_norm(h, h.shape[-1:], sd[p + "norm1.weight"], sd[p + "norm1.bias"], 1e-6)
            qkv = F.linear(y, sd[p + "attn.qkv.weight"], sd[p + "attn.qkv.bias"])
            Bn, N, D3 = qkv.shape
            D = D3 // 3
            qkv = qkv.reshape(Bn, N, 3, nh, D // nh).permute(2, 0, 3, 1, 4)
            a = (qkv[0] @ qkv[1].transpose(-2, -1) * (D // nh) ** -0.5).softmax(-1)
            o = (a @ qkv[2]).transpose(1, 2).reshape(Bn, N, D)
            h = h + F.linear(o, sd[p + "attn.proj.weight"], sd[p + "attn.proj.bias"])
            y = F.layer_norm(h, h.shape[-1:], sd[p + "norm2.weight"], sd[p + "norm2.bias"], 1e-6)
            y = F.linear(F.gelu(F.linear(y, sd[p + "mlp.fc1.weight"], sd[p + "mlp.fc1.bias"])),
                         sd[p + "mlp.fc2.weight"], sd[p + "mlp.fc2.bias"])
            h = h + y
        return h

    tok = F.conv2d(x.reshape(B, 1, C, L), sd["patch_embed.proj.weight"],
                   sd["patch_embed.proj.bias"], stride=(1, Lp)).flatten(2).transpose(1, 2)
    tok = tok + sd["pos_embed"][:, 1:]
    m = mask.reshape(B, -1)
    keep = [torch.nonzero(~m[i]).flatten() for i in range(B)]
    vis = torch.stack([tok[i, keep[i]] for i in range(B)])
    h = torch.cat([(sd["cls_token"] + sd["pos_embed"][:, :1]).expand(B, -1, -1), vis], 1)
    h = blocks(h, "blocks.", 2, heads)
    h = F.layer_norm(h, h.shape[-1:], sd["norm.weight"], sd["norm.bias"], 1e-6)
    h = F.linear(h, sd["decoder_embed.weight"], sd["decoder_embed.bias"])
    T, Dd = m.shape[1], h.shape[-1]
    full = sd["mask_token"].expand(B, T, Dd).clone()
    for i in range(B):
        full[i, keep[i]] = h[i, 1:]
    h = torch.cat([h[:, :1], full], 1) + sd["decoder_pos_embed"]
    h = blocks(h, "decoder_blocks.", 1, dheads)
    h = F.layer_norm(h, h.shape[-1:], sd["decoder_norm.weight"], sd["decoder_norm.bias"], 1e-6)
    pred = F.linear(h, sd["decoder_pred.weight"], sd["decoder_pred.bias"])[:, 1:]
    return pred.reshape(B, C, L)


def test_import_authors_layout_gives_pytorchs_outputs(tmp_path):
    import argparse
    sd = _timm_mae()
    pth = tmp_path / "authors.pth"
    # the authors' checkpoint dictionary, args as an argparse.Namespace
    torch.save({"model": sd, "optimizer": {}, "epoch": 19,
                "args": argparse.Namespace(norm_pix_loss=False, loss_type="all",
                                           input_size=[6, 200])}, str(pth))
    names = ["gyro_x", "gyro_y", "gyro_z", "acc_x", "acc_y", "acc_z"]
    out = tmp_path / "imported.pt"
    r = moca.interop.import_pytorch(pth, out, channel_names=names, sample_rate=50.0,
                                    decoder_num_heads=2, num_heads=2)
    assert r["kind"] == "mae"
    assert any("1 x T grid" in n for n in r["notes"])         # detected the authors' positions
    assert any("args read" in n for n in r["notes"])
    # the authors' args state the input size: a channel count that contradicts it is refused
    with pytest.raises(ValueError, match="input_size"):  # noqa: PT012
        moca.interop.import_pytorch(pth, tmp_path / "bad.pt", channel_names=names[:3],
                                    sample_rate=50.0, decoder_num_heads=2, num_heads=2)
    # a rate the file does not record is required, named by the keyword (ImportOptions' schema)
    with pytest.raises(ValueError, match=r"^sample_rate \(0\) is required"):
        moca.interop.import_pytorch(pth, tmp_path / "norate.pt", channel_names=names,
                                    decoder_num_heads=2, num_heads=2)
    x = np.random.default_rng(1).standard_normal((4, 6, 200)).astype(np.float32)
    mask = np.zeros((4, 6, 10), bool)
    mask[:, 3:, :] = True                                      # gyro visible, acc masked
    with torch.no_grad():
        ref = _reference_reconstruction(sd, torch.from_numpy(x), torch.from_numpy(mask), 2, 2)
    ours = moca._core.reconstruct(str(out), x, mask, names)
    assert _rel(ours, ref.numpy()) < 1e-5
    # and the encoder as kcca_score's feature map / `moca impute` accept the checkpoint
    assert moca.Encoder.load(out).channel_names == names


def test_import_refuses_code_and_bad_tensors(tmp_path):
    marker = tmp_path / "marker"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    sd = _timm_mae(D=64, Dd=32)
    evil = tmp_path / "evil.pth"
    torch.save({"model": {**sd, "x": Evil()}}, str(evil))
    with pytest.raises(moca.interop.UnsafeFileError, match="system"):
        moca.interop.import_pytorch(evil, tmp_path / "o.pt", channel_names=list("abcdef"),
                                    sample_rate=50.0)
    top = tmp_path / "top.pth"
    torch.save(Evil(), str(top))
    with pytest.raises(moca.interop.UnsafeFileError):
        moca.interop.load_pth(top)
    # the same payload in 'args' is skipped with a note, never run
    args_evil = tmp_path / "args.pth"
    torch.save({"model": sd, "args": Evil()}, str(args_evil))
    r = moca.interop.import_pytorch(args_evil, tmp_path / "ok.pt", channel_names=list("abcdef"),
                                    sample_rate=50.0, num_heads=1, decoder_num_heads=1)
    assert any("'args' skipped" in n for n in r["notes"])
    assert not marker.exists()
    assert not (tmp_path / "o.pt").exists()
    # PyTorch's own weights-only loading refuses the same file (the two agree)
    with pytest.raises(Exception):
        torch.load(str(evil), weights_only=True)
    assert not marker.exists()

    def save(d, name):
        p = tmp_path / name
        torch.save(d, str(p))
        return p

    kw = dict(channel_names=list("abcdef"), sample_rate=50.0, num_heads=1, decoder_num_heads=1)
    missing = dict(sd)
    del missing["decoder_norm.bias"]
    with pytest.raises(ValueError, match="'decoder_norm.bias' is missing"):
        moca.interop.import_pytorch(save(missing, "m.pth"), tmp_path / "o.pt", **kw)
    extra = dict(sd, bonus=torch.zeros(3))
    with pytest.raises(ValueError, match="'bonus'"):
        moca.interop.import_pytorch(save(extra, "e.pth"), tmp_path / "o.pt", **kw)
    wrong = dict(sd)
    wrong["blocks.0.attn.proj.weight"] = torch.zeros(64, 32)
    with pytest.raises(ValueError, match="'blocks.0.attn.proj.weight'"):
        moca.interop.import_pytorch(save(wrong, "w.pth"), tmp_path / "o.pt", **kw)
    with pytest.raises(ValueError, match="input channels|not a multiple"):
        moca.interop.import_pytorch(save(sd, "c.pth"), tmp_path / "o.pt",
                                    **dict(kw, channel_names=list("abcdefg")))
    with pytest.raises(ValueError, match="holds an MAE"):
        moca.interop.import_pytorch(save(sd, "k.pth"), tmp_path / "o.pt",
                                    **dict(kw, kind="classifier"))
    clf = {k: v for k, v in sd.items() if not k.startswith(("decoder", "mask_token"))}
    clf["head.weight"], clf["head.bias"] = torch.zeros(3, 64), torch.zeros(3)
    with pytest.raises(ValueError, match="holds a classifier"):
        moca.interop.import_pytorch(save(clf, "h.pth"), tmp_path / "o.pt", **dict(kw, kind="mae"))
    r = moca.interop.import_pytorch(save(clf, "h2.pth"), tmp_path / "clf.pt", **kw)
    assert r["kind"] == "classifier" and any("classes named 0..2" in n for n in r["notes"])
    with pytest.raises(ValueError, match="legacy"):
        p = tmp_path / "legacy.pth"
        torch.save(sd, str(p), _use_new_zipfile_serialization=False)
        moca.interop.load_pth(p)
    assert not (tmp_path / "o.pt").exists()
    assert zipfile.is_zipfile(tmp_path / "clf.pt")


def test_interop_command_line(models, tmp_path):
    _, mae, _, _, _ = models
    import sys
    env = dict(_env(), PYTHONPATH=os.path.dirname(os.path.dirname(moca.__file__)))
    pth = tmp_path / "cli.pth"
    p = subprocess.run([sys.executable, "-m", "moca.interop", "export", str(mae), str(pth)],
                       capture_output=True, text=True, env=env, check=False)
    assert p.returncode == 0, p.stderr
    # a moca export records its channel names and rate: none needed (issue #37) ...
    p = subprocess.run([sys.executable, "-m", "moca.interop", "import", str(pth),
                        str(tmp_path / "b.pt"), "--num-heads", "4", "--decoder-num-heads", "4"],
                       capture_output=True, text=True, env=env, check=False)
    assert p.returncode == 0, p.stderr
    assert moca.Encoder.load(tmp_path / "b.pt").channel_names == \
        moca.Encoder.load(mae).channel_names
    # ... and names that contradict the record are an error naming the parameter
    p = subprocess.run([sys.executable, "-m", "moca.interop", "import", str(pth),
                        str(tmp_path / "d.pt"), "--channel-names", "a,b,c,d,e,f"],
                       capture_output=True, text=True, env=env, check=False)
    assert p.returncode == 2 and "channel_names" in p.stderr and "record" in p.stderr
    assert not (tmp_path / "d.pt").exists()
    p = subprocess.run([sys.executable, "-m", "moca.interop", "import", str(pth),
                        str(tmp_path / "c.pt"), "--sample-rate", "50", "--channel-names",
                        "a,b,c,d,e,f,g"],
                       capture_output=True, text=True, env=env, check=False)
    assert p.returncode == 2 and p.stderr.startswith("moca.interop: ")
    assert not (tmp_path / "c.pt").exists()
    # moca export (C++) writes the same file as moca.interop.export_pytorch
    _moca("export", "--checkpoint", mae, "--out", tmp_path / "tool.pth")
    a = torch.load(str(pth), weights_only=True)["model"]
    b = torch.load(str(tmp_path / "tool.pth"), weights_only=True)["model"]
    assert list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a)
    # moca import (C++, LibTorch's unpickler) reads it back, heads from the export's moca entry
    names = moca.Encoder.load(mae).channel_names
    _moca("import", "--pth", tmp_path / "tool.pth", "--out", tmp_path / "t.pt")
    x = np.random.default_rng(2).standard_normal((3, 6, 200)).astype(np.float32)
    m = np.zeros((1, 6, 10), bool)
    m[0, :, 5:] = True
    np.testing.assert_array_equal(moca._core.reconstruct(str(tmp_path / "t.pt"), x, m, names),
                                  moca._core.reconstruct(str(mae), x, m, names))
    # ... but not an OrderedDict state dict (LibTorch's unpickler reads OrderedDict as None)
    import collections
    torch.save(collections.OrderedDict(a), str(tmp_path / "od.pth"))
    p = _moca("import", "--pth", tmp_path / "od.pth", "--out", tmp_path / "od.pt",
              "--channel-names", ",".join(names), "--sample-rate", "50", rc=1)
    assert "moca.interop import" in p.stderr and not (tmp_path / "od.pt").exists()


def test_predict_bridges_rate_and_refuses_missing_channels(models, tmp_path):
    """moca predict on an .npy folder at 100 Hz (resampled to the classifier's 50 Hz, with a
    note), unlabelled; accelerometer-only data on an acc+gyro classifier is refused by name."""
    import json
    d, _, clfs, X, _ = models
    rng = np.random.default_rng(3)
    t50 = np.arange(200) / 50.0
    t100 = np.arange(400) / 100.0
    # smooth signals, so that resampling 100 -> 50 Hz gives back the 50 Hz windows closely
    freqs = rng.uniform(0.2, 2.0, (10, 6, 1))
    phase = rng.uniform(0, 2 * np.pi, (10, 6, 1))
    w50 = np.sin(2 * np.pi * freqs * t50 + phase).astype(np.float32)
    w100 = np.sin(2 * np.pi * freqs * t100 + phase).astype(np.float32)
    names = ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"]
    folder = tmp_path / "hz100"
    folder.mkdir()
    np.save(folder / "X.npy", w100)
    (folder / "meta.json").write_text(json.dumps({"sample_rate": 100, "channel_names": names}))
    out = tmp_path / "p.csv"
    p = _moca("predict", "--model", clfs["finetune"], "--data", f"npy:{folder}", "--out", out,
              "--proba")
    assert "no labels" in p.stdout
    assert "resampl" in p.stderr           # the loader says what it did
    rows = list(csv.DictReader(open(out)))
    assert len(rows) == 10 and "truth" not in rows[0]
    clf = moca.Classifier.load(clfs["finetune"])
    p100 = np.array([[float(r[f"p_{c}"]) for c in clf.classes_] for r in rows])
    assert np.abs(p100 - clf.predict_proba(w50)).max() < 0.02
    # accelerometer only on an acc+gyro classifier: refused, naming the missing channel
    acc = tmp_path / "acc"
    acc.mkdir()
    np.save(acc / "X.npy", w50[:, :3])
    (acc / "meta.json").write_text(json.dumps({"sample_rate": 50, "channel_names": names[:3]}))
    p = _moca("predict", "--model", clfs["finetune"], "--data", f"npy:{acc}", rc=2)
    assert "'gyro_x' is missing" in p.stderr
