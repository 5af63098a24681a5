"""Issue 38 ("every flag honoured or refused"): a flag that the program's other options leave
without effect is refused when the user states it, on the command line or in a --config file at
another value than its default, even at its default value; not stated, it is left out of the
results' "options" and of --print-config, which record only what took effect. Python's
moca.data.load refuses the keyword the same way. Controls: the same flags where they take effect
change the output."""
import json

import numpy as np
import pytest

import moca
from conftest import run_tool


@pytest.fixture(scope="module")
def npy(tmp_path_factory):
    """An .npy folder (the generator's windows, exported): data that is not the generator."""
    d = tmp_path_factory.mktemp("npy") / "set"
    run_tool("moca", "data", "export", "--synthetic-windows", "60", "--out", str(d))
    return d


BASE = ["--scheme", "cross", "--draws", "2", "--pca", "4", "--threads", "1"]
SCORE = [*BASE, "--samples", "60"]


def test_generator_flags_beside_other_data_are_refused_even_at_their_default(npy, tmp_path):
    for flag, value in (("--coupling", "0.3"), ("--coupling", "0.8")):
        p = run_tool("kcca_score", "--data", str(npy), *SCORE, flag, value, rc=2)
        last = p.stderr.strip().splitlines()[-1]
        assert last.startswith(f"kcca_score: {flag} ({value}) takes no effect: only generator "
                               "data uses it; the data is npy:"), last
    # the .npy folder's own flags beside the generator
    p = run_tool("kcca_score", *SCORE, "--npy-layout", "NCL", rc=2)
    assert "--npy-layout (NCL) takes no effect: only npy data uses it" in p.stderr, p.stderr
    # a generator spec key and the flag for the same setting
    p = run_tool("kcca_score", "--data", "generator:coupling=0.5", *SCORE, "--coupling", "0.8",
                 rc=2)
    assert "--coupling (0.8) takes no effect: the data spec's coupling=0.5 sets it" in p.stderr
    # nothing was written
    assert not any(tmp_path.iterdir())


def test_flags_without_effect_are_not_recorded(npy, tmp_path):
    out = tmp_path / "r.json"
    run_tool("kcca_score", "--data", str(npy), *SCORE, "--json", str(out))
    options = json.loads(out.read_text())["options"]
    assert options["data"] == str(npy) and options["draws"] == 2
    # the generator's coupling and (no transitions scored) the split seed took no effect
    assert "coupling" not in options and "split-seed" not in options, options
    p = run_tool("kcca_score", "--data", str(npy), *SCORE, "--print-config")
    assert "coupling" not in p.stdout and "draws = 2" in p.stdout, p.stdout
    # control: on the generator both are recorded
    run_tool("kcca_score", *SCORE, "--json", str(out))
    options = json.loads(out.read_text())["options"]
    assert options["coupling"] == 0.8 and "npy-layout" not in options, options


def test_where_they_take_effect_the_same_flags_change_the_scores(tmp_path):
    """The control: --coupling on the generator changes the windows, hence the scores."""
    scores = {}
    for c in ("0.1", "0.9"):
        out = tmp_path / f"{c}.json"
        run_tool("kcca_score", *BASE, "--samples", "200", "--coupling", c, "--json", str(out))
        doc = json.loads(out.read_text())
        assert doc["options"]["coupling"] == float(c)
        scores[c] = doc["schemes"][0]["score"]
    assert scores["0.1"] != scores["0.9"], scores


