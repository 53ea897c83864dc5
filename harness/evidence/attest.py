"""The attestation written beside a bundle: an in-toto Statement v1 whose subject
is the bundle (its file name and SHA-256) and whose predicate is a test result
(https://in-toto.io/attestation/test-result/v0.1).

    evidence.zip               the bundle
    evidence.zip.intoto.json   this statement (it cannot live inside the file it names)

Everything in the predicate follows from the bundle's own files, so the
validator recomputes it with this same code and compares:

* every results record is one test, named `<scenario>@<device>`; a record from
  any results file but the top-level results.json (the native gate's
  results-pristine.json / results-patched.json, a nested run) carries the file
  in parentheses, `<scenario>@<device> (results-patched.json)`, and so does a
  fuzz finding's record (`(findings/<signature>.json)`);
* every case record of a sweep (sweep.json, at any depth) is one test too, named
  `<entry>@<corner>#<seed> (<path of sweep.json>)`: pass -> passedTests; fail,
  crash, harness error -> failedTests; "not applicable" (the forward refused the
  corner: nothing was differentiated) is in neither list;
* every check of a gradcheck (gradcheck.json) is one test, named
  `<target> <transform> [<dtype>] d <output> / d <input> (<path>)`: pass ->
  passedTests, fail -> failedTests, a kink, a missing rule or a call not tried
  in neither list;
* status pass -> passedTests; fail, error, crashed -> failedTests; a fuzz
  finding is a confirmed failure -> failedTests (both lists sorted);
  warnedTests is always empty: a record passes or it does not;
* result: PASSED when at least one test passed and none failed, else FAILED (a
  bundle without a single test record, such as a version matrix, proves no
  passing test);
* configuration: one ResourceDescriptor per distinct provenance recorded in the
  results files (harness version and git commit, catalog digest), naming the
  files that record it; when no results file records provenance, the harness
  version is the bundling command's own (annotation versionFrom "bundle").
* url (optional): the GitHub Actions run that made the bundle, when it ran in one.

The statement is strict JSON, fields in the order the spec lists them: the same
bundle, harness version and url give the same bytes.
"""
from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from ..core import jsonio
from . import paths, strict

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://in-toto.io/attestation/test-result/v0.1"
SUFFIX = ".intoto.json"
TOOL = "mlx-vjpcheck"
PASSED, FAILED = "PASSED", "FAILED"
MAX_BYTES = 16 << 20   # actions/attest refuses larger predicates; so does the validator
VERSION_FROM_BUNDLE = "bundle"


def path_for(bundle) -> Path:
    """evidence.zip -> evidence.zip.intoto.json (beside it)."""
    bundle = Path(bundle)
    return bundle.with_name(bundle.name + SUFFIX)




def _results_files(files: dict) -> list:
    return sorted(n for n in files if paths.is_results(n))


def _finding_files(files: dict) -> list:
    """findings/<signature>.json beside a findings.json (at any depth)."""
    folders = {paths.folder(n) for n in files if paths.basename(n) == paths.FINDINGS}
    out = []
    for n in files:
        holder = paths.folder(n)[:-1]
        if n.endswith(".json") and paths.basename(holder) == paths.FINDINGS_DIR and paths.folder(holder) in folders:
            out.append(n)
    return sorted(out)


def _records(data) -> list:
    if isinstance(data, dict) and isinstance(data.get("records"), list):
        return data["records"]
    if isinstance(data, dict) and isinstance(data.get("record"), dict):
        return [data["record"]]
    return []


def test_name(record: dict, source: str) -> str:
    name = f"{record.get('scenario')}@{record.get('device')}"
    return name if source == paths.RESULTS else f"{name} ({source})"


def tests(files: dict) -> tuple:
    """(passedTests, failedTests): one name per results record (by its status) and
    per fuzz finding record (a finding is a confirmed failure, whatever else it says)."""
    files = strict.as_files(files)
    passed, failed = [], []
    for source in _results_files(files):
        for rec in _records(strict.member(files, source)):
            if isinstance(rec, dict):
                (passed if rec.get("status") == "pass" else failed).append(test_name(rec, source))
    for source in _finding_files(files):
        failed += [test_name(rec, source) for rec in _records(strict.member(files, source)) if isinstance(rec, dict)]
    for source in sorted(n for n in files if paths.basename(n) == paths.SWEEP):
        for rec in _records(strict.member(files, source)):
            if isinstance(rec, dict) and rec.get("status") != "not applicable":
                name = f"{rec.get('entry')}@{rec.get('corner')}#{rec.get('seed')} ({source})"
                (passed if rec.get("status") == "pass" else failed).append(name)
    for source in sorted(n for n in files if paths.basename(n) == paths.GRADCHECK):
        doc = strict.member(files, source)
        report = doc.get("report") if isinstance(doc, dict) else None
        for c in (report.get("checks") if isinstance(report, dict) else None) or []:
            if isinstance(c, dict) and c.get("status") in ("pass", "fail"):
                name = (f"{doc.get('target')} {c.get('transform')} [{c.get('dtype')}] d {c.get('output')} "
                        f"/ d {c.get('input')} ({source})")
                (passed if c["status"] == "pass" else failed).append(name)
    return sorted(passed), sorted(failed)


