"""Read a unified diff and apply it to copies of the files it touches.

A small applier of our own (exact context, any offset, no fuzz) so that a
hunk that does not match is named precisely and the user's checkout is never
written to. No mlx, no external `patch`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")


class PatchError(ValueError):
    """The patch is malformed or does not apply (one line, exit 2)."""


@dataclass
class Hunk:
    number: int
    old_start: int
    header: str                                 # the "@@ ... @@ context" line
    lines: list = field(default_factory=list)   # (tag, text) with tag in " -+"

    def old(self) -> list:
        return [t for tag, t in self.lines if tag in " -"]

    def new(self) -> list:
        return [t for tag, t in self.lines if tag in " +"]


@dataclass
class FilePatch:
    path: str        # relative to the source root (a/ b/ prefixes stripped)
    hunks: list = field(default_factory=list)


def _strip_prefix(raw: str) -> str:
    name = raw.split("\t")[0].strip()
    if name == "/dev/null":
        raise PatchError("the patch creates or deletes a file; only edits of existing files are supported")
    parts = PurePosixPath(name).parts
    if parts and parts[0] in ("a", "b"):
        parts = parts[1:]
    rel = PurePosixPath(*parts) if parts else PurePosixPath("")
    if not parts or rel.is_absolute() or ".." in rel.parts:
        raise PatchError(f"unsafe or empty path in patch: {name!r}")
    return rel.as_posix()


def parse(text: str) -> list:
    files, current, hunk = [], None, None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            current = FilePatch(_strip_prefix(lines[i + 1][4:]))
            files.append(current)
            hunk, i = None, i + 2
            continue
        m = HUNK_RE.match(line)
        if m:
            if current is None:
                raise PatchError(f"patch line {i + 1}: hunk before any file header")
            hunk = Hunk(len(current.hunks) + 1, int(m.group(1)), line)
            current.hunks.append(hunk)
        elif hunk is not None and line[:1] in (" ", "-", "+"):
            hunk.lines.append((line[0], line[1:]))
        elif hunk is not None and line == "":
            hunk.lines.append((" ", ""))      # an empty context line whose space was stripped
        elif line.startswith("\\"):
            pass                              # "\ No newline at end of file"
        else:
            hunk = None                       # git's "diff --git"/"index" lines, prose
        i += 1
    if not files or not any(f.hunks for f in files):
        raise PatchError("no hunks found: not a unified diff")
    return files


def _find(lines: list, old: list, expected: int, lower: int) -> int | None:
    """The match nearest the line the hunk names, never before the previous hunk."""
    n = len(old)
    for delta in range(0, max(len(lines), 1) + 1):
        for pos in (expected - delta, expected + delta) if delta else (expected,):
            if lower <= pos <= len(lines) - n and lines[pos:pos + n] == old:
                return pos
    return None


def apply(original: str, fp: FilePatch) -> str:
    """The patched text; PatchError names the first hunk that does not match."""
    ends_nl = original.endswith("\n")
    lines = original.split("\n")
    if ends_nl:
        lines.pop()
    out, cursor, offset = [], 0, 0
    for h in fp.hunks:
        old = h.old()
        pos = _find(lines, old, max(h.old_start - 1, 0) + offset, cursor)
        if pos is None:
            raise PatchError(f"patch does not apply: {fp.path} hunk {h.number} ({h.header.strip()}) "
                             f"does not match the source")
        out += lines[cursor:pos] + h.new()
        cursor = pos + len(old)
        offset = pos - (h.old_start - 1)
    out += lines[cursor:]
    return "\n".join(out) + ("\n" if ends_nl else "")


def touched(text: str) -> list:
    return [fp.path for fp in parse(text)]
