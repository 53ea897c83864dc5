"""The in-toto test-result attestation beside a bundle: `bundle` writes it with the
bundle (both or neither, never over a foreign file), it says exactly what the
bundle's records say, and the validator checks it offline; every forgery below
is a negative control the validator must reject with its reason."""
from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import zipfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import helpers.evidence_fixtures as fx
from mlx_vjpcheck import __version__
from mlx_vjpcheck.cli import bundle as bundle_cli
from mlx_vjpcheck.cli import main as cli
from mlx_vjpcheck.evidence import attest

STATEMENT = "https://in-toto.io/Statement/v1"
TEST_RESULT = "https://in-toto.io/attestation/test-result/v0.1"


def bundle(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli.main(["bundle", *map(str, argv)])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A run directory, its bundle and attestation, made once; tests work on copies."""
    root = tmp_path_factory.mktemp("att")
    run = fx.run_dir(root / "run")
    rc, out, err = bundle(run, "--out", root / "evidence.zip", "--skip-probes")
    assert rc == 0, out + err
    return root


@pytest.fixture
def pair(made, tmp_path):
    for name in ("evidence.zip", "evidence.zip.intoto.json"):
        shutil.copy(made / name, tmp_path / name)
    return tmp_path / "evidence.zip", tmp_path / "evidence.zip.intoto.json"


def statement(path) -> dict:
    return json.loads(Path(path).read_text())


def edit(path, fn) -> None:
    doc = statement(path)
    fn(doc)
    Path(path).write_text(json.dumps(doc, indent=2))


def attestation_lines(out: str) -> list:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("attestation"))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


# --- what bundle writes --------------------------------------------------------------------

def test_bundle_writes_the_statement_beside_it(made):
    z, att = made / "evidence.zip", made / "evidence.zip.intoto.json"
    doc = statement(att)
    assert doc["_type"] == STATEMENT and doc["predicateType"] == TEST_RESULT
    assert doc["subject"] == [{"name": "evidence.zip",
                               "digest": {"sha256": hashlib.sha256(z.read_bytes()).hexdigest()}}]
    pred = doc["predicate"]
    # the fixture: 3 passing records, 1 failing, 1 error, 1 crash, all on cpu
    assert pred["passedTests"] == sorted(f"{n}@cpu" for n in fx.PASSING)
    assert pred["failedTests"] == sorted(f"{n}@cpu" for n in fx.FAILING + fx.ERRORED + fx.CRASHED)
    assert pred["warnedTests"] == [] and pred["result"] == "FAILED"
    [conf] = pred["configuration"]
    data = json.loads(zipfile.ZipFile(z).read("results.json"))
    prov = data["provenance"]
    assert conf["name"] == "mlx-vjpcheck"
    assert conf["uri"] == f"pkg:generic/mlx-vjpcheck@{prov['harness']['version']}"
    assert conf["annotations"]["harnessVersion"] == prov["harness"]["version"]
    assert conf["annotations"]["catalogDigest"] == {"sha256": prov["catalog_digest"]}
    assert conf["annotations"]["versionFrom"] == ["results.json"]
    assert "url" not in pred
    assert list(doc) == ["_type", "subject", "predicateType", "predicate"]   # the spec's order


def test_statement_is_deterministic(made, tmp_path):
    rc, _, _ = bundle(made / "run", "--out", tmp_path / "evidence.zip", "--skip-probes")
    assert rc == 0
    assert (tmp_path / "evidence.zip.intoto.json").read_bytes() == (made / "evidence.zip.intoto.json").read_bytes()


def test_bundle_prints_the_attestation_and_keeps_the_digest_last(made, tmp_path):
    rc, out, _ = bundle(made / "run", "--out", tmp_path / "b.zip", "--skip-probes")
    lines = out.splitlines()
    assert rc == 0 and lines[-2] == (f"attestation {tmp_path / 'b.zip.intoto.json'}: test result FAILED "
                                     f"({len(fx.PASSING)} passed, {len(fx.NAMES) - len(fx.PASSING)} failed)")
    assert lines[-1].split()[0] == hashlib.sha256((tmp_path / "b.zip").read_bytes()).hexdigest()


def test_all_passing_records_attest_passed(tmp_path):
    run = fx.run_dir(tmp_path / "run")

    def keep_passing(d):
        d["records"] = [r for r in d["records"] if r["status"] == "pass"]
        d["summary"] = fx.results.summary(d["records"])
    files = {"results.json": json.dumps(_edited(run / "results.json", keep_passing)).encode()}
    passed, failed = attest.tests(files)
    assert passed and not failed and attest.result(passed, failed) == "PASSED"
    assert attest.result([], []) == "FAILED"   # no test at all proves no pass


def _edited(path, fn):
    data = json.loads(Path(path).read_text())
    fn(data)
    return data


def test_native_and_fuzz_bundles_name_their_files(tmp_path):
    fuzz = fx.fuzz_dir(tmp_path / "fuzz")
    files = {p.relative_to(fuzz).as_posix(): p.read_bytes() for p in fuzz.rglob("*") if p.is_file()}
    passed, failed = attest.tests(files)
    assert passed == [] and failed == [f"{fx.FAILING[0]}@cpu ({fx.FUZZ_RECORD})"]
    native = {"results-pristine.json": json.dumps({"records": [
        {"scenario": "s/a", "device": "cpu", "status": "fail"}]}).encode(),
        "results-patched.json": json.dumps({"records": [
            {"scenario": "s/a", "device": "cpu", "status": "pass"}]}).encode()}
    assert attest.tests(native) == (["s/a@cpu (results-patched.json)"], ["s/a@cpu (results-pristine.json)"])
    [conf] = attest.configuration(native, "1.2.3+dev")
    assert conf["uri"] == "pkg:generic/mlx-vjpcheck@1.2.3%2Bdev"
    assert conf["annotations"] == {"harnessVersion": "1.2.3+dev", "versionFrom": "bundle"}


def test_github_run_url():
    env = {"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com",
           "GITHUB_REPOSITORY": "octo/mlx", "GITHUB_RUN_ID": "42"}
    assert attest.github_run_url(env) == "https://github.com/octo/mlx/actions/runs/42"
    assert attest.github_run_url({**env, "GITHUB_ACTIONS": "false"}) is None
    assert attest.github_run_url({**env, "GITHUB_REPOSITORY": "octo/mlx\n x"}) is None
    assert attest.github_run_url({**env, "GITHUB_SERVER_URL": "http://github.com"}) is None


def test_bundle_in_github_actions_records_the_run(made, tmp_path, monkeypatch):
    for k, v in {"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com",
                 "GITHUB_REPOSITORY": "octo/mlx", "GITHUB_RUN_ID": "7"}.items():
        monkeypatch.setenv(k, v)
    assert bundle(made / "run", "--out", tmp_path / "e.zip", "--skip-probes")[0] == 0
    assert statement(tmp_path / "e.zip.intoto.json")["predicate"]["url"] == \
        "https://github.com/octo/mlx/actions/runs/7"
    rc, out, err = fx.check(tmp_path / "e.zip")
    assert rc == 0, out + err


# --- the validator ---------------------------------------------------------------------------

def test_honest_attestation_validates(pair):
    z, att = pair
    rc, out, err = fx.check(z)
    assert rc == 0, out + err
    [head] = attestation_lines(out)
    assert head.startswith("attestation evidence.zip.intoto.json: ") and head.endswith(" checks ok")


def test_honest_attestation_validates_in_a_subprocess(pair):
    rc, out, err = fx.validate(pair[0])
    assert rc == 0, out + err
    assert "attestation evidence.zip.intoto.json:" in out


def test_no_attestation_is_one_line_saying_so(pair):
    z, att = pair
    att.unlink()
    rc, out, err = fx.check(z)
    assert rc == 0, out + err
    assert out.splitlines().count("attestation: not checked (no evidence.zip.intoto.json beside the bundle)") == 1


def test_directories_get_no_attestation_line(made):
    rc, out, _ = fx.check(made / "run")
    assert rc == 0 and not any(line.startswith("attestation") for line in out.splitlines())
    assert out.splitlines()[-1].startswith("trust: consistent") and "self-attested" in out


def test_unknown_fields_are_ignored(pair):
    # in-toto parsing rules: consumers MUST ignore unrecognized fields
    z, att = pair

    def extend(d):
        d["x-note"] = "extension"
        d["predicate"]["x-extra"] = {"anything": 1}
        d["predicate"]["configuration"][0]["x-more"] = True
    edit(att, extend)
    rc, out, err = fx.check(z)
    assert rc == 0, out + err


FORGERIES = {
    "digest": (lambda d: d["subject"][0]["digest"].update(sha256="0" * 64),
               "subject digest sha256 '" + "0" * 64 + "' is not the bundle's"),
    "sha512 too": (lambda d: d["subject"][0]["digest"].update(sha512="ab" * 64),
                   "subject digest sha512 "),
    "no sha256": (lambda d: d["subject"][0].update(digest={"md5": "0" * 32}), "subject has no sha256 digest"),
    "name": (lambda d: d["subject"][0].update(name="other.zip"),
             "subject name 'other.zip' is not the bundle's file name 'evidence.zip'"),
    "two subjects": (lambda d: d["subject"].append(dict(d["subject"][0])), "subject must be a list of one"),
    "type": (lambda d: d.update(_type="https://in-toto.io/Statement/v0.1"),
             "_type 'https://in-toto.io/Statement/v0.1' is not https://in-toto.io/Statement/v1"),
    "predicate type": (lambda d: d.update(predicateType="https://slsa.dev/provenance/v1"),
                       "predicateType 'https://slsa.dev/provenance/v1' is not " + TEST_RESULT),
    "no predicate": (lambda d: d.pop("predicate"), "predicate is missing or not an object"),
    "result": (lambda d: d["predicate"].update(result="PASSED"),
               "predicate.result 'PASSED' but the bundle's records give 'FAILED' (3 passed, 3 failed)"),
    "failure passed": (lambda d: d["predicate"]["passedTests"].append(d["predicate"]["failedTests"].pop(0)),
                       "predicate.passedTests: 1 listed that the records do not give"),
    "failure dropped": (lambda d: d["predicate"]["failedTests"].pop(0),
                        "predicate.failedTests: 1 the records give not listed"),
    "test invented": (lambda d: d["predicate"]["passedTests"].append("gmm/made_up@gpu"),
                      "predicate.passedTests: 1 listed that the records do not give (e.g. 'gmm/made_up@gpu')"),
    "test twice": (lambda d: d["predicate"]["passedTests"].append(d["predicate"]["passedTests"][0]),
                   "predicate.passedTests: 1 listed that the records do not give"),
    "all cleared": (lambda d: d["predicate"].update(result="PASSED", failedTests=[]),
                    "predicate.failedTests: 3 the records give not listed"),
    "warned": (lambda d: d["predicate"].update(warnedTests=["x@cpu"]),
               "predicate.warnedTests: 1 listed that the records do not give (e.g. 'x@cpu')"),
    "not a list": (lambda d: d["predicate"].update(passedTests="all"),
                   "predicate.passedTests is not a list of test names"),
    "version": (lambda d: d["predicate"]["configuration"][0]["annotations"].update(harnessVersion="9.9"),
                "predicate.configuration[0].annotations.harnessVersion is '9.9', the records give"),
    "catalog": (lambda d: d["predicate"]["configuration"][0]["annotations"].update(
        catalogDigest={"sha256": "1" * 64}), "predicate.configuration[0].annotations.catalogDigest.sha256 is"),
    "uri": (lambda d: d["predicate"]["configuration"][0].update(uri="pkg:generic/mlx-vjpcheck@0.0.1"),
            "predicate.configuration[0].uri is 'pkg:generic/mlx-vjpcheck@0.0.1'"),
    "no configuration": (lambda d: d["predicate"].pop("configuration"),
                         "predicate.configuration is None, the records give"),
    "bundler claim without right": (
        lambda d: d["predicate"].update(configuration=[{"name": "mlx-vjpcheck", "uri": f"pkg:generic/mlx-vjpcheck@{__version__}",
                                                        "annotations": {"harnessVersion": __version__,
                                                                        "versionFrom": "bundle"}}]),
        "predicate.configuration[0].annotations.versionFrom is 'bundle', the records give ['results.json']"),
    "url": (lambda d: d["predicate"].update(url="javascript:alert(1)"),
            "predicate.url 'javascript:alert(1)' is not an https URL"),
    "terminal escape": (lambda d: d["subject"][0].update(name="\x1b[2Jevidence.zip"),
                        "subject name '\\x1b[2Jevidence.zip' is not"),
}


@pytest.mark.parametrize("case", sorted(FORGERIES))
def test_forged_attestation_rejected(pair, case):
    z, att = pair
    fn, reason = FORGERIES[case]
    edit(att, fn)
    rc, out, err = fx.check(z)
    assert rc == 1, out + err
    lines = attestation_lines(out)
    assert lines[0].endswith("FAILED"), out
    assert any(line.startswith("  FAIL ") and reason in line for line in lines), out
    assert "\x1b" not in out


def test_attestation_of_another_bundle_rejected(pair, tmp_path):
    # a genuine statement, beside a bundle (same name) it was not made for
    z, att = pair
    fuzz = fx.fuzz_dir(tmp_path / "fuzz")
    (tmp_path / "x").mkdir()   # a file option creates no folders
    assert bundle(fuzz, "--out", tmp_path / "x" / "evidence.zip", "--skip-probes")[0] == 0
    shutil.copy(tmp_path / "x" / "evidence.zip", z)
    rc, out, _ = fx.check(z)
    lines = attestation_lines(out)
    assert rc == 1 and any("subject digest sha256" in line and "is not the bundle's" in line for line in lines), out
    assert any("predicate.failedTests" in line for line in lines), out


@pytest.mark.parametrize("data, reason", [
    (b"not json", "not strict JSON"),
    (b'{"_type": NaN}', "not strict JSON ('bare NaN is not JSON"),
    (b"\xff\xfe{}", "not strict JSON"),
    (b"[1, 2]", "not a JSON object"),
])
def test_unreadable_statement_rejected(pair, data, reason):
    z, att = pair
    att.write_bytes(data)
    rc, out, _ = fx.check(z)
    assert rc == 1 and any(reason in line for line in attestation_lines(out)), out


def test_symlinked_statement_rejected(pair, tmp_path):
    z, att = pair
    real = tmp_path / "elsewhere.json"
    att.rename(real)
    att.symlink_to(real)
    rc, out, _ = fx.check(z)
    assert rc == 1 and "it is a symlink" in out, out


def test_oversized_statement_rejected_by_size(pair):
    z, att = pair
    with open(att, "r+b") as fh:
        fh.truncate(attest.MAX_BYTES + 1)
    rc, out, _ = fx.check(z)
    assert rc == 1 and f"it is {attest.MAX_BYTES + 1} bytes (limit {attest.MAX_BYTES})" in out, out


def test_rejected_bundle_leaves_the_statement_unchecked(pair):
    z, att = pair
    with zipfile.ZipFile(z, "a") as zf:
        zf.writestr("../evil", b"x")
    rc, out, _ = fx.check(z)
    assert rc == 1 and "attestation: not checked (evidence.zip.intoto.json: the bundle itself was rejected)" in out


# --- output rules: checked first, both or neither, never a foreign file ---------------------

def test_foreign_file_at_the_attestation_path_is_never_overwritten(made, tmp_path):
    foreign = tmp_path / "e.zip.intoto.json"
    foreign.write_text("my notes\n")
    rc, out, err = bundle(made / "run", "--out", tmp_path / "e.zip", "--skip-probes", "--replace")
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "exists and is not an mlx-vjpcheck attestation: not overwriting it" in err
    assert foreign.read_text() == "my notes\n" and not (tmp_path / "e.zip").exists()


def test_own_attestation_needs_replace(made, tmp_path):
    assert bundle(made / "run", "--out", tmp_path / "e.zip", "--skip-probes")[0] == 0
    (tmp_path / "e.zip").unlink()   # only the statement is left: still ours, still needs --replace
    rc, _, err = bundle(made / "run", "--out", tmp_path / "e.zip", "--skip-probes")
    assert rc == 2 and "already exists: pass --replace to replace it" in err
    assert bundle(made / "run", "--out", tmp_path / "e.zip", "--skip-probes", "--replace")[0] == 0
    assert fx.check(tmp_path / "e.zip")[0] == 0


def test_attestation_path_that_is_a_directory_refused(made, tmp_path):
    (tmp_path / "e.zip.intoto.json").mkdir()
    rc, _, err = bundle(made / "run", "--out", tmp_path / "e.zip", "--skip-probes")
    assert rc == 2 and "is a directory" in err and not (tmp_path / "e.zip").exists()


def test_both_or_neither(made, tmp_path, monkeypatch):
    real = os.replace
    fail_next = []

    def failing(src, dst):   # the statement's rename fails, once (the disk filled up)
        if str(dst).endswith(attest.SUFFIX) and fail_next:
            fail_next.pop()
            raise OSError(28, "No space left on device")
        return real(src, dst)
    monkeypatch.setattr(bundle_cli.os, "replace", failing)
    fail_next.append(True)
    with pytest.raises(OSError):
        bundle(made / "run", "--out", tmp_path / "e.zip", "--skip-probes")
    assert sorted(p.name for p in tmp_path.iterdir()) == []   # neither, and no temp files

    # replacing: the earlier pair is put back whole
    assert bundle(made / "run", "--out", tmp_path / "e.zip", "--skip-probes")[0] == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    monkeypatch.setattr(bundle_cli.os, "replace", failing)
    fail_next.append(True)
    with pytest.raises(OSError):
        bundle(made / "run", "--out", tmp_path / "e.zip", "--skip-probes", "--replace")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_bundler_version_claim_is_noted(tmp_path):
    # results without provenance (kind native): the version is the bundling command's, said so
    root = tmp_path / "n"
    files = {"results-patched.json": json.dumps({"records": [
        {"scenario": "s/a", "device": "cpu", "status": "pass"}]}).encode()}
    doc = attest.statement("n.zip", "0" * 64, files, __version__)
    [conf] = doc["predicate"]["configuration"]
    assert conf["annotations"] == {"harnessVersion": __version__, "versionFrom": "bundle"}
    assert doc["predicate"]["result"] == "PASSED" and not root.exists()
