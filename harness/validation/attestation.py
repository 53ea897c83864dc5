"""The attestation beside a bundle (X.zip.intoto.json), checked offline against the bundle.

What is checked (a mismatch is a failed check naming it):
  the file: a regular file (not a symlink), at most attest.MAX_BYTES, strict JSON, an object;
  _type is in-toto Statement v1 and predicateType is test-result v0.1;
  subject: exactly one, named as the bundle file is, whose sha256 (and any other
    SHA-2 / SHA-3 digest it gives) is the bundle's;
  predicate: result, passedTests, warnedTests and failedTests exactly as
    evidence/attest.py derives them from the bundle's own results records (lists
    compared as multisets: the spec gives their order no meaning);
  configuration: the harness and catalog the results record (evidence/attest.py),
    descriptor fields compared exactly, unrecognized ones ignored;
  url, when present: an https URL (what run it names cannot be checked offline).

Unrecognized fields elsewhere are ignored, as the in-toto parsing rules require.
What this cannot tell: who wrote the statement. A signed attestation
(`gh attestation verify`) says that; this says the statement and the bundle agree.
"""
from __future__ import annotations

import hashlib
import stat
from collections import Counter
from pathlib import Path

from ..core import jsonio
from ..evidence import attest
from ..evidence.load import Evidence
from ..evidence.safezip import control_character
from .groups import Group

# Digest algorithms a subject may also carry that are checked when present
# (DigestSet names -> hashlib names); others are ignored, as the spec says.
_DIGESTS = {"sha256": "sha256", "sha224": "sha224", "sha384": "sha384", "sha512": "sha512",
            "sha512_224": "sha512_224", "sha512_256": "sha512_256", "sha3_224": "sha3_224",
            "sha3_256": "sha3_256", "sha3_384": "sha3_384", "sha3_512": "sha3_512"}
_DESCRIPTOR_FIELDS = ("name", "uri", "digest", "content", "downloadLocation", "mediaType", "annotations")
_SHOWN = 3


