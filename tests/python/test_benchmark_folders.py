"""Data sets as benchmark releases ship them (issue 31): an ssl-wearables folder (X.npy, Y.npy,
pid.npy, no meta.json) through the programs: an unstated rate is an error naming the flag (exit 2,
nothing written) for every program that brings windows to the model's rate; --channel-names,
names from --modalities groups and --segment as `moca data inspect` reports them."""
import json
import numpy as np
import pytest

from conftest import run_tool


def _run(tool, *args, cwd):
    return run_tool(tool, *args, rc=None, cwd=cwd)


@pytest.fixture
def folder(tmp_path):
    """Six 10-s windows at 30 Hz, six channels, three classes, three subjects; no meta.json."""
    rng = np.random.default_rng(3)
    d = tmp_path / "ssl"
    d.mkdir()
    np.save(d / "X.npy", rng.standard_normal((6, 6, 300)).astype(np.float32))
    np.save(d / "Y.npy", np.array(["walk", "sit", "stand"] * 2))
    np.save(d / "pid.npy", np.array([1, 1, 2, 2, 3, 3]))
    return d


@pytest.mark.parametrize("tool,args", [
    ("moca", ["data", "inspect"]),
    ("kcca_score", ["--draws", "2", "--pca", "3"]),
    ("moca", ["pretrain", "--preset", "tiny", "--epochs", "1", "--warmup-epochs", "0", "--checkpoint", "m.pt"]),
])
def test_an_unstated_rate_is_an_error_naming_the_flag(tmp_path, folder, tool, args):
    r = _run(tool, *args, "--data", f"npy:{folder}", "--json", "out.json", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr == (f"{tool}: npy:{folder}: sample rate unknown (no --sample-rate, no "
                        "sample_rate in meta.json); state it with --sample-rate HZ\n")
    assert not (tmp_path / "out.json").exists() and not (tmp_path / "m.pt").exists()


def test_channel_names_groups_and_segments(tmp_path, folder):
    def inspect(*flags):
        r = _run("moca", "data", "inspect", "--data", f"npy:{folder}", "--sample-rate", "30",
                 *flags, "--json", "out.json", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        return json.loads((tmp_path / "out.json").read_text()), r.stdout

    doc, _ = inspect("--modalities", "acc=0-2,gyro=3-5")
    assert doc["channels"] == ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"]
    doc, _ = inspect("--channel-names", "a_x,a_y,a_z,g_x,g_y,g_z")
    assert doc["channels"] == ["a_x", "a_y", "a_z", "g_x", "g_y", "g_z"]
    assert doc["modalities"] == "a=0-2,g=3-5"
    # 10-s windows -> two 5-s sub-windows each (then brought to the model's 50 Hz, 4 s)
    whole, _ = inspect()
    doc, text = inspect("--segment", "5")
    assert doc["windows"] == 2 * whole["windows"] == 12
    assert "segment 5: 6 windows -> 12 sub-windows of 150 samples every 150" in text
    r = _run("moca", "data", "inspect", "--data", f"npy:{folder}", "--sample-rate", "30",
             "--segment", "12", cwd=tmp_path)
    assert r.returncode == 2
    assert "--segment (12) is 360 samples at 30 Hz, longer than the windows (300 samples)" in r.stderr
    r = _run("moca", "data", "inspect", "--data", f"npy:{folder}", "--sample-rate", "30",
             "--channel-names", "a,b", cwd=tmp_path)
    assert r.returncode == 2 and "--channel-names: 2 names for the data's 6 channels" in r.stderr


def test_python_load_takes_the_same_rules(folder):
    import moca
    d = moca.data.load(f"npy:{folder}", sample_rate=30, segment="5",
                       channel_names=[f"{m}_{a}" for m in ("acc", "gyro") for a in "xyz"])
    assert d.X.shape == (12, 6, 150)  # kept as stored: 5 s at 30 Hz
    X = np.load(folder / "X.npy")
    assert np.array_equal(np.concatenate([d.X[0], d.X[1]], axis=1), X[0])
    assert d.meta["channel_names"][3] == "gyro_x"
    with pytest.raises(ValueError, match="sample rate unknown"):
        moca.data.load(f"npy:{folder}", rate=50, length=200)


def test_a_4s_model_probed_on_a_30hz_10s_folder_cut_into_5s_windows(tmp_path, folder):
    """The paper's transfer path end to end: channels named from --modalities, 10-s windows cut
    into 5-s ones, resampled to the checkpoint's 50 Hz and taken whole-patch (240 samples) by a
    model pre-trained on 4-s windows; leave-one-subject-out; the kept model's length is 240."""
    r = _run("moca", "pretrain", "--preset", "cpu-small", "--synthetic-windows", "40", "--split",
             "all", "--epochs", "1", "--warmup-epochs", "0", "--batch", "20", "--threads", "1",
             "--no-progress", "--checkpoint", "m.pt", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _run("moca", "linprobe", "--checkpoint", "m.pt", "--data", f"npy:{folder}",
             "--sample-rate", "30", "--modalities", "acc=0-2,gyro=3-5", "--segment", "5",
             "--input-seconds", "5", "--protocol", "loso", "--epochs", "1", "--warmup-epochs",
             "0", "--batch", "4", "--threads", "1", "--no-progress", "--save-model", "clf.pt",
             "--json", "out.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert ("input of 5 s: 250 samples at 50 Hz -> 240 (12 patches of 20 per modality; "
            "windows centre-cropped to whole patches; the model's own length is 200)") in r.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    assert len(doc["folds"]) == 3 and doc["data"]["windows"] == 12
    assert doc["data"]["channels"] == ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"]
    r = _run("moca", "predict", "--model", "clf.pt", "--data", f"npy:{folder}", "--sample-rate",
             "30", "--modalities", "acc=0-2,gyro=3-5", "--segment", "5", "--json", "p.json",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "p.json").read_text())["data"]["length"] == 240


def test_match_channels_by_position(tmp_path, folder):
    """Channels named otherwise than the model's: refused by name, taken in order by position."""
    r = _run("moca", "pretrain", "--preset", "cpu-small", "--synthetic-windows", "40", "--split",
             "all", "--epochs", "1", "--warmup-epochs", "0", "--batch", "20", "--threads", "1",
             "--no-progress", "--checkpoint", "m.pt", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    probe = ["moca", "linprobe", "--checkpoint", "m.pt", "--data", f"npy:{folder}",
             "--sample-rate", "30", "--channel-names", "a,b,c,d,e,f", "--protocol", "loso",
             "--epochs", "1", "--warmup-epochs", "0", "--batch", "2", "--threads", "1",
             "--no-progress", "--save-model", "clf.pt"]
    r = _run(*probe, cwd=tmp_path)
    assert r.returncode == 2 and "channel 'a' is not one of the model's" in r.stderr
    r = _run(*probe, "--match-channels", "position", "--label-fraction", "0.5", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # LOSO, fold 1: subjects 2 and 3 train: stand x2, walk, sit -> one of each kept
    assert "label fraction 0.5: 3 of 4 training windows (per class, at least one each)" in r.stderr
    bad = _run(*probe, "--label-fraction", "0", cwd=tmp_path)
    assert bad.returncode == 2 and "--label-fraction (0) must be in (0, 1]" in bad.stderr
    assert ("channels matched by position: a->acc_x b->acc_y c->acc_z d->gyro_x e->gyro_y "
            "f->gyro_z") in r.stderr
    # three channels only: the model's first three (accelerometer), by position
    r = _run("moca", "predict", "--model", "clf.pt", "--data", f"npy:{folder}", "--sample-rate",
             "30", "--modalities", "x=0-2", "--match-channels", "position", "--out", "p.csv",
             cwd=tmp_path)
    assert r.returncode == 2 and "'gyro_x' is missing" in r.stderr  # a probe on six needs six
    r = _run("moca", "predict", "--model", "clf.pt", "--data", f"npy:{folder}", "--sample-rate",
             "30", "--match-channels", "bad", cwd=tmp_path)
    assert r.returncode == 2 and "--match-channels (bad) must be one of: name, position" in r.stderr


def test_data_window_cuts_recordings_with_known_answers(tmp_path):
    """Two recordings at 10 Hz cut into 2-s windows: a window over a walk -> sit change is 'sit'
    by majority (a 10/10 tie goes to the first name) and 'transition' by the transition rule;
    a window never bridges an unlabelled gap; samples come through exactly."""
    import gzip
    rec = tmp_path / "rec"
    rec.mkdir()
    t = np.arange(50)
    lab1 = ["walk"] * 30 + ["sit"] * 20
    rows = [f"{i / 10},{i},{2 * i},{-i},{lab1[i]}" for i in t]
    (rec / "s1.csv").write_text("time,x,y,z,annotation\n" + "\n".join(rows) + "\n")
    lab2 = ["sit"] * 25 + [""] * 5 + ["walk"] * 20
    rows = [f"{i / 10},{100 + i},{i % 3},{0.5},{lab2[i]}" for i in t]
    with gzip.open(rec / "s2.csv.gz", "wt") as f:
        f.write("time,x,y,z,annotation\n" + "\n".join(rows) + "\n")

    def window(rule, out):
        # (--transition-seconds only with the transition rule: beside majority it is refused)
        cover = ["--transition-seconds", "0.5"] if rule == "transition" else []
        r = _run("moca", "data", "window", "--from", str(rec), "--sample-rate", "10",
                 "--window-seconds", "2", "--label-rule", rule, *cover, "--out", out,
                 cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        X, Y, pid = (np.load(tmp_path / out / f, allow_pickle=False)
                     for f in ("X.npy", "Y.npy", "pid.npy"))
        return X, Y, pid, json.loads((tmp_path / out / "meta.json").read_text())

    X, Y, pid, meta = window("majority", "maj")
    assert X.shape == (4, 3, 20)
    assert list(Y) == ["walk", "sit", "sit", "walk"] and list(pid) == [0, 0, 1, 1]
    assert np.array_equal(X[1, 0], np.arange(20, 40)) and np.array_equal(X[1, 1], 2 * np.arange(20, 40))
    assert np.array_equal(X[3, 0], 100 + np.arange(30, 50))  # after the gap, not across it
    assert meta["sample_rate"] == 10 and meta["channel_names"] == ["x", "y", "z"]
    assert meta["subject_names"] == ["s1", "s2"]
    _, Y, _, _ = window("transition", "tr")
    assert list(Y) == ["walk", "transition", "sit", "walk"]
    # the folder opens as any ssl-wearables folder, its rate stated by meta.json
    r = _run("moca", "data", "inspect", "--data", str(tmp_path / "tr"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # an unstated rate is a usage error, and so is a file without the label column
    r = _run("moca", "data", "window", "--from", str(rec), "--out", "x", cwd=tmp_path)
    assert r.returncode == 2 and "--sample-rate is required" in r.stderr
    # the windowing's rows name their flags (they said `RecordingWindowOptions::validate()`)
    for flag, value, rule in (("--sample-rate", "-1", "must be > 0"),
                              ("--window-seconds", "0", "must be > 0"),
                              ("--stride-seconds", "-1", "must be >= 0")):
        rate = [] if flag == "--sample-rate" else ["--sample-rate", "10"]
        r = _run("moca", "data", "window", "--from", str(rec), *rate, flag, value, "--out", "x",
                 cwd=tmp_path)
        assert r.returncode == 2 and f"moca: {flag} ({value}) {rule}" in r.stderr, r.stderr
    (rec / "s3.csv").write_text("time,x,y,z,activity\n0,1,2,3,walk\n")
    r = _run("moca", "data", "window", "--from", str(rec), "--sample-rate", "10", "--out", "x",
             cwd=tmp_path)
    assert r.returncode == 2
    assert "s3.csv:1: no label column 'annotation' or 'label' in the header" in r.stderr
    assert not (tmp_path / "x").exists()

