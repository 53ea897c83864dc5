"""Read a zip from someone else without trusting it.

Entries are vetted from the central directory before a single byte is
inflated, and accepted entries are read into memory under hard caps, so
validating a bundle writes nothing to disk and runs nothing from it.

Every byte of the file must belong to the archive: the entries (each local
header, its data and any data descriptor) follow each other from byte 0, the
central directory follows the last of them and its end record closes the file.
A shell script in front of the zip (a polyglot that runs as one thing and
unpacks as another), bytes between entries or a trailing comment are refused:
the hash of such a file would cover content no check looks at.

Names are vetted as the archive spells them, not as zipfile reports them:
zipfile cuts a name at its first NUL byte (`results.json\0../../evil` reads as
`results.json`), so the raw bytes of every name are read again from the
central directory and from the entry's local header, and any difference, NUL
or control character is a reason to refuse the archive.

Why by hand: the reading itself is the standard library's zipfile and zlib; what
is written here are the refusals zipfile does not make (it accepts prefixed,
padded and commented archives and reports names cut at a NUL byte), which need
the raw records it parses and does not expose.
"""
from __future__ import annotations

import os
import re
import stat
import struct
import unicodedata
import zipfile
import zlib

MAX_ENTRY = 64 << 20      # declared uncompressed bytes per entry
MAX_TOTAL = 256 << 20     # declared uncompressed bytes over the whole archive
MAX_ENTRIES = 20000
MAX_DEPTH = 32            # folders a path may lie in (honest evidence: 3 at most)
# Every JSON file together: each is parsed whole, and parsing costs time by the byte
# (about 30 ms a MB of the slowest numbers on one core). Honest evidence stays well below:
# the full catalog's results.json is 31 MB, a gate over it about 75 MB in all.
MAX_JSON_TOTAL = 96 << 20
# Deflate cannot beat ~1032:1; honest evidence (JSON, logs) stays far below 200:1
# and the bundle writer stores anything that would not, so a higher ratio on an
# entry big enough to matter is the signature of a bomb.
MAX_RATIO = 200
RATIO_MIN_SIZE = 64 << 10


# Bidirectional overrides and isolates make a name display as another name.
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}


class NotAZip(Exception):
    """The file is not a readable zip archive at all (bad input, exit 2)."""


def control_character(name: str) -> str | None:
    """The first control or bidirectional-override character in a name, escaped, else None."""
    for c in name:
        if unicodedata.category(c) == "Cc" or c in _BIDI:
            return ascii(c)
    return None


def unsafe_path(name: str) -> str | None:
    """Why a member or manifest path could land outside the bundle, else None."""
    if not name:
        return "empty path"
    if "\0" in name:
        return f"NUL byte in path {name!r}"
    bad = control_character(name)
    if bad:
        return f"control character {bad} in path {name!r}"
    if "\\" in name:
        return f"backslash in path {name!r}"
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return f"absolute path {name!r}"
    parts = name.rstrip("/").split("/")
    if ".." in parts:
        return f"'..' component in path {name!r}"
    if len(parts) - 1 > MAX_DEPTH:
        return f"path {name[:120]!r}... lies {len(parts) - 1} folders deep (limit {MAX_DEPTH})"
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


_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")   # central directory file header, 46 bytes
_LOCAL = struct.Struct("<4s2B4HL2L2H")        # local file header, 30 bytes
_END = struct.Struct("<4s4H2LH")               # end of central directory record, 22 bytes
_CENTRAL_SIG, _LOCAL_SIG, _END_SIG = b"PK\x01\x02", b"PK\x03\x04", b"PK\x05\x06"
_DESCRIPTOR_SIG = b"PK\x07\x08"
_UTF8_NAME = 0x800


def _decoded(raw: bytes, flags: int) -> str | None:
    """The name as zipfile decodes it before any cutting (None: not decodable)."""
    try:
        return raw.decode("utf-8") if flags & _UTF8_NAME else raw.decode("cp437")
    except UnicodeDecodeError:
        return None


