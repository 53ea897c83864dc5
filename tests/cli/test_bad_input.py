"""Every entry point, given bad input: the README's exit status, exactly one line
on stderr, no traceback, and nothing left behind (the listing of the working
folder is the same before and after). Plus interrupts: exit 130, one line."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import helpers.evidence_fixtures as fx
from conftest import ROOT


def _listing(root: Path) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _cli(*args):
    return [sys.executable, "-m", "mlx_vjpcheck.cli", *map(str, args)]


def _script(name, *args):
    return [sys.executable, str(ROOT / name), *map(str, args)]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A working folder with one of everything a bad --out could point at, built once."""
    root = tmp_path_factory.mktemp("place")
    (root / "file.txt").write_text("notes\n")
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("mine\n")
    fx.run_dir(root / "runev")
    fx.fuzz_dir(root / "fuzzev")
    deep = fx.run_dir(root / "deepev")   # evidence whose results.json is 1,000 brackets deep
    (deep / "results.json").write_text("[" * 1000 + "]" * 1000)
    fx.rewrite_manifest(deep)
    return root


@pytest.fixture
def place(template, tmp_path):
    """A fresh copy of the template for each case (a case that wrongly writes cannot leak)."""
    shutil.copytree(template, tmp_path / "place")
    return tmp_path / "place"


def _one_line_exit(argv, place, code=2, env=None):
    before = _listing(place)
    p = subprocess.run(argv, cwd=place, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, **(env or {})))
    lines = p.stderr.strip().splitlines()
    assert p.returncode == code, (argv, p.returncode, p.stderr, p.stdout[-500:])
    assert len(lines) == 1, (argv, p.stderr)
    assert "Traceback" not in p.stderr + p.stdout
    assert _listing(place) == before, (argv, set(_listing(place)) ^ set(before))
    return lines[0]


RUN = [
    ("--out", "file.txt"),
    ("--out", "file.txt/sub"),
    ("--out", "notes"),
    ("--out", "fuzzev"),
    ("--out", "fuzzev", "--replace"),
    ("--out", "runev"),
    ("--out", "/proc/1/vjpcheck-out"),
    ("--out", "o", "--junitxml", "notes"),
    ("--out", "o", "--junitxml", "file.txt"),
    ("--out", "o", "--junitxml", "file.txt/j.xml"),
    ("--out", "o", "--junitxml", "/proc/1/j.xml"),
    ("--out", "o", "--junitxml", "nofolder/j.xml"),   # a file option creates no folders
    ("--out", "o", "--filter", "no-such-scenario"),
    ("--out", "o", "--device", "tpu"),
    ("--out", "o", "--bogus"),
]


@pytest.mark.parametrize("args", RUN, ids=[" ".join(a) for a in RUN])
def test_run(place, args):
    _one_line_exit(_cli("run", "--device", "cpu", *args) if "--device" not in args else _cli("run", *args),
                   place)


FUZZ = [
    ("--time", "-1"), ("--time", "0"), ("--time", "abc"), ("--shards", "0"), ("--max-examples", "0"),
    ("--ops", "no_such_op"), ("--db", "file.txt"), ("--out", "file.txt/x"), ("--out", "runev"),
    ("--out", "runev", "--replace"), ("--out", "fuzzev"), ("--out", "notes"),
    ("--ops", ""), ("--ops", " , "),   # an empty list names no op (it never meant "all")
]


@pytest.mark.parametrize("args", FUZZ, ids=[" ".join(a) for a in FUZZ])
def test_fuzz(place, args):
    argv = ["fuzz", "--time", "5", "--no-progress"] + (["--out", "o"] if "--out" not in args else [])
    _one_line_exit(_cli(*argv, *args), place)


VERSIONS = [
    ("--timeout", "-1"), ("--jobs", "0"), ("--from", "latest"), ("--cache-dir", "file.txt"),
    ("--out", "file.txt/x"), ("--out", "runev"), ("--probes", "missing.py"),
]


@pytest.mark.parametrize("args", VERSIONS, ids=[" ".join(a) for a in VERSIONS])
def test_versions(place, args):
    argv = ["versions", "--only", "0.32.4"] + (["--out", "o"] if "--out" not in args else [])
    _one_line_exit(_cli(*argv, *args), place, env={"MLX_VJPCHECK_CACHE": str(place / "cache")})


def test_versions_gpu_without_gpu(place):
    import mlx.core as mx
    if mx.is_available(mx.gpu):
        pytest.skip("this machine has a GPU")
    _one_line_exit(_cli("versions", "--device", "gpu", "--out", "o"), place)


BUNDLE = [("missing",), ("runev", "--out", "file.txt"), ("runev", "--out", "notes"),
          ("runev", "--out", "runev/b.zip"), ("notes",), ("file.txt",)]


@pytest.mark.parametrize("args", BUNDLE, ids=[" ".join(a) for a in BUNDLE])
def test_bundle(place, args):
    _one_line_exit(_cli("bundle", "--skip-probes", *args), place)


