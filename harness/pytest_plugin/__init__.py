"""Every catalog scenario as a pytest test, for scale-out with pytest-xdist.

    pytest -p mlx_vjpcheck.pytest_plugin --scenarios -n auto

Opt-in: without --scenarios (or MLX_VJPCHECK_SCENARIOS=1) the plugin adds
nothing, so loading it never changes the project's own test run. With it and
no paths given, only the scenario tests run; with paths, they run as well.
A test passes exactly when `mlx-vjpcheck run` gives that scenario and device
the status "pass": both call running.execute.run; here it runs in-process,
so a crashing MLX takes down the xdist worker, which xdist reports as a failure.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ENV_VAR = "MLX_VJPCHECK_SCENARIOS"
MODULE = Path(__file__).with_name("scenario_tests.py")


def pytest_addoption(parser):
    g = parser.getgroup("mlx-vjpcheck")
    g.addoption("--scenarios", action="store_true",
                help=f"collect every catalog scenario as a test (or set {ENV_VAR}=1)")
    g.addoption("--scenario-filter", metavar="PATTERN",
                help="glob or substring of scenario names (as `mlx-vjpcheck run --filter`)")
    g.addoption("--scenario-device", choices=("cpu", "gpu", "all"),
                help="default: $MLX_VJPCHECK_DEVICE or all available")


def enabled(config) -> bool:
    return bool(config.getoption("scenarios")) or os.environ.get(ENV_VAR) == "1"


CASES = pytest.StashKey[list]()


def pytest_configure(config):
    # The collected module finds this plugin here (it may be importable under a
    # second name from a checkout, with a stash key of its own).
    config.vjpcheck_plugin = sys.modules[__name__]
    if not enabled(config):
        return
    # Resolved up front so a bad filter or device is one usage line, not a collection error.
    config.stash[CASES] = _resolve(config)
    # Workers under xdist get the original arguments and redo this, identically.
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args[:] = [str(MODULE)]
    elif str(MODULE) not in config.args:
        config.args.append(str(MODULE))


def cases(config) -> list:
    """[(device, scenario)] in the runner's order: device-major, catalog order."""
    if CASES not in config.stash:   # module named explicitly without --scenarios
        config.stash[CASES] = _resolve(config)
    return config.stash[CASES]


def _resolve(config) -> list:
    from ..cases import catalog, selection
    from ..running import devices
    chosen = selection.select(catalog.catalog(), config.getoption("scenario_filter"))
    if not chosen:
        raise pytest.UsageError("--scenario-filter matches no scenario")
    try:
        devs = devices.resolve(config.getoption("scenario_device"))
    except ImportError:
        raise pytest.UsageError("mlx is not installed: pip install 'mlx[cpu]' (Linux) or mlx (macOS)")
    except devices.DeviceError as e:
        raise pytest.UsageError(str(e))
    return [(d, s) for d in devs for s in chosen]


def run_case(scenario, device) -> dict:
    from ..running import devices, execute, runner
    if scenario.kills_process:   # a known crash would take the pytest process (or xdist worker) with it
        return runner.run_device([scenario], device)[0]
    devices.select(device)
    return execute.run(scenario, device)


def failure_text(rec: dict) -> str:
    from ..evidence import junit
    return f"{rec['status']}: " + junit.describe(rec)[1]
