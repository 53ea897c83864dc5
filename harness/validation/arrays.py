"""The recorded values of a results file's checks read as float64 arrays while the file
is parsed (the validator's reader, evidence/strict.py Files.compact).

Parsed as lists, the observed and expected values of a full-catalog results file are
1.4 million float objects in 220,000 lists: about half of the parsed file's memory,
and the largest part of the validator's peak. Every reader of those two values
(the rechecks, finite differences, SUMMARY.md) reads them through
np.asarray(values, dtype=float64) or core/checks.py's `_as_array`, which give the same
array for such a list; so the list is replaced by that array as soon as its check
object is complete, and freed. A list that does not convert (ragged, text, a number
beyond float64) stays a list and fails where it failed before.

Only values at their place, records[i].checks[j].observed / .expected, may be arrays:
the schema reads them there without walking their elements ("x-fast": "ndarray"), so
it judges the array as it judged the list. A hostile file can put an object that looks
like a check anywhere else, where the schema walks a list element by element; after
the parse, `placed` counts the arrays at their place, and any other makes the caller
parse the file again as plain JSON.
"""
from __future__ import annotations

import numpy as np

from ..evidence import paths

KEYS = ("observed", "expected")


class Reader:
    """One parse of one results file."""

    def __init__(self):
        self.made = 0   # lists replaced by arrays

    def hook(self, obj):
        """A completed JSON object: a check's value lists become read-only arrays."""
        if type(obj) is dict and "observed_shape" in obj:
            for key in KEYS:
                values = obj.get(key)
                if type(values) is list:
                    try:
                        arr = np.asarray(values, dtype=np.float64)
                    except (ValueError, TypeError, OverflowError):   # stays as it was written
                        continue
                    arr.flags.writeable = False   # shared by every reader of the parsed file
                    obj[key] = arr
                    self.made += 1
        return obj

    def placed(self, doc) -> bool:
        """Whether every array made lies at its place (records[i].checks[j].observed / expected)."""
        return self.made == _at_place(doc)


def _at_place(doc) -> int:
    records = doc.get("records") if type(doc) is dict else None
    if type(records) is not list:
        return 0
    found = 0
    for rec in records:
        checks = rec.get("checks") if type(rec) is dict else None
        if type(checks) is list:
            for c in checks:
                if type(c) is dict:
                    found += sum(type(c.get(k)) is np.ndarray for k in KEYS)
    return found


def for_results(name: str) -> Reader | None:
    """The compact reader for a results file (Files.compact); None for any other file."""
    return Reader() if paths.is_results(name) else None
