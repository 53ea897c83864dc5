"""What every registered op must satisfy, checked generically over the registry:

* its catalog scenarios have a decided float64 reference, and its reproducer
  snippet (the maths written a second time) gives the same numbers;
* negative controls: wrong VJPs plugged in through mx.custom_function (the true
  VJP scaled, shifted, or with one operand's gradient dropped) are each
  rejected by at least one of its catalog scenarios;
* its fuzz strategy draws valid scenarios of the op;
* its hand-written float64 VJP agrees with float64 differences of its own
  float64 forward (core/numeric.py), so the reference is checked against the
  maths and not only against itself.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import catalog, expected
from mlx_vjpcheck.core import numeric, opinfo
from mlx_vjpcheck.fuzz import findings, repro
from mlx_vjpcheck.running import devices, execute

OPS = [n for n in ops.names() if ops.get(n).has_vjp]   # an op without a VJP has no rule to test


def _scenarios(op):
    return [s for s in catalog.catalog() if s.op == op]


def _snippet_namespace(s):
    """The reproducer script for scenario s, executed as a module (not run)."""
    f = findings.Finding(signature="contract", op=s.op, gradient="-", oracle="reference", kind="-",
                         form="-", oracles=["reference"], seed=0, round=0, time_found_s=0.0,
                         time_minimal_s=0.0, cases_before=0, shrunk=True, size=0, first_size=0,
                         found_at="-", device="cpu", scenario=s.to_dict(), record={})
    ns = {"__name__": "reproducer_under_test"}
    exec(compile(repro.render(f), f"<repro {s.name}>", "exec"), ns)
    return ns


@pytest.mark.parametrize("op", OPS)
def test_reproducer_reference_agrees_with_the_harness_reference(op):
    for s in _scenarios(op):
        ns = _snippet_namespace(s)
        y, _, grads = ns["reference"]()
        assert ns["self_check"](y, grads), s.name
        exp = expected.expected(s)
        assert np.allclose(y, exp["forward"], rtol=1e-8, atol=1e-8), s.name


@pytest.mark.parametrize("op", OPS)
def test_strategy_draws_valid_scenarios_of_the_op(op):
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.fuzz import targets

    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy(op, ("float32",)))
    def check(s):
        assert s.op == op and set(s.wrt) <= set(ops.get(op).differentiable)
        try:
            expected.expected(s)
        except Exception as e:   # undecided references are allowed (the engine skips them)
            from mlx_vjpcheck.core import numeric
            assert isinstance(e, numeric.ReferenceUndecided), (s.name, e)
    check()


# --- negative controls: wrong VJPs through mx.custom_function ------------------------------

MUTANTS = {
    "scaled": lambda gs: [g * 2 for g in gs],
    "shifted": lambda gs: [g + 1 for g in gs],
    "first_dropped": lambda gs: [g * 0 if k == 0 else g for k, g in enumerate(gs)],
}


def _float_operands(ops_, mx):
    return [n for n, v in ops_.items() if isinstance(v, mx.array) and mx.issubdtype(v.dtype, mx.floating)]


def _mutated(original: str, mutate):
    def call(ops_, lhs, rhs, sorted_indices, params):
        import mlx.core as mx
        f = opinfo.resolve(original)
        names = _float_operands(ops_, mx)

        def inner(*xs):
            return f(dict(ops_, **dict(zip(names, xs))), lhs, rhs, sorted_indices, params)
        wrapped = mx.custom_function(inner)

        @wrapped.vjp
        def backward(primals, cotangent, output):
            prim = list(primals) if isinstance(primals, (list, tuple)) else [primals]
            _, grads = mx.vjp(inner, prim, [cotangent])
            grads = mutate(list(grads))
            return grads[0] if len(grads) == 1 else tuple(grads)
        return wrapped(*[ops_[n] for n in names])
    return call


# resolve() imports "test_op_contracts:<name>": one attribute per mutant.
for _name, _fn in MUTANTS.items():
    globals()[f"mutant_{_name}"] = _fn


@pytest.fixture
def with_mutant(monkeypatch):
    registry = dict(ops.registry())

    def install(op, name):
        info = registry[op]
        path = f"test_op_contracts:_current_call"
        globals()["_current_call"] = _mutated(info.mlx_call, MUTANTS[name])
        monkeypatch.setitem(ops.registry(), op, dataclasses.replace(info, mlx_call=path))
    return install


_HONEST = {}


def _honest(op) -> dict:
    """Each catalog scenario's honest status, computed once per op."""
    if op not in _HONEST:
        devices.select("cpu")
        _HONEST[op] = {s.name: execute.run(s, "cpu")["status"] for s in _scenarios(op)}
    return _HONEST[op]


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
@pytest.mark.parametrize("op", OPS)
def test_a_wrong_vjp_is_rejected(op, mutant, with_mutant):
    honest = _honest(op)
    with_mutant(op, mutant)
    devices.select("cpu")
    caught = next((s.name for s in _scenarios(op)
                   if honest[s.name] == "pass" and execute.run(s, "cpu")["status"] == "fail"), None)
    assert caught, f"{op}: the {mutant} VJP passed every catalog scenario that passes honestly"


