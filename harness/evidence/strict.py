"""Read JSON from someone else within fixed bounds: nesting depth, containers and
elements, before the parser builds a single object.

A parser handed 1,000 nested brackets recurses until Python gives up, and one
handed 60 MiB of `[{},{},...]` builds twenty times its size in objects. So the
text is measured first, at C speed: escapes are removed, everything but
brackets and quotes is deleted, the strings are dropped, and what is left
(the brackets outside strings) gives the depth by a running sum and the number
of containers by a count. Elements are bounded by the number of commas. Only
text within every bound is parsed (core/jsonio.py: strict JSON, non-finite
numbers as data), and every refusal is one line naming the file and the bound.

Why by hand: the parser is the standard library's (json, through core/jsonio.py);
what it lacks, and what no JSON package we know offers, is a bound on containers
and elements checked before any object is built. That measuring is this module.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import jsonio

MAX_DEPTH = 64              # the deepest honest file (a finding's n-d observed array) is ~20
MAX_CONTAINERS = 1_000_000  # objects and arrays in one file (full catalog: ~56,000)
MAX_ELEMENTS = 8_000_000    # values in one file, bounded by its commas (full catalog: ~790,000)
# Every JSON file of one piece of evidence together: the parsed objects stay in
# memory while the files are cross-checked, so the sum is what bounds memory.
MAX_TOTAL_CONTAINERS = 2_000_000
MAX_TOTAL_ELEMENTS = 16_000_000

_KEEP = b'[]{}",'
_DELETE = bytes(b for b in range(256) if b not in _KEEP)


class TooBig(ValueError):
    """JSON beyond a bound (one line, naming the bound)."""


@dataclass(frozen=True)
class Shape:
    depth: int
    containers: int
    elements: int


# Below this many backslashes the escaped quotes are found run by run; above it, by two
# passes of bytes.replace over the whole text.
_FEW_BACKSLASHES = 10_000
_BLOCK = 1 << 20   # bytes translated at a time where escaped quotes must be blanked out


def _escaped_quotes(data: bytes):
    """Where a backslash escapes a quote (a quote after an odd run of backslashes), or None
    when there are too many backslashes to find them run by run."""
    drop, seen, i = [], 0, data.find(b"\\")
    while i != -1:
        j = i + 1
        while data[j:j + 1] == b"\\":   # the run's end
            j += 1
        seen += j - i
        if seen > _FEW_BACKSLASHES:
            return None
        if (j - i) % 2 and data[j:j + 1] == b'"':
            drop.append(j)
        i = data.find(b"\\", j)
    return drop


def _kept(data: bytes) -> bytes:
    """The brackets, commas and string quotes of the text: every quote that a backslash
    escapes is left out (the backslashes themselves go with the other characters)."""
    # Honest files hold a handful of backslashes (in error texts). Counting them first, or
    # a replace whose pattern ends in a quote, costs more over 30 MB than the rest together;
    # find() skips to the next one at memchr speed. A copy of the whole text to blank a few
    # quotes out would cost as much again (fresh pages): blocks of it are copied instead.
    drop = _escaped_quotes(data)
    if drop is None:
        return data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _DELETE)
    if not drop:
        return data.translate(None, _DELETE)
    kept, at = [], set(drop)
    for start in range(0, len(data), _BLOCK):
        block = data[start:start + _BLOCK]
        mine = [j - start for j in drop if start <= j < start + _BLOCK] if at else []
        if mine:
            block = bytearray(block)
            for j in mine:
                block[j] = 0x20   # a space: deleted with the rest
        kept.append(block.translate(None, _DELETE))
    return b"".join(kept)


def shape(data: bytes) -> Shape:
    """Depth, containers and an upper bound on elements of JSON text (exact for valid
    JSON; for invalid text only a bound, which the parser then rejects)."""
    a = np.frombuffer(_kept(data), dtype=np.uint8)
    # 1 from an opening quote up to its closing one (exclusive), 0 elsewhere: a byte-wide
    # running parity, where a running count would take eight bytes per character. (The
    # quotes themselves are neither brackets nor commas, whatever their parity.)
    outside = np.bitwise_xor.accumulate((a == 0x22).view(np.uint8)) == 0
    opens = ((a == 0x5B) | (a == 0x7B)) & outside
    closes = ((a == 0x5D) | (a == 0x7D)) & outside
    step = opens.view(np.int8) - closes.view(np.int8)
    wide = np.int32 if len(step) < 2**31 else np.int64
    depth = max(0, int(np.cumsum(step, dtype=wide).max())) if len(a) else 0
    n_open = int(np.count_nonzero(opens))
    commas = int(np.count_nonzero((a == 0x2C) & outside))
    return Shape(depth, n_open, commas + n_open + 1)


def check_shape(name: str, sh: Shape) -> None:
    if sh.depth > MAX_DEPTH:
        raise TooBig(f"{name}: JSON nested {sh.depth} levels deep (limit {MAX_DEPTH})")
    if sh.containers > MAX_CONTAINERS:
        raise TooBig(f"{name}: {sh.containers} JSON objects and arrays (limit {MAX_CONTAINERS})")
    if sh.elements > MAX_ELEMENTS:
        raise TooBig(f"{name}: about {sh.elements} JSON values (limit {MAX_ELEMENTS})")


def loads(data, name: str = "JSON"):
    """Strict JSON (bytes or str) within the bounds; ValueError (one line) otherwise."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    check_shape(name, shape(raw))
    try:
        return jsonio.loads(raw)
    except RecursionError:   # cannot happen within MAX_DEPTH; kept as a last guard
        raise TooBig(f"{name}: JSON nested too deeply") from None


