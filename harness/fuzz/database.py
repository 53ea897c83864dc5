"""Hypothesis example database for fuzz campaigns.

Append-only: each round of a campaign replays the saved examples under one
key, and hypothesis deletes entries that are not interesting in the current
round (for us: defects already reported this round). Never deleting keeps
every counterexample ever found, so a later campaign replays them first.
"""
from __future__ import annotations

from hypothesis.database import DirectoryBasedExampleDatabase

DEFAULT_DIR = ".hypothesis/mlx-vjpcheck-fuzz"


class AppendOnlyDatabase(DirectoryBasedExampleDatabase):
    def delete(self, key: bytes, value: bytes) -> None:
        pass

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.save(dest, value)


def open_db(path):
    """None (or "none") disables the database."""
    if path is None or str(path).lower() == "none":
        return None
    return AppendOnlyDatabase(str(path))


def key(ops) -> bytes:
    return ("mlx-vjpcheck-fuzz/1:" + ",".join(sorted(ops))).encode()
