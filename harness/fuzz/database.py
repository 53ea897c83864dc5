"""Hypothesis example database for fuzz campaigns.

On disk: one minimal counterexample per finding, never deleted, so the next
campaign replays every defect found before in its first round. In memory:
the case the current round should shrink (a defect parked earlier).

Where it lives, as `mlx-vjpcheck fuzz --db` names it (`parse`):

  DIR                              a directory (DirectoryBasedExampleDatabase)
  none                             memory only, this campaign
  github:OWNER/REPO/ARTIFACT[:DIR] DIR as above (default: `default_dir()`; `none`:
                                   keep nothing), and also, read-only, the cases in
                                   the newest GitHub Actions artifact named ARTIFACT
                                   of OWNER/REPO (hypothesis's GitHubArtifactDatabase,
                                   wrapped in ReadOnlyDatabase and multiplexed with DIR)

The shared form is how a campaign spread over CI jobs shares its examples: each
job replays what the previous workflow run kept, keeps its own new minimal cases
in DIR, and the workflow uploads DIR (merged over its jobs) as the next
ARTIFACT (.github/workflows/fuzz-campaign.yml). Nothing touches the network
until the campaign's first fetch; the artifact is downloaded then (with
$GITHUB_TOKEN) into a temporary directory of this process, which is removed at
exit, so parallel shards never share a half-written download.
"""
from __future__ import annotations

import re
import shutil
import sys
import tempfile
import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path

from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    GitHubArtifactDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)

GITHUB = "github:"
# hypothesis before 6.156.2 raises KeyError reading a zip without directory
# entries, which is what actions/upload-artifact makes (hypothesis changelog 6.156.2).
GITHUB_READ_FIX = (6, 156, 2)
_OWNER = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}")
_REPO = re.compile(r"[A-Za-z0-9._-]{1,100}")
# Stricter than GitHub's own rule (which forbids " : < > | * ? \ / CR LF): a name
# that needs no quoting anywhere, and ':' stays free to separate DIR.
_ARTIFACT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,255}")
SHARED_FORM = "github:OWNER/REPO/ARTIFACT[:DIR]"


def default_dir():
    """In the user's cache, never the current directory: a repeat campaign in another
    folder must not replay (and "find" at once) what an earlier one found, unasked."""
    from ..core import resources
    return resources.cache_root() / "fuzz-db"


class SpecError(ValueError):
    """A --db value that names no usable database (one line)."""


@dataclass(frozen=True)
class Spec:
    """Where a campaign's examples live: `local` (None: memory only) and, when
    `github` is (owner, repo, artifact), that artifact too, read-only."""
    local: Path | None
    github: tuple | None = None

    def __str__(self) -> str:
        """The --db text that parses back to this spec (what shards are given)."""
        local = "none" if self.local is None else str(self.local)
        if self.github is None:
            return local
        owner, repo, artifact = self.github
        return f"{GITHUB}{owner}/{repo}/{artifact}:{local}"


def parse(text) -> Spec:
    """A --db value as a Spec; SpecError (one line) when it is malformed."""
    if text is None:
        return Spec(default_dir())
    text = str(text)
    if text.lower() == "none":
        return Spec(None)
    if not text.startswith(GITHUB):
        if not text:
            raise SpecError("an empty directory name")
        return Spec(Path(text))
    where, sep, local = text[len(GITHUB):].partition(":")
    parts = where.split("/")
    if len(parts) != 3:
        raise SpecError(f"expected {SHARED_FORM}")
    owner, repo, artifact = parts
    if not _OWNER.fullmatch(owner):
        raise SpecError(f"{owner!r} is not a GitHub owner name (letters, digits, '-')")
    if not _REPO.fullmatch(repo) or repo in (".", ".."):
        raise SpecError(f"{repo!r} is not a GitHub repository name (letters, digits, '.', '_', '-')")
    if not _ARTIFACT.fullmatch(artifact):
        raise SpecError(f"{artifact!r} is not an artifact name this option accepts "
                        "(letters, digits, '.', '_', '-'; at most 256)")
    if sep and not local:
        raise SpecError(f"nothing after the ':' that should name DIR ({SHARED_FORM})")
    if not sep:
        return Spec(default_dir(), (owner, repo, artifact))
    return Spec(None if local.lower() == "none" else Path(local), (owner, repo, artifact))