def test_a_config_file_states_only_what_differs_from_the_defaults(npy, tmp_path):
    # a --print-config file of a generator run lists coupling at its default: it repeats on
    # other data, where coupling takes no effect ...
    cfg = tmp_path / "run.toml"
    cfg.write_text(run_tool("kcca_score", *SCORE, "--print-config").stdout)
    assert "coupling = 0.8" in cfg.read_text()
    run_tool("kcca_score", "--config", str(cfg), "--data", str(npy), "--json",
             str(tmp_path / "a.json"))
    # ... but a file that sets it to another value states it: refused, naming the file's line
    text = cfg.read_text().replace("coupling = 0.8", "coupling = 0.3")
    cfg.write_text(text)
    line = text.splitlines().index("coupling = 0.3") + 1
    p = run_tool("kcca_score", "--config", str(cfg), "--data", str(npy), rc=2)
    assert f"{cfg}:{line}: key 'coupling': --coupling (0.3) takes no effect" in p.stderr, p.stderr


def test_split_flags_the_split_does_not_use(tmp_path):
    # moca data export: without --transitions nothing is split
    p = run_tool("moca", "data", "export", "--synthetic-windows", "40", "--split",
                 "subject-kfold", "--folds", "5", "--out", str(tmp_path / "a"), rc=2)
    assert "--split (subject-kfold) takes no effect: it chooses the --transitions spliced" \
        in p.stderr, p.stderr
    # with --transitions, --folds only for a subject-wise split (here at its default value)
    p = run_tool("moca", "data", "export", "--synthetic-windows", "40", "--transitions", "10",
                 "--split", "random", "--folds", "5", "--out", str(tmp_path / "b"), rc=2)
    assert "--folds (5) takes no effect: only the subject-kfold split uses it; the split is " \
           "random" in p.stderr, p.stderr
    p = run_tool("moca", "data", "export", "--synthetic-windows", "40", "--transitions", "10",
                 "--split", "subject-kfold", "--train-fraction", "0.6",
                 "--out", str(tmp_path / "c"), rc=2)
    assert "--train-fraction (0.6) takes no effect: only the random split uses it" in p.stderr
    # linprobe: the protocol's split rows
    p = run_tool("moca", "linprobe", "--checkpoint", "none.pt", "--protocol", "loso", "--folds",
                 "3", rc=2)
    assert "--folds (3) takes no effect: only the subject-kfold protocol uses it; the " \
           "protocol is loso" in p.stderr, p.stderr
    # moca data window: --transition-seconds belongs to --label-rule transition
    p = run_tool("moca", "data", "window", "--from", str(tmp_path), "--sample-rate", "50",
                 "--transition-seconds", "1", "--out", str(tmp_path / "w"), rc=2)
    assert "--transition-seconds (1) takes no effect: only --label-rule transition" in p.stderr
    assert not any(p.name in ("a", "b", "c", "w") for p in tmp_path.iterdir())


def test_finetune_architecture_flags_beside_a_checkpoint_even_at_their_defaults(tmp_path):
    p = run_tool("moca", "finetune", "--checkpoint", "none.pt", "--preset", "cpu-small", rc=2)
    assert "--preset (cpu-small) takes no effect: it sets the architecture of --from-scratch" \
        in p.stderr, p.stderr
    # not stated: left out of --print-config (a checkpoint run records no architecture flags)
    p = run_tool("moca", "finetune", "--checkpoint", "none.pt", "--print-config")
    assert "preset" not in p.stdout and "checkpoint = " in p.stdout, p.stdout
    p = run_tool("moca", "finetune", "--from-scratch", "--print-config")
    assert "preset = " in p.stdout, p.stdout


def test_python_load_refuses_keywords_without_effect(npy):
    X = moca.data.load(str(npy)).X
    assert X.shape == (60, 6, 200)
    for kw, value in (("coupling", 0.8), ("windows", 10), ("seed", 0)):
        with pytest.raises(ValueError, match=f"^{kw} \\({value}\\) takes no effect: only "
                                             "generator data uses it; the data is npy:"):
            moca.data.load(str(npy), **{kw: value})
    with pytest.raises(ValueError, match=r"^npy_layout \(NCL\) takes no effect: only npy data"):
        moca.data.load("generator", npy_layout="NCL")
    with pytest.raises(ValueError, match=r"^coupling \(0.8\) takes no effect: the data "
                                         "spec's coupling=0.5 sets it"):
        moca.data.load("generator:coupling=0.5", coupling=0.8)
    # control: on the generator each keyword takes effect
    a = moca.data.load("generator", windows=20, coupling=0.1, seed=1).X
    assert a.shape[0] == 20
    assert not np.array_equal(a, moca.data.load("generator", windows=20, coupling=0.9,
                                                 seed=1).X)
    assert not np.array_equal(a, moca.data.load("generator", windows=20, coupling=0.1,
                                                 seed=2).X)


