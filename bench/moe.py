#!/usr/bin/env python3
"""MoE-shaped right-sorted gather_mm, forward + backward: pristine vs patched units.

Usage: python bench/moe.py --mlx-source DIR --mlx-build DIR [--opt as-built|O0] [--cache DIR]
                           [--shape TOKENS HIDDEN FFN EXPERTS] [--repeat R] [--rounds N]
       (defaults: $MLX_SOURCE_ROOT, $MLX_CPU_BUILD, as-built, 2048 512 1024 8, 5, 6)

Builds the gate's two binaries (harness/gate/build.py: the touched units
compiled pristine and patched with the build's own flags, linked ahead of
libmlx.a) and runs each binary's `--bench-moe` mode: Y[t] = X[t] @ W[e_t] with
sorted expert ids e_t (rows spread evenly over the experts, as after a MoE
router's sort), then the VJP with respect to X and W, evaluated. Rounds
alternate the order of the two binaries; the figure is the median time per
forward + backward over every repeat of every round. Target: patched /
pristine <= 1.05 (the patch keeps the right-sorted, non-broadcast fast path).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlx_vjpcheck.native import build as nb  # noqa: E402
from mlx_vjpcheck.gate import inputs as GI  # noqa: E402
from mlx_vjpcheck.gate import build as GB  # noqa: E402
from mlx_vjpcheck.gate import cache as native_cache  # noqa: E402


def build(args, work: Path) -> dict:
    gate = GI.prepare(args.mlx_source, args.mlx_build, args.patch, args.opt, cache=args.cache,
                     stages=("native",))
    gate.rec, gate.work = nb.Recorder(work / "rec"), work
    built = GB.build_variants(gate)
    return {v: b.suite_binary for v, b in built.items()}


def one(exe, shape, repeat) -> list:
    p = subprocess.run([str(exe), "--bench-moe", *map(str, shape), str(repeat)], capture_output=True,
                       text=True, env=dict(os.environ))
    if p.returncode != 0:
        sys.exit(f"bench/moe.py: {exe.name} exited {p.returncode}: "
                 f"{(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(p.stdout)["seconds"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mlx-source", default=os.environ.get("MLX_SOURCE_ROOT"))
    ap.add_argument("--mlx-build", default=os.environ.get("MLX_CPU_BUILD"))
    ap.add_argument("--patch", default=str(GI.DEFAULT_PATCH))
    ap.add_argument("--opt", choices=("as-built", "O0"), default="as-built")
    ap.add_argument("--cache", default=None, help="the gate's cache directory (default: its usual one)")
    ap.add_argument("--shape", type=int, nargs=4, default=(2048, 512, 1024, 8),
                    metavar=("TOKENS", "HIDDEN", "FFN", "EXPERTS"))
    ap.add_argument("--repeat", type=int, default=5, help="timed iterations per binary per round")
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    if not (args.mlx_source and args.mlx_build):
        ap.error("give --mlx-source and --mlx-build (or set MLX_SOURCE_ROOT and MLX_CPU_BUILD)")
    try:
        with tempfile.TemporaryDirectory(prefix="bench-moe-") as t:
            exes = build(args, Path(t))
            times = {v: [] for v in exes}
            for r in range(args.rounds):
                order = list(exes) if r % 2 == 0 else list(reversed(list(exes)))
                for v in order:
                    times[v] += one(exes[v], args.shape, args.repeat)
    except (GI.InputError, nb.BuildError, GI.StepFailed, native_cache.CompileFailed) as e:
        sys.exit(f"bench/moe.py: {e}")
    med = {v: statistics.median(ts) for v, ts in times.items()}
    T, D, F, E = args.shape
    flops = 3 * 2 * T * D * F
    print(f"cpus: {os.cpu_count()}  opt: {args.opt}  load average: {os.getloadavg()[0]:.2f}")
    print(f"shape: {T} tokens (sorted over {E} experts) x hidden {D} -> ffn {F}; "
          f"forward + dX + dW = {flops / 1e9:.2f} GFLOP per iteration")
    for v, ts in times.items():
        print(f"{v:9s} median {med[v] * 1e3:8.2f} ms  ({flops / med[v] / 1e9:.1f} GFLOP/s) over {len(ts)} "
              f"iterations [min {min(ts) * 1e3:.2f}, max {max(ts) * 1e3:.2f}]")
    ratio = med["patched"] / med["pristine"]
    best = min(times["patched"]) / min(times["pristine"])
    print(f"ratio patched / pristine: {ratio:.3f} of medians (target <= 1.05), {best:.3f} of minima")
    return 0 if ratio <= 1.05 else 1


if __name__ == "__main__":
    sys.exit(main())
