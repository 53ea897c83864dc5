"""From the defect register (cases/defects.json): gradcheck, applied as a user would to
a plain function calling the op, catches the registered classes that show at first
order, second order, vmap or forward mode (a representative subset, one per op).

Each class is first confirmed present in the installed MLX by its own reproducer
(probes/findings/<id>.py exits 1); a class MLX has fixed is skipped. The values are
simple generic ones (the catalog's views, strides and exact integers are not needed:
gradcheck's point of view is a user's function, not a layout).

Not caught, and why (asserted to pass, so a change in either shows here):
* full__value_scaled_second_order: the catalog's objective differentiates <u, J^T g>
  with respect to the cotangent g as well; gradcheck's order 2 differentiates the
  gradient function with respect to the inputs only.
* logcumsumexp__second_order_zero_cotangent: needs a cotangent with zeros; gradcheck's
  cotangents are random.
Reported as unsupported (a raise where the plain call works, stated, not a failure):
* custom_function__checkpoint_vmap: vmap of the VJP of mx.checkpoint raises.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT

mx = pytest.importorskip("mlx.core")

from mlx_vjpcheck import gradcheck  # noqa: E402

U = mx.uint32
RNG = np.random.default_rng(29)


def c64(*v):
    return mx.array(np.array(v, np.complex64))


def r(*shape):
    return mx.array(RNG.uniform(-2, 2, shape).astype(np.float32))


def cases() -> dict:
    """id -> (fn, inputs, options): the op called plainly, at generic values."""
    return {
        "gather_mm__left_selection": (
            lambda a, b: mx.gather_mm(a, b, lhs_indices=mx.array([0, 0], U), sorted_indices=True),
            (mx.array([2.0, 7.0]).reshape(2, 1, 1), mx.array([3.0, 5.0]).reshape(2, 1, 1)), ("vjp",), 1),
        "gather_mm__broadcast_tail": (
            lambda back, b: mx.gather_mm(back[:1], b, rhs_indices=mx.array([0, 1, 2], U), sorted_indices=True),
            (r(3, 1, 1), r(3, 1, 1)), ("vjp",), 1),
        "full__value_scaled": (lambda v: mx.full((3,), v), (mx.array(2.0),), ("vjp",), 1),
        "abs__complex_sign_zero_grad": (mx.abs, (c64(1 + 2j, -0.5 + 0.25j, 2 - 1j),), ("vjp",), 2),
        "addmm__jvp_ignores_scale": (lambda c, a, b: mx.addmm(c, a, b, alpha=-1.0, beta=0.0),
                                     (r(2, 2), r(2, 3), r(3, 2)), ("jvp",), 1),
        "cumprod__zero_second_order": (lambda a: mx.cumprod(a, axis=1, inclusive=False),
                                       (mx.array([[0.0], [3.0]]),), ("vjp",), 2),
        "power__complex_power_unconjugated": (mx.power, (c64(1 + 0.5j, 0.75 - 0.25j), c64(0.5 - 0.25j, 1.25 + 0.5j)),
                                              ("vjp",), 1),
        "hadamard_transform__untransposed_factor": (mx.hadamard_transform, (r(1, 20),), ("vjp",), 1),
        "slice_update__vmap_unbatched_update": (lambda a, u: mx.slice_update(a, u, mx.array([3], U), axes=[1]),
                                                (r(4, 5), r(2)), ("vmap",), 1),
        "prod__complex_scan_conjugate": (lambda a: mx.prod(a, axis=1),
                                         (c64(-3 + 2j, 3 + 2j, -3, 1 + 1j, -2, -2 + 1j).reshape(2, 3),), ("vjp",), 2),
        "cumprod__complex_scan_conjugate": (lambda a: mx.cumprod(a, axis=0), (c64(1 + 2j, 2 - 1j, -1 + 1j, 1 - 2j),),
                                            ("vjp",), 1),
        "divmod__divmod_remainder_zero_grad": (lambda a, b: mx.divmod(a, b)[1], (mx.array(0.5), mx.array(-2.0)),
                                               ("vjp",), 1),
        "irfft__odd_length_jvp": (lambda a: mx.fft.irfft(a, n=5, axis=-1), (r(2, 4),), ("jvp",), 1),
        "full__value_scaled_second_order": (lambda v: mx.full((), v), (mx.array(1.0),), ("vjp",), 2),
        "logcumsumexp__second_order_zero_cotangent": (lambda a: mx.logcumsumexp(a, axis=0),
                                                      (mx.array([1.0, 2.0, 3.0]),), ("vjp",), 2),
        "custom_function__checkpoint_vmap": (mx.checkpoint(lambda a, b: mx.sin(a) * b), (r(2, 3), r(2, 3)),
                                             ("vmap",), 1),
    }


NOT_CAUGHT = {"full__value_scaled_second_order", "logcumsumexp__second_order_zero_cotangent"}
UNSUPPORTED = {"custom_function__checkpoint_vmap"}
REGISTER = {d["id"]: d for d in json.loads((ROOT / "harness" / "cases" / "defects.json").read_text())["defects"]}


def present(defect_id: str) -> bool:
    p = subprocess.run([sys.executable, str(ROOT / "probes" / "findings" / f"{defect_id}.py")],
                       capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 1):
        pytest.skip(f"its reproducer cannot test here (exit {p.returncode})")
    return p.returncode == 1


@pytest.mark.parametrize("defect_id", sorted(cases()))
def test_gradcheck_catches_the_registered_class(defect_id):
    assert defect_id in REGISTER
    if not present(defect_id):
        pytest.skip("the installed MLX does not have this defect")
    fn, inputs, transforms, order = cases()[defect_id]
    report = gradcheck(fn, inputs, order=order, transforms=transforms, raise_exception=False, shrink=0)
    if defect_id in NOT_CAUGHT:
        assert report.passed, report.message()
        return
    if defect_id in UNSUPPORTED:
        assert [c for c in report.checks if c.status == "unsupported"], report.message()
        return
    assert not report.passed, report.message()
    wanted = {"vjp": "vjp", "jvp": "jvp", "vmap": "vmap"}[transforms[0]]
    assert any(wanted in c.transform and (order == 1 or c.transform.startswith("order 2"))
               for c in report.failures), report.message()


def test_the_subset_spans_the_register_kinds():
    kinds = {REGISTER[i]["transform"] for i in cases()}
    assert {"", "second_order", "vmap", "forward_mode"} <= kinds