def _read_exact(fh, offset: int, size: int) -> bytes:
    fh.seek(offset)
    data = fh.read(size)
    if len(data) != size:
        raise ValueError("ends early")
    return data


def raw_names(fh, start_dir: int, infos: list) -> list:
    """For each entry (in central-directory order, as zipfile lists them): a reason
    its raw name bytes are not what zipfile reports (a NUL, another decoding, another
    name in its local header), else None. Control characters in the reported name are
    entry_problem's (unsafe_path).

    Reads the central directory from `start_dir` (where zipfile found it) and
    each entry's local header, never trusting zipfile's decoded names."""
    out, offset = [], start_dir
    for info in infos:
        try:
            head = _CENTRAL.unpack(_read_exact(fh, offset, _CENTRAL.size))
            raw = _read_exact(fh, offset + _CENTRAL.size, head[12]) if head[0] == _CENTRAL_SIG else None
        except (ValueError, struct.error):
            out.append(f"central directory record of {info.filename!r} is truncated")
            break
        if raw is None:
            out.append(f"central directory record of {info.filename!r} is malformed")
            break
        flags, name_len, extra_len, comment_len = head[5], head[12], head[13], head[14]
        offset += _CENTRAL.size + name_len + extra_len + comment_len
        out.append(_name_problem(fh, info, raw, flags))
    return out


def _name_problem(fh, info, raw: bytes, flags: int) -> str | None:
    shown = info.filename
    if b"\0" in raw:
        return f"NUL byte in entry name {raw!r} (zipfile reads it as {shown!r})"
    decoded = _decoded(raw, flags)
    if decoded is None:
        return f"entry name {raw!r} is not valid UTF-8 although its header says it is"
    if decoded != shown:
        return f"entry name {raw!r} is read by zipfile as {shown!r}"
    try:
        local = _LOCAL.unpack(_read_exact(fh, info.header_offset, _LOCAL.size))
        local_raw = _read_exact(fh, info.header_offset + _LOCAL.size, local[10])
    except (ValueError, struct.error, OSError):
        return f"entry {shown!r}: its local header is missing or truncated"
    if local[0] != _LOCAL_SIG:
        return f"entry {shown!r}: no local header at the offset the central directory gives"
    if local_raw != raw:
        return f"entry {shown!r} is named {local_raw!r} in its local header (central directory: {raw!r})"
    return None


def _entry_end(fh, info) -> int:
    """Where an entry's bytes end: local header, name, extra field, data, descriptor."""
    local = _LOCAL.unpack(_read_exact(fh, info.header_offset, _LOCAL.size))
    end = info.header_offset + _LOCAL.size + local[10] + local[11] + info.compress_size
    if info.flag_bits & 0x8:   # a data descriptor follows the data, with or without its signature
        fh.seek(end)
        end += 16 if fh.read(4) == _DESCRIPTOR_SIG else 12
    return end


def coverage(fh, infos: list, start_dir: int, size: int) -> str | None:
    """Why some bytes of the file belong to no entry, directory or end record (None: none do)."""
    try:
        end_record = _END.unpack(_read_exact(fh, size - _END.size, _END.size))
    except (ValueError, struct.error, OSError):
        return "the file does not end with a zip end-of-directory record"
    if end_record[0] != _END_SIG or end_record[7]:
        return "bytes after the zip's end-of-directory record (a comment or appended data)"
    offset = 0
    try:
        for info in sorted(infos, key=lambda i: i.header_offset):
            if info.header_offset != offset:
                return (f"{info.header_offset - offset} bytes before entry {info.filename!r} belong to no entry"
                        if info.header_offset > offset else f"entry {info.filename!r} overlaps the one before it")
            offset = _entry_end(fh, info)
            if offset > start_dir:
                return f"entry {info.filename!r}: its data runs past the end of the entries, into the directory"
    except (ValueError, struct.error, OSError):
        return "an entry's local header is missing or truncated"
    if start_dir != offset or end_record[6] != offset or end_record[5] + offset != size - _END.size:
        return "bytes between the entries, the central directory and its end record belong to none of them"
    return None


