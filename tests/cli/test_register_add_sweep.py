"""`mlx-vjpcheck register add SWEEP.json --finding N`: a sweep finding no declaration
explains becomes a sweep entry of the register (status open) and a reproducer in
probes/sweep/ (given reduced by hand, or generated and shown to reproduce on the
installed MLX first), and the command prints the Known line that closes the loop; an
explained finding writes nothing; `sweep` prints the line per unexplained finding;
bad input is one line and exit 2, nothing written, nothing replaced."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, mlx_version, needs_pinned_mlx
from mlx_vjpcheck.cases import declared, register
from mlx_vjpcheck.cli import main as cli_main
from mlx_vjpcheck.cli import register_sweep, sweep_reproducer
from mlx_vjpcheck.core.errors import UsageError
from mlx_vjpcheck.sweep import known

SIGN = "sign__shapeless_grad_shape"
NEW_ID = "sign__compile_vjp_shapeless_wrong_shape"
HAND = (ROOT / "probes" / "sweep" / f"{SIGN}.py").read_text(encoding="utf-8")   # a hand-reduced reproducer


def _record(function, entry, transform, corner="generic"):
    return {"entry": entry, "function": function, "corner": corner, "seed": 0, "status": "fail",
            "checks": [{"status": "fail", "transform": transform, "detail": "shape [2, 4] vs [3, 4]"}]}


def _sweep(tmp_path, *findings) -> str:
    """A sweep.json as `sweep` writes it (the fields register add reads)."""
    found = [{"signature": [fn, t, c, s], "cases": 1, "corners": [c], "first": _record(fn, entry, t, c),
              "explained": None, "limitation": ""} for fn, entry, t, c, s in findings]
    path = tmp_path / "sweep" / "sweep.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": register_sweep.SCHEMA, "kind": "sweep", "environment": {"mlx": "0.32.4"},
                                "findings": found, "records": []}))
    return str(path)


SIGN_FINDING = ("mx.sign", "mx.sign", "compile(vjp, shapeless)", "generic", "wrong shape")
SIN_FINDING = ("mx.sin", "mx.sin", "vjp", "generic", "wrong value")   # no defect there: a control


@pytest.fixture
def unexplained_sign(monkeypatch):
    """The declarations without sign's class, so its finding is new."""
    monkeypatch.setattr(known, "KNOWN", tuple(k for k in known.KNOWN if k.id != SIGN))


def _main(argv, capsys):
    rc = cli_main.main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def _made(out: Path) -> list:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())


def test_an_explained_finding_writes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    rc, stdout, err = _main(["register", "add", _sweep(tmp_path, SIGN_FINDING), "--finding", "0",
                             "--out", str(out)], capsys)
    assert (rc, err) == (0, "") and f"registered already (harness/sweep/known.py: {SIGN})" in stdout
    assert not out.exists()


