"""The GitHub Actions workflows, checked structurally (issue 10, item 12):

* every `uses:` is pinned to a full 40-hex commit, with the release in a comment
  (and one action at one release has one commit everywhere);
* every actions/checkout step says `persist-credentials: false`;
* no `run:` script contains a `${{ }}` expression (step outputs and every
  other value reach scripts through `env:`);
* permissions are declared at the top and nothing asks for write access, except
  the signing identity and attestation store of a job that runs actions/attest.

Two independent readers do this: a small line parser (no dependency, always
runs) and a walk over the parsed YAML (when PyYAML is installed); they must
agree, and both must reject a deliberately bad workflow. zizmor itself runs in
.ci/run (and here, when it is installed). The fuzz campaign workflow's shape
(schedule, matrix over seeds and machines, shared database, merge job) is
checked at the end.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
SHA = re.compile(r"[0-9a-f]{40}")
VERSION = re.compile(r"v\d+(\.\d+)*")
README_TEST = "python3 -m pip install -q -e '.[test]' && python3 -m pytest -q"

try:
    import yaml
except ImportError:     # PyYAML comes with the [test] extra; without it the line parser still runs
    yaml = None

BAD = """\
name: bad
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: pinned but no release named
        uses: actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065
      - uses: actions/checkout@11d5960a326750d5838078e36cf38b85af677262  # v4.4.0
        with:
          persist-credentials: true
      - id: x
        run: echo "v=1" >> "$GITHUB_OUTPUT"
      - name: step output expanded in the script
        run: |
          echo starting
          echo "${{ steps.x.outputs.v }}"
      - run: echo "${{ github.event.pull_request.title }}"
"""
# What BAD holds, by kind: the two unpinned / unnamed uses, the two checkouts
# that keep credentials, the two scripts with an expression, no permissions.
BAD_KINDS = {"unpinned": 1, "no-version": 1, "credentials": 2, "expression": 2, "permissions": 1}

GOOD = """\
name: good
on: push
permissions:
  contents: read
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@11d5960a326750d5838078e36cf38b85af677262  # v4.4.0
        with:
          persist-credentials: false
      - id: x
        run: echo "v=1" >> "$GITHUB_OUTPUT"
      - name: step output through env
        env:
          V: ${{ steps.x.outputs.v }}
        run: |
          echo "$V"
