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
                           epochs=2, warmup_epochs=0, batch_size=10, threads=1,
                           label_fraction=0.5)
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
                            folds=3, epochs=2, warmup_epochs=0, batch_size=10, threads=1,
                            shuffle_labels=True)
    assert "shuffled-label control: training labels permuted" in ctl["log"]
    for f, c in zip(ctl["folds"], py["folds"]):
        assert f["test_subjects"] == c["test_subjects"] and f["truth"] == c["truth"]


def test_run_protocol_keywords_are_the_cli_flags(tmp_path):
    """run_protocol's keywords are made from the schema rows that make `moca linprobe`'s and
    `moca finetune`'s flags (issue 39): each keyword's default is the value the program's own
    --print-config reports for its flag, read from the program's output."""
    import inspect
    import tomllib

    import moca
    if not moca.with_torch:
        pytest.skip("built without LibTorch")
    params = inspect.signature(moca.run_protocol).parameters
    doc = moca.run_protocol.__doc__
    for command in ("linprobe", "finetune"):
        r = _run("moca", command, "--print-config", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        cli = tomllib.loads(r.stdout)[command]
        compared = 0
        for key, p in params.items():
            row = [line for line in doc.splitlines() if line.strip().startswith(f"* ``{key}``")]
            if not row:
                continue
            flag = row[0].split("(``")[1].split("``")[0].lstrip("-")
            if p.default in (None, "") or flag not in cli:
                continue
            assert cli[flag] == p.default, (command, key)
            compared += 1
        assert compared >= 10, compared
    # the finetune-only rows are marked, and the probe has no such flags
    assert "[finetune, scratch only]: layer-wise lr decay" in doc
    r = _run("moca", "linprobe", "--layer-decay", "0.5", cwd=tmp_path)
    assert r.returncode == 2 and "--layer-decay" in r.stderr


def test_run_protocol_refuses_bad_keywords_before_training():
    """Bad keywords fail in the options' checks, before the checkpoint is read, naming the
    keyword (not the library's field); the control call with good keywords gets as far as the
    missing checkpoint."""
    import numpy as np

    import moca
    if not moca.with_torch:
        pytest.skip("built without LibTorch")
    X = np.zeros((8, 6, 20), np.float32)
    y = np.arange(8) % 2
    kw = dict(channel_names=[f"c{i}" for i in range(6)])
    call = lambda **o: moca.run_protocol("no-such.pt", X, y, **kw, **o)  # noqa: E731
    with pytest.raises(ValueError, match=r"^layer_decay \(0.5\) does not apply to mode linprobe"):
        call(layer_decay=0.5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'batchsize'.*batch_size"):
        call(batchsize=4)
    with pytest.raises(ValueError, match=r"^label_fraction \(0\) must be in \(0, 1\]"):
        call(label_fraction=0)
    with pytest.raises(ValueError, match=r"^epochs \(0\) must be >= 1"):
        call(epochs=0)
    with pytest.raises(TypeError, match="epochs must be an int, not float"):
        call(epochs=2.5)
    with pytest.raises(TypeError, match="shuffle_labels must be a bool"):
        call(shuffle_labels=1)
    with pytest.raises(TypeError, match="lr must be a number, not bool"):
        call(lr=np.bool_(True))
    with pytest.raises(ValueError, match="refit trains the model to keep; it needs save_model"):
        call(refit=True)
    with pytest.raises(ValueError, match="protocol \\(kfold\\) must be one of"):
        call(protocol="kfold")
    with pytest.warns(FutureWarning, match="batch_size"):
        with pytest.raises(ValueError, match="^batch_size \\(0\\) must be >= 1"):
            call(batch=0)
    # control: good keywords (NumPy scalars too) pass the checks; the checkpoint is what fails
    with pytest.raises(RuntimeError, match="no-such.pt"):
        call(epochs=np.int64(2), lr=np.float32(0.01), shuffle_labels=np.bool_(True),
             layer_decay=None)
