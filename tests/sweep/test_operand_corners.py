"""Integer and bool operands in the sweep's corners: every dtype MLX may take for an
operand that is not differentiated (index types their bound fits, conditions), float
operands given as integers or bools, and casts to integer types, whose straight-through
gradient (a registered MLX defect) the sweep must see."""
from __future__ import annotations

import numpy as np
import pytest

from mlx_vjpcheck.sweep import api, corners, derive


def _entry(name, variant=""):
    return next(e for e in api.ENTRIES if e.name == name and e.variant == variant)


def test_index_operands_come_in_every_integer_type_their_bound_fits():
    small = api.Entry("t", lambda x, i: x, (api.Arg((3,)), api.Arg((2,), api.INDEX, "int32", 4)))
    big = api.Entry("t", lambda x, i: x, (api.Arg((3,)), api.Arg((2,), api.INDEX, "int32", 200)))
    names = {c.name for c in corners.corners(small)}
    assert {f"operand-{t}-arg1" for t in corners.INDEX_DTYPES} <= names
    assert "operand-int8-arg1" not in {c.name for c in corners.corners(big)}   # 199 > 127
    assert "operand-uint8-arg1" in {c.name for c in corners.corners(big)}


def test_a_condition_and_a_float_operand_of_several_are_cast_a_unary_is_not():
    where = {c.name for c in corners.corners(_entry("mx.where"))}
    assert {"operand-int32-arg0", "operand-uint8-arg0", "operand-float32-arg0"} <= where
    add = {c.name for c in corners.corners(_entry("mx.add"))}
    assert {f"operand-{t}-arg{i}" for t in corners.OPERAND_DTYPES for i in (0, 1)} <= add
    assert not [c for c in corners.corners(_entry("mx.sin")) if c.casts]


@pytest.mark.parametrize("t", ["int32", "uint8", "bool"])
def test_a_cast_operand_has_its_dtype_and_stays_in_its_domain(t):
    e = _entry("mx.power")
    c = next(c for c in corners.corners(e) if c.name == f"operand-{t}-arg0")
    case = corners.case(e, c, np.random.default_rng(0))
    assert case.inputs[0].dtype == np.dtype(t) and case.inputs[1].dtype == np.float64
    if t != "bool":
        assert np.all(case.inputs[0] >= 1)   # power's base is positive


def test_corner_class_of_an_operand_corner_names_its_dtype():
    assert derive.corner_class("operand-uint8-arg1") == "operand-uint8"


def test_the_sweep_sees_a_cast_to_int_pass_the_gradient_through():
    pytest.importorskip("mlx.core")
    from mlx_vjpcheck.sweep import measure
    rec = measure.one("mx.astype[via-int32]", "generic", 0)
    assert rec["status"] == "fail"
    assert {"vjp", "jvp"} <= {c["transform"] for c in rec["checks"] if c["status"] == "fail"}
    rec = measure.one("mx.add", "operand-int32-arg1", 0)
    assert rec["status"] == "pass", rec


def test_indices_into_a_dimension_a_corner_shrinks_stay_inside_it():
    """take_along_axis(x, i, axis=1) with x's axis 1 cut to 1: every index 0 (an index past
    the end is undefined in MLX, not a gradient question); cut to 0: no index at all."""
    e = _entry("mx.take_along_axis")
    rng = np.random.default_rng(0)
    one = next(c for c in corners.corners(e) if c.name == "size1-arg0-dim1")
    assert np.all(corners.case(e, one, rng).inputs[1] == 0)
    zero = next(c for c in corners.corners(e) if c.name == "size0-arg0-dim1")
    assert corners.case(e, zero, rng).inputs[1].shape == (3, 0)
    generic = corners.case(e, corners.corners(e)[0], rng)
    assert generic.inputs[1].max() > 0


def test_a_distribution_stays_one_along_the_axis_the_function_sees_under_every_view():
    """cross_entropy's probability targets sum to 1 per row of what the loss is given (its
    max shift cancels only then), whatever view the corner takes of the base."""
    mx = pytest.importorskip("mlx.core")
    e = _entry("nn.losses.cross_entropy", "probabilities")
    for v in corners.VIEWS:
        c = next(c for c in corners.corners(e) if c.name == f"view-{v}")
        seen = np.array(corners._take_view(mx.array(corners.case(e, c, np.random.default_rng(0)).inputs[1]), v))
        assert seen.shape == (3, 4) and np.allclose(seen.sum(-1), 1)
