"""Device selection, in one place (after mlx_tests.py: one environment variable).

MLX_VJPCHECK_DEVICE=cpu|gpu|all picks the devices when --device is not given.
"gpu" means whatever accelerator backend this MLX build has: Metal or CUDA.
"""
from __future__ import annotations

import os

ENV_VAR = "MLX_VJPCHECK_DEVICE"
KNOWN = ("cpu", "gpu")


class DeviceError(RuntimeError):
    """A device that was asked for cannot be used here (exit 2)."""


def available() -> list:
    import mlx.core as mx
    return ["cpu"] + (["gpu"] if mx.is_available(mx.gpu) else [])


def backend(device: str) -> str:
    """Name the backend actually behind a device, for the evidence record."""
    import mlx.core as mx
    if device == "cpu":
        return "cpu"
    if getattr(mx, "metal", None) is not None and mx.metal.is_available():
        return "metal"
    cuda = getattr(mx, "cuda", None)
    if cuda is not None and getattr(cuda, "is_available", lambda: False)():
        return "cuda"
    return "gpu"


def skipped(chosen: list) -> dict:
    """Devices not run, each with the reason, for the evidence record."""
    reasons = {}
    if "gpu" not in chosen:
        reasons["gpu"] = ("not requested" if "gpu" in available()
                          else "no Metal or CUDA backend in this MLX build")
    return reasons


def resolve(requested: str | None) -> list:
    requested = requested or os.environ.get(ENV_VAR) or "all"
    have = available()
    if requested == "all":
        return have
    if requested not in KNOWN:
        raise DeviceError(f"unknown device {requested!r}: use cpu, gpu or all")
    if requested not in have:
        raise DeviceError(f"device {requested!r} is not available in this MLX build "
                          f"(available: {', '.join(have)})")
    return [requested]


def select(device: str) -> None:
    import mlx.core as mx
    mx.set_default_device(mx.gpu if device == "gpu" else mx.cpu)