def test_python_run_protocol_refuses_split_keywords_its_protocol_does_not_use():
    if not moca.with_torch:
        pytest.skip("built without LibTorch")
    X, y, pid, meta = moca.data.load("generator", windows=30, seed=0)
    for protocol, kw, value in (("loso", "folds", 3), ("subject-kfold", "train_fraction", 0.6)):
        with pytest.raises(ValueError, match=f"^{kw} \\({value}\\) takes no effect: only "
                                             f"the .* protocol uses it; the protocol is "
                                             f"{protocol}"):
            moca.run_protocol(None, X, y, pid, channel_names=meta["channel_names"],
                              mode="scratch", protocol=protocol, **{kw: value})


def test_estimator_and_kernel_flags_the_estimator_does_not_use(tmp_path):
    for extra, flag, why in (
            (["--estimator", "cca", "--sigma", "2"], "--sigma (2)", "only the kcca estimator"),
            (["--kernel", "laplacian"], "--kernel (laplacian)", "only the kcca estimator"),
            (["--estimator", "kcca", "--pca", "4"], "--pca (4)", "only the cca estimator"),
            (["--estimator", "kcca", "--kernel", "linear", "--sigma", "2"], "--sigma (2)",
             "only the rbf and laplacian kernels have a bandwidth; the kernel is linear")):
        base = [a for a in SCORE if a not in ("--pca", "4")]
        p = run_tool("kcca_score", *base, *extra, rc=2)
        assert f"{flag} takes no effect: {why}" in p.stderr, p.stderr
    p = run_tool("coupling_sweep", "--estimator", "kcca", "--pca", "5", rc=2)
    assert "--pca (5) takes no effect: only the cca estimator uses it" in p.stderr, p.stderr
    # control: where it takes effect, --sigma changes the kcca scores
    base = [a for a in SCORE if a not in ("--pca", "4")]
    got = []
    for sigma in ("0.5", "50"):
        out = tmp_path / f"{sigma}.json"
        run_tool("kcca_score", *base, "--estimator", "kcca", "--sigma", sigma, "--json", str(out))
        got.append(json.loads(out.read_text())["schemes"][0]["score"])
    assert got[0] != got[1], got


def test_python_score_refuses_keywords_its_estimator_does_not_use():
    X = moca.data.load("generator", windows=40).X
    with pytest.raises(ValueError, match=r"^sigma \(2.0\) takes no effect: only the kcca "
                                         "estimator"):
        moca.score(X, ["cross"], draws=2, sigma=2.0)
    with pytest.raises(ValueError, match=r"^pca \(4\) takes no effect: only the cca estimator"):
        moca.score(X, ["cross"], draws=2, estimator="kcca", pca=4)
    # control: accepted where they act
    moca.score(X, ["cross"], draws=2, estimator="kcca", sigma=2.0)


def test_pretrain_augment_probability_needs_augment(tmp_path):
    # (tiny settings, so that a regression trains for seconds, not for the default's minutes)
    tiny = ["--synthetic-windows", "24", "--preset", "tiny", "--epochs", "1", "--warmup-epochs",
            "0", "--batch", "8", "--threads", "1", "--no-progress", "--checkpoint",
            str(tmp_path / "m.pt")]
    p = run_tool("moca", "pretrain", *tiny, "--augment-probability", "0.5", rc=2)
    assert "--augment-probability (0.5) takes no effect: only augment uses it" in p.stderr
    assert "augment-probability" not in run_tool("moca", "pretrain", "--print-config").stdout
    # control: beside --augment it is an option of the run
    assert "augment-probability = 0.5" in run_tool("moca", "pretrain", "--augment",
                                                   "--augment-probability", "0.5",
                                                   "--print-config").stdout


