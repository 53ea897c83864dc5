"""Reproducers written with each op's `call_expression` (the one MLX call for the
scenario's params, instead of the op's general call file) say what the harness says:

* in process, for every catalog scenario: `def f(<wrt>): return <expression>` as the
  reproducer writes it, over the harness's own operands, gives exactly the forward and
  the VJP of the op's `mlx_call` (or raises the same error); a VJP whose result MLX does
  not reproduce from one call to the next (a defect reading memory it should not) only
  has to be wrong in both, and only in a scenario that expects its defect;
* negative controls: a wrong expression (another pad mode, a dropped keyword) is caught;
* as scripts, run on the CPU: every defect-tagged scenario and one passing scenario per
  op exit with the harness's verdict on what a reproducer checks, the forward and the VJP
  against the float64 rule (0: those checks pass; 1: one fails or the VJP raises), and
  print the forward the harness observed. The harness's status also counts the oracles
  a reproducer does not run (differences, transforms); where none of those failed, the
  exit code is the status's (pass 0, fail or error 1);
* the reproducers of the reported findings' ops stay short (at most 40 lines).
"""
from __future__ import annotations

import ast
import dataclasses
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from helpers import scripts as script_runs
from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import catalog, expected, reproducer
from mlx_vjpcheck.core import checks
from mlx_vjpcheck.oracles import FIRST_ORDER
from mlx_vjpcheck.running import devices, execute

mx = pytest.importorskip("mlx.core")

VJP_OPS = [n for n in ops.names() if ops.get(n).has_vjp]
# The ops of the findings whose reproducers go to MLX's maintainers.
REPORTED = ("at_set", "at_max", "at_min", "block_masked_mm", "conv_general", "hadamard_transform", "pad",
            "partition", "topk", "quantized_matmul", "gather_mm", "gather_qmm")
MAX_LINES = 40


@pytest.fixture(scope="module", autouse=True)
def _cpu():
    devices.select("cpu")


def _catalog(op=None) -> list:
    # A call whose known defect kills the process runs only in the runner's workers.
    return [s for s in catalog.catalog() if (op is None or s.op == op) and not s.kills_process]


def _plain(s) -> bool:
    return s.info.has_vjp and s.objective == "vjp" and not s.must_refuse


# --- the expression against the call, in process ------------------------------------------------

def _expression_function(s):
    """f as the reproducer defines it, over the harness's operands (views applied)."""
    source, expression = reproducer._call(s)
    assert source == "", f"{s.name}: the reproducer embeds the call file instead of the op's expression"
    call = execute.Call(s)
    names = {n: reproducer._var(n) for n in s.operands}
    namespace = {"mx": mx, "np": np, **{names[n]: v for n, v in call.operands.items()}}
    exec(f"def f({', '.join(names[n] for n in s.wrt)}):\n    return {expression}\n", namespace)
    return namespace["f"], call


def _numpy(x) -> np.ndarray:
    return np.array(x.astype(mx.float32) if x.dtype == mx.bfloat16 else x)


def _outcome(fn, s, primals) -> tuple:
    """("forward", error) | ("vjp", forward, error) | ("ok", forward, [gradients]) as numpy."""
    try:
        y = fn(*primals)
        mx.eval(y)
    except Exception as e:
        return ("forward", f"{type(e).__name__}: {e}")
    if not s.info.has_vjp:
        return ("ok", _numpy(y), [])
    cplx = y.dtype == mx.complex64   # a complex cotangent keeps its imaginary part
    cot = expected.cotangent(s, _numpy(y).astype(np.complex128 if cplx else np.float64))
    try:
        _, grads = mx.vjp(fn, primals, [mx.array(cot.astype(np.complex64 if cplx else np.float32), dtype=y.dtype)])
        mx.eval(grads)
    except Exception as e:
        return ("vjp", _numpy(y), f"{type(e).__name__}: {e}")
    return ("ok", _numpy(y), [_numpy(g) for g in grads])


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _wrong(s, grads) -> bool:
    """Some gradient disagrees with the float64 rule (the harness's reference check)."""
    exp = expected.expected(s)
    atol, rtol = checks.tolerance(s.dtype)
    return any(not checks.compare(n, g, exp[f"grad:{n}"], atol, rtol)["passed"] for n, g in zip(s.wrt, grads))


