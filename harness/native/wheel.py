"""The C++ suite against the installed MLX wheel, written as an ordinary run
directory (`mlx-vjpcheck native`, harness/cli/native.py).

Builds native/ with find_package(MLX) from `python -m mlx --cmake-dir` (the
build directory is reused), runs every given scenario the suite supports on
the CPU, and writes results.json (kind "native-wheel"), environment.json,
scenarios.json and commands.json with logs.
"""
from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

from ..core import resources
from ..evidence import atomic, paths, rundir
from ..running import environment
from . import build as native_build
from . import suite as native_suite


def default_build_dir() -> Path:
    """One build directory per interpreter, in the cache: never inside the package."""
    tag = hashlib.sha256(sys.executable.encode()).hexdigest()[:12]
    return resources.cache_root() / "native-build" / f"wheel-{tag}"


def run(scenarios: list, build_dir, out, replace: bool = False, say=None) -> tuple:
    """(NativeRun, results data). Raises native_suite.NativeError when the suite
    cannot be built; `out` must have been checked by the caller."""
    log = []
    binary = native_suite.build_wheel(build_dir, log=log, say=say)
    with rundir.staged(out, "native-wheel", replace) as tmp, \
            tempfile.TemporaryDirectory(prefix="vjpcheck-") as w:
        rec = native_build.Recorder(tmp)
        for n, step in enumerate(log, 1):
            rec.replay(f"build-{n}", step, cached=False)
        input_path = native_suite.write_input(scenarios, Path(w) / paths.SCENARIOS)
        shutil.copyfile(input_path, Path(tmp) / paths.SCENARIOS)   # the binary's exact input, kept

        def execute(argv):
            e = rec.run(f"run-{len(rec.entries) - len(log) + 1}", argv, Path.cwd())
            return (e["exit_code"], (Path(tmp) / e["stdout"]).read_text(encoding="utf-8"),
                    (Path(tmp) / e["stderr"]).read_text(encoding="utf-8"))
        result = native_suite.run_binary(binary, input_path, execute=execute)
        env = environment.record(None)
        data = native_suite.results_for(scenarios, result, env, "native-wheel")
        atomic.write_json(Path(tmp) / paths.RESULTS, data)
        atomic.write_json(Path(tmp) / paths.ENVIRONMENT, env)
        rec.save()
    return result, data