# Equal errors (the parity suite's other half): the same bad value given to a program and to the
# Python function that takes its route is refused with the same rule, the flag's name in one and
# the keyword's in the other.
ERROR_PARITY = [
    (("kcca_score", "--draws", "1"), lambda X: moca.score(X, ["cross"], draws=1),
     "--draws", "draws"),
    (("kcca_score", "--estimator", "cca", "--gamma", "0.5"),
     lambda X: moca.score(X, ["cross"], estimator="cca", gamma=0.5), "--gamma", "gamma"),
    (("moca", "data", "inspect", "--sample-rate", "-1"),
     lambda X: moca.data.load("generator", sample_rate=-1), "--sample-rate", "sample_rate"),
    (("moca", "data", "inspect", "--npy-layout", "NLC"),
     lambda X: moca.data.load("generator", npy_layout="NLC"), "--npy-layout", "npy_layout"),
]


@pytest.mark.parametrize("cli,call,flag,keyword", ERROR_PARITY,
                         ids=[c[0][0] + " " + c[2] for c in ERROR_PARITY])
def test_programs_and_python_refuse_alike(cli, call, flag, keyword):
    X = moca.data.load("generator", windows=40).X
    p = run_tool(*cli, rc=2)
    tool = p.stderr.strip().splitlines()[-1]
    with pytest.raises(ValueError) as e:
        call(X)
    py = str(e.value)
    assert tool.startswith(f"{cli[0]}: {flag}"), tool
    assert py.startswith(keyword), py
    # the value and the rule after the name are the same words
    assert py[len(keyword):] == tool[len(f"{cli[0]}: {flag}"):], (tool, py)


# Each flag of kcca_score, the main job: changed from the base run, it changes the scores or is
# refused as taking no effect. The table names every flag the program has, so a flag added
# without a row here fails the test.
KCCA_SCORE_CHANGES = {
    "--transitions": "50", "--scheme": "cross,temporal", "--ratio": "0.5",
    "--features": "patch-mean", "--mask-mode": "shared", "--patch-length": "25",
    "--cross-modal": None, "--estimator": "kcca", "--draws": "3", "--pca": "3", "--ridge": "0.5",
    "--seed": "1", "--samples": "70", "--data": "generator:noise=0.5",
    "--modalities": "acc=0-2,gyro=3-4", "--keep-classes": "walking,sitting,laying",
    "--channel-names": "a_x,a_y,b_x,b_y,c_x,c_y", "--segment": "2", "--coupling": "0.2",
}
KCCA_SCORE_REFUSED = {  # beside the base run (the generator, the cca estimator)
    "--kernel": "laplacian", "--gamma": "0.5", "--sigma": "2", "--data-format": "npy",
    "--sample-rate": "25", "--npy-layout": "NCL", "--split-seed": "5",
    "--hapt-windowing": "uci-har", "--labels": "Y_walmsley.npy", "--ts-unequal": "pad",
}
KCCA_SCORE_EXEMPT = {
    "--threads": "the same scores on any thread count, by design (test_cli.py)",
    "--checkpoint": "the encoder feature map's model; refused beside other features "
                    "(test_cli_contracts.py)",
    "--drop-nonfinite": "drops windows holding NaN/Inf, which the generator has none of "
                        "(test_data_masking.py)",
    "--json": "the output", "--config": "the input", "--print-config": "",
    "--stream": "reads a .npy folder from disk, the same windows and scores by design; refused "
                "beside other data (test_stream.py)",
}


def _scores(path):
    """The result JSON without its record of the options and its timings."""
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in ("options", "seconds")}
        return [strip(x) for x in v] if isinstance(v, list) else v
    return strip(json.loads(path.read_text()))


