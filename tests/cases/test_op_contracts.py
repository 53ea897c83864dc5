"""What every registered op must satisfy, checked generically over the registry:

* its catalog scenarios have a decided float64 reference, and a reproducer of
  one of them renders, runs standalone and gives the harness's verdict;
* negative controls: wrong VJPs planted through the shared mechanism
  (tests/helpers/wrong_vjp.py: MLX's own VJP scaled, shifted, or with the first
  operand's gradient dropped) are each rejected by at least one of its catalog
  scenarios, and the mechanism itself changes nothing when it plants the truth;
* its fuzz strategy draws valid scenarios of the op;
* its hand-written float64 VJP agrees with float64 differences of its own
  float64 forward (core/numeric.py), so the reference is checked against the
  maths and not only against itself.
"""
from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

from helpers import wrong_vjp as W
from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import catalog, expected, reproducer
from mlx_vjpcheck.core import numeric, verdict
from mlx_vjpcheck.running import devices, execute

OPS = [n for n in ops.names() if ops.get(n).has_vjp]   # an op without a VJP has no rule to test


def _scenarios(op):
    # A call whose known defect kills the process runs only in the runner's workers.
    return [s for s in catalog.catalog() if s.op == op and not s.kills_process]


def _smallest_plain(op):
    """The op's smallest catalog scenario with a plain VJP objective (not an error input)."""
    plain = [s for s in _scenarios(op) if s.objective == "vjp" and not s.must_refuse]
    return min(plain, key=lambda s: (_size(s), s.name))


@pytest.mark.parametrize("op", OPS)
def test_a_reproducer_renders_runs_standalone_and_agrees_with_the_harness(op, tmp_path):
    s = _smallest_plain(op)
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=f"{op} contract"))
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    devices.select("cpu")
    rec = execute.run(s, "cpu")
    # A reproducer checks the first-order VJP against the rule: the reference oracle's verdict.
    status = verdict.status([c for c in rec["checks"] if c["kind"] == "reference"], rec["error"])
    want = {"pass": 0, "fail": 1, "error": 1}.get(status)
    assert proc.returncode == want, (s.name, status, proc.stdout[-1500:] + proc.stderr[-1500:])


@pytest.mark.parametrize("op", OPS)
def test_strategy_draws_valid_scenarios_of_the_op(op):
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.fuzz import targets

    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy(op, ("float32",)))
    def check(s):
        assert s.op == op and s.info is ops.get(op) and not s.info.call_problems(s)
        try:
            expected.expected(s)
        except Exception as e:   # undecided references are allowed (the engine skips them)
            assert isinstance(e, numeric.ReferenceUndecided), (s.name, e)
    check()


# --- negative controls: wrong VJPs planted through the one shared mechanism -----------------

MUTANTS = {
    "scaled": lambda ctx: {n: 2 * g for n, g in ctx.honest().items()},
    "shifted": lambda ctx: {n: g + 1 for n, g in ctx.honest().items()},
    "first_dropped": lambda ctx: {n: (0 * g if k == 0 else g) for k, (n, g) in enumerate(ctx.honest().items())},
}


def _zero_rule(op, first_only=False) -> bool:
    """Every catalog scenario the op passes with MLX's own VJP has zero gradients (floor,
    real sign, a comparison, divmod's quotient): scaling or dropping a zero gradient
    changes nothing to reject there, and the others cannot credit a mutant."""
    passing = [s for s in _scenarios(op) if not s.must_refuse and W.honest(op).get(s.name) == "pass"]
    grads = [v for s in passing for k, v in expected.expected(s).items()
             if k.startswith("grad:") and (not first_only or k == f"grad:{s.wrt[0]}")]
    return bool(grads) and not any(np.any(g) for g in grads)


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
@pytest.mark.parametrize("op", OPS)
def test_a_wrong_vjp_is_rejected(op, mutant):
    if mutant != "shifted" and _zero_rule(op, first_only=mutant == "first_dropped"):
        pytest.skip(f"{op}'s gradients are all zero: a {mutant} VJP is the same rule (the shifted one is not)")
    caught = W.caught(op, MUTANTS[mutant], first_only=True)
    assert caught, f"{op}: the {mutant} VJP passed every catalog scenario that passes honestly"


@pytest.mark.parametrize("op", ["cumsum", "take", "pad"])
def test_the_mechanism_planting_the_truth_changes_nothing(op):
    """Control for the control: MLX's own VJP planted the same way changes no verdict."""
    assert W.statuses(op, lambda ctx: ctx.honest()) == W.honest(op)


def test_an_op_without_a_vjp_is_recorded_as_such():
    """segmented_mm: the forward is checked, and MLX refusing a VJP is the recorded fact
    (check no_vjp); a VJP that appears from nowhere (a custom function) fails it."""
    devices.select("cpu")
    no_vjp = [s for s in catalog.catalog() if not s.info.has_vjp]
    assert no_vjp
    for s in no_vjp:
        rec = execute.run(s, "cpu")
        assert rec["status"] == "pass", rec
        assert {c["name"] for c in rec["checks"]} == set(expected.expected(s)) == {"forward", "no_vjp"}


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
    y = info.reference(inputs, s.params)
    if not np.all(np.isfinite(y)):
        return None   # an infinite output has no difference quotient
    g = expected.cotangent(s, y)
    wrt = tuple(w for w in s.wrt if w in inputs and w not in info.integer_operands)
    try:
        diff = numeric.vjp_by_differences(lambda v: info.reference(v, s.params), inputs, g, wrt)
    except numeric.ReferenceUndecided:
        return None
    hand = info.reference_vjp(inputs, g, s.params)
    return all(np.allclose(hand[w], diff[w], rtol=rtol, atol=1e-8) for w in wrt)


@pytest.mark.parametrize("op", HAND_WRITTEN)
def test_hand_written_vjp_agrees_with_differences(op):
    info = ops.get(op)
    scenarios = _scenarios(op)
    scenarios = [s for s in scenarios if not s.must_refuse]
    verdicts = {}
    if op in WHOLE_CATALOG:
        verdicts = {s.name: _against_differences(info, s, WHOLE_CATALOG[op]) for s in scenarios}
    else:   # smallest first, until SMALLEST decided (near a domain's edge differences may not decide)
        for s in sorted(scenarios, key=lambda s: (_size(s), s.name))[:4 * SMALLEST]:
            verdicts[s.name] = _against_differences(info, s, 1e-7)
            if sum(ok is True for ok in verdicts.values()) >= SMALLEST:
                break
    assert [n for n, ok in verdicts.items() if ok is False] == []
    decided = sum(ok is True for ok in verdicts.values())
    assert decided >= (15 if op in WHOLE_CATALOG else min(3, len(scenarios))), (op, verdicts)


def test_a_wrong_hand_written_vjp_disagrees_with_differences():
    """Negative control: the comparison rejects a reference VJP off by 1 %."""
    info = ops.get("cumprod")
    wrong = dataclasses.replace(info, reference_vjp=lambda i, g, p: {
        k: v * 1.01 for k, v in info.reference_vjp(i, g, p).items()})
    verdicts = [_against_differences(wrong, s, 0.0) for s in _scenarios("cumprod")]
    assert verdicts.count(False) >= 15
