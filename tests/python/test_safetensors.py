"""The safetensors format in moca (issue 41): the NumPy reader and writer of moca.interop, the
export and import of models (C++ library, `moca export/import`, Python), and the files of the
`safetensors` package from PyPI both ways.

Known answers: files assembled byte by byte from the format's definition, and the package's own
`save_file`/`load_file` (skipped where the package is absent: Debian has none; CI's PyPI and
PyTorch 2.x stages install it)."""
import json
import struct

import numpy as np
import pytest

import moca
from moca import interop
from conftest import run_tool


def _file(header, buffer=b""):
    text = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + buffer


def _write(path, data):
    path.write_bytes(data)
    return path


def test_reads_a_file_assembled_by_hand(tmp_path):
    buf = struct.pack("<4f", 1, 2, 3, 4) + struct.pack("<q", -7) + struct.pack("<3e", 1.5, -2, 65504) \
        + struct.pack("<H", 0x3F80)
    p = _write(tmp_path / "a.safetensors", _file({
        "__metadata__": {"format": "pt", "rate": "50"},
        "w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
        "n": {"dtype": "I64", "shape": [], "data_offsets": [16, 24]},
        "h": {"dtype": "F16", "shape": [3], "data_offsets": [24, 30]},
        "b": {"dtype": "BF16", "shape": [1], "data_offsets": [30, 32]}}, buf))
    t, meta = interop.load_safetensors(p)
    assert meta == {"format": "pt", "rate": "50"}
    assert list(t) == ["w", "n", "h", "b"]  # offset order
    np.testing.assert_array_equal(t["w"], [[1, 2], [3, 4]])
    assert t["n"].shape == () and t["n"].dtype == np.int64 and int(t["n"]) == -7
    np.testing.assert_array_equal(t["h"], np.array([1.5, -2, 65504], np.float16))
    assert t["b"].dtype == np.float32 and t["b"][0] == 1.0
    assert interop._is_safetensors(str(p))


def test_writer_layout_and_round_trip(tmp_path):
    p = tmp_path / "w.safetensors"
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    n = np.array(5, dtype=np.int64)
    big_endian = np.arange(3, dtype=">f8")
    interop.save_safetensors(p, {"w": w.T, "n": n, "d": big_endian}, {"k": "v"})
    data = p.read_bytes()
    size = struct.unpack("<Q", data[:8])[0]
    assert size % 8 == 0  # padded with spaces, as the package writes
    header = json.loads(data[8:8 + size])
    # 8-byte values first, in the given order; then the F32 tensor (transposed: C order written)
    assert header["n"]["data_offsets"] == [0, 8] and header["d"]["data_offsets"] == [8, 32]
    assert header["w"] == {"dtype": "F32", "shape": [3, 2], "data_offsets": [32, 56]}
    assert data[8 + size + 32:] == np.ascontiguousarray(w.T).astype("<f4").tobytes()
    t, meta = interop.load_safetensors(p)
    np.testing.assert_array_equal(t["w"], w.T)
    np.testing.assert_array_equal(t["d"], [0, 1, 2])
    assert meta == {"k": "v"}
    with pytest.raises(ValueError, match="dtype object"):
        interop.save_safetensors(p, {"o": np.array([None])})
    with pytest.raises(ValueError, match="reserved"):
        interop.save_safetensors(p, {"__metadata__": w})
    assert interop.load_safetensors(p)[1] == {"k": "v"}  # refused writes left the file alone


@pytest.mark.parametrize("header,buffer,message", [
    ({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 20]}}, 16,
     "tensor 'w': data_offsets \\[0, 20\\] point outside the file"),
    ({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
      "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}, 16,
     "tensor 'b': data_offsets \\[8, 16\\] overlap tensor 'a' \\[0, 12\\]"),
    ({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
      "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}, 16,
     "tensor 'b': data_offsets begin at 8, leaving bytes \\[4, 8\\)"),
    ({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}}, 16,
     "cover 12 of the buffer's 16 bytes"),
    ({"a": {"dtype": "F64", "shape": [4], "data_offsets": [0, 16]}}, 16,
     "tensor 'a': F64 of this shape needs 32 bytes, data_offsets give 16"),
    ({"a": {"dtype": "F31", "shape": [4], "data_offsets": [0, 16]}}, 16,
     "tensor 'a': unknown dtype 'F31'"),
    ({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16], "x": 1}}, 16,
     "tensor 'a': unknown field 'x'"),
    ({"__metadata__": {"rate": 50}}, 0, "__metadata__ entry 'rate' is not text"),
])
def test_bad_headers_are_refused_naming_the_tensor(tmp_path, header, buffer, message):
    p = _write(tmp_path / "bad.safetensors", _file(header, bytes(buffer)))
    with pytest.raises(ValueError, match=message):
        interop.load_safetensors(p)


