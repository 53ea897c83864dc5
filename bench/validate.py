"""Time to validate a full evidence bundle. Target: <= 2 s.

Usage: python bench/validate.py [RUN_DIR] [--repeat N]
Without RUN_DIR it first runs the whole catalog on the CPU (`mlx-vjpcheck run`,
needs mlx) into a temp dir. The run is bundled (probes included), then the
bundle is validated: in-process, and as a user runs it
(`python validate_artifacts.py BUNDLE.zip`, interpreter start included).
"""
from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlx_vjpcheck.cli import validate as validate_cli  # noqa: E402
from mlx_vjpcheck.evidence import bundle  # noqa: E402
from mlx_vjpcheck.validation import evidence  # noqa: E402


def make_run(tmp: Path) -> Path:
    out = tmp / "run"
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli", "run", "--device", "cpu", "--out", str(out)],
                       cwd=ROOT, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"bench/validate.py: the run failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    print(f"full run written in {time.perf_counter() - t0:.2f} s")
    return out


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", nargs="?")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-validate-") as tmp:
        run_dir = Path(args.run_dir) if args.run_dir else make_run(Path(tmp))
        data, count = bundle.build(run_dir, evidence.check)
        zpath = Path(tmp) / "bundle.zip"
        zpath.write_bytes(data)
        print(f"bundle: {count} files, {len(data)} bytes")

        def in_process():
            with redirect_stdout(io.StringIO()):
                assert validate_cli.main([str(zpath)]) == 0

        def as_user():
            p = subprocess.run([sys.executable, str(ROOT / "validate_artifacts.py"), str(zpath)],
                               capture_output=True, text=True)
            assert p.returncode == 0, p.stdout + p.stderr
            return p.stdout

        print("\n".join(ln for ln in as_user().splitlines() if "checks passed" in ln or ":" not in ln[:12]))
        print(f"validate in-process: {best(in_process, args.repeat):.3f} s (best of {args.repeat})")
        print(f"python validate_artifacts.py BUNDLE.zip: {best(as_user, args.repeat):.3f} s "
              f"(best of {args.repeat}; target <= 2 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