def test_bundle_refuses_to_replace_its_own_bundle_without_the_flag(place):
    p = subprocess.run(_cli("bundle", "--skip-probes", "runev", "--out", "b.zip"), cwd=place,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    line = _one_line_exit(_cli("bundle", "--skip-probes", "runev", "--out", "b.zip"), place)
    assert "--replace" in line
    p = subprocess.run(_cli("bundle", "--skip-probes", "runev", "--out", "b.zip", "--replace"), cwd=place,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


CATALOG = [("--filter", "no-such"), ("--out", "file.txt"), ("--out", "notes"), ("--out", "file.txt/c.json"),
           ("--out", "nofolder/c.json")]


@pytest.mark.parametrize("args", CATALOG, ids=[" ".join(a) for a in CATALOG])
def test_catalog(place, args):
    _one_line_exit(_cli("catalog", *args), place)


NATIVE = [("--filter", "no-such-scenario"), ("--out", "file.txt"), ("--out", "runev"), ("--build-dir", "file.txt")]


@pytest.mark.parametrize("args", NATIVE, ids=[" ".join(a) for a in NATIVE])
def test_native(place, args):
    _one_line_exit(_cli("native", *args), place)


COVERAGE = [("--out", "/proc/cov.md"), ("--out", "nofolder/cov.md"), ("--out", "file.txt"), ("--out", "notes")]


@pytest.mark.parametrize("args", COVERAGE, ids=[" ".join(a) for a in COVERAGE])
def test_coverage(place, args):
    _one_line_exit(_cli("coverage", *args), place)


def test_fuzz_db_through_dotdot_creates_no_folder_on_the_way(place):
    p = subprocess.run(_cli("fuzz", "--time", "1", "--ops", "abs", "--no-progress", "--db", "q/../dbx",
                            "--out", "o"), cwd=place, capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    assert not (place / "q").exists()


def test_a_handoff_folder_is_no_test_result_to_attest(place):
    p = subprocess.run(_cli("handoff", "full__grad_v_times_v", "--out", "h"), cwd=place, capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:   # the register id may be renamed: any one entry will do
        p = subprocess.run(_cli("handoff", "all", "--out", "h"), cwd=place, capture_output=True, text=True,
                           timeout=300)
    assert p.returncode == 0, p.stderr
    p = subprocess.run(_cli("bundle", "--skip-probes", "h"), cwd=place, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "no attestation" in p.stdout and "no test result to attest" in p.stdout
    assert (place / "h.zip").is_file() and not list(place.glob("h.zip*.json")), sorted(place.iterdir())


def test_the_default_out_folder_is_replaced_a_named_one_needs_the_flag(tmp_path):
    """The README's first line works twice: the default folder is the tool's own."""
    argv = _cli("run", "--device", "cpu", "--filter", "gmm/report_example/joint/unsorted")
    for _ in range(2):
        p = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
    assert (tmp_path / "artifacts" / "run" / "results.json").is_file()
    p = subprocess.run(argv + ["--out", "artifacts/run"], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 2 and "--replace" in p.stderr


VALIDATE = [(), ("missing",), ("file.txt",), ("notes",), ("--bogus",)]


@pytest.mark.parametrize("args", VALIDATE, ids=[" ".join(a) or "none" for a in VALIDATE])
def test_validate_artifacts(place, args):
    _one_line_exit(_script("validate_artifacts.py", *args), place)


@pytest.mark.parametrize("args", VALIDATE, ids=[" ".join(a) or "none" for a in VALIDATE])
def test_validate(place, args):
    _one_line_exit(_cli("validate", *args), place)


REPLAY = [(), ("missing",), ("file.txt",), ("notes",), ("deepev",), ("--bogus",), ("runev", "--sample", "-1"),
          ("runev", "--sample", "some")]


@pytest.mark.parametrize("args", REPLAY, ids=[" ".join(a) or "none" for a in REPLAY])
def test_replay(place, args):
    _one_line_exit(_cli("replay", *args), place)


GRADCHECK_OUT = [("notes",), ("file.txt",), ("runev",), ("runev", "--replace")]


@pytest.mark.parametrize("out", GRADCHECK_OUT, ids=[" ".join(a) for a in GRADCHECK_OUT])
def test_gradcheck_out_refuses_what_is_not_its_own(place, out):
    """--out is checked before the function is imported or anything is written."""
    pytest.importorskip("mlx.core")
    (place / "user_gcout.py").write_text("import mlx.core as mx\ndef f(x):\n    return mx.sin(x)\n"
                                         "def inputs():\n    return (mx.array([1.0]),)\n")
    _one_line_exit(_cli("gradcheck", "user_gcout:f", "--out", *out), place)


def test_hostile_json_is_a_failed_check_not_a_crash(place):
    """Validation of evidence 1,000 brackets deep: exit 1, the reason in one line, no traceback;
    bundle refuses it the same way and writes nothing."""
    for argv in (_cli("validate", "deepev"), _script("validate_artifacts.py", "deepev"),
                 _cli("bundle", "--skip-probes", "deepev", "--out", "deep.zip")):
        p = subprocess.run(argv, cwd=place, capture_output=True, text=True, timeout=300)
        assert p.returncode == 1 and "JSON nested 1000 levels deep (limit 64)" in p.stdout, p.stdout + p.stderr
        assert "Traceback" not in p.stdout + p.stderr
    assert not (place / "deep.zip").exists()


def test_a_folder_1200_levels_deep_is_refused_in_one_line(place):
    here = place / "towerev"
    shutil.copytree(place / "runev", here)
    d = here
    for _ in range(40):   # deeper than the limit (32) is enough; the walk never recurses
        d = d / "d"
    d.mkdir(parents=True)
    p = subprocess.run(_cli("validate", "towerev"), cwd=place, capture_output=True, text=True, timeout=300)
    assert p.returncode == 1 and "levels deep" in p.stdout and "Traceback" not in p.stdout + p.stderr, p.stdout


BUILD = [(), ("--mlx-source", "notes", "--mlx-build", "notes"),
         ("--mlx-source", "missing", "--mlx-build", "missing"), ("--bogus",)]


@pytest.mark.parametrize("args", BUILD, ids=[" ".join(a) or "none" for a in BUILD])
def test_build_and_test(place, args):
    _one_line_exit(_script("build_and_test.py", *args), place)


@pytest.mark.parametrize("args", [("--device", "tpu"), ("--bogus",)])
def test_probes(place, args):
    for probe in sorted((ROOT / "probes").glob("probe*.py")):
        _one_line_exit([sys.executable, str(probe), *args], place)


def test_help_shows_the_defaults():
    for sub, needle in (("run", "default: artifacts/run"), ("native", "default: artifacts/native-wheel"),
                        ("versions", "default: 300"), ("fuzz", "default: 60"), ("catalog", "glob")):
        p = subprocess.run(_cli(sub, "--help"), capture_output=True, text=True)
        assert p.returncode == 0 and needle in " ".join(p.stdout.split()), (sub, p.stdout)
    p = subprocess.run(_cli("--version"), capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("mlx-vjpcheck ")


# --- interrupts ----------------------------------------------------------------------------

def _default_sigint():
    # The command starts as from a terminal, Ctrl-C not ignored. In the full suite in a
    # fresh venv the run twice finished as if the signal never came (exit 1), as a process
    # that inherits an ignored SIGINT does; that cause is suspected, not confirmed.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt(argv, cwd, after_s):
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_default_sigint)
    time.sleep(after_s)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    return p.returncode, out, err


# The first ~0.1 s are the interpreter's own start-up (site), before any of our code runs.
@pytest.mark.parametrize("after_s", [1.0, 3.0])
def test_ctrl_c_during_run_is_one_line_and_130(tmp_path, after_s):
    before = _listing(tmp_path)
    rc, out, err = _interrupt(_cli("run", "--device", "cpu", "--out", "o"), tmp_path, after_s)
    assert rc == 130, (err, out[-1500:])   # (stdout too: a fresh venv once saw exit 1 with no stderr)
    assert err.strip().splitlines()[-1:] == ["mlx-vjpcheck: interrupted"]
    assert "Traceback" not in err
    assert _listing(tmp_path) == before


def test_interrupted_fuzz_keeps_its_findings_and_validates(tmp_path):
    rc, out, err = _interrupt(_cli("fuzz", "--time", "120", "--seed", "0", "--db", "none", "--no-progress",
                                   "--ops", "gather_mm", "--out", "fz"), tmp_path, 25)
    assert rc == 130, err
    assert "Traceback" not in err
    campaign = json.loads((tmp_path / "fz" / "campaign.json").read_text())
    assert campaign["interrupted"] is True
    found = json.loads((tmp_path / "fz" / "findings.json").read_text())
    assert found, "gather_mm's sorted-path defects are found within seconds"
    v = subprocess.run(_script("validate_artifacts.py", tmp_path / "fz"), capture_output=True, text=True)
    assert v.returncode == 0, v.stdout[-2000:]


def test_native_without_cmake_is_one_line(place):
    """cmake missing: one line naming what to install, before anything is built or written."""
    env = {"PATH": os.path.dirname(sys.executable)}
    line = _one_line_exit(_cli("native", "--filter", "report_example/joint/unsorted", "--out", "o"), place,
                          env=env)
    assert "cmake is not installed" in line


def test_a_missing_dependency_is_named_with_its_install_command():
    from mlx_vjpcheck.cli import options
    with pytest.raises(options.UsageError) as e:
        options.require("numpy", "no_such_module_vjpcheck", what="build_and_test.py")
    assert "no_such_module_vjpcheck" in str(e.value) and "build_and_test.py" in str(e.value)
