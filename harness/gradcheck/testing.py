"""pytest helper: the same gradcheck over dtypes and devices.

    @parametrize_dtypes(("float32", "float16"))
    def test_mine(gradcheck_options):
        gradcheck(f, (x,), **gradcheck_options)

gives one test per dtype and device (ids like `float16-cpu`); the GPU cases
are skipped where MLX has no GPU.
"""
from __future__ import annotations


def parametrize_dtypes(dtypes=("float32", "float16", "bfloat16"), devices=("cpu", "gpu"),
                       argname: str = "gradcheck_options"):
    import pytest
    cases = []
    for device in devices:
        for dtype in dtypes:
            marks = [pytest.mark.skipif(device == "gpu" and not _has_gpu(), reason="no MLX GPU here")]
            cases.append(pytest.param({"dtypes": (dtype,), "device": device}, id=f"{dtype}-{device}",
                                      marks=marks))
    return pytest.mark.parametrize(argname, cases)


def _has_gpu() -> bool:
    try:
        import mlx.core as mx
        return bool(mx.metal.is_available()) if hasattr(mx, "metal") else False
    except Exception:   # no mlx, or a build without GPU support
        return False
