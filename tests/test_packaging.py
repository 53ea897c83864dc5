"""A non-editable install of the built wheel works: every subcommand finds its
modules and its data (probes, the C++ suite's sources, the patch)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import shutil
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT


def _parent_site_dirs() -> list:
    """Where the interpreter running these tests finds its packages (a user's venv, or
    the system's): the fixture venv sees those, never the base interpreter's."""
    return [p for p in dict.fromkeys(sys.path) if p.rstrip("/").endswith(("site-packages", "dist-packages"))
            and os.path.isdir(p)]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh venv with the wheel in it, seeing the dependencies of the interpreter
    that runs the tests (a .pth of plain paths: their own .pth hooks, such as the
    checkout's editable install, are not run, so the wheel is what gets imported)."""
    tmp = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"),
                            str(ROOT)], capture_output=True, text=True, timeout=600)
    if build.returncode != 0:
        pytest.fail(f"wheel build failed: {build.stderr[-2000:]}")
    (wheel,) = (tmp / "dist").glob("mlx_vjpcheck-*.whl")
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(tmp / "venv")
    py = tmp / "venv" / "bin" / "python"
    site = next((tmp / "venv" / "lib").glob("python3*/site-packages"))
    (site / "_parent_packages.pth").write_text("".join(p + "\n" for p in _parent_site_dirs()))
    # --target only adds files: pip never uninstalls anything.
    inst = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                           "--target", str(site), str(wheel)], capture_output=True, text=True, timeout=300)
    assert inst.returncode == 0, inst.stderr
    work = tmp / "work"   # not the checkout: nothing may come from there
    work.mkdir()
    return py, work


def _run(installed, *args, timeout=300):
    py, work = installed
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    return subprocess.run([str(py), "-m", "mlx_vjpcheck", *map(str, args)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_the_installed_package_is_the_wheel_not_the_checkout(installed):
    py, work = installed
    p = subprocess.run([str(py), "-c", "import mlx_vjpcheck, pathlib; from mlx_vjpcheck.core import resources; "
                        "print(mlx_vjpcheck.__file__); print(resources.probes_dir()); print(resources.native_dir())"],
                       cwd=work, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    pkg, probes, native = p.stdout.split()
    venv_dir = str(py.parent.parent)
    assert pkg.startswith(venv_dir) and probes.startswith(venv_dir) and native.startswith(venv_dir)
    assert os.path.isfile(os.path.join(native, "CMakeLists.txt"))
    assert os.path.isfile(os.path.join(probes, "probe.py"))


def test_help_lists_every_subcommand(installed):
    p = _run(installed, "--help")
    assert p.returncode == 0
    for sub in ("run", "catalog", "fuzz", "versions", "native", "bundle"):
        assert sub in p.stdout


def test_filtered_run_and_bundle_from_the_wheel(installed):
    py, work = installed
    p = _run(installed, "run", "--device", "cpu", "--filter", "report_example/joint", "--out", work / "run")
    assert p.returncode == 1, p.stderr          # the defect is present on the sorted path
    data = json.loads((work / "run" / "results.json").read_text())
    assert data["summary"]["total"] == 6
    b = _run(installed, "bundle", work / "run", "--out", work / "run.zip")
    assert b.returncode == 0, b.stdout + b.stderr
    with zipfile.ZipFile(work / "run.zip") as zf:
        assert "probe-outputs/probe.cpu.txt" in zf.namelist()   # probes shipped as package data


def test_the_wheel_ships_the_patch_series(installed):
    """handoff copies patches and regression tests from the package: the wheel carries
    every file of patch/ that the series and the register name."""
    py, work = installed
    p = subprocess.run([str(py), "-c", "from mlx_vjpcheck.core import resources; print(resources.patch_dir())"],
                       cwd=work, capture_output=True, text=True)
    shipped = p.stdout.strip()
    assert shipped.startswith(str(py.parent.parent)), shipped
    want = sorted(str(f.relative_to(ROOT / "patch")) for f in (ROOT / "patch").rglob("*")
                  if f.is_file() and "__pycache__" not in f.parts)
    got = sorted(str(f.relative_to(shipped)) for f in Path(shipped).rglob("*")
                 if f.is_file() and f.name != "__init__.py" and "__pycache__" not in f.parts)
    assert got == want


def test_handoff_from_the_wheel(installed):
    py, work = installed
    p = _run(installed, "handoff", "hadamard_transform__untransposed_factor", "--out", work / "handoff")
    assert p.returncode == 0, p.stderr
    d = work / "handoff" / "hadamard_transform__untransposed_factor"
    name = "02-hadamard-vjp-transpose.diff"
    assert (d / name).read_bytes() == (ROOT / "patch" / name).read_bytes()
    assert (d / "test_hadamard_transform_untransposed_factor.py").is_file()
    v = _run(installed, "validate", work / "handoff")
    assert v.returncode == 0, v.stdout[-2000:] + v.stderr


def test_handoff_of_a_sweep_class_from_the_wheel(installed):
    """A sweep class's reproducer (probes/sweep/) and register entry are package data (and,
    for a fixed one, its patch and test, as a catalog finding's)."""
    py, work = installed
    i = "expand_dims__vmap_multi_axis"
    p = _run(installed, "handoff", i, "--out", work / "handoff-sweep")
    assert p.returncode == 0, p.stderr
    d = work / "handoff-sweep" / i
    assert (d / f"{i}.py").read_bytes() == (ROOT / "probes" / "sweep" / f"{i}.py").read_bytes()
    entry = json.loads((work / "handoff-sweep" / "handoff.json").read_text())["findings"][0]
    tests = [f for role, f in entry["files"].items() if role == "regression_test"]
    assert "mlx_tests.MLXTestCase" in (d / "ISSUE.md").read_text() + "".join(
        (work / "handoff-sweep" / f).read_text() for f in tests)
    v = _run(installed, "validate", work / "handoff-sweep")
    assert v.returncode == 0, v.stdout[-2000:] + v.stderr


def test_three_second_fuzz_from_the_wheel(installed):
    py, work = installed
    p = _run(installed, "fuzz", "--time", "3", "--seed", "0", "--db", "none", "--no-progress",
             "--out", work / "fuzz")
    assert p.returncode in (0, 1), p.stderr
    assert "Traceback" not in p.stderr
    assert (work / "fuzz" / "findings.json").is_file()


@pytest.mark.skipif(not shutil.which("cmake"), reason="needs cmake (.ci/run installs it)")
def test_the_packaged_cpp_suite_configures(installed, tmp_path):
    """`mlx-vjpcheck native` builds from the wheel's copy of native/: it must configure."""
    py, work = installed
    src = subprocess.run([str(py), "-c", "from mlx_vjpcheck.native import suite; print(suite.NATIVE_DIR)"],
                         cwd=work, capture_output=True, text=True).stdout.strip()
    cmake_dir = subprocess.run([str(py), "-m", "mlx", "--cmake-dir"], capture_output=True, text=True).stdout.strip()
    p = subprocess.run(["cmake", "-S", src, "-B", str(tmp_path / "b"), f"-DMLX_DIR={cmake_dir}/share/cmake/MLX",
                        f"-DPython_EXECUTABLE={py}"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
