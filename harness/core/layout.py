"""Turn a scenario Tensor into its logical value (numpy only).

The same view list is replayed with mlx ops by the executor, so MLX sees a
genuine view onto the storage while the reference sees only the logical value.
A complex tensor's values are [re, im] pairs (core/tensors.py); asked for a
floating array, it comes back complex128.
"""
from __future__ import annotations

import numpy as np

VIEW_OPS = ("slice", "transpose", "reshape", "broadcast_to", "expand_dims")
COMPLEX = ("complex64",)


def storage(t, dtype=np.float64) -> np.ndarray:
    if t.dtype in COMPLEX:
        return _complex_storage(t, dtype)
    arr = np.asarray(t.values, dtype=dtype)
    if arr.size != int(np.prod(t.shape, dtype=np.int64)):
        raise ValueError(f"{arr.size} values do not fill shape {tuple(t.shape)}")
    return arr.reshape(tuple(t.shape))


def _complex_storage(t, dtype) -> np.ndarray:
    if not np.issubdtype(np.dtype(dtype), np.floating) and not np.issubdtype(np.dtype(dtype), np.complexfloating):
        raise ValueError(f"a {t.dtype} tensor has no {np.dtype(dtype).name} value")
    n = int(np.prod(t.shape, dtype=np.int64))
    pairs = np.asarray(t.values, dtype=np.float64).reshape(-1, 2) if len(t.values) else np.zeros((0, 2))
    if pairs.shape != (n, 2):
        raise ValueError(f"{len(t.values)} values are not {n} [re, im] pairs of shape {tuple(t.shape)}")
    return (pairs[:, 0] + 1j * pairs[:, 1]).reshape(tuple(t.shape))


def slices(view) -> tuple:
    return tuple(slice(*spec) for spec in view["index"])


def apply_view(arr, view, xp=np):
    op = view["op"]
    if op == "slice":
        return arr[slices(view)]
    if op == "transpose":
        return xp.transpose(arr, tuple(view["axes"]))
    if op == "reshape":
        return xp.reshape(arr, tuple(view["shape"]))
    if op == "broadcast_to":
        return xp.broadcast_to(arr, tuple(view["shape"]))
    if op == "expand_dims":   # a singleton axis inserted (x[:, None, :]): a stride MLX must not misread
        return xp.expand_dims(arr, int(view["axis"]))
    raise ValueError(f"unknown view op {op!r} (known: {', '.join(VIEW_OPS)})")


def logical(t, dtype=np.float64) -> np.ndarray:
    arr = storage(t, dtype)
    for view in t.views:
        arr = apply_view(arr, view)
    return np.array(arr, dtype=arr.dtype)  # a contiguous copy: the reference never sees storage
