"""The protocol side of a child process (scenario worker, fuzz worker):
one JSON object per line on a private copy of fd 1."""
from __future__ import annotations

import json
import os
import sys

_PROTO = None


def open_protocol() -> None:
    """Keep the protocol on a private copy of fd 1 and point fd 1 at stderr:
    native libraries print to stdout (OpenBLAS's xerbla does, then exits), and
    their text must not interleave with the JSON lines."""
    global _PROTO
    _PROTO = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def emit(obj) -> None:
    out = _PROTO or sys.stdout
    out.write(json.dumps(obj) + "\n")
    out.flush()