def _show(value, limit: int = 80) -> str:
    """A value from the attestation as safe terminal text (escaped, shortened)."""
    text = ascii(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _digests(path: Path, names: set) -> dict:
    hashes = {}
    for n in names:
        try:
            hashes[n] = hashlib.new(_DIGESTS[n])
        except ValueError:   # this Python lacks it: cannot be checked here
            pass
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            for h in hashes.values():
                h.update(chunk)
    return {n: h.hexdigest() for n, h in hashes.items()}


def _read(path: Path, g: Group):
    """The parsed statement, or None after a failed check saying why."""
    try:
        st = path.lstat()
    except OSError as e:
        g.fail(f"cannot read it ({e.strerror})")
        return None
    if stat.S_ISLNK(st.st_mode):
        g.fail("it is a symlink: validate the file it points to, beside its bundle")
        return None
    if not stat.S_ISREG(st.st_mode):
        g.fail("it is not a regular file")
        return None
    if st.st_size > attest.MAX_BYTES:
        g.fail(f"it is {st.st_size} bytes (limit {attest.MAX_BYTES})")
        return None
    try:
        doc = jsonio.loads(path.read_bytes().decode("utf-8"))
    except OSError as e:
        g.fail(f"cannot read it ({e.strerror})")
        return None
    except (UnicodeDecodeError, ValueError) as e:
        g.fail(f"not strict JSON ({_show(str(e), 120)})")
        return None
    if not g.check(isinstance(doc, dict), "not a JSON object (an in-toto Statement is one)"):
        return None
    return doc


def _check_subject(g: Group, doc: dict, bundle: Path) -> None:
    subject = doc.get("subject")
    if not g.check(isinstance(subject, list) and len(subject) == 1 and isinstance(subject[0], dict),
                   f"subject must be a list of one descriptor (the bundle), found {_show(subject)}"):
        return
    s = subject[0]
    g.check(s.get("name") == bundle.name,
            f"subject name {_show(s.get('name'))} is not the bundle's file name {_show(bundle.name)}")
    digest = s.get("digest")
    if not g.check(isinstance(digest, dict) and isinstance(digest.get("sha256"), str),
                   "subject has no sha256 digest"):
        return
    actual = _digests(bundle, {n for n in digest if n in _DIGESTS})
    for name in sorted(actual):
        g.check(digest[name] == actual[name],
                f"subject digest {name} {_show(digest[name])} is not the bundle's ({actual[name]}): "
                "the attestation is for another file")


def _compare_tests(g: Group, pred: dict, field: str, want: list) -> None:
    got = pred.get(field, [])
    if not g.check(isinstance(got, list) and all(isinstance(t, str) for t in got),
                   f"predicate.{field} is not a list of test names"):
        return
    extra, missing = Counter(got) - Counter(want), Counter(want) - Counter(got)
    parts = []
    if extra:
        parts.append(f"{sum(extra.values())} listed that the records do not give "
                     f"(e.g. {', '.join(_show(t) for t in sorted(extra)[:_SHOWN])})")
    if missing:
        parts.append(f"{sum(missing.values())} the records give not listed "
                     f"(e.g. {', '.join(_show(t) for t in sorted(missing)[:_SHOWN])})")
    g.check(not parts, f"predicate.{field}: " + "; ".join(parts))


def _bundler_version(conf) -> str | None:
    """The harness version a statement claims for its bundling command (only meaningful
    when the results record no provenance), else None."""
    if isinstance(conf, list) and len(conf) == 1 and isinstance(conf[0], dict):
        notes = conf[0].get("annotations")
        if isinstance(notes, dict) and notes.get("versionFrom") == attest.VERSION_FROM_BUNDLE:
            version = notes.get("harnessVersion")
            if isinstance(version, str) and version and not control_character(version) and len(version) < 100:
                return version
    return None


def _project(descriptor) -> dict:
    return {k: descriptor[k] for k in _DESCRIPTOR_FIELDS if k in descriptor} \
        if isinstance(descriptor, dict) else descriptor


def _differences(got, want, where: str) -> list:
    """Where two JSON values differ, one phrase per difference (dicts and lists walked)."""
    if isinstance(got, dict) and isinstance(want, dict):
        return [d for k in sorted(set(got) | set(want), key=str)
                for d in _differences(got.get(k), want.get(k), f"{where}.{k}")]
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return [d for i, (a, b) in enumerate(zip(got, want)) for d in _differences(a, b, f"{where}[{i}]")]
    if isinstance(got, list) and isinstance(want, list):
        return [f"{where} has {len(got)} entries, the records give {len(want)}"]
    return [] if got == want else [f"{where} is {_show(got, 60)}, the records give {_show(want, 60)}"]


def _check_configuration(g: Group, pred: dict, files: dict) -> None:
    conf = pred.get("configuration")
    claimed = _bundler_version(conf)
    want = attest.configuration(files, claimed if claimed is not None else "?")
    got = [_project(c) for c in conf] if isinstance(conf, list) else conf
    diff = _differences(got, want, "predicate.configuration")
    extra = f" (and {len(diff) - _SHOWN} more)" if len(diff) > _SHOWN else ""
    if g.check(not diff, "; ".join(diff[:_SHOWN]) + extra) and claimed is not None:
        g.note(f"harness version {claimed} is the bundling command's claim: the results record no provenance")


def check_statement(g: Group, doc: dict, bundle: Path, files: dict) -> None:
    """Every check of a parsed statement against its bundle and the bundle's files."""
    g.check(doc.get("_type") == attest.STATEMENT_TYPE,
            f"_type {_show(doc.get('_type'))} is not {attest.STATEMENT_TYPE}")
    _check_subject(g, doc, bundle)
    g.check(doc.get("predicateType") == attest.PREDICATE_TYPE,
            f"predicateType {_show(doc.get('predicateType'))} is not {attest.PREDICATE_TYPE}")
    pred = doc.get("predicate")
    if not g.check(isinstance(pred, dict), "predicate is missing or not an object"):
        return
    passed, failed = attest.tests(files)
    want = attest.result(passed, failed)
    g.check(pred.get("result") == want,
            f"predicate.result {_show(pred.get('result'))} but the bundle's records give {want!r} "
            f"({len(passed)} passed, {len(failed)} failed)")
    _compare_tests(g, pred, "passedTests", passed)
    _compare_tests(g, pred, "failedTests", failed)
    _compare_tests(g, pred, "warnedTests", [])
    _check_configuration(g, pred, files)
    if "url" in pred:
        g.check(attest.well_formed_url(pred["url"]), f"predicate.url {_show(pred['url'])} is not an https URL")


def check(path, ev: Evidence) -> tuple:
    """(groups, lines) for the attestation beside a bundle: no groups and one line
    when there is nothing to check; nothing at all for a directory."""
    bundle = Path(path)
    if bundle.is_symlink() or not bundle.is_file():
        return [], []
    att = attest.path_for(bundle)
    shown = att.name if not control_character(att.name) else ascii(att.name)
    if not (att.exists() or att.is_symlink()):
        return [], [f"attestation: not checked (no {shown} beside the bundle)"]
    if ev.problems:
        return [], [f"attestation: not checked ({shown}: the bundle itself was rejected)"]
    g = Group(f"attestation {shown}", "checks")
    doc = _read(att, g)
    if doc is not None:
        check_statement(g, doc, bundle, ev.files)
    return [g], []
