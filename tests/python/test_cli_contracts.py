"""The command-line programs keep their documented contracts (README, "Tools" and "Failure
behaviour"), checked on the built binaries alone ($MOCA_BIN_DIR; no Python package needed):

* `--json -` (kcca: `--output -`) puts the JSON alone on standard output; the human-readable
  report goes to standard error.
* An output path that cannot be written (its folder missing, a folder in its place) is a usage
  error naming the flag, found before any work: exit 2 at once, and no output of the run left
  behind (no checkpoint, no metrics log, no JSON, no CSV, no table on stdout).
* `moca bogus` names the unknown command and lists the commands.
* Errors name a CSV row by its line in the file (1-based, header counted).
* The exit-code table: malformed input is 2, a file that cannot be opened is 1.
"""
import json
import os
import subprocess
import time

import pytest

# The programs' own tiny settings: a few seconds each on one thread.
DATA = ["--synthetic-windows", "48", "--threads", "1"]
TRAIN = ["--epochs", "1", "--warmup-epochs", "0", "--batch", "16", "--no-progress"]
PROBE = ["--epochs", "2", "--warmup-epochs", "0", "--batch", "8", "--no-progress"]


def bin_dir() -> str:
    d = os.environ.get("MOCA_BIN_DIR")
    if not d:
        d = os.path.join(os.path.dirname(__file__), "..", "..", "build", "bin")
    return d


def run(name, *args, rc=0, cwd=None):
    """Runs a built program (the generator's data: MOCA_HAPT_DIR unset) and checks its status."""
    exe = os.path.join(bin_dir(), name)
    if not os.path.exists(exe):
        pytest.skip(f"{exe} not built")
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    env.pop("MOCA_HAPT_DIR", None)
    p = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, env=env,
                       check=False, cwd=cwd)
    if rc is not None:
        assert p.returncode == rc, (p.returncode, p.stderr[-2000:])
    return p


