"""The native C++ suite from Python: its input file, its wheel build, its runs.

The suite reads the catalog this module exports (scenarios plus the tolerance
table, so there is one source of truth for both) and streams JSON lines; a
crash costs one `crashed` record and the run resumes at the next scenario.
Nothing here imports mlx.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core import checks, jsonio, record, resources, verdict
from ..core import scenario as scenario_mod
from ..core.exits import died, exit_text
from ..evidence import atomic, results

NATIVE_DIR = resources.native_dir()
BINARY = "vjpcheck-native"


class NativeError(RuntimeError):
    """The native suite could not be built or run (one line, exit 2)."""


def write_input(scenarios: list, path) -> Path:
    data = {"schema": scenario_mod.SCHEMA, "scenarios": [s.to_dict() for s in scenarios],
            "tolerances": {"reference": checks.TOLERANCE, "fd": checks.FD_TOLERANCE}}
    return atomic.write_text(path, jsonio.dumps(data, sort_keys=True) + "\n")


# --- building against the installed wheel -----------------------------------

def wheel_cmake_dir() -> str:
    out = subprocess.run([sys.executable, "-m", "mlx", "--cmake-dir"], capture_output=True,
                         text=True)
    if out.returncode != 0 or not out.stdout.strip():
        raise NativeError("`python -m mlx --cmake-dir` failed: is mlx installed?")
    return out.stdout.strip()


def build_wheel(build_dir, log=None, say=None) -> Path:
    """Configure (once) and build the suite against the installed MLX; returns the binary.
    Two processes building the same directory take turns (a lock file inside it)."""
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / ".vjpcheck-build.lock", "w") as lock:
        try:
            import fcntl
            fcntl.flock(lock, fcntl.LOCK_EX)
        except ImportError:   # no fcntl (Windows): build unlocked
            pass
        return _build_wheel(build_dir, log, say or (lambda msg: None))


def _build_wheel(build_dir: Path, log, say) -> Path:
    if shutil.which("cmake") is None:
        raise NativeError("cmake is not installed (the native suite is built with it): "
                          "apt-get install cmake g++ ninja-build nlohmann-json3-dev, or brew install cmake")
    cmake_dir = wheel_cmake_dir()
    steps = []
    if not (build_dir / "build.ninja").exists() and not (build_dir / "Makefile").exists():
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        steps.append(["cmake", "-S", str(NATIVE_DIR), "-B", str(build_dir), *gen,
                      f"-DMLX_DIR={cmake_dir}/share/cmake/MLX",
                      f"-DPython_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_TYPE=Release"])
    steps.append(["cmake", "--build", str(build_dir), "--target", BINARY])
    for argv in steps:
        say("configuring the C++ suite (cmake)" if "-S" in argv else
            f"building the C++ suite in {build_dir} (the first build takes a minute or two)")
        t0 = time.perf_counter()
        out = subprocess.run(argv, capture_output=True, text=True)
        if log is not None:
            log.append({"argv": argv, "cwd": os.getcwd(), "exit_code": out.returncode,
                        "seconds": round(time.perf_counter() - t0, 3), "stdout": out.stdout,
                        "stderr": out.stderr})
        if out.returncode != 0:
            tail = (out.stderr.strip() or out.stdout.strip()).splitlines()[-1:] or ["(no output)"]
            raise NativeError(f"{' '.join(argv[:2])} failed ({exit_text(out.returncode, 'exit')}): {tail[0]}")
    return build_dir / BINARY


# --- running -------------------------------------------------------------------

@dataclass
class NativeRun:
    records: list = field(default_factory=list)
    skipped: list = field(default_factory=list)    # [{"scenario", "reason"}]
    commands: list = field(default_factory=list)   # one entry per process started


def _crash_record(name: str, rc: int, stderr: str) -> dict:
    return record.crashed(name, "cpu", died(rc, stderr, "native process"), seconds=None)


def _subprocess(argv, env=None, cwd=None):
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def _one_process(binary, input_path, names, start, run: NativeRun, execute, extra=(), decode=None) -> int:
    """One process from scenario `start`: `binary` is the executable (or an argv prefix
    such as [python, -m, worker]), `extra` arguments follow the input file (and then the
    start index is always given). Returns where the next process starts."""
    prefix = [str(a) for a in binary] if isinstance(binary, (list, tuple)) else [str(binary)]
    argv = [*prefix, str(input_path), *map(str, extra)] + ([str(start)] if start or extra else [])
    t0 = time.perf_counter()
    rc, stdout, stderr = execute(argv)
    run.commands.append({"argv": argv, "exit_code": rc, "seconds": round(time.perf_counter() - t0, 3)})
    current = None
    for line in stdout.splitlines():
        msg = (decode or jsonio.loads)(line)
        if "start" in msg:
            current = msg["start"]
        elif "skip" in msg:
            run.skipped.append(msg["skip"])
            current = None
        else:
            run.records.append(msg["record"])
            current = None
    if current is None:
        if rc != 0:   # died outside any scenario: a broken binary, not a case
            tail = (stderr.strip().splitlines() or ["(no output)"])[-1]
            raise NativeError(f"failed before running a scenario ({exit_text(rc, 'exit')}): {tail}")
        return len(names)
    run.records.append(_crash_record(names[current], rc, stderr))
    return current + 1


def run_binary(binary, input_path, execute=None, extra=(), decode=None) -> NativeRun:
    """Run every scenario of input_path, restarting after the one that crashed: the C++
    suite, or the scenario worker on a gate's build (`binary` an argv prefix; `extra`
    and `decode` as for _one_process).

    `execute(argv) -> (returncode, stdout, stderr)` lets a caller record each process."""
    with open(input_path, encoding="utf-8") as fh:
        names = [s["name"] for s in json.load(fh)["scenarios"]]
    run, start = NativeRun(), 0
    while start < len(names):
        start = _one_process(binary, input_path, names, start, run, execute or _subprocess, extra, decode)
    return run


def half_precision(s, rec: dict) -> dict:
    """A C++ record under the project's half-precision tolerance model (core/checks.py):
    for a float16 / bfloat16 call of a multilinear op, each reference check gets the
    accumulation term the float64 reference counts (cases/expected.py `accumulation`),
    and the status is judged again; where the model cannot decide (the bound exceeds the
    values) the record is an error record, as the Python runner's is. The C++ suite
    computes observed and float64 expected values; the tolerance model lives in one place."""
    if not checks.accumulates(s.dtype) or rec.get("status") == "crashed" or not rec.get("checks") \
            or any("accumulation" in c for c in rec["checks"]):
        return rec
    from ..cases import expected
    from ..core import numeric
    from ..judging import judge
    try:
        exp = expected.expected(s)
        acc = expected.accumulation(s, exp) if "forward" in exp else {}
    except numeric.ReferenceUndecided as e:
        return dict(rec, checks=[], error=f"reference undecided: {e}"[:500],
                    status=verdict.status([], f"reference undecided: {e}"))
    if not acc:
        return rec
    out = []
    for c in rec["checks"]:
        a = acc.get(c.get("name"))
        if a and c.get("kind", "reference") == "reference" and c.get("observed") is not None:
            c = checks.compare(c["name"], checks.shaped(c["observed"], c.get("observed_shape")),
                               checks.shaped(c["expected"], c.get("expected_shape")), c["atol"], c["rtol"],
                               c.get("kind", "reference"), acc=a)
        out.append(c)
    return dict(rec, checks=out, status=judge.judge(s, out, rec.get("error")).status)


ACCEPTED_REFUSED = "the forward accepted an input its op record lists as refused (an error input)"


def refusal(s, rec: dict) -> dict:
    """A C++ record of an error input (a must_refuse scenario) under the Python runner's
    rule (running/execute.py `_refusal`): a forward that accepts the input makes the
    scenario unjudgeable, an error record with no checks, not a pass on its values."""
    if not s.must_refuse or rec.get("status") == "crashed" or not rec.get("checks"):
        return rec
    return dict(rec, checks=[], error=ACCEPTED_REFUSED, status=verdict.status([], ACCEPTED_REFUSED))


def results_for(scenarios: list, run: NativeRun, environment: dict, kind: str, model: bool = True) -> dict:
    """A results.json whose records cover the scenarios the suite ran; the rest are listed
    under `skipped` with the suite's reason and take no part in any comparison. `model`:
    the records are the C++ suite's (the half-precision term is applied here); records of
    the Python runner already carry it."""
    if model:
        by = {s.name: s for s in scenarios}
        run.records = [half_precision(by[r["scenario"]], refusal(by[r["scenario"]], r))
                       if r.get("scenario") in by else r for r in run.records]
    ran = {r["scenario"] for r in run.records}
    data = results.build([s for s in scenarios if s.name in ran], run.records, environment, kind)
    data["skipped"] = run.skipped
    return data