def _verdict(s) -> str:
    """"same": the expression's results are the call's; "both wrong": a defect MLX does not
    reproduce exactly, present in both; else what differs."""
    f, call = _expression_function(s)
    got, want = _outcome(f, s, call.primals), _outcome(call, s, call.primals)
    if _same(got, want):
        return "same"
    if (got[0] == want[0] == "ok" and _same(got[1], want[1]) and s.expects_defect and s.objective == "vjp"
            and _wrong(s, got[2]) and _wrong(s, want[2])):
        return "both wrong"
    return f"differs: expression {got[0]}, call {want[0]}"


def test_every_op_with_a_vjp_writes_its_call_as_an_expression():
    assert [n for n in VJP_OPS if ops.get(n).call_expression is None] == []


@pytest.mark.parametrize("op", ops.names())
def test_the_expression_gives_the_calls_forward_and_vjp(op):
    verdicts = {s.name: _verdict(s) for s in _catalog(op)}
    assert {n: v for n, v in verdicts.items() if v not in ("same", "both wrong")} == {}
    # only a defect that reads what it should not is allowed to differ between runs
    assert sum(v == "same" for v in verdicts.values()) >= len(verdicts) // 2, verdicts


WRONG = {   # op -> a wrong call_expression made from the right one
    "pad": lambda right: lambda p, n: right(dict(p, mode="edge" if p["mode"] == "constant" else "constant"), n),
    "cumsum": lambda right: lambda p, n: right(p, n).replace(", inclusive=False", ""),
    "gather_mm": lambda right: lambda p, n: right(p, n).replace(", sorted_indices=True", ""),
    "conv_general": lambda right: lambda p, n: right(p, n).replace("flip=True", "flip=False"),
}


@pytest.mark.parametrize("op", sorted(WRONG))
def test_a_wrong_expression_is_caught(op):
    info = ops.get(op)
    wrong = dataclasses.replace(info, call_expression=WRONG[op](info.call_expression))
    # A changed call may reach a defect that kills the process under other params: keep
    # every scenario carrying a fatal tag out of this in-process control.
    safe = [s for s in _catalog(op) if not set(s.defect_tags) & set(s.info.fatal_tags)]
    caught = [s.name for s in safe if _verdict(s.bound(wrong)).startswith("differs")]
    assert caught, f"{op}: the wrong expression agreed with the call on every catalog scenario"


# --- the scripts: exit codes and the printed forward against the harness ---------------------------

def _first_order(rec) -> int:
    """The exit code a reproducer owes the harness's record: 1 where the VJP raised or a
    check against the float64 rule (kind "reference": forward, gradients) failed, else 0."""
    failed = [c for c in rec["checks"] if c.get("kind") == "reference" and not c["passed"]]
    return 1 if rec["error"] or failed else 0


def _sample() -> list:
    """Every defect-tagged plain scenario, and each op's smallest untagged one whose
    forward and VJP agree with the float64 rule."""
    plain = [s for s in _catalog() if _plain(s)]
    out = [s for s in plain if s.defect_tags]
    for op in VJP_OPS:
        untagged = sorted((s for s in plain if s.op == op and not s.defect_tags),
                          key=lambda s: (sum(int(np.prod(t.shape)) for t in s.operands.values()), s.name))
        out.append(next(s for s in untagged if _first_order(execute.run(s, "cpu")) == 0))
    return out


def _script(s, folder):
    path = folder / (s.name.replace("/", "__") + ".py")
    path.write_text(reproducer.render(s, title=s.name), encoding="utf-8")
    return path


def _same_printed(line: str, forward) -> bool:
    """The script's printed forward equals the harness's observed one (numerically: a
    signed zero may print either way)."""
    text = line[len("forward: MLX "):].split(", float64 rule ")[0]
    got = np.asarray(ast.literal_eval(text), dtype=complex)
    want = np.asarray(forward, dtype=complex)
    return got.shape == want.shape and bool(np.array_equal(got, want, equal_nan=True))