def stdout_json(p):
    """Standard output parsed as one JSON document (fails on anything printed beside it)."""
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny pre-trained checkpoint and a classifier kept from its linear probe."""
    d = tmp_path_factory.mktemp("trained")
    p = run("moca", "pretrain", *DATA, *TRAIN, "--preset", "tiny", "--checkpoint", d / "m.pt",
            "--json", "-")
    pre = stdout_json(p)  # item: --json - is JSON alone
    assert pre["command"] == "pretrain" and pre["finished"] is True
    assert "pretrain:" in p.stderr  # the report went to stderr
    run("moca", "linprobe", *DATA, *PROBE, "--checkpoint", d / "m.pt", "--save-model",
        d / "clf.pt")
    return d


def predictions_csv(path):
    path.write_text("fold,truth,predicted\n0,0,0\n0,1,1\n0,1,0\n1,0,0\n1,1,1\n")
    return path


# --- --json - is JSON alone on stdout -------------------------------------------------------

def test_kcca_score_json_stdout():
    p = run("kcca_score", "--samples", "40", "--draws", "3", "--threads", "1", "--json", "-")
    doc = stdout_json(p)
    assert [s["scheme"] for s in doc["schemes"]] == ["cross", "sync"]
    assert "paired differences" in p.stderr  # the table, on stderr


def test_kcca_output_stdout(tmp_path):
    (tmp_path / "u.csv").write_text("".join(f"{i},{i * i % 7}\n" for i in range(12)))
    (tmp_path / "m.csv").write_text("".join(f"{i % 5},{(3 * i) % 11}\n" for i in range(12)))
    args = ["--u", tmp_path / "u.csv", "--m", tmp_path / "m.csv", "--cca", "--output", "-"]
    p = run("kcca", *args)
    assert stdout_json(p)["analysis"] == "cca"
    assert "correlations:" in p.stderr
    # --json with --output -: the JSON once
    assert stdout_json(run("kcca", *args, "--json"))["analysis"] == "cca"


def test_moca_metrics_json_stdout(tmp_path):
    p = run("moca", "metrics", "--predictions", predictions_csv(tmp_path / "p.csv"), "--json", "-")
    doc = stdout_json(p)
    assert doc["pooled"]["n"] == 5
    assert "pooled: top-1" in p.stderr


def test_moca_linprobe_predict_impute_json_stdout(trained, tmp_path):
    p = run("moca", "linprobe", *DATA, *PROBE, "--checkpoint", trained / "m.pt", "--json", "-")
    assert stdout_json(p)["command"] == "linprobe"
    assert "linprobe (random" in p.stderr
    p = run("moca", "finetune", *DATA, *PROBE, "--checkpoint", trained / "m.pt", "--json", "-")
    assert stdout_json(p)["command"] == "finetune"
    p = run("moca", "predict", *DATA, "--model", trained / "clf.pt", "--out",
            tmp_path / "pred.csv", "--json", "-")
    assert stdout_json(p)["command"] == "predict"
    assert (tmp_path / "pred.csv").read_text().startswith("window,subject,predicted")
    # without --out the CSV would share standard output with the JSON: refused, naming --json
    p = run("moca", "predict", *DATA, "--model", trained / "clf.pt", "--json", "-", rc=2)
    assert "--json (-)" in p.stderr and "--out" in p.stderr
    p = run("moca", "impute", *DATA, "--checkpoint", trained / "m.pt", "--no-baselines",
            "--max-windows", "4", "--task", "random:ratio=0.5", "--json", "-")
    assert stdout_json(p)["command"] == "impute"


def test_moca_data_inspect_json_stdout():
    p = run("moca", "data", "inspect", "--synthetic-windows", "48", "--json", "-")
    assert stdout_json(p)["windows"] == 48


@pytest.mark.parametrize("study,args", [
    ("simulation_study", ["--samples", "40", "--draws", "3", "--threads", "1",
                          "--no-cross-modal"]),
    ("coupling_sweep", ["--couplings", "0.2", "0.8", "--samples", "40", "--draws", "3",
                        "--threads", "1"]),
])
def test_studies_json_stdout(study, args):
    p = run(study, *args, "--json", "-")
    assert isinstance(stdout_json(p), dict)


# --- an unwritable output path fails before any work and leaves nothing ----------------------

def files_under(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def refused(name, args, flag, bad, folder):
    """Runs a program (in `folder`) whose `flag` is the unwritable path `bad`: exit 2, the
    message naming the flag and the path, nothing new in `folder`, nothing on stdout. Returns the
    seconds it took and its stderr."""
    before = files_under(folder)
    t0 = time.monotonic()
    p = run(name, *args, rc=2, cwd=folder)
    seconds = time.monotonic() - t0
    assert f"{flag} ({bad}): " in p.stderr, p.stderr
    assert p.stdout == ""  # no table printed before the failure
    assert files_under(folder) == before
    return seconds, p.stderr


def test_pretrain_bad_json_before_training(tmp_path):
    bad = tmp_path / "no" / "such" / "r.json"
    seconds, err = refused("moca", ["pretrain", *DATA, "--preset", "tiny", "--epochs", "50",
                                    "--warmup-epochs", "0", "--batch", "16", "--no-progress",
                                    "--checkpoint", tmp_path / "m.pt", "--json", bad],
                           "--json", bad, tmp_path)
    assert "does not exist" in err
    assert not (tmp_path / "m.pt").exists()  # found before the checkpoint is written
    assert seconds < 20  # 50 epochs would take far longer
    for flag, extra in (("--checkpoint", []), ("--metrics", ["--checkpoint", tmp_path / "m.pt"])):
        bad = tmp_path / "gone" / "x"
        refused("moca", ["pretrain", *DATA, *TRAIN, *extra, flag, bad], flag, bad, tmp_path)


def test_pretrain_json_folder_refused(tmp_path):
    (tmp_path / "out").mkdir()
    _, err = refused("moca", ["pretrain", *DATA, *TRAIN, "--checkpoint", tmp_path / "m.pt",
                              "--json", tmp_path / "out"], "--json", tmp_path / "out", tmp_path)
    assert "folder" in err


def test_linprobe_bad_outputs_leave_nothing(trained, tmp_path):
    base = ["linprobe", *DATA, *PROBE, "--checkpoint", trained / "m.pt"]
    bad = tmp_path / "missing" / "p.csv"
    refused("moca", base + ["--json", tmp_path / "r.json", "--predictions", bad],
            "--predictions", bad, tmp_path)
    assert not (tmp_path / "r.json").exists()
    bad = tmp_path / "missing" / "clf.pt"
    refused("moca", base + ["--json", tmp_path / "r.json", "--save-model", bad], "--save-model",
            bad, tmp_path)
    bad = tmp_path / "missing" / "r.json"
    refused("moca", base + ["--predictions", tmp_path / "p.csv", "--json", bad], "--json", bad,
            tmp_path)


def test_predict_bad_json_leaves_no_csv(trained, tmp_path):
    bad = tmp_path / "missing" / "s.json"
    refused("moca", ["predict", *DATA, "--model", trained / "clf.pt", "--out",
                     tmp_path / "pred.csv", "--json", bad], "--json", bad, tmp_path)
    bad = tmp_path / "missing" / "pred.csv"
    refused("moca", ["predict", *DATA, "--model", trained / "clf.pt", "--json",
                     tmp_path / "s.json", "--out", bad], "--out", bad, tmp_path)


def test_other_moca_commands_check_outputs_first(trained, tmp_path):
    bad = tmp_path / "missing" / "x"
    m = trained / "m.pt"
    cases = [
        (["metrics", "--predictions", predictions_csv(trained / "p.csv"), "--json", bad], "--json"),
        (["impute", *DATA, "--checkpoint", m, "--json", bad], "--json"),
        (["data", "inspect", "--synthetic-windows", "48", "--json", bad], "--json"),
        (["data", "export", "--synthetic-windows", "48", "--out", bad], "--out"),
        (["embed", *DATA, "--checkpoint", m, "--out", bad], "--out"),
        (["reconstruct", *DATA, "--checkpoint", m, "--out", bad], "--out"),
        (["export", "--checkpoint", m, "--out", bad], "--out"),
    ]
    for args, flag in cases:
        refused("moca", args, flag, bad, tmp_path)


def test_kcca_score_bad_json_prints_no_table(tmp_path):
    bad = tmp_path / "missing" / "r.json"
    refused("kcca_score", ["--samples", "40", "--draws", "3", "--json", bad], "--json", bad,
            tmp_path)


def test_kcca_bad_output(tmp_path):
    (tmp_path / "u.csv").write_text("".join(f"{i},{i * i % 7}\n" for i in range(12)))
    bad = tmp_path / "missing" / "r.json"
    refused("kcca", ["--u", tmp_path / "u.csv", "--m", tmp_path / "u.csv", "--cca", "--output",
                     bad], "--output", bad, tmp_path)


@pytest.mark.parametrize("study,args", [
    ("simulation_study", ["--samples", "40", "--draws", "3"]),
    ("coupling_sweep", ["--couplings", "0.2", "0.8", "--samples", "40", "--draws", "3"]),
    ("bound_check", ["--checkpoint", "m.pt"]),
])
def test_studies_bad_json(tmp_path, study, args):
    bad = tmp_path / "missing" / "r.json"
    refused(study, [*args, "--json", bad], "--json", bad, tmp_path)


# --- messages and exit codes ------------------------------------------------------------------

def test_unknown_command_is_named():
    p = run("moca", "bogus", rc=2)
    assert p.stderr.startswith("moca: unknown command 'bogus' (commands: pretrain, ")
    assert "linprobe" in p.stderr and "predict" in p.stderr
    p = run("moca", rc=2)
    assert p.stderr.startswith("moca: a command is required (commands: pretrain, ")
    p = run("moca", "data", "bogus", rc=2)
    assert p.stderr.startswith("moca: unknown data command 'bogus' (data commands: inspect")


def test_metrics_rows_are_file_lines(tmp_path):
    # a header, a blank line: the bad id is on line 4 of the file, as an editor shows it
    (tmp_path / "p.csv").write_text("truth,predicted\n0,1\n\n1,2.5\n")
    p = run("moca", "metrics", "--predictions", tmp_path / "p.csv", rc=2)
    assert f"{tmp_path / 'p.csv'}:4: column 2 (2.5) must be a non-negative integer id" in p.stderr
    (tmp_path / "q.csv").write_text("truth,predicted\n0,1\n1,x\n")
    p = run("moca", "metrics", "--predictions", tmp_path / "q.csv", rc=2)
    assert f"{tmp_path / 'q.csv'}:3: column 2 is not a number" in p.stderr


def test_exit_codes_malformed_input_2_missing_file_1(tmp_path):
    (tmp_path / "r.csv").write_text("1,2\n3\n")
    p = run("kcca", "--u", tmp_path / "r.csv", "--m", tmp_path / "r.csv", rc=2)
    assert "r.csv:2: row has 1 cells, expected 2" in p.stderr
    (tmp_path / "x.npy").write_bytes(b"abc")
    run("kcca", "--u", tmp_path / "x.npy", "--m", tmp_path / "x.npy", rc=2)
    p = run("moca", "metrics", "--predictions", tmp_path / "none.csv", rc=1)
    assert "cannot open" in p.stderr


@pytest.mark.parametrize("study,args", [
    ("policy_study", []),
    ("transfer_study", ["--model", "a=m.pt", "--data", "d=generator"]),
    ("paper_experiments", ["--only", "table1"]),
])
def test_studies_bad_out_folder(tmp_path, study, args):
    # these create missing folders under --out, so the bad case is a file in the way
    (tmp_path / "file").write_text("x")
    bad = tmp_path / "file" / "out"
    _, err = refused(study, [*args, "--out", bad], "--out", bad, tmp_path)
    assert "is not a folder" in err


@pytest.mark.parametrize("flag,value", [("--split", "random"), ("--fold", "1"),
                                        ("--train-fraction", "0.5")])
def test_predict_refuses_split_flags(tmp_path, flag, value):
    # issue 38.11: predict applies its classifier to every window; its split flags were listed
    # by --help and ignored
    p = run("moca", "predict", "--model", str(tmp_path / "m.pt"), flag, value, rc=2)
    assert flag in p.stderr
    h = run("moca", "predict", "--help")
    assert flag not in h.stdout


@pytest.mark.parametrize("args,flag", [
    (["linprobe", "--precision", "bf16"], "--precision"),
    (["finetune", "--checkpoint", "m.pt", "--preset", "cpu-small"], "--preset"),
    (["finetune", "--checkpoint", "m.pt", "--patch-length", "10"], "--patch-length"),
    (["finetune", "--checkpoint", "m.pt", "--layout", "stacked"], "--layout"),
    (["finetune", "--checkpoint", "m.pt", "--pos-embed", "1d"], "--pos-embed"),
])
def test_flags_that_would_be_ignored_are_refused(tmp_path, args, flag):
    # issue 38.11: a bf16 probe gave fp32's bytes with "bf16" in its JSON; architecture flags
    # beside a checkpoint were recorded and ignored
    p = run("moca", *args, *DATA, rc=2, cwd=tmp_path)
    assert flag in p.stderr and "Traceback" not in p.stderr


def test_resume_refuses_changed_windows_of_the_same_shape(tmp_path):
    # issue 38.13: --resume compared paths and shapes only; the checkpoint now records the
    # fingerprint of its training windows, labels and subjects (data::fingerprint)
    import numpy as np
    X = np.random.default_rng(0).standard_normal((48, 6, 200)).astype(np.float32)
    d = tmp_path / "d"
    d.mkdir()
    np.save(d / "X.npy", X)
    np.save(d / "y.npy", np.arange(48) % 4)
    (d / "meta.json").write_text(json.dumps({"sample_rate": 50}))
    ck = tmp_path / "m.pt"
    args = ["pretrain", "--data", str(d), "--split", "all", "--preset", "cpu-small", "--epochs",
            "4", "--warmup-epochs", "0", "--batch", "16", "--threads", "1", "--no-progress",
            "--checkpoint", str(ck)]
    run("moca", *args, "--stop-after", "2")
    run("moca", *args, "--resume", "--stop-after", "3")  # the same data resumes
    X[5, 2, 100] += 1.0  # one sample changed, the shape kept
    np.save(d / "X.npy", X)
    p = run("moca", *args, "--resume", rc=2)
    assert "cannot resume" in p.stderr and "fingerprint" in p.stderr, p.stderr
    np.save(d / "y.npy", (np.arange(48) + 1) % 4)  # control: labels alone count too
    X[5, 2, 100] -= 1.0
    np.save(d / "X.npy", X)
    p = run("moca", *args, "--resume", rc=2)
    assert "fingerprint" in p.stderr, p.stderr


def test_batch_larger_than_the_labelled_windows_names_the_flag(trained, tmp_path):
    # issue 38.15: "batch_size (50) exceeds the number of training windows (28)" named no flag
    p = run("moca", "linprobe", *DATA, "--epochs", "1", "--warmup-epochs", "0", "--batch", "16",
            "--no-progress", "--checkpoint", trained / "m.pt", "--label-fraction", "0.1", rc=2,
            cwd=tmp_path)
    assert "--batch (16) exceeds the number of training windows" in p.stderr, p.stderr


@pytest.mark.parametrize("program,args", [
    ("kcca_score", ["--draws", "2", "--pca", "3", "--samples", "40"]),
    ("moca", ["data", "inspect"]),
])
def test_flag_beside_the_spec_key_it_duplicates_is_refused(program, args):
    # issue 38.11: "--data generator:coupling=0.8 --coupling 0.1" used 0.8, silently
    pre = args[:2] if program == "moca" else []
    rest = args[2:] if program == "moca" else args
    p = run(program, *pre, "--data", "generator:coupling=0.8", "--coupling", "0.1", *rest, rc=2)
    assert "--coupling (0.1) takes no effect: the data spec's coupling=0.8 sets it" in p.stderr, \
        p.stderr
    run(program, *pre, "--data", "generator:coupling=0.5", *rest)  # the key alone
    run(program, *pre, "--coupling", "0.5", *rest)  # the flag alone


# Issue 39: one bad value of a shared option (warm-up, batch, sample rate) is named by the flag
# of the program that received it, never by a library struct's field.
SHARED_BAD = [
    (("moca", "pretrain"), [("--warmup-epochs", "500"), ("--batch", "0"), ("--sample-rate", "-1")]),
    (("moca", "finetune", "--from-scratch"),
     [("--warmup-epochs", "500"), ("--batch", "0"), ("--sample-rate", "-1")]),
    (("moca", "linprobe", "--checkpoint", "none.pt"), [("--warmup-epochs", "500"), ("--batch", "0")]),
    (("policy_study", "--out", "{tmp}/ps"),
     [("--warmup-epochs", "500"), ("--batch", "0"), ("--sample-rate", "-1")]),
    (("paper_experiments", "--out", "{tmp}/pe"),
     [("--warmup-epochs", "500"), ("--batch", "0"), ("--sample-rate", "-1")]),
    (("kcca_score",), [("--sample-rate", "-1")]),
    (("simulation_study",), [("--sample-rate", "-1")]),
]


@pytest.mark.parametrize("program,bad", SHARED_BAD, ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_shared_option_messages_name_the_programs_flag(tmp_path, program, bad):
    name, *head = program
    head = [h.format(tmp=tmp_path) for h in head]
    for flag, value in bad:
        p = run(name, *head, flag, value, rc=2, cwd=tmp_path)
        last = p.stderr.strip().splitlines()[-1]
        assert last.startswith(f"{name}: {flag} ({value})"), last
        assert "Options::" not in last and "validate()" not in last, last
    # Nothing of a run was left behind.
    assert not any(tmp_path.iterdir())


# Issue 39: impute's and reconstruct's options are schema rows, so their range errors name the
# flag (they named `ImputeOptions::validate(): patch_length`), before any data is read.
@pytest.mark.parametrize("program,flag,value,rule", [
    (("moca", "impute"), "--patch-length", "0", "must be >= 1"),
    (("moca", "impute"), "--mice-iterations", "0", "must be >= 1"),
    (("moca", "impute"), "--mice-draws", "0", "must be >= 1"),
    (("moca", "reconstruct", "--checkpoint", "m.pt"), "--window", "-1", "must be >= 0"),
    (("moca", "import", "--pth", "m.pth", "--out", "o.pt"), "--num-heads", "-1", "must be >= 0"),
    # the inference batch (InferenceOptions::schema), embed's and linprobe's rows, kcca_score's
    (("moca", "impute"), "--batch", "0", "must be >= 1"),
    (("moca", "reconstruct", "--checkpoint", "m.pt"), "--batch", "0", "must be >= 1"),
    (("moca", "embed", "--checkpoint", "m.pt"), "--batch", "0", "must be >= 1"),
    (("moca", "embed", "--checkpoint", "m.pt"), "--max-windows", "-1", "must be >= 0"),
    (("moca", "linprobe", "--checkpoint", "m.pt"), "--input-seconds", "-1", "must be >= 0"),
    (("kcca_score", "--draws", "2"), "--samples", "2", "must be >= 3"),
    (("kcca_score", "--draws", "2"), "--transitions", "-2", "must be >= 0 (0 = the windows)"),
    # the runtime and data-parallel rows (RuntimeOptions::schema, DistOptions::schema)
    (("moca", "pretrain"), "--threads", "2000", "must be in [0, 1024]"),
    (("moca", "pretrain"), "--batch-shards", "-1", "must be in [0, 1024]"),
    (("moca", "pretrain"), "--dist-timeout", "-1", "must be in (0, 604800]"),
    (("moca", "embed", "--checkpoint", "m.pt"), "--threads", "-1", "must be in [0, 1024]"),
    # attention's, embed's maps' and impute's rows (it said `run_impute(): max_windows`)
    (("moca", "impute"), "--max-windows", "-1", "must be >= 0"),
    (("moca", "embed", "--checkpoint", "m.pt", "--map", "umap"), "--umap-epochs", "-1",
     "must be >= 0"),
    (("moca", "attention", "--model", "m.pt", "--windows", "0"), "--threads", "-1",
     "must be in [0, 1024]"),
])
def test_impute_reconstruct_import_ranges_name_the_flag(tmp_path, program, flag, value, rule):
    name, *head = program
    p = run(name, *head, "--data", "generator", flag, value, rc=2, cwd=tmp_path) \
        if head[0] != "import" else run(name, *head, flag, value, rc=2, cwd=tmp_path)
    assert p.stderr.strip().splitlines()[-1] == f"{name}: {flag} ({value}) {rule}", p.stderr
    assert not any(tmp_path.iterdir())


def test_library_hints_name_the_programs_flag(tmp_path):
    """A library message that tells the user which option to set names it by its field; the
    program prints its own flag (the .npy reader's NaN hint: `--drop-nonfinite`)."""
    import numpy as np
    x = np.random.default_rng(0).normal(size=(12, 6, 200))
    x[3, 1, 5] = np.nan
    data = tmp_path / "set"
    data.mkdir()
    np.save(data / "X.npy", x)
    np.save(data / "Y.npy", np.arange(12) % 2)
    p = run("moca", "data", "export", "--data", data, "--sample-rate", "50", "--out",
            tmp_path / "o", rc=2)
    last = p.stderr.strip().splitlines()[-1]
    assert "drop those windows with --drop-nonfinite" in last, last
    assert "Options::" not in last, last
    # the control: with the flag the same data is read (the window with NaN dropped)
    run("moca", "data", "export", "--data", data, "--sample-rate", "50", "--out", tmp_path / "o",
        "--drop-nonfinite")
    assert len(np.load(tmp_path / "o" / "X.npy")) == 11


# Issue 39: the studies take moca pretrain's rows of PretrainOptions, so their batch flag is
# --batch as everywhere; --batch-size, their old name, is a second name of the same option.
@pytest.mark.parametrize("study", ["policy_study", "paper_experiments"])
def test_studies_batch_size_is_a_second_name_of_batch(tmp_path, study):
    p = run(study, "--out", tmp_path / "o", "--batch-size", "0", rc=2, cwd=tmp_path)
    assert p.stderr.strip().splitlines()[-1].startswith(f"{study}: --batch (0) must be >= 1")
    p = run(study, "--out", tmp_path / "o", "--batch-size", "7", "--print-config", cwd=tmp_path)
    assert "\nbatch = 7\n" in p.stdout and "batch-size" not in p.stdout
    run(study, "--out", tmp_path / "o", "--batch", "7", "--batch-size", "7", rc=2, cwd=tmp_path)
    assert "--batch, --batch-size" in run(study, "--help", cwd=tmp_path).stdout.replace(",--", ", --")


def test_finetune_refuses_architecture_flags_beside_a_checkpoint(tmp_path):
    """The from-scratch-only rows of DownstreamOptions' schema (found by their scope, not a list
    in the program) would be ignored beside a checkpoint, which brings its own architecture:
    refused, naming the flag, before the checkpoint is read."""
    for flag, value in (("--preset", "paper-base"), ("--patch-length", "5"),
                        ("--layout", "stacked"), ("--pos-embed", "1d")):
        p = run("moca", "finetune", "--checkpoint", "none.pt", flag, value, rc=2, cwd=tmp_path)
        assert f"{flag} ({value}) takes no effect: it sets the architecture of " \
            "--from-scratch" in p.stderr, p.stderr
    # control: the defaults pass this check and fail only at the missing checkpoint
    p = run("moca", "finetune", "--checkpoint", "none.pt", rc=None, cwd=tmp_path)
    assert p.returncode != 0 and "architecture" not in p.stderr, p.stderr
    assert "none.pt" in p.stderr, p.stderr


def test_policy_study_refuses_data_changed_under_its_ledger(tmp_path):
    """Work bound to its inputs: the study record holds the fingerprints of its windows, so a
    resume on data changed in place (same path, same shape) is refused, naming the fingerprints;
    the same data resumes."""
    import numpy as np
    data = tmp_path / "set"
    run("moca", "data", "export", "--synthetic-windows", "90", "--out", data)
    flags = ["--out", tmp_path / "ps", "--data", data, "--train-windows", "0",
             "--test-windows", "0", "--policies",
             "cross:ratio=0.5,sync:ratio=0.5,temporal:ratio=0.5", "--seeds", "1", "--features", "raw", "--pca", "4", "--draws", "2",
             "--max-runs", "0", "--threads", "1"]
    run("policy_study", *flags)
    ledger = (tmp_path / "ps" / "ledger.jsonl").read_text().splitlines()
    study = json.loads(ledger[0])
    assert set(study["data_fingerprint"]) == {"train", "test"}
    run("policy_study", *flags)  # control: the same data resumes
    X = np.load(data / "X.npy")
    np.save(data / "X.npy", X[::-1].copy())  # same shape, other windows in each place
    p = run("policy_study", *flags, rc=1)
    assert "windows changed since its runs began (data fingerprint" in p.stderr, p.stderr
    assert (tmp_path / "ps" / "ledger.jsonl").read_text().splitlines() == ledger


def test_transfer_study_refuses_a_data_set_changed_under_its_ledger(tmp_path):
    """The study record holds each data set's fingerprint beside each checkpoint's: a data set
    changed in place (same path and shape) is refused on resume, naming it."""
    import numpy as np
    data = tmp_path / "set"
    run("moca", "data", "export", "--data", "generator:windows=42,subjects=3", "--out", data)
    flags = ["--out", tmp_path / "ts", "--data", f"g={data}", "--settings", "ft",
             "--scratch-preset", "tiny", "--scratch-epochs", "1", "--max-units", "0",
             "--threads", "1"]
    run("transfer_study", *flags)
    ledger = (tmp_path / "ts" / "ledger.jsonl").read_text()
    assert json.loads(ledger.splitlines()[0])["data"][0]["fingerprint"]
    run("transfer_study", *flags)  # control: the same data resumes
    X = np.load(data / "X.npy")
    np.save(data / "X.npy", (X * 2).astype(X.dtype))
    p = run("transfer_study", *flags, rc=1)
    assert "data set g changed since its units ran (data fingerprint" in p.stderr, p.stderr
    assert (tmp_path / "ts" / "ledger.jsonl").read_text() == ledger
