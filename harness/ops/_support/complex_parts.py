"""Complex input for ops that are real-linear in their differentiable operands
(gathers, scatter-adds, sets, slices, pads, cumulative sums; affine ones too): the float64
reference of such an op needs no complex arithmetic of its own.

A map y = L(x) + b that is linear (or affine, with a real constant b) with real
coefficients acts on real and imaginary parts separately,
f(x) = f(re x) + i (f(im x) - f(0)), and under MLX's convention
(vjp(f)(g) = conj(f'(z)) g, docs/checking.md) its VJP is L^T g with L^T real:
L^T(re g) + i L^T(im g). `by_parts` lifts an op's real reference and reference
VJP to complex operands that way; real operands take the real functions
unchanged. Integer operands (indices, starts) pass through untouched.

Only for ops that are affine in all differentiable operands jointly: an
ordering (sort, max), a product or a nonlinearity does not split by parts.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ...core.scenario import Scenario
from ...core.tensors import hashed_ints


def _is_complex(inp: dict, names) -> bool:
    return any(np.iscomplexobj(inp[n]) for n in names if n in inp)


def _part(inp: dict, names, take) -> dict:
    return {k: (take(np.asarray(v)) if k in names else v) for k, v in inp.items()}


def by_parts(reference, reference_vjp, differentiable: tuple) -> tuple:
    """(reference, reference_vjp) that also take complex differentiable operands."""
    def ref(inp, params):
        if not _is_complex(inp, differentiable):
            return reference(inp, params)
        re = np.asarray(reference(_part(inp, differentiable, np.real), params), dtype=np.float64)
        im = np.asarray(reference(_part(inp, differentiable, np.imag), params), dtype=np.float64)
        # an affine op (pad's numeric constant) adds its real constant b once: f(x) = L x + b
        b = np.asarray(reference(_part(inp, differentiable, lambda v: np.zeros(np.shape(v))), params), dtype=np.float64)
        return re + 1j * (im - b)

    def vjp(inp, g, params):
        g = np.asarray(g)
        if not _is_complex(inp, differentiable) and not np.iscomplexobj(g):
            return reference_vjp(inp, g, params)
        # L^T does not depend on the operands' values (linear), only on their shapes
        at = _part(inp, differentiable, np.real)
        re, im = reference_vjp(at, np.real(g), params), reference_vjp(at, np.imag(g), params)
        return {k: np.asarray(re[k], dtype=np.float64) + 1j * np.asarray(im[k], dtype=np.float64) for k in re}
    return ref, vjp


def complex_twin(s: Scenario, seed: int = 0) -> Scenario:
    """The same call with complex64 differentiable operands: each keeps its values
    as the real part (storage and views unchanged) and gets small-integer imaginary
    parts; an explicit cotangent gets an imaginary part too. A known defect of the
    real call is not assumed of the twin (no tags)."""
    info = s.info
    diff = set(info.differentiable) if info is not None else set(s.wrt)
    ops = {}
    for k, (name, t) in enumerate(s.operands.items()):
        ops[name] = _complexified(t, seed + 7 * k) if name in diff else t
    cot = s.cotangent
    if cot is not None:
        cot = _complexified(cot, seed + 101)
    return dataclasses.replace(s, name=f"{s.name}/complex64", operands=ops, cotangent=cot, fd_step=None,
                               defect_tags=())


def _complexified(t, seed: int):
    imag = hashed_ints((len(t.values),), seed, -3, 4)
    values = tuple((float(v), float(w)) for v, w in zip(t.values, imag))
    return dataclasses.replace(t, values=values, dtype="complex64")


def complex_op(info):
    """The op record taking complex input by parts (its reference and reference VJP
    lifted, `complex` set), its catalog extended by the complex twin of its first
    plain float32 scenario. For real-linear ops only (see the module text)."""
    ref, vjp = by_parts(info.reference, info.reference_vjp, tuple(info.differentiable))
    base = info.scenarios

    def scenarios():
        out = list(base())
        plain = next((s for s in out if not s.defect_tags and s.objective == "vjp"
                      and all(t.dtype == "float32" for n, t in s.operands.items() if n in info.differentiable)),
                     None)
        return out + ([complex_twin(s)] if plain is not None and (s := plain) else [])
    return dataclasses.replace(info, reference=ref, reference_vjp=vjp, complex=True, scenarios=scenarios)
