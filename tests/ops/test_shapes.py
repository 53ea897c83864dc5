"""The shape ops (harness/ops/shapes.py): numpy's forwards and the copy-map VJP
against float64 differences and by hand, planted wrong rules (a transpose that
does not invert its permutation, gradients wrong only for a 0-d, a zero-size or
a strided operand) caught by the catalog, and the pinned MLX verdicts: only the
empty negative-step slice fails."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck import ops
from mlx_vjpcheck.ops import shapes

NAMES = [op.name for op in shapes.TABLE]


def _vjp(name, inputs, g, params):
    info = ops.get(name)
    inputs = {k: np.asarray(v, dtype=float) for k, v in inputs.items()}
    return info.reference(inputs, params), info.reference_vjp(inputs, np.asarray(g, dtype=float), params)


def test_copy_vjp_by_hand():
    y, d = _vjp("broadcast_to", {"a": [1, 2]}, [[1, 2], [10, 20], [100, 200]], {"shape": [3, 2]})
    assert y.tolist() == [[1, 2]] * 3 and d["a"].tolist() == [111, 222]
    y, d = _vjp("slicing", {"a": [1, 2, 3, 4, 5]}, [7, 8], {"index": [[4, 0, -3]]})
    assert y.tolist() == [5, 2] and d["a"].tolist() == [0, 8, 0, 0, 7]
    _, d = _vjp("concatenate", {"a": [[1, 2]], "b": [[3, 4], [5, 6]]}, [[1, 2], [3, 4], [5, 6]], {"axis": 0})
    assert d["a"].tolist() == [[1, 2]] and d["b"].tolist() == [[3, 4], [5, 6]]
    _, d = _vjp("split", {"a": [1, 2, 3, 4]}, [10, 20], {"sections": [1, 3], "axis": 0, "pick": 1})
    assert d["a"].tolist() == [0, 10, 20, 0]
    _, d = _vjp("transpose", {"a": np.arange(6).reshape(1, 2, 3)}, np.arange(6).reshape(3, 1, 2) * 10,
                {"axes": [2, 0, 1]})
    assert d["a"].tolist() == np.transpose(np.arange(6).reshape(3, 1, 2) * 10, (1, 2, 0)).tolist()


@pytest.mark.parametrize("name", NAMES)
def test_reference_vjp_agrees_with_differences(name):
    compared, wrong = B.against_differences(name)
    assert compared >= 3 and wrong == [], (compared, wrong)


def test_every_op_has_rank0_or_zero_size_and_view_scenarios():
    for name in NAMES:
        scen = [s for s in ops.get(name).catalog_scenarios()]
        assert any(B.zero_size(s, n) for s in scen for n in s.operands), name
        assert any(t.views for s in scen for t in s.operands.values()), name
        assert {t.dtype for s in scen for t in s.operands.values()} >= {"float32", "float16", "bfloat16",
                                                                         "complex64"}, name


# --- planted wrong rules -----------------------------------------------------------------------------

def _uninverted_transpose(ctx):
    """The cotangent permuted by the forward's axes instead of their inverse."""
    axes = ctx.params.get("axes")
    return {"a": np.transpose(ctx.cot, None if axes is None else tuple(axes))}


MUTANTS = {
    ("transpose", "uninverted_permutation"): _uninverted_transpose,
    ("reshape", "wrong_only_for_rank0"): B.scaled_where(B.rank0),
    ("concatenate", "wrong_only_for_zero_size"): B.wrong_shape_where(B.zero_size),
    ("slicing", "wrong_only_for_strided"): B.scaled_where(B.strided),
    ("broadcast_to", "wrong_only_in_bfloat16"): B.scaled_where(B.in_dtype("bfloat16")),
    ("stack", "plain"): B.scaled_where(lambda s, n: n == "b", -1.0),
}


@pytest.mark.parametrize("key", sorted(MUTANTS))
def test_mutant_is_caught(key):
    op, _ = key
    assert B.first_order_caught(op, MUTANTS[key], first_only=True), key


@pytest.mark.parametrize("op", ["transpose", "slicing", "concatenate"])
def test_the_true_rule_planted_the_same_way_passes(op):
    assert B.first_order_control(op) == []


@needs_pinned_mlx()
@pytest.mark.parametrize("name", NAMES)
def test_pinned_mlx_fails_exactly_the_tagged_scenarios(name):
    failing, tagged = B.pinned_verdicts(name)
    assert failing == tagged, (failing, tagged)
    if name == "slicing":
        assert tagged == {"slicing/defect/empty_negative_step", "slicing/defect/empty_negative_step/zero_size"}
    else:
        assert tagged == set()
