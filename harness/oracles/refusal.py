"""refusal: an error input (OpInfo.error_inputs), which MLX's forward refuses, is
refused by the VJP too, however the VJP was built (one that never evaluates the
forward's kernel can return gradients for a call the forward refuses).
running/execute.py measures it (an error input takes its own path there: the
forward must refuse it first); a VJP that kills the process is the record's
own crash."""
from __future__ import annotations

import numpy as np

from ..core import checks, layout
from . import bridge, recheck
from .base import Oracle


def vjp_refused(s, call, y) -> dict:
    """refusal:vjp: observed 1 when the VJP raised (or could not be built), against 1."""
    mx = bridge.mx()
    try:
        if call is None:
            raise ValueError("the call cannot be built")
        cot = call.cotangent(layout.logical(s.cotangent)) if s.cotangent is not None else \
            mx.ones(y.shape if y is not None else (), dtype=y.dtype if y is not None else getattr(mx, s.dtype))
        _, grads = mx.vjp(call, call.primals, [cot])
        mx.eval(grads)
    except Exception:
        return checks.compare("refusal:vjp", np.array(1.0), np.array(1.0), 0.0, 0.0, kind="refusal")
    return checks.compare("refusal:vjp", np.array(0.0), np.array(1.0), 0.0, 0.0, kind="refusal")


ORACLE = Oracle("refusal", "an error input (OpInfo.error_inputs), which MLX's forward refuses, is refused by the "
                           "VJP too (a crash there is the record's own); one VJP an error input, everywhere",
                ("refusal",), ("run", "fuzz", "gate", "validator"), None, recheck.self_consistent, confirms=True,
                first_order=True, gradient=lambda check, wrt: "vjp", symptom="accepts-refused-input")
