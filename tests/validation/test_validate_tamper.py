"""Tamper suite on evidence directories: every edit is caught, with its reason."""
import shutil
from pathlib import Path

import pytest

import helpers.evidence_fixtures as fx
from mlx_vjpcheck.evidence import manifest


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    root = tmp_path_factory.mktemp("tamper")
    return {"run": fx.run_dir(root / "run"), "native": fx.native_dir(root / "native")}


@pytest.fixture
def copy_of(template, tmp_path):
    return lambda kind: Path(shutil.copytree(template[kind], tmp_path / kind))


def rejected(path, reason):
    rc, out, err = fx.check(path)
    assert rc == 1, out + err
    assert reason in out, out
    ok, total = out.splitlines()[-1].split()[0].split("/")
    assert int(ok) < int(total)
    return out


def flip_byte(path, offset=None):
    data = bytearray(path.read_bytes())
    i = len(data) // 2 if offset is None else offset
    data[i] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("kind,name", [("run", "results.json"), ("run", "environment.json"),
                                       ("native", "logs/compile-pristine.out"),
                                       ("native", "patch.diff")])
def test_flipped_byte_in_each_kind_of_file(copy_of, kind, name):
    root = copy_of(kind)
    flip_byte(root / name)
    rejected(root, f"sha256 mismatch: {name}")


def test_flipped_hash_digit_in_manifest(copy_of):
    root = copy_of("run")
    m = root / manifest.NAME
    text = m.read_text()
    m.write_text(("1" if text[0] != "1" else "2") + text[1:])
    rejected(root, "sha256 mismatch: ")


def test_flipped_path_byte_in_manifest(copy_of):
    root = copy_of("run")
    m = root / manifest.NAME
    flip_byte(m, m.read_text().index("results.json"))
    out = rejected(root, "missing: sesults.json")
    assert "unlisted file: results.json" in out


def test_malformed_manifest_line(copy_of):
    root = copy_of("run")
    (root / manifest.NAME).write_text("not a manifest line\n")
    rejected(root, "MANIFEST.sha256 is malformed")


def _first_fail(data):
    return next(r for r in data["records"] if r["status"] == "fail")


def _observed_flip(data):
    c = next(c for c in _first_fail(data)["checks"] if c["name"] == "grad:a")
    c["observed"] = c["expected"]       # now matches the reference: the recorded fail no longer follows


def _expected_change(data):
    c = next(c for c in _first_fail(data)["checks"] if c["name"] == "grad:a")
    c["expected"][0][0][0] = c["observed"][0][0][0]   # makes the recorded values agree


NUMBER_EDITS = {"observed": (_observed_flip, "recorded passed=False but recomputation gives True"),
                "expected": (_expected_change, "recorded expected values differ from the recomputed")}


@pytest.mark.parametrize("edit", sorted(NUMBER_EDITS))
def test_number_changed_without_manifest_update(copy_of, edit):
    root = copy_of("run")
    fx.edit_json(root / "results.json", NUMBER_EDITS[edit][0], remanifest=False)
    rejected(root, "sha256 mismatch: results.json")


@pytest.mark.parametrize("edit", sorted(NUMBER_EDITS))
def test_number_changed_with_manifest_update(copy_of, edit):
    root = copy_of("run")
    fx.edit_json(root / "results.json", NUMBER_EDITS[edit][0], remanifest=True)
    out = rejected(root, NUMBER_EDITS[edit][1])
    assert "manifest: 2/2 files ok" in out     # the hashes alone would have passed it


def test_verdict_and_observed_forged_together(copy_of):
    """The forger also rewrites the verdicts: the recomputed status still disagrees."""
    def forge(data):
        rec = _first_fail(data)
        for c in rec["checks"]:
            if c["name"] == "grad:a":
                c["observed"], c["passed"], c["reason"] = c["expected"], True, "ok"
        rec["status"] = "pass"
    root = copy_of("run")
    fx.edit_json(root / "results.json", forge, remanifest=True)
    rejected(root, "fd:a: observed values are not the recorded grad:a values")


def test_environment_edit_with_manifest_update(copy_of):
    root = copy_of("run")
    fx.edit_json(root / "environment.json", lambda env: env.update(mlx="9.9.9"), remanifest=True)
    rejected(root, "differs from the environment inside results.json")


def test_deleted_file(copy_of):
    root = copy_of("run")
    (root / "environment.json").unlink()
    rejected(root, "missing: environment.json")


def test_deleted_results_file(copy_of):
    root = copy_of("run")
    (root / "results.json").unlink()
    rejected(root, "missing: results.json")


def test_added_file(copy_of):
    root = copy_of("run")
    (root / "extra.txt").write_text("hello\n")
    rejected(root, "unlisted file: extra.txt")


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "logs/../../x"])
def test_manifest_path_outside_bundle(copy_of, path):
    root = copy_of("run")
    with open(root / manifest.NAME, "a") as fh:
        fh.write(f"{'0' * 64}  {path}\n")
    rejected(root, "manifest lists a path outside the bundle")


def test_symlink_in_directory(copy_of, tmp_path):
    root = copy_of("run")
    (tmp_path / "target.txt").write_text("outside\n")
    (root / "link.txt").symlink_to(tmp_path / "target.txt")
    rejected(root, "rejected: symlink 'link.txt'")


def test_comparison_row_that_does_not_follow(copy_of):
    root = copy_of("native")
    fx.edit_json(root / "comparison.json",
                 lambda d: d["rows"][-1].update(pristine="pass"), remanifest=True)
    rejected(root, "pristine 'pass' but results-pristine.json says 'fail'")


def test_command_without_exit_code(copy_of):
    root = copy_of("native")
    fx.edit_json(root / "commands.json", lambda d: d[0].update(exit_code=None), remanifest=True)
    rejected(root, "commands.json: does not follow commands.schema.json at /0/exit_code: None is not integer")


def test_command_log_missing(copy_of):
    root = copy_of("native")
    (root / "logs" / "compile-patched.err").unlink()
    fx.rewrite_manifest(root)
    rejected(root, "stderr log logs/compile-patched.err is not in the manifest")


def _tampered_fuzz(tmp_path, edit):
    root = fx.fuzz_dir(tmp_path / "fuzz")
    fx.edit_json(root / fx.FUZZ_RECORD, edit, remanifest=False)
    fx.rewrite_manifest(root)
    return root


def test_fuzz_record_expected_tampered(tmp_path):
    root = _tampered_fuzz(tmp_path, lambda d: d["record"]["checks"][1]["expected"][0][0].__setitem__(0, 42.0))
    rejected(root, "recorded expected values differ")


def test_fuzz_expected_copy_tampered(tmp_path):
    root = _tampered_fuzz(tmp_path, lambda d: d["expected"]["grad:b"][0][0].__setitem__(0, 42.0))
    rejected(root, "expected['grad:b'] differs from the recomputed float64 reference")


def test_fuzz_reproducer_missing(tmp_path):
    root = fx.fuzz_dir(tmp_path / "fuzz")
    next((root / "findings").glob("*_repro.py")).unlink()
    fx.rewrite_manifest(root)
    rejected(root, "_repro.py is missing")


def test_versions_cell_that_does_not_follow(tmp_path):
    root = fx.versions_dir(tmp_path / "versions")
    fx.edit_json(root / "versions.json",
                 lambda d: d["releases"][1]["probes"]["probe"].update(status="absent"), remanifest=True)
    out = rejected(root, "status 'absent' but exit code 1 gives 'present'")
    assert "first affected" in out and "summary" in out