def test_every_kcca_score_flag_changes_the_scores_or_is_refused(tmp_path):
    flags = {w.split("=")[0].rstrip(",") for line in
             run_tool("kcca_score", "--help").stdout.splitlines()
             for w in line.split()[:1] if w.startswith("--")}
    assert flags == set(KCCA_SCORE_CHANGES) | set(KCCA_SCORE_REFUSED) | set(KCCA_SCORE_EXEMPT), \
        flags ^ (set(KCCA_SCORE_CHANGES) | set(KCCA_SCORE_REFUSED) | set(KCCA_SCORE_EXEMPT))
    base = ["--scheme", "cross,sync", "--draws", "2", "--samples", "60", "--threads", "1"]
    run_tool("kcca_score", *base, "--json", str(tmp_path / "base.json"))
    reference = _scores(tmp_path / "base.json")
    for flag, value in KCCA_SCORE_CHANGES.items():
        args = [a for a in base]
        if flag in args:  # replace the base value
            args[args.index(flag) + 1] = value
        else:
            args += [flag] if value is None else [flag, value]
        out = tmp_path / f"{flag.strip('-')}.json"
        run_tool("kcca_score", *args, "--json", str(out))
        assert _scores(out) != reference, flag
    for flag, value in KCCA_SCORE_REFUSED.items():
        p = run_tool("kcca_score", *base, flag, value, rc=2)
        assert f"{flag} ({value}) takes no effect: " in p.stderr, (flag, p.stderr)


# Each flag of kcca, as for kcca_score: (value, the other flags it is given with) changes the
# result, or is refused beside the base run.
KCCA_CHANGES = {
    "--u": ("u2.npy", []), "--m": ("m2.npy", []), "--kernel": ("laplacian", []),
    "--sigma": ("2", []), "--gamma": ("0.5", []), "--gamma-u": ("0.5", []),
    "--gamma-m": ("0.5", []), "--no-center": (None, []), "--components": ("2", []),
    "--method": ("lowrank", []), "--rank": ("5", ["--method", "lowrank"]),
    "--degree": ("3", ["--kernel", "poly"]), "--coef0": ("2", ["--kernel", "poly"]),
    "--cca": (None, []), "--pca": ("2", ["--cca"]), "--ridge": ("0.5", ["--cca"]),
    "--bootstrap": ("5", []), "--permutations": ("9", []),
    "--seed": ("3", ["--bootstrap", "5"]),  # what it seeds: bootstrap, permutations, Nystrom
}
KCCA_REFUSED = {"--rank": "5", "--degree": "3", "--coef0": "2", "--pca": "2", "--ridge": "0.5"}
KCCA_EXEMPT = {"--json": "prints JSON instead of text (test_cli.py)", "--output": "the output",
               "--config": "the input", "--print-config": "", "--help": "",
               "--center": "the default"}


def test_every_kcca_flag_changes_the_result_or_is_refused(tmp_path):
    flags = set()
    for line in run_tool("kcca", "--help").stdout.splitlines():
        for w in line.split()[:1]:
            flags |= {f.split("{")[0] for f in w.split(",") if f.startswith("--")}
    assert flags == set(KCCA_CHANGES) | set(KCCA_REFUSED) | set(KCCA_EXEMPT), flags
    rng = np.random.default_rng(0)
    for name in ("u", "m", "u2", "m2"):
        np.save(tmp_path / f"{name}.npy", rng.standard_normal((40, 3)) + (
            np.load(tmp_path / "u.npy") ** 2 if name == "m" else 0))
    base = ["--u", "u.npy", "--m", "m.npy"]
    run_tool("kcca", *base, "--output", "base.json", cwd=tmp_path)
    for flag, (value, context) in KCCA_CHANGES.items():
        args = list(base)
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag] if value is None else [flag, value]
        out = f"{flag.strip('-')}.json"
        run_tool("kcca", *context, *args, "--output", out, cwd=tmp_path)
        reference = tmp_path / "base.json"
        if context:  # compared with the context alone
            reference = tmp_path / f"{flag.strip('-')}_context.json"
            run_tool("kcca", *context, *base, "--output", reference.name, cwd=tmp_path)
        assert _scores(tmp_path / out) != _scores(reference), flag
    for flag, value in KCCA_REFUSED.items():
        p = run_tool("kcca", *base, flag, value, rc=2, cwd=tmp_path)
        assert f"{flag} ({value}) takes no effect: " in p.stderr, (flag, p.stderr)


