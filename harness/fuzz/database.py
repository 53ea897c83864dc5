"""Hypothesis example database for fuzz campaigns.

On disk: one minimal counterexample per finding, never deleted, so the next
campaign replays every defect found before in its first round. In memory:
the case the current round should shrink (a defect parked earlier).
"""
from __future__ import annotations

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

def default_dir():
    """In the user's cache, never the current directory: a repeat campaign in another
    folder must not replay (and "find" at once) what an earlier one found, unasked."""
    from ..core import resources
    return resources.cache_root() / "fuzz-db"


class CampaignDatabase(ExampleDatabase):
    """What hypothesis sees during one campaign.

    fetch (primary corpus, which hypothesis treats as already shrunk): the
    minimal counterexamples kept by earlier campaigns, in the first round only;
    with `focus` set, nothing but that parked case, offered as the secondary
    corpus so that hypothesis does shrink it. Hypothesis's own saves (every
    intermediate shrink step) are dropped; the campaign keeps() each finding's
    final minimal case on disk instead.
    """

    def __init__(self, path=None):
        super().__init__()
        self.disk = DirectoryBasedExampleDatabase(str(path)) if path else None
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
    """None (or "none") keeps the database in memory only, for this campaign."""
    if path is None or str(path).lower() == "none":
        return CampaignDatabase(None)
    return CampaignDatabase(path)


def key(ops) -> bytes:
    return ("mlx-vjpcheck-fuzz/1:" + ",".join(sorted(ops))).encode()
