"""What the validator says it checked, and what it refuses to claim (no MLX needed):
binding without an off switch, fuzz indexes bound to their files, native gate rows
re-derived, strict formats within bounds, terminal-safe output."""
from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

import helpers.evidence_fixtures as fx
from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.core import jsonio
from mlx_vjpcheck.evidence import atomic, campaigns, results, rundir, strict
from mlx_vjpcheck.running import environment
from mlx_vjpcheck.validation import catalog_table


def check(path, *extra):
    from mlx_vjpcheck.cli import validate
    import contextlib
    import io
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = validate.script([str(path), *extra])
    return rc, out.getvalue(), err.getvalue()


def write_results(root: Path, data: dict) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "results.json").write_text(jsonio.dumps(data, indent=1, sort_keys=True))
    (root / "environment.json").write_text(jsonio.dumps(data["environment"], indent=1, sort_keys=True))
    fx.rewrite_manifest(root)
    return root


def catalog_run(names=None, flt=None, digest=None, scenarios_file=None, defects=True) -> dict:
    """A self-consistent results file over catalog scenarios, as `run` writes one (with
    `defects`, every scenario tagged with a defect fails)."""
    chosen = [s for s in catalog.catalog() if names is None or s.name in names]
    recs = [fx.record(s, wrong=defects and s.expects_defect) for s in chosen]
    prov = environment.provenance(["mlx-vjpcheck", "run"], {"filter": flt, "scenarios": scenarios_file},
                                  digest or catalog.digest())
    return json.loads(json.dumps(results.build(chosen, recs, dict(fx.ENV), provenance=prov)))


GMM = [s.name for s in catalog.catalog() if s.name.startswith("gmm/report_example")]


# --- binding -----------------------------------------------------------------------------------

def test_a_filtered_run_is_bound_and_says_its_scope(tmp_path):
    d = write_results(tmp_path / "r", catalog_run(GMM, flt="gmm/report_example"))
    rc, out, _ = check(d, "--expect", "defects")
    assert rc == 0, out
    assert "bound: the catalog under filter 'gmm/report_example'" in out


def test_dropped_failing_records_fail_the_binding(tmp_path):
    data = catalog_run(GMM, flt="gmm/report_example")
    keep = [r for r in data["records"] if r["status"] == "pass"]
    data["records"], data["summary"] = keep, results.summary(keep)
    data["scenarios"] = {k: v for k, v in data["scenarios"].items() if k in {r["scenario"] for r in keep}}
    rc, out, _ = check(write_results(tmp_path / "r", data))
    assert rc == 1 and "are not the catalog under filter" in out, out


@pytest.mark.parametrize("how", ["scenario file", "other catalog", "no provenance"])
def test_unbound_evidence_is_named_and_refused_by_expect(tmp_path, how):
    if how == "scenario file":
        data = catalog_run(GMM, scenarios_file="picked.json")
    elif how == "other catalog":
        data = catalog_run(GMM, digest="0" * 64)
        data["provenance"]["harness"]["version"] = "0.0.1"
    else:
        data = catalog_run(GMM)
        data.pop("provenance")
        data["kind"] = "native-wheel"
    d = write_results(tmp_path / "r", data)
    rc, out, _ = check(d)
    assert rc == 0 and "unbound: these records are not claimed to be the catalog" in out, out
    for expect in ("defects", "pass"):
        rc, out, _ = check(d, "--expect", expect)
        assert rc == 1 and f"expected {expect}: not shown" in out, out
    rc, out, _ = check(d, "--expect", "defects", "--allow-unbound")
    assert rc == 0, out


def test_a_bound_part_of_the_catalog_shows_its_defects_but_no_pass(tmp_path):
    d = write_results(tmp_path / "r", catalog_run(GMM, flt="gmm/report_example"))
    rc, out, _ = check(d, "--expect", "pass", "--allow-unbound")
    assert rc == 1 and "shows defects" in out, out


def test_a_changed_scenario_under_a_catalog_name_fails_even_when_unbound(tmp_path):
    data = catalog_run(GMM, scenarios_file="picked.json")
    name = GMM[0]
    data["scenarios"][name]["description"] = "something else"
    rc, out, _ = check(write_results(tmp_path / "r", data))
    assert rc == 1 and "carries the name of a catalog scenario but differs from it" in out, out


