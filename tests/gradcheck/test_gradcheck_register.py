"""From the defect register (cases/defects.json): gradcheck, applied as a user would to
a plain function calling the op at the register's minimal input (register_plain.py),
catches every registered class that shows at first order, second order, vmap or
forward mode, with no list of the classes written here: a class added to the register
is checked by itself.

Caught means: a failure (a wrong value or shape, or a derivative that raises where the
function works), or, where MLX says it has no rule ("Not implemented"), the report's
"unsupported" line naming it; a class that kills the process does so in a child process
running gradcheck (gradcheck runs in the caller's process: a crash is not a report).

Left out, each for its reason:
* the classes of a wrong forward value (the register's transform "forward", and
  FORWARD_VALUE below): the gradient agrees with the wrong forward, and gradcheck checks
  derivatives of fn, not fn's values (the catalog's float64 reference does);
* OVERRIDES: the class's plain call has no floating output to differentiate (not_equal
  returns bool): the user's function selects with it instead.

A class the installed MLX no longer has (its reproducer probes/findings/<id>.py exits
0) is skipped when gradcheck passes.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT

mx = pytest.importorskip("mlx.core")

import register_plain  # noqa: E402
from mlx_vjpcheck.cases import register  # noqa: E402

FORWARD_VALUE = {
    "hadamard_transform__complex_input_cast_to_real":
        "the forward drops the imaginary part; the VJP is right for the function it computes",
}


def _not_equal():
    a = mx.array(np.array([[2.0], [-2.0], [-3.0]], np.float32))
    return (lambda b: mx.where(mx.not_equal(a, b), a, -b)), (mx.array([-1.5, -2.5, -2.5, -0.5]),)


OVERRIDES = {"not_equal__not_equal_vmap_out_axes": _not_equal}
REGISTER = [d for d in register.load() if d.kind != "sweep"]   # the catalog's classes (the sweep's have no scenario)
CHECKED = [d for d in REGISTER if d.transform in register_plain.ASK and d.id not in FORWARD_VALUE]


def present(defect_id: str) -> bool:
    p = subprocess.run([sys.executable, str(ROOT / "probes" / "findings" / f"{defect_id}.py")],
                       capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 1):
        pytest.skip(f"its reproducer cannot test here (exit {p.returncode})")
    return p.returncode == 1


def caught(report) -> bool:
    return not report.passed or any(c.status == "unsupported" and "not implemented" in c.detail.lower()
                                    for c in report.checks)


@pytest.mark.parametrize("defect", [d for d in CHECKED if not d.isolate], ids=lambda d: d.id)
def test_gradcheck_catches_the_registered_class(defect):
    fn, inputs = OVERRIDES[defect.id]() if defect.id in OVERRIDES else (None, None)
    report = register_plain.check(defect, fn, inputs)
    if not caught(report) and not present(defect.id):
        pytest.skip("the installed MLX does not have this defect")
    assert caught(report), report.message()
    # the failure is where the register says the class shows
    order = 2 if defect.transform == "second_order" else 1
    assert any(c.transform.startswith("order 2") == (order == 2) for c in report.checks
               if c.status in ("fail", "unsupported")), report.message()


@pytest.mark.parametrize("defect", [d for d in CHECKED if d.isolate], ids=lambda d: d.id)
def test_gradcheck_dies_on_the_registered_crash(defect):
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "gradcheck" / "register_plain.py"), defect.id],
                       capture_output=True, text=True, timeout=300, cwd=ROOT / "tests" / "gradcheck")
    if p.returncode >= 0 and not present(defect.id):
        pytest.skip("the installed MLX does not have this defect")
    assert p.returncode < 0, f"exit {p.returncode}: {p.stdout[-2000:]}{p.stderr[-2000:]}"


def test_every_class_is_checked_or_left_out_for_a_stated_reason():
    left = {d.id for d in REGISTER} - {d.id for d in CHECKED}
    assert left == {d.id for d in REGISTER if d.transform == "forward"} | set(FORWARD_VALUE)
    assert set(FORWARD_VALUE) <= {d.id for d in REGISTER} and set(OVERRIDES) <= {d.id for d in CHECKED}
    kinds = {d.transform for d in CHECKED}
    assert {"", "second_order", "vmap", "forward_mode"} <= kinds


def test_a_right_call_passes():
    """Negative control of the harness above: the same plain call of an op MLX gets right
    (the register's first class, its op swapped for a correct rule) is not caught."""
    defect = next(d for d in CHECKED if d.id == "full__value_scaled")
    report = register_plain.check(defect, lambda v: mx.broadcast_to(v, (3,)) * 1.0, (mx.array(2.0),))
    assert report.passed and not caught(report), report.message()
