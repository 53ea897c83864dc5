"""Read a zip from someone else without trusting it.

Entries are vetted from the central directory before a single byte is
inflated, and accepted entries are read into memory under hard caps, so
validating a bundle writes nothing to disk and runs nothing from it.
"""
from __future__ import annotations

import re
import stat
import zipfile
import zlib

MAX_ENTRY = 64 << 20      # declared uncompressed bytes per entry
MAX_TOTAL = 256 << 20     # declared uncompressed bytes over the whole archive
MAX_ENTRIES = 20000
# Deflate cannot beat ~1032:1; honest evidence (JSON, logs) stays far below 200:1
# and the bundle writer stores anything that would not, so a higher ratio on an
# entry big enough to matter is the signature of a bomb.
MAX_RATIO = 200
RATIO_MIN_SIZE = 64 << 10


class NotAZip(Exception):
    """The file is not a readable zip archive at all (bad input, exit 2)."""


def unsafe_path(name: str) -> str | None:
    """Why a member or manifest path could land outside the bundle, else None."""
    if not name:
        return "empty path"
    if "\0" in name:
        return f"NUL byte in path {name!r}"
    if "\\" in name:
        return f"backslash in path {name!r}"
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return f"absolute path {name!r}"
    parts = name.rstrip("/").split("/")
    if ".." in parts:
        return f"'..' component in path {name!r}"
    if any(p in ("", ".") for p in parts):
        return f"non-canonical path {name!r}"
    return None


def _mode(info: zipfile.ZipInfo) -> int:
    return (info.external_attr >> 16) & 0xFFFF


def entry_problem(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    why = unsafe_path(name)
    if why:
        return why
    mode = _mode(info)
    if stat.S_ISLNK(mode):
        return f"symlink entry {name!r}"
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        return f"special file entry {name!r}"
    if info.flag_bits & 0x1:
        return f"encrypted entry {name!r}"
    if info.file_size > MAX_ENTRY:
        return f"entry {name!r} declares {info.file_size} bytes (limit {MAX_ENTRY})"
    if info.file_size > RATIO_MIN_SIZE and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        ratio = info.file_size / max(info.compress_size, 1)
        return f"entry {name!r} has compression ratio {ratio:.0f}:1 (limit {MAX_RATIO}:1, zip bomb?)"
    return None


def vet(infos: list) -> list:
    """Every reason to refuse the archive, one line each, from metadata alone."""
    problems, seen, total = [], set(), 0
    if len(infos) > MAX_ENTRIES:
        return [f"{len(infos)} entries (limit {MAX_ENTRIES})"]
    for info in infos:
        why = entry_problem(info)
        if why:
            problems.append(why)
        key = info.filename.rstrip("/")
        if key in seen:
            problems.append(f"duplicate entry {info.filename!r}")
        seen.add(key)
        total += info.file_size
    if total > MAX_TOTAL:
        problems.append(f"archive declares {total} bytes in all (limit {MAX_TOTAL})")
    return problems


def _read(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    # Never trust the declared size: read at most one byte beyond it.
    with zf.open(info) as fh:
        data = fh.read(info.file_size + 1)
    if len(data) != info.file_size:
        raise ValueError(f"entry {info.filename!r} holds more or fewer bytes than it declares")
    return data


def read(path) -> tuple:
    """(files {name: bytes}, problems [line]); files is empty when problems is not."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise NotAZip(f"{path}: not a readable zip archive ({e})") from None
    with zf:
        infos = zf.infolist()
        problems = vet(infos)
        if problems:
            return {}, problems
        files = {}
        for info in infos:
            if info.is_dir():
                continue
            try:
                files[info.filename] = _read(zf, info)
            except (zipfile.BadZipFile, zlib.error, ValueError, EOFError, NotImplementedError) as e:
                problems.append(f"unreadable entry {info.filename!r}: {e}")
        return ({}, problems) if problems else (files, [])
