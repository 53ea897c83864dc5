"""Read a unified diff and apply it to copies of the files it touches.

A small applier of our own (exact context, any offset, no fuzz) so that a
hunk that does not match is named precisely and the user's checkout is never
written to. No mlx, no external `patch`.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

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


# --- a series: several diffs applied in order (quilt's `series` file) -----------------

SERIES_MARK = "# vjpcheck series "   # the line that starts each diff in a series' combined text


def is_series(text: str) -> bool:
    """A series file: every line blank, a comment, or one file name (quilt's format;
    a trailing -p1 is accepted), and at least one name. A diff never reads so."""
    names = 0
    for line in text.splitlines():
        t = line.strip()
        if not t or t.startswith("#"):
            continue
        parts = t.split()
        if len(parts) > 2 or (len(parts) == 2 and parts[1] != "-p1") or \
                parts[0].startswith(("---", "+++", "@@", "diff", "index")):
            return False
        names += 1
    return names > 0


def read(path) -> tuple:
    """(combined text, [(name, text)]) of --patch: one diff, or a series file listing diffs
    (relative to its folder) to apply in order. The combined text is the diffs in order,
    each after a SERIES_MARK line naming it: applying it in one pass (files touched twice
    are patched again, in order) gives the series' result. PatchError when a listed diff
    is missing or unreadable."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise PatchError(f"cannot read --patch {path}: {e.strerror}")
    except UnicodeDecodeError:
        raise PatchError(f"--patch {path} is not UTF-8 text")
    if not is_series(text):
        return text, [(path.name, text)]
    parts = []
    names = [ln.split()[0] for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    for name in names:
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts:
            raise PatchError(f"series {path}: unsafe name {name!r}")
        f = path.parent / name
        try:
            parts.append((name, f.read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise PatchError(f"series {path} lists {name}, which does not exist in {path.parent}")
        except OSError as e:
            raise PatchError(f"series {path} lists {name}, which cannot be read: {e.strerror}")
        except UnicodeDecodeError:
            raise PatchError(f"series {path} lists {name}, which is not UTF-8 text")
    combined = "".join(f"{SERIES_MARK}{i + 1}/{len(parts)}: {name} sha256 "
                       f"{hashlib.sha256(t.encode()).hexdigest()}\n" + t + ("" if t.endswith("\n") else "\n")
                       for i, (name, t) in enumerate(parts))
    return combined, parts


def split_combined(text: str) -> list:
    """[(name, text)] of a combined series text (read's first value); one diff -> itself."""
    if SERIES_MARK not in text:
        return [("patch.diff", text)]
    out = []
    for line in text.splitlines(keepends=True):
        if line.startswith(SERIES_MARK):
            out.append([line[len(SERIES_MARK):].split(": ", 1)[1].split(" sha256 ")[0], ""])
        elif out:
            out[-1][1] += line
    return [tuple(x) for x in out]


def apply_all(parts: list, read_original) -> dict:
    """{rel: (original, patched)} after every diff of `parts` in order; `read_original(rel)`
    gives a file's pristine text (raises PatchError when it does not exist). A hunk that
    does not match names its diff when there are several."""
    out = {}
    for name, text in parts:
        try:
            for fp in parse(text):
                original, current = out[fp.path] if fp.path in out else (read_original(fp.path),) * 2
                out[fp.path] = (original, apply(current, fp))
        except PatchError as e:
            raise PatchError(f"{name}: {e}" if len(parts) > 1 else str(e))
    return out


def claims(path) -> list:
    """[(op, defect class)] a series' manifest says its diffs fix: `series.json` beside a
    series file (schema mlx-vjpcheck/patch-series/1: patches[].file, patches[].findings
    [{op, class}]), for the diffs the series lists. None without a manifest (one diff, or
    a series without one); a manifest that cannot be read is a PatchError."""
    import json
    path = Path(path)
    manifest = path.parent / "series.json"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not is_series(text) or not manifest.is_file():
        return None
    listed = {ln.split()[0] for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")}
    try:
        doc = json.loads(manifest.read_text(encoding="utf-8"))
        out = sorted({(str(f["op"]), str(f["class"])) for p in doc["patches"] if p["file"] in listed
                      for f in p.get("findings", ())})
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise PatchError(f"{manifest}: not a series manifest ({type(e).__name__}: {e})")
    return out


def handoff_tests(path) -> list:
    """The regression tests (patch/tests/test_*.py, MLX's unittest style) of the diffs a
    patch is: `series.json` beside it names them per diff (patches[].tests, relative to
    that folder), for every diff a series file lists or for the one diff given. [] without
    a manifest or for a diff it does not list; a manifest that cannot be read, or a test
    it names that is missing, is a PatchError."""
    import json
    path = Path(path)
    manifest = path.parent / "series.json"
    if not manifest.is_file():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    listed = ({ln.split()[0] for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")}
              if is_series(text) else {path.name})
    try:
        doc = json.loads(manifest.read_text(encoding="utf-8"))
        names = [str(t) for p in doc["patches"] if p["file"] in listed for t in p.get("tests", ())]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise PatchError(f"{manifest}: not a series manifest ({type(e).__name__}: {e})")
    out = []
    for name in dict.fromkeys(names):
        test = (path.parent / name).resolve()
        if not test.is_file() or test.parent != (path.parent / "tests").resolve() or test.suffix != ".py":
            raise PatchError(f"{manifest}: the regression test {name!r} is not a file under {path.parent / 'tests'}")
        out.append(test)
    return out
