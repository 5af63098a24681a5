#!/usr/bin/env python3
"""Runs the fenced ```python and ```sh examples of README.md and docs/ as scripts.

Usage: scripts/run-doc-examples.py [--build DIR] [--timeout S] [--list] [-k TEXT] [FILE.md ...]

Each ```python block runs as a script with the build's interpreter (CMakeCache.txt's
Python3_EXECUTABLE, Debian's /usr/bin/python3 by default; or --python), each ```sh (or ```bash)
block with `bash -e -o pipefail`, in a fresh scratch folder, with PATH starting with <build>/bin
(so `moca`, `kcca_score`, ... are the build's) and then a folder whose `python3` is that
interpreter, PYTHONPATH starting with <build>/python, OMP_WAIT_POLICY=passive unless set, and
the rest of the environment as given (MOCA_HAPT_DIR, MOCA_HMP_DIR name the real data). One line per block:
`file:line pass|fail|skip seconds [reason]`, then `N passed, N failed, N skipped`; the exit
status is 1 when a block failed. A failing block's output follows its line.

The rules for a page's code blocks (docs/layout.md, "Examples in the docs"):

* Every fence names its language. ```python, ```sh and ```bash blocks are run; anything else
  (file layouts, output samples, synopses with [optional] parts, TOML, sbatch files) is
  ```text, ```toml, ```cpp, ... and is not run. A fence without a language fails.
* A block runs as written from a fresh scratch folder, on data it makes (`moca data export
  --data generator...`, numpy) or names (`$MOCA_HAPT_DIR`), unless a marker on the line just
  before its fence (blank lines between are allowed) says otherwise:

      <!-- example: name=mae, needs=libtorch hapt, timeout=120 -->
      <!-- example: after=mae -->          runs in mae's folder, after it (same page)
      <!-- example: cwd=repo -->           runs from the repository root (build must be <repo>/build)
      <!-- example: skip=needs 4 CUDA GPUs and 2 days -->

  Keys: `name` (a name for `after`), `after=NAME` (run in the folder of the earlier block NAME
  on the same page, after it; skipped when NAME did not pass), `needs=A B ...` (skipped, with
  the reason, when one is missing; see NEEDS), `cwd=repo` (the repository root instead of a
  scratch folder: only for blocks that write nothing there), `timeout=S` (seconds; default
  --timeout), `skip=REASON` (never run: the block is only syntax-checked, and an sh block's
  options of the build's tools are checked against their --help). The prose beside a block
  that needs an optional dependency names it too.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

RUN_LANGS = {"python": "python", "sh": "sh", "bash": "sh"}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MARKER = re.compile(r"^\s*<!--\s*example:(?P<body>.*?)-->\s*$")
MARKER_KEYS = {"name", "after", "needs", "cwd", "timeout", "skip"}

# needs=... tokens: what each means and how it is detected (python modules with the examples'
# interpreter, programs on PATH, data folders from the environment, the build's LibTorch side).
NEEDS = {
    "torch": "PyTorch for Python (python3-torch or pip install torch)",
    "pandas": "pandas (python3-pandas or pip install pandas)",
    "matplotlib": "matplotlib (python3-matplotlib)",
    "sklearn": "scikit-learn (python3-sklearn)",
    "gnuplot": "gnuplot on PATH (gnuplot-nox)",
    "libtorch": "moca built with LibTorch (the `moca` tool, moca.Encoder)",
    "hapt": "the UCI HAPT folder in MOCA_HAPT_DIR",
    "hmp": "the UCI ADL (HMP) folder in MOCA_HMP_DIR",
}
PY_MODULES = {"torch", "pandas", "matplotlib", "sklearn"}


class Block:
    """One fenced code block of a page."""

    def __init__(self, path, line, lang, text, marker, marker_error=None):
        self.path = path          # page, relative to the repository root
        self.line = line          # 1-based line of the opening fence
        self.lang = lang          # info string's first word ('' = none)
        self.text = text          # the code, dedented by the fence's indentation
        self.marker = marker      # dict of the example marker's keys
        self.marker_error = marker_error
        self.result = None        # 'pass' | 'fail' | 'skip'
        self.folder = None

    @property
    def where(self):
        return f"{self.path}:{self.line}"

    @property
    def runs(self):
        return self.lang in RUN_LANGS


def parse_marker(body):
    """'name=a, needs=torch hapt, skip=why, ...' -> dict; raises ValueError on a bad key.
    A skip reason may contain commas: everything after `skip=` is the reason."""
    out = {}
    body = body.strip()
    m = re.search(r"(^|,)\s*skip\s*=", body)
    if m:
        out["skip"] = body[m.end():].strip()
        body = body[:m.start()]
        if not out["skip"]:
            raise ValueError("skip= needs a reason")
    for part in filter(None, (p.strip() for p in body.split(","))):
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or key not in MARKER_KEYS:
            raise ValueError(f"bad marker entry '{part}' (keys: {', '.join(sorted(MARKER_KEYS))})")
        out[key] = value
    for need in out.get("needs", "").split():
        if need not in NEEDS:
            raise ValueError(f"unknown need '{need}' (known: {', '.join(sorted(NEEDS))})")
    if out.get("cwd", "repo") != "repo":
        raise ValueError(f"cwd={out['cwd']}: only cwd=repo exists (the default is a scratch folder)")
    if "timeout" in out:
        try:
            if float(out["timeout"]) <= 0:
                raise ValueError
        except ValueError:
            raise ValueError(f"timeout={out['timeout']} must be a number of seconds > 0") from None
    return out


def extract(path, rel):
    """The fenced blocks of one Markdown file, each with the marker just before it."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or (m.group("fence")[0] == "`" and "`" in m.group("info")):
            i += 1  # (CommonMark: a backtick fence's info string has no backtick)
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
        start = i
        body = []
        i += 1
        while i < len(lines):
            c = FENCE.match(lines[i])
            if c and c.group("fence").startswith(fence[0] * len(fence)) and not c.group("info").strip():
                break
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        marker, error = {}, None
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0:
            mm = MARKER.match(lines[j])
            if mm:
                try:
                    marker = parse_marker(mm.group("body"))
                except ValueError as e:
                    error = str(e)
        lang = info.split()[0] if info else ""
        blocks.append(Block(rel, start + 1, lang, "\n".join(body) + "\n", marker, error))
    return blocks


