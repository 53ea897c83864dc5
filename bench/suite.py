"""Wall time of `mlx-vjpcheck run` over the whole catalog, and where it goes.

Usage: python bench/suite.py [--repeat N] [--jobs N] [--sample-rate HZ | --no-sample]
The wall figure is the whole process, as a user runs it (workers, results
file and table included), timed with no profiler attached. The share inside
MLX comes from one more run of the same command under `perf record` (on-CPU
samples of every thread of the CLI and its workers, DWARF call stacks), each
sample classified by the native frames under its innermost Python frame (see
classify); printed with its sample count, rate and binomial standard error,
and an upper bound that counts as MLX's every sample perf could not attribute
(stacks it could not unwind past libc or the kernel); or "not measured" with
the reason where perf is missing or fails. cProfile cannot do it: it sees none
of mlx 0.32.4's nanobind functions; py-spy cannot either: it samples only
threads that run Python, not MLX's CPU stream thread. The share in the
float64 references comes from an in-process pass under cProfile.
Target: the whole process <= 15 s on 2 cores.
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_S = 15.0
CLI = ["-m", "mlx_vjpcheck.cli", "run", "--device", "cpu"]

# What a sample's time is spent in. "python" is the interpreter running Python code:
# the harness's own, the standard library's (json, threading) and rich's, with CPython's C
# functions and the libc/kernel work they call; perf cannot tell those apart (Python 3.11
# has no perf trampoline), so the harness's own code is not split out here.
LABELS = {
    "mlx": "inside MLX (libmlx, its binding, bundled BLAS)",
    "numpy": "numpy (its extensions, bundled OpenBLAS)",
    "python": "Python (harness, stdlib, rich; CPython's C)",
    "other": "unattributed (only libc/kernel/loader frames)",
}
EVAL_LOOP = "_PyEval_EvalFrameDefault"   # one native frame per running Python frame
# The outermost frame of a stack unwound to its end: a process's or a thread's start.
ROOTS = ("_start", "__libc_start_call_main", "__libc_start_main", "clone", "clone3", "__clone", "__clone3",
         "start_thread")


def classify(frames, mlx_objects, numpy_objects, python_objects=frozenset()) -> str:
    """The category of one sample; frames leaf first, each (symbol, shared object path).

    The rule: the sample's native part is its frames from the leaf up to the innermost
    Python frame (the innermost interpreter-loop frame, excluded); a thread with no Python
    frame at all (MLX's stream thread, OpenBLAS's pool) is native part throughout. The
    sample is inside MLX when any frame of that native part is in one of MLX's shared
    objects, whatever sits between: MLX called from numpy (np.asarray of an mx.array) and
    libc or the kernel called from MLX are MLX's time. Else numpy when any frame there is
    numpy's; else Python when the stack holds a Python frame or a frame of the interpreter
    (python_objects: the executable, libpython, lib-dynload); else other: only libc, kernel,
    loader or libstdc++ frames, a stack perf could not unwind past them. Frames above the
    innermost Python frame do not count: Python code that MLX calls back (the function
    given to mx.vjp) is Python's time, not MLX's."""
    native = []
    in_python = False
    for symbol, obj in frames:
        if symbol == EVAL_LOOP:
            in_python = True
            break
        native.append(obj)
    if any(obj in mlx_objects for obj in native):
        return "mlx"
    if any(obj in numpy_objects for obj in native):
        return "numpy"
    return "python" if in_python or any(obj in python_objects for obj in native) else "other"


def unwound(frames) -> bool:
    """Whether the stack reaches a Python frame or its thread's start: what classify reads
    is then all there (else perf lost the callers, and the sample is classified by the
    frames it has)."""
    return bool(frames) and (frames[-1][0] in ROOTS or any(sym == EVAL_LOOP for sym, _ in frames))


def tally(samples, mlx_objects, numpy_objects, python_objects=frozenset()) -> dict:
    """Samples per category (every category present, zeros included)."""
    counts = dict.fromkeys(LABELS, 0)
    for frames in samples:
        counts[classify(frames, mlx_objects, numpy_objects, python_objects)] += 1
    return counts


def share(k: int, n: int) -> tuple:
    """(share, binomial standard error) of k samples out of n. The error treats the samples
    as independent draws; neighbouring samples are correlated, so it is a lower bound."""
    if n <= 0:
        raise ValueError("no samples")
    p = k / n
    return p, math.sqrt(p * (1.0 - p) / n)


_HEADER = re.compile(r"^(\S.*?)\s+(\d+)/(\d+)\s*$")
_FRAME = re.compile(r"^\s+[0-9a-fA-F]+\s+(.*?)\s+\(([^()]*)\)\s*$")


def parse_perf_script(text: str) -> list:
    """`perf script -F comm,pid,tid,ip,sym,dso` output -> one frame list (leaf first, each
    (symbol, object path as perf prints it)) per sample."""
    samples, cur = [], None
    for line in text.splitlines():
        if not line.strip():
            continue
        m = _HEADER.match(line)
        if m:
            cur = []
            samples.append(cur)
            continue
        m = _FRAME.match(line)
        if m and cur is not None:
            cur.append((m.group(1), m.group(2)))
    return samples


def _files_of(names) -> set:
    """Real paths of the shared objects the given distributions install."""
    from importlib import metadata
    out = set()
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if not names(name):
            continue
        for f in dist.files or ():
            if re.search(r"\.(so(\.\d+)*|dylib|pyd)$", str(f)):
                out.add(os.path.realpath(dist.locate_file(f)))
    return out


def mlx_objects() -> set:
    """libmlx.so, mlx/core*.so and the libraries the wheels bundle (mlx_cpu.libs: BLAS,
    LAPACK, gfortran), from the installed distributions' file lists: mlx, mlx-cpu,
    mlx-metal, mlx-cuda-*."""
    return _files_of(lambda n: n == "mlx" or n.startswith(("mlx-cpu", "mlx-metal", "mlx-cuda")))


def numpy_objects() -> set:
    """numpy's extension modules and numpy.libs (its OpenBLAS, gfortran)."""
    return _files_of(lambda n: n == "numpy")


