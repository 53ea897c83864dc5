"""What the gate runs on one build, each in its own recorded processes: every scenario
through the scenario worker (the harness) and through the C++ suite (native), MLX's
own Python and C++ tests (mlxtests.py) and the patch's regression tests; each build
in its own environment. A process that dies or hangs costs the scenario or test it
was on (recorded like a crash) and the next process resumes after it.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

from ..core.exits import exit_text
from ..evidence import atomic, paths
from ..native import suite as native_suite
from . import cache as native_cache
from . import mlxtests
from . import variants as nvar
from .inputs import PACKAGE_PARENT, PKG, VARIANTS, Gate, StepFailed, _say

JIT_UNITS = ("mlx/backend/cpu/compiled", "mlx/compile", "mlx/backend/cpu/jit")


def build_env(variant: nvar.Variant, gate: Gate | None = None) -> dict:
    """The environment every process of one build runs in, with its own $TMPDIR: MLX
    compiles fused CPU kernels at run time and keeps them under $TMPDIR/mlx/<version>,
    written in place, and the two builds report the same version, so running side by
    side they would read each other's half-written kernels. One directory per checkout
    and variant, kept in the cache (the kernels are reused by later gates); per patch
    too when it touches the kernel generator."""
    if gate is None:
        tmp = variant.path / "tmp"
    else:
        jit = [r for r in gate.touched if r.startswith(JIT_UNITS)]
        tag = f"{(gate.commit or 'nocommit')[:12]}-{variant.name}" + (
            "-" + native_cache.digest([gate.touched[r] for r in jit])[:12] if jit and variant.name == "patched" else "")
        tmp = gate.cache_root / "mlx-tmp" / tag
    tmp.mkdir(parents=True, exist_ok=True)
    return dict(os.environ, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1", TMPDIR=str(tmp))


def python_env(variant: nvar.Variant, gate: Gate | None = None) -> dict:
    """The built package first on PYTHONPATH, then this project's package (when it runs
    from a checkout), then whatever was there."""
    env = build_env(variant, gate)
    parts = [str(variant.package_parent), str(PACKAGE_PARENT)]
    if os.environ.get("PYTHONPATH"):
        parts.append(os.environ["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    return env


def import_check(gate: Gate, variant: nvar.Variant) -> dict:
    """The built package is the `mlx` a child imports (and its extension loads)."""
    code = "import json, mlx.core as mx; print(json.dumps({'version': mx.__version__, 'file': mx.__file__}))"
    e = gate.rec.run(f"import-{variant.name}", [sys.executable, "-c", code], gate.work, env=python_env(variant, gate))
    out = (gate.rec.root / e["stdout"]).read_text(encoding="utf-8").strip().splitlines()
    try:
        info = json.loads(out[-1])
    except (ValueError, IndexError):
        info = None
    if e["exit_code"] != 0 or not info:
        raise StepFailed(f"the {variant.name} MLX package does not import ({exit_text(e['exit_code'], 'exit')}): "
                         f"see {{out}}/{e['stderr']}")
    if not str(Path(info["file"]).resolve()).startswith(str(variant.path.resolve())):
        raise StepFailed(f"the {variant.name} build is not the mlx that Python imports ({info['file']}): "
                         "is PYTHONPATH overridden by a .pth file?")
    return info


def _numbered(name: str, n: int) -> str:
    """The n-th command or log of one name: the first plain, the later ones -2, -3, ..."""
    return name + (f"-{n}" if n > 1 else "")


def _execute(rec, cid_base: str, cwd, env=None, idle_timeout: float | None = None):
    """execute(argv) -> (exit code, stdout, stderr) of one recorded command, and how many
    it ran (a process that died is followed by another of the same name, numbered)."""
    count = [0]

    def execute(argv, n=None):
        count[0] += 1
        cid = _numbered(cid_base, count[0])
        e = rec.run(cid, argv, cwd, env=env, idle_timeout=idle_timeout)
        return (e["exit_code"], (rec.root / e["stdout"]).read_text(encoding="utf-8"),
                (rec.root / e["stderr"]).read_text(encoding="utf-8"))
    return execute, count


def run_harness(gate: Gate, variant: nvar.Variant, input_path: Path, cid: str | None = None) -> native_suite.NativeRun:
    """Every scenario through the scenario worker on this build; a dead worker is one
    crashed record and the next worker starts at the following scenario."""
    worker = f"{PKG}.running.worker"
    execute, count = _execute(gate.rec, cid or f"run-{variant.name}", PACKAGE_PARENT, python_env(variant, gate),
                              gate.hang_s)
    try:
        run = native_suite.run_binary([sys.executable, "-m", worker], input_path, execute,
                                      extra=("cpu",), decode=json.loads)
    except native_suite.NativeError as e:
        raise StepFailed(f"the harness on the {variant.name} build {e}; see {{out}}/logs/"
                         f"{_numbered(f'run-{variant.name}', count[0])}.err")
    return run


def run_native(gate: Gate, variant: nvar.Variant, input_path: Path, rec, cid: str | None = None) -> tuple:
    execute, count = _execute(rec, cid or f"run-{variant.name}", gate.work, idle_timeout=gate.hang_s)
    try:
        run = native_suite.run_binary(variant.suite_binary, input_path, execute=execute)
    except native_suite.NativeError as e:   # dead before any scenario: keep the logs, exit 2
        raise StepFailed(f"the {variant.name} native suite {e}; see {{out}}/"
                         f"{gate.native_dir + '/' if gate.native_dir else ''}logs/"
                         f"{_numbered(f'run-{variant.name}', count[0])}.err")
    return run, (fast_path(rec, variant.name, variant.suite_binary, gate.work) if cid is None else None)


def fast_path(rec, variant: str, exe, cwd) -> dict | None:
    """{op: bool}: does a right-sorted, non-broadcast VJP (the MoE case) still go through
    the segmented matmul? None when the binary has no such probe (a fixture's suite)."""
    e = rec.run(f"fastpath-{variant}", [exe, "--fast-path"], cwd)
    if e["exit_code"] != 0:
        return None
    for line in (rec.root / e["stdout"]).read_text(encoding="utf-8").splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and isinstance(msg.get("fast_path"), dict):
            return {str(k): bool(v) for k, v in msg["fast_path"].items()}
    return None


def tests_dir(gate: Gate, variant: str) -> Path:
    """MLX's Python tests a build runs: the checkout's on pristine; on patched, when the
    patch edits them, a copy with the patched files (the checkout is not touched)."""
    edits = {r: t[1] for r, t in gate.touched.items() if gate.unit_group(r) == "mlx-tests"}
    src = gate.src / "python" / "tests"
    if variant == "pristine" or not edits:
        return src
    dest = gate.work / "python-tests-patched"
    if not dest.is_dir():
        tmp = gate.work / ".python-tests-patched"
        shutil.copytree(src, tmp, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for rel, text in edits.items():
            (tmp / Path(rel).relative_to("python/tests")).write_text(text, encoding="utf-8")
        os.replace(tmp, dest)
    return dest


def handoff_dir(gate: Gate) -> Path:
    """The patch's regression tests beside MLX's mlx_tests.py (their base class), in a
    folder of this run: run as MLX runs its own tests."""
    dest = gate.work / "handoff-tests"
    if not dest.is_dir():
        tmp = gate.work / ".handoff-tests"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        shutil.copy2(gate.src / "python" / "tests" / "mlx_tests.py", tmp / "mlx_tests.py")
        for test in gate.handoff:
            shutil.copy2(test, tmp / Path(test).name)
        os.replace(tmp, dest)
    return dest


def _workdir(gate: Gate, name: str) -> Path:
    cwd = gate.work / name
    cwd.mkdir(parents=True, exist_ok=True)
    return cwd


def _python_tests(gate: Gate, variant: nvar.Variant, cid: str, cwd: Path, where: Path,
                  pattern: str | None = None, ids: list | None = None, ids_name: str = "ids.json") -> dict:
    """MLX's Python tests (or the patch's regression tests) in `where` on one build: all of
    them matching `pattern`, or only the test ids `ids` (written to cwd/ids_name).
    RuntimeError when they cannot run."""
    ids_file = None
    if ids is not None:
        ids_file = cwd / ids_name
        ids_file.write_text(json.dumps(ids), encoding="utf-8")
    execute, _ = _execute(gate.rec, cid, cwd, python_env(variant, gate), gate.hang_s)
    return mlxtests.run_python(where, execute, pattern, ids_file=ids_file)


def _cpp_tests(gate: Gate, variant: nvar.Variant, cid: str, cwd: Path, pattern=None, only=None) -> dict:
    # doctest reports into a file: its stdout is quiet, so the whole run gets the limit
    execute, _ = _execute(gate.rec, cid, cwd, build_env(variant, gate), gate.hang_s * 3)
    return mlxtests.run_cpp(variant.tests_binary, cwd, execute, pattern, only=only)


def run_handoff(gate: Gate, variant: nvar.Variant) -> dict:
    cid = f"handoff-{variant.name}"
    try:
        return _python_tests(gate, variant, cid, _workdir(gate, cid), handoff_dir(gate))
    except RuntimeError as e:
        raise StepFailed(f"{e} (the patch's regression tests, {variant.name} build; see "
                         f"{{out}}/logs/handoff-{variant.name}.err)")


def edited_tests(gate: Gate) -> list:
    """The test ids whose method the patch adds, removes or changes."""
    return sorted({t for r, (a, b) in gate.touched.items() if gate.unit_group(r) == "mlx-tests"
                   for t in mlxtests.edited_tests(r, a, b)})


def old_tests_on_patched(gate: Gate, built: dict, ids: list) -> dict:
    """{test id: outcome} of the old (pristine) version of each edited test on the patched
    build: what the edit changed expectations for (the old test asserting the defect fails)."""
    cid = "mlx-python-old-on-patched"
    try:
        got = _python_tests(gate, built["patched"], cid, _workdir(gate, cid), tests_dir(gate, "pristine"), ids=ids)
    except RuntimeError as e:
        raise StepFailed(f"{e} (the old edited tests on the patched build; see "
                         "{out}/logs/mlx-python-old-on-patched.err)")
    return {t: (got["tests"].get(t) or {}).get("outcome") for t in ids}


def run_mlx_python(gate: Gate, variant: nvar.Variant) -> dict:
    cid = f"mlx-python-{variant.name}"
    try:
        return _python_tests(gate, variant, cid, _workdir(gate, cid), tests_dir(gate, variant.name),
                             gate.mlx_tests_filter)
    except RuntimeError as e:
        raise StepFailed(f"{e} ({variant.name} build; see {{out}}/logs/mlx-python-{variant.name}.err)")


def run_mlx_cpp(gate: Gate, variant: nvar.Variant) -> dict:
    cid = f"mlx-cpp-{variant.name}"
    try:
        out = _cpp_tests(gate, variant, cid, _workdir(gate, cid), gate.mlx_tests_filter)
    except RuntimeError as e:
        raise StepFailed(f"{e} ({variant.name} build; see {{out}}/logs/mlx-cpp-{variant.name}.err)")
    for n, text in enumerate(out.pop("xml"), 1):   # doctest's own report, kept beside the logs
        atomic.write_text(gate.rec.root / paths.LOGS / f"{_numbered(cid, n)}.xml", text)
    return out


# Rough cost of each stage on 2 cores, to start the longest first.
# The sweep's registered reproducers (probes/sweep/<id>.py, one per class harness/sweep/known.py
# declares; tests/sweep/test_known.py holds the folder and the declarations to the same set):
# exit 1 while the defect is present, 0 once fixed, 125 when they cannot test.
SWEEP_IDLE_S = 420   # var__zero_size_hang waits up to 30 s in each of 12 silent children


def sweep_reproducers() -> list:
    from ..core import resources
    return sorted((resources.probes_dir() / "sweep").glob("*.py"))


def run_sweep(gate: Gate, variant: nvar.Variant) -> dict:
    """Each registered sweep reproducer once on this build, in its own recorded process:
    {"reproducers": {id: {"exit_code", "seconds", "verdict": its last VERDICT line}}}."""
    out = {}
    cwd = _workdir(gate, f"sweep-{variant.name}")
    for path in sweep_reproducers():
        e = gate.rec.run(f"sweep-{variant.name}-{path.stem}", [sys.executable, str(path)], cwd,
                         env=python_env(variant, gate), idle_timeout=max(gate.hang_s, SWEEP_IDLE_S))
        text = (gate.rec.root / e["stdout"]).read_text(encoding="utf-8", errors="replace")
        said = [ln for ln in text.splitlines() if ln.startswith("VERDICT:")]
        out[path.stem] = {"exit_code": e["exit_code"], "seconds": e.get("seconds"),
                          "verdict": said[-1][:300] if said else None}
    return {"reproducers": out}


WEIGHT = {"mlx-python": 240, "mlx-cpp": 30, "harness": 20, "sweep": 10, "native": 5}


def run_suites(gate: Gate, built: dict, input_path: Path, native_rec) -> dict:
    """{(stage, variant): result} for every stage on both builds, `jobs` at a time,
    longest first, each build's import checked before anything runs on it."""
    if any(s in gate.stages for s in ("harness", "mlx-python")):
        for v in VARIANTS:
            import_check(gate, built[v])
    stages = tuple(gate.stages) + (("sweep",) if gate.sweep and "harness" in gate.stages else ())
    tasks = sorted(((s, v) for s in stages for v in VARIANTS), key=lambda t: -WEIGHT.get(t[0], 1))
    runners = {"harness": lambda v: run_harness(gate, built[v], input_path),
               "sweep": lambda v: run_sweep(gate, built[v]),
               "native": lambda v: run_native(gate, built[v], input_path, native_rec),
               "mlx-python": lambda v: run_mlx_python(gate, built[v]),
               "mlx-cpp": lambda v: run_mlx_cpp(gate, built[v])}

    def one(task):
        stage, v = task
        t0 = time.perf_counter()
        result = runners[stage](v)
        _say(gate, f"{stage} on {v}: done in {time.perf_counter() - t0:.0f} s")
        return result
    results = native_cache.parallel(one, tasks, gate.jobs)
    return dict(zip(tasks, results))


def rerun_test(gate: Gate, built: dict, suite: str, test: str, variant: str) -> str | None:
    """One MLX test again, alone, in a fresh process on one build: its outcome."""
    b, n = built[variant], len(gate.rec.entries)
    cid = f"rerun-{suite}-{variant}-{n}"
    cwd = _workdir(gate, f"rerun-{variant}")
    try:
        if suite in ("python", "handoff"):
            where = tests_dir(gate, variant) if suite == "python" else handoff_dir(gate)
            got = _python_tests(gate, b, cid, cwd, where, ids=[test], ids_name=f"ids-{n}.json")
        else:
            got = _cpp_tests(gate, b, cid, cwd, only=test)
    except RuntimeError:
        return None
    return (got["tests"].get(test) or {}).get("outcome")