# The data flags every moca command shares, on `moca data inspect` (what the loader sees).
INSPECT_CHANGES = {
    "--data": ("generator:noise=0.5", []), "--modalities": ("acc=0-2", []),
    "--keep-classes": ("walking,sitting", []), "--channel-names": ("a_x,a_y,b_x,b_y,c_x,c_y", []),
    "--segment": ("2", []), "--window-length": ("100", []), "--synthetic-windows": ("30", []),
    "--coupling": ("0.2", []), "--synthetic-seed": ("3", []),
}
# (no split flags: inspect describes each program's split at its defaults; they were ignored)
INSPECT_REFUSED = {"--data-format": "npy", "--sample-rate": "25", "--npy-layout": "NCL",
                   "--hapt-windowing": "uci-har", "--labels": "Y_walmsley.npy",
                   "--ts-unequal": "pad"}
INSPECT_EXEMPT = {
    "--checkpoint": "opens the data at a model's length and rate (test_inspect.py)",
    "--drop-nonfinite": "inspect counts NaN/Inf windows instead (test_data_masking.py)",
    "--no-progress": "documented: every moca command accepts it, those without a bar ignore it",
    "--json": "the output", "--help": "",
}


def test_every_shared_data_flag_changes_what_is_loaded_or_is_refused(tmp_path):
    flags = set()
    for line in run_tool("moca", "data", "inspect", "--help").stdout.splitlines():
        for w in line.split()[:1]:
            flags |= {f for f in w.split(",") if f.startswith("--")}
    assert flags == set(INSPECT_CHANGES) | set(INSPECT_REFUSED) | set(INSPECT_EXEMPT), flags

    def inspect(*args):
        out = tmp_path / "x.json"
        size = [] if "--synthetic-windows" in args else ["--synthetic-windows", "40"]
        p = run_tool("moca", "data", "inspect", *size, *args, "--json", str(out))
        return _scores(out), p.stdout

    for flag, (value, context) in INSPECT_CHANGES.items():
        assert inspect(*context, flag, value) != inspect(*context), flag
    for flag, value in INSPECT_REFUSED.items():
        p = run_tool("moca", "data", "inspect", flag, value, rc=2)
        assert f"{flag} ({value}) takes no effect: " in p.stderr, (flag, p.stderr)


def test_cuda_switches_beside_device_cpu_are_refused(tmp_path):
    """--tf32 / --no-tf32 and --cuda-graphs / --no-cuda-graphs act on CUDA runs only (issue 43):
    stated beside --device cpu they are refused, naming the flag. Control: the same command
    without them runs."""
    base = ["pretrain", "--device", "cpu", "--data", "generator", "--synthetic-windows", "60",
            "--preset", "tiny", "--epochs", "1", "--batch", "16", "--stop-after", "1",
            "--threads", "1", "--no-progress", "--checkpoint", str(tmp_path / "m.pt")]
    for flag, shown in (("--no-tf32", "--tf32 (false)"), ("--tf32", "--tf32 (true)"),
                        ("--no-cuda-graphs", "--cuda-graphs (false)")):
        p = run_tool("moca", *base, flag, rc=2)
        assert f"{shown} takes no effect: it is for CUDA runs; the device is cpu" in p.stderr, \
            p.stderr
    run_tool("moca", *base, rc=0)
