"""The checked function as a flat problem: differentiable leaves in, floating outputs out.

`inputs` are fn's positional arguments; each may be a pytree of dicts, lists
and tuples (as mx.grad accepts). A leaf is differentiable when it is an
mx.array or a NumPy array of a floating or complex dtype; anything else (an
integer array, a Python number, a string) is passed through unchanged. An
mlx.nn.Module's trainable parameters are leaves too, named `model.<dotted
path>` as `tree_flatten` spells them, and handed to the module with
`update` for each call, as nn.value_and_grad does. Leaves are named by their
pytree path (`inputs[0]['w']`), outputs likewise (`out`, `out[1]`,
`out['loss']`); non-floating outputs are not checked.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

FLOATING = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def dtype_name(x) -> str:
    return str(x.dtype).rsplit(".", 1)[-1]


def _is_leaf(x) -> bool:
    import mlx.core as mx
    return isinstance(x, (mx.array, np.ndarray)) and dtype_name(x) in FLOATING


def _key(k) -> str:
    return f"[{k!r}]"


def split(tree, path: str):
    """([(path, leaf)], build) where build(new leaves) gives the tree with them in place."""
    if isinstance(tree, dict):
        parts = [(k, split(v, path + _key(k))) for k, v in tree.items()]
        leaves = [leaf for _, (ls, _) in parts for leaf in ls]
        return leaves, _builder(parts, lambda kv: dict(kv))
    if isinstance(tree, (list, tuple)):
        parts = [(i, split(v, path + f"[{i}]")) for i, v in enumerate(tree)]
        leaves = [leaf for _, (ls, _) in parts for leaf in ls]
        kind = type(tree)
        return leaves, _builder(parts, lambda kv: kind(v for _, v in kv))
    if _is_leaf(tree):
        return [(path, tree)], lambda vals: vals[0]
    return [], lambda vals: tree


def _builder(parts, make):
    counts = [len(ls) for _, (ls, _) in parts]

    def build(vals):
        out, at = [], 0
        for (k, (_, sub)), n in zip(parts, counts):
            out.append((k, sub(vals[at:at + n])))
            at += n
        return make(out)
    return build


def outputs(tree, path: str = "out") -> list:
    """[(path, array)] of the floating mx.array outputs, in pytree order."""
    import mlx.core as mx
    leaves, _ = split(tree, path)
    return [(p, x) for p, x in leaves if isinstance(x, mx.array)]


@dataclass
class Problem:
    """fn with its differentiable leaves pulled out: `call(arrays)` -> flat output list."""
    fn: object
    paths: list
    values: list          # the leaves as given (mx or NumPy arrays)
    build: object         # leaves -> (args, params or None)
    module: object = None
    out_paths: list = field(default_factory=list)

    def call(self, arrays: list) -> list:
        args, params = self.build(list(arrays))
        if self.module is None:
            out = self.fn(*args)
        else:
            self.module.update(params)
            out = self.module(*args)
        got = outputs(out)
        self.out_paths = [p for p, _ in got]
        return [x for _, x in got]

    def restore(self) -> None:
        """Puts the module's own parameters back (each call installs the checked ones)."""
        if self.module is not None:
            _, params = self.build(list(self.values))
            self.module.update(params)


def problem(fn, inputs) -> Problem:
    import mlx.nn as nn
    module = fn if isinstance(fn, nn.Module) else None
    leaves, build_args = split(tuple(inputs), "inputs")
    if module is None:
        return Problem(fn, [p for p, _ in leaves], [x for _, x in leaves],
                       lambda vals: (build_args(vals), None))
    from mlx.utils import tree_flatten, tree_unflatten
    flat = [(k, v) for k, v in tree_flatten(module.trainable_parameters()) if _is_leaf(v)]
    n = len(flat)

    def build(vals):
        params = tree_unflatten([(k, v) for (k, _), v in zip(flat, vals[:n])])
        return build_args(vals[n:]), params
    return Problem(fn, [f"model.{k}" for k, _ in flat] + [p for p, _ in leaves],
                   [v for _, v in flat] + [x for _, x in leaves], build, module)
