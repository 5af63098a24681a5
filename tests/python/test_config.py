"""--print-config -> --config repeats a run (tools/support/run_cli, every program): the second
run's JSON equals the first's but for timings, and every result JSON records as "options" exactly
what --print-config writes (same keys, same values, read by Python's own TOML reader); an unknown
key or a bad value in the file is an error naming the file, line and key (exit 2)."""
import json
import os
import shutil
import subprocess
import tomllib

import numpy as np
import pytest

from conftest import bin_dir


def _strip(d):
    """The document without timings (keys containing 'second', 'time' or '_per_s')."""
    timing = ("second", "time", "_per_s")
    if isinstance(d, dict):
        return {k: _strip(v) for k, v in d.items() if not any(t in k for t in timing)}
    if isinstance(d, list):
        return [_strip(x) for x in d]
    return d


def _run(tool, *args, cwd):
    exe = os.path.abspath(os.path.join(bin_dir(), tool))
    if not os.path.exists(exe):
        pytest.skip(f"{exe} not built")
    env = dict(os.environ)
    env.pop("MOCA_HAPT_DIR", None)  # the generator
    return subprocess.run([exe, *args], capture_output=True, text=True, env=env, cwd=cwd)


def _round_trip(tool, sub, flags, cwd, out="out.json", fresh=None):
    """Runs `tool sub... flags` (writing `out`), then --print-config with the same flags, then
    `tool sub... --config run.toml`: the JSON's "options" equal the printed config, and the
    second run's JSON equals the first's but for timings (`fresh`: a folder removed before it,
    so that a resumable study runs again). Returns the first JSON."""
    first = _run(tool, *sub, *flags, cwd=cwd)
    assert first.returncode == 0, first.stderr
    doc = json.loads((cwd / out).read_text())
    (cwd / out).unlink()
    if fresh:
        shutil.rmtree(cwd / fresh)
    p = _run(tool, *sub, *flags, "--print-config", cwd=cwd)
    assert p.returncode == 0, p.stderr
    assert not (cwd / out).exists()  # printing the config runs nothing
    assert doc["options"] == tomllib.loads(p.stdout)
    (cwd / "run.toml").write_text(p.stdout)
    again = _run(tool, *sub, "--config", "run.toml", cwd=cwd)
    assert again.returncode == 0, again.stderr + p.stdout
    assert _strip(json.loads((cwd / out).read_text())) == _strip(doc)
    return doc


# (tool, flags of a small run writing out.json) for every program cheap enough to run twice
RUNS = [
    ("kcca", ["--u", "u.npy", "--m", "m.npy", "--gamma", "0.2", "--components", "2",
              "--permutations", "9", "--bootstrap", "5", "--no-center", "--output", "out.json"]),
    ("kcca", ["--u", "u.npy", "--m", "m.npy", "--cca", "--ridge", "0.1", "--output", "out.json"]),
    ("kcca_score", ["--samples", "200", "--draws", "3", "--scheme", "cross,random",
                    "--json", "out.json"]),
    ("simulation_study", ["--samples", "100", "--draws", "3", "--features", "raw",
                          "--ratio-sweep", "0.5", "--ratio-sweep", "0.6", "--json", "out.json"]),
    ("coupling_sweep", ["--couplings", "0.2", "0.8", "--samples", "100", "--draws", "2", "--pca",
                        "5", "--json", "out.json"]),
    ("moca", ["data", "inspect", "--json", "out.json"]),
]


@pytest.mark.parametrize("tool,flags", RUNS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(RUNS)])
def test_print_config_then_config_repeats_the_run(tmp_path, tool, flags):
    rng = np.random.default_rng(0)
    U = rng.standard_normal((40, 3))
    np.save(tmp_path / "u.npy", U)
    np.save(tmp_path / "m.npy", U ** 2 + rng.standard_normal((40, 3)))
    sub = flags[:2] if tool == "moca" else []
    doc = _round_trip(tool, sub, flags[len(sub):], tmp_path)
    # the file holds the defaults too, and the command line overrides it
    if tool == "kcca":
        assert doc["options"]["seed"] == 0
        # beside --cca the kernel flags take no effect, and the record leaves them out
        assert doc["options"].get("kernel") == (None if "--cca" in flags else "rbf")
        over = _run(tool, "--config", "run.toml", "--seed", "3", "--json", cwd=tmp_path)
        assert over.returncode == 0 and json.loads(over.stdout)["options"]["seed"] == 3