def python_has(python, module, cache={}):
    if (python, module) not in cache:
        p = subprocess.run([python, "-c", f"import {module}"], capture_output=True, check=False)
        cache[(python, module)] = p.returncode == 0
    return cache[(python, module)]


def missing_need(need, args, env):
    """None when `need` is met, else why not."""
    if need in PY_MODULES:
        return None if python_has(args.python, need) else f"needs {NEEDS[need]}"
    if need == "gnuplot":
        return None if shutil.which("gnuplot", path=env["PATH"]) else f"needs {NEEDS[need]}"
    if need == "libtorch":
        return None if os.path.exists(os.path.join(args.build, "bin", "moca")) else f"needs {NEEDS[need]}"
    var = {"hapt": "MOCA_HAPT_DIR", "hmp": "MOCA_HMP_DIR"}[need]
    d = env.get(var)
    return None if d and os.path.isdir(d) else f"needs {NEEDS[need]}"


def tool_flags(build, words, cache={}):
    """The long options a build tool's --help lists for `words` (tool [subcommand ...]), or None
    when the tool is not the build's."""
    key = tuple(words)
    if key not in cache:
        exe = os.path.join(build, "bin", words[0])
        if not os.path.exists(exe):
            cache[key] = None
        else:
            p = subprocess.run([exe, *words[1:], "--help"], capture_output=True, text=True,
                               check=False, timeout=60)
            cache[key] = set(re.findall(r"--[A-Za-z][-A-Za-z0-9]*", p.stdout + p.stderr))
    return cache[key]


