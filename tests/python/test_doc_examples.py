"""scripts/run-doc-examples.py on small pages written here: what runs, what is skipped and why,
what fails. (ctest's `doc_examples` runs it over README.md and docs/ against the build.)"""
import os
import subprocess
import sys

import pytest

RUNNER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "scripts", "run-doc-examples.py")


def run_pages(tmp_path, pages, *extra, env_extra=None):
    """Writes `pages` ({name: text}) and runs the runner over them with an empty build folder;
    returns (exit status, {page:line: (result, reason)}, summary line)."""
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True, exist_ok=True)
    files = []
    for name, text in pages.items():
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    env = dict(os.environ)
    env.pop("MOCA_HAPT_DIR", None)
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, RUNNER, "--build", str(build), "--timeout", "20",
                        *extra, *files], capture_output=True, text=True, env=env, check=False)
    results = {}
    for line in p.stdout.split("\n"):
        parts = line.split(" ", 3)
        if len(parts) >= 3 and parts[1] in ("pass", "fail", "skip"):
            where = parts[0].split("/")[-1]
            reason = line[line.find("(") + 1:line.rfind(")")] if "(" in line else ""
            results[where] = (parts[1], reason)
    summary = p.stdout.strip().split("\n")[-1]
    return p.returncode, results, summary, p.stdout + p.stderr


PAGE = """# A page

```python
import os
open("made.txt", "w").write("42")
print(os.getcwd())
```

<!-- example: name=make -->
```sh
echo hello > greeting.txt
```

<!-- example: after=make -->

```sh
test "$(cat greeting.txt)" = hello
test ! -e made.txt          # a fresh folder per chain: the first block's file is not here
```

```text
$ not a command [--flag]
```

```sh
exit 3
```

<!-- example: name=broken -->
```python
raise SystemExit("no")
```

<!-- example: after=broken -->
```sh
echo never
```

<!-- example: needs=hapt -->
```python
print("real data")
```

<!-- example: skip=a benchmark, 10 minutes, on an idle machine -->
```python
for i in range(10**12): pass
```

* a list item with an indented example:

  ```python
  if True:
      x = 1
  assert x == 1
  ```
"""


def test_results_reasons_and_summary(tmp_path):
    rc, r, summary, out = run_pages(tmp_path, {"page.md": PAGE})
    assert rc == 1, out
    assert r["page.md:3"] == ("pass", ""), out
    assert r["page.md:10"] == ("pass", ""), out
    assert r["page.md:16"] == ("pass", ""), out          # ran in make's folder, after it
    assert "page.md:21" not in r                         # text: not an example
    assert r["page.md:25"] == ("fail", "exit status 3"), out
    assert r["page.md:30"] == ("fail", "exit status 1"), out
    assert r["page.md:35"] == ("skip", "after=broken, which did not pass"), out
    assert r["page.md:40"][0] == "skip" and "MOCA_HAPT_DIR" in r["page.md:40"][1], out
    assert r["page.md:45"] == ("skip", "a benchmark, 10 minutes, on an idle machine"), out
    assert r["page.md:51"] == ("pass", ""), out          # dedented by the fence's indentation
    assert summary.startswith("4 passed, 2 failed, 3 skipped"), out


def test_needs_met_runs_the_block(tmp_path):
    (tmp_path / "hapt").mkdir()
    page = "<!-- example: needs=hapt -->\n```sh\ntest -d \"$MOCA_HAPT_DIR\"\n```\n"
    rc, r, summary, out = run_pages(tmp_path, {"p.md": page},
                                    env_extra={"MOCA_HAPT_DIR": str(tmp_path / "hapt")})
    assert rc == 0 and r["p.md:2"] == ("pass", ""), out


def fake_tool(tmp_path, name, output):
    """An executable build/bin/<name> that prints `output` whatever its arguments."""
    (tmp_path / "build" / "bin").mkdir(parents=True, exist_ok=True)
    tool = tmp_path / "build" / "bin" / name
    tool.write_text(f"#!/bin/sh\necho '{output}'\n")
    tool.chmod(0o755)