def test_the_unmutated_wrapper_is_accepted(with_mutant, monkeypatch):
    """Control for the control: wrapping with the identity mutation changes nothing."""
    monkeypatch.setitem(MUTANTS, "identity", lambda gs: gs)
    devices.select("cpu")
    for op in ("cumsum", "take"):
        scenarios = _scenarios(op)
        honest = [execute.run(s, "cpu")["status"] for s in scenarios]
        with_mutant(op, "identity")
        assert [execute.run(s, "cpu")["status"] for s in scenarios] == honest


def test_an_op_without_a_vjp_is_recorded_as_such():
    """segmented_mm: the forward is checked, and MLX refusing a VJP is the recorded fact
    (check no_vjp); a VJP that appears from nowhere (a custom function) fails it."""
    from mlx_vjpcheck.cases import expected as expect
    devices.select("cpu")
    no_vjp = [s for s in catalog.catalog() if not ops.get(s.op).has_vjp]
    assert no_vjp
    for s in no_vjp:
        rec = execute.run(s, "cpu")
        assert rec["status"] == "pass", rec
        assert {c["name"] for c in rec["checks"]} == set(expect.expected(s)) == {"forward", "no_vjp"}


# --- hand-written references against differences of the reference forward ---------------------

HAND_WRITTEN = [n for n in OPS if ops.get(n).reference_vjp is not None]
# These ops' hand-written rules carry cases (ties, -inf groups, zeros in a product) that
# only a whole-catalog comparison exercises; the others take their smallest scenarios,
# which keeps the differences cheap.
WHOLE_CATALOG = {"cumprod": 0.0, "cummax": 0.0, "cummin": 0.0, "logsumexp": 1e-7, "softmax": 1e-7}
SMALLEST = 6


def _size(s) -> int:
    return sum(int(np.prod(t.shape)) for t in s.operands.values())


def _against_differences(info, s, rtol) -> bool | None:
    """True / False: the hand-written VJP agrees / disagrees with differences;
    None: undecided (a non-finite output, or differences beyond their bound)."""
    inputs = expected.logical_inputs(s)
    lhs, rhs = expected.indices(s)
    y = info.reference(inputs, lhs, rhs, s.params)
    if not np.all(np.isfinite(y)):
        return None   # an infinite output has no difference quotient
    g = expected.cotangent(s, y)
    wrt = tuple(w for w in s.wrt if w in inputs and w not in info.integer_operands)
    try:
        diff = numeric.vjp_by_differences(lambda v: info.reference(v, lhs, rhs, s.params), inputs, g, wrt)
    except numeric.ReferenceUndecided:
        return None
    hand = info.reference_vjp(inputs, g, lhs, rhs, s.params)
    return all(np.allclose(hand[w], diff[w], rtol=rtol, atol=1e-8) for w in wrt)


@pytest.mark.parametrize("op", HAND_WRITTEN)
def test_hand_written_vjp_agrees_with_differences(op):
    info = ops.get(op)
    scenarios = _scenarios(op)
    if op not in WHOLE_CATALOG:
        scenarios = sorted(scenarios, key=lambda s: (_size(s), s.name))[:SMALLEST]
    verdicts = {s.name: _against_differences(info, s, WHOLE_CATALOG.get(op, 1e-7)) for s in scenarios}
    assert [n for n, ok in verdicts.items() if ok is False] == []
    decided = sum(ok is True for ok in verdicts.values())
    assert decided >= (15 if op in WHOLE_CATALOG else min(3, len(scenarios))), (op, verdicts)


def test_a_wrong_hand_written_vjp_disagrees_with_differences():
    """Negative control: the comparison rejects a reference VJP off by 1 %."""
    info = ops.get("cumprod")
    wrong = dataclasses.replace(info, reference_vjp=lambda i, g, l, r, p: {
        k: v * 1.01 for k, v in info.reference_vjp(i, g, l, r, p).items()})
    verdicts = [_against_differences(wrong, s, 0.0) for s in _scenarios("cumprod")]
    assert verdicts.count(False) >= 15