def test_a_partial_catalog_does_not_show_pass(tmp_path):
    d = write_results(tmp_path / "r", catalog_run(GMM, flt="gmm/report_example", defects=False))
    rc, out, _ = check(d, "--expect", "pass")
    assert rc == 1 and "expected pass: not shown" in out and "filter 'gmm/report_example'" in out, out
    rc, out, _ = check(d, "--expect", "pass", "--allow-unbound")
    assert rc == 0 and "(all pass)" in out, out


# --- fuzz evidence --------------------------------------------------------------------------

@pytest.fixture
def fuzz(tmp_path):
    return fx.fuzz_dir(tmp_path / "fuzz")


def _reman(d):
    fx.rewrite_manifest(d)
    return d


def test_an_index_written_as_an_object_is_refused(fuzz):
    idx = json.loads((fuzz / "findings.json").read_text())
    (fuzz / "findings.json").write_text(json.dumps({"findings": idx}))
    rc, out, _ = check(_reman(fuzz))
    assert rc == 1 and "findings-index.schema.json at /" in out and "is not array" in out, out


def test_a_removed_finding_is_consistent_but_its_absence_is_named_unreproducible(fuzz):
    idx = json.loads((fuzz / "findings.json").read_text())
    for f in idx[0]["files"].values():
        (fuzz / f).unlink()
    (fuzz / "findings.json").write_text("[]")
    camp = json.loads((fuzz / "campaign.json").read_text())
    camp["findings"] = []
    (fuzz / "campaign.json").write_text(json.dumps(camp))
    rc, out, _ = check(_reman(fuzz))
    assert rc == 0 and "absence of other findings: not reproducible" in out, out
    rc, out, _ = check(fuzz, "--expect", "pass")
    assert rc == 1 and "proves no absence offline" in out, out


def test_an_unlisted_record_file_is_refused(fuzz):
    rec = next((fuzz / "findings").glob("*.json"))
    shutil.copy(rec, rec.with_name("gather_mm__other.json"))
    rc, out, _ = check(_reman(fuzz))
    assert rc == 1 and "is not a file the index lists" in out, out


def test_an_index_entry_that_does_not_follow_from_its_record_is_refused(fuzz):
    idx = json.loads((fuzz / "findings.json").read_text())
    idx[0]["kind"], idx[0]["size"] = "shape", 1
    (fuzz / "findings.json").write_text(json.dumps(idx))
    rc, out, _ = check(_reman(fuzz))
    assert rc == 1 and "but the re-checked record gives" in out, out


def test_a_finding_without_its_record_is_refused(fuzz):
    path = next((fuzz / "findings").glob("*.json"))
    detail = json.loads(path.read_text())
    detail.pop("record")
    path.write_text(json.dumps(detail))
    rc, out, _ = check(_reman(fuzz))
    assert rc == 1 and "required field 'record' is missing" in out, out


def test_a_forged_replayable_claim_is_refused(fuzz):
    camp = json.loads((fuzz / "campaign.json").read_text())
    camp["replayable"] = {"by_seed": True, "why": "trust me"}
    (fuzz / "campaign.json").write_text(json.dumps(camp))
    rc, out, _ = check(_reman(fuzz))
    assert rc == 1 and "do not follow from the campaign's own counts" in out, out


def test_the_replayable_rule():
    base = fx.campaign_info([], max_cases=100)
    assert base["ended_by"] == "time" and not base["replayable"]["by_seed"]   # 40 cases < 100
    done = fx.campaign_info([], max_cases=40)
    assert done["ended_by"] == "cases" and done["replayable"]["by_seed"]
    for over, why in (({"interrupted": True}, "interrupted"), ({"database": "/db"}, "example database"),
                      ({"budget_s": 3.0}, "of the time budget")):
        got = fx.campaign_info([], max_cases=40, **over)["replayable"]
        assert not got["by_seed"] and why in got["why"], got


def test_the_campaign_rule_uses_the_searchs_deferral_share():
    from mlx_vjpcheck.fuzz import search
    assert campaigns.DEFER_FRACTION == search.DEFER_FRACTION


