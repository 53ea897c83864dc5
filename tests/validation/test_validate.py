"""validate_artifacts.py: clean evidence passes, bad input exits 2, no mlx on the path,
and each record-level rule rejects its negative control."""
import copy
import os
import shutil
import sys
from pathlib import Path

import pytest

from conftest import ROOT
import helpers.evidence_fixtures as fx
from mlx_vjpcheck.core import checks
from mlx_vjpcheck.validation import records as validate_records
from mlx_vjpcheck.validation.groups import Group


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    root = tmp_path_factory.mktemp("evidence")
    return {"run": fx.run_dir(root / "run"), "native": fx.native_dir(root / "native"),
            "fuzz": fx.fuzz_dir(root / "fuzz"), "versions": fx.versions_dir(root / "versions")}


@pytest.mark.parametrize("kind", ["run", "native", "fuzz", "versions"])
def test_clean_evidence_validates(template, kind):
    rc, out, err = fx.check(template[kind])
    assert rc == 0, out + err
    lines = out.splitlines()
    assert lines[0].startswith("manifest: ") and lines[0].endswith(" files ok")
    (tally,) = [ln for ln in lines if ln.endswith("checks passed")]
    ok, total = tally.split()[0].split("/")
    assert ok == total and int(total) > 0
    verdict_lines = lines[lines.index(tally) + 1:]   # what the evidence shows, after the tally
    heads = [ln.split(":")[0] for ln in verdict_lines if not ln.startswith("  ")]
    assert heads and all(h in ("evidence", "gate", "fuzz", "versions", "trust") for h in heads), verdict_lines
    assert verdict_lines[-1].startswith("trust: consistent") and "self-attested" in verdict_lines[-1]


@pytest.mark.parametrize("kind", ["run", "native", "fuzz", "versions"])
def test_checkers_share_each_parsed_file_and_change_none(template, kind):
    """Each JSON file is parsed once (evidence/strict.Files) and shared by every checker:
    after a whole validation, each shared value still equals a fresh parse."""
    from mlx_vjpcheck.core import jsonio
    from mlx_vjpcheck.evidence.load import load
    from mlx_vjpcheck.validation import evidence
    ev = load(template[kind])
    groups, _ = evidence.validate_all(ev)
    assert evidence.report(groups)[1]
    assert ev.files.docs and set(ev.files.docs) == {n for n in ev.files if n.endswith(".json")}
    for name, value in ev.files.docs.items():
        assert jsonio.dumps(value, sort_keys=True) == jsonio.dumps(jsonio.loads(ev.files[name]), sort_keys=True)


def test_the_shared_parse_negative_control(template):
    """A checker that modified what it was given would be seen by the next one."""
    from mlx_vjpcheck.evidence.load import load
    ev = load(template["run"])
    ev.files.doc("results.json")["records"].append(3)
    assert ev.files.doc("results.json")["records"][-1] == 3


def test_run_output_names_each_group(template):
    out = fx.check(template["run"])[1]
    assert "results.json: recomputed 6 records, " in out
    assert "environment.json: " in out


def test_no_mlx_import_in_process(template):
    # A fresh interpreter: other test modules in this one may have imported mlx.
    code = ("import sys; from harness.cli.validate import script; rc = script([sys.argv[1]]); "
            "assert 'mlx' not in sys.modules, 'mlx imported'; sys.exit(rc)")
    import subprocess
    p = subprocess.run([sys.executable, "-c", code, str(template["run"])], capture_output=True,
                       text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_validates_with_mlx_unimportable(template, tmp_path):
    fake = tmp_path / "shadow" / "mlx"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('mlx is not available here')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(fake.parent),
                                                                     os.environ.get("PYTHONPATH")])))
    for kind in ("run", "native", "fuzz", "versions"):
        rc, out, err = fx.validate(template[kind], env=env)
        assert rc == 0, out + err


