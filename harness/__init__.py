"""mlx-vjpcheck: differential gradient checks for MLX, against float64 references.

Installed as `mlx_vjpcheck` (the source folder is `harness/`). The folders are
the stages; see harness/README.md. The public surface is small: the scenario
and tensor records, the op record, and `check`, which runs scenarios in
crash-isolated workers and returns results records; and `gradcheck(fn,
inputs)` with `GradcheckError`, which check any MLX function's gradients
(mlx_vjpcheck.gradcheck). The op registry is
`mlx_vjpcheck.ops`, the catalog `mlx_vjpcheck.cases.catalog`.
"""

__version__ = "0.2.1"

__all__ = ["__version__", "Scenario", "Tensor", "OpInfo", "check", "gradcheck", "GradcheckError"]

_LAZY = {"Scenario": ("core.scenario", "Scenario"), "Tensor": ("core.scenario", "Tensor"),
         "OpInfo": ("core.opinfo", "OpInfo"), "check": ("running.runner", "run"),
         "gradcheck": ("gradcheck.api", "gradcheck"), "GradcheckError": ("gradcheck.report", "GradcheckError")}


def __getattr__(name):
    # Lazy, so `import mlx_vjpcheck` pulls in neither numpy nor mlx.
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    module, attr = _LAZY[name]
    return getattr(importlib.import_module(f".{module}", __name__), attr)
