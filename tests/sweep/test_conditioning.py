"""The sweep's conditioning bound for a running log-sum (logcumsumexp at large inputs):
stated, earned from the inputs' size and the scan's length, given to no other entry,
and never wide enough to pass a wrong rule."""
from __future__ import annotations

import numpy as np
import pytest

from mlx_vjpcheck.sweep import api, corners, measure

ENTRY = next(e for e in api.ENTRIES if e.name == "mx.logcumsumexp")


def _case(entry, fill):
    corner = next(c for c in corners.corners(entry) if c.name == fill)
    return corners.case(entry, corner, np.random.default_rng(0))


def test_bound_only_at_large_inputs_and_only_for_a_log_sum_scan():
    assert measure.conditioning(ENTRY, _case(ENTRY, "generic"), "float32") == (None, "")
    tols, why = measure.conditioning(ENTRY, _case(ENTRY, "fill-large"), "float32")
    big = float(np.max(np.abs(_case(ENTRY, "fill-large").inputs[0])))
    eps = 5 * 2.0 ** -24 * (big + np.log(4))
    assert tols == {"float32": (eps, eps)} and "conditioning" in why
    other = next(e for e in api.ENTRIES if e.name == "mx.cumsum")
    assert measure.conditioning(other, _case(other, "fill-large"), "float32") == (None, "")


def test_a_rule_off_by_more_than_the_bound_still_fails_there():
    mx = pytest.importorskip("mlx.core")
    from mlx_vjpcheck import gradcheck
    case = _case(ENTRY, "fill-large")
    tols, _ = measure.conditioning(ENTRY, case, "float32")

    @mx.custom_function
    def f(x):
        return mx.logcumsumexp(x, axis=1)

    @f.vjp
    def f_vjp(x, cot, out):
        return 1.05 * mx.vjp(lambda x: mx.logcumsumexp(x, axis=1), [x], [cot])[1][0]
    x = mx.array(case.inputs[0].astype(np.float32))
    report = gradcheck(f, (x,), tolerances=tols, transforms=("vjp",), raise_exception=False, shrink=0)
    assert not report.passed
    right = gradcheck(lambda x: mx.logcumsumexp(x, axis=1), (x,), tolerances=tols,
                      transforms=("vjp", "jvp", "identity"), raise_exception=False, shrink=0)
    assert right.passed, right.message()