def check_sh_flags(block, build):
    """Problems with an sh block's use of the build's tools: each `--flag` after a tool name
    must be in that tool's (subcommand's) --help. Returns a list of messages."""
    problems = []
    text = re.sub(r"\\\n", " ", block.text)
    for raw in text.split("\n"):
        line = raw.split(" #", 1)[0].strip()
        if line.startswith("#"):
            continue
        for command in re.split(r"&&|\|\||;|\|", line):
            words = command.split()
            while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
                words = words[1:]  # VAR=value prefixes
            if not words:
                continue
            tool = os.path.basename(words[0])
            if tool_flags(build, [tool]) is None:
                continue
            path = [tool]
            rest = words[1:]
            if tool == "moca" and rest and rest[0] == "launch" and "--" in rest:
                cut = rest.index("--")
                rest = rest[cut + 1:]
            if any(w.startswith("$") for w in rest[:1]):
                continue  # the subcommand is a shell variable: not checkable here
            while rest and not rest[0].startswith("-"):
                flags = tool_flags(build, path + [rest[0]])
                if flags is None or rest[0] not in _subcommands(build, path):
                    break
                path.append(rest[0])
                rest = rest[1:]
            known = tool_flags(build, path)
            for w in rest:
                flag = w.split("=", 1)[0]
                if re.match(r"^--[A-Za-z]", flag) and flag not in known:
                    problems.append(f"`{' '.join(path)}` has no option {flag}")
    return problems


def _subcommands(build, path, cache={}):
    key = tuple(path)
    if key not in cache:
        exe = os.path.join(build, "bin", path[0])
        p = subprocess.run([exe, *path[1:], "--help"], capture_output=True, text=True, check=False)
        subs = set()
        in_subs = False
        for line in p.stdout.split("\n"):
            if line.strip().upper().startswith("SUBCOMMANDS"):
                in_subs = True
                continue
            if in_subs:
                m = re.match(r"^\s+([a-z][-a-z0-9_]*)\b", line)
                if m:
                    subs.add(m.group(1))
                elif line.strip() and not line.startswith(" "):
                    in_subs = False
        cache[key] = subs
    return cache[key]