def test_environment_build_bin_first_on_path(tmp_path):
    fake_tool(tmp_path, "moca_doc_probe", "probe-ran")
    page = ("```sh\ntest \"$(moca_doc_probe)\" = probe-ran\n"
            "test \"$OMP_WAIT_POLICY\" = passive\n"
            "test \"$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')\" = "
            f"{os.path.realpath(sys.executable)}\n```\n"
            "```python\nimport os, sys\n"
            "assert os.environ['PYTHONPATH'].split(os.pathsep)[0].endswith('build/python')\n```\n")
    rc, r, summary, out = run_pages(tmp_path, {"p.md": page}, env_extra={"OMP_WAIT_POLICY": "passive"})
    assert rc == 0 and summary.startswith("2 passed, 0 failed, 0 skipped"), out


@pytest.mark.parametrize("page, reason", [
    ("```\nplain\n```\n", "a fence without a language"),
    ("<!-- example: needs=numpyy -->\n```sh\ntrue\n```\n", "unknown need 'numpyy'"),
    ("<!-- example: colour=blue -->\n```sh\ntrue\n```\n", "bad marker entry 'colour=blue'"),
    ("<!-- example: cwd=home -->\n```sh\ntrue\n```\n", "only cwd=repo exists"),
    ("<!-- example: timeout=-1 -->\n```sh\ntrue\n```\n", "timeout=-1 must be"),
    ("<!-- example: after=nobody -->\n```sh\ntrue\n```\n", "no earlier block named nobody"),
    ("<!-- example: needs=hapt -->\n```text\nout\n```\n", "example marker before a ```text block"),
    ("<!-- example: skip=later -->\n```python\nif True\n```\n", "syntax error"),
    ("<!-- example: skip=later -->\n```sh\nif then fi fi\n```\n", "syntax error"),
    ("<!-- example: timeout=1 -->\n```sh\nsleep 5\n```\n", "timed out after 1 s"),
])
def test_bad_blocks_fail_with_the_reason(tmp_path, page, reason):
    rc, r, summary, out = run_pages(tmp_path, {"p.md": page})
    assert rc == 1, out
    (result, why), = r.values()
    assert result == "fail" and reason in why, out


def test_select_runs_the_chain_it_needs(tmp_path):
    page = ("<!-- example: name=a -->\n```sh\ntouch a\n```\n"
            "```sh\nexit 1\n```\n"
            "<!-- example: after=a -->\n```sh\ntest -e a\n```\n")
    rc, r, summary, out = run_pages(tmp_path, {"p.md": page}, "-k", "p.md:9")
    assert rc == 0 and set(r) == {"p.md:2", "p.md:9"}, out


def test_missing_build_is_a_usage_error(tmp_path):
    p = subprocess.run([sys.executable, RUNNER, "--build", str(tmp_path / "nowhere")],
                       capture_output=True, text=True, check=False)
    assert p.returncode == 2 and "has no bin/ folder" in p.stderr


def test_inline_code_at_a_line_start_is_not_a_fence(tmp_path):
    # CommonMark: a backtick fence's info string holds no backtick, so this line is prose
    page = "```` ```python ```` blocks run.\n\n```sh\ntrue\n```\n"
    rc, r, summary, out = run_pages(tmp_path, {"p.md": page})
    assert rc == 0 and set(r) == {"p.md:3"}, out


def test_skipped_block_options_are_checked_against_help(tmp_path):
    fake_tool(tmp_path, "fake_tool", "Options: --alpha N  --beta")
    good = "<!-- example: skip=slow -->\n```sh\nfake_tool --alpha 3 --beta  # --comment\n```\n"
    rc, r, summary, out = run_pages(tmp_path, {"good.md": good})
    assert rc == 0 and r["good.md:2"] == ("skip", "slow"), out
    bad = "<!-- example: skip=slow -->\n```sh\nX=1 fake_tool --alpha 3 \\\n    --gamma 2\n```\n"
    rc, r, summary, out = run_pages(tmp_path, {"bad.md": bad})
    assert rc == 1 and r["bad.md:2"][0] == "fail", out
    assert "`fake_tool` has no option --gamma" in r["bad.md:2"][1], out