def test_a_seed_for_any_finding_name():
    assert campaigns.fd_seed("fuzz/gather_mm/00000000000f") == 15
    assert campaigns.fd_seed("no-hex-suffix") == campaigns.fd_seed("no-hex-suffix") >= 0


# --- native gate rows ---------------------------------------------------------------------------

@pytest.fixture
def gate(tmp_path):
    return fx.native_dir(tmp_path / "native")


def _rows(d, fn):
    comp = json.loads((d / "comparison.json").read_text())
    fn(comp["rows"])
    (d / "comparison.json").write_text(json.dumps(comp))
    return _reman(d)


def test_a_failing_row_marked_out_of_scope_is_refused(gate):
    d = _rows(gate, lambda rows: [r.update(in_scope=False, reason="not ours") for r in rows if r["pristine"] != "pass"])
    rc, out, _ = check(d)
    assert rc == 1 and "in_scope False but this package's catalog gives True" in out, out


def test_an_expected_defect_unmarked_is_refused(gate):
    d = _rows(gate, lambda rows: [r.update(expects_defect=False) for r in rows if r["pristine"] != "pass"])
    rc, out, _ = check(d)
    assert rc == 1 and "expects_defect False but this package's catalog gives True" in out, out


def test_a_gate_over_part_of_the_catalog_does_not_show_gate_pass(gate):
    fx.with_build_record(gate)
    rc, out, _ = check(gate, "--expect", "gate-pass")
    assert rc == 1 and "it is unbound" in out, out
    rc, out, _ = check(gate, "--expect", "gate-pass", "--allow-unbound")
    assert rc == 0, out


def test_a_row_without_the_fields_takes_them_from_the_package(gate):
    d = _rows(fx.with_build_record(gate),
              lambda rows: [(r.pop("expects_defect"), r.pop("in_scope"), r.pop("source")) for r in rows])
    rc, out, _ = check(d, "--expect", "gate-pass", "--allow-unbound")
    assert rc == 0 and "pristine reproduced 1/1 expected defects" in out, out


def test_a_gate_table_written_by_hand_does_not_show_gate_pass(gate):
    """Pristine and patched results and comparison rows made without a build: consistent, but
    nothing in it can be rebuilt, so no gate-pass, whatever --allow-unbound says."""
    rc, out, _ = check(gate, "--expect", "gate-pass", "--allow-unbound")
    assert rc == 1 and "no build record" in out, out


@pytest.mark.parametrize("forge,said", [
    ("commit", "no MLX checkout commit"), ("patch", "is not the patch whose hash the build records"),
    ("flags", "no build flags"), ("scenarios", "not in scenarios.json"), ("tests", "no MLX test results")])
def test_a_gate_without_what_rebuilds_it_does_not_show_gate_pass(gate, forge, said):
    d = fx.with_build_record(gate, tests=forge != "tests")
    env = json.loads((d / "environment.json").read_text())
    if forge == "commit":
        env["native"]["mlx_checkout_commit"] = None
    elif forge == "flags":
        env["native"]["unit_flags"] = {}
    (d / "environment.json").write_text(json.dumps(env))
    if forge == "patch":   # the patch edited, the build's hash of it kept
        (d / "patch.diff").write_text((d / "patch.diff").read_text() + "+c\n")
    if forge == "scenarios":   # a compared scenario the builds never ran
        doc = json.loads((d / "scenarios.json").read_text())
        doc["scenarios"] = doc["scenarios"][1:]
        (d / "scenarios.json").write_text(json.dumps(doc))
    _reman(d)
    rc, out, _ = check(d, "--expect", "gate-pass", "--allow-unbound")
    assert rc == 1 and said in out, out


# corpus entries: one the series fixes, one out of its scope (its row carries the reason)
CORPUS = ("regress/gather_mm__grad-a__reference__wrong-value__lhs-sorted",
          "regress/cumprod__hvp-a__second_order__wrong-value__scan")


