"""--print-config -> --config repeats a run (tools/support/run_cli, every program): the second
run's JSON equals the first's but for timings; an unknown key or a bad value in the file is an
error naming the file, line and key (exit 2)."""
import json
import os
import subprocess

import numpy as np
import pytest

from conftest import bin_dir


def _strip(d):
    """The document without timings (keys containing 'second' or 'time')."""
    if isinstance(d, dict):
        return {k: _strip(v) for k, v in d.items() if "second" not in k and "time" not in k}
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


# (tool, flags of a small run writing out.json) for every program cheap enough to run twice
RUNS = [
    ("kcca", ["--u", "u.npy", "--m", "m.npy", "--gamma", "0.2", "--components", "2",
              "--permutations", "9", "--bootstrap", "5", "--no-center", "--output", "out.json"]),
    ("kcca", ["--u", "u.npy", "--m", "m.npy", "--cca", "--ridge", "0.1", "--output", "out.json"]),
    ("kcca_score", ["--samples", "200", "--draws", "3", "--scheme", "cross,random",
                    "--json", "out.json"]),
    ("simulation_study", ["--samples", "100", "--draws", "3", "--features", "raw",
                          "--ratio-sweep", "0.5", "--ratio-sweep", "0.6", "--json", "out.json"]),
    ("moca", ["data", "inspect", "--json", "out.json"]),
]


@pytest.mark.parametrize("tool,flags", RUNS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(RUNS)])
def test_print_config_then_config_repeats_the_run(tmp_path, tool, flags):
    rng = np.random.default_rng(0)
    U = rng.standard_normal((40, 3))
    np.save(tmp_path / "u.npy", U)
    np.save(tmp_path / "m.npy", U ** 2 + rng.standard_normal((40, 3)))
    first = _run(tool, *flags, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    (tmp_path / "out.json").unlink()
    sub = [f for f in flags[:2] if not f.startswith("-")] if tool == "moca" else []
    p = _run(tool, *flags, "--print-config", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "out.json").exists()  # printing the config runs nothing
    (tmp_path / "run.toml").write_text(p.stdout)
    again = _run(tool, *sub, "--config", "run.toml", cwd=tmp_path)
    assert again.returncode == 0, again.stderr + p.stdout
    assert _strip(json.loads((tmp_path / "out.json").read_text())) == _strip(doc)
    # the file holds the defaults too, and the command line overrides it
    if tool == "kcca":
        assert "seed = 0" in p.stdout and "kernel = \"rbf\"" in p.stdout
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


@pytest.mark.parametrize("command", ["linprobe", "predict"])
def test_print_config_then_config_repeats_moca_classifier_runs(tmp_path, command):
    """The kept-classifier commands too: linprobe --save-model, then predict with the model."""
    ck = tmp_path / "m.pt"
    r = _run("moca", "pretrain", "--preset", "cpu-small", "--synthetic-windows", "40", "--split",
             "all", "--epochs", "1", "--warmup-epochs", "0", "--batch", "20", "--threads", "1",
             "--no-progress", "--checkpoint", str(ck), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lp = ["linprobe", "--checkpoint", "m.pt", "--synthetic-windows", "40", "--epochs", "2",
          "--warmup-epochs", "0", "--batch", "10", "--threads", "1", "--no-progress",
          "--save-model", "clf.pt"]
    flags = lp + ["--json", "out.json"]
    if command == "predict":
        r = _run("moca", *lp, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        flags = ["predict", "--model", "clf.pt", "--synthetic-windows", "40", "--threads", "1",
                 "--out", "p.csv", "--proba", "--json", "out.json"]
    first = _run("moca", *flags, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    (tmp_path / "out.json").unlink()
    p = _run("moca", *flags, "--print-config", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "out.json").exists()
    (tmp_path / "run.toml").write_text(p.stdout)
    again = _run("moca", command, "--config", "run.toml", cwd=tmp_path)
    assert again.returncode == 0, again.stderr + p.stdout
    assert _strip(json.loads((tmp_path / "out.json").read_text())) == _strip(doc)
