"""moca.run_protocol: the classification protocol of `moca linprobe` from Python (issue 31). It
trains in this process, which sets LibTorch's (and so OpenMP's) thread count: conftest runs this
file with the others that do so, last."""
import json

import pytest

from conftest import run_tool


def _run(tool, *args, cwd):
    return run_tool(tool, *args, rc=None, cwd=cwd)


def test_python_run_protocol_equals_the_cli(tmp_path):
    """moca.run_protocol and `moca linprobe` make the same library call: same folds, same
    predictions, same metrics to the last bit."""
    import moca
    if not moca.with_torch:
        pytest.skip("built without LibTorch")
    r = _run("moca", "pretrain", "--preset", "cpu-small", "--synthetic-windows", "40", "--split",
             "all", "--epochs", "1", "--warmup-epochs", "0", "--batch", "20", "--threads", "1",
             "--no-progress", "--checkpoint", "m.pt", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _run("moca", "data", "export", "--data", "generator:windows=60,subjects=6,seed=4",
             "--out", "d", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    flags = ["--checkpoint", "m.pt", "--data", "npy:d", "--protocol", "subject-kfold", "--folds",
             "3", "--epochs", "2", "--warmup-epochs", "0", "--batch", "10", "--threads", "1",
             "--no-progress", "--label-fraction", "0.5", "--json", "cli.json"]
    r = _run("moca", "linprobe", *flags, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    cli = json.loads((tmp_path / "cli.json").read_text())
    d = moca.data.load(tmp_path / "d")
    py = moca.run_protocol(tmp_path / "m.pt", d.X, d.y, d.pid,
                           channel_names=d.meta["channel_names"],
                           class_names=d.meta["class_names"], protocol="subject-kfold", folds=3,
                           epochs=2, warmup_epochs=0, batch=10, threads=1, label_fraction=0.5)
    assert len(py["folds"]) == 3
    for f, c in zip(py["folds"], cli["folds"]):
        assert f["train_windows"] == c["train_windows"] and f["test_subjects"] == c["test_subjects"]
        assert f["accuracy"] == c["metrics"]["accuracy"]
        assert f["macro_f1"] == c["metrics"]["macro_f1"]
    assert py["accuracy"] == cli["summary"]["accuracy"]["values"]
    with pytest.raises(ValueError, match="protocol \\(kfold\\) must be one of"):
        moca.run_protocol(tmp_path / "m.pt", d.X, d.y, d.pid, channel_names=d.meta["channel_names"],
                          protocol="kfold")
    # The shuffled-label control: same folds and test windows; the log says the training labels
    # were permuted, and the (test) truth is still the data's.
    ctl = moca.run_protocol(tmp_path / "m.pt", d.X, d.y, d.pid,
                            channel_names=d.meta["channel_names"], protocol="subject-kfold",
                            folds=3, epochs=2, warmup_epochs=0, batch=10, threads=1,
                            shuffle_labels=True)
    assert "shuffled-label control: training labels permuted" in ctl["log"]
    for f, c in zip(ctl["folds"], py["folds"]):
        assert f["test_subjects"] == c["test_subjects"] and f["truth"] == c["truth"]
