"""One full native validation from an existing build, beside its floor.

Usage: python bench/native.py --mlx-source DIR --mlx-build DIR [--opt O0|as-built] [--repeat N]
       (defaults: $MLX_SOURCE_ROOT, $MLX_CPU_BUILD, --opt O0)

Validation: `python build_and_test.py --native-only ...` (the C++ suite only;
bench/gate.py measures the whole gate) as a user iterating on a patch runs it:
the suite's objects and the pristine units are already cached (a first,
untimed run fills the cache); each timed run gets a patch that differs from the
previous one in a comment, so the patched unit is compiled and linked every time.
Floor: compiling the touched units once with the same flags (in parallel) plus
one link of the suite ahead of the archive -- the least any pristine/patched
check costs.
Target: validation <= 1.5 x floor (about 8 s on 2 cores at -O0).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlx_vjpcheck.native import build as nb  # noqa: E402
from mlx_vjpcheck.gate import inputs as GI  # noqa: E402
from mlx_vjpcheck.gate import build as GB  # noqa: E402


def changed_patch(text: str, nonce: str) -> str:
    """The patch with one more added line (a comment) after its first added line: the
    patched unit's text changes, so it is compiled again; nothing else does."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("+") and not ln.startswith("+++"))
    return "".join(lines[:at + 1] + [f"+// bench {nonce}\n"] + lines[at + 1:])


def validation(args, out: Path, nonce: str = "") -> float:
    patch = args.patch
    if nonce:
        patch = str(out.parent / f"patch-{nonce}.diff")
        Path(patch).write_text(changed_patch(Path(args.patch).read_text(encoding="utf-8"), nonce),
                               encoding="utf-8")
    argv = [sys.executable, str(ROOT / "build_and_test.py"), "--mlx-source", args.mlx_source,
            "--mlx-build", args.mlx_build, "--out", str(out), "--opt", args.opt, "--native-only",
            "--patch", patch]
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"bench/native.py: build_and_test.py exited {p.returncode}: "
                 f"{(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return took


def floor(args, tmp: Path) -> tuple:
    """(compile seconds, link seconds): every touched unit compiled once (in parallel,
    as the validation does) with the same flags, and one link of the suite ahead of the
    archive."""
    import concurrent.futures as cf
    gate = GI.prepare(args.mlx_source, args.mlx_build, args.patch, args.opt, stages=("native",))
    gate.rec, gate.work = nb.Recorder(tmp / "rec"), tmp
    gate.headers = GB._headers(gate.project, gate.src)
    suite = GB.suite_objects(gate)   # cached by the priming run
    objs = {rel: tmp / f"{GB._stem(rel)}.o" for rel in gate.touched}

    def one(rel):
        unit = gate.units[rel]
        argv = [unit.compiler, *nb.with_opt(unit.flags, args.opt), "-c", gate.src / rel, "-o", objs[rel]]
        return gate.rec.run(f"floor-compile-{GB._stem(rel)}", argv, unit.directory)
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(gate.jobs) as pool:
        done = list(pool.map(one, gate.touched))
    compile_s = time.perf_counter() - t0
    exe = tmp / "floor-exe"
    link = gate.rec.run("floor-link", [gate.first.compiler, "-o", exe, *suite, *objs.values(), gate.archive,
                                       *gate.libraries], tmp)
    if any(c["exit_code"] for c in done) or link["exit_code"]:
        sys.exit("bench/native.py: the floor's compile or link failed")
    return compile_s, link["seconds"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mlx-source", default=os.environ.get("MLX_SOURCE_ROOT"))
    p.add_argument("--mlx-build", default=os.environ.get("MLX_CPU_BUILD"))
    p.add_argument("--patch", default=str(GI.DEFAULT_PATCH))
    p.add_argument("--opt", choices=("O0", "as-built"), default="O0")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    if not (args.mlx_source and args.mlx_build):
        p.error("give --mlx-source and --mlx-build (or set MLX_SOURCE_ROOT and MLX_CPU_BUILD)")
    with tempfile.TemporaryDirectory(prefix="bench-native-") as t:
        tmp = Path(t)
        validation(args, tmp / "prime")   # fills the suite-object cache; untimed
        stamp = f"{os.getpid()}-{time.time_ns()}"
        runs = [validation(args, tmp / f"run{i}", f"{stamp}-{i}") for i in range(args.repeat)]
        floors = [floor(args, tmp / f"floor{i}") for i in range(args.repeat)]
    v = statistics.median(runs)
    fc = statistics.median(f[0] for f in floors)
    fl = statistics.median(f[1] for f in floors)
    print(f"cpus: {os.cpu_count()}  opt: {args.opt}  load average: {os.getloadavg()[0]:.2f}")
    print(f"validation (build_and_test.py, suite + pristine cached): median {v:.2f} s "
          f"over {len(runs)} [{', '.join(f'{x:.2f}' for x in runs)}]")
    print(f"floor (compile the touched units once {fc:.2f} s + one link {fl:.2f} s): {fc + fl:.2f} s")
    print(f"ratio: {v / (fc + fl):.2f} x floor (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