def test_a_gate_over_corpus_entries_validates_and_their_origin_cannot_be_relabelled(tmp_path):
    # What a gate (and now its --replay) writes: corpus rows as regression rows. Negative
    # controls: a corpus entry's row that claims a catalog scenario, with its corpus fields or
    # without them (as replays wrote them), and a catalog scenario's row that claims the corpus.
    gate = fx.native_dir(tmp_path / "g", corpus=CORPUS)
    rc, out, _ = check(gate)
    assert rc == 0 and "comparison.json: 7/7 rows ok" in out, out
    for n, (name, edit, said) in enumerate((
            (CORPUS[0], dict(source="catalog"), "source 'catalog' but the scenario is a regression scenario"),
            (CORPUS[1], dict(source="catalog", in_scope=False, reason=None, signature=None, recorded_pristine=None),
             "in_scope False but this package's regression gives True"),
            (fx.FAILING[0], dict(source="regression", signature="x", recorded_pristine="fail"),
             "source 'regression' but the scenario is a catalog scenario"))):
        d = tmp_path / f"forged{n}"
        shutil.copytree(gate, d)

        def forge(rows, name=name, edit=edit):
            for r in rows:
                if r["scenario"] == name:
                    r.update(edit)
                    for k in [k for k, v in r.items() if v is None]:   # None: the field left out
                        del r[k]
        rc, out, _ = check(_rows(d, forge))
        assert rc == 1 and f"comparison.json: ({name!r}, 'cpu'): " in out and said in out, out


# --- strict formats -----------------------------------------------------------------------------

def test_deep_nesting_is_one_line_not_a_traceback(tmp_path):
    d = fx.run_dir(tmp_path / "r")
    (d / "results.json").write_text("[" * 1000 + "]" * 1000)
    rc, out, err = check(_reman(d))
    assert rc == 1 and "JSON nested 1000 levels deep (limit 64)" in out and "Traceback" not in out + err, out


def test_too_many_values_are_refused_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(strict, "MAX_CONTAINERS", 100)
    d = fx.run_dir(tmp_path / "r")
    (d / "results.json").write_text(json.dumps([{} for _ in range(500)]))
    rc, out, _ = check(_reman(d))
    assert rc == 1 and "501 JSON objects and arrays (limit 100)" in out, out


def test_the_evidence_budget_is_shared_by_its_files(tmp_path, monkeypatch):
    monkeypatch.setattr(strict, "MAX_TOTAL_ELEMENTS", 50)
    rc, out, _ = check(fx.run_dir(tmp_path / "r"))
    assert rc == 1 and "values together" in out, out


def test_shape_of_json_text():
    assert strict.shape(b'{"a": "[[[\\"]]]", "b": [1, [2, {}]]}') == strict.Shape(4, 4, 8)
    assert strict.shape(b"[]").depth == 1 and strict.shape(b"7").depth == 0


def test_a_shell_script_in_front_of_a_zip_is_refused(tmp_path):
    d = fx.run_dir(tmp_path / "r")
    z = tmp_path / "r.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for p in sorted(d.rglob("*")):
            zf.write(p, p.relative_to(d).as_posix())
    assert check(z)[0] == 0
    poly = tmp_path / "poly.zip"
    poly.write_bytes(b"#!/bin/sh\necho run me\nexit 0\n" + z.read_bytes())
    rc, out, _ = check(poly)
    assert rc == 1 and "bytes before entry" in out and "belong to no entry" in out, out
    tail = tmp_path / "tail.zip"
    tail.write_bytes(z.read_bytes() + b"extra")
    assert check(tail)[0] in (1, 2)


def test_a_json_file_of_no_kind_is_refused(tmp_path):
    d = fx.run_dir(tmp_path / "r")
    (d / "notes.json").write_text("{}")
    rc, out, _ = check(_reman(d))
    assert rc == 1 and "notes.json: no schema: not a file mlx-vjpcheck writes" in out, out


# --- terminal-safe output ----------------------------------------------------------------------

def test_escapes_in_recorded_versions_cannot_paint_the_verdict(tmp_path):
    data = catalog_run(GMM, flt="gmm/report_example")
    data["environment"]["mlx"] = "0.32.4\x1b[2K\r641/641 checks passed (all pass)"
    d = write_results(tmp_path / "r", data)
    rc, out, _ = check(d)
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out
    assert rc == 1 and "does not follow" in out   # and not a version at all


