"""Fresh short fuzz campaigns, each validated, replayed and bundled: honest
evidence with NaN, infinities, crashes, zero-size shapes and values MLX cannot
repeat (reads past a buffer) in it must always validate and always replay.

Usage: python bench/fuzz_evidence.py [--campaigns 20] [--time 8] [--first-seed 1] [--replays 3]
Every campaign uses its own seed and no example database; each output is
validated (`mlx-vjpcheck validate`) and replayed (`mlx-vjpcheck replay`)
--replays times, bundled (`mlx-vjpcheck bundle --skip-probes`), and the bundle
validated again. Prints one line per campaign and a total; exit 1 if any step
failed.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def step(argv) -> tuple:
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    return p.returncode, (p.stdout + p.stderr).strip().splitlines()


def one(seed: int, seconds: float, tmp: Path, replays: int) -> tuple:
    out, zipped = tmp / f"fz{seed}", tmp / f"fz{seed}.zip"
    t0 = time.perf_counter()
    rc, lines = step([sys.executable, "-m", "mlx_vjpcheck.cli", "fuzz", "--time", str(seconds), "--seed", str(seed),
                      "--db", "none", "--no-progress", "--out", str(out)])
    if rc not in (0, 1):
        return False, f"fuzz exit {rc}: {lines[-1:]}"
    found = sum(1 for _ in (out / "findings").glob("*.json")) if (out / "findings").is_dir() else 0
    cli = [sys.executable, "-m", "mlx_vjpcheck.cli"]
    steps = [(cli + ["validate", str(out)], "validate")]
    steps += [(cli + ["replay", str(out)], f"replay {k + 1}") for k in range(replays)]
    steps += [(cli + ["bundle", str(out), "--skip-probes", "--out", str(zipped)], "bundle"),
              (cli + ["validate", str(zipped)], "validate bundle")]
    for argv, what in steps:
        rc, lines = step(argv)
        if rc != 0:
            return False, f"{what} exit {rc}: {[ln for ln in lines if 'FAIL' in ln][:3] or lines[-2:]}"
    return True, (f"{found} findings, validated, replayed {replays} times and bundled in "
                  f"{time.perf_counter() - t0:.1f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--campaigns", type=int, default=20)
    ap.add_argument("--time", type=float, default=8.0, help="seconds per campaign (default 8)")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--replays", type=int, default=3, help="replays of each campaign (default 3)")
    args = ap.parse_args()
    ok = 0
    with tempfile.TemporaryDirectory(prefix="bench-fuzz-evidence-") as tmp:
        for seed in range(args.first_seed, args.first_seed + args.campaigns):
            good, line = one(seed, args.time, Path(tmp), args.replays)
            ok += good
            print(f"seed {seed}: {'ok' if good else 'FAILED'}: {line}", flush=True)
    print(f"{ok}/{args.campaigns} fresh campaigns validated, replayed and bundled")
    return 0 if ok == args.campaigns else 1


if __name__ == "__main__":
    sys.exit(main())
