"""Hypothesis example database for fuzz campaigns.

Append-only: each round of a campaign replays the saved examples under one
key, and hypothesis deletes entries that are not interesting in the current
round (for us: defects already reported). Never deleting keeps every
counterexample ever found, so a later campaign replays them first.

The campaign also parks here, in memory, cases that showed a new defect while
another one was being shrunk; the next round replays them before generating.
"""
from __future__ import annotations

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

DEFAULT_DIR = ".hypothesis/mlx-vjpcheck-fuzz"


class CampaignDatabase(ExampleDatabase):
    """Saves go to disk (when a directory is given). Fetches serve one round:
    normally the saved counterexamples (primary corpus: hypothesis treats them
    as already shrunk); with `focus` set, only that parked case, offered as the
    secondary corpus so that hypothesis does shrink it."""

    def __init__(self, path=None):
        super().__init__()
        self.disk = DirectoryBasedExampleDatabase(str(path)) if path else None
        self.focus: bytes | None = None

    def save(self, key: bytes, value: bytes) -> None:
        if self.disk is not None:
            self.disk.save(key, value)

    def fetch(self, key: bytes):
        secondary = key.endswith(b".secondary")
        if self.focus is not None:
            if secondary:
                yield self.focus
            return
        if self.disk is not None and not secondary:
            yield from self.disk.fetch(key)

    def delete(self, key: bytes, value: bytes) -> None:
        pass

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.save(dest, value)


def open_db(path) -> CampaignDatabase:
    """None (or "none") keeps the database in memory only, for this campaign."""
    if path is None or str(path).lower() == "none":
        return CampaignDatabase(None)
    return CampaignDatabase(path)


def key(ops) -> bytes:
    return ("mlx-vjpcheck-fuzz/1:" + ",".join(sorted(ops))).encode()