def test_visible_escapes_what_terminals_obey():
    from mlx_vjpcheck.evidence.text import visible
    assert visible("a\x1b[31mb\u202ec\x85d\u2028e\u200bf") == "a\\x1b[31mb\\u202ec\\x85d\\u2028e\\u200bf"
    assert visible("gmm/report_example é ✓") == "gmm/report_example é ✓"


def test_summary_code_spans_escape_bidi_and_nel():
    from mlx_vjpcheck.evidence import summary
    span = summary.code("x\u202ey\x85z")
    assert "\u202e" not in span and "\x85" not in span and "\\u202e" in span


def test_rich_consoles_print_emoji_codes_as_text():
    import io
    from mlx_vjpcheck.cli import terminal
    c = terminal.console()
    c.file = io.StringIO()
    c.print(terminal.escape("twice:scales: [scatter_add_axis] \x1b[31m"))
    text = c.file.getvalue()
    assert "twice:scales:" in text and "[scatter_add_axis]" in text and "\x1b[31m" not in text


# --- the command line ----------------------------------------------------------------------------

def test_validate_is_a_subcommand(tmp_path):
    from mlx_vjpcheck.cli import main
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main.main(["validate", str(fx.run_dir(tmp_path / "r"))])
    assert rc == 0 and "trust: consistent" in out.getvalue()


def test_modules_run_with_python_m_work_or_refuse(tmp_path):
    import subprocess
    import sys
    d = fx.run_dir(tmp_path / "r")
    p = subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli.validate", str(d)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0 and "trust: consistent" in p.stdout, p.stdout + p.stderr
    for module in ("replay", "bundle", "versions", "fuzz", "terminal", "options"):
        p = subprocess.run([sys.executable, "-m", f"mlx_vjpcheck.cli.{module}", str(d)], capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and "mlx-vjpcheck" in p.stderr, (module, p.stderr)


def test_the_catalog_table_is_this_codes_and_rebuilds_when_unreadable(tmp_path, monkeypatch):
    monkeypatch.setenv("MLX_VJPCHECK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(catalog_table, "_MEMO", [])
    built = catalog_table.get()
    assert built.digest == catalog.digest() and len(built.names) == len(catalog.catalog())
    folder = next((tmp_path / "cache" / "validator").iterdir())
    (folder / "values.npy").write_bytes(b"garbage")
    monkeypatch.setattr(catalog_table, "_MEMO", [])
    again = catalog_table.get()
    assert again.digest == built.digest and again.hashes == built.hashes
    from mlx_vjpcheck.cases import expected
    import numpy as np
    checked = 0
    for s in catalog.catalog():   # every value, with its dtype (complex ones included)
        key = catalog_table.text_hash(catalog_table.canonical(s.to_dict()))
        if key not in again.expected:
            continue
        for k, v in expected.expected(s).items():
            got = again.expected[key][k]
            assert got.dtype == np.asarray(v).dtype and np.array_equal(got, v, equal_nan=True), (s.name, k)
        checked += 1
    assert checked > len(built.names) // 2


def test_a_finding_no_index_lists_is_refused(tmp_path):
    run = fx.run_dir(tmp_path / "r")
    fz = fx.fuzz_dir(tmp_path / "f")
    rec = next((fz / "findings").glob("*.json"))
    (run / "findings").mkdir()
    shutil.copy(rec, run / "findings" / rec.name)
    rc, out, _ = check(_reman(run))
    assert rc == 1 and "a finding that no findings.json lists" in out, out


@pytest.mark.parametrize("name,kind", [("results.json", "gate-pristine"), ("results.json", "fuzz"),
                                       ("results-pristine.json", "run"), ("results-extra.json", "run")])
def test_a_results_kind_its_place_does_not_write_is_refused(tmp_path, name, kind):
    """One sed of "kind" (and the manifest re-hashed) cannot move records out of the
    catalog binding or out of replay: the kind must be what its file's command writes."""
    data = catalog_run(GMM)
    data["kind"] = kind
    d = tmp_path / "r"
    with rundir.staged(d) as tmp:
        atomic.write_json(Path(tmp) / name, data)
        atomic.write_json(Path(tmp) / "environment.json", data["environment"])
    rc, out, _ = check(d)
    assert rc == 1 and f"{name}: " in out and ("kind" in out or "not a results file" in out), out