def python_objects() -> set:
    """The interpreter: this executable, libpython, the standard library's C modules."""
    import sysconfig
    out = {os.path.realpath(sys.executable)}
    lib = sysconfig.get_config_var("LDLIBRARY")
    if lib and sysconfig.get_config_var("LIBDIR"):
        out.add(os.path.realpath(os.path.join(sysconfig.get_config_var("LIBDIR"), lib)))
    dynload = Path(sysconfig.get_path("platstdlib")) / "lib-dynload"
    out.update(os.path.realpath(f) for f in dynload.glob("*.so"))
    return out


def _realpaths(samples) -> list:
    cache = {}

    def real(obj):
        if obj not in cache:
            cache[obj] = os.path.realpath(obj) if obj.startswith("/") else obj
        return cache[obj]
    return [[(sym, real(obj)) for sym, obj in frames] for frames in samples]


def _cli_run(jobs: int, out: Path, prefix=()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, *CLI, "--jobs", str(jobs), "--out", str(out)],
                          capture_output=True, text=True, check=False)


def _results(out: Path) -> dict:
    import json
    path = out / "results.json"
    if not path.is_file():
        sys.exit(f"bench/suite.py: the run wrote no {path.name}")
    return json.loads(path.read_text(encoding="utf-8"))


def wall_of_cli(jobs: int) -> tuple:
    """(seconds, CPU seconds of the run's processes, names of the scenarios whose worker
    died: kept out of the in-process pass)."""
    import resource
    with tempfile.TemporaryDirectory() as tmp:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        _cli_run(jobs, Path(tmp) / "run")
        secs = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        data = _results(Path(tmp) / "run")
        return secs, cpu, {r["scenario"] for r in data["records"] if r["status"] == "crashed"}


def sampled_run(jobs: int, rate: int) -> tuple:
    """(samples as frame lists, wall seconds of the sampled run, note) or (None, None, why).

    The run goes under `setarch -R` (no address randomisation) where setarch exists: perf
    unwinds a worker with the modules it first saw in that pid, and a sample between the
    parent's fork and the worker's exec shows the parent's; with randomisation the exec'd
    worker maps them elsewhere and most of its stacks stop at their leaf frame (2.9 % vs
    8.1 % inside MLX, 11 % vs 0.3 % unattributed, on the same catalog)."""
    perf = shutil.which("perf")
    if perf is None:
        return None, None, "perf not found"
    setarch = shutil.which("setarch")
    prefix = [setarch, platform.machine(), "-R"] if setarch else []
    note = "address randomisation off (setarch -R)" if setarch else "setarch not found: address randomisation on"
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "perf.data"
        t0 = time.perf_counter()
        p = _cli_run(jobs, Path(tmp) / "run", prefix=(*prefix, perf, "record", "-q", "-e", "cpu-clock", "-F", str(rate),
                                                      "--call-graph", "dwarf,16384", "-o", str(data), "--"))
        secs = time.perf_counter() - t0
        if not data.is_file() or not (Path(tmp) / "run" / "results.json").is_file():
            last = (p.stderr.strip().splitlines() or ["?"])[-1]
            return None, None, f"perf record failed: {last}"
        s = subprocess.run([perf, "script", "--no-inline", "-i", str(data), "-F", "comm,pid,tid,ip,sym,dso"],
                           capture_output=True, text=True, check=False)
        samples = parse_perf_script(s.stdout) if s.returncode == 0 else []
        if not samples:
            last = (s.stderr.strip().splitlines() or ["no samples"])[-1]
            return None, None, f"perf script failed: {last}"
        return _realpaths(samples), secs, note


