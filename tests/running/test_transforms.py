"""The transform and status oracles (compile, vmap, second order, forward mode,
refusal) on toy ops whose VJP is wrong in exactly one corner
(transform_mutants.py): each corner is caught by its oracle, and the honest op
(the negative control) passes every one of them, real and complex. Also MLX's
complex convention on the pinned version, and the filters: a kink gives no
second-order verdict, a missing forward rule is noted, not reported."""
import numpy as np
import pytest

from conftest import needs_pinned_mlx
from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.judging import judge
from mlx_vjpcheck.running import devices, execute

mx = pytest.importorskip("mlx.core")
from transform_mutants import case  # noqa: E402

TRANSFORMS = {"vmap", "second_order", "forward_mode"}     # in run; compile runs in the fuzzer
COMPLEX = np.array([1 + 2j, -2 + 0.5j, 3 - 1j, 0.5 + 1j])


def _run(s) -> dict:
    devices.select("cpu")
    return execute.run(s, "cpu")


def _fuzz(s) -> dict:
    """The fuzzer's context: every oracle, compile included."""
    devices.select("cpu")
    return execute.measure(s, "cpu", "fuzz")[0]


def _failed(rec) -> set:
    return {c["name"] for c in rec["checks"] if not c["passed"]}


def _ran(rec) -> set:
    return {c["kind"] for c in rec["checks"]}


@pytest.mark.parametrize("values", [(1.0, -2.0, 3.0, 0.5), COMPLEX], ids=["float32", "complex64"])
def test_the_honest_rule_passes_every_oracle(values):
    dtype = "complex64" if np.iscomplexobj(values) else "float32"
    s = case("right", values, dtype=dtype, cot=np.arange(1, 5) * (1 + 1j if dtype == "complex64" else 1))
    rec = _run(s)
    assert rec["status"] == "pass", _failed(rec)
    assert TRANSFORMS <= _ran(rec) and not rec.get("not_applicable")
    assert all(c.get("complex") for c in rec["checks"]) == (dtype == "complex64")
    rec = _fuzz(s)
    assert rec["status"] == "pass", _failed(rec)
    assert TRANSFORMS | {"compile"} <= _ran(rec)


def test_wrong_only_at_second_order_is_caught_by_second_order_alone():
    rec = _run(case("second"))
    assert _failed(rec) == {"second:a"}       # H u; J u (through the cotangent) is right
    verdict = judge.judge(case("second"), rec["checks"])
    assert verdict.confirmed and verdict.primary["oracle"] == "second_order"
    assert judge.signature(case("second"), verdict.primary) == \
        "cube_second__hvp-a__second_order__wrong-value__plain"


def test_second_order_raising_where_first_order_works_is_a_status_finding():
    s = case("raises2")
    rec = _run(s)
    assert _failed(rec) == {"second:status"}
    primary = judge.judge(s, rec["checks"]).primary
    assert primary["kind"] == "exception-ValueError-square_vjp" and primary["gradient"] == "second-status"
    assert judge.signature(s, primary) == \
        "cube_raises2__second-status__second_order__exception-ValueError-square_vjp__any"


def test_wrong_only_under_vmap_is_caught_by_vmap_alone():
    rec = _run(case("vmapped"))
    assert _failed(rec) and {n.split(":")[0] for n in _failed(rec)} == {"vmap"}


def test_wrong_while_traced_is_caught_by_compile():
    rec = _fuzz(case("traced"))
    assert "compile:grad:a" in _failed(rec)
    assert "grad:a" not in _failed(rec)      # eager is right


def test_a_wrong_forward_mode_rule_is_caught_by_forward_mode_alone():
    rec = _run(case("jvpwrong"))
    assert _failed(rec) == {"jvp:forward"}
    assert judge.judge(case("jvpwrong"), rec["checks"]).primary["oracle"] == "forward_mode"


def test_wrong_only_for_complex():
    assert _run(case("complexed"))["status"] == "pass"
    rec = _run(case("complexed", COMPLEX, dtype="complex64"))
    assert "grad:a" in _failed(rec) and "forward" not in _failed(rec)


def test_wrong_only_in_bfloat16():
    assert _run(case("halfonly"))["status"] == "pass"
    assert "grad:a" in _failed(_run(case("halfonly", dtype="bfloat16")))


def test_a_plain_wrong_rule_fails_the_reference_and_every_transform_of_it():
    failed = _failed(_fuzz(case("plain")))
    assert {"grad:a", "compile:grad:a", "vmap:grad:a#0", "vmap:grad:a#1"} <= failed