class Budget:
    """The bounds summed over every JSON file of one piece of evidence."""

    def __init__(self):
        self.containers = self.elements = 0

    def take(self, name: str, sh: Shape) -> None:
        self.containers += sh.containers
        self.elements += sh.elements
        if self.containers > MAX_TOTAL_CONTAINERS:
            raise TooBig(f"{name}: the evidence's JSON files hold more than {MAX_TOTAL_CONTAINERS} "
                         "objects and arrays together")
        if self.elements > MAX_TOTAL_ELEMENTS:
            raise TooBig(f"{name}: the evidence's JSON files hold more than {MAX_TOTAL_ELEMENTS} "
                         "values together")


class Files(dict):
    """{relative path: bytes} that also keeps each JSON member parsed once (under the
    bounds above), so every checker, SUMMARY.md and the attestation read the same
    objects. `problems` says, per JSON member, why it could not be parsed."""

    def __init__(self, files: dict):
        super().__init__(files)
        self.docs, self.problems, self.budget = {}, {}, Budget()
        # After its hash is checked a JSON member is only read parsed: a caller that will not
        # pack the files again (the validator, not `bundle`) may let go of the text.
        self.release_text = False
        # name -> None or a reader that builds some values compactly as the text is parsed
        # (validation/arrays.py); None: plain JSON values everywhere.
        self.compact = None
        self._shapes = {}   # name -> Shape measured ahead of the parse (measure)

    def measure(self, name: str) -> None:
        """Measure a member's shape now (doc then uses it); nothing is parsed or refused here."""
        if name in self and name not in self.docs and name not in self._shapes:
            self._shapes[name] = shape(self[name])

    def doc(self, name: str):
        if name in self.docs or name in self.problems or name not in self:
            return self.docs.get(name)
        try:
            raw = self[name]
            sh = self._shapes.pop(name, None) or shape(raw)
            check_shape(name, sh)
            self.budget.take(name, sh)
            if self.release_text:   # the text alone from here: bytes and objects never coexist
                self[name], raw = b"", jsonio.text_of(raw)
            self.docs[name] = self._parse(name, raw)
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            self.problems[name] = str(e) if isinstance(e, TooBig) else f"{name}: not strict JSON ({e})"
        return self.docs.get(name)

    def _parse(self, name: str, raw):
        reader = self.compact(name) if self.compact else None
        if reader is None:
            return jsonio.loads(raw)
        doc = jsonio.loads(raw, reader.hook)
        return doc if reader.placed(doc) else jsonio.loads(raw)   # a compact value out of its place


def member(files: dict, name: str):
    """A JSON member of evidence, parsed (None when absent or unreadable): from
    Files' own store, else parsed within the bounds here."""
    if isinstance(files, Files):
        return files.doc(name)
    try:
        return loads(files[name], name)
    except (KeyError, ValueError, UnicodeDecodeError, RecursionError):
        return None


def as_files(files: dict) -> Files:
    """`files` as Files (parsing each member once), unless it already is."""
    return files if isinstance(files, Files) else Files(files)
