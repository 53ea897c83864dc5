"""Load an evidence directory or zip into memory as {relative path: bytes}.

Everything downstream works on this mapping, so manifest paths are only ever
looked up in it and never opened on disk: a hostile manifest cannot make the
validator read (or write) outside the evidence.

A directory gets the limits a zip gets (safezip: per file, in all, number of
entries), decided from its metadata before a single file is read, so six
sparse 60 MiB files are refused by their sizes, not by reading them. It is
refused, one reason a line, when the path itself is a symlink, when it holds a
symlink, a special file, a name with a control character, or a regular file
with more than one hard link (its contents would be shared with a file outside
the evidence, which could change behind the validator's back; copy the
directory with `cp -r` to break the links). A root that is a symlink is
refused for a zip too: validate the file it points to.
"""
from __future__ import annotations

import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from . import manifest, safezip, strict


class BadInput(Exception):
    """Not evidence at all: missing path, not a dir/zip, no manifest (exit 2)."""


@dataclass
class Evidence:
    source: str
    files: dict                                   # posix relative path -> bytes (strict.Files)
    problems: list = field(default_factory=list)  # unsafe entries: refuse the lot

    def __post_init__(self):
        if not isinstance(self.files, strict.Files):
            self.files = strict.Files(self.files)


MAX_DIR_DEPTH = safezip.MAX_DEPTH   # folders inside the evidence (honest evidence: 3 levels at most)


def _entries(root: Path, problems: list):
    """(relative path, full path, lstat) of everything under root, depth first and sorted,
    without recursion (a tree 1,200 folders deep is refused, not a crash); symlinks are
    reported, never followed."""
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            names = sorted(os.listdir(folder))
        except OSError as e:
            where = Path(os.path.relpath(folder, root)).as_posix()
            problems.append(f"cannot list {where!r} ({e.strerror or type(e).__name__})")
            continue
        below = []
        for name in names:
            full = os.path.join(folder, name)
            rel = Path(os.path.relpath(full, root)).as_posix()
            bad = _bad_name(name)
            if bad:
                problems.append(f"{bad} in name {ascii(rel)}")
                continue
            try:
                st = os.lstat(full)
            except OSError as e:
                problems.append(f"cannot read {rel!r} ({e.strerror or type(e).__name__})")
                continue
            if stat.S_ISDIR(st.st_mode):
                if depth + 1 >= MAX_DIR_DEPTH:
                    problems.append(f"folder {ascii(rel[:200])} lies more than {MAX_DIR_DEPTH} levels deep")
                    continue
                below.append((full, depth + 1))
            yield rel, full, st
        stack.extend(reversed(below))


def _bad_name(name: str) -> str | None:
    """Why a file name cannot be evidence: bytes that are not UTF-8 (os.listdir hands them
    over as surrogates, which no terminal can print) or a control character."""
    if any(0xDC80 <= ord(c) <= 0xDCFF for c in name):
        return "bytes that are not UTF-8"
    bad = safezip.control_character(name)
    return f"control character {bad}" if bad else None


def _survey(root: Path) -> tuple:
    """([(relative path, full path, size)], problems) from metadata alone (lstat)."""
    found, problems, seen = [], [], 0
    for rel, full, st in _entries(root, problems):
        seen += 1   # folders count, as a zip's folder entries do
        if seen > safezip.MAX_ENTRIES:
            return found, problems + [f"more than {safezip.MAX_ENTRIES} entries (limit {safezip.MAX_ENTRIES})"]
        if stat.S_ISLNK(st.st_mode):
            problems.append(f"symlink {rel!r} (to {ascii(_link_target(full))})")
        elif stat.S_ISDIR(st.st_mode):
            continue
        elif not stat.S_ISREG(st.st_mode):
            problems.append(f"special file {rel!r}")
        elif st.st_nlink > 1:
            problems.append(f"file {rel!r} has {st.st_nlink} hard links (its contents are shared "
                            "with a file outside the evidence; copy the directory to break them)")
        elif st.st_size > safezip.MAX_ENTRY:
            problems.append(f"file {rel!r} is {st.st_size} bytes (limit {safezip.MAX_ENTRY})")
        else:
            found.append((rel, full, st.st_size))
    total = sum(size for _, _, size in found)
    if total > safezip.MAX_TOTAL:
        problems.append(f"directory holds {total} bytes in all (limit {safezip.MAX_TOTAL})")
    why = safezip.json_total((rel, size) for rel, _, size in found)
    return found, problems + ([why] if why else [])


def _link_target(full: str) -> str:
    try:
        return os.readlink(full)
    except OSError as e:
        return f"? ({e.strerror})"


def _read_file(full: str, size: int) -> bytes:
    """At most one byte beyond the size the survey saw, never through a symlink."""
    fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValueError("it is no longer a regular file")
        data = fh.read(size + 1)
    if len(data) != size:
        raise ValueError(f"it changed size while being read ({size} bytes listed, {len(data)} read)")
    return data


def _walk(root: Path) -> Evidence:
    found, problems = _survey(root)
    if problems:
        return Evidence(str(root), {}, problems)
    files = {}
    for rel, full, size in found:
        try:
            files[rel] = _read_file(full, size)
        except OSError as e:
            problems.append(f"unreadable file {rel!r}: {e.strerror or safezip.reason(e)}")
        except ValueError as e:
            problems.append(f"unreadable file {rel!r}: {safezip.reason(e)}")
    return Evidence(str(root), {} if problems else files, problems)


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
    if not p.exists() and not p.is_symlink():
        raise BadInput(f"{path}: no such file or directory")
    if p.is_symlink():
        target = os.readlink(p)
        ev = Evidence(str(p), {}, [f"{str(p)!r} is a symlink (to {target!r}): validate what it points to, "
                                   "not a link to it"])
    elif p.is_dir():
        ev = _walk(p)
    elif p.is_file() and zipfile.is_zipfile(p):
        try:
            files, problems = safezip.read(p)
        except safezip.NotAZip as e:
            raise BadInput(str(e)) from None
        ev = Evidence(str(p), _strip_single_top(files), problems)
    else:
        raise BadInput(f"{path}: neither a directory nor a zip archive")
    if not ev.problems:
        nested = [why for name, data in ev.files.items() if (why := safezip.nested_archive(name, data))]
        if nested:
            ev = Evidence(ev.source, {}, nested)
    if not ev.problems and manifest.NAME not in ev.files:
        raise BadInput(f"{path}: no {manifest.NAME} (not an mlx-vjpcheck evidence directory)")
    return ev
