"""Text from evidence (or from MLX) made safe to show: every character that could
move the cursor, recolour, reorder or break a line is written as an escape.

What is escaped: control characters (C0, DEL and C1, which includes NEL, U+0085,
a line break to some terminals), format characters (bidirectional overrides
and isolates such as U+202E, zero-width joiners, the BOM), line and paragraph
separators, and unpaired surrogates. `\\x1b[32m` is shown as the eight
characters `\\x1b[32m`, so an ANSI sequence in a recorded version string
cannot make a failing run look green. Everything else is left as it is.
Rich's markup and emoji codes are the terminal module's concern
(cli/terminal.py), Markdown's the summary's (evidence/summary.py).
"""
from __future__ import annotations

import re
import unicodedata

_RISKY = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}
_FAST = re.compile(r"[^\x20-\x7e]")   # plain printable ASCII needs no look-up


def _escape(c: str) -> str:
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else (f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")


def _one(m: re.Match) -> str:
    c = m.group(0)
    return _escape(c) if unicodedata.category(c) in _RISKY else c


def visible(text) -> str:
    """`text` (any value, as str()) with every risky character escaped."""
    text = text if isinstance(text, str) else str(text)
    return _FAST.sub(_one, text) if _FAST.search(text) else text


def risky(text: str) -> str | None:
    """The first risky character of `text`, escaped, else None."""
    for m in _FAST.finditer(text):
        if unicodedata.category(m.group(0)) in _RISKY:
            return _escape(m.group(0))
    return None
