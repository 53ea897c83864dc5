"""The pytest plugin: opt-in, and its outcomes are the runner's verdicts."""
from __future__ import annotations

import fnmatch
import importlib.util
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from conftest import ROOT, mlx_version, needs_pinned_mlx

from mlx_vjpcheck.cases import catalog

HAVE_XDIST = importlib.util.find_spec("xdist") is not None
PART = "gmm/*"   # the part of the catalog whose pytest outcomes are held to the runner's
needs_mlx = pytest.mark.skipif(mlx_version() is None, reason="mlx is not installed")


def run_pytest(*args, env=None):
    # A clean child: no outer xdist worker identity, no inherited opt-in switch.
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("PYTEST_") and k != "MLX_VJPCHECK_SCENARIOS"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "mlx_vjpcheck.pytest_plugin",
                           "-p", "no:cacheprovider", *map(str, args)],
                          cwd=ROOT, env=dict(base, **(env or {})), capture_output=True,
                          text=True, timeout=600)


def collected(proc) -> list:
    return [ln for ln in proc.stdout.splitlines() if "test_scenario[" in ln]


@needs_mlx
def test_plugin_adds_nothing_unless_asked():
    p = run_pytest("--co", "-q", "tests/evidence/test_junit.py")
    assert p.returncode == 0, p.stdout + p.stderr
    assert collected(p) == [] and "test_one_testcase_per_record_with_outcome" in p.stdout


@needs_mlx
def test_env_switch_collects_every_scenario_on_the_cpu():
    p = run_pytest("--co", "-q", "--scenario-device", "cpu", env={"MLX_VJPCHECK_SCENARIOS": "1"})
    assert p.returncode == 0, p.stdout + p.stderr
    names = [ln.split("[cpu:", 1)[1].rstrip("]") for ln in collected(p)]
    assert names == [s.name for s in catalog.catalog()]


def outcomes_from_pytest(xml_path) -> dict:
    out = {}
    for tc in ET.parse(xml_path).getroot().iter("testcase"):
        device, scenario = tc.get("name").split("[", 1)[1].rstrip("]").split(":", 1)
        bad = [c.tag for c in tc if c.tag in ("failure", "error", "skipped")]
        out[(device, scenario)] = "pass" if not bad else bad[0]
    return out


@needs_pinned_mlx()
def test_pytest_outcomes_equal_runner_verdicts(tmp_path, full_run):
    run, out = full_run    # `mlx-vjpcheck run --device cpu`, shared with other tests
    assert run.returncode == 1, run.stderr   # 0.32.4 carries the defect
    records = json.loads((out / "results.json").read_text())["records"]
    # gather_mm's part of the catalog has every outcome (pass, wrong values, VJPs that
    # raise, calls that kill the worker); the whole catalog would run it all a second time
    runner = {(r["device"], r["scenario"]): r["status"] == "pass" for r in records
              if fnmatch.fnmatchcase(r["scenario"], PART)}
    assert {r["status"] for r in records if fnmatch.fnmatchcase(r["scenario"], PART)} == {
        "pass", "fail", "error", "crashed"}

    xml_path = tmp_path / "pytest.xml"
    p = run_pytest("--scenarios", "--scenario-device", "cpu", "--scenario-filter", PART, "-q",
                   f"--junitxml={xml_path}", *(["-n", "2"] if HAVE_XDIST else []))
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    plugin = {k: v == "pass" for k, v in outcomes_from_pytest(xml_path).items()}

    assert plugin == runner
    assert 0 < sum(not ok for ok in runner.values()) < len(runner)


@needs_mlx
def test_bad_filter_is_one_usage_line():
    p = run_pytest("--scenarios", "--scenario-filter", "no-such-scenario", "-q")
    assert p.returncode == 4      # pytest's usage-error exit code
    assert p.stderr.strip().splitlines()[-1] == "ERROR: --scenario-filter matches no scenario"