def test_bad_sizes_and_repeated_names(tmp_path):
    cases = [
        (b"abc", "3 bytes, too short"),
        (struct.pack("<Q", 200_000_000) + b"{}", "exceeds the bound of 100000000"),
        (struct.pack("<Q", 64) + b"{}", "runs past the file's end"),
        (struct.pack("<Q", 2) + b"[]", "does not open with"),
        (struct.pack("<Q", 3) + b'{"a', "not valid JSON"),
    ]
    e = '{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'
    text = ('{"a":' + e + ',"a":' + e + "}").encode()
    cases.append((struct.pack("<Q", len(text)) + text + bytes(4), "key 'a' twice"))
    for i, (data, message) in enumerate(cases):
        p = _write(tmp_path / f"s{i}.safetensors", data)
        with pytest.raises(ValueError, match=message):
            interop.load_safetensors(p)


def test_files_of_the_safetensors_package_both_ways(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    rng = np.random.default_rng(0)
    tensors = {"a.weight": rng.standard_normal((3, 5)).astype(np.float32),
               "b": rng.standard_normal(4).astype(np.float16),
               "c": np.arange(3, dtype=np.int64), "d": np.array(2.5, dtype=np.float64),
               "e": np.array([True, False])}
    theirs = tmp_path / "theirs.safetensors"
    st.save_file(tensors, str(theirs), metadata={"format": "np", "who": "package"})
    t, meta = interop.load_safetensors(theirs)
    assert meta == {"format": "np", "who": "package"}
    assert set(t) == set(tensors)
    for k, v in tensors.items():
        assert t[k].dtype == v.dtype and t[k].shape == v.shape
        np.testing.assert_array_equal(t[k], v)
    ours = tmp_path / "ours.safetensors"
    interop.save_safetensors(ours, tensors, {"who": "moca"})
    back = st.load_file(str(ours))
    for k, v in tensors.items():
        assert back[k].dtype == v.dtype
        np.testing.assert_array_equal(back[k], v)
    from safetensors import safe_open
    with safe_open(str(ours), framework="numpy") as f:
        assert f.metadata() == {"who": "moca"}
    # the package refuses what moca refuses: overlapping offsets
    bad = _write(tmp_path / "bad.safetensors", _file({
        "a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
        "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}, bytes(16)))
    with pytest.raises(Exception):
        st.load_file(str(bad))
    with pytest.raises(ValueError, match="overlap"):
        interop.load_safetensors(bad)


# --- models: export and import --------------------------------------------------------------

def _moca(*args, rc=0):
    return run_tool("moca", *args, env_extra={"OMP_WAIT_POLICY": "passive"}, rc=rc)


@pytest.fixture(scope="module")
def mae(tmp_path_factory):
    if not moca.with_torch:
        pytest.skip("moca built without LibTorch")
    d = tmp_path_factory.mktemp("st")
    path = d / "mae.pt"
    _moca("pretrain", "--preset", "cpu-small", "--synthetic-windows", "40", "--split", "all",
          "--epochs", "1", "--warmup-epochs", "0", "--batch", "20", "--threads", "1",
          "--no-progress", "--checkpoint", path)
    return d, path


def _reconstruct(checkpoint, names):
    x = np.random.default_rng(2).standard_normal((3, 6, 200)).astype(np.float32)
    m = np.zeros((1, 6, 10), bool)
    m[0, :, 5:] = True
    return moca._core.reconstruct(str(checkpoint), x, m, names)


def test_export_import_round_trip_through_safetensors(mae):
    d, path = mae
    names = moca.Encoder.load(path).channel_names
    out = d / "mae.safetensors"
    rep = moca.interop.export_pytorch(path, out)
    assert rep["format"] == "safetensors"
    t, meta = interop.load_safetensors(out)
    # the same tensors as the .pth export, as torch.save wrote them (read by the pickle reader)
    moca.interop.export_pytorch(path, d / "mae.pth")
    pth = interop.load_pth(d / "mae.pth")[0]["model"]
    assert list(t) != [] and set(t) == set(pth) == set(rep["keys"])
    for k in pth:
        assert t[k].shape == pth[k].shape
        np.testing.assert_array_equal(t[k], pth[k])
    assert meta["moca_format"] == "moca-safetensors-1" and meta["kind"] == "mae"
    assert json.loads(meta["channel_names"]) == list(names)
    assert float(meta["sample_rate_hz"]) == 50.0
    assert json.loads(meta["model"])["channels"] == 6
    # back in C++ (`moca import`) and Python: no options, the record says them; same outputs
    _moca("import", "--weights", out, "--out", d / "c.pt")
    interop.import_pytorch(out, d / "p.pt")
    ref = _reconstruct(path, names)
    np.testing.assert_array_equal(_reconstruct(d / "c.pt", names), ref)
    np.testing.assert_array_equal(_reconstruct(d / "p.pt", names), ref)
    # the tool's export is the library's, byte for byte
    _moca("export", "--checkpoint", path, "--out", d / "tool.safetensors")
    assert (d / "tool.safetensors").read_bytes() == out.read_bytes()
    p = _moca("export", "--checkpoint", path, "--out", d / "forced.bin", "--format", "safetensors")
    assert "(safetensors)" in p.stdout and interop._is_safetensors(str(d / "forced.bin"))
    # control: two same-shaped tensors swapped give other outputs (the equality above can fail)
    sw = dict(t)
    sw["blocks.0.attn.proj.weight"], sw["blocks.1.attn.proj.weight"] = (
        t["blocks.1.attn.proj.weight"], t["blocks.0.attn.proj.weight"])
    interop.save_safetensors(d / "swapped.safetensors", sw, meta)
    _moca("import", "--weights", d / "swapped.safetensors", "--out", d / "s.pt")
    assert not np.array_equal(_reconstruct(d / "s.pt", names), ref)


def test_a_file_the_package_saved_is_imported(mae):
    st = pytest.importorskip("safetensors.numpy")
    d, path = mae
    names = moca.Encoder.load(path).channel_names
    moca.interop.export_pytorch(path, d / "m.pth")
    state = interop.load_pth(d / "m.pth")[0]["model"]
    st.save_file({k: np.ascontiguousarray(v) for k, v in state.items()},
                 str(d / "foreign.safetensors"))  # no moca record: options needed
    p = _moca("import", "--weights", d / "foreign.safetensors", "--out", d / "f.pt", rc=2)
    assert "--sample-rate" in p.stderr and not (d / "f.pt").exists()
    _moca("import", "--weights", d / "foreign.safetensors", "--out", d / "f.pt",
          "--channel-names", ",".join(names), "--sample-rate", "50", "--num-heads", "4",
          "--decoder-num-heads", "4")
    np.testing.assert_array_equal(_reconstruct(d / "f.pt", names), _reconstruct(path, names))
    # moca's export opens in the package, metadata included
    moca.interop.export_pytorch(path, d / "m.safetensors")
    from safetensors import safe_open
    with safe_open(str(d / "m.safetensors"), framework="numpy") as f:
        assert f.metadata()["kind"] == "mae"
        assert set(f.keys()) == set(state)


def test_bad_weights_file_is_refused_and_nothing_written(mae, tmp_path):
    bad = _write(tmp_path / "bad.safetensors", _file({
        "patch_embed.proj.weight": {"dtype": "F32", "shape": [4], "data_offsets": [0, 20]}},
        bytes(16)))
    p = _moca("import", "--weights", bad, "--out", tmp_path / "o.pt", "--channel-names", "a",
              "--sample-rate", "50", rc=2)
    assert p.stderr.startswith("moca: ") and "tensor 'patch_embed.proj.weight'" in p.stderr
    assert "point outside the file" in p.stderr and not (tmp_path / "o.pt").exists()
    with pytest.raises(ValueError, match="point outside the file"):
        interop.import_pytorch(bad, tmp_path / "o.pt", channel_names=["a"], sample_rate=50)
    assert not (tmp_path / "o.pt").exists()


def test_torch_reads_the_export(mae):
    torch = pytest.importorskip("torch")
    stt = pytest.importorskip("safetensors.torch")
    from moca import torch_model
    d, path = mae
    moca.interop.export_pytorch(path, d / "t.safetensors")
    moca.interop.export_pytorch(path, d / "t.pth")
    a = stt.load_file(str(d / "t.safetensors"))
    b = torch.load(str(d / "t.pth"), weights_only=True)["model"]
    assert set(a) == set(b) and all(torch.equal(a[k], b[k]) for k in b)
    m1, m2 = torch_model.from_export(str(d / "t.safetensors")), torch_model.from_export(
        str(d / "t.pth"))
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((2, 6, 200)).astype(np.float32))
    with torch.no_grad():
        assert torch.equal(m1.forward_encoder(x), m2.forward_encoder(x))