def github_problem(environ) -> str | None:
    """Why a shared (github:) database cannot be read here, or None. Checked before
    the campaign; no network."""
    from hypothesis.version import __version_info__
    have = tuple(__version_info__[:3])
    if have < GITHUB_READ_FIX:
        need = ".".join(map(str, GITHUB_READ_FIX))
        return (f"hypothesis {'.'.join(map(str, have))} cannot read the artifacts actions/upload-artifact "
                f"makes (fixed in {need}): python3 -m pip install -U 'hypothesis>={need}'")
    if not environ.get("GITHUB_TOKEN"):
        return ("GITHUB_TOKEN is not set: downloading an artifact needs a token that may read the "
                "repository's Actions (actions: read)")
    return None


def github_db(owner: str, repo: str, artifact: str) -> GitHubArtifactDatabase:
    """The artifact as a database, downloaded on first fetch into a temporary
    directory of this process (removed when the database object goes)."""
    where = Path(tempfile.mkdtemp(prefix="vjpcheck-artifact-"))
    db = GitHubArtifactDatabase(owner, repo, artifact_name=artifact, path=where)
    weakref.finalize(db, shutil.rmtree, str(where), True)
    return db


class SharedReadOnly(ReadOnlyDatabase):
    """A shared database, read-only. What hypothesis warns about it (no network,
    no artifact yet, a refused token: it then serves nothing) is told once, one
    line on stderr, and the campaign goes on with its local directory."""

    def __init__(self, db: ExampleDatabase):
        super().__init__(db)
        self.shared = db
        self.told: set = set()

    def label(self) -> str:
        db = self.shared
        if isinstance(db, GitHubArtifactDatabase):
            return f"{GITHUB}{db.owner}/{db.repo}/{db.artifact_name}"
        return repr(db)

    def fetch(self, key: bytes):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            values = list(super().fetch(key))
        for w in caught:
            text = " ".join(str(w.message).split())
            if text not in self.told:
                self.told.add(text)
                print(f"mlx-vjpcheck fuzz: shared example database {self.label()}: {text}", file=sys.stderr)
        yield from values


class CampaignDatabase(ExampleDatabase):
    """What hypothesis sees during one campaign.

    fetch (primary corpus, which hypothesis treats as already shrunk): the
    minimal counterexamples kept by earlier campaigns, in the first round only;
    with `focus` set, nothing but that parked case, offered as the secondary
    corpus so that hypothesis does shrink it. Hypothesis's own saves (every
    intermediate shrink step) are dropped; the campaign keeps() each finding's
    final minimal case on disk instead.

    With `shared` (a read-only database, e.g. a GitHub artifact), the stored
    cases are those of the local directory and of `shared` together; keep()
    writes to the local directory only.
    """

    def __init__(self, path=None, shared: ExampleDatabase | None = None):
        super().__init__()
        local = DirectoryBasedExampleDatabase(str(path)) if path else None
        self.shared = shared
        if shared is None:
            self.disk = local
        elif local is None:
            self.disk = SharedReadOnly(shared)
        else:
            self.disk = MultiplexedDatabase(local, SharedReadOnly(shared))
        self.focus: bytes | None = None
        self.replay_disk = True

    def stored(self, key: bytes) -> list:
        """The counterexamples earlier campaigns kept for this key."""
        return list(self.disk.fetch(key)) if self.disk is not None else []

    def keep(self, key: bytes, value: bytes) -> None:
        if self.disk is not None and value is not None:
            self.disk.save(key, value)

    def save(self, key: bytes, value: bytes) -> None:
        pass

    def fetch(self, key: bytes):
        secondary = key.endswith(b".secondary")
        if self.focus is not None:
            if secondary:
                yield self.focus
            return
        if self.disk is not None and self.replay_disk and not secondary:
            yield from self.disk.fetch(key)

    def delete(self, key: bytes, value: bytes) -> None:
        pass

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        pass


def open_db(path) -> CampaignDatabase:
    """None (or "none") keeps the database in memory only, for this campaign; a
    github: spec (see `parse`) adds the artifact read-only."""
    if path is None or str(path).lower() == "none":
        return CampaignDatabase(None)
    spec = Spec(Path(path)) if isinstance(path, Path) else parse(path)
    shared = github_db(*spec.github) if spec.github is not None else None
    return CampaignDatabase(spec.local, shared)


def key(ops) -> bytes:
    return ("mlx-vjpcheck-fuzz/1:" + ",".join(sorted(ops))).encode()
