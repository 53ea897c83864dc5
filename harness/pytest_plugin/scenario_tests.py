"""The catalog as pytest tests; collected only through the plugin
(`pytest -p mlx_vjpcheck.pytest_plugin --scenarios`)."""
import importlib

import pytest


def _plugin(config):
    return getattr(config, "vjpcheck_plugin", None) or importlib.import_module(__package__)


def pytest_generate_tests(metafunc):
    if {"device", "scenario"} <= set(metafunc.fixturenames):
        cases = _plugin(metafunc.config).cases(metafunc.config)
        metafunc.parametrize(("device", "scenario"), cases,
                             ids=[f"{d}:{s.name}" for d, s in cases])


def test_scenario(device, scenario, request):
    plugin = _plugin(request.config)
    rec = plugin.run_case(scenario, device)
    if rec["status"] != "pass":
        pytest.fail(plugin.failure_text(rec), pytrace=False)
