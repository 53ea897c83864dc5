#!/usr/bin/env python3
"""gradcheck speed against issue 29's targets (figures, not timed tests).

    python bench/gradcheck.py [--repeat 3]

* full: a function of a 100-element input (sum of tanh(x) exp(0.3 x) sin(x)
  and a 100-vector output), every transform, first order, float32 against
  float64, full mode (element by element). Target: <= 2 s on 2 cores.
* fast: an MLP of about 100k parameters (256 -> 256 -> 128 -> 64, tanh, batch
  8), vjp + jvp + vmap + compile, float32 against float64, fast mode (random
  projections). Target: <= 10 s.

Each figure is the best of --repeat runs after a warm-up run (mx.compile's
first compilation of a graph, which MLX caches, is not the checker's cost);
the warm-up's time is printed too. The machine's load average is printed
beside the figures: other processes share the cores, so a loaded machine
gives slower figures than the targets assume.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _full_case():
    import mlx.core as mx
    import numpy as np
    x = mx.array(np.random.default_rng(0).uniform(-2, 2, 100).astype(np.float32))
    return (lambda x: [mx.sum(mx.tanh(x) * mx.exp(0.3 * x)), mx.sin(x) * x]), (x,), \
        dict(transforms=("vjp", "jvp", "identity", "vmap", "compile"), fast=False)


def _fast_case():
    import mlx.core as mx
    import mlx.nn as nn
    mx.random.seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 128), nn.Tanh(), nn.Linear(128, 64))
    mx.eval(model.parameters())
    n = sum(v.size for _, v in __import__("mlx.utils").utils.tree_flatten(model.parameters()))
    x = mx.random.normal((8, 256))
    mx.eval(x)
    return model, (x,), dict(transforms=("vjp", "jvp", "vmap", "compile"), fast=True), n


def _time(fn, inputs, kw, repeat: int) -> tuple:
    from mlx_vjpcheck import gradcheck
    t = time.perf_counter()
    report = gradcheck(fn, inputs, raise_exception=False, **kw)
    first = time.perf_counter() - t
    best = min(_once(gradcheck, fn, inputs, kw) for _ in range(repeat))
    return first, best, report


def _once(gradcheck, fn, inputs, kw) -> float:
    t = time.perf_counter()
    gradcheck(fn, inputs, raise_exception=False, **kw)
    return time.perf_counter() - t


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    import mlx.core as mx
    print(f"mlx {mx.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()} (other processes share them)")
    fn, inputs, kw = _full_case()
    first, best, report = _time(fn, inputs, kw, args.repeat)
    print(f"full mode, 100 elements, all transforms: {best:.2f} s (first run {first:.2f} s; target 2 s); "
          f"{len(report.checks)} checks, passed={report.passed}; load {os.getloadavg()[0]:.2f}")
    model, inputs, kw, n = _fast_case()
    first, best, report = _time(model, inputs, kw, args.repeat)
    print(f"fast mode, MLP of {n} parameters, vjp+jvp+vmap+compile: {best:.2f} s (first run {first:.2f} s; "
          f"target 10 s); {len(report.checks)} checks, passed={report.passed}; load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