def _bad_input_cases(tmp_path, template):
    plain = tmp_path / "plain.txt"
    plain.write_text("not evidence\n")
    fake_zip = tmp_path / "fake.zip"
    fake_zip.write_bytes(b"PK\x03\x04 truncated")
    no_manifest = Path(shutil.copytree(template["run"], tmp_path / "nomanifest"))
    (no_manifest / "MANIFEST.sha256").unlink()
    unknown = tmp_path / "unknown"
    unknown.mkdir()
    (unknown / "notes.txt").write_text("hello\n")
    fx.rewrite_manifest(unknown)
    return {"missing": (tmp_path / "nope", "no such file"), "plain": (plain, "neither a directory nor a zip"),
            "fake_zip": (fake_zip, "neither a directory nor a zip"),
            "no_manifest": (no_manifest, "no MANIFEST.sha256"), "unknown": (unknown, "unknown layout")}


def test_bad_input_exits_2_with_one_line(tmp_path, template):
    for name, (path, reason) in _bad_input_cases(tmp_path, template).items():
        rc, out, err = fx.check(path)
        assert rc == 2, (name, out, err)
        assert len(err.strip().splitlines()) == 1 and reason in err and not out, (name, err)


def test_bad_input_from_the_command_line(tmp_path):
    rc, out, err = fx.validate(tmp_path / "nope")
    assert rc == 2 and err.strip() == f"validate_artifacts.py: {tmp_path / 'nope'}: no such file or directory"


# --- record rules, each with a negative control -------------------------------------------

def _failing_record(data):
    return next(r for r in data["records"] if r["status"] == "fail")


def _record_failures(data, rec):
    g = Group("t")
    validate_records.check_record(g, "rec", data["scenarios"][rec["scenario"]], rec,
                                  validate_records.Recomputer())
    return g


def test_untouched_records_pass():
    data = fx.results_data()
    for rec in data["records"]:
        g = _record_failures(data, rec)
        assert g.passed, g.failures


def _tamper_cases():
    def expected(rec):
        rec["checks"][1]["expected"][0][0][0] += 0.5

    def widen(rec):   # a tolerance wide enough to pass the defect
        for c in rec["checks"]:
            c["atol"], c["passed"], c["reason"] = 100.0, True, "ok"
        rec["status"] = "pass"

    def flip_observed(rec):   # observed now equals the reference, verdict left as fail
        c = next(c for c in rec["checks"] if c["name"] == "grad:a")
        c["observed"] = copy.deepcopy(c["expected"])

    def claim_pass(rec):
        rec["status"] = "pass"

    def drop_failing_checks(rec):
        rec["checks"] = [c for c in rec["checks"] if c["passed"]]
        rec["status"] = "pass"

    def extra_check(rec):
        rec["checks"].append(dict(rec["checks"][0], name="grad:zz"))

    def fd_values(rec):   # finite differences forged to agree with the wrong gradient
        c = next(c for c in rec["checks"] if c["name"] == "fd:a")
        c["expected"] = copy.deepcopy(c["observed"])
        c["passed"], c["reason"] = True, "ok"

    def tags(rec):
        rec["expects_defect"] = False

    def worst(rec):   # the nearest miss reported as nearer than it was
        c = next(c for c in rec["checks"] if c["name"] == "grad:a")
        c["worst_error"] = c["worst_error"] / 2

    def shape(rec):
        rec["checks"][0]["expected_shape"] = [1]

    def seconds(rec):
        rec["seconds"] = -1.0

    return {"expected": (expected, "recorded expected values differ"),
            "tolerance": (widen, "differs from the table"),
            "observed": (flip_observed, "recorded passed=False but recomputation gives True"),
            "status": (claim_pass, "recorded status 'pass' but the checks give 'fail'"),
            "dropped": (drop_failing_checks, "checks missing for"),
            "extra": (extra_check, "unexpected checks"),
            "fd": (fd_values, "finite differences disagree with the reference gradient"),
            "tags": (tags, "expects_defect does not follow"),
            "worst": (worst, "recorded worst element"),
            "shape": (shape, "recorded shapes do not match the values"),
            "seconds": (seconds, "seconds -1.0 is not a duration")}


@pytest.mark.parametrize("case", sorted(_tamper_cases()))
def test_record_tamper_rejected(case):
    fn, reason = _tamper_cases()[case]
    data = fx.results_data()
    rec = _failing_record(data)
    fn(rec)
    g = _record_failures(data, rec)
    assert not g.passed
    assert any(reason in f for f in g.failures), g.failures