"""


# --- reader 1: lines ---------------------------------------------------------------------------

def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _significant(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


def _block(lines: list, start: int, parent_indent: int) -> list:
    """Lines after `start` indented deeper than parent_indent (blank ones included)."""
    out = []
    for line in lines[start + 1:]:
        if _significant(line) and _indent(line) <= parent_indent:
            break
        out.append(line)
    return out


def _check_uses(value: str, comment: str) -> list:
    value = value.strip().strip("'\"")
    if value.startswith("./"):
        return []
    if value.startswith("docker://"):
        return [] if "@sha256:" in value else ["unpinned"]
    ref = value.rpartition("@")[2] if "@" in value else ""
    if not SHA.fullmatch(ref):
        return ["unpinned"]
    return [] if VERSION.search(comment or "") else ["no-version"]


USES = re.compile(r"^(\s*)(- +)?uses:\s*(\S+)\s*(#.*)?$")
RUN = re.compile(r"^(\s*)(- +)?run:\s*(.*)$")
PERSIST = re.compile(r"^\s*persist-credentials:\s*['\"]?false['\"]?\s*(#.*)?$")


def line_problems(text: str) -> list:
    """[(kind, line number)] found by reading lines."""
    lines = text.splitlines()
    found = []
    if not any(re.match(r"^permissions:", line) for line in lines):
        found.append(("permissions", 1))
    for n, line in enumerate(lines):
        if re.search(r":\s*['\"]?write(-all)?['\"]?\s*(#.*)?$", line) and not _attest_grant(lines, n):
            found.append(("write", n + 1))
        m = USES.match(line)
        if m:
            found += [(k, n + 1) for k in _check_uses(m.group(3), m.group(4))]
            if m.group(3).strip("'\"").startswith("actions/checkout@"):
                # the step: from its "- " line to the next line at or left of the dash
                first = n
                while not lines[first].lstrip().startswith("- "):
                    first -= 1
                step = [lines[first]] + _block(lines, first, _indent(lines[first]))
                if not any(PERSIST.match(s) for s in step):
                    found.append(("credentials", n + 1))
        m = RUN.match(line)
        if m and m.group(3).strip():
            key_indent = len(m.group(1)) + len(m.group(2) or "")
            value = m.group(3).split(" #")[0].strip()
            script = [] if value[:1] in ("|", ">") else [value]
            script += _block(lines, n, key_indent)
            if any("${{" in s for s in script):
                found.append(("expression", n + 1))
    return found


ATTEST_GRANTS = ("id-token", "attestations")


def _attest_grant(lines: list, n: int) -> bool:
    """`id-token: write` / `attestations: write` inside a job whose steps use actions/attest."""
    key = lines[n].strip().split(":")[0]
    if key not in ATTEST_GRANTS:
        return False
    start = max(k for k in range(n + 1) if re.match(r"^  [A-Za-z0-9_-]+:\s*$", lines[k]) or k == 0)
    end = next((k for k in range(n + 1, len(lines)) if re.match(r"^  [A-Za-z0-9_-]+:\s*$", lines[k])), len(lines))
    return any(re.match(r"^\s*-?\s*uses:\s*actions/attest@", ln) for ln in lines[start:end])


# --- reader 2: the parsed YAML ---------------------------------------------------------------

def _permission_values(perms) -> list:
    if isinstance(perms, str):
        return [perms]
    return list(perms.values()) if isinstance(perms, dict) else []


def yaml_problems(text: str) -> list:
    """[kind] found by walking the parsed document (jobs, steps)."""
    doc = yaml.safe_load(text)
    found = [] if "permissions" in doc else ["permissions"]
    perms = [doc.get("permissions")]
    for job in (doc.get("jobs") or {}).values():
        attests = any(str(st.get("uses", "")).startswith("actions/attest@") for st in job.get("steps") or [])
        granted = job.get("permissions")
        if attests and isinstance(granted, dict):   # signing and storing the attestation only
            granted = {k: v for k, v in granted.items() if k not in ATTEST_GRANTS}
        perms.append(granted)
        if "uses" in job:                                  # a reusable workflow
            found += _check_uses(job["uses"], _comment_of(text, job["uses"]))
        for step in job.get("steps") or []:
            if "uses" in step:
                found += _check_uses(step["uses"], _comment_of(text, step["uses"]))
                if str(step["uses"]).startswith("actions/checkout@"):
                    keep = (step.get("with") or {}).get("persist-credentials", True)
                    if keep is not False and str(keep).lower() != "false":
                        found.append("credentials")
            if "${{" in str(step.get("run", "")):
                found.append("expression")
    found += ["write" for p in perms for v in _permission_values(p) if str(v).startswith("write")]
    return found


def _comment_of(text: str, uses: str) -> str:
    """YAML drops comments: the release comment of the first line naming `uses`."""
    for line in text.splitlines():
        m = USES.match(line)
        if m and m.group(3).strip("'\"") == uses:
            return m.group(4) or ""
    return ""


needs_yaml = pytest.mark.skipif(yaml is None, reason="PyYAML is not installed (the line reader still ran)")


# --- the project's workflows ---------------------------------------------------------------------

def test_there_are_workflows():
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "mlx-gate.yml", "fuzz-campaign.yml"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_is_hardened_by_lines(path):
    assert line_problems(path.read_text(encoding="utf-8")) == []


@needs_yaml
@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_is_hardened_by_yaml(path):
    text = path.read_text(encoding="utf-8")
    assert yaml_problems(text) == []
    steps = [s for j in yaml.safe_load(text)["jobs"].values() for s in j.get("steps") or []]
    assert steps and not any("${{ steps." in str(s.get("run", "")) for s in steps)


def test_one_release_one_commit_everywhere():
    pins = {}
    for path in WORKFLOWS:
        for line in path.read_text(encoding="utf-8").splitlines():
            m = USES.match(line)
            if m and "@" in m.group(3) and not m.group(3).startswith("./"):
                action, _, sha = m.group(3).partition("@")
                pins.setdefault(action, set()).add((sha, (m.group(4) or "").lstrip("# ").strip()))
    assert pins, "no uses: found"
    for action, seen in pins.items():
        assert len(seen) == 1, f"{action} is pinned in more than one way: {sorted(seen)}"


# --- negative controls: the checkers reject a bad workflow ------------------------------------

def test_line_reader_rejects_the_bad_workflow_and_passes_the_good_one():
    found = line_problems(BAD)
    assert Counter(k for k, _ in found) == Counter(BAD_KINDS)
    lines = BAD.splitlines()
    flagged = ["\n".join(lines[n - 1:n + 3]) for k, n in found if k == "expression"]
    assert any("${{ steps." in text for text in flagged)     # the step output, by its run: line
    assert line_problems(GOOD) == []


@needs_yaml
def test_yaml_reader_rejects_the_bad_workflow_and_passes_the_good_one():
    assert Counter(yaml_problems(BAD)) == Counter(BAD_KINDS)
    assert yaml_problems(GOOD) == []


def test_write_permissions_are_caught():
    text = GOOD.replace("contents: read", "contents: write")
    assert [k for k, _ in line_problems(text)] == ["write"]
    if yaml is not None:
        assert yaml_problems(text) == ["write"]


# --- the audit in CI -----------------------------------------------------------------------------

def test_ci_run_audits_the_workflows_before_the_readme_test_command():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert README_TEST in readme
    commands = [line.strip() for line in script.splitlines() if _significant(line)]
    assert commands[-1] == README_TEST, "the README's test command, verbatim, is the last step"
    audit = [n for n, c in enumerate(commands) if "zizmor" in c and "--min-severity medium" in c]
    assert audit and audit[0] < len(commands) - 1
    assert "--offline" in commands[audit[0]] and ".github/workflows" in commands[audit[0]]
    assert any(re.search(r"pip install -q 'zizmor==\d+\.\d+\.\d+'", c) for c in commands)
    assert "set -euo pipefail" in script          # a finding stops CI


def _zizmor():
    exe = shutil.which("zizmor")
    if exe is None:
        pytest.skip("zizmor is not installed (.ci/run installs it)")
    return exe


def test_zizmor_finds_nothing_of_medium_severity_or_above():
    p = subprocess.run([_zizmor(), "--offline", "--min-severity", "medium", "--no-progress", "--color", "never",
                        str(ROOT / ".github" / "workflows")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_zizmor_fails_on_the_bad_workflow(tmp_path):
    d = tmp_path / ".github" / "workflows"
    d.mkdir(parents=True)
    (d / "bad.yml").write_text(BAD)
    p = subprocess.run([_zizmor(), "--offline", "--min-severity", "medium", "--no-progress", "--color", "never",
                        str(d)], capture_output=True, text=True, timeout=120)
    assert p.returncode in (13, 14), p.stdout + p.stderr       # medium / high findings
    for audit in ("unpinned-uses", "artipacked"):
        assert audit in p.stdout + p.stderr


# --- the fuzz campaign workflow (issue 12, item 4) ----------------------------------------------

@needs_yaml
def test_fuzz_campaign_shape():
    doc = yaml.safe_load((ROOT / ".github" / "workflows" / "fuzz-campaign.yml").read_text(encoding="utf-8"))
    on = doc.get("on", doc.get(True))              # YAML 1.1 reads the key `on` as true
    assert "schedule" in on and "workflow_dispatch" in on
    fuzz, merge = doc["jobs"]["fuzz"], doc["jobs"]["merge"]

    matrix = fuzz["strategy"]["matrix"]
    assert len(matrix["seed"]) >= 2 and fuzz["strategy"]["fail-fast"] is False
    oses = {i["os"] for i in matrix["include"]}
    assert any(o.startswith("ubuntu") for o in oses) and any(o.startswith("macos") for o in oses)
    assert fuzz["permissions"] == {"contents": "read", "actions": "read"}   # actions: the artifact

    [run] = [s for s in fuzz["steps"] if "mlx-vjpcheck fuzz" in str(s.get("run", ""))]
    script = run["run"]
    for flag in ("--time", "--seed", "--out", '--db "github:$REPOSITORY/$DB_ARTIFACT:'):
        assert flag in script
    assert run["env"]["GITHUB_TOKEN"] == "${{ github.token }}"
    uploads = [s["with"] for s in fuzz["steps"] if "upload-artifact" in str(s.get("uses"))]
    assert any(u["path"].startswith("campaign/fuzz-db") for u in uploads)
    assert any(u["path"].startswith("campaign/findings") for u in uploads)

    assert merge["needs"] == "fuzz" and "always()" in merge["if"]
    downloads = [s["with"] for s in merge["steps"] if "download-artifact" in str(s.get("uses"))]
    assert {d["pattern"] for d in downloads} == {"fuzz-findings-*", "fuzz-db-*"}
    assert any("python -m mlx_vjpcheck.fuzz.merge" in str(s.get("run", "")) for s in merge["steps"])
    shared = [s["with"] for s in merge["steps"] if "upload-artifact" in str(s.get("uses"))
              and s["with"]["name"] == "${{ env.DB_ARTIFACT }}"]
    assert shared and shared[0]["path"].startswith("campaign/fuzz-db")   # what the next run reads
    assert "permissions" not in merge or "actions" not in merge["permissions"]


def test_attestation_grants_only_in_an_attesting_job():
    """id-token / attestations write access passes in the real workflow's attest job
    (test above), and is caught in a job that attests nothing."""
    bad = GOOD + ("\n  other:\n    runs-on: ubuntu-latest\n    permissions:\n      id-token: write\n"
                  "    steps:\n      - run: echo hi\n")
    assert "write" in [k for k, _ in line_problems(bad)]
    if yaml is not None:
        assert "write" in yaml_problems(bad)
