"""An error input that this build's forward accepts (a patch widened the op) is
judged as an ordinary call: its VJP must work and be right; the record says so."""
from __future__ import annotations

import pytest

from conftest import needs_pinned_mlx
from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.core import opinfo
from mlx_vjpcheck.oracles import bridge
from mlx_vjpcheck.running import devices, execute

pytest.importorskip("mlx.core")


def _error_input():
    # the unsorted call: on the sorted path 0.32.4's own gather defects would show once it runs
    return next(s for s in catalog.catalog() if s.op == "gather_mm" and s.must_refuse and s.dtype == "float16"
                and not s.params.get("sorted_indices"))


def _widened(original):
    """gather_mm computed in float32 and cast back: a forward that takes float16."""
    import mlx.core as mx

    def call(operands, params):
        ops = {k: (v.astype(mx.float32) if isinstance(v, mx.array) else v) for k, v in operands.items()}
        return original(ops, params).astype(mx.float16)
    return call


@needs_pinned_mlx()
def test_an_accepted_error_input_is_judged_as_a_call(monkeypatch):
    devices.select("cpu")
    s = _error_input()
    resolve = opinfo.resolve
    original = resolve(s.info.mlx_call)
    monkeypatch.setattr(bridge.opinfo, "resolve",   # the bridge resolves the op's call
                        lambda path: _widened(original) if path == s.info.mlx_call else resolve(path))
    rec, exp = execute.measure(s, "cpu")
    kinds = {c.get("kind") for c in rec["checks"]}
    assert rec["accepted_error_input"] and "reference" in kinds and "refusal" not in kinds
    assert rec["status"] == "pass" and set(exp) >= {"forward"}


@needs_pinned_mlx()
def test_a_refused_error_input_keeps_its_refusal_check():
    """Control: on 0.32.4 the forward refuses float16 gather_mm; the record is the refusal's."""
    devices.select("cpu")
    rec, _ = execute.measure(_error_input(), "cpu")
    assert "accepted_error_input" not in rec and [c.get("kind") for c in rec["checks"]] == ["refusal"]
