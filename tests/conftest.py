"""Shared fixtures. MLX-version-dependent assertions use PINNED_MLX only."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench_script(name: str):
    """bench/<name>.py loaded as a module (bench/ is scripts, not a package)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
PINNED_MLX = "0.32.4"
TESTS = Path(__file__).resolve().parent


def mlx_version():
    try:
        import mlx.core as mx
    except ImportError:
        return None
    return mx.__version__


def needs_pinned_mlx():
    v = mlx_version()
    return pytest.mark.skipif(v != PINNED_MLX,
                              reason=f"asserts MLX {PINNED_MLX}'s known verdicts; installed: {v}")


def run_cli(*args, env=None, cwd=ROOT, timeout=300):
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli", *map(str, args)], cwd=cwd,
                          env=full_env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def fake_mlx_path(tmp_path):
    """A PYTHONPATH entry whose `mlx` package fails to import, as on a machine without MLX."""
    pkg = tmp_path / "nomlx" / "mlx"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise ImportError('mlx hidden for this test')\n")
    return str(pkg.parent)


@pytest.fixture(scope="session")
def full_run(tmp_path_factory):
    """One `mlx-vjpcheck run` of the whole catalog on CPU, shared by the tests that read it."""
    out = tmp_path_factory.mktemp("run") / "out"
    proc = run_cli("run", "--device", "cpu", "--out", out)
    return proc, out


# Under pytest-xdist (`--dist loadgroup`, pyproject.toml) a module- or session-scoped
# fixture is built once per worker that runs a test needing it. Keeping each test module
# on one worker builds every module fixture once; the tests that share the session's
# whole-catalog run (`full_run`) also share a worker, so the catalog runs once.
# tryfirst: xdist's worker reads the marks in its own pytest_collection_modifyitems, which
# would otherwise run before this one and see none.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        # only this suite's own tests (the scenario plugin's items, collected by a child
        # pytest of test_scenario_plugin.py, keep spreading over that child's workers)
        if item.get_closest_marker("xdist_group") or TESTS not in Path(str(item.path)).parents:
            continue
        group = "full_run" if "full_run" in getattr(item, "fixturenames", ()) else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))