# What an archive or compressed file starts with (tar: "ustar" at byte 257).
ARCHIVE_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00",
                 b"7z\xbc\xaf\x27\x1c", b"Rar!\x1a\x07", b"\x28\xb5\x2f\xfd", b"\x04\x22\x4d\x18")
ARCHIVE_SUFFIXES = (".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".zst", ".whl", ".jar", ".lz4")


def nested_archive(name: str, data: bytes) -> str | None:
    """Why a file of the evidence is an archive itself (evidence holds none: what is inside
    one would be covered by a hash yet seen by no check), else None."""
    if name.lower().endswith(ARCHIVE_SUFFIXES):
        return f"nested archive {name!r} (by its name)"
    if data.startswith(ARCHIVE_MAGIC) or data[257:262] == b"ustar":
        return f"nested archive {name!r} (its bytes are an archive's)"
    return None


def json_total(sizes) -> str | None:
    """Why the JSON files' sizes, [(name, bytes)], are more than is parsed, else None."""
    total = sum(size for name, size in sizes if name.endswith(".json"))
    if total > MAX_JSON_TOTAL:
        return f"its JSON files hold {total} bytes together (limit {MAX_JSON_TOTAL}; parse bomb?)"
    return None


def vet(infos: list, names: list = ()) -> list:
    """Every reason to refuse the archive, one line each, from metadata alone.
    names: raw_names' verdicts, one per entry (empty: not checked)."""
    problems, seen, total = [], set(), 0
    if len(infos) > MAX_ENTRIES:
        return [f"{len(infos)} entries (limit {MAX_ENTRIES})"]
    problems += [why for why in names if why]
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
    why = json_total((i.filename, i.file_size) for i in infos)
    return problems + ([why] if why else [])


def _read(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    # Never trust the declared size: read at most one byte beyond it.
    with zf.open(info) as fh:
        data = fh.read(info.file_size + 1)
    if len(data) != info.file_size:
        raise ValueError(f"it holds {'more' if len(data) > info.file_size else 'fewer'} bytes "
                         f"than the {info.file_size} it declares")
    return data


# What each failure means when the exception itself says nothing.
_SILENT = {EOFError: "its compressed data runs past the end of the archive",
           zlib.error: "its compressed data is corrupt",
           zipfile.BadZipFile: "its data does not match its headers",
           NotImplementedError: "it uses a compression method this reader does not support",
           ValueError: "its data does not match its headers"}


def reason(e: BaseException) -> str:
    """A non-empty reason for a read failure."""
    text = str(e).strip()
    if text:
        return text
    for kind, why in _SILENT.items():
        if isinstance(e, kind):
            return why
    return type(e).__name__


def read(path) -> tuple:
    """(files {name: bytes}, problems [line]); files is empty when problems is not."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise NotAZip(f"{path}: not a readable zip archive ({reason(e)})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_ENTRIES:
            return {}, vet(infos)
        try:
            with open(path, "rb") as fh:
                names = raw_names(fh, zf.start_dir, infos)
                outside = coverage(fh, infos, zf.start_dir, os.fstat(fh.fileno()).st_size)
        except OSError as e:
            raise NotAZip(f"{path}: cannot read ({e.strerror or e})") from None
        problems = ([outside] if outside else []) + vet(infos, names)
        if problems:
            return {}, problems
        files = {}
        for info in infos:
            if info.is_dir():
                continue
            try:
                files[info.filename] = _read(zf, info)
            except (zipfile.BadZipFile, zlib.error, ValueError, EOFError, NotImplementedError) as e:
                problems.append(f"unreadable entry {info.filename!r}: {reason(e)}")
        return ({}, problems) if problems else (files, [])
