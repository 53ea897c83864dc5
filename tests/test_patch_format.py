"""The patch series follows MLX's own formatting, as MLX's pre-commit runs it: clang-format
(with the checkout's .clang-format) on the C++ lines each diff adds, black and isort
(--profile=black) on the Python files a diff touches and on the regression tests.

Needs the tools at the versions MLX's .pre-commit-config.yaml pins, found on PATH or
next to this Python (pip install clang-format==X black==Y isort==Z), and for the diffs an
MLX checkout holding the series' base commit ($MLX_SOURCE_ROOT): each part is skipped,
saying which is missing, when they are not there. A misformatted diff and a misformatted
test are shown to the checkers, which must reject them."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT

PATCH = ROOT / "patch"
SOURCE = os.environ.get("MLX_SOURCE_ROOT")
HOOKS = {"clang-format": "mirrors-clang-format", "black": "black-pre-commit-mirror", "isort": "pycqa/isort"}
HUNK = re.compile(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


# --- the tools ------------------------------------------------------------------------------------

def find_tool(name: str):
    """The tool on PATH, or installed beside this interpreter (a venv's bin/)."""
    here = Path(sys.executable).parent / name
    return shutil.which(name) or (str(here) if here.exists() else None)


def tool_version(path: str):
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)", out.stdout + out.stderr)
    return m.group(1) if m else None


def pinned_versions(config: str) -> dict:
    """tool -> version that MLX's .pre-commit-config.yaml pins (rev: vX.Y.Z)."""
    pins = {}
    for tool, repo in HOOKS.items():
        m = re.search(re.escape(repo) + r"\S*\s+rev:\s*v?([\d.]+)", config)
        if m:
            pins[tool] = m.group(1)
    return pins


def mlx_config() -> str:
    if not SOURCE:
        return ""
    try:
        return (Path(SOURCE) / ".pre-commit-config.yaml").read_text()
    except OSError:
        return ""