def _values(check):
    """A check's observed values as the script prints them (complex from [re, im] pairs)."""
    if not check.get("complex"):
        return check["observed"]
    pairs = np.asarray(check["observed"], dtype=np.float64)
    if pairs.size == 0:
        return pairs.reshape(check["observed_shape"]).tolist()
    return (pairs[..., 0] + 1j * pairs[..., 1]).tolist()


def test_the_scripts_exit_with_the_harness_verdict_and_print_its_forward(tmp_path):
    sample = _sample()
    scripts = [_script(s, tmp_path) for s in sample]
    with ThreadPoolExecutor(1) as pool:   # the scripts run in other processes; the harness measures meanwhile
        running = pool.submit(script_runs.run_many, scripts, ["--device", "cpu"], cwd=tmp_path)
        records = {s.name: execute.run(s, "cpu") for s in sample}
        procs = running.result()
    # The drivers share interpreters between scripts; every 20th script also runs alone,
    # as a user runs it, and must end the same way (the driver's own negative controls
    # are in tests/test_script_driver.py).
    alone = script_runs.standalone(scripts[::20], ["--device", "cpu"], cwd=tmp_path)
    assert [(rc, out) for rc, out, _ in alone] == [(rc, out) for rc, out, _ in procs[::20]]
    bad = []
    for s, (returncode, stdout, stderr) in zip(sample, procs):
        rec = records[s.name]
        want = _first_order(rec)
        others = [c for c in rec["checks"] if c.get("kind") != "reference" and not c["passed"]]
        assert others or want == {"pass": 0, "fail": 1, "error": 1}[rec["status"]], (s.name, rec["status"])
        forward = next((_values(c) for c in rec["checks"] if c["name"] == "forward"), None)
        printed = [ln for ln in stdout.splitlines() if ln.startswith("forward: MLX ")]
        if returncode != want or (printed and forward is not None and not _same_printed(printed[0], forward)):
            bad.append((s.name, rec["status"], returncode, stdout[-600:] + stderr[-600:]))
    assert bad == []
    assert {s.op for s in sample} == set(VJP_OPS)


def test_the_reported_ops_reproducers_are_short():
    lengths = {s.name: len(reproducer.render(s, title=s.name).splitlines())
               for s in _catalog() if s.op in REPORTED and s.expects_defect_under(FIRST_ORDER) and _plain(s)}
    assert {s.op for s in _catalog() if s.name in lengths} == set(REPORTED)
    assert {n: k for n, k in lengths.items() if k > MAX_LINES} == {}


def test_params_the_op_cannot_write_embed_its_call_file(tmp_path):
    """call_expression None (logsumexp's -inf rows along an axis only a's rank fixes): the
    reproducer falls back to the op's call file, and still runs the harness's call."""
    info = ops.get("logsumexp")
    assert info.call_expression({"axis": -2, "inf_rows": 1}, {"a": "a"}) is None
    s = next(s for s in _catalog("cumsum") if _plain(s))
    s = s.bound(dataclasses.replace(s.info, call_expression=lambda params, names: None))
    text = reproducer.render(s, title="fallback")
    assert "def mlx_call(operands, params):" in text and "return mlx_call({" in text
    script = tmp_path / "fallback.py"
    script.write_text(text, encoding="utf-8")
    [(returncode, stdout, stderr)] = script_runs.standalone([script], ["--device", "cpu"], cwd=tmp_path)
    assert returncode == _first_order(execute.run(s, "cpu")), stdout + stderr


def test_a_complex_output_of_a_real_input_renders_from_a_files_values():
    """A finding's file holds complex values as [re, im] pairs; for a real input with a
    complex output (rfft) the reproducer recomputes them rather than read the pairs as
    an extra axis. Control: the same call with the in-memory values gives the same script."""
    from mlx_vjpcheck.core import jsonio
    s = next(s for s in _catalog("rfft") if not s.defect_tags)
    exp = expected.expected(s)
    from_file = {k: jsonio.complex_pairs(np.asarray(v).tolist()) for k, v in exp.items()}
    assert reproducer.render(s, title="t", expected=from_file) == reproducer.render(s, title="t", expected=exp)
