"""Campaigns beyond one machine: `fuzz --db github:...` (hypothesis's
GitHubArtifactDatabase, read-only, beside the local directory) and
`python3 -m mlx_vjpcheck.fuzz.merge` (several fuzz output directories merged by
signature, corpus candidates for what the regression corpus lacks).

No network and no mlx: the artifact is put where GitHubArtifactDatabase caches
its download, and the fuzz output directories are written with the package's
own writers from catalog scenarios (records as tests/evidence_fixtures.py makes
them), so the validator recomputes them like real ones.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis.database import DirectoryBasedExampleDatabase, GitHubArtifactDatabase

import helpers.evidence_fixtures as fx
from mlx_vjpcheck.cases import files
from mlx_vjpcheck.cli import fuzz as fuzz_cli
from mlx_vjpcheck.core.errors import UsageError
from mlx_vjpcheck.core.scenario import Scenario
from mlx_vjpcheck.evidence import rundir
from mlx_vjpcheck.fuzz import campaign, database, findings, merge

from conftest import ROOT  # noqa: E402
# Two catalog scenarios whose wrong grad:a makes the same signature (the small one is
# kept), and a third with another signature.
SMALL, BIG, OTHER = "gmm/right_identity/sorted", "gmm/left_identity/unsorted", "gmm/right_repeat/sorted"


# --- fuzz output directories, as `mlx-vjpcheck fuzz` writes them ------------------------------

def _scenario(name) -> Scenario:
    return fx.scenarios([name])[0]


def _record(s) -> dict:
    return dict(fx.record(s, wrong=True), context="fuzz")


def _finding(name, seed, t=1.0) -> findings.Finding:
    """A finding whose index entry follows from its record (as the validator re-derives it)."""
    s = _scenario(name)
    rec = _record(s)
    entry = fx.finding_files(s, rec)[0]
    keep = ("signature", "op", "gradient", "oracle", "kind", "form", "oracles", "size", "device")
    return findings.Finding(
        **{k: entry[k] for k in keep}, seed=seed, round=1, time_found_s=t, time_minimal_s=t + 0.5,
        cases_before=3, shrunk=True, first_size=entry["size"], found_at="2026-01-01T00:00:00+00:00",
        scenario=s.to_dict(), record=rec)


NEW = _finding(SMALL, 0).signature      # in no corpus
KNOWN = _finding(OTHER, 0).signature    # in the test corpus


def _info(seed, n_found) -> dict:
    stats = {"cases": 100 + seed, "passed": 90, "failed": 10, "invalid": 0, "unconfirmed": 0,
             "cache_hits": 0, "rounds": 3, "elapsed_s": 10.0 + seed, "cases_per_s": 10.0}
    return campaign.finish({"schema": campaign.SCHEMA, "seed": seed, "seeds": [seed], "budget_s": 10.0,
                            "max_cases": None, "device": "cpu", "ops": ["gather_mm"],
                            "dtypes": {"gather_mm": ["float32"]}, "shards": 1, "setup_s": 0.1,
                            "started_at": 1000.0, "database": None, "stats": stats, "hypothesis": "6.155.2",
                            "unconfirmed_samples": [], "interrupted": False, "from_database": []})


def campaign_dir(out, seed, items, platform="test-platform") -> Path:
    """A fuzz output directory: items are (signature, catalog scenario name)."""
    found = [_finding(name, seed, t=1.0 + n) for n, (sig, name) in enumerate(items)]
    assert [f.signature for f in found] == [sig for sig, _ in items]
    env = dict(fx.ENV, platform=platform, mlx="0.32.4")
    with rundir.staged(out, "fuzz") as tmp:
        campaign.write(tmp, {"findings": found, "campaign": _info(seed, len(found))}, env)
    return Path(out)


def corpus_dir(root, signatures) -> Path:
    """A regression corpus holding these signatures (regression/1, as harness/regressions/)."""
    root.mkdir(parents=True, exist_ok=True)
    for sig in signatures:
        s = _scenario(SMALL).to_dict()
        s.update(name=f"regress/{sig}", defect_tags=["left_selection"])
        entry = {"schema": files.REGRESSION_SCHEMA, "signature": sig, "class": "left_selection",
                 "scenario": s, "in_scope": True, "found": {"seeds": [0], "size": 4},
                 "pristine": {"mlx": "0.32.4", "device": "cpu", "status": "fail", "detail": "x"}}
        (root / f"{sig}.json").write_text(json.dumps(entry, indent=1, sort_keys=True))
    return root


def merge_cli(*args, cwd=ROOT):
    """The command line in a subprocess (what CI runs)."""
    return subprocess.run([sys.executable, "-m", "mlx_vjpcheck.fuzz.merge", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def merge_main(*args):
    """The same entry point in-process (fast): a CompletedProcess-like result."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = merge.main([str(a) for a in args])
    return subprocess.CompletedProcess(args, rc, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Linux seed 0 found NEW on a big case and KNOWN; macOS seed 1 found NEW on a small one."""
    assert findings.size(_scenario(SMALL)) < findings.size(_scenario(BIG))
    tmp = tmp_path_factory.mktemp("campaigns")
    a = campaign_dir(tmp / "linux-0", 0, [(NEW, BIG), (KNOWN, OTHER)], platform="Linux-test")
    b = campaign_dir(tmp / "macos-1", 1, [(NEW, SMALL)], platform="macOS-test")
    return a, b


@pytest.fixture
def two_campaigns(inputs, tmp_path):
    return (*inputs, corpus_dir(tmp_path / "corpus", [KNOWN]))


# --- the merge -----------------------------------------------------------------------------------

def test_merge_dedups_by_signature_keeps_the_smallest_and_proposes_only_new_ones(tmp_path, two_campaigns):
    a, b, corpus = two_campaigns
    out = tmp_path / "merged"
    p = merge_cli(a, b, "--corpus", corpus, "--out", out)
    assert p.returncode == 1, p.stderr          # 1: a new signature was proposed
    assert "2 signatures from 2 campaigns (3 findings); 1 already in the corpus, 1 new" in p.stdout

    merged = {f.signature: f for f in findings.load(out)}
    assert set(merged) == {NEW, KNOWN}          # three findings, two signatures
    assert merged[NEW].scenario["name"] == SMALL and merged[NEW].seed == 1 and merged[NEW].shard == 1
    assert merged[KNOWN].shard == 0

    info = json.loads((out / "campaign.json").read_text())
    assert info["seeds"] == [0, 1] and info["shards"] == 2 and info["stats"]["cases"] == 201
    assert [m["environment"]["platform"] for m in info["merged_from"]] == ["Linux-test", "macOS-test"]
    assert info["known"] == [KNOWN] and info["candidates"] == [NEW]

    assert sorted(p.name for p in (out / "candidates").iterdir()) == [f"{NEW}.json"]
    cand = json.loads((out / "candidates" / f"{NEW}.json").read_text())
    assert cand["schema"] == files.REGRESSION_SCHEMA and cand["signature"] == NEW
    assert cand["scenario"]["name"] == f"regress/{NEW}"
    assert cand["found"] == {"seeds": [0, 1], "size": findings.size(_scenario(SMALL))}
    assert cand["class"] is None and cand["in_scope"] is False and cand["out_of_scope_reason"]
    assert cand["pristine"]["status"] == "fail" and cand["pristine"]["detail"].startswith("grad:")
    assert {x["platform"] for x in cand["candidate"]["found_in"]} == {"Linux-test", "macOS-test"}
    # In the corpus's format: the loader reads it as a regression entry.
    [entry] = files.load_entries(out / "candidates")
    assert entry.kind == "regression" and entry.scenario.name == f"regress/{NEW}" and not entry.in_scope

    rc, stdout, stderr = fx.check(out)          # the validator recomputes every record
    assert rc == 0, stdout + stderr


def test_every_signature_is_a_candidate_against_an_empty_corpus(tmp_path, two_campaigns):
    a, b, _ = two_campaigns
    out = tmp_path / "merged"
    p = merge_main(a, b, "--corpus", corpus_dir(tmp_path / "empty", []), "--out", out)
    assert p.returncode == 1, p.stderr
    assert sorted(x.stem for x in (out / "candidates").iterdir()) == sorted([NEW, KNOWN])


def test_a_triaged_candidate_is_known_next_time(tmp_path, two_campaigns):
    a, b, corpus = two_campaigns
    first = tmp_path / "first"
    assert merge_main(a, b, "--corpus", corpus, "--out", first).returncode == 1
    entry = json.loads((first / "candidates" / f"{NEW}.json").read_text())
    entry.update({"class": "left_selection", "in_scope": True})          # what a person decides
    entry["scenario"]["defect_tags"] = ["left_selection"]
    for k in ("candidate", "out_of_scope_reason"):
        entry.pop(k)
    (corpus / f"{NEW}.json").write_text(json.dumps(entry, indent=1, sort_keys=True))
    assert {e.meta["signature"] for e in files.regressions(corpus)} == {NEW, KNOWN}

    again = tmp_path / "again"
    p = merge_main(a, b, "--corpus", corpus, "--out", again)
    assert p.returncode == 0, p.stderr
    assert not (again / "candidates").exists()
    assert "2 already in the corpus, 0 new" in p.stdout


def test_merged_directory_validates_and_tampering_is_caught(tmp_path, two_campaigns):
    a, b, corpus = two_campaigns
    out = tmp_path / "merged"
    assert merge_main(a, b, "--corpus", corpus, "--out", out).returncode == 1
    rc, stdout, stderr = fx.validate(out)
    assert rc == 0, stdout + stderr
    # negative control: the same directory with one candidate edited is rejected
    cand = out / "candidates" / f"{NEW}.json"
    cand.write_text(cand.read_text().replace('"in_scope": false', '"in_scope": true'))
    rc, stdout, _ = fx.validate(out)
    assert rc != 0 and "sha256 mismatch: candidates/" in stdout


def test_replace_is_needed_to_merge_over_an_earlier_merge(tmp_path, two_campaigns):
    a, b, corpus = two_campaigns
    out = tmp_path / "merged"
    assert merge_main(a, "--corpus", corpus, "--out", out).returncode == 1
    p = merge_main(a, b, "--corpus", corpus, "--out", out)
    assert p.returncode == 2 and "--replace" in p.stderr
    assert merge_main(a, b, "--corpus", corpus, "--out", out, "--replace").returncode == 1
    assert json.loads((out / "campaign.json").read_text())["seeds"] == [0, 1]


def _bad_cases(tmp, a, b, corpus):
    old_layout = fx.fuzz_dir(tmp / "old")              # findings.json without the finding fields
    index = json.loads((old_layout / "findings.json").read_text())
    (old_layout / "findings.json").write_text(json.dumps([{k: e[k] for k in ("signature", "files")} for e in index]))
    fx.rewrite_manifest(old_layout)
    tampered = campaign_dir(tmp / "tampered", 5, [(NEW, SMALL)])
    rec = tampered / "findings" / f"{NEW}.json"
    rec.write_text(rec.read_text().replace('"size"', '"sizE"'))
    junk = tmp / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("mine\n")
    bad_corpus = tmp / "bad-corpus"
    bad_corpus.mkdir()
    (bad_corpus / "x.json").write_text('{"schema": "something/else"}')
    out = tmp / "out"
    return {
        "missing input": [tmp / "nope", "--out", out],
        "not a fuzz directory": [junk, "--out", out],
        "older layout": [old_layout, "--out", out],
        "tampered input": [tampered, "--out", out],
        "input twice": [a, a, "--out", out],
        "out inside an input": [a, "--out", a / "merged"],
        "out not ours": [a, "--out", junk],
        "missing corpus": [a, "--corpus", tmp / "no-corpus", "--out", out],
        "corpus of other files": [a, "--corpus", bad_corpus, "--out", out],
        "no input": ["--out", out],
        "no --out": [a, b],
    }


def _snapshot(*roots) -> dict:
    """Every path and every file's contents (a directory's mtime moves when the
    writability probe makes and removes its temporary entry)."""
    return {p: p.read_bytes() if p.is_file() else None for r in roots for p in r.rglob("*")}


def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, two_campaigns):
    a, b, corpus = two_campaigns
    cases = _bad_cases(tmp_path, a, b, corpus)
    before = _snapshot(tmp_path, a.parent)
    for what, args in cases.items():
        with pytest.raises(SystemExit) if what in ("no input", "no --out") else contextlib.nullcontext():
            p = merge_main(*args)           # argparse's own errors exit from inside main
            assert p.returncode == 2, (what, p.stdout, p.stderr)
            assert len(p.stderr.strip().splitlines()) == 1, (what, p.stderr)
            assert p.stdout == "", what
    assert _snapshot(tmp_path, a.parent) == before
    # and through the real command line: one line, no traceback, exit 2
    for what in ("tampered input", "no input"):
        p = merge_cli(*cases[what])
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, (what, p.stderr)
        assert "Traceback" not in p.stderr and p.stdout == ""
    assert _snapshot(tmp_path, a.parent) == before


# --- --db: the example database shared through GitHub Actions artifacts -------------------------

def test_db_spec_forms_round_trip(tmp_path):
    s = database.parse(f"github:mlx-org/mlx-vjpcheck/fuzz-db.v1:{tmp_path / 'db'}")
    assert s.github == ("mlx-org", "mlx-vjpcheck", "fuzz-db.v1") and s.local == tmp_path / "db"
    assert database.parse(str(s)) == s
    assert database.parse("github:o/r/a").local == database.default_dir()
    assert database.parse("github:o/r/a:none").local is None
    assert database.parse("none") == database.Spec(None)
    assert database.parse("some/dir") == database.Spec(Path("some/dir"))
    assert database.parse(None) == database.Spec(database.default_dir())


@pytest.mark.parametrize("text", ["github:", "github:o/r", "github:o/r/a/b", "github:-o/r/a", "github:o/../a",
                                  "github:o/r/a b", "github:o/r/.a", "github:o/r/a:", "github:o//a", ""])
def test_db_spec_rejects_malformed_values(text):
    with pytest.raises(database.SpecError) as e:
        database.parse(text)
    assert "\n" not in str(e.value)


def test_github_problem_names_the_version_then_the_token(monkeypatch):
    monkeypatch.setattr(database, "GITHUB_READ_FIX", (999, 0, 0))
    assert "hypothesis>=999.0.0" in database.github_problem({"GITHUB_TOKEN": "t"})
    monkeypatch.setattr(database, "GITHUB_READ_FIX", (0, 0, 0))
    assert "GITHUB_TOKEN" in database.github_problem({})
    assert database.github_problem({"GITHUB_TOKEN": "t"}) is None


def test_cli_database_checks_and_normalizes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns = lambda db: argparse.Namespace(db=db)   # noqa: E731
    assert fuzz_cli._database(ns("rel/db")) == tmp_path / "rel" / "db"     # shards run from elsewhere
    assert fuzz_cli._database(ns("none")) == "none"
    monkeypatch.setattr(database, "GITHUB_READ_FIX", (0, 0, 0))
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    spec = fuzz_cli._database(ns("github:o/r/a:rel/db"))
    assert spec == f"github:o/r/a:{tmp_path / 'rel' / 'db'}"
    assert database.parse(spec).local.is_absolute()
    assert fuzz_cli._database(ns("github:o/r/a:none")) == "github:o/r/a:none"
    monkeypatch.delenv("GITHUB_TOKEN")
    with pytest.raises(UsageError, match="GITHUB_TOKEN"):
        fuzz_cli._database(ns("github:o/r/a:rel/db"))
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        fuzz_cli._database(ns("github:o/r/a:file.txt"))
    assert not (tmp_path / "rel").exists()      # checked, not created


@pytest.mark.parametrize("db", ["github:o/r", "github:o/r/a:", "github:o/r/a:file.txt", "github:o/r/a"])
def test_fuzz_refuses_a_bad_shared_db_before_any_work(tmp_path, db):
    (tmp_path / "file.txt").write_text("x")
    env = {k: v for k, v in __import__("os").environ.items() if k != "GITHUB_TOKEN"}
    p = subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli", "fuzz", "--time", "60", "--db", db,
                        "--out", str(tmp_path / "out"), "--no-progress"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert "--db" in p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["file.txt"]


KEY = database.key(["gather_mm"])


def _artifact(db: GitHubArtifactDatabase, source: Path, directory_entries: bool) -> Path:
    """Zip a DirectoryBasedExampleDatabase folder where GitHubArtifactDatabase keeps
    a fresh download (named by its UTC time), so that it needs no network."""
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat().replace(":", "_")
    path = Path(db.path) / f"{stamp}.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for d in sorted(p for p in source.iterdir() if p.is_dir()):
            if directory_entries:
                zf.writestr(f"{d.name}/", b"")
            for f in sorted(d.iterdir()):
                zf.writestr(f"{d.name}/{f.name}", f.read_bytes())
    return path


def _shared(tmp_path, local="local"):
    db = database.open_db(f"github:octo/repo/fuzz-db:{tmp_path / local}")
    assert isinstance(db.shared, GitHubArtifactDatabase)
    assert (db.shared.owner, db.shared.repo, db.shared.artifact_name) == ("octo", "repo", "fuzz-db")
    src = tmp_path / "previous-run"
    DirectoryBasedExampleDatabase(str(src)).save(KEY, b"from-the-artifact")
    return db, src


def test_shared_db_replays_both_and_keeps_only_locally(tmp_path):
    db, src = _shared(tmp_path)
    zipped = _artifact(db.shared, src, directory_entries=True)
    before = zipped.read_bytes()
    DirectoryBasedExampleDatabase(str(tmp_path / "local")).save(KEY, b"kept-here-before")
    assert sorted(db.stored(KEY)) == [b"from-the-artifact", b"kept-here-before"]
    assert sorted(db.fetch(KEY)) == [b"from-the-artifact", b"kept-here-before"]
    db.keep(KEY, b"new-minimal-case")
    local = DirectoryBasedExampleDatabase(str(tmp_path / "local"))
    assert sorted(local.fetch(KEY)) == [b"kept-here-before", b"new-minimal-case"]
    assert zipped.read_bytes() == before        # the artifact is read-only
    assert sorted(db.stored(KEY)) == [b"from-the-artifact", b"kept-here-before", b"new-minimal-case"]
    # negative control: without the github: part only the local directory is seen
    assert b"from-the-artifact" not in database.open_db(tmp_path / "local").stored(KEY)


def test_shared_db_without_local_directory_keeps_nothing(tmp_path):
    db = database.open_db("github:octo/repo/fuzz-db:none")
    src = tmp_path / "previous-run"
    DirectoryBasedExampleDatabase(str(src)).save(KEY, b"from-the-artifact")
    _artifact(db.shared, src, directory_entries=True)
    db.keep(KEY, b"new")
    assert db.stored(KEY) == [b"from-the-artifact"]


def test_upload_artifact_zips_need_the_hypothesis_the_cli_asks_for(tmp_path):
    """actions/upload-artifact writes no directory entries; hypothesis reads such a
    zip from 6.156.2 on, which is why `--db github:` asks for it."""
    from hypothesis.version import __version_info__
    db, src = _shared(tmp_path)
    _artifact(db.shared, src, directory_entries=False)
    if tuple(__version_info__[:3]) >= database.GITHUB_READ_FIX:
        assert db.stored(KEY) == [b"from-the-artifact"]
        assert database.github_problem({"GITHUB_TOKEN": "t"}) is None
    else:
        with pytest.raises(KeyError):
            db.stored(KEY)
        assert "hypothesis" in database.github_problem({"GITHUB_TOKEN": "t"})


def test_an_unreachable_artifact_is_one_line_and_the_local_db_still_works(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(GitHubArtifactDatabase, "_fetch_artifact", lambda self: None)   # no download
    db = database.open_db(f"github:octo/repo/fuzz-db:{tmp_path / 'local'}")
    DirectoryBasedExampleDatabase(str(tmp_path / "local")).save(KEY, b"local")
    assert db.stored(KEY) == [b"local"]
    assert list(db.fetch(KEY)) == [b"local"]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "github:octo/repo/fuzz-db" in err[0], err


def test_the_download_directory_goes_with_the_database(tmp_path):
    db = database.open_db(f"github:octo/repo/fuzz-db:{tmp_path / 'local'}")
    where = Path(db.shared.path)
    assert where.is_dir() and not where.is_relative_to(tmp_path)
    del db
    gc.collect()
    assert not where.exists()
