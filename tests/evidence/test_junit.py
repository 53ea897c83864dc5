"""JUnit XML: valid, one testcase per scenario and device, failures carry the worst check."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from conftest import run_cli

from mlx_vjpcheck.evidence import junit


def check(name, passed, err=None, tol=None, obs=None, exp=None):
    return {"name": name, "kind": "reference", "passed": passed, "reason": None if passed else
            "1 of 2 elements outside tolerance", "worst_error": err, "worst_tolerance": tol,
            "worst_index": [1], "observed": obs, "expected": exp}


RECORDS = [
    {"scenario": "s/ok", "device": "cpu", "status": "pass", "seconds": 0.5, "error": None,
     "checks": [check("grad:a", True, 0.0, 1e-5)]},
    {"scenario": "s/bad", "device": "cpu", "status": "fail", "seconds": 0.25, "error": None,
     "checks": [check("forward", True, 0.0, 1e-5),
                check("grad:b", False, 0.5, 1e-5, [2, 7], [2, 2]),
                check("grad:a", False, 5.0, 1e-5, [3, 5], [8, 0])]},
    {"scenario": "s/raised", "device": "gpu", "status": "error", "seconds": 0.1, "checks": [],
     "error": "ValueError: bad \x00 shape"},
    {"scenario": "s/died", "device": "cpu", "status": "crashed", "seconds": None, "checks": [],
     "error": "process died (signal SIGSEGV)"},
]


def cases(xml_text: str) -> dict:
    root = ET.fromstring(xml_text)
    return {(tc.get("classname"), tc.get("name")): tc for tc in root.iter("testcase")}


def test_one_testcase_per_record_with_outcome():
    text = junit.render(RECORDS, {"mlx": "0.32.4"})
    root = ET.fromstring(text)
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "1", "2")
    tcs = cases(text)
    assert set(tcs) == {("cpu", "s/ok"), ("cpu", "s/bad"), ("gpu", "s/raised"), ("cpu", "s/died")}
    assert list(tcs[("cpu", "s/ok")]) == []
    fail = tcs[("cpu", "s/bad")].find("failure")
    # The worst check by error/tolerance is grad:a (5 vs 0.5), not the first listed.
    assert fail.get("message").startswith("grad:a: 1 of 2 elements outside tolerance (worst error 5")
    assert "failed checks: grad:b, grad:a" in fail.text and "expected: [8, 0]" in fail.text
    assert tcs[("gpu", "s/raised")].find("error").get("message") == "ValueError: bad ? shape"
    assert tcs[("cpu", "s/died")].find("error").get("type") == "crashed"
    assert tcs[("cpu", "s/died")].find("failure") is None
    assert suite.find("properties/property").get("value") == "0.32.4"


def test_a_failing_record_never_renders_as_passing():
    # Negative control: flip the passing record's status and it must gain a failure element.
    bad = dict(RECORDS[0], status="fail", checks=[check("grad:a", False, 1.0, 1e-5)])
    tc = cases(junit.render([bad]))[("cpu", "s/ok")]
    assert tc.find("failure") is not None


def test_run_writes_junit_matching_results(tmp_path):
    out, xml_path = tmp_path / "run", tmp_path / "junit.xml"
    p = run_cli("run", "--device", "cpu", "--filter", "report_example", "--out", out,
                "--junitxml", xml_path)
    assert p.returncode in (0, 1), p.stderr
    data = json.loads((out / "results.json").read_text())
    tcs = cases(xml_path.read_text())
    assert len(tcs) == len(data["records"]) > 0
    for r in data["records"]:
        tc = tcs[(r["device"], r["scenario"])]
        tag = {"pass": None, "fail": "failure", "error": "error", "crashed": "error"}[r["status"]]
        assert [child.tag for child in tc] == ([tag] if tag else [])


def test_junitxml_pointing_at_a_directory_is_a_usage_error(tmp_path):
    p = run_cli("run", "--device", "cpu", "--filter", "report_example", "--out", tmp_path / "run",
                "--junitxml", tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [f"mlx-vjpcheck: --junitxml {tmp_path} is a directory"]
    assert not (tmp_path / "run").exists()
