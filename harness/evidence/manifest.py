"""MANIFEST.sha256 in `sha256sum -c` format, covering every file of a run dir."""
from __future__ import annotations

import hashlib
from pathlib import Path

from .paths import MANIFEST

NAME = MANIFEST


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def files(root) -> list:
    root = Path(root)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and p.name != NAME)


def render(root) -> str:
    root = Path(root)
    return "".join(f"{sha256((root / rel).read_bytes())}  {rel}\n" for rel in files(root))


def parse(text: str) -> list:
    """[(hash, path)]; raises ValueError naming the first malformed line."""
    entries = []
    for n, line in enumerate(text.splitlines(), 1):
        digest, sep, path = line.partition("  ")
        if not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or not path:
            raise ValueError(f"{NAME} line {n} is not '<sha256>  <path>'")
        entries.append((digest, path))
    return entries
