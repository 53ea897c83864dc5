"""What an existing CMake build tells us: compile flags per translation unit
(compile_commands.json), the static archive, and the libraries it needs
(CMakeCache.txt). Plus the recorder that keeps every command as evidence.

Generic: the project (MLX, or the tests' fixture library) is a parameter.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..core import resources
from ..evidence import atomic, paths

NATIVE_SRC = resources.native_dir() / "src"
DEP_FLAGS_WITH_ARG = ("-MF", "-MT", "-MQ")
DEP_FLAGS = ("-MD", "-MMD", "-MP")
PASS_TO_LINK = re.compile(r"^(-pthread|-fopenmp|-fsanitize=.*|-m.*|--coverage|-fprofile-.*)$")
LIB_RE = re.compile(r"(^-l\S+$)|(\.(a|so)(\.\d+)*$)|(\.dylib$)")


class BuildError(RuntimeError):
    """The build directory cannot be used (one line, exit 2)."""


class StepFailed(RuntimeError):
    """A compile, link or run went wrong; the run dir is kept as evidence (exit 2)."""


@dataclass(frozen=True)
class Project:
    """A C++ library validated by pristine-vs-patched translation units."""
    name: str = "MLX"
    marker: str = "mlx/mlx.h"             # a file every checkout of it has
    archive: str = "libmlx.a"
    shared_names: tuple = ("libmlx.so", "libmlx.dylib")
    suite_sources: tuple = tuple(sorted(str(p) for p in NATIVE_SRC.glob("*.cpp")))
    suite_include: str = str(NATIVE_SRC)
    # The checkout also builds Python bindings and C++ tests (MLX's python/src, tests/):
    # the gate runs the whole harness and the project's own tests through them.
    bindings: bool = True


MLX = Project()


# --- compile_commands.json ---------------------------------------------------

@dataclass(frozen=True)
class Unit:
    rel: str            # path relative to the source root
    directory: str      # the compile's working directory
    compiler: str
    flags: tuple        # everything but the compiler, source, -c, -o and dep-file flags


def _argv(entry: dict) -> list:
    return list(entry["arguments"]) if "arguments" in entry else shlex.split(entry["command"])


def strip_flags(argv: list, source: str, directory: str) -> list:
    """Drop -c, -o X, dep-file flags (they would write into the user's build) and the source."""
    out, skip = [], False
    src = os.path.realpath(os.path.join(directory, source))
    for arg in argv[1:]:
        if skip:
            skip = False
            continue
        if arg in ("-o",) + DEP_FLAGS_WITH_ARG:
            skip = True
            continue
        if arg == "-c" or arg in DEP_FLAGS or arg.startswith(("-MF", "-MT", "-MQ")) and len(arg) > 3:
            continue
        if not arg.startswith("-") and os.path.realpath(os.path.join(directory, arg)) == src:
            continue
        out.append(arg)
    return out


def units(build: Path, src: Path) -> dict:
    """rel path -> Unit, for every entry under the source root."""
    try:
        entries = json.loads((build / "compile_commands.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BuildError(f"cannot read {build / 'compile_commands.json'}: {e}")
    root, found = os.path.realpath(src), {}
    for e in entries:
        path = os.path.realpath(os.path.join(e["directory"], e["file"]))
        if path.startswith(root + os.sep):
            argv = _argv(e)
            found[os.path.relpath(path, root)] = Unit(
                os.path.relpath(path, root), e["directory"], argv[0],
                tuple(strip_flags(argv, e["file"], e["directory"])))
    return found


def with_opt(flags, opt: str) -> list:
    """--opt O0 rewrites every -O flag (appending one when there was none)."""
    if opt == "as-built":
        return list(flags)
    out = [f for f in flags if not re.match(r"^-O(\d|s|z|fast|g)?$", f)]
    return out + [f"-{opt}"]


def link_passthrough(flags) -> list:
    return [f for f in flags if PASS_TO_LINK.match(f)]


# --- CMakeCache.txt ----------------------------------------------------------

def read_cache(build: Path) -> dict:
    cache = {}
    path = build / "CMakeCache.txt"
    if not path.exists():
        return cache
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = re.match(r"^([^#/][^:=]*):([A-Z]+)=(.*)$", line)
        if m:
            cache[m.group(1)] = m.group(3)
    return cache


def archive_libraries(cache: dict) -> list:
    """Libraries found by the build's find_package calls (BLAS, LAPACK, ...).

    CMake records each found package as FIND_PACKAGE_MESSAGE_DETAILS_<P>=[v1][v2]...;
    the first group lists the package's required variables, which for library
    packages are the libraries themselves. Platform libraries follow.
    """
    libs = []
    for key, value in sorted(cache.items()):
        if not key.startswith("FIND_PACKAGE_MESSAGE_DETAILS_"):
            continue
        first = value[1:value.find("]")] if value.startswith("[") else ""
        for item in first.split(";"):
            if LIB_RE.search(item) and item not in libs:
                libs.append(item)
    return libs + [f for f in ("-lpthread", "-ldl", "-lm") if f not in libs]


def shared_in_cache(cache: dict) -> bool:
    return cache.get("BUILD_SHARED_LIBS", "").upper() in ("ON", "1", "TRUE", "YES", "Y")


def has_shared_library(build: Path, project: Project) -> bool:
    return any(next(build.rglob(n), None) for n in project.shared_names)


def find_archive(build: Path, project: Project) -> Path | None:
    direct = build / project.archive
    if direct.is_file():
        return direct
    return next((p for p in sorted(build.rglob(project.archive)) if p.is_file()), None)


# --- evidence: every command, its exit code, time and logs --------------------

class Recorder:
    """Runs commands and keeps each one's argv, cwd, exit code, wall time and logs."""

    def __init__(self, root: Path):
        self.root, self.entries, self._lock = Path(root), [], threading.Lock()
        (self.root / paths.LOGS).mkdir(parents=True, exist_ok=True)

    def _keep(self, cid, argv, cwd, rc, seconds, out, err, **extra) -> dict:
        atomic.write_text(self.root / paths.LOGS / f"{cid}.out", out)
        atomic.write_text(self.root / paths.LOGS / f"{cid}.err", err)
        entry = {"id": cid, "argv": [str(a) for a in argv], "cwd": str(cwd), "exit_code": rc,
                 "seconds": seconds, "stdout": f"{paths.LOGS}/{cid}.out", "stderr": f"{paths.LOGS}/{cid}.err", **extra}
        with self._lock:
            self.entries.append(entry)
        return entry

    def run(self, cid: str, argv: list, cwd, env=None, idle_timeout: float | None = None) -> dict:
        """Run and record one command. `idle_timeout`: kill it (SIGKILL) when it has
        written nothing to stdout for that many seconds -- a hang, recorded as such in its
        stderr log, never a gate that waits forever."""
        t0 = time.perf_counter()
        try:
            if idle_timeout is None:
                p = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True)
                rc, out, err = p.returncode, p.stdout, p.stderr
            else:
                rc, out, err = watched([str(a) for a in argv], cwd, env, idle_timeout)
        except OSError as e:   # e.g. the compiler recorded in the build no longer exists
            rc, out, err = 127, "", f"{type(e).__name__}: {e}\n"
        return self._keep(cid, argv, cwd, rc, round(time.perf_counter() - t0, 3), out, err)

    def record(self, cid: str, argv: list, cwd, rc: int, seconds: float, out: str, err: str) -> dict:
        """A command run elsewhere (a fuzz campaign process, say)."""
        return self._keep(cid, argv, cwd, rc, seconds, out, err)

    def replay(self, cid: str, done: dict, cached: bool = True) -> dict:
        """A command run earlier (by default: reused from the object cache, marked as such)."""
        extra = {"cached": True} if cached else {}
        return self._keep(cid, done["argv"], done["cwd"], done["exit_code"], done["seconds"],
                          done["stdout"], done["stderr"], **extra)

    def save(self) -> None:
        atomic.write_json(self.root / paths.COMMANDS, sorted(self.entries, key=lambda e: e["id"]))


HUNG = "no output for {:g} s: killed as hung"


def watched(argv: list, cwd, env, idle_timeout: float) -> tuple:
    """(returncode, stdout, stderr) of a process killed once its stdout stays silent for
    idle_timeout seconds (the line "vjpcheck: no output for N s: killed as hung" is
    appended to its stderr): the supervisor's watchdog, armed again at every line."""
    from ..running.child import Watchdog, ended_on_interrupt
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err, watchdog = [], [], Watchdog(proc, idle_timeout)

    def pump(stream, sink, progress):
        for line in stream:
            sink.append(line)
            if progress:
                watchdog.arm()
    readers = [threading.Thread(target=pump, args=(proc.stdout, out, True), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr, err, False), daemon=True)]
    watchdog.arm()
    for t in readers:
        t.start()
    with ended_on_interrupt(proc):
        proc.wait()
    for t in readers:
        t.join(timeout=5)
    watchdog.stop()
    text_err = "".join(err) + (f"vjpcheck: {HUNG.format(idle_timeout)}\n" if watchdog.fired else "")
    return proc.returncode, "".join(out), text_err


def sha256_file(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
