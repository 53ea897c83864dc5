"""`mlx-vjpcheck register add FINDING`: a fuzz finding becomes a register entry, a corpus
entry and a reproducer without hand-editing; a registered signature writes nothing; bad
input is one line and exit 2; nothing it did not make is replaced. The findings are made
here from catalog scenarios in the fuzzer's file format (no MLX needed)."""
from __future__ import annotations

import dataclasses
import json
import shutil
from types import SimpleNamespace

import pytest
from conftest import ROOT, run_cli
from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import catalog, declared, files, register
from mlx_vjpcheck.cli import fuzz as fuzz_cli
from mlx_vjpcheck.cli import main as cli_main
from mlx_vjpcheck.cli import register as register_cli
from mlx_vjpcheck.core.opinfo import KnownDefect

NEW = "topk__grad-a__reference__wrong-value__toyform"
KNOWN = "topk__grad-a__reference__wrong-value__sort"   # a corpus entry


def _finding(tmp_path, signature=NEW, **change) -> str:
    """A fuzz output directory holding one finding, as the fuzzer writes it."""
    s = next(s for s in catalog.catalog() if s.op == "topk" and not s.defect_tags)
    record = {"status": "fail", "device": "cpu", "scenario": s.name, "error": None,
              "checks": [{"name": "grad:a", "kind": "reference", "passed": False,
                          "reason": "1 of 4 elements outside tolerance"}]}
    detail = dict({"schema": files.FINDING_SCHEMA, "signature": signature, "oracle": "reference",
                   "oracles": ["reference"], "scenario": s.to_dict(), "record": record, "expected": {},
                   "size": 4}, **change)
    run = tmp_path / "fuzz"
    (run / "findings").mkdir(parents=True, exist_ok=True)
    (run / "environment.json").write_text(json.dumps({"mlx": "0.32.4"}))
    (run / "findings.json").write_text(json.dumps([{"signature": signature, "seed": 7}]))
    path = run / "findings" / f"{signature}.json"
    path.write_text(json.dumps(detail))
    return str(path)


def _main(argv, capsys) -> tuple:
    rc = cli_main.main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_a_new_signature_becomes_register_corpus_and_reproducer(tmp_path, capsys):
    out = tmp_path / "out"
    rc, stdout, err = _main(["register", "add", _finding(tmp_path), "--class", "toy_class", "--out", str(out)],
                            capsys)
    assert (rc, err) == (0, "")
    made = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert made == ["harness/cases/defects.json", f"harness/regressions/{NEW}.json",
                    "probes/findings/topk__toy_class.py"]
    # the register: every old entry as it was, the new one last, loadable
    new = register.load(out / "harness" / "cases" / "defects.json")
    old = register.load()
    assert register.catalog_entries(new)[:-1] == register.catalog_entries(old)
    assert register.sweep_entries(new) == register.sweep_entries(old)
    d = register.catalog_entries(new)[-1]
    assert (d.id, d.op, d.klass, d.status, d.fuzz_signature) == ("topk__toy_class", "topk", "toy_class",
                                                                   "not fixed", NEW)
    assert d.outside_catalog and "0.32.4" in d.releases
    # the reproducer is what the register renders; the corpus entry loads, with its seed
    assert (out / d.probe).read_text(encoding="utf-8") == d.reproducer()
    (entry,) = files.regressions(out / "harness" / "regressions")
    assert entry.meta["class"] == "toy_class" and entry.meta["found"]["seeds"] == [7]
    assert entry.scenario.name == f"regress/{NEW}" and not entry.in_scope
    # what it tells the person: the declaration the op record lacks
    assert "KnownDefect('toy_class')" in stdout and "harness/ops/topk.py" in stdout


def test_the_new_entry_needs_its_declaration_on_the_op_record(tmp_path, capsys):
    """The loop closes through the records: without the KnownDefect the written register
    disagrees with them, with it (the line the command prints) it agrees."""
    out = tmp_path / "out"
    assert _main(["register", "add", _finding(tmp_path), "--class", "toy_class", "--out", str(out)], capsys)[0] == 0
    written = register.load(out / "harness" / "cases" / "defects.json")
    records = dict(ops.registry())
    assert declared.register_problems(written, records) == [
        "register entry topk__toy_class: no KnownDefect('toy_class') on op 'topk'"]
    topk = records["topk"]
    records["topk"] = dataclasses.replace(topk, known_defects=topk.known_defects + (KnownDefect("toy_class"),))
    assert declared.register_problems(written, records) == []


def test_a_registered_signature_writes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    rc, stdout, err = _main(["register", "add", _finding(tmp_path, KNOWN), "--out", str(out)], capsys)
    assert (rc, err) == (0, "")
    assert "registered already (regression corpus, class tie_misroute)" in stdout
    assert not out.exists()


