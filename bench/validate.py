"""Time and memory to validate a full evidence bundle. Targets: `mlx-vjpcheck validate
BUNDLE.zip` at most 1 s as a whole process, memory at most 4x the bundle's unpacked size.

Usage: python bench/validate.py [RUN_DIR] [--repeat N]
Without RUN_DIR it first runs the whole catalog on the CPU (`mlx-vjpcheck run`,
needs mlx) into a temp dir. The run is bundled (probes included), then the
bundle is validated as a user runs it (interpreter start included, modules
read as byte-compiled, as a wheel install has them): cold (an empty cache, so
the catalog table is built and the bytecode written) and warm (the table and the
bytecode read from the cache, as every validation after the first). Prints
wall and CPU time, the peak resident memory above a bare `import numpy`
interpreter, and the bundle's unpacked size. Numbers depend on the machine's
load: run it on a quiet one.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlx_vjpcheck.evidence import bundle  # noqa: E402
from mlx_vjpcheck.validation import evidence  # noqa: E402

# The peak resident memory of the process itself: VmHWM, which exec starts afresh. (Not
# ru_maxrss: on Linux it keeps the high-water mark of the process that forked it, here
# this script holding the whole run, so every figure would read as this script's size.)
HWM = ("def hwm():\n"
       "    try:\n"
       "        for line in open('/proc/self/status'):\n"
       "            if line.startswith('VmHWM:'):\n"
       "                return int(line.split()[1])\n"
       "    except OSError:\n"
       "        pass\n"
       "    import resource, sys\n"
       "    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
       "    return kb // 1024 if sys.platform == 'darwin' else kb\n")
PEAK = (HWM + "import sys; sys.argv = ['mlx-vjpcheck', 'validate', sys.argv[1]]\n"
        "from mlx_vjpcheck.cli.main import main\nfrom mlx_vjpcheck.cli import leave\nrc = main()\n"
        "print('PEAK_KB', hwm(), file=sys.stderr)\nsys.exit(leave(rc))")
BASE = HWM + "import numpy\nprint(hwm())"


def make_run(tmp: Path) -> Path:
    out = tmp / "run"
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli", "run", "--device", "cpu", "--out", str(out)],
                       cwd=ROOT, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"bench/validate.py: the run failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    print(f"full run written in {time.perf_counter() - t0:.2f} s")
    return out


def timed(argv, env) -> tuple:
    """(wall s, cpu s, peak KiB, stdout) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"bench/validate.py: validation failed:\n{p.stdout[-2000:]}{p.stderr[-500:]}")
    peak = [int(x.split()[1]) for x in p.stderr.splitlines() if x.startswith("PEAK_KB")]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, (peak[0] if peak else 0), p.stdout


def baseline_kb(env) -> int:
    p = subprocess.run([sys.executable, "-c", BASE], capture_output=True, text=True, env=env)
    return int(p.stdout.strip() or 0)


def _bad(why: str) -> int:
    print(f"bench/validate.py: {why}", file=sys.stderr)
    return 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", nargs="?")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if args.repeat < 1:
        sys.exit(_bad(f"--repeat must be at least 1, not {args.repeat}"))
    if args.run_dir and not (Path(args.run_dir) / "MANIFEST.sha256").is_file():
        sys.exit(_bad(f"{args.run_dir}: not a run directory (no MANIFEST.sha256)"))
    with tempfile.TemporaryDirectory(prefix="bench-validate-") as tmp:
        run_dir = Path(args.run_dir) if args.run_dir else make_run(Path(tmp))
        data, count = bundle.build(run_dir, evidence.check)
        zpath = Path(tmp) / "bundle.zip"
        zpath.write_bytes(data)
        with zipfile.ZipFile(zpath) as zf:
            unpacked = sum(i.file_size for i in zf.infolist())
        print(f"bundle: {count} files, {len(data)} bytes, {unpacked} bytes unpacked")
        env = dict(os.environ, MLX_VJPCHECK_CACHE=str(Path(tmp) / "cache"))
        # As installed: pip byte-compiles a wheel's modules, so a user's process reads .pyc
        # files. A checkout run with PYTHONDONTWRITEBYTECODE would compile every module on
        # every start (about 0.2 s here); the cold run writes the bytecode to a cache of
        # this temp dir instead, and the warm runs read it.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        argv = [sys.executable, "-c", PEAK, str(zpath)]
        cold = timed(argv, env)
        warm = [timed(argv, env) for _ in range(args.repeat)]
        best = min(warm)
        base = baseline_kb(env)
        print("\n".join(ln for ln in best[3].splitlines() if ln.startswith(("evidence", "trust"))))
        print(f"cold (catalog table built): {cold[0]:.3f} s wall, {cold[1]:.3f} s CPU")
        walls = sorted(w[0] for w in warm)
        median = walls[len(walls) // 2] if len(walls) % 2 else sum(walls[len(walls) // 2 - 1:][:2]) / 2
        print(f"warm (best of {args.repeat}): {best[0]:.3f} s wall, {best[1]:.3f} s CPU; median {median:.3f} s, "
              f"worst {walls[-1]:.3f} s (target <= 1 s)")
        above = max(0, best[2] - base) * 1024
        print(f"peak memory: {best[2]} KiB ({above / max(unpacked, 1):.1f}x the unpacked bundle above a bare "
              f"numpy interpreter of {base} KiB; target <= 4x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
