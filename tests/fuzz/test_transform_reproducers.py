"""A fuzz finding made by a transform oracle (second order, vmap, forward mode, compile)
gets a reproducer that applies that transform: it shows the defect on the pinned MLX
where a first-order script of the same call prints "absent", prints "absent" once the
rule is right (a correct rule planted in the script's process), and sees a transform
made wrong on purpose where a first-order script cannot. The validator writes the same
script from the finding's files."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import needs_pinned_mlx
from helpers import scripts as script_runs
from mlx_vjpcheck.cases import bind, reproducer
from mlx_vjpcheck.core import jsonio, references
from mlx_vjpcheck.core.scenario import Scenario
from mlx_vjpcheck.fuzz import engine, findings
from mlx_vjpcheck.validation import fuzz as fuzz_validation

mx = pytest.importorskip("mlx.core")

HERE = Path(__file__).resolve().parent
SEED = 1   # the trial's seed: one the compile oracle samples out (no kernel build here)


def scenario(op, operands, wrt, params, family) -> object:
    ops = {n: {"values": v, "shape": shape, "dtype": dt, "views": []}
           for n, (v, shape, dt) in operands.items()}
    return bind(Scenario.from_dict({"name": f"fuzz/{op}/test", "op": op, "operands": ops, "wrt": wrt,
                                    "params": params, "family": family, "description": "test"}))


def f32(*values, shape=()):
    return list(values), list(shape), "float32"


# Minimal counterexamples of three MLX defects that 60 s campaigns (seeds 0-3) found, each
# flagged by a transform oracle alone (the register's full__value_scaled_second_order,
# slice_update__vmap_unbatched_update, addmm__jvp_ignores_scale).
REAL = {
    "second_order": (scenario("full", {"v": f32(1.0, shape=[1])}, ["v"], {"shape": [1]}, "full"), "full"),
    "vmap": (scenario("slice_update", {"a": f32(1.0, shape=[1]), "start": ([0], [1], "uint32"),
                                       "u": f32(7.0, shape=[1])},
                      ["a", "u"], {"axes": [0], "form": "dynamic"}, "slice"), "slice_update"),
    "forward_mode": (scenario("addmm", {n: f32(3.0, shape=[1, 1]) for n in ("c", "a", "b")}, ["c", "a", "b"],
                              {"alpha": 1.0, "beta": 2.0}, "addmm"), "addmm"),
}
# A call every transform of MLX gets right (all four apply to it).
PLAIN = scenario("multiply", {"a": f32(2.0, shape=[1]), "b": f32(-3.0, shape=[1])}, ["a", "b"], {}, "binary")


def found(s) -> findings.Finding:
    """The finding the campaign files for this case (its first failure names it)."""
    out = engine.run_case(s, "cpu", SEED)
    assert out.confirmed, out.failures
    return findings.Finding.from_outcome(out, seed=0, round=1, time_found_s=0.0, time_minimal_s=0.0,
                                         cases_before=0, shrunk=True, first_size=findings.size(s), device="cpu")


def as_if(s, oracle: str) -> findings.Finding:
    """A finding of `oracle` on a call that passes: its script must say absent, unless the
    transform is broken on purpose."""
    out = engine.run_case(s, "cpu", SEED)
    assert out.status == "pass", out.failures
    return findings.Finding(signature=f"{s.op}__test__{oracle}", op=s.op, gradient="grad", oracle=oracle,
                            kind="wrong-value", form=s.family, oracles=[oracle], seed=0, round=1,
                            time_found_s=0.0, time_minimal_s=0.0, cases_before=0, shrunk=True,
                            size=findings.size(s), first_size=findings.size(s), found_at="", device="cpu",
                            scenario=s.to_dict(), record=out.record, expected=out.expected)


def first_order(f) -> str:
    """The script written before transform findings applied their transform."""
    return reproducer.render(f.scenario_obj(), title="first order only", expected=f.expected_values())


def wrapped(path: Path, shim: str) -> Path:
    """A script that runs `path` unchanged with transform_shims.installed(shim) in place."""
    w = path.with_name(f"{path.stem}__{shim}.py")
    w.write_text("import runpy, sys\n"
                 f"sys.path.insert(0, {str(HERE)!r})\n"
                 "import transform_shims\n"
                 f"with transform_shims.installed({shim!r}):\n"
                 f"    sys.argv[0] = {str(path)!r}\n"
                 f"    runpy.run_path({str(path)!r}, run_name='__main__')\n", encoding="utf-8")
    return w


def run(paths) -> list:
    """(exit status, the verdict line) per script."""
    out = []
    for rc, stdout, stderr in script_runs.run_many(paths, ["--device", "cpu"], drivers=1):
        verdicts = [ln for ln in stdout.splitlines() if ln.startswith("VERDICT:")]
        out.append((rc, verdicts[-1] if len(verdicts) == 1 else stdout[-300:] + stderr[-300:]))
    return out


def write(tmp_path, name, text) -> Path:
    p = tmp_path / f"{name}.py"
    p.write_text(text, encoding="utf-8")
    return p


@needs_pinned_mlx()
def test_a_transform_finding_shows_its_defect_and_not_once_the_rule_is_right(tmp_path):
    made, first, fixed = [], [], []
    for oracle, (s, op) in REAL.items():
        f = found(s)
        assert f.oracle == oracle and f.oracles == sorted(set(f.oracles))
        text = f.reproducer()
        assert f"{oracle} oracle" in text.splitlines()[1]
        made.append(write(tmp_path, oracle, text))
        first.append(write(tmp_path, f"{oracle}_first_order", first_order(f)))
        fixed.append(wrapped(made[-1], op))
    results = run(made + first + fixed)
    n = len(made)
    shown, missed, absent = results[:n], results[n:2 * n], results[2 * n:]
    assert all(rc == 1 and v.startswith("VERDICT: defect present (") for rc, v in shown), shown
    # what the first-order script said: the defect is the transform's alone
    assert all(rc == 0 and v == "VERDICT: defect absent" for rc, v in missed), missed
    # negative control: the same script with a correct rule for the op in MLX's place
    assert all(rc == 0 and v.startswith("VERDICT: defect absent in this run (the fuzzer saw ") for rc, v in absent), \
        absent


@pytest.mark.parametrize("oracle", sorted(reproducer.ORACLE_TRANSFORMS))
def test_the_script_applies_the_transform_that_found_it(tmp_path, oracle):
    """A transform broken on purpose (every output off by one) is seen by the script of a
    finding of that transform, and by no first-order script; with MLX's own transform
    (right on this call) the script says absent."""
    f = as_if(PLAIN, oracle)
    script = write(tmp_path, oracle, f.reproducer())
    plain = write(tmp_path, f"{oracle}_first_order", first_order(f))
    (rc, verdict), (rc_plain, verdict_plain), (rc_own, verdict_own) = run(
        [wrapped(script, oracle), wrapped(plain, oracle), script])
    assert rc == 1 and verdict.startswith("VERDICT: defect present"), verdict
    assert rc_plain == 0 and verdict_plain == "VERDICT: defect absent", verdict_plain
    assert rc_own == 0 and verdict_own.startswith("VERDICT: defect absent in this run"), verdict_own


def test_the_direction_is_the_one_the_finding_recorded():
    f = as_if(PLAIN, "second_order")
    seeds = {c["seed"] for c in f.record["checks"] if c["kind"] in ("second_order", "forward_mode")}
    assert len(seeds) == 1
    opts = reproducer.finding_options("second_order", "wrong-value", f.record)
    assert opts["transform"] == "second_order" and opts["direction_seed"] == seeds.pop()
    u = references.direction(f.scenario_obj(), opts["direction_seed"])
    assert all(reproducer.literal(v) in f.reproducer() for v in u.values())
    # control: a status check raised before recording a direction: the renderer's default
    raised = {"checks": [{"name": "second:status", "kind": "second_order", "passed": False, "error": "E: x"}]}
    assert "direction_seed" not in reproducer.finding_options("second_order", "exception-E", raised)
    # a first-order oracle's finding is rendered as before
    assert "transform" not in reproducer.finding_options("reference", "wrong-value", f.record)


@pytest.mark.parametrize("oracle", sorted(reproducer.ORACLE_TRANSFORMS) + ["reference"])
def test_the_validator_writes_the_same_script(oracle):
    f = as_if(PLAIN, oracle)
    detail, entry = jsonio.loads(jsonio.dumps(f.detail(), sort_keys=True)), f.entry()
    s = bind(Scenario.from_dict(detail["scenario"]))
    again = fuzz_validation.reproducer_text(detail, entry, s)
    assert again == f.reproducer()
    # control: the script written before (first order, a plain "absent") is not accepted
    title = f"{f.op}: {f.gradient} flagged by the {oracle} oracle ({f.kind}), call form {f.form}"
    before = reproducer.render(s, title=title, expected=detail["expected"],
                               description=f"mlx-vjpcheck fuzz finding {f.signature}.")
    assert before != again


def test_the_absent_verdict_is_one_line_whatever_the_record_says():
    hostile = 'ValueError: [x] """ \\ \n' * 30
    rec = {"checks": [{"name": "vmap:status", "kind": "vmap", "passed": False, "error": hostile}]}
    words = reproducer.finding_options("vmap", "exception-ValueError-x", rec)["absent"]
    assert words.startswith("absent in this run (the fuzzer saw vmap:status fail: ValueError: [x]")
    assert words.isprintable() and '"""' not in words and words.endswith("does not show it fixed)")
    # control: the register's probes keep the plain word (render's default)
    assert 'else "absent")) or (1 if bad else 0)' in reproducer.render(PLAIN, title="t")