def test_half_precision_has_no_second_order_verdict_and_says_so():
    rec = _run(case("right", dtype="bfloat16"))
    assert rec["status"] == "pass"
    assert {n["oracle"] for n in rec["not_applicable"]} == {"second_order", "forward_mode"}


def test_an_error_input_the_vjp_accepts_is_a_finding_and_one_it_refuses_is_not():
    bad = case("refused", (1.0, 2.0), dtype="bfloat16", must_refuse=True)
    rec = _run(bad)
    assert rec["status"] == "fail" and _failed(rec) == {"refusal:vjp"}
    assert "only supports float32" in rec["checks"][0]["forward_error"]
    primary = judge.judge(bad, rec["checks"]).primary
    assert primary["oracle"] == "refusal" and primary["kind"] == "accepts-refused-input"
    assert _run(case("refused_honest", (1.0, 2.0), dtype="bfloat16", must_refuse=True))["status"] == "pass"


def test_an_error_input_the_forward_accepts_is_judged_as_a_call():
    """A build whose forward takes an error input (a patch widened the op): its VJP must
    then work and be right, and the record says the input was accepted."""
    rec = _run(case("right", (1.0, 2.0), must_refuse=True))   # listed as refused, but cube's forward works
    assert rec.get("accepted_error_input") is True and "refusal" not in {c.get("kind") for c in rec["checks"]}
    assert rec["status"] == "pass" and any(c.get("kind") == "reference" for c in rec["checks"])
    # negative control: a wrong VJP behind an accepted error input is caught like any other
    wrong = _run(case("plain", (1.0, 2.0), must_refuse=True))
    assert wrong.get("accepted_error_input") is True and wrong["status"] == "fail"


@needs_pinned_mlx()
def test_mlx_complex_convention_on_the_pinned_version():
    """The conjugate-Wirtinger form (PyTorch's): vjp(f)(g) = conj(f'(z)) g for a
    holomorphic f; the gradient of |z|^2 is 2 z; mx.jvp is f'(z) u."""
    z = mx.array([1 + 2j], dtype=mx.complex64)
    one, i = (mx.array([v], dtype=mx.complex64) for v in (1 + 0j, 1j))
    assert np.allclose(np.array(mx.vjp(lambda x: x * x, [z], [one])[1][0]), [2 - 4j])
    assert np.allclose(np.array(mx.vjp(lambda x: x * x, [z], [i])[1][0]), [4 + 2j])
    assert np.allclose(np.array(mx.grad(lambda x: (mx.abs(x) ** 2).sum())(z)), [2 + 4j])
    assert np.allclose(np.array(mx.jvp(lambda x: x * x, [z], [one])[1][0]), [2 + 4j])


def _catalog(name):
    return next(s for s in catalog.catalog() if s.name == name)


@needs_pinned_mlx()
def test_at_ties_the_directional_derivative_gives_no_verdict():
    """The kink filter: at tied values sort(x + t u) bends at t = 0, and the average
    of the two one-sided slopes is no derivative: forward mode and the cotangent
    half of second order are not judged. The gradient itself, with equal
    cotangents on the tied values, does not bend, so H u is judged (and is 0)."""
    rec = _run(_catalog("sort/ties/value_cotangent"))
    assert rec["status"] == "pass"
    skipped = {n["oracle"]: n["reason"] for n in rec["not_applicable"]}
    assert "kink" in skipped["forward_mode"]
    second = {c["name"]: c for c in rec["checks"] if c["kind"] == "second_order"}
    assert set(second) == {"second:a"} and not np.any(second["second:a"]["expected"])


@needs_pinned_mlx()
def test_mlx_complex_power_lacks_the_conjugate():
    """A real MLX 0.32.4 defect the complex machinery shows: Power::vjp returns
    f'(z) g for complex z, without the conjugate every other rule applies (z * z
    gives conj(2 z) g)."""
    z = mx.array([1 + 2j], dtype=mx.complex64)
    one = mx.array([1 + 0j], dtype=mx.complex64)
    assert np.allclose(np.array(mx.vjp(lambda x: x * x, [z], [one])[1][0]), [2 - 4j])
    assert np.allclose(np.array(mx.vjp(lambda x: x ** 2, [z], [one])[1][0]), [2 + 4j])


def test_a_transform_the_forward_lacks_is_noted_not_reported():
    """A missing vmap rule for the forward is a missing feature, not a gradient
    defect; the same exception from the VJP alone would be a finding (raises2)."""
    rec = _run(case("novmap"))
    assert rec["status"] == "pass"
    notes = {n["oracle"]: n["reason"] for n in rec["not_applicable"]}
    assert "forward does not compose with vmap" in notes["vmap"] and "cube::vmap" in notes["vmap"]
    assert not any(c["kind"] == "vmap" for c in rec["checks"])