def test_a_new_signature_of_a_known_class_joins_the_corpus_only(tmp_path, capsys):
    out = tmp_path / "out"
    rc, stdout, _ = _main(["register", "add", _finding(tmp_path), "--class", "tie_misroute", "--out", str(out)],
                          capsys)
    assert rc == 0 and "new signature of the known class topk/tie_misroute" in stdout
    assert [p.name for p in out.rglob("*") if p.is_file()] == [f"{NEW}.json"]
    (entry,) = files.regressions(out / "harness" / "regressions")
    fixed = next(d for d in register.load() if d.id == "topk__tie_misroute").status == "fixed"
    assert entry.in_scope == fixed   # as the register says for its class


@pytest.mark.parametrize("content, fragment", [
    ("{not json", "not strict JSON"),
    ('{"schema": "mlx-vjpcheck/scenario/3", "scenarios": []}', "not a fuzz finding"),
])
def test_a_malformed_finding_is_one_line_and_exit_2(tmp_path, content, fragment):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    out = tmp_path / "out"
    proc = run_cli("register", "add", bad, "--out", out)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and fragment in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("change, fragment", [
    (dict(signature="not a signature"), "is not op__gradient__oracle__kind__form"),
    (dict(signature="cumsum__grad-a__reference__wrong-value__x"), "the scenario is of op 'topk'"),
    (dict(oracle="vmap"), "is not the signature's 'reference'"),
    (dict(record={"status": "pass"}), "its record must say"),
    (dict(scenario={"op": "topk"}), "not a scenario"),
])
def test_an_inconsistent_finding_is_refused(tmp_path, capsys, change, fragment):
    out = tmp_path / "out"
    rc, stdout, err = _main(["register", "add", _finding(tmp_path, **change), "--out", str(out)], capsys)
    assert rc == 2 and len(err.splitlines()) == 1 and fragment in err, err
    assert not out.exists()


def test_bad_options_are_refused(tmp_path, capsys):
    finding = _finding(tmp_path)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.txt").write_text("not the tool's")
    for argv, fragment in ((["--class", "Bad-Name"], "a lower-case name"),
                           (["--out", str(busy)], "must be an empty or absent folder")):
        rc, _, err = _main(["register", "add", finding] + argv + ([] if "--out" in argv else
                                                                   ["--out", str(tmp_path / "o")]), capsys)
        assert rc == 2 and fragment in err and len(err.splitlines()) == 1
    assert [p.name for p in busy.iterdir()] == ["mine.txt"]


def _checkout(tmp_path):
    """A checkout-shaped folder (what checkout_root accepts) with the real docs page."""
    root = tmp_path / "checkout"
    for d in ("probes/findings", "harness/regressions", "docs"):
        (root / d).mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    shutil.copy(ROOT / "docs" / "findings.md", root / "docs" / "findings.md")
    return root


def test_in_a_checkout_it_writes_in_place_and_the_table_follows(tmp_path, capsys, monkeypatch):
    root = _checkout(tmp_path)
    monkeypatch.setattr(register_cli, "checkout_root", lambda: root)
    rc, stdout, err = _main(["register", "add", _finding(tmp_path), "--class", "toy_class"], capsys)
    assert (rc, err) == (0, "")
    assert (root / "probes" / "findings" / "topk__toy_class.py").is_file()
    assert (root / "harness" / "regressions" / f"{NEW}.json").is_file()
    assert "| topk | toy_class |" in (root / "docs" / "findings.md").read_text(encoding="utf-8")


def test_it_never_replaces_a_file_it_did_not_make(tmp_path, capsys, monkeypatch):
    root = _checkout(tmp_path)
    theirs = root / "harness" / "regressions" / f"{NEW}.json"
    theirs.write_text("someone's own file")
    monkeypatch.setattr(register_cli, "checkout_root", lambda: root)
    rc, _, err = _main(["register", "add", _finding(tmp_path), "--class", "toy_class"], capsys)
    assert rc == 2 and "was not made by this command" in err and len(err.splitlines()) == 1
    assert theirs.read_text() == "someone's own file"
    assert not (root / "probes" / "findings" / "topk__toy_class.py").exists()
    assert not (root / "harness" / "cases").exists()


def test_outside_a_checkout_it_asks_for_out(tmp_path, capsys, monkeypatch):
    site = tmp_path / "site" / "mlx_vjpcheck" / "cases" / "defects.json"   # an installed register, no checkout
    site.parent.mkdir(parents=True)
    shutil.copyfile(register.PATH, site)
    monkeypatch.setattr(register, "PATH", site)
    rc, _, err = _main(["register", "add", _finding(tmp_path), "--class", "toy_class"], capsys)
    assert rc == 2 and "give --out DIR" in err


def test_fuzz_prints_the_command_for_new_signatures_only(capsys, tmp_path):
    found = [SimpleNamespace(signature=NEW), SimpleNamespace(signature=KNOWN)]
    fuzz_cli.print_unregistered(found, tmp_path / "fz")
    out = capsys.readouterr().out
    assert f"mlx-vjpcheck register add {tmp_path / 'fz' / 'findings' / NEW}.json" in out
    assert KNOWN not in out and "1 of 2 signatures are registered already" in out