def _is_reference(key) -> bool:
    return key[2] == "expected" and key[0].endswith("cases/expected.py")


def reference_share(scenarios) -> tuple:
    """(seconds in the float64 expected values, total) of one in-process pass under cProfile."""
    import cProfile
    import pstats
    from mlx_vjpcheck.running import devices, execute
    devices.select("cpu")
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for s in scenarios:
        execute.run(s, "cpu")
    prof.disable()
    total = time.perf_counter() - t0
    stats = pstats.Stats(prof).stats
    return sum(v[3] for k, v in stats.items() if _is_reference(k)), total    # cumtime of expected()


class _Parser(argparse.ArgumentParser):
    def error(self, message):   # one line, exit 2, no usage block
        print(f"bench/suite.py: {message}", file=sys.stderr)
        sys.exit(2)


def _args(argv):
    ap = _Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs, no profiler attached (default 3)")
    ap.add_argument("--jobs", type=int, default=None, help="workers (default: the CLI's default)")
    ap.add_argument("--sample-rate", type=int, default=250, help="perf samples per second per CPU (default 250)")
    ap.add_argument("--no-sample", action="store_true", help="skip the run under perf")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat must be at least 1, not {args.repeat}")
    if args.jobs is not None and args.jobs < 1:
        ap.error(f"--jobs must be at least 1, not {args.jobs}")
    if not 1 <= args.sample_rate <= 5000:
        ap.error(f"--sample-rate must be 1 to 5000 Hz, not {args.sample_rate}")
    return args


def main(argv=None) -> int:
    args = _args(argv)
    from mlx_vjpcheck.cases import catalog
    from mlx_vjpcheck.running import runner
    jobs = args.jobs or runner.default_jobs()
    cat = catalog.catalog()
    runs = [wall_of_cli(jobs) for _ in range(args.repeat)]
    walls, died = [w for w, _, _ in runs], set().union(*(d for _, _, d in runs))
    wall = statistics.median(walls)
    print(f"scenarios: {len(cat)} on cpu, {jobs} workers, {args.repeat} runs")
    print(f"mlx-vjpcheck run, whole process (median wall): {wall:.2f} s   [min {min(walls):.2f}, "
          f"max {max(walls):.2f}]  target <= {TARGET_S:g} s")
    print(f"  CPU time of its processes (user+sys, median): {statistics.median(c for _, c, _ in runs):.2f} s")
    if args.no_sample:
        print("inside MLX: not measured (--no-sample)")
    else:
        samples, secs, note = sampled_run(jobs, args.sample_rate)
        if samples is None:
            print(f"inside MLX: not measured ({note})")
        else:
            counts = tally(samples, mlx_objects(), numpy_objects(), python_objects())
            n, whole = len(samples), sum(map(unwound, samples))
            print(f"one more run under perf record (cpu-clock, {args.sample_rate} Hz per CPU, DWARF stacks; every "
                  f"thread of the CLI and its workers, on-CPU only; {note}): {n} samples, {secs:.2f} s wall")
            print(f"  {whole} of them ({100 * whole / n:.0f} %) unwound to a Python frame or their thread's start, "
                  f"the rest classified by the frames perf did unwind")
            print("  a sample is MLX's when a frame under its innermost Python frame is in MLX's shared objects; "
                  "share +- binomial standard error")
            for key, label in LABELS.items():
                p, se = share(counts[key], n)
                print(f"  {label:48s} {100 * p:5.1f} % +- {100 * se:3.1f}  ({counts[key]} samples)")
            low, _ = share(counts["mlx"], n)
            high, _ = share(counts["mlx"] + counts["other"], n)
            print(f"inside MLX: {100 * low:.1f} % of the CPU samples, at most {100 * high:.1f} % if every "
                  f"unattributed one were MLX's")
    ref_s, total = reference_share([s for s in cat if not s.must_refuse and s.name not in died])
    print(f"in-process pass under cProfile: {total:.2f} s; float64 references (cases/expected.py): "
          f"{ref_s:.2f} s  {100 * ref_s / total:.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
