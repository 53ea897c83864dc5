"""`mlx-vjpcheck handoff ID|all --out DIR`: per finding an issue text in MLX's
bug-report form (MLX's own output quoted fenced and escaped), the reproducer,
the patch and the MLX-style regression test, as a run directory of kind
"handoff" that the validator checks; bad input is one line on stderr, exit 2,
nothing written."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT, mlx_version, needs_pinned_mlx, run_cli
from mlx_vjpcheck.cases import register
from mlx_vjpcheck.cli import handoff
from mlx_vjpcheck.cli import main as cli_main
from mlx_vjpcheck.evidence import load, manifest, paths, rundir
from mlx_vjpcheck.validation import evidence

needs_mlx = pytest.mark.skipif(mlx_version() is None, reason="handoff runs each reproducer on the installed MLX")
ONE = "hadamard_transform__untransposed_factor"


def _listing(root: Path) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _validate(directory: Path) -> tuple:
    return evidence.check(load.load(directory))


@pytest.fixture(scope="module")
def one(tmp_path_factory):
    out = tmp_path_factory.mktemp("handoff") / "one"
    p = run_cli("handoff", ONE, "--out", out)
    assert p.returncode == 0, p.stderr
    return out, p


@pytest.fixture(scope="module")
def every(tmp_path_factory):
    out = tmp_path_factory.mktemp("handoff") / "all"
    p = run_cli("handoff", "all", "--out", out, timeout=1200)
    assert p.returncode == 0, p.stderr
    return out


def test_handoff_is_a_subcommand():
    assert cli_main.SUBCOMMANDS["handoff"] == "handoff"
    assert "handoff" in rundir.KINDS


@needs_mlx
def test_one_finding_gets_issue_reproducer_patch_and_test(one):
    out, p = one
    d = next(d for d in register.load() if d.id == ONE)
    index = json.loads((out / paths.HANDOFF).read_text())
    (entry,) = index["findings"]
    assert entry["id"] == ONE and entry["status"] == "fixed"
    files = {role: out / rel for role, rel in entry["files"].items()}
    assert set(files) == {"issue", "reproducer", "patch", "regression_test"}
    assert files["patch"].read_bytes() == (ROOT / "patch" / d.patch).read_bytes()
    assert files["regression_test"].read_bytes() == (ROOT / "patch" / d.regression_test).read_bytes()
    assert files["reproducer"].read_text() == d.reproducer()
    issue = files["issue"].read_text()
    for heading in ("**Describe the bug**", "**To Reproduce**", "**Expected behavior**", "**Additional context**"):
        assert heading in issue
    assert d.root_cause in issue and d.reproducer().rstrip() in issue
    assert f"`{Path(d.patch).name}`" in issue and d.releases in issue
    assert rundir.kind_of(out) == "handoff" and (out / manifest.NAME).is_file()
    assert f"{ONE}: fixed; reproducer exit" in p.stdout


@needs_pinned_mlx()
def test_the_issue_quotes_what_pinned_mlx_prints(one):
    out, _ = one
    entry = json.loads((out / paths.HANDOFF).read_text())["findings"][0]
    assert entry["reproducer_exit"] == 1
    assert "VERDICT: defect present" in (out / entry["files"]["issue"]).read_text()


@needs_mlx
def test_the_validator_accepts_a_handoff(one):
    lines, passed = _validate(one[0])
    assert passed, lines
    assert any(line.startswith(f"{paths.HANDOFF}:") for line in lines)


def _tampered(src: Path, dst: Path, edit) -> Path:
    """A copy of a handoff with one edit and a manifest rewritten to match (so only the
    handoff checks can notice)."""
    import shutil
    shutil.copytree(src, dst)
    edit(dst)
    (dst / manifest.NAME).unlink()
    (dst / manifest.NAME).write_text(manifest.render(dst))
    return dst


def _entry(d: Path) -> dict:
    return json.loads((d / paths.HANDOFF).read_text())["findings"][0]


@needs_mlx
@pytest.mark.parametrize("what, edit, says", [
    ("patch", lambda d: (d / _entry(d)["files"]["patch"]).write_text("--- a/mlx/x.cpp\n+++ b/mlx/x.cpp\n"),
     "the patch differs from the packaged"),
    ("test", lambda d: (d / _entry(d)["files"]["regression_test"]).write_text("assert True\n"),
     "the regression_test differs"),
    ("reproducer", lambda d: (d / _entry(d)["files"]["reproducer"]).write_text("print('fine')\n"),
     "the reproducer differs from the register's"),
    ("issue", lambda d: (d / _entry(d)["files"]["issue"]).write_text("all good\n"), "does not quote the reproducer"),
    ("unlisted", lambda d: (d / ONE / "extra.py").write_text("x = 1\n"), "a file no finding"),
    ("unknown id", lambda d: (d / paths.HANDOFF).write_text((d / paths.HANDOFF).read_text().replace(
        f'"id": "{ONE}"', '"id": "no_such__finding"')), "not a finding of the defect register"),
    ("status", lambda d: (d / paths.HANDOFF).write_text((d / paths.HANDOFF).read_text().replace(
        '"status": "fixed"', '"status": "not fixed"')), "status differ from the register"),
])
def test_the_validator_rejects_a_tampered_handoff(one, tmp_path, what, edit, says):
    """Negative controls: each handoff check notices its own kind of damage."""
    bad = _tampered(one[0], tmp_path / "bad", edit)
    lines, passed = _validate(bad)
    assert not passed
    assert any(says in line for line in lines), lines


@needs_mlx
def test_a_bundle_carries_a_handoff_and_validates(one, tmp_path):
    zipped = tmp_path / "handoff.zip"
    p = run_cli("bundle", one[0], "--out", zipped, "--skip-probes")
    assert p.returncode == 0, p.stderr
    lines, passed = evidence.check(load.load(zipped))
    assert passed, lines


@needs_mlx
def test_an_existing_handoff_is_replaced_only_with_replace(one, tmp_path):
    import shutil
    out = tmp_path / "again"
    shutil.copytree(one[0], out)
    p = run_cli("handoff", ONE, "--out", out)
    assert p.returncode == 2 and "--replace" in p.stderr and len(p.stderr.strip().splitlines()) == 1


@needs_mlx
def test_all_hands_over_every_finding_and_validates(every):
    index = json.loads((every / paths.HANDOFF).read_text())
    defects = register.load()
    assert [e["id"] for e in index["findings"]] == [d.id for d in defects]
    for e, d in zip(index["findings"], defects):
        assert ("patch" in e["files"]) == (d.status == "fixed")
    lines, passed = _validate(every)
    assert passed, lines


# --- bad input: one line on stderr, exit 2, nothing written -------------------------------------

def test_an_unknown_finding_is_one_line_and_exit_2(tmp_path):
    p = run_cli("handoff", "no_such__finding", "--out", tmp_path / "out")
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "no finding 'no_such__finding'" in p.stderr
    assert not (tmp_path / "out").exists()


def test_a_foreign_output_directory_is_refused(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep\n")
    before = _listing(tmp_path)
    p = run_cli("handoff", ONE, "--out", mine)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "not written by mlx-vjpcheck" in p.stderr
    assert _listing(tmp_path) == before and (mine / "notes.txt").read_text() == "keep\n"


def test_another_kind_of_evidence_is_not_replaced(tmp_path):
    import helpers.evidence_fixtures as fx
    run = fx.run_dir(tmp_path / "run")
    p = run_cli("handoff", ONE, "--out", run, "--replace")
    assert p.returncode == 2 and "not a handoff run" in p.stderr
    assert rundir.kind_of(run) == "run"


def test_a_missing_patch_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    """A wheel without the series (or a checkout without patch/): one line, nothing written."""
    from mlx_vjpcheck.core import resources
    monkeypatch.setattr(resources, "patch_dir", lambda: tmp_path / "nopatch")
    pytest.importorskip("mlx.core")
    rc = cli_main.main(["handoff", ONE, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 2 and "the package lacks" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


# --- MLX's text is quoted, never trusted --------------------------------------------------------

def test_mlx_output_is_fenced_and_escaped():
    d = next(d for d in register.load() if d.id == ONE)
    hostile = "```\n# Injected heading\n\u202eevil\x1b[31m ```` more"
    text = handoff.issue_text(d, hostile, 1, "0.0\u202e", "Linux x86_64")
    assert "\u202e" not in text and "\x1b" not in text
    opening = "`" * 5   # longer than the longest backtick run (4) inside
    block = text.split(f"it exits 1 and prints:\n\n{opening}\n", 1)[1].split(f"\n{opening}\n", 1)[0]
    assert "# Injected heading" in block and "\\u202e" in block and "\\x1b" in block
    assert "MLX 0.0\\u202e" in text