def test_a_new_finding_with_a_hand_reduced_reproducer(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(known, "KNOWN", tuple(k for k in known.KNOWN if k.id != SIGN))
    out = tmp_path / "out"
    rc, stdout, err = _main(["register", "add", _sweep(tmp_path, SIGN_FINDING), "--finding", "0",
                             "--reproducer", str(ROOT / "probes" / "sweep" / f"{SIGN}.py"), "--out", str(out)],
                            capsys)
    monkeypatch.undo()   # the real declarations again
    assert (rc, err) == (0, "")
    assert _made(out) == ["harness/cases/defects.json", f"probes/sweep/{NEW_ID}.py"]
    assert (out / "probes" / "sweep" / f"{NEW_ID}.py").read_text() == HAND
    new = register.load(out / "harness" / "cases" / "defects.json")
    assert register.catalog_entries(new) == register.catalog_entries(register.load())
    assert register.sweep_entries(new)[:-1] == register.sweep_entries(register.load())
    d = register.sweep_entries(new)[-1]
    assert (d.id, d.state, d.op, d.klass) == (NEW_ID, "open", "sign", "compile_vjp_shapeless_wrong_shape")
    assert "0.32.4" in d.releases and "shape [2, 4] vs [3, 4]" in d.minimal
    # the loop closes through known.py: without the printed Known the register disagrees, with it, it agrees
    stems = {p.stem for p in (ROOT / "probes" / "sweep").glob("*.py")} | {NEW_ID}
    assert declared.sweep_problems(new, known.KNOWN, stems) == [
        f"sweep entry {NEW_ID} of defects.json: no Known('{NEW_ID}') in harness/sweep/known.py matches it "
        "(a catalog class or a limitation is not a sweep entry)"]
    line = next(x for x in stdout.splitlines() if "Declare it" in x)
    printed = eval(line.split("append ", 1)[1].split(" to KNOWN", 1)[0], {"Known": known.Known})
    assert (printed.id, printed.functions, printed.transform, printed.symptom) == \
        (NEW_ID, ("mx.sign",), "compile(vjp, shapeless)", "wrong shape")
    assert declared.sweep_problems(new, known.KNOWN + (printed,), stems) == []


@needs_pinned_mlx()
def test_a_new_finding_gets_a_generated_reproducer_that_shows_it(tmp_path, capsys, unexplained_sign):
    out = tmp_path / "out"
    rc, stdout, err = _main(["register", "add", _sweep(tmp_path, SIGN_FINDING), "--finding", "0", "--out", str(out)],
                            capsys)
    assert (rc, err) == (0, "")
    text = (out / "probes" / "sweep" / f"{NEW_ID}.py").read_text()
    assert register_sweep.form_problem(text) is None
    assert register_sweep.shows_defect(text)[0] == 1


@pytest.mark.skipif(mlx_version() is None, reason="a generated reproducer is run on the installed MLX")
def test_a_generated_reproducer_that_shows_nothing_is_refused(tmp_path, capsys):
    """Negative control: sin's VJP is right, so its generated reproducer says absent and
    nothing is registered."""
    out = tmp_path / "out"
    rc, stdout, err = _main(["register", "add", _sweep(tmp_path, SIN_FINDING), "--finding", "0", "--out", str(out)],
                            capsys)
    assert rc == 2 and "does not show the defect" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_what_the_generator_cannot_write_asks_for_a_hand_reduced_one(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(known, "KNOWN", ())
    crash = ("mx.flip", "mx.flip", "any", "generic", "signal SIGABRT")
    rc, _, err = _main(["register", "add", _sweep(tmp_path, crash), "--finding", "0", "--out", str(tmp_path / "o")],
                       capsys)
    assert rc == 2 and "give --reproducer FILE" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("text, says", [
    (HAND.replace("import sys\n", "import sys\nimport mlx_vjpcheck\n", 1), "mlx and numpy only"),
    (HAND + "\n" * 20, "is short"),
    (HAND.replace("VERDICT: defect", "verdict"), "VERDICT"),
    ("def (:\n", "not Python"),
])
def test_a_reproducer_not_in_the_house_form_is_refused(tmp_path, capsys, unexplained_sign, text, says):
    assert register_sweep.form_problem(HAND) is None   # the control itself is fine
    bad = tmp_path / "bad.py"
    bad.write_text(text)
    rc, _, err = _main(["register", "add", _sweep(tmp_path, SIGN_FINDING), "--finding", "0", "--reproducer",
                        str(bad), "--out", str(tmp_path / "o")], capsys)
    assert rc == 2 and says in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv, says", [
    (["--out", "o"], "give --finding N"),
    (["--finding", "3", "--out", "o"], "has 1 findings"),
    (["--finding", "-1", "--out", "o"], "has 1 findings"),
    (["--finding", "0", "--class", "Bad-Name", "--out", "o"], "lower-case name"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, unexplained_sign, argv, says):
    argv = [a if a != "o" else str(tmp_path / "o") for a in argv]
    rc, _, err = _main(["register", "add", _sweep(tmp_path, SIGN_FINDING), *argv], capsys)
    assert rc == 2 and says in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_a_taken_id_or_an_existing_reproducer_is_not_replaced(tmp_path, unexplained_sign):
    f = register_sweep.load(Path(_sweep(tmp_path, SIGN_FINDING)), 0)
    taken = register_sweep.entry(f, SIGN, None)   # the id of sign's registered class
    with pytest.raises(UsageError, match="is taken"):
        register_sweep.plan(taken, HAND, tmp_path / "o", False, Path("d.json"), Path("doc.md"))
    d = register_sweep.entry(f, "sign__another", None)
    there = tmp_path / "o" / "probes" / "sweep" / f"{d.id}.py"
    there.parent.mkdir(parents=True)
    there.write_text("mine\n")
    with pytest.raises(UsageError, match="not replacing"):
        register_sweep.plan(d, HAND, tmp_path / "o", False, Path("d.json"), Path("doc.md"))
    assert there.read_text() == "mine\n"


def test_sweep_prints_the_register_add_line_for_each_unexplained_finding(tmp_path):
    found = [{"signature": list(SIGN_FINDING[:1] + SIGN_FINDING[2:]), "explained": SIGN, "limitation": ""},
             {"signature": ["mx.cos", "vjp", "generic", "wrong value"], "explained": None, "limitation": ""},
             {"signature": ["mx.as_strided", "any", "generic", "signal SIGSEGV"],
              "explained": "as_strided__invalid_memory", "limitation": "documented"},
             {"signature": ["mx.cos", "jvp", "generic", "wrong value"], "explained": "cos__by_hand", "limitation": ""}]
    lines = register_sweep.add_lines(found, tmp_path / "my sweep" / "sweep.json")
    where = tmp_path / "my sweep" / "sweep.json"
    assert lines == [f"new signature (mx.cos, vjp, generic, wrong value): register it with  mlx-vjpcheck "
                     f"register add '{where}' --finding 1",
                     f"class cos__by_hand has no register entry (mx.cos, jvp, generic, wrong value): register it "
                     f"with  mlx-vjpcheck register add '{where}' --finding 3"]


def test_the_generator_says_what_it_cannot_write():
    class F:
        transform, record = "order 2 vjp", {"entry": "mx.sign", "corner": "generic", "seed": 0}
    assert sweep_reproducer.render(F(), None)[0] is None
    F.transform, F.record = "vjp", {"entry": "nn.Linear", "corner": "generic", "seed": 0}
    assert "elementwise" in sweep_reproducer.render(F(), None)[1]


def test_the_generator_leaves_special_value_corners_to_the_sweeps_oracle():
    """At large values ceil's differences see its steps: no generated VJP check there."""
    class F:
        transform, record = "vjp", {"entry": "mx.ceil", "corner": "fill-large", "seed": 0}
    d = register.SweepClass("ceil__x", "t", "m", "r", root_cause="c")
    text, why = sweep_reproducer.render(F(), d)
    assert text is None and "special-value corner" in why
    F.record = {"entry": "mx.ceil", "corner": "generic", "seed": 0}
    assert sweep_reproducer.render(F(), d)[0] is not None   # control: at the generic point it writes one


def test_a_class_declared_by_hand_without_its_entry_gets_the_entry_only(tmp_path, capsys, monkeypatch):
    """known.py declares a class and probes/sweep/ holds its reproducer, but the register has no
    entry (a Known appended by hand): register add writes that class's entry, keeps the
    reproducer, and the three agree again."""
    without = tmp_path / "defects.json"
    without.write_text(register.dump([d for d in register.load() if d.id != SIGN]))
    monkeypatch.setattr(register, "PATH", without)
    out = tmp_path / "out"
    rc, stdout, err = _main(["register", "add", _sweep(tmp_path, SIGN_FINDING), "--finding", "0",
                             "--out", str(out)], capsys)
    assert (rc, err) == (0, "")
    assert _made(out) == ["harness/cases/defects.json"]   # the reproducer in place is kept, not rewritten
    assert "declared in harness/sweep/known.py" in stdout and "reproducer kept" in stdout
    monkeypatch.undo()
    written = register.load(out / "harness" / "cases" / "defects.json")
    assert [d.id for d in register.sweep_entries(written)][-1] == SIGN
    stems = {p.stem for p in (ROOT / "probes" / "sweep").glob("*.py")}
    assert declared.sweep_problems(written, known.KNOWN, stems) == []
    # a --class naming another class is refused: the declaration decides the id
    monkeypatch.setattr(register, "PATH", without)
    rc, _, err = _main(["register", "add", _sweep(tmp_path, SIGN_FINDING), "--finding", "0", "--class", "other",
                        "--out", str(tmp_path / "o2")], capsys)
    assert rc == 2 and "declared as sign__shapeless_grad_shape" in err


WRONG_SIN = '''f = mx.custom_function(lambda x: mx.sin(x))


@f.vjp
def _(primals, cotangent, output):
    return [2 * cotangent * mx.cos(primals[0])]   # twice the rule


@f.jvp
def _(primals, tangents):
    return [2 * tangents[0] * mx.cos(primals[0])]
'''


def _generated(function, transform, corner="generic"):
    class F:
        pass
    F.transform, F.record = transform, {"entry": function, "corner": corner, "seed": 0}
    text, why = sweep_reproducer.render(F(), register.SweepClass("x__y", "t", "m", "r", root_cause="c"))
    assert text is not None, why
    return text


@pytest.mark.skipif(mlx_version() is None, reason="the generated reproducers run on the installed MLX")
@pytest.mark.parametrize("transform", ["vjp", "jvp"])
def test_the_generated_difference_check_tells_a_wrong_rule_from_a_right_one(transform):
    """sin's own rule passes; the same reproducer around a custom function whose rule is
    twice sin's says present (and its form stays the house form)."""
    text = _generated("mx.sin", transform)
    assert register_sweep.form_problem(text) is None
    assert register_sweep.shows_defect(text)[0] == 0
    wrong = text.replace("f = mx.sin\n", WRONG_SIN, 1)
    assert wrong != text and register_sweep.shows_defect(wrong)[0] == 1


@needs_pinned_mlx()
def test_the_generated_vmap_check_shows_adds_repeated_output_axis():
    assert register_sweep.shows_defect(_generated("mx.add", "vmap(vjp, in_axes=last)"))[0] == 1
    assert register_sweep.shows_defect(_generated("mx.add", "vmap(vjp, in_axes=0)"))[0] == 0   # control


@needs_pinned_mlx()
def test_sweep_exits_1_on_a_class_the_register_lacks(tmp_path, capsys, monkeypatch):
    """sign's finding is explained by known.py; with its register entry gone the sweep does
    not pass: it prints the line that registers it and exits 1 (with it: exit 0)."""
    argv = ["sweep", "--functions", "mx.sign", "--generic-only", "--jobs", "1", "--out"]
    rc, out, _ = _main(argv + [str(tmp_path / "a")], capsys)
    assert rc == 0 and f"[{SIGN}]" in out and "register add" not in out
    without = tmp_path / "defects.json"
    without.write_text(register.dump([d for d in register.load() if d.id != SIGN]))
    monkeypatch.setattr(register, "PATH", without)
    rc, out, _ = _main(argv + [str(tmp_path / "b")], capsys)
    assert rc == 1 and f"class {SIGN} has no register entry" in out
    assert f"register add {tmp_path / 'b' / 'sweep.json'} --finding 0" in out


# --- `register declared`: classes known.py declares by hand ---------------------------------------

def test_register_declared_writes_the_entries_known_py_declares_and_the_register_lacks(tmp_path, capsys,
                                                                                       monkeypatch):
    without = tmp_path / "defects.json"
    without.write_text(register.dump([d for d in register.load() if d.id != SIGN]))
    real = next(d for d in register.load() if d.id == SIGN)
    monkeypatch.setattr(register, "PATH", without)
    out = tmp_path / "out"
    rc, stdout, err = _main(["register", "declared", "--out", str(out)], capsys)
    assert (rc, err) == (0, "") and f"registered {SIGN} (open" in stdout
    assert _made(out) == ["harness/cases/defects.json"]
    written = register.load(out / "harness" / "cases" / "defects.json")
    d = register.sweep_entries(written)[-1]
    assert (d.id, d.title, d.minimal, d.state) == (SIGN, real.title, real.minimal, "open")
    assert all(k.rule in d.root_cause for k in known.KNOWN if k.id == SIGN)
    stems = {p.stem for p in (ROOT / "probes" / "sweep").glob("*.py")}
    assert declared.sweep_problems(written, known.KNOWN, stems) == []
    monkeypatch.undo()
    rc, stdout, _ = _main(["register", "declared", "--out", str(tmp_path / "o2")], capsys)   # all registered
    assert rc == 0 and "nothing written" in stdout and not (tmp_path / "o2").exists()


def test_register_declared_needs_the_reproducer(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(known, "KNOWN", known.KNOWN + (known.Known("cos__no_file", ("mx.cos",), "vjp", "wrong value",
                                                                   "made up"),))
    rc, _, err = _main(["register", "declared", "--out", str(tmp_path / "o")], capsys)
    assert rc == 2 and "no reproducer probes/sweep/cos__no_file.py" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