def syntax_check(block, args):
    """None when the block parses (python: compile; sh: bash -n), else the error."""
    if RUN_LANGS[block.lang] == "python":
        try:
            compile(block.text, block.where, "exec")
        except SyntaxError as e:
            return f"syntax error: {e}"
        return None
    p = subprocess.run(["bash", "-n"], input=block.text, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        return "syntax error: " + p.stderr.strip().replace("\n", "; ")
    problems = check_sh_flags(block, args.build)
    return "; ".join(problems) if problems else None


def run_block(block, args, env, scratch_root):
    """Runs one block; returns (result, seconds, reason, output)."""
    if block.marker_error:
        return "fail", 0.0, f"bad example marker: {block.marker_error}", ""
    if block.marker and not block.runs:
        return "fail", 0.0, f"example marker before a ```{block.lang or '(no language)'} block", ""
    if not block.lang:
        return "fail", 0.0, "a fence without a language: name one (```text for a non-example)", ""
    if "skip" in block.marker:
        problem = syntax_check(block, args)
        if problem:
            return "fail", 0.0, f"skipped block: {problem}", ""
        return "skip", 0.0, block.marker["skip"], ""
    after = block.marker.get("after")
    if after:
        prev = args.names.get((block.path, after))
        if prev is None:
            return "fail", 0.0, f"after={after}: no earlier block named {after} on this page", ""
        if prev.result != "pass":
            return "skip", 0.0, f"after={after}, which did not pass", ""
    for need in block.marker.get("needs", "").split():
        why = missing_need(need, args, env)
        if why:
            return "skip", 0.0, why, ""
    if block.marker.get("cwd") == "repo":
        if os.path.realpath(args.build) != os.path.realpath(os.path.join(args.repo, "build")):
            return "skip", 0.0, "written for the build in <repo>/build; the build is elsewhere", ""
        folder = args.repo
    elif after:
        folder = args.names[(block.path, after)].folder
    else:
        folder = tempfile.mkdtemp(prefix=re.sub(r"[^A-Za-z0-9]+", "_", block.where) + ".",
                                  dir=scratch_root)
    block.folder = folder
    if RUN_LANGS[block.lang] == "python":
        command = [args.python, "-c", block.text]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", block.text]
    timeout = float(block.marker.get("timeout", args.timeout))
    t0 = time.monotonic()
    try:
        p = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                           timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        return "fail", time.monotonic() - t0, f"timed out after {timeout:g} s", out
    seconds = time.monotonic() - t0
    if p.returncode != 0:
        return "fail", seconds, f"exit status {p.returncode}", p.stdout + p.stderr
    return "pass", seconds, "", p.stdout + p.stderr


def cmake_python(build):
    """The interpreter the build's Python package is for (CMakeCache.txt), or None."""
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("Python3_EXECUTABLE:"):
                    path = line.split("=", 1)[1].strip()
                    return path if os.path.exists(path) else None
    except OSError:
        pass
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="Markdown files (default: README.md, docs/**/*.md)")
    ap.add_argument("--build", default=os.path.join(repo, "build"),
                    help="the CMake build folder whose bin/ and python/ the examples use (default: build/)")
    ap.add_argument("--python", default=None,
                    help="interpreter of the examples (```python blocks and `python3` in ```sh "
                         "blocks; default: the build's, CMakeCache.txt's Python3_EXECUTABLE)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per block (default 120)")
    ap.add_argument("-k", dest="select", default=None,
                    help="run only blocks whose file:line contains TEXT (and the blocks they follow)")
    ap.add_argument("--list", action="store_true", help="list the blocks and their markers; run nothing")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folders (their path is printed)")
    args = ap.parse_args()
    args.repo = repo
    args.build = os.path.abspath(args.build)
    if not os.path.isdir(os.path.join(args.build, "bin")):
        print(f"run-doc-examples: --build {args.build} has no bin/ folder (build first)", file=sys.stderr)
        return 2
    if args.python is None:
        args.python = cmake_python(args.build) or sys.executable
    files = args.files or (["README.md"] + sorted(
        os.path.relpath(os.path.join(d, f), repo)
        for d, _, fs in os.walk(os.path.join(repo, "docs")) for f in fs if f.endswith(".md")))
    blocks = []
    for f in files:
        full = f if os.path.isabs(f) else os.path.join(repo, f)
        if not os.path.exists(full):
            print(f"run-doc-examples: no file {f}", file=sys.stderr)
            return 2
        blocks += extract(full, os.path.relpath(full, repo))
    args.names = {(b.path, b.marker["name"]): b for b in blocks if "name" in b.marker}

    if args.select:
        chosen = set()
        for b in blocks:
            if args.select in b.where:
                while b is not None and id(b) not in chosen:
                    chosen.add(id(b))
                    b = args.names.get((b.path, b.marker.get("after")))
        blocks = [b for b in blocks if id(b) in chosen]
    if args.list:
        for b in blocks:
            print(f"{b.where} {b.lang or '(none)'} {b.marker or ''}")
        return 0

    scratch_root = tempfile.mkdtemp(prefix="moca-doc-examples.")
    shims = os.path.join(scratch_root, "bin")  # `python3` in sh blocks = the examples' interpreter
    os.mkdir(shims)
    os.symlink(args.python, os.path.join(shims, "python3"))
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.join(args.build, "bin"), shims, env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [os.path.join(args.build, "python"), env.get("PYTHONPATH")]))
    env.setdefault("OMP_WAIT_POLICY", "passive")
    env["PYTHONDONTWRITEBYTECODE"] = "1"

    counts = {"pass": 0, "fail": 0, "skip": 0}
    total = time.monotonic()
    for b in blocks:
        if not b.runs and b.lang and not b.marker and not b.marker_error:
            continue  # text, cpp, toml, ...: not examples
        result, seconds, reason, output = run_block(b, args, env, scratch_root)
        b.result = result
        counts[result] += 1
        print(f"{b.where} {result} {seconds:.1f} s" + (f" ({reason})" if reason else ""), flush=True)
        if result == "fail" and output:
            tail = output.strip().split("\n")[-30:]
            print("\n".join("    | " + line for line in tail), flush=True)
    if args.keep:
        print(f"scratch folders kept in {scratch_root}")
    else:
        shutil.rmtree(scratch_root, ignore_errors=True)
    print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped "
          f"({time.monotonic() - total:.0f} s)")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