def result(passed: list, failed: list) -> str:
    return PASSED if passed and not failed else FAILED


def purl(version: str) -> str:
    """A Package URL for this harness at a version (generic type: it is not published)."""
    return f"pkg:generic/{TOOL}@{quote(version, safe='.-_~')}"


def _provenance(data) -> tuple | None:
    """(version, commit, catalog digest) a results file records, else None."""
    prov = data.get("provenance") if isinstance(data, dict) else None
    harness = prov.get("harness") if isinstance(prov, dict) else None
    if not isinstance(harness, dict) or not isinstance(harness.get("version"), str):
        return None
    commit, digest = harness.get("commit"), prov.get("catalog_digest")
    return (harness["version"], commit if isinstance(commit, str) else None,
            digest if isinstance(digest, str) else None)


def _descriptor(version: str, commit, digest, version_from) -> dict:
    notes = {"harnessVersion": version, "versionFrom": version_from}
    if commit:
        notes["gitCommit"] = commit
    if digest:
        notes["catalogDigest"] = {"sha256": digest}
    return {"name": TOOL, "uri": purl(version), "annotations": notes}


def configuration(files: dict, bundler_version: str) -> list:
    """The ResourceDescriptors of the harness (and catalog) that produced the records."""
    files = strict.as_files(files)
    recorded = {}
    for name in _results_files(files):
        prov = _provenance(strict.member(files, name))
        if prov is not None:
            recorded.setdefault(prov, []).append(name)
    if not recorded:
        return [_descriptor(bundler_version, None, None, VERSION_FROM_BUNDLE)]
    return [_descriptor(*prov, sources) for prov, sources in
            sorted(recorded.items(), key=lambda kv: (kv[1], [str(x) for x in kv[0]]))]


_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SERVER = re.compile(r"^https://[a-z0-9.-]+(:[0-9]+)?$")


def github_run_url(environ) -> str | None:
    """The GitHub Actions run this process belongs to, when it plainly is one."""
    if environ.get("GITHUB_ACTIONS") != "true":
        return None
    server = environ.get("GITHUB_SERVER_URL", "").rstrip("/").lower()
    repo, run = environ.get("GITHUB_REPOSITORY", ""), environ.get("GITHUB_RUN_ID", "")
    if _SERVER.match(server) and _REPO.match(repo) and run.isdigit():
        return f"{server}/{repo}/actions/runs/{run}"
    return None


def well_formed_url(url) -> bool:
    """An https URL without spaces or control characters (all the validator can say offline)."""
    return isinstance(url, str) and bool(re.match(r"^https://[A-Za-z0-9.-]+(:[0-9]+)?(/[!-~]*)?$", url))


def predicate(files: dict, bundler_version: str, url: str | None = None) -> dict:
    files = strict.as_files(files)
    passed, failed = tests(files)
    out = {"result": result(passed, failed), "configuration": configuration(files, bundler_version)}
    if url is not None:
        out["url"] = url
    out.update(passedTests=passed, warnedTests=[], failedTests=failed)
    return out


def statement(bundle_name: str, sha256: str, files: dict, bundler_version: str, url: str | None = None) -> dict:
    """The whole statement for a bundle named `bundle_name` (a file name, no folder)."""
    return {"_type": STATEMENT_TYPE,
            "subject": [{"name": PurePosixPath(bundle_name).name, "digest": {"sha256": sha256}}],
            "predicateType": PREDICATE_TYPE,
            "predicate": predicate(files, bundler_version, url)}


def render(stmt: dict) -> bytes:
    """Strict JSON in the spec's field order (the dicts above are built in it)."""
    return (jsonio.dumps(stmt, indent=2) + "\n").encode("utf-8")


def is_ours(path) -> bool:
    """Whether an existing file is a statement this tool writes (so --replace may replace it)."""
    try:
        path = Path(path)
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
            return False
        doc = jsonio.loads(path.read_bytes())
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    if not isinstance(doc, dict) or doc.get("_type") != STATEMENT_TYPE or doc.get("predicateType") != PREDICATE_TYPE:
        return False
    conf = (doc.get("predicate") or {}).get("configuration") if isinstance(doc.get("predicate"), dict) else None
    return isinstance(conf, list) and any(isinstance(c, dict) and c.get("name") == TOOL for c in conf)
