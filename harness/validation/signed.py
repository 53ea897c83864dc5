"""The third trust level: a bundle's attestation signed by a builder you trust.

`bundle` writes BUNDLE.zip.intoto.json; in GitHub Actions, `actions/attest`
signs that statement (Sigstore) and stores it with GitHub. Offline, the
validator can only say the statement and the bundle agree ("self-attested: the
signature was not checked"). With `--attested-by OWNER/REPO` it asks the GitHub
CLI to verify the signature:

    gh attestation verify BUNDLE.zip --repo OWNER/REPO \\
        --predicate-type https://in-toto.io/attestation/test-result/v0.1 --format json

and then holds the signed statement to the bundle exactly as it holds the local
one (attestation.check_statement). gh needs the network and, for private
repositories, a token; without gh this is bad input (exit 2), never a pass.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from ..evidence import attest
from .attestation import check_statement
from .groups import Group

TIMEOUT_S = 120


class Unavailable(RuntimeError):
    """The signature cannot be checked here (no gh, not a bundle): one line, exit 2."""


def _statements(out: str) -> list:
    """The in-toto statements gh verified, from its JSON output."""
    try:
        results = json.loads(out)
    except ValueError:
        return []
    found = []
    for r in results if isinstance(results, list) else []:
        stmt = (((r or {}).get("verificationResult") or {}).get("statement")) if isinstance(r, dict) else None
        if isinstance(stmt, dict):
            found.append(stmt)
    return found


def verify(path, repo: str, ev) -> tuple:
    """(one line, ok) for the bundle at `path` signed by a workflow of `repo`."""
    bundle = Path(path)
    if not bundle.is_file():
        raise Unavailable("--attested-by checks a bundle .zip, not a directory")
    gh = shutil.which("gh")
    if gh is None:
        raise Unavailable("--attested-by needs the GitHub CLI (gh): https://cli.github.com")
    argv = [gh, "attestation", "verify", str(bundle), "--repo", repo, "--predicate-type",
            attest.PREDICATE_TYPE, "--format", "json"]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"attested: NO (gh attestation verify did not finish: {type(e).__name__})", False
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return f"attested: NO (gh attestation verify --repo {repo} failed: {tail})", False
    for stmt in _statements(p.stdout):
        g = Group("signed statement")
        check_statement(g, stmt, bundle, ev.files)
        if g.passed:
            return f"attested: signed by a workflow of {repo} (gh attestation verify) and it matches the bundle", True
    return f"attested: NO (no statement signed by {repo} matches this bundle's records)", False