def test_error_record_keeps_its_checks_but_cannot_claim_pass():
    data = fx.results_data()
    rec = next(r for r in data["records"] if r["status"] == "error")
    good = next(r for r in data["records"] if r["status"] == "pass")
    scen = data["scenarios"][good["scenario"]]
    rec = dict(rec, scenario=good["scenario"], checks=copy.deepcopy(good["checks"][:1]),
               expects_defect=good["expects_defect"], defect_tags=good["defect_tags"])
    g = Group("t")   # a forward that worked, then the VJP raised: a fact, and still an error
    validate_records.check_record(g, "rec", scen, rec, validate_records.Recomputer())
    assert g.passed, g.failures
    rec["status"] = "pass"
    g = Group("t")
    validate_records.check_record(g, "rec", scen, rec, validate_records.Recomputer())
    assert any("recorded status 'pass' but the checks give 'error'" in f for f in g.failures), g.failures


@pytest.mark.parametrize("field,value,reason", [("params", "x", "params or objective"),
                                                ("objective", "hessian", "params or objective"),
                                                ("fd_step", -1, "fd_step -1 is not a positive number"),
                                                ("op", "no_such_op", "unknown op 'no_such_op'")])
def test_malformed_scenario_rejected(field, value, reason):
    data = fx.results_data()
    rec = _failing_record(data)
    data["scenarios"][rec["scenario"]][field] = value
    g = _record_failures(data, rec)
    assert any("scenario cannot be recomputed" in f and reason in f for f in g.failures), g.failures


def test_crashed_record_without_error_rejected():
    data = fx.results_data()
    rec = next(r for r in data["records"] if r["status"] == "crashed")
    rec["error"] = None
    g = _record_failures(data, rec)
    assert any("status crashed without an error message" in f for f in g.failures), g.failures


def test_tolerance_table_is_what_records_are_held_to():
    data = fx.results_data()
    rec = _failing_record(data)
    assert all((c["atol"], c["rtol"]) == checks.tolerance("float32", c["kind"]) for c in rec["checks"])


def test_summary_and_duplicates_rejected():
    data = fx.results_data()
    data["summary"]["fail"] += 1
    data["records"].append(copy.deepcopy(data["records"][0]))
    g = Group("t")
    validate_records.check_results(g, "results.json", data, validate_records.Recomputer())
    assert any("duplicate record" in f for f in g.failures)
    assert any("summary" in f and "does not match the records" in f for f in g.failures)


def test_scenario_shared_by_records_is_computed_once(monkeypatch):
    data = fx.results_data()
    calls = []
    real = validate_records.expected.expected
    monkeypatch.setattr(validate_records.expected, "expected", lambda s: calls.append(s.name) or real(s))
    extra = copy.deepcopy(data["records"][0])
    extra["device"] = "other"
    data["records"].append(extra)
    data["summary"] = validate_records.results.summary(data["records"])
    g = Group("t")
    validate_records.check_results(g, "results.json", data, validate_records.Recomputer())
    assert g.passed, g.failures
    assert len(calls) == len(data["scenarios"]) and len(set(calls)) == len(calls)


def _mutations(data, rng, n):
    """Paths to random leaves, each replaced by a value of another JSON type."""
    leaves = []

    def walk(x, path):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, path + [k])
        elif isinstance(x, list) and x:
            for i, v in enumerate(x[:3]):
                walk(v, path + [i])
        else:
            leaves.append(path)
    walk(data, [])
    junk = [None, "x", -1, 1e308, [], {}, [[1.0]], True, float("nan")]
    for k in rng.choice(len(leaves), size=n, replace=False):
        yield leaves[k], junk[rng.integers(len(junk))]


def test_malformed_results_never_crash_the_validator():
    import numpy as np
    rng = np.random.default_rng(0)
    base = fx.results_data()
    rejected = 0
    for path, value in _mutations(base, rng, 150):
        data = copy.deepcopy(base)
        target = data
        for key in path[:-1]:
            target = target[key]
        if target[path[-1]] == value:
            continue
        target[path[-1]] = value
        g = Group("t")
        validate_records.check_results(g, "results.json", data, validate_records.Recomputer())
        rejected += not g.passed
    assert rejected > 100   # most edits must be caught (some, like 'seconds', carry no claim)