def usable(tool: str) -> str:
    """The tool's path, or skip: not installed, or not the version MLX pins."""
    path = find_tool(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed (pip install {tool}); the formatting check did not run")
    pin = pinned_versions(mlx_config()).get(tool)
    have = tool_version(path)
    if pin and have != pin:
        pytest.skip(f"{tool} {have} is installed, MLX's pre-commit pins {pin}: not checked with another version")
    return path


# --- the checkers: each returns a list of problems (empty: formatted) ----------------------------

def added_lines(diff: str) -> dict:
    """path -> [(first, last)] of the new side's hunks (1-based, inclusive)."""
    ranges, path = {}, None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
            continue
        m = HUNK.match(line)
        if m and path:
            first, count = int(m.group(1)), int(m.group(2) or 1)
            if count:
                ranges.setdefault(path, []).append((first, first + count - 1))
    return ranges


def diff_problems(diff: str, name: str, source: Path, base: str, tools: dict) -> list:
    """Apply the diff alone to the base's files in a scratch directory, then run
    clang-format on its hunks of C++ and black/isort on the Python files it touches."""
    ranges = added_lines(diff)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        style = subprocess.run(["git", "-C", str(source), "show", f"{base}:.clang-format"],
                               capture_output=True, text=True, timeout=60)
        (work / ".clang-format").write_text(style.stdout)
        for path in ranges:
            old = subprocess.run(["git", "-C", str(source), "show", f"{base}:{path}"],
                                 capture_output=True, timeout=60)
            if old.returncode:
                return [f"{name}: {path} is not in the base commit"]
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_bytes(old.stdout)
        (work / "change.diff").write_text(diff)
        applied = subprocess.run(["git", "apply", "change.diff"], cwd=work, capture_output=True,
                                 text=True, timeout=60)
        if applied.returncode:
            return [f"{name}: does not apply to the base: {applied.stderr.strip()}"]
        problems = []
        for path, spans in ranges.items():
            if path.endswith((".cpp", ".h")) and "clang-format" in tools:
                lines = [f"--lines={a}:{b}" for a, b in spans]
                out = subprocess.run([tools["clang-format"], "--style=file", "--dry-run", "--Werror",
                                      *lines, path], cwd=work, capture_output=True, text=True, timeout=120)
                if out.returncode:
                    where = sorted(set(re.findall(rf"{re.escape(path)}:(\d+):", out.stderr)))
                    problems.append(f"{name}: {path} lines {', '.join(where)} are not clang-formatted")
            elif path.endswith(".py"):
                problems += python_problems(work / path, f"{name}: {path}", tools)
        return problems


def python_problems(path: Path, label: str, tools: dict) -> list:
    problems = []
    if "black" in tools:
        out = subprocess.run([tools["black"], "--check", "--quiet", str(path)], capture_output=True, timeout=120)
        if out.returncode:
            problems.append(f"{label} is not black-formatted")
    if "isort" in tools:
        out = subprocess.run([tools["isort"], "--check-only", "--profile=black", str(path)],
                             capture_output=True, timeout=120)
        if out.returncode:
            problems.append(f"{label}'s imports are not isort-sorted")
    return problems


# --- the series as it is -------------------------------------------------------------------------

def _series() -> list:
    return (PATCH / "series").read_text().split()


def _base() -> str:
    return json.loads((PATCH / "series.json").read_text())["base"]


def _source() -> Path:
    if not SOURCE:
        pytest.skip("set MLX_SOURCE_ROOT to an MLX checkout holding the series' base commit; "
                    "the diffs' formatting was not checked")
    has = subprocess.run(["git", "-C", SOURCE, "cat-file", "-e", f"{_base()}^{{commit}}"],
                         capture_output=True, timeout=60)
    if has.returncode:
        pytest.skip(f"{SOURCE} does not hold the base commit {_base()}")
    return Path(SOURCE)


@pytest.mark.parametrize("name", _series())
def test_each_diff_of_the_series_is_formatted_as_mlx_formats(name):
    source = _source()
    tools = {"clang-format": usable("clang-format"), "black": usable("black"), "isort": usable("isort")}
    assert diff_problems((PATCH / name).read_text(), name, source, _base(), tools) == []


def test_the_regression_tests_are_black_and_isort_formatted():
    tools = {"black": usable("black"), "isort": usable("isort")}
    files = sorted(PATCH.glob("tests/test_*.py")) + sorted(PATCH.glob("extra/tests/test_*.py"))
    assert files
    assert [p for f in files for p in python_problems(f, f.name, tools)] == []


# --- negative controls: misformatted input is rejected --------------------------------------------

def _misformatted(diff: str) -> str:
    """The diff with the spaces after the commas of its first added line of code removed:
    the same code, not as clang-format writes it."""
    lines = diff.split("\n")
    for i, line in enumerate(lines):
        code = line[1:].strip()
        if line.startswith("+") and not line.startswith("+++") and ", " in code and not code.startswith("//"):
            lines[i] = line.replace(", ", ",")
            return "\n".join(lines)
    raise AssertionError("no added line of code with a comma")


def test_negative_control_a_misformatted_diff_is_rejected():
    source = _source()
    tools = {"clang-format": usable("clang-format")}
    name = "46-vmap-repeated-output-axis.diff"
    good = (PATCH / name).read_text()
    assert diff_problems(good, name, source, _base(), tools) == []
    problems = diff_problems(_misformatted(good), name, source, _base(), tools)
    assert problems and "not clang-formatted" in problems[0]


def test_negative_control_a_misformatted_test_is_rejected(tmp_path):
    tools = {"black": usable("black"), "isort": usable("isort")}
    bad = tmp_path / "test_bad.py"
    bad.write_text("import mlx_tests\nimport unittest\nx = [1,2]\n")
    problems = python_problems(bad, bad.name, tools)
    assert any("not black-formatted" in p for p in problems)
    assert any("not isort-sorted" in p for p in problems)
    good = tmp_path / "test_good.py"
    good.write_text("import unittest\n\nimport mlx_tests\n\nx = [1, 2]\n")
    assert python_problems(good, good.name, tools) == []
