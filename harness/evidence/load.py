"""Load an evidence directory or zip into memory as {relative path: bytes}.

Everything downstream works on this mapping, so manifest paths are only ever
looked up in it and never opened on disk: a hostile manifest cannot make the
validator read (or write) outside the evidence.
"""
from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from . import manifest, safezip


class BadInput(Exception):
    """Not evidence at all: missing path, not a dir/zip, no manifest (exit 2)."""


@dataclass
class Evidence:
    source: str
    files: dict                                   # posix relative path -> bytes
    problems: list = field(default_factory=list)  # unsafe entries: refuse the lot


def _walk(root: Path) -> Evidence:
    files, problems = {}, []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for d in list(dirnames):
            if os.path.islink(os.path.join(dirpath, d)):
                problems.append(f"symlink {os.path.relpath(os.path.join(dirpath, d), root)!r}")
                dirnames.remove(d)
        for f in filenames:
            full = os.path.join(dirpath, f)
            rel = Path(os.path.relpath(full, root)).as_posix()
            if os.path.islink(full):
                problems.append(f"symlink {rel!r}")
            elif not os.path.isfile(full):
                problems.append(f"special file {rel!r}")
            elif os.path.getsize(full) > safezip.MAX_ENTRY:
                problems.append(f"file {rel!r} is larger than {safezip.MAX_ENTRY} bytes")
            else:
                files[rel] = Path(full).read_bytes()
    return Evidence(str(root), files, problems)


def _strip_single_top(files: dict) -> dict:
    """Accept a zip whose entries all sit under one folder holding the manifest."""
    if manifest.NAME in files:
        return files
    tops = {name.split("/", 1)[0] for name in files}
    if len(tops) == 1 and all("/" in n for n in files):
        top = tops.pop() + "/"
        if top + manifest.NAME in files:
            return {n[len(top):]: data for n, data in files.items()}
    return files


def load(path) -> Evidence:
    p = Path(path)
    if not p.exists():
        raise BadInput(f"{path}: no such file or directory")
    if p.is_dir():
        ev = _walk(p)
    elif p.is_file() and zipfile.is_zipfile(p):
        try:
            files, problems = safezip.read(p)
        except safezip.NotAZip as e:
            raise BadInput(str(e)) from None
        ev = Evidence(str(p), _strip_single_top(files), problems)
    else:
        raise BadInput(f"{path}: neither a directory nor a zip archive")
    if not ev.problems and manifest.NAME not in ev.files:
        raise BadInput(f"{path}: no {manifest.NAME} (not an mlx-vjpcheck evidence directory)")
    return ev
