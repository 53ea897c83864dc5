"""The catalog as pytest tests; collected only through harness.pytest_plugin
(`pytest -p harness.pytest_plugin --scenarios`)."""
import pytest

from harness import pytest_plugin


def pytest_generate_tests(metafunc):
    if {"device", "scenario"} <= set(metafunc.fixturenames):
        cases = pytest_plugin.cases(metafunc.config)
        metafunc.parametrize(("device", "scenario"), cases,
                             ids=[f"{d}:{s.name}" for d, s in cases])


def test_scenario(device, scenario):
    rec = pytest_plugin.run_case(scenario, device)
    if rec["status"] != "pass":
        pytest.fail(pytest_plugin.failure_text(rec), pytrace=False)