def test_config_errors_name_file_line_and_key(tmp_path):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "u.npy", rng.standard_normal((20, 2)))
    np.save(tmp_path / "m.npy", rng.standard_normal((20, 2)))
    head = 'u = "u.npy"\n# a comment\nm = "m.npy"\n'
    cases = [
        ("gama = 0.3\n", "kcca: bad.toml:4: unknown key 'gama'"),
        ("components = \"many\"\n", "kcca: bad.toml:4: key 'components': Could not convert: "
                                    "--components = many"),
        ("gamma-u = -1\n", "kcca: bad.toml:4: key 'gamma-u': --gamma-u (-1) must be > 0"),
        ("[extra]\nx = 1\n", "kcca: bad.toml:5: unknown key 'extra.x'"),
    ]
    for tail, message in cases:
        (tmp_path / "bad.toml").write_text(head + tail)
        r = _run("kcca", "--config", "bad.toml", cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith(message), r.stderr
        assert r.stdout == ""
    r = _run("kcca", "--config", "missing.toml", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("kcca: missing.toml was not readable")
    r = _run("kcca_score", "--config", "bad.toml", cwd=tmp_path)
    assert r.returncode == 2 and "bad.toml:1: unknown key 'u'" in r.stderr


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    """A tiny pre-trained checkpoint (cpu-small, 40 generator windows, one epoch)."""
    d = tmp_path_factory.mktemp("pretrained")
    r = _run("moca", *PRETRAIN, "--checkpoint", "m.pt", cwd=d)
    assert r.returncode == 0, r.stderr
    return d / "m.pt"


PRETRAIN = ["pretrain", "--preset", "cpu-small", "--synthetic-windows", "40", "--split", "all",
            "--epochs", "1", "--warmup-epochs", "0", "--batch", "20", "--threads", "1",
            "--no-progress"]
SMALL = ["--synthetic-windows", "40", "--threads", "1", "--no-progress"]
LINPROBE = ["linprobe", "--checkpoint", "m.pt", "--synthetic-windows", "40", "--epochs", "2",
            "--warmup-epochs", "0", "--batch", "10", "--threads", "1", "--no-progress"]


@pytest.mark.parametrize("command", ["pretrain", "linprobe", "finetune", "predict", "metrics",
                                     "impute", "embed", "reconstruct", "bound_check"])
def test_print_config_then_config_repeats_moca_runs(tmp_path, pretrained, command):
    """Every moca command that writes a result JSON, and the study that reads a checkpoint."""
    (tmp_path / "m.pt").symlink_to(pretrained)
    out, tool = "out.json", "moca"
    if command == "pretrain":
        flags = PRETRAIN + ["--checkpoint", "again.pt", "--json", out]
    elif command in ("linprobe", "finetune"):
        flags = [command] + LINPROBE[1:] + ["--save-model", "clf.pt", "--json", out]
    elif command in ("predict", "metrics"):
        r = _run("moca", *LINPROBE, "--predictions", "pred.csv", "--save-model", "clf.pt",
                 cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        flags = (["predict", "--model", "clf.pt", *SMALL, "--out", "p.csv", "--proba"]
                 if command == "predict" else ["metrics", "--predictions", "pred.csv"])
        flags += ["--json", out]
    elif command == "impute":
        flags = ["impute", "--checkpoint", "m.pt", *SMALL, "--max-windows", "5", "--json", out]
    elif command == "embed":
        flags, out = ["embed", "--checkpoint", "m.pt", *SMALL, "--out", "emb"], "emb/embed.json"
    elif command == "reconstruct":
        flags = ["reconstruct", "--checkpoint", "m.pt", *SMALL, "--no-png", "--out", "rec"]
        out = "rec.json"
    else:
        tool, flags = "bound_check", ["--checkpoint", "m.pt", "--samples", "70", "--threads", "1",
                                      "--json", out]
    sub = flags[:1] if tool == "moca" else []
    doc = _round_trip(tool, sub, flags[len(sub):], tmp_path, out)
    if tool == "moca":
        assert list(doc["options"]) == [command]  # the subcommand's keys, as its TOML section


def test_print_config_then_config_repeats_transfer_study(tmp_path):
    """transfer_study (a supervised baseline on a 3-subject generated set: leave-one-subject-out):
    its report records the options of the run that started the ledger."""
    flags = ["--out", "ts", "--data", "g=generator:windows=42,subjects=3", "--settings", "ft",
             "--scratch-preset", "tiny", "--scratch-epochs", "1", "--threads", "1"]
    doc = _round_trip("transfer_study", [], flags, tmp_path, "ts/report.json", fresh="ts")
    # (a repeatable flag given once is written as one value, as --print-config writes it)
    assert doc["options"]["scratch-epochs"] == 1
    assert doc["options"]["data"] == "g=generator:windows=42,subjects=3"
    assert doc["units"]["scratch/g/supervised"]["protocol"] == "loso"


def test_print_config_then_config_repeats_policy_study(tmp_path):
    """The resumable study: its report records the options of the run that started the ledger."""
    flags = ["--out", "ps", "--generator-windows", "140", "--train-windows", "60", "--test-windows",
             "40", "--policies", "cross:ratio=0.5,sync:ratio=0.5,temporal:ratio=0.5", "--seeds", "1",
             "--epochs", "1", "--warmup-epochs", "0", "--probe-epochs", "1", "--features", "raw",
             "--pca", "5", "--draws", "2", "--tasks", "random:ratio=0.7", "--resamples", "100",
             "--threads", "1"]
    doc = _round_trip("policy_study", [], flags, tmp_path, "ps/report.json", fresh="ps")
    assert doc["options"]["generator-windows"] == 140 and doc["settings"]
